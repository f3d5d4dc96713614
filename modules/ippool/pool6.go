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
	prefix, err := netip.ParsePrefix(spec.CIDR)
	prefixOK := false
	switch {
	case prefix.Addr().Zone() != "" || prefix.Addr().Is4In6():
		v.Add("cidr", i18n.FieldPattern, "")
	case prefix.Masked() != prefix || prefix.String() != spec.CIDR || err != nil:
		v.Add("cidr", i18n.FieldNotCanonical, prefix.Masked().String())
	default:
		p.Prefix, prefixOK = prefix, true
	}
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
	for _, f := range [][2]string{{"first", spec.First}, {"last", spec.Last}} {
		if f[1] != "" {
			v.Add(f[0], i18n.FieldNotForFamily, "ipv6")
		}
	}
	gw, err := netip.ParseAddr(spec.Gateway)
	switch {
	case spec.Gateway == "":
		v.Add("gateway", i18n.FieldRequired, "")
	case err != nil || !gw.Is6() || gw.Is4In6() || gw.Zone() != "":
		v.Add("gateway", i18n.FieldPattern, "")
	case gw.String() != spec.Gateway:
		v.Add("gateway", i18n.FieldNotCanonical, gw.String())
	case prefixOK && prefix.Contains(gw):
		v.Add("gateway", i18n.FieldInsideRange, prefix.String())
	default:
		p.Gateway = gw
	}
	return p
}
