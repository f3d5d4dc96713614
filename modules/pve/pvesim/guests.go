package pvesim

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

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

// lookupVolume finds a volume that can be used from a node. Callers hold s.mu.
func (s *Sim) lookupVolume(node, volid string) (*storage, *volume, error) {
	store, name, ok := splitVolid(volid)
	if !ok {
		return nil, nil, fmt.Errorf("unable to parse volume ID '%s'", volid)
	}
	st := s.storages[store]
	if st == nil {
		return nil, nil, fmt.Errorf("storage '%s' does not exist", store)
	}
	v := s.vols[store][name]
	if v == nil || !(st.Shared || v.Node == "" || v.Node == node) {
		return st, nil, fmt.Errorf("volume '%s' does not exist", volid)
	}
	return st, v, nil
}

// allocVolume allocates a new volume named for vmid. Callers hold the write lock.
func (s *Sim) allocVolume(st *storage, node string, vmid int, forCT bool, size int64, format string) *volume {
	names := make([]string, 0, len(s.vols[st.ID]))
	for n := range s.vols[st.ID] {
		names = append(names, n)
	}
	name, fmtName := newVolumeName(st, names, vmid, forCT, size == 0, format)
	content := "images"
	if forCT {
		content = "rootdir"
	}
	vnode := ""
	if !st.Shared {
		vnode = node
	}
	v := &volume{Storage: st.ID, Name: name, Node: vnode, Size: size, Content: content, Format: fmtName, Ctime: s.now().Unix()}
	s.vols[st.ID][name] = v
	return v
}

// freeVolume removes a volume. Callers hold the write lock.
func (s *Sim) freeVolume(node, volid string) error {
	st, v, err := s.lookupVolume(node, volid)
	if err != nil {
		if st != nil {
			switch st.Type {
			case "lvmthin", "lvm":
				_, name, _ := splitVolid(volid)
				return fmt.Errorf("lvremove 'pve/%s' error:   Failed to find logical volume \"pve/%s\"", name, name)
			}
		}
		return err
	}
	if v.Protected {
		return fmt.Errorf("volume '%s' is protected", volid)
	}
	if info, err := parseVolname(st.Type, v.Name); err == nil && info.isBase {
		for _, other := range s.vols[st.ID] {
			oi, err := parseVolname(st.Type, other.Name)
			if err == nil && oi.baseVol == v.Name {
				return fmt.Errorf("base volume '%s' is still in use by linked cloned", volid)
			}
		}
	}
	delete(s.vols[st.ID], v.Name)
	return nil
}

// volumeOwner returns the owner vmid parsed from a volume id (0 = none).
func (s *Sim) volumeOwner(volid string) (int, error) {
	store, name, ok := splitVolid(volid)
	if !ok {
		return 0, fmt.Errorf("unable to parse volume ID '%s'", volid)
	}
	st := s.storages[store]
	if st == nil {
		return 0, fmt.Errorf("storage '%s' does not exist", store)
	}
	info, err := parseVolname(st.Type, name)
	if err != nil {
		return 0, err
	}
	return info.owner, nil
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

// haTask submits an HA request instead of acting, for HA-managed guests (container or VM): the
// task ends when the request is queued and the guest's state follows. Callers hold the write
// lock. It reports false when the guest is not HA-managed.
func (s *Sim) haTask(c *reqCtx, container bool, vmid int, start bool) (string, bool) {
	prefix, noun := "vm:", "VM"
	if container {
		prefix, noun = "ct:", "CT"
	}
	r := s.ha[prefix+strconv.Itoa(vmid)]
	if r == nil {
		return "", false
	}
	typ, state, word := "hastop", "stopped", "stop"
	if start {
		typ, state, word = "hastart", "started", "start"
	}
	node := c.node
	t := s.newTask(c, node, typ, strconv.Itoa(vmid))
	t.logf("Requesting HA %s for %s %d", word, noun, vmid)
	t.finish = func(*task) error {
		r.State = state
		if g := s.guests[vmid]; g != nil && g.node == node {
			if start && !g.running {
				s.startGuest(g)
			} else if !start && g.running {
				g.running, g.paused, g.pid = false, false, 0
			}
		}
		return nil
	}
	return t.upid, true
}
