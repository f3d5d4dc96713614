package callbacks_test

import (
	"testing"

	"pvebill/modules/callbacks"
)

// R48: a callback URL is stored and shown without its credentials: a password, a lone user
// name (a token), every query value, a bare query word and the fragment are replaced; scheme,
// host, port, path and the query's keys stay.
func TestRedactURL(t *testing.T) {
	for raw, want := range map[string]string{
		"https://billing.example.com/hook":                     "https://billing.example.com/hook",
		"https://hook:s3cret@billing.example.com:8443/hook":    "https://hook:xxxxx@billing.example.com:8443/hook",
		"https://ghp_T0KEN@billing.example.com/hook":           "https://xxxxx@billing.example.com/hook",
		"https://billing.example.com/hook?token=abc&site=eu":   "https://billing.example.com/hook?token=xxxxx&site=xxxxx",
		"https://billing.example.com/hook?abc123&x=":           "https://billing.example.com/hook?xxxxx&x=xxxxx",
		"https://billing.example.com/hook?a=1;b=2#frag-secret": "https://billing.example.com/hook?a=xxxxx#xxxxx",
		"http://u:p@127.0.0.1:9/cb?k=%2Fv":                     "http://u:xxxxx@127.0.0.1:9/cb?k=xxxxx",
		"http://bad host/%zz?token=abc":                        "[a callback_url that cannot be parsed]",
	} {
		if got := callbacks.RedactURL(raw); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", raw, got, want)
		}
	}
}
