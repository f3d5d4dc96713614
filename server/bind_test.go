package server

import (
	"regexp"
	"strings"
	"testing"
)

// hostnameRFC1123Regexp is the validator's own definition of hostname_rfc1123, which
// hostnameRFC1123 replaces.
var hostnameRFC1123Regexp = regexp.MustCompile(`^[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(\.[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$`)

var shapeSeeds = []string{
	"", "a", "A", "0", "-", ".", "a.", ".a", "a..b", "a-b", "-a", "a-", "a.b-", "a.-b", "web1.example.com",
	"WEB-1.Example.COM", "whmcs-1042", "whmcs:1042", "a_b", "a b", "a\nb", "ä", "xn--bcher-kva.example",
	strings.Repeat("a", 63), strings.Repeat("a", 64), strings.Repeat("a", 65), strings.Repeat("a", 63) + ".b",
	strings.Repeat("a", 64) + ".b", "b." + strings.Repeat("a", 64), "a-" + strings.Repeat("b", 60) + "-c",
	"1.2.3.4", "a\x00", "a.b.c.d.e.f", "_a", "a:b", strings.Repeat("a.", 40) + "a",
}

func TestShapeChecksMatchTheirPatterns(t *testing.T) {
	for _, s := range shapeSeeds {
		checkShapes(t, s)
	}
}

// FuzzShapeChecks: the hand-written service id and host name checks accept exactly what their
// regular expressions accept.
func FuzzShapeChecks(f *testing.F) {
	for _, s := range shapeSeeds {
		f.Add(s)
	}
	f.Fuzz(checkShapes)
}

func checkShapes(t *testing.T, s string) {
	if got, want := validServiceID(s), ServiceIDPattern.MatchString(s); got != want {
		t.Fatalf("validServiceID(%q) = %v, the pattern says %v", s, got, want)
	}
	if got, want := hostnameRFC1123(s), hostnameRFC1123Regexp.MatchString(s); got != want {
		t.Fatalf("hostnameRFC1123(%q) = %v, the pattern says %v", s, got, want)
	}
}
