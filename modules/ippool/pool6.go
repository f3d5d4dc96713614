package ippool

import (
	"net/netip"
	"strconv"

	"pvebill/i18n"
)

// Limits of an IPv6 pool (R54).
const (
	// DefaultAssignPrefix is the prefix length a service gets when the pool names none.
	DefaultAssignPrefix = 64
	minAssignPrefix     = 64
	// maxIndexBits bounds the number of prefixes a pool can hold so that every index fits the
	// signed 64-bit ip column (a /32 of /64s is 32 bits; a /64 of /128s would be 64 and is
	// refused).
	maxIndexBits = 62
)

// addresses6 reads an IPv6 pool: the network, the assigned prefix length, and a gateway outside
// the network (link-local as a rule), so that no prefix handed out can hold it. first and last
// do not apply. A pool of /128s never hands out the network's first address, its Subnet-Router
// anycast address (RFC 4291 §2.6.1).
func (v *fieldErrors) addresses6(spec Spec) Pool {
	var p Pool
	prefix, _ := netip.ParsePrefix(spec.CIDR)
	prefixOK := prefix.Masked() == prefix && prefix.String() == spec.CIDR
	if prefixOK {
		p.Prefix = prefix
	} else {
		v.Add("cidr", i18n.FieldNotCanonical, prefix.Masked().String())
	}
	v.assignPrefix(spec, prefix, &p)
	for _, f := range [][2]string{{"first", spec.First}, {"last", spec.Last}} {
		if f[1] != "" {
			v.Add(f[0], i18n.FieldNotForFamily, "ipv6")
		}
	}
	p.Gateway = v.gateway6(spec.Gateway, prefix, prefixOK)
	return p
}

// assignPrefix reads assign_prefix (64 when absent) into p with the usable index range.
func (v *fieldErrors) assignPrefix(spec Spec, prefix netip.Prefix, p *Pool) {
	bits := DefaultAssignPrefix
	if spec.AssignPrefix != nil {
		bits = *spec.AssignPrefix
	}
	switch {
	case bits < max(minAssignPrefix, prefix.Bits()):
		v.Add("assign_prefix", i18n.FieldTooSmall, strconv.Itoa(max(minAssignPrefix, prefix.Bits())))
	case bits > 128:
		v.Add("assign_prefix", i18n.FieldTooLarge, "128")
	case bits-prefix.Bits() > maxIndexBits:
		v.Add("assign_prefix", i18n.FieldTooLarge, strconv.Itoa(prefix.Bits()+maxIndexBits))
	default:
		p.AssignPrefix = bits
		p.LastIndex = int64(1)<<(bits-prefix.Bits()) - 1
		if bits == 128 && prefix.Bits() < 128 {
			p.FirstIndex = 1
		}
	}
}

// gateway6 reads an IPv6 pool's gateway: an IPv6 address written canonically, outside the
// network.
func (v *fieldErrors) gateway6(s string, prefix netip.Prefix, prefixOK bool) netip.Addr {
	gw, err := netip.ParseAddr(s)
	switch {
	case s == "":
		v.Add("gateway", i18n.FieldRequired, "")
	case err != nil || !gw.Is6() || gw.Is4In6() || gw.Zone() != "":
		v.Add("gateway", i18n.FieldPattern, "")
	case gw.String() != s:
		v.Add("gateway", i18n.FieldNotCanonical, gw.String())
	case prefixOK && prefix.Contains(gw):
		v.Add("gateway", i18n.FieldInsideRange, prefix.String())
	default:
		return gw
	}
	return netip.Addr{}
}
