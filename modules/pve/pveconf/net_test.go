package pveconf

import (
	"errors"
	"math"
	"reflect"
	"testing"
)

func TestParseNet(t *testing.T) {
	tests := []struct {
		in   string
		want Net // keys are not compared
	}{
		{"name=eth0,bridge=vmbr0,firewall=1,hwaddr=5D:CF:BD:B2:C5:39,ip=dhcp,type=veth", Net{
			Name: "eth0", Bridge: "vmbr0", Firewall: true, HWAddr: "5D:CF:BD:B2:C5:39", IP: "dhcp",
			Extra: []Option{{"type", "veth"}}}},
		{"name=eth0,bridge=vmbr0,ip=203.0.113.10/24,gw=203.0.113.1,ip6=2001:db8::10/64,gw6=2001:db8::1," +
			"firewall=1,hwaddr=BC:24:11:00:00:01,rate=12.5,tag=100,mtu=1500,link_down=1,type=veth", Net{
			Name: "eth0", Bridge: "vmbr0", IP: "203.0.113.10/24", GW: "203.0.113.1", IP6: "2001:db8::10/64",
			GW6: "2001:db8::1", Firewall: true, HWAddr: "BC:24:11:00:00:01", Rate: 12.5, Tag: 100, MTU: 1500,
			Extra: []Option{{"link_down", "1"}, {"type", "veth"}}}},
		{"virtio=BC:24:11:2E:3F:4A,bridge=vmbr0,firewall=1", Net{
			Model: "virtio", HWAddr: "BC:24:11:2E:3F:4A", Bridge: "vmbr0", Firewall: true}},
		{"e1000-82540em=BC:24:11:2E:3F:4A,bridge=vmbr1,queues=4", Net{
			Model: "e1000-82540em", HWAddr: "BC:24:11:2E:3F:4A", Bridge: "vmbr1", Extra: []Option{{"queues", "4"}}}},
		{"model=e1000,macaddr=BC:24:11:00:00:01,bridge=vmbr1,tag=100,rate=12.5,mtu=1", Net{
			Model: "e1000", HWAddr: "BC:24:11:00:00:01", Bridge: "vmbr1", Tag: 100, Rate: 12.5, MTU: 1}},
		{"virtio,bridge=vmbr0", Net{Model: "virtio", Bridge: "vmbr0"}},
		{"bridge=vmbr0,virtio", Net{Model: "virtio", Bridge: "vmbr0"}},
		{"name=eth0,firewall=0", Net{Name: "eth0"}},
		{"name=eth0,firewall=yes", Net{Name: "eth0", Firewall: true}},
		{"name=eth0,rate=0", Net{Name: "eth0"}},
		{"name=eth0,rate=.5", Net{Name: "eth0", Rate: 0.5}},
		{"name=eth0,rate=5.", Net{Name: "eth0", Rate: 5}},
		{"name=eth0,rate=1e2", Net{Name: "eth0", Rate: 100}},
		{"name=eth0,tag=+7", Net{Name: "eth0", Tag: 7}},
		{"name=eth0,rate=-0", Net{Name: "eth0"}},
		{"name=eth0,,bridge=vmbr0, ", Net{Name: "eth0", Bridge: "vmbr0"}},
		{"", Net{}},
	}
	for _, tt := range tests {
		got, err := ParseNet(tt.in)
		if err != nil {
			t.Errorf("ParseNet(%q): %v", tt.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseNet(%q)\n got %+v\nwant %+v", tt.in, got, tt.want)
		}
	}
}

func TestParseNetErrors(t *testing.T) {
	tests := []struct {
		in  string
		err error
	}{
		{"name=eth0,name=eth1", ErrSyntax},
		{"eth0", ErrSyntax},
		{"virtio,e1000", ErrSyntax},
		{"virtio=BC:24:11:00:00:01,model=e1000", ErrSyntax},
		{"model=e1000,virtio=BC:24:11:00:00:01", ErrSyntax},
		{"virtio=BC:24:11:00:00:01,e1000=BC:24:11:00:00:02", ErrSyntax},
		{"virtio=BC:24:11:00:00:01,macaddr=BC:24:11:00:00:02", ErrSyntax},
		{"hwaddr=BC:24:11:00:00:01,macaddr=BC:24:11:00:00:02", ErrSyntax},
		{"model=foo", ErrSyntax},
		{"name=eth0,tag=abc", ErrSyntax},
		{"name=eth0,tag=1.5", ErrSyntax},
		{"name=eth0,tag=+-1", ErrSyntax},
		{"name=eth0,tag=0", ErrRange},
		{"name=eth0,tag=4095", ErrRange},
		{"name=eth0,tag=99999999999999999999", ErrRange},
		{"name=eth0,mtu=0", ErrRange},
		{"name=eth0,mtu=65536", ErrRange},
		{"name=eth0,rate=-1", ErrSyntax},
		{"name=eth0,rate=abc", ErrSyntax},
		{"name=eth0,rate=inf", ErrSyntax},
		{"name=eth0,rate=NaN", ErrSyntax},
		{"name=eth0,rate=0x10", ErrSyntax},
		{"name=eth0,rate=1e400", ErrSyntax},
		{"name=eth0,rate=1_0", ErrSyntax},
		{"name=eth0,rate=.", ErrSyntax},
		{"name=eth0,rate=1e", ErrSyntax},
		{"name=eth0,firewall=maybe", ErrSyntax},
		{"name=", ErrSyntax},
		{"=eth0", ErrSyntax},
		{"a b=1", ErrSyntax},
		{"name=eth0\nbridge=vmbr0", ErrSyntax},
	}
	for _, tt := range tests {
		got, err := ParseNet(tt.in)
		if !errors.Is(err, tt.err) {
			t.Errorf("ParseNet(%q) = %+v, %v; want error %v", tt.in, got, err, tt.err)
		}
	}
}

func TestFormatLXCNet(t *testing.T) {
	tests := []struct {
		spec LXCNet
		want string
	}{
		{LXCNet{Name: "eth0", Bridge: "vmbr0", Firewall: true, IP: "203.0.113.10/24", GW: "203.0.113.1"},
			"name=eth0,bridge=vmbr0,firewall=1,ip=203.0.113.10/24,gw=203.0.113.1"},
		{LXCNet{Name: "eth0", Bridge: "vmbr0", Firewall: true, IP: "dhcp"},
			"name=eth0,bridge=vmbr0,firewall=1,ip=dhcp"},
		{LXCNet{Name: "eth0", Bridge: "vmbr0", Firewall: true, IP: "203.0.113.10/24", GW: "203.0.113.1", Rate: 12.5},
			"name=eth0,bridge=vmbr0,firewall=1,ip=203.0.113.10/24,gw=203.0.113.1,rate=12.5"},
		{LXCNet{Name: "eth1", Bridge: "vmbr1", IP6: "2001:db8::10/64", GW6: "2001:db8::1", HWAddr: "BC:24:11:00:00:01",
			Tag: 100, MTU: 1500}, "name=eth1,bridge=vmbr1,ip6=2001:db8::10/64,gw6=2001:db8::1,hwaddr=BC:24:11:00:00:01,tag=100,mtu=1500"},
		{LXCNet{Name: "eth0", Bridge: "vmbr0", IP: "manual", IP6: "auto"}, "name=eth0,bridge=vmbr0,ip=manual,ip6=auto"},
		{LXCNet{Name: "eth0", Bridge: "vmbr0", Rate: 1000}, "name=eth0,bridge=vmbr0,rate=1000"},
	}
	for _, tt := range tests {
		got, err := FormatLXCNet(tt.spec)
		if err != nil || got != tt.want {
			t.Errorf("FormatLXCNet(%+v) = %q, %v; want %q", tt.spec, got, err, tt.want)
			continue
		}
		n, err := ParseNet(got)
		if err != nil {
			t.Errorf("ParseNet(%q): %v", got, err)
			continue
		}
		back := LXCNet{Name: n.Name, Bridge: n.Bridge, Firewall: n.Firewall, IP: n.IP, GW: n.GW, IP6: n.IP6,
			GW6: n.GW6, HWAddr: n.HWAddr, Rate: n.Rate, Tag: n.Tag, MTU: n.MTU}
		if back != tt.spec {
			t.Errorf("ParseNet(%q) = %+v; want %+v", got, back, tt.spec)
		}
	}
}

func TestFormatLXCNetErrors(t *testing.T) {
	ok := LXCNet{Name: "eth0", Bridge: "vmbr0", IP: "203.0.113.10/24", GW: "203.0.113.1"}
	tests := []struct {
		name string
		edit func(*LXCNet)
		err  error
	}{
		{"no name", func(n *LXCNet) { n.Name = "" }, ErrSyntax},
		{"name with comma", func(n *LXCNet) { n.Name = "eth0,ip=dhcp" }, ErrSyntax},
		{"no bridge", func(n *LXCNet) { n.Bridge = "" }, ErrSyntax},
		{"bridge injection", func(n *LXCNet) { n.Bridge = "vmbr0,ip=198.51.100.1/24" }, ErrSyntax},
		{"ip without prefix", func(n *LXCNet) { n.IP = "203.0.113.10" }, ErrSyntax},
		{"ip prefix too short", func(n *LXCNet) { n.IP = "203.0.113.10/4" }, ErrSyntax},
		{"ip is v6", func(n *LXCNet) { n.IP, n.GW = "2001:db8::1/64", "" }, ErrSyntax},
		{"gw with dhcp", func(n *LXCNet) { n.IP = "dhcp" }, ErrSyntax},
		{"gw without ip", func(n *LXCNet) { n.IP = "" }, ErrSyntax},
		{"gw is v6", func(n *LXCNet) { n.GW = "2001:db8::1" }, ErrSyntax},
		{"ip6 is v4", func(n *LXCNet) { n.IP6 = "203.0.113.10/24" }, ErrSyntax},
		{"ip6 mapped v4", func(n *LXCNet) { n.IP6 = "::ffff:203.0.113.10/120" }, ErrSyntax},
		{"gw6 without ip6", func(n *LXCNet) { n.GW6 = "2001:db8::1" }, ErrSyntax},
		{"gw6 with zone", func(n *LXCNet) { n.IP6, n.GW6 = "2001:db8::10/64", "fe80::1%eth0" }, ErrSyntax},
		{"multicast mac", func(n *LXCNet) { n.HWAddr = "5D:CF:BD:B2:C5:39" }, ErrSyntax},
		{"short mac", func(n *LXCNet) { n.HWAddr = "BC:24:11:00:00" }, ErrSyntax},
		{"mac with dashes", func(n *LXCNet) { n.HWAddr = "BC-24-11-00-00-01" }, ErrSyntax},
		{"tag", func(n *LXCNet) { n.Tag = 4095 }, ErrRange},
		{"negative tag", func(n *LXCNet) { n.Tag = -1 }, ErrRange},
		{"mtu", func(n *LXCNet) { n.MTU = 63 }, ErrRange},
		{"rate", func(n *LXCNet) { n.Rate = -1 }, ErrRange},
		{"rate NaN", func(n *LXCNet) { n.Rate = math.NaN() }, ErrRange},
		{"rate Inf", func(n *LXCNet) { n.Rate = math.Inf(1) }, ErrRange},
	}
	for _, tt := range tests {
		spec := ok
		tt.edit(&spec)
		if got, err := FormatLXCNet(spec); !errors.Is(err, tt.err) {
			t.Errorf("%s: FormatLXCNet(%+v) = %q, %v; want error %v", tt.name, spec, got, err, tt.err)
		}
	}
}
