package pveconf

import (
	"math"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// qemuModels are the QEMU NIC models; each is also a key whose value is the
// MAC address (qemu-server $net_fmt: alias macaddr, keyAlias model).
var qemuModels = []string{
	"e1000", "e1000-82540em", "e1000-82544gc", "e1000-82545em", "e1000e",
	"i82551", "i82557b", "i82559er", "ne2k_isa", "ne2k_pci", "pcnet",
	"rtl8139", "virtio", "vmxnet3",
}

func isQEMUModel(s string) bool { return slices.Contains(qemuModels, s) }

// Net is a parsed container or QEMU netN value (docs/proxmox.md §4.6):
// name=eth0,bridge=vmbr0,firewall=1,hwaddr=...,ip=dhcp,type=veth or
// virtio=BC:24:11:00:00:01,bridge=vmbr0,firewall=1.
type Net struct {
	Name   string // container: the interface name inside the guest
	Model  string // QEMU: the NIC model (virtio, e1000, ...)
	HWAddr string // container hwaddr=, QEMU macaddr= or the value of the model key
	Bridge string
	IP     string // container: CIDR, dhcp or manual
	GW     string
	IP6    string // container: CIDR, auto, dhcp or manual
	GW6    string
	// Firewall, Rate (MB/s), Tag and MTU are zero when absent; a key that
	// was present is written back even when zero.
	Firewall bool
	Rate     float64
	Tag      int
	MTU      int
	// Extra holds every other key=value in config order (type, link_down,
	// trunks, queues, host-managed, ...).
	Extra []Option
}

// ParseNet parses a container or QEMU netN value, as pve-common's
// parse_property_string reads it: each key at most once, booleans as
// 1/0/on/off/yes/no/true/false, tag 1..4094, mtu 1..65535, rate a
// non-negative number. Address texts (MAC, IP) are kept as written, not
// checked; FormatLXCNet checks what we write.
func ParseNet(value string) (Net, error) {
	parts, err := splitProps(netWhat, value)
	if err != nil {
		return Net{}, err
	}
	r := netReader{input: value, seen: map[string]bool{}}
	for _, p := range parts {
		if err := r.read(p); err != nil {
			return Net{}, err
		}
	}
	return r.n, nil
}

// netWhat names the netN format in errors.
const netWhat = "net"

// netReader fills a Net from the parts of one netN value.
type netReader struct {
	input string
	n     Net
	seen  map[string]bool
}

// claim records that field was given, or fails when it was given before.
func (r *netReader) claim(field string) error {
	if r.seen[field] {
		return syntaxErr(netWhat, r.input, field+" given twice")
	}
	r.seen[field] = true
	return nil
}

// read takes one part: a bare NIC model, the model as key with the MAC as value, or a key=value.
func (r *netReader) read(p propPart) error {
	if !p.keyed {
		if !isQEMUModel(p.value) {
			return syntaxErr(netWhat, r.input, "value without key "+quotePart(p.value)+" is not a NIC model")
		}
		r.n.Model = p.value
		return r.claim("model")
	}
	k, v := p.key, p.value
	switch {
	case isQEMUModel(k):
		r.n.Model, r.n.HWAddr = k, v
		if err := r.claim("model"); err != nil {
			return err
		}
		return r.claim("macaddr")
	case k == "model":
		if !isQEMUModel(v) {
			return syntaxErr(netWhat, r.input, "unknown NIC model "+quotePart(v))
		}
		r.n.Model = v
		return r.claim("model")
	case k == "hwaddr", k == "macaddr":
		r.n.HWAddr = v
		return r.claim("macaddr")
	}
	if dst := r.n.text(k); dst != nil {
		*dst = v
		return nil
	}
	return r.number(k, v)
}

// text returns the field of a key whose value is kept as written, or nil.
func (n *Net) text(key string) *string {
	switch key {
	case "name":
		return &n.Name
	case "bridge":
		return &n.Bridge
	case "ip":
		return &n.IP
	case "gw":
		return &n.GW
	case "ip6":
		return &n.IP6
	case "gw6":
		return &n.GW6
	}
	return nil
}

// number reads firewall, rate, tag and mtu; any other key goes to Extra.
func (r *netReader) number(k, v string) error {
	var err error
	switch k {
	case "firewall":
		b, ok := parseBool(v)
		if !ok {
			return syntaxErr(netWhat, r.input, "firewall is not a boolean")
		}
		r.n.Firewall = b
	case "rate":
		f, ok := parsePerlNumber(v)
		if !ok || f < 0 {
			return syntaxErr(netWhat, r.input, "rate is not a non-negative number")
		}
		r.n.Rate = f
	case "tag":
		r.n.Tag, err = parseIntIn(netWhat, r.input, "tag", v, 1, 4094)
	case "mtu":
		r.n.MTU, err = parseIntIn(netWhat, r.input, "mtu", v, 1, 65535)
	default:
		r.n.Extra = append(r.n.Extra, Option{Key: k, Value: v})
	}
	return err
}

// parseIntIn reads an integer (pve-common is_integer: ^[+-]?\d+$) within
// [lo, hi].
func parseIntIn(what, input, key, v string, lo, hi int) (int, error) {
	d := v
	if d != "" && (d[0] == '+' || d[0] == '-') {
		d = d[1:]
	}
	if !allDigits(d) {
		return 0, syntaxErr(what, input, key+" is not an integer")
	}
	i, err := strconv.Atoi(v)
	if err != nil || i < lo || i > hi {
		return 0, rangeErr(what, input, key+" is outside "+strconv.Itoa(lo)+".."+strconv.Itoa(hi))
	}
	return i, nil
}

// parsePerlNumber reads a number as pve-common's is_number accepts it:
// ^[+-]?(\d+\.\d+|\d+\.|\.\d+|\d+)([eE][+-]?\d+)?$, finite.
func parsePerlNumber(v string) (float64, bool) {
	s := v
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	mant, exp, hasExp := strings.Cut(strings.ReplaceAll(s, "E", "e"), "e")
	if hasExp {
		e := exp
		if e != "" && (e[0] == '+' || e[0] == '-') {
			e = e[1:]
		}
		if !allDigits(e) {
			return 0, false
		}
	}
	ip, fp, _ := strings.Cut(mant, ".")
	if ip != "" && !allDigits(ip) || fp != "" && !allDigits(fp) || ip == "" && fp == "" {
		return 0, false
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false
	}
	if f == 0 {
		f = 0 // drop the sign of -0
	}
	return f, true
}

// LXCNet describes a container interface to create (R7,
// docs/proxmox.md §4.6).
type LXCNet struct {
	Name     string // required, e.g. eth0
	Bridge   string // required, e.g. vmbr0
	Firewall bool
	IP       string // IPv4 CIDR, "dhcp" or "manual"; "" for none
	GW       string // IPv4 gateway; needs a CIDR IP
	IP6      string // IPv6 CIDR, "auto", "dhcp" or "manual"; "" for none
	GW6      string // IPv6 gateway; needs a CIDR IP6
	HWAddr   string // unicast MAC; "" lets Proxmox generate one
	Rate     float64
	Tag      int // VLAN 1..4094, 0 for none
	MTU      int // 64..65535, 0 for the bridge's
}

// FormatLXCNet validates spec and writes the container netN value for
// create: name=eth0,bridge=vmbr0,firewall=1,ip=203.0.113.10/24,gw=203.0.113.1
// then ip6=, gw6=, hwaddr=, tag=, mtu= and rate= when set.
func FormatLXCNet(spec LXCNet) (string, error) {
	if !bridgeOrNameRe(spec.Name) {
		return "", syntaxErr(lxcNetWhat, spec.Name, "name must match [-_.A-Za-z0-9]+")
	}
	if !bridgeOrNameRe(spec.Bridge) {
		return "", syntaxErr(lxcNetWhat, spec.Name, "bridge must match [-_.A-Za-z0-9]+")
	}
	parts := []string{"name=" + spec.Name, "bridge=" + spec.Bridge}
	if spec.Firewall {
		parts = append(parts, "firewall=1")
	}
	addr, err := spec.addressParts()
	if err != nil {
		return "", err
	}
	link, err := spec.linkParts()
	if err != nil {
		return "", err
	}
	parts = append(append(parts, addr...), link...)
	return strings.Join(parts, ","), nil
}

// lxcNetWhat names the container netN format in errors.
const lxcNetWhat = "lxc net"

// addressParts checks and writes ip=, gw=, ip6= and gw6=.
func (spec LXCNet) addressParts() ([]string, error) {
	bad := func(msg string) ([]string, error) { return nil, syntaxErr(lxcNetWhat, spec.Name, msg) }
	var parts []string
	if spec.IP != "" {
		if spec.IP != "dhcp" && spec.IP != "manual" && !validCIDR4(spec.IP) {
			return bad("ip must be an IPv4 CIDR (prefix 8..32), dhcp or manual")
		}
		parts = append(parts, "ip="+spec.IP)
	}
	if spec.GW != "" {
		if a, err := netip.ParseAddr(spec.GW); err != nil || !a.Is4() || !validCIDR4(spec.IP) {
			return bad("gw must be an IPv4 address next to a CIDR ip")
		}
		parts = append(parts, "gw="+spec.GW)
	}
	if spec.IP6 != "" {
		if spec.IP6 != "auto" && spec.IP6 != "dhcp" && spec.IP6 != "manual" && !validCIDR6(spec.IP6) {
			return bad("ip6 must be an IPv6 CIDR (prefix 8..128), auto, dhcp or manual")
		}
		parts = append(parts, "ip6="+spec.IP6)
	}
	if spec.GW6 != "" {
		if a, err := netip.ParseAddr(spec.GW6); err != nil || !a.Is6() || a.Is4In6() || a.Zone() != "" || !validCIDR6(spec.IP6) {
			return bad("gw6 must be an IPv6 address next to a CIDR ip6")
		}
		parts = append(parts, "gw6="+spec.GW6)
	}
	return parts, nil
}

// linkParts checks and writes hwaddr=, tag=, mtu= and rate=.
func (spec LXCNet) linkParts() ([]string, error) {
	var parts []string
	if spec.HWAddr != "" {
		if !validUnicastMAC(spec.HWAddr) {
			return nil, syntaxErr(lxcNetWhat, spec.Name, "hwaddr must be a unicast MAC XX:XX:XX:XX:XX:XX")
		}
		parts = append(parts, "hwaddr="+spec.HWAddr)
	}
	if spec.Tag != 0 {
		if spec.Tag < 1 || spec.Tag > 4094 {
			return nil, rangeErr(lxcNetWhat, spec.Name, "tag is outside 1..4094")
		}
		parts = append(parts, "tag="+strconv.Itoa(spec.Tag))
	}
	if spec.MTU != 0 {
		if spec.MTU < 64 || spec.MTU > 65535 {
			return nil, rangeErr(lxcNetWhat, spec.Name, "mtu is outside 64..65535")
		}
		parts = append(parts, "mtu="+strconv.Itoa(spec.MTU))
	}
	if spec.Rate != 0 {
		if spec.Rate < 0 || math.IsNaN(spec.Rate) || math.IsInf(spec.Rate, 0) {
			return nil, rangeErr(lxcNetWhat, spec.Name, "rate must be a non-negative number")
		}
		parts = append(parts, "rate="+strconv.FormatFloat(spec.Rate, 'f', -1, 64))
	}
	return parts, nil
}

// bridgeOrNameRe is the pattern of the container net name and bridge keys,
// [-_.\w\d]+ (ASCII here).
func bridgeOrNameRe(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isLetter(c) && !isDigit(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return s != ""
}

// validCIDR4 follows pve-common's CIDRv4 format (prefix 8..32).
func validCIDR4(s string) bool {
	p, err := netip.ParsePrefix(s)
	return err == nil && p.Addr().Is4() && p.Bits() >= 8
}

// validCIDR6 follows pve-common's CIDRv6 format (prefix 8..128).
func validCIDR6(s string) bool {
	p, err := netip.ParsePrefix(s)
	return err == nil && p.Addr().Is6() && !p.Addr().Is4In6() && p.Bits() >= 8
}

// validUnicastMAC is pve-common's mac-addr format:
// ^[a-f0-9][02468ace](?::[a-f0-9]{2}){5}$, case-insensitive.
func validUnicastMAC(s string) bool {
	if len(s) != 17 {
		return false
	}
	for i := 0; i < 17; i++ {
		c := s[i]
		if i%3 == 2 {
			if c != ':' {
				return false
			}
			continue
		}
		if !isHex(c) {
			return false
		}
	}
	return strings.ContainsRune("02468aceACE", rune(s[1]))
}

func isHex(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }
