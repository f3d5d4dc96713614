package ippool

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"pvebill/i18n"
)

// Reverse zones (R55). A pool's reverse_zone is the PowerDNS zone its addresses' PTR records are
// written to: a zone under in-addr.arpa. (whole octets) for an IPv4 pool, under ip6.arpa. (whole
// nibbles) for an IPv6 pool, that contains the pool's whole cidr. It is written as DNS names are
// in zone files: lower case with the trailing dot. Classless delegations (RFC 2317, "0/26.…")
// are not supported: the PTR names pvebill writes are the plain reverse names.

// maxZoneLen is the width of ip_pools.reverse_zone (a DNS name has at most 253 characters
// and the trailing dot).
const maxZoneLen = 254

// ReverseZones lists the reverse zones that contain the network p, the most specific first:
// 113.0.203.in-addr.arpa., 0.203.in-addr.arpa., 203.in-addr.arpa. for 203.0.113.0/24.
func ReverseZones(p netip.Prefix) []string {
	var out []string
	if p.Addr().Is4() {
		b := p.Addr().As4()
		for n := min(p.Bits()/8, 4); n >= 1; n-- {
			labels := make([]string, 0, n+2)
			for i := n - 1; i >= 0; i-- {
				labels = append(labels, fmt.Sprint(b[i]))
			}
			out = append(out, strings.Join(append(labels, "in-addr", "arpa"), ".")+".")
		}
		return out
	}
	b := p.Addr().As16()
	nibbles := make([]string, 0, 32)
	for i := 0; i < 16; i++ {
		nibbles = append(nibbles, fmt.Sprintf("%x", b[i]>>4), fmt.Sprintf("%x", b[i]&0x0f))
	}
	for n := min(p.Bits()/4, 32); n >= 1; n-- {
		labels := make([]string, 0, n+2)
		for i := n - 1; i >= 0; i-- {
			labels = append(labels, nibbles[i])
		}
		out = append(out, strings.Join(append(labels, "ip6", "arpa"), ".")+".")
	}
	return out
}

// reverseZone checks a pool's reverse_zone against its network: empty (no reverse DNS), or one
// of ReverseZones(network) written canonically.
func (v *fieldErrors) reverseZone(s string, network netip.Prefix) string {
	if s == "" {
		return ""
	}
	canonical := strings.ToLower(strings.TrimSuffix(s, ".")) + "."
	zones := ReverseZones(network)
	switch {
	case len(s) > maxZoneLen:
		v.Add("reverse_zone", i18n.FieldTooLong, fmt.Sprint(maxZoneLen))
	case !network.IsValid():
		// The cidr is refused already; the zone cannot be checked against it.
	case !slices.Contains(zones, canonical):
		v.Add("reverse_zone", i18n.FieldOneOf, strings.Join(zones, ", "))
	case s != canonical:
		v.Add("reverse_zone", i18n.FieldNotCanonical, canonical)
	default:
		return s
	}
	return ""
}
