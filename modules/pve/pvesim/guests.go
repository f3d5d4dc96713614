package pvesim

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// guestTable is every guest of the cluster, by vmid and by node, and the sequences that
// number their processes and MAC addresses. It is guarded by Sim.mu.
type guestTable struct {
	guests map[int]*guest
	byNode map[string]map[int]*guest
	pidSeq int
	macSeq uint64
}

func (gt *guestTable) resetGuests() {
	gt.guests = map[int]*guest{}
	gt.byNode = map[string]map[int]*guest{}
	gt.pidSeq = 0
	gt.macSeq = 0
}

// Helpers shared by the container and VM handlers.

// loadGuest finds a guest of a type on the request's node, failing like load_config.
// Callers hold s.mu.
// readGuest answers a read-only request about one guest of typ under the read lock.
func (s *Sim) readGuest(c *reqCtx, typ string, f func(g *guest) any) (any, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	g, err := s.loadGuest(c, typ)
	if err != nil {
		return nil, err
	}
	return f(g), nil
}

func (s *Sim) loadGuest(c *reqCtx, typ string) (*guest, error) {
	vmid := c.integer("vmid")
	g := s.guests[vmid]
	if g == nil || g.node != c.node || g.typ != typ {
		dir := "lxc"
		if typ == "qemu" {
			dir = "qemu-server"
		}
		return nil, fail500("Configuration file 'nodes/%s/%s/%d.conf' does not exist", c.node, dir, vmid)
	}
	return g, nil
}

// checkLock fails like AbstractConfig::check_lock.
func checkLock(g *guest, tolerate ...string) error {
	l := g.conf["lock"]
	if l == "" {
		return nil
	}
	for _, t := range tolerate {
		if l == t {
			return nil
		}
	}
	if g.typ == "lxc" {
		return fail500("CT is locked (%s)", l)
	}
	return fail500("VM is locked (%s)", l)
}

func checkDigest(c *reqCtx, g *guest) error {
	if d := c.str("digest"); d != "" && d != configDigest(g) {
		return fail500("detected modified configuration - file changed by other user? Try again.")
	}
	return nil
}

// checkVMIDUnused fails like PVE::Cluster::check_vmid_unused. Callers hold s.mu.
func (s *Sim) checkVMIDUnused(vmid int) error {
	if g, ok := s.guests[vmid]; ok {
		return fail500("%s %d already exists on node '%s'", s.guestTypeName(g.typ), vmid, g.node)
	}
	return nil
}

// nextUnusedKey returns the first free unusedN key of a config.
func nextUnusedKey(conf, pending map[string]string) string {
	for i := 0; ; i++ {
		k := "unused" + strconv.Itoa(i)
		if _, ok := conf[k]; ok {
			continue
		}
		if _, ok := pending[k]; ok {
			continue
		}
		return k
	}
}

// effectiveConfig is the config with pending values merged in (load_current_config).
func effectiveConfig(g *guest) map[string]string {
	out := copyMap(g.conf)
	for k, v := range g.pending {
		out[k] = v
	}
	for k := range g.pendingDelete {
		delete(out, k)
	}
	return out
}

// configOutput renders GET .../config. Callers hold s.mu.
func (s *Sim) configOutput(g *guest, current bool) map[string]any {
	conf := g.conf
	if !current {
		conf = effectiveConfig(g)
	}
	out := map[string]any{}
	for k, v := range conf {
		if g.typ == "qemu" && k == "cipassword" {
			out[k] = "**********"
			continue
		}
		out[k] = s.typedValue(g.typ, k, v)
	}
	if len(g.lxcRaw) > 0 {
		raw := make([][]string, 0, len(g.lxcRaw))
		for _, kv := range g.lxcRaw {
			raw = append(raw, []string{kv[0], kv[1]})
		}
		out["lxc"] = raw
	}
	out["digest"] = configDigest(g)
	return out
}

// pendingOutput renders GET .../pending. Callers hold s.mu.
func (s *Sim) pendingOutput(g *guest) []map[string]any {
	keys := map[string]bool{}
	for k := range g.conf {
		keys[k] = true
	}
	for k := range g.pending {
		keys[k] = true
	}
	for k := range g.pendingDelete {
		keys[k] = true
	}
	out := []map[string]any{}
	for _, k := range sortedKeys(keys) {
		e := map[string]any{"key": k}
		hide := g.typ == "qemu" && k == "cipassword"
		if v, ok := g.conf[k]; ok {
			e["value"] = s.typedValue(g.typ, k, v)
			if hide {
				e["value"] = "**********"
			}
		}
		if v, ok := g.pending[k]; ok {
			e["pending"] = s.typedValue(g.typ, k, v)
			if hide {
				e["pending"] = "**********"
			}
		}
		if g.pendingDelete[k] {
			e["delete"] = 1
		}
		out = append(out, e)
	}
	return out
}

