package callbacks

import (
	"errors"
	"net/url"
	"strings"
)

// redacted replaces a credential in a URL that is shown or stored, as net/url's Redacted does
// for a password.
const redacted = "xxxxx"

// RedactURL is a callback URL as it may be stored and shown (R48): a password in its userinfo,
// a userinfo without a password (a token by another name), every query value (a receiver's
// token may have any name; the keys stay) and the fragment are replaced by "xxxxx". Scheme,
// host and path stay, so an operator still sees where the events went. The real URL is only
// ever used to send them.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "[a callback_url that cannot be parsed]"
	}
	if u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), redacted)
		} else {
			u.User = url.User(redacted)
		}
	}
	if u.RawQuery != "" || u.ForceQuery {
		parts := strings.Split(u.RawQuery, "&")
		for i, p := range parts {
			if key, _, ok := strings.Cut(p, "="); ok {
				parts[i] = key + "=" + redacted
			} else if p != "" {
				parts[i] = redacted
			}
		}
		u.RawQuery = strings.Join(parts, "&")
	}
	if u.Fragment != "" {
		u.Fragment, u.RawFragment = redacted, ""
	}
	return u.String()
}

// redactErr names shown instead of the URL in err when err carries one (net/http's errors are
// *url.Error, which names the request's URL, its query included). It must run before err is
// wrapped: a wrapping message is formatted at once.
func redactErr(err error, shown string) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		ue.URL = shown
	}
	return err
}
