package ippool_test

import (
	"net/netip"
	"slices"
	"testing"

	"pvebill/i18n"
	"pvebill/models/dbtest"
	"pvebill/modules/ippool"
)

// R55: the zones that can hold a pool's PTR records are the whole-octet (IPv4) or whole-nibble
// (IPv6) reverse zones above its cidr.
func TestReverseZones(t *testing.T) {
	got := ippool.ReverseZones(netip.MustParsePrefix("203.0.113.0/24"))
	if want := []string{"113.0.203.in-addr.arpa.", "0.203.in-addr.arpa.", "203.in-addr.arpa."}; !slices.Equal(got, want) {
		t.Fatalf("v4 %v", got)
	}
	if got := ippool.ReverseZones(netip.MustParsePrefix("198.51.100.0/22")); !slices.Equal(got, []string{"51.198.in-addr.arpa.", "198.in-addr.arpa."}) {
		t.Fatalf("/22 %v", got)
	}
	got = ippool.ReverseZones(netip.MustParsePrefix("2001:db8::/48"))
	if len(got) != 12 || got[0] != "0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa." || got[11] != "2.ip6.arpa." {
		t.Fatalf("v6 %v", got)
	}
}

// R55: reverse_zone is optional; when set it must be a reverse zone that contains the pool's
// whole cidr, written canonically (lower case, trailing dot). It is stored and read back.
func TestPoolReverseZone(t *testing.T) {
	ok := spec()
	ok.ReverseZone = "113.0.203.in-addr.arpa."
	if p, err := ippool.Validate(ok, nil); err != nil || p.ReverseZone != "113.0.203.in-addr.arpa." {
		t.Fatalf("%+v %v", p, err)
	}
	ok6 := spec6("v6", "2001:db8::/48", nil)
	ok6.ReverseZone = "8.b.d.0.1.0.0.2.ip6.arpa."
	if _, err := ippool.Validate(ok6, nil); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cidr, zone string
		code       i18n.FieldCode
	}{
		{"203.0.113.0/24", "114.0.203.in-addr.arpa.", i18n.FieldOneOf},       // another network
		{"203.0.113.0/24", "10.113.0.203.in-addr.arpa.", i18n.FieldOneOf},    // narrower than the pool
		{"203.0.113.0/24", "8.b.d.0.1.0.0.2.ip6.arpa.", i18n.FieldOneOf},     // the other family
		{"203.0.113.0/24", "example.com.", i18n.FieldOneOf},                  // no reverse zone
		{"203.0.113.0/24", "113.0.203.in-addr.arpa", i18n.FieldNotCanonical}, // no trailing dot
		{"203.0.113.0/24", "113.0.203.IN-ADDR.ARPA.", i18n.FieldNotCanonical},
		{"2001:db8::/48", "9.b.d.0.1.0.0.2.ip6.arpa.", i18n.FieldOneOf},
	} {
		s := spec()
		if c.cidr != "203.0.113.0/24" {
			s = spec6("v6", c.cidr, nil)
		}
		s.ReverseZone = c.zone
		_, err := ippool.Validate(s, nil)
		p := problemOf(t, err)
		if len(p.Fields) != 1 || p.Fields[0].Field != "reverse_zone" || p.Fields[0].Code != c.code {
			t.Fatalf("%s %s: %+v", c.cidr, c.zone, p.Fields)
		}
	}
	for _, dialect := range dbtest.Dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			svc := ippool.NewService(dbtest.Open(t, dialect))
			u, _, err := svc.Put(t.Context(), ok.Name, ok)
			if err != nil || u.ReverseZone != ok.ReverseZone {
				t.Fatalf("put %+v %v", u, err)
			}
			if got, err := svc.Get(t.Context(), ok.Name); err != nil || got.ReverseZone != ok.ReverseZone {
				t.Fatalf("get %+v %v", got, err)
			}
		})
	}
}
