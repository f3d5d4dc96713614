package ippool_test

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	"pvebill/i18n"
	"pvebill/modules/ippool"
)

func spec() ippool.Spec {
	return ippool.Spec{Name: "pool-a", Cluster: "default", Bridge: "vmbr0", CIDR: "203.0.113.0/24",
		Gateway: "203.0.113.1", First: "203.0.113.10", Last: "203.0.113.200", Nameservers: []string{"203.0.113.53"}}
}

func problemOf(t *testing.T, err error) *i18n.Problem {
	t.Helper()
	var p *i18n.Problem
	if !errors.As(err, &p) {
		t.Fatalf("error %v is not a problem", err)
	}
	return p
}

func TestValidateAcceptsTheAPIExample(t *testing.T) {
	p, err := ippool.Validate(spec(), []string{"default"})
	if err != nil {
		t.Fatal(err)
	}
	if p.Prefix != netip.MustParsePrefix("203.0.113.0/24") || p.Gateway != netip.MustParseAddr("203.0.113.1") ||
		p.First != netip.MustParseAddr("203.0.113.10") || p.Last != netip.MustParseAddr("203.0.113.200") {
		t.Fatalf("pool %+v", p)
	}
	if p.Size() != 191 {
		t.Fatalf("size %d, want 191", p.Size())
	}
	if !p.InRange(netip.MustParseAddr("203.0.113.10")) || !p.InRange(netip.MustParseAddr("203.0.113.200")) ||
		p.InRange(netip.MustParseAddr("203.0.113.9")) || p.InRange(netip.MustParseAddr("203.0.113.201")) {
		t.Fatal("InRange disagrees with [first, last]")
	}
	// No nameservers is allowed (Proxmox then copies the host's), and reads back as [] not nil.
	s := spec()
	s.Nameservers = nil
	p, err = ippool.Validate(s, nil)
	if err != nil || p.Nameservers == nil || len(p.Nameservers) != 0 {
		t.Fatalf("no nameservers: %v %#v", err, p.Nameservers)
	}
}

func TestValidateEdgeNetworks(t *testing.T) {
	// A /31 has no network or broadcast address (RFC 3021): both addresses are usable.
	s := spec()
	s.CIDR, s.Gateway, s.First, s.Last = "198.51.100.0/31", "198.51.100.0", "198.51.100.1", "198.51.100.1"
	p, err := ippool.Validate(s, nil)
	if err != nil || p.Size() != 1 {
		t.Fatalf("/31: %v size %d", err, p.Size())
	}
	// A /30 has exactly two host addresses: one gateway, one guest.
	s.CIDR, s.Gateway, s.First, s.Last = "198.51.100.4/30", "198.51.100.6", "198.51.100.5", "198.51.100.5"
	if _, err := ippool.Validate(s, nil); err != nil {
		t.Fatalf("/30: %v", err)
	}
	// A /32 leaves no room for a gateway outside the range.
	s.CIDR, s.Gateway, s.First, s.Last = "198.51.100.9/32", "198.51.100.9", "198.51.100.9", "198.51.100.9"
	if _, err := ippool.Validate(s, nil); err == nil {
		t.Fatal("/32 accepted")
	}
}