// parseDeleteList splits the delete= and revert= parameters like split_list.
func parseDeleteList(v string) []string {
	return splitList(v)
}

// nextMAC generates a deterministic unicast MAC with Proxmox's default prefix BC:24:11.
func (s *Sim) nextMAC(vmid int) string {
	s.macSeq++
	h := mix(uint64(s.opts.Seed) ^ uint64(vmid)<<20 ^ s.macSeq)
	return fmt.Sprintf("BC:24:11:%02X:%02X:%02X", byte(h>>16), byte(h>>8), byte(h))
}

// normalizeLXCNet orders a container netN value like print_property_string (name first,
// then the other keys sorted) and adds a generated hwaddr when missing.
func (s *Sim) normalizeLXCNet(vmid int, v string) string {
	kv := map[string]string{}
	for _, part := range strings.Split(v, ",") {
		k, val, ok := strings.Cut(part, "=")
		if ok {
			kv[k] = val
		}
	}
	if _, ok := kv["hwaddr"]; !ok {
		kv["hwaddr"] = s.nextMAC(vmid)
	}
	if _, ok := kv["type"]; !ok {
		kv["type"] = "veth"
	}
	var parts []string
	if n, ok := kv["name"]; ok {
		parts = append(parts, "name="+n)
	}
	keys := make([]string, 0, len(kv))
	for k := range kv {
		if k != "name" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		parts = append(parts, k+"="+kv[k])
	}
	return strings.Join(parts, ",")
}

// qemuNetWithNewMAC replaces the MAC of a QEMU netN value ("virtio=MAC,bridge=...",
// or "model=virtio,macaddr=MAC,...") with a newly generated one, as clone does.
func (s *Sim) qemuNetWithNewMAC(vmid int, v string) string {
	parts := strings.Split(v, ",")
	for i, p := range parts {
		k, _, _ := strings.Cut(p, "=")
		switch k {
		case "macaddr":
			parts[i] = "macaddr=" + s.nextMAC(vmid)
			return strings.Join(parts, ",")
		case "virtio", "e1000", "e1000e", "rtl8139", "vmxnet3", "i82551", "i82557b", "i82559er", "ne2k_isa", "ne2k_pci", "pcnet",
			"e1000-82540em", "e1000-82544gc", "e1000-82545em":
			parts[i] = k + "=" + s.nextMAC(vmid)
			return strings.Join(parts, ",")
		}
	}
	return v
}

// normalizeTags normalises a tag list like pve-guest-common's get_unique_tags with the
// default datacenter tag-style: split on ';', ',' or space, lower-cased, de-duplicated,
// sorted and joined with ';'.
func normalizeTags(v string) string {
	seen := map[string]bool{}
	var out []string
	for _, t := range strings.FieldsFunc(v, func(r rune) bool { return r == ';' || r == ',' || r == ' ' }) {
		t = strings.ToLower(t)
		if t == "" || seen[t] {
			continue
		}
		seen[t] = true
		out = append(out, t)
	}
	sort.Strings(out)
	return strings.Join(out, ";")
}

// checkSkiplock refuses skiplock=1 for a token: raise_param_exc, so a 400.
func checkSkiplock(c *reqCtx) error {
	if c.boolean("skiplock") {
		return paramErr(map[string]string{"skiplock": "Only root may use this option."})
	}
	return nil
}

// Guest describes a guest to seed with SeedGuest.
type Guest struct {
	VMID          int               `json:"vmid"`
	Type          string            `json:"type"` // "lxc" or "qemu"
	Node          string            `json:"node"`
	Config        map[string]string `json:"config"`
	Pending       map[string]string `json:"pending,omitempty"`
	PendingDelete []string          `json:"pending_delete,omitempty"`
	Running       bool              `json:"running"`
	Paused        bool              `json:"paused,omitempty"`
	Template      bool              `json:"template"`
	// LXC holds raw lxc.* entries of a container config, in order.
	LXC [][2]string `json:"lxc,omitempty"`
	// HAState makes the guest HA-managed with this requested state ("started", "stopped").
	HAState string `json:"ha_state,omitempty"`
}

