package kinds_test

import (
	"slices"
	"testing"

	"pvebill/modules/kinds"
)

// R54, R9: the link-local address of a MAC is its EUI-64 form (RFC 4291 appendix A), and
// ipfilter-net0's entries are the IPv4 address, the assigned prefix (or the /128's address)
// and that link-local address.
func TestIPFilterEntries(t *testing.T) {
	ll, err := kinds.LinkLocal("52:74:F2:B1:A8:7F")
	if err != nil || ll.String() != "fe80::5074:f2ff:feb1:a87f" {
		t.Fatalf("link-local %s %v", ll, err)
	}
	if _, err := kinds.LinkLocal("52:74:f2:b1:a8"); err == nil {
		t.Fatal("a short MAC was accepted")
	}
	got, err := kinds.IPFilterEntries(&kinds.Address{CIDR: "203.0.113.10/24", IP6: "2001:db8:0:5::1/64"}, "52:74:f2:b1:a8:7f")
	want := []string{"203.0.113.10", "2001:db8:0:5::/64", "fe80::5074:f2ff:feb1:a87f"}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("entries %v %v, want %v", got, err, want)
	}
	got, err = kinds.IPFilterEntries(&kinds.Address{IP6: "2001:db8::7/128"}, "")
	if err != nil || !slices.Equal(got, []string{"2001:db8::7"}) {
		t.Fatalf("a /128: %v %v", got, err)
	}
	if got, _ := kinds.IPFilterEntries(nil, "52:74:f2:b1:a8:7f"); len(got) != 0 {
		t.Fatalf("DHCP: %v", got)
	}
}
