package ippool

import "net/netip"

// InRange reports whether a lies in the allocation range (the tests check a pool's range with
// it; allocation works on the integer form).
func (p Pool) InRange(a netip.Addr) bool {
	return a.Is4() && toUint(a) >= toUint(p.First) && toUint(a) <= toUint(p.Last)
}
