package rdns

import (
	"net/netip"
	"strconv"
	"strings"

	"pvebill/i18n"
)

// MaxHostname is the longest hostname a PTR record may name (RFC 1035 §2.3.4 without the
// trailing dot).
const MaxHostname = 253

// maxLabel is the longest label of a hostname (RFC 1035 §2.3.4).
const maxLabel = 63

// checkHostname validates a PTR record's target as a fully qualified RFC 1123 host name: at least
// two labels of letters, digits and inner hyphens, each 1–63 characters, at most 253 in all,
// a last label that is not all digits (RFC 3696 §2), written without the trailing dot.
func checkHostname(v *i18n.FieldErrors, s string) {
	const field = "hostname"
	switch {
	case s == "":
		v.Add(field, i18n.FieldRequired, "")
	case len(s) > MaxHostname:
		v.Add(field, i18n.FieldTooLong, strconv.Itoa(MaxHostname))
	case strings.HasSuffix(s, ".") && hostnameOK(strings.TrimSuffix(s, ".")):
		v.Add(field, i18n.FieldNotCanonical, strings.TrimSuffix(s, "."))
	case !hostnameOK(s):
		v.Add(field, i18n.FieldPattern, "")
	}
}

func hostnameOK(s string) bool {
	labels := strings.Split(s, ".")
	if len(labels) < 2 {
		return false
	}
	for _, l := range labels {
		if l == "" || len(l) > maxLabel || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	_, err := strconv.Atoi(labels[len(labels)-1])
	return err != nil
}

// checkAddress reads an address written canonically: IPv4 dotted, or IPv6 in RFC 5952 form
// (no zone, no IPv4-mapped form).
func checkAddress(v *i18n.FieldErrors, s string) netip.Addr {
	const field = "address"
	a, err := netip.ParseAddr(s)
	switch {
	case s == "":
		v.Add(field, i18n.FieldRequired, "")
	case err != nil || a.Zone() != "" || a.Is4In6():
		v.Add(field, i18n.FieldPattern, "")
	case a.String() != s:
		v.Add(field, i18n.FieldNotCanonical, a.String())
	default:
		return a
	}
	return netip.Addr{}
}
