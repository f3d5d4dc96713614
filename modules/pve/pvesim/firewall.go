package pvesim

import (
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"strings"
)

// firewallState is the datacenter firewall options; a guest's firewall options and
// ipsets live with the guest. It is guarded by Sim.mu.
type firewallState struct {
	clusterFW map[string]string
}

func (fs *firewallState) resetFirewall() { fs.clusterFW = map[string]string{} }

// Guest firewall endpoints after pve-firewall's API2/Firewall/VM.pm and IPSet.pm. They
// are identical for /lxc/ and /qemu/.

func typedFirewallValue(k, v string) any {
	switch k {
	case "enable", "dhcp", "ipfilter", "macfilter", "ndp", "radv", "ebtables", "log_ratelimit", "nosmurfs", "tcpflags":
		if n, err := strconv.Atoi(v); err == nil {
			return n
		}
	}
	return v
}

// applyOptionChanges applies the parameters of an options PUT to a map.
func applyOptionChanges(m map[string]string, c *reqCtx, skip []string) {
	skipSet := map[string]bool{"node": true, "vmid": true}
	for _, k := range skip {
		skipSet[k] = true
	}
	for _, k := range parseDeleteList(c.str("delete")) {
		delete(m, k)
	}
	for k := range c.params {
		if skipSet[k] {
			continue
		}
		m[k] = c.str(k)
	}
}

func guestTypeOfTemplate(template string) string {
	if strings.HasPrefix(template, "/nodes/{node}/qemu/") {
		return "qemu"
	}
	return "lxc"
}

func (s *Sim) hFWOptionsGet(c *reqCtx) (any, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	g, err := s.loadGuest(c, guestTypeOfTemplate(c.template))
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	for k, v := range g.firewall {
		out[k] = typedFirewallValue(k, v)
	}
	out["digest"] = mapDigest(g.firewall)
	return out, nil
}

func (s *Sim) hFWOptionsPut(c *reqCtx) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, err := s.loadGuest(c, guestTypeOfTemplate(c.template))
	if err != nil {
		return nil, err
	}
	if d := c.str("digest"); d != "" && d != mapDigest(g.firewall) {
		return nil, fail500("detected modified configuration - file changed by other user? Try again.")
	}
	applyOptionChanges(g.firewall, c, []string{"delete", "digest"})
	return nil, nil
}

func (s *Sim) hFWIPSetList(c *reqCtx) (any, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	g, err := s.loadGuest(c, guestTypeOfTemplate(c.template))
	if err != nil {
		return nil, err
	}
	out := []map[string]any{}
	for _, name := range sortedKeys(g.ipsets) {
		set := g.ipsets[name]
		e := map[string]any{"name": name, "digest": ipsetDigest(set)}
		if set.Comment != "" {
			e["comment"] = set.Comment
		}
		out = append(out, e)
	}
	return out, nil
}

func ipsetDigest(set *ipset) string {
	m := map[string]string{"_comment": set.Comment}
	for i, e := range set.Entries {
		m[fmt.Sprintf("%04d", i)] = fmt.Sprintf("%s %v %s", e.CIDR, e.NoMatch, e.Comment)
	}
	return mapDigest(m)
}

func (s *Sim) hFWIPSetCreate(c *reqCtx) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, err := s.loadGuest(c, guestTypeOfTemplate(c.template))
	if err != nil {
		return nil, err
	}
	name := c.str("name")
	if old := c.str("rename"); old != "" {
		set := g.ipsets[old]
		if set == nil {
			return nil, fail500("IPSet '%s' does not exist", old)
		}
		if _, exists := g.ipsets[name]; exists {
			return nil, fail500("IPSet '%s' already exists", name)
		}
		delete(g.ipsets, old)
		set.Name = name
		if c.has("comment") {
			set.Comment = c.str("comment")
		}
		g.ipsets[name] = set
		return nil, nil
	}
	if _, exists := g.ipsets[name]; exists {
		return nil, fail500("IPSet '%s' already exists", name)
	}
	g.ipsets[name] = &ipset{Name: name, Comment: c.str("comment")}
	return nil, nil
}