// Every validation failure is a 422 validation_failed that names the field, with the code and
// parameter its message needs.
func TestValidateRefusals(t *testing.T) {
	type want struct{ field, code, param string }
	cases := []struct {
		name string
		mod  func(*ippool.Spec)
		want []want
	}{
		{"name missing", func(s *ippool.Spec) { s.Name = "" }, []want{{"name", "required", ""}}},
		{"name upper case", func(s *ippool.Spec) { s.Name = "Pool-A" }, []want{{"name", "bad_format", ""}}},
		{"name leading dash", func(s *ippool.Spec) { s.Name = "-a" }, []want{{"name", "bad_format", ""}}},
		{"name too long", func(s *ippool.Spec) { s.Name = strings.Repeat("a", 64) }, []want{{"name", "bad_format", ""}}},
		{"name slash", func(s *ippool.Spec) { s.Name = "a/b" }, []want{{"name", "bad_format", ""}}},
		{"cluster missing", func(s *ippool.Spec) { s.Cluster = "" }, []want{{"cluster", "required", ""}}},
		{"cluster unknown", func(s *ippool.Spec) { s.Cluster = "other" }, []want{{"cluster", "not_allowed_value", "default, second"}}},
		{"cluster too long", func(s *ippool.Spec) { s.Cluster = strings.Repeat("c", 65) }, []want{{"cluster", "too_long", "64"}}},
		{"bridge missing", func(s *ippool.Spec) { s.Bridge = "" }, []want{{"bridge", "required", ""}}},
		{"bridge too long", func(s *ippool.Spec) { s.Bridge = "vmbr0123456789ab" }, []want{{"bridge", "too_long", "15"}}},
		{"bridge space", func(s *ippool.Spec) { s.Bridge = "vmbr 0" }, []want{{"bridge", "bad_format", ""}}},
		{"cidr missing", func(s *ippool.Spec) { s.CIDR = "" }, []want{{"cidr", "required", ""}}},
		{"cidr junk", func(s *ippool.Spec) { s.CIDR = "203.0.113.0" }, []want{{"cidr", "bad_format", ""}}},
		{"cidr bits", func(s *ippool.Spec) { s.CIDR = "203.0.113.0/33" }, []want{{"cidr", "bad_format", ""}}},
		// A v6 cidr makes an IPv6 pool (R54): the v4 range and gateway do not fit it.
		{"cidr ipv6", func(s *ippool.Spec) { s.CIDR = "2001:db8::/64" },
			[]want{{"first", "not_for_family", "ipv6"}, {"gateway", "bad_format", ""}, {"last", "not_for_family", "ipv6"}}},
		{"cidr mapped", func(s *ippool.Spec) { s.CIDR = "::ffff:203.0.113.0/120" }, []want{{"cidr", "not_ipv4", ""}}},
		{"cidr host bits", func(s *ippool.Spec) { s.CIDR = "203.0.113.1/24" }, []want{{"cidr", "not_canonical", "203.0.113.0/24"}}},
		{"gateway missing", func(s *ippool.Spec) { s.Gateway = "" }, []want{{"gateway", "required", ""}}},
		{"gateway junk", func(s *ippool.Spec) { s.Gateway = "203.0.113" }, []want{{"gateway", "bad_format", ""}}},
		{"gateway ipv6", func(s *ippool.Spec) { s.Gateway = "2001:db8::1" }, []want{{"gateway", "not_ipv4", ""}}},
		{"gateway mapped", func(s *ippool.Spec) { s.Gateway = "::ffff:203.0.113.1" }, []want{{"gateway", "not_ipv4", ""}}},
		{"gateway leading zero", func(s *ippool.Spec) { s.Gateway = "203.0.113.01" }, []want{{"gateway", "bad_format", ""}}},
		{"gateway outside", func(s *ippool.Spec) { s.Gateway = "198.51.100.1" }, []want{{"gateway", "outside_network", "203.0.113.0/24"}}},
		{"gateway network", func(s *ippool.Spec) { s.Gateway = "203.0.113.0" }, []want{{"gateway", "reserved_address", "203.0.113.0/24"}}},
		{"gateway broadcast", func(s *ippool.Spec) { s.Gateway = "203.0.113.255" }, []want{{"gateway", "reserved_address", "203.0.113.0/24"}}},
		{"gateway in range", func(s *ippool.Spec) { s.Gateway = "203.0.113.100" }, []want{{"gateway", "inside_range", "203.0.113.10–203.0.113.200"}}},
		{"gateway is first", func(s *ippool.Spec) { s.Gateway = "203.0.113.10" }, []want{{"gateway", "inside_range", "203.0.113.10–203.0.113.200"}}},
		{"gateway is last", func(s *ippool.Spec) { s.Gateway = "203.0.113.200" }, []want{{"gateway", "inside_range", "203.0.113.10–203.0.113.200"}}},
		{"first missing", func(s *ippool.Spec) { s.First = "" }, []want{{"first", "required", ""}}},
		{"first outside", func(s *ippool.Spec) { s.First = "203.0.112.10" }, []want{{"first", "outside_network", "203.0.113.0/24"}}},
		{"first network", func(s *ippool.Spec) { s.First = "203.0.113.0" }, []want{{"first", "reserved_address", "203.0.113.0/24"}}},
		{"last broadcast", func(s *ippool.Spec) { s.Last = "203.0.113.255" }, []want{{"last", "reserved_address", "203.0.113.0/24"}}},
		{"last outside", func(s *ippool.Spec) { s.Last = "203.0.114.1" }, []want{{"last", "outside_network", "203.0.113.0/24"}}},
		{"last ipv6", func(s *ippool.Spec) { s.Last = "2001:db8::10" }, []want{{"last", "not_ipv4", ""}}},
		{"first after last", func(s *ippool.Spec) { s.First, s.Last = "203.0.113.50", "203.0.113.40" }, []want{{"last", "too_small", "203.0.113.50"}}},
		{"nameserver junk", func(s *ippool.Spec) { s.Nameservers = []string{"dns.example.com"} }, []want{{"nameservers[0]", "bad_format", ""}}},
		{"nameserver empty", func(s *ippool.Spec) { s.Nameservers = []string{"203.0.113.53", ""} }, []want{{"nameservers[1]", "required", ""}}},
		{"nameserver zone", func(s *ippool.Spec) { s.Nameservers = []string{"fe80::1%eth0"} }, []want{{"nameservers[0]", "bad_format", ""}}},
		{"nameserver not canonical", func(s *ippool.Spec) { s.Nameservers = []string{"2001:DB8::53"} }, []want{{"nameservers[0]", "not_canonical", "2001:db8::53"}}},
		{"nameserver duplicate", func(s *ippool.Spec) { s.Nameservers = []string{"203.0.113.53", "203.0.113.53"} }, []want{{"nameservers[1]", "duplicate", ""}}},
		{"nameservers too many", func(s *ippool.Spec) { s.Nameservers = []string{"192.0.2.1", "192.0.2.2", "192.0.2.3", "192.0.2.4"} }, []want{{"nameservers", "too_long", "3"}}},
		{"everything at once", func(s *ippool.Spec) { *s = ippool.Spec{Nameservers: []string{"x"}} }, []want{
			{"bridge", "required", ""}, {"cidr", "required", ""}, {"cluster", "required", ""}, {"first", "required", ""},
			{"gateway", "required", ""}, {"last", "required", ""}, {"name", "required", ""}, {"nameservers[0]", "bad_format", ""}}},
		{"outside and inverted", func(s *ippool.Spec) { s.First, s.Last, s.Gateway = "10.0.0.5", "203.0.113.5", "203.0.113.7" }, []want{
			{"first", "outside_network", "203.0.113.0/24"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := spec()
			c.mod(&s)
			_, err := ippool.Validate(s, []string{"second", "default"})
			if err == nil {
				t.Fatal("accepted")
			}
			p := problemOf(t, err)
			if p.Status != 422 || p.Code != i18n.CodeValidationFailed {
				t.Fatalf("problem %d %s", p.Status, p.Code)
			}
			if len(p.Fields) != len(c.want) {
				t.Fatalf("fields %+v, want %+v", p.Fields, c.want)
			}
			for i, w := range c.want {
				f := p.Fields[i]
				if f.Field != w.field || string(f.Code) != w.code || f.Param != w.param {
					t.Errorf("field %d = %+v, want %+v", i, f, w)
				}
				// The message is translated and names the field.
				for _, lang := range i18n.Languages {
					if msg := f.Message(lang); !strings.Contains(msg, f.Field) && w.code != "required_one_of" {
						t.Errorf("%s message %q does not name %s", lang, msg, f.Field)
					}
				}
			}
		})
	}
}

func TestAddressCIDR(t *testing.T) {
	a := ippool.Address{IP: netip.MustParseAddr("203.0.113.10"), PrefixLen: 24}
	if a.CIDR() != "203.0.113.10/24" {
		t.Fatalf("CIDR() = %q", a.CIDR())
	}
}
