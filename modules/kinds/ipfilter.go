package kinds

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"

	"pvebill/modules/pve"
	"pvebill/modules/pve/pveconf"
)

// IPFilterSet is the ipset that restricts net0's source addresses (R9), for both kinds.
const IPFilterSet = "ipfilter-net0"

// IPFilterEntries is what ipfilter-net0 holds for a guest (R9, R54): its static IPv4 address,
// its IPv6 assignment (the whole prefix: the guest may use any address in it) and the
// link-local address derived from net0's MAC (EUI-64), which neighbour discovery needs. Proxmox's
// nftables backend adds none of these to an explicit set, so pvebill writes them all, before
// ipfilter is on. mac is net0's MAC; "" leaves the link-local address out.
func IPFilterEntries(a *Address, mac string) ([]string, error) {
	var out []string
	if a == nil {
		return out, nil
	}
	if a.CIDR != "" {
		p, err := netip.ParsePrefix(a.CIDR)
		if err != nil {
			return nil, fmt.Errorf("address %q: %w", a.CIDR, err)
		}
		out = append(out, p.Addr().String())
	}
	if a.IP6 != "" {
		p, err := netip.ParsePrefix(a.IP6)
		if err != nil {
			return nil, fmt.Errorf("ipv6 address %q: %w", a.IP6, err)
		}
		if p.Bits() == 128 {
			out = append(out, p.Addr().String())
		} else {
			out = append(out, p.Masked().String())
		}
	}
	if mac != "" {
		ll, err := LinkLocal(mac)
		if err != nil {
			return nil, err
		}
		out = append(out, ll.String())
	}
	return out, nil
}

// LinkLocal is the IPv6 link-local address a MAC gives an interface (EUI-64, RFC 4291
// appendix A): fe80::, the MAC with ff:fe in its middle and the universal/local bit flipped.
func LinkLocal(mac string) (netip.Addr, error) {
	hw, err := net.ParseMAC(mac)
	if err != nil || len(hw) != 6 {
		return netip.Addr{}, fmt.Errorf("mac %q is not a 48-bit MAC", mac)
	}
	b := [16]byte{0: 0xfe, 1: 0x80}
	copy(b[8:11], hw[0:3])
	b[8] ^= 0x02
	b[11], b[12] = 0xff, 0xfe
	copy(b[13:16], hw[3:6])
	return netip.AddrFrom16(b), nil
}

// Net0MAC reads the MAC of a guest's net0 value (a container's hwaddr=, a VM's macaddr= or
// model key); "" when it has none.
func Net0MAC(net0 string) (string, error) {
	if net0 == "" {
		return "", nil
	}
	n, err := pveconf.ParseNet(net0)
	if err != nil {
		return "", fmt.Errorf("net0 %q: %w", net0, err)
	}
	return n.HWAddr, nil
}

// FillIPFilter makes the guest's ipfilter-net0 hold exactly entries, creating the set when it is
// missing: an entry already there is left as it is, one not wanted (an old MAC's link-local
// address brought back by a restored archive, a released address) is removed after the wanted
// ones are in. what names the guest in errors.
func FillIPFilter(ctx context.Context, fw *pve.FirewallClient, what string, entries []string) error {
	sets, err := fw.IPSets(ctx)
	if err != nil {
		return fmt.Errorf("list %s ipsets: %w", what, err)
	}
	exists := false
	for _, s := range sets {
		exists = exists || s.Name == IPFilterSet
	}
	if !exists {
		if err := fw.CreateIPSet(ctx, IPFilterSet, "pvebill anti-spoofing"); err != nil {
			return fmt.Errorf("create %s %s: %w", what, IPFilterSet, err)
		}
	}
	have, err := fw.IPSetEntries(ctx, IPFilterSet)
	if err != nil {
		return fmt.Errorf("read %s %s: %w", what, IPFilterSet, err)
	}
	held := map[string]bool{}
	for _, e := range have {
		held[strings.TrimSuffix(strings.TrimSuffix(e.CIDR, "/32"), "/128")] = true
	}
	wanted := map[string]bool{}
	for _, want := range entries {
		wanted[want] = true
		if held[want] {
			continue
		}
		if err := fw.AddIPSetEntry(ctx, IPFilterSet, pve.IPSetEntryRequest{CIDR: want}); err != nil {
			return fmt.Errorf("add %s to %s %s: %w", want, what, IPFilterSet, err)
		}
	}
	for _, e := range have {
		if wanted[strings.TrimSuffix(strings.TrimSuffix(e.CIDR, "/32"), "/128")] {
			continue
		}
		if err := fw.DeleteIPSetEntry(ctx, IPFilterSet, e.CIDR); err != nil {
			return fmt.Errorf("remove %s from %s %s: %w", e.CIDR, what, IPFilterSet, err)
		}
	}
	return nil
}