func (s *Sim) ipsetOf(c *reqCtx) (*guest, *ipset, error) {
	g, err := s.loadGuest(c, guestTypeOfTemplate(c.template))
	if err != nil {
		return nil, nil, err
	}
	set := g.ipsets[c.str("name")]
	if set == nil {
		return g, nil, fail500("no such IPSet '%s'", c.str("name"))
	}
	return g, set, nil
}

func (s *Sim) hFWIPSetGet(c *reqCtx) (any, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, set, err := s.ipsetOf(c)
	if err != nil {
		return nil, err
	}
	out := []map[string]any{}
	for _, e := range set.Entries {
		m := map[string]any{"cidr": e.CIDR, "digest": ipsetDigest(set)}
		if e.Comment != "" {
			m["comment"] = e.Comment
		}
		if e.NoMatch {
			m["nomatch"] = 1
		}
		out = append(out, m)
	}
	return out, nil
}

// normalizeCIDR canonicalises an ipset entry like pve-firewall (plain addresses stay).
func normalizeCIDR(v string) (string, bool) {
	if p, err := netip.ParsePrefix(v); err == nil {
		return p.String(), true
	}
	if a, err := netip.ParseAddr(v); err == nil {
		return a.String(), true
	}
	if r, err := netip.ParseAddr(strings.SplitN(v, "-", 2)[0]); err == nil && strings.Contains(v, "-") {
		return r.String() + "-" + strings.SplitN(v, "-", 2)[1], true
	}
	return v, false
}

func (s *Sim) hFWIPSetAdd(c *reqCtx) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, set, err := s.ipsetOf(c)
	if err != nil {
		return nil, err
	}
	cidr, ok := normalizeCIDR(c.str("cidr"))
	if !ok {
		return nil, paramErr(map[string]string{"cidr": fmt.Sprintf("invalid IP address or CIDR '%s'", c.str("cidr"))})
	}
	for _, e := range set.Entries {
		if e.CIDR == cidr {
			return nil, fail500("entry '%s' already exists", cidr)
		}
	}
	set.Entries = append(set.Entries, ipsetEntry{CIDR: cidr, Comment: c.str("comment"), NoMatch: c.boolean("nomatch")})
	sort.SliceStable(set.Entries, func(i, j int) bool { return set.Entries[i].CIDR < set.Entries[j].CIDR })
	return nil, nil
}

func (s *Sim) hFWIPSetDelete(c *reqCtx) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, set, err := s.ipsetOf(c)
	if err != nil {
		return nil, err
	}
	if len(set.Entries) > 0 && !c.boolean("force") {
		return nil, fail500("IPSet '%s' is not empty", set.Name)
	}
	delete(g.ipsets, set.Name)
	return nil, nil
}

func (s *Sim) ipsetEntry(c *reqCtx) (*ipset, int, error) {
	_, set, err := s.ipsetOf(c)
	if err != nil {
		return nil, -1, err
	}
	cidr, _ := normalizeCIDR(c.str("cidr"))
	for i, e := range set.Entries {
		if e.CIDR == cidr {
			return set, i, nil
		}
	}
	return set, -1, fail500("no such IP/Network")
}

func (s *Sim) hFWIPSetEntryDelete(c *reqCtx) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	set, i, err := s.ipsetEntry(c)
	if err != nil {
		return nil, err
	}
	set.Entries = append(set.Entries[:i], set.Entries[i+1:]...)
	return nil, nil
}

type ipsetEntry struct {
	CIDR    string `json:"cidr"`
	Comment string `json:"comment,omitempty"`
	NoMatch bool   `json:"nomatch,omitempty"`
}

type ipset struct {
	Name    string
	Comment string
	Entries []ipsetEntry
}

func (s *Sim) hClusterFirewallOptionsGet(_ *reqCtx) (any, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := map[string]any{}
	for k, v := range s.clusterFW {
		out[k] = typedFirewallValue(k, v)
	}
	return out, nil
}

func (s *Sim) hClusterFirewallOptionsPut(c *reqCtx) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d := c.str("digest"); d != "" && d != mapDigest(s.clusterFW) {
		return nil, fail500("detected modified configuration - file changed by other user? Try again.")
	}
	applyOptionChanges(s.clusterFW, c, []string{"delete", "digest"})
	return nil, nil
}

// SetClusterFirewall enables or disables the datacenter firewall.
func (s *Sim) SetClusterFirewall(enable bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clusterFW["enable"] = strconv.Itoa(boolInt(enable))
}