// GuestSnapshot is a guest's state for assertions.
type GuestSnapshot struct {
	VMID          int                 `json:"vmid"`
	Type          string              `json:"type"`
	Node          string              `json:"node"`
	Config        map[string]string   `json:"config"`
	Pending       map[string]string   `json:"pending"`
	PendingDelete []string            `json:"pending_delete"`
	Status        string              `json:"status"` // running, stopped
	Paused        bool                `json:"paused"`
	Lock          string              `json:"lock"`
	Firewall      map[string]string   `json:"firewall"`
	IPSets        map[string][]string `json:"ipsets"`
	HAState       string              `json:"ha_state,omitempty"`
}

// guest is the simulator's state of one guest. It is guarded by Sim.mu.
type guest struct {
	vmid          int
	typ           string
	node          string
	conf          map[string]string
	pending       map[string]string
	pendingDelete map[string]bool
	lxcRaw        [][2]string
	running       bool
	paused        bool
	startedAt     time.Time
	pid           int
	firewall      map[string]string
	ipsets        map[string]*ipset
	ciGenerated   map[string]string
	// snaps are the snapshot sections of the config, by name (snapshot.go).
	snaps map[string]map[string]string
	// agentDown is a VM whose guest agent does not answer (qemu_agent.go).
	agentDown bool
}

func (s *Sim) guestTypeName(typ string) string {
	if typ == "lxc" {
		return "CT"
	}
	return "VM"
}

// SeedGuest puts a guest into the cluster as if it had been created earlier. Volumes its
// config references on known storages are created when missing.
func (s *Sim) SeedGuest(g Guest) error {
	if g.Type != "lxc" && g.Type != "qemu" {
		return fmt.Errorf("guest %d: type must be lxc or qemu, got %q", g.VMID, g.Type)
	}
	if g.VMID < 100 || g.VMID > 999999999 {
		return fmt.Errorf("guest %d: vmid out of range", g.VMID)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if g.Node == "" {
		g.Node = s.nodeOrder[0]
	}
	if _, ok := s.nodes[g.Node]; !ok {
		return fmt.Errorf("guest %d: no such node %q", g.VMID, g.Node)
	}
	if old, ok := s.guests[g.VMID]; ok {
		return fmt.Errorf("%s %d already exists on node '%s'", s.guestTypeName(old.typ), g.VMID, old.node)
	}
	ng := &guest{vmid: g.VMID, typ: g.Type, node: g.Node, conf: map[string]string{}, pending: map[string]string{},
		pendingDelete: map[string]bool{}, firewall: map[string]string{}, ipsets: map[string]*ipset{}}
	for k, v := range g.Config {
		ng.conf[k] = v
	}
	for k, v := range g.Pending {
		ng.pending[k] = v
	}
	for _, k := range g.PendingDelete {
		ng.pendingDelete[k] = true
	}
	ng.lxcRaw = append([][2]string(nil), g.LXC...)
	if g.Template {
		ng.conf["template"] = "1"
	}
	if g.Running && !g.Template {
		ng.running = true
		ng.paused = g.Paused
		ng.startedAt = s.now().Add(-time.Duration(1000+g.VMID%5000) * time.Second)
		s.pidSeq++
		ng.pid = 100000 + s.pidSeq
		ng.ciGenerated = ciSnapshot(ng.conf)
	}
	s.addGuest(ng)
	if g.HAState != "" {
		sid := haSID(ng)
		s.ha[sid] = &haResource{SID: sid, State: g.HAState}
	}
	for _, k := range sortedKeys(ng.conf) {
		s.ensureVolumeFor(ng, k, ng.conf[k])
	}
	for _, k := range sortedKeys(ng.pending) {
		s.ensureVolumeFor(ng, k, ng.pending[k])
	}
	return nil
}

// SetConfig changes a guest's active config behind pvebill's back; "" deletes the key.
func (s *Sim) SetConfig(vmid int, key, value string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.guests[vmid]
	if g == nil {
		return fmt.Errorf("guest %d does not exist", vmid)
	}
	if value == "" {
		delete(g.conf, key)
		return nil
	}
	g.conf[key] = value
	s.ensureVolumeFor(g, key, value)
	return nil
}

// Guest returns a guest's state.
func (s *Sim) Guest(vmid int) (GuestSnapshot, bool) {
	s.settle()
	s.mu.RLock()
	defer s.mu.RUnlock()
	g := s.guests[vmid]
	if g == nil {
		return GuestSnapshot{}, false
	}
	snap := GuestSnapshot{VMID: g.vmid, Type: g.typ, Node: g.node, Config: copyMap(g.conf), Pending: copyMap(g.pending),
		Paused: g.paused, Lock: g.conf["lock"], Firewall: copyMap(g.firewall), IPSets: map[string][]string{}, Status: "stopped"}
	if g.running {
		snap.Status = "running"
	}
	for k := range g.pendingDelete {
		snap.PendingDelete = append(snap.PendingDelete, k)
	}
	sort.Strings(snap.PendingDelete)
	for name, set := range g.ipsets {
		var cidrs []string
		for _, e := range set.Entries {
			cidrs = append(cidrs, e.CIDR)
		}
		snap.IPSets[name] = cidrs
	}
	if r := s.ha[haSID(g)]; r != nil {
		snap.HAState = r.State
	}
	return snap, true
}

// addGuest registers a guest. Callers hold the write lock.
func (s *Sim) addGuest(g *guest) {
	s.guests[g.vmid] = g
	m := s.byNode[g.node]
	if m == nil {
		m = map[int]*guest{}
		s.byNode[g.node] = m
	}
	m[g.vmid] = g
}

// removeGuest forgets a guest. Callers hold the write lock.
func (s *Sim) removeGuest(g *guest) {
	for _, p := range s.pools {
		delete(p.members, g.vmid)
	}
	if s.guests[g.vmid] == g {
		delete(s.guests, g.vmid)
	}
	if m := s.byNode[g.node]; m != nil && m[g.vmid] == g {
		delete(m, g.vmid)
	}
}

// guestsOnNode returns the guests of a node sorted by vmid. Callers hold s.mu.
func (s *Sim) guestsOnNode(node, typ string) []*guest {
	out := make([]*guest, 0, len(s.byNode[node]))
	for _, g := range s.byNode[node] {
		if typ == "" || g.typ == typ {
			out = append(out, g)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].vmid < out[j].vmid })
	return out
}

// seededVolume is the volume a seeded config entry references and its size (0 when
// the entry does not say), or ok false when it references none.
func seededVolume(g *guest, key, val string) (volid string, size int64, ok bool) {
	switch {
	case g.typ == "lxc" && (isMountKey(key) || indexedKey(key, "unused")):
		ms := parseMount(val)
		if ms.kind != "volume" {
			return "", 0, false
		}
		size, _ = parseSize(ms.opts["size"])
		return ms.volume, size, true
	case g.typ == "qemu" && (qemuDiskKey(key) || indexedKey(key, "unused")):
		ms := parseMount(val)
		if ms.volume == "none" || ms.volume == "cdrom" {
			return "", 0, false
		}
		size, _ = parseSize(ms.opts["size"])
		if strings.Contains(ms.volume, "cloudinit") {
			size = 4 * mib
		}
		return ms.volume, size, true
	}
	return "", 0, false
}

// ensureVolumeFor creates the storage volume a seeded config entry references (and the
// base volume a ZFS linked clone needs).
func (s *Sim) ensureVolumeFor(g *guest, key, val string) {
	volPart, size, ok := seededVolume(g, key, val)
	if !ok {
		return
	}
	store, name, ok := splitVolid(volPart)
	if !ok {
		return
	}
	st := s.storages[store]
	if st == nil {
		return
	}
	if _, exists := s.vols[store][name]; exists {
		return
	}
	content := "images"
	if g.typ == "lxc" {
		content = "rootdir"
	}
	if size == 0 {
		size = 4 * gib
	}
	info, err := parseVolname(st.Type, name)
	if err != nil {
		return
	}
	node := ""
	if !st.Shared {
		node = g.node
	}
	if base := info.baseVol; base != "" && st.Type == "zfspool" {
		if _, ok := s.vols[store][base]; !ok {
			s.vols[store][base] = &volume{Storage: store, Name: base, Node: node, Size: size, Content: content, Format: "raw", Ctime: s.now().Unix()}
		}
	}
	s.vols[store][name] = &volume{Storage: store, Name: name, Node: node, Size: size, Content: content, Format: info.format, Ctime: s.now().Unix()}
}

// startGuest marks a guest running and applies pending changes. Callers hold the write lock.
func (s *Sim) startGuest(g *guest) {
	applyPending(g)
	g.running = true
	g.paused = false
	g.startedAt = s.now()
	s.pidSeq++
	g.pid = 100000 + s.pidSeq
	g.ciGenerated = ciSnapshot(g.conf)
}

func applyPending(g *guest) {
	for _, k := range sortedKeys(g.pending) {
		keepReplacedVolume(g, k, g.pending[k])
		g.conf[k] = g.pending[k]
	}
	for _, k := range sortedKeys(g.pendingDelete) {
		keepReplacedVolume(g, k, "")
		delete(g.conf, k)
	}
	g.pending = map[string]string{}
	g.pendingDelete = map[string]bool{}
}
