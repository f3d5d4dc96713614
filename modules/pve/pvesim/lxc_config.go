package pvesim

import "fmt"

// Container config changes (PUT /nodes/{node}/lxc/{vmid}/config), after pve-container's
// API2/LXC/Config.pm update_vm: checked in steps, then applied at once or, for a running
// container and a key it cannot take live, kept as pending.

// configChange is one PUT of a guest config: the keys set, deleted and reverted.
type configChange struct {
	sets             map[string]string
	deletes, reverts []string
}

// readConfigChange collects the request's changes; an empty request is refused.
func readConfigChange(c *reqCtx) (configChange, error) {
	cc := configChange{sets: map[string]string{}, deletes: parseDeleteList(c.str("delete")),
		reverts: parseDeleteList(c.str("revert"))}
	for k := range c.params {
		switch k {
		case "node", "vmid", "delete", "revert", "digest":
			continue
		}
		cc.sets[k] = c.str(k)
	}
	if len(cc.sets) == 0 && !c.has("delete") && !c.has("revert") {
		return cc, fail500("no options specified")
	}
	return cc, nil
}

// checkKeys refuses unknown keys in delete and revert and a key named twice.
func (cc configChange) checkKeys(cs *schemaMethod) error {
	for _, k := range cc.reverts {
		if cs.paramFor(k) == nil {
			return paramErr(map[string]string{"revert": fmt.Sprintf("unknown option '%s'", k)})
		}
		if _, both := cc.sets[k]; both {
			return paramErr(map[string]string{"revert": fmt.Sprintf("you can't use '-%s' and '-revert %s' at the same time", k, k)})
		}
	}
	for _, k := range cc.deletes {
		if cs.paramFor(k) == nil {
			return paramErr(map[string]string{"delete": fmt.Sprintf("unknown option '%s'", k)})
		}
		if _, both := cc.sets[k]; both {
			return paramErr(map[string]string{"delete": fmt.Sprintf("you can't use '-%s' and -delete %s' at the same time", k, k)})
		}
		for _, r := range cc.reverts {
			if r == k {
				return paramErr(map[string]string{"delete": fmt.Sprintf("you can't use '-delete %s' and '-revert %s' at the same time", k, k)})
			}
		}
	}
	return nil
}

func (s *Sim) hLXCConfigPut(c *reqCtx) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, err := s.loadGuest(c, "lxc")
	if err != nil {
		return nil, err
	}
	if err := checkLock(g); err != nil {
		return nil, err
	}
	if err := checkDigest(c, g); err != nil {
		return nil, err
	}
	cc, err := readConfigChange(c)
	if err != nil {
		return nil, err
	}
	for _, check := range []func(*guest) error{
		func(*guest) error { return cc.checkKeys(s.configSchema("lxc")) },
		cc.checkLXCDeletes, cc.checkLXCSets,
	} {
		if err := check(g); err != nil {
			return nil, err
		}
	}
	for _, k := range cc.reverts {
		delete(g.pending, k)
		delete(g.pendingDelete, k)
	}
	if err := s.checkLXCNewDisks(cc); err != nil {
		return nil, err
	}
	if err := s.applyLXCSets(g, cc); err != nil {
		return nil, err
	}
	return nil, s.applyLXCDeletes(g, cc)
}

// checkLXCDeletes refuses deleting a required or read-only key, or a protected drive.
func (cc configChange) checkLXCDeletes(g *guest) error {
	for _, k := range cc.deletes {
		_, inConf := g.conf[k]
		_, inPending := g.pending[k]
		if !inConf && !inPending {
			continue // only a warning in Proxmox's log
		}
		switch k {
		case "memory", "rootfs", "ostype":
			return fail500("unable to delete required option '%s'", k)
		case "unprivileged":
			return fail500("unable to delete read-only option: 'unprivileged'")
		}
		if (indexedKey(k, "mp") || indexedKey(k, "unused")) && g.conf["protection"] == "1" {
			return fail500("can't remove CT %d drive '%s' - protection mode enabled", g.vmid, k)
		}
	}
	return nil
}

// checkLXCSets refuses read-only and unused keys, what the token may not set, and a
// change of a protected drive.
func (cc configChange) checkLXCSets(g *guest) error {
	unpriv := g.conf["unprivileged"] == "1"
	for _, k := range sortedKeys(cc.sets) {
		v := cc.sets[k]
		if k == "unprivileged" {
			return fail500("unable to modify read-only option: 'unprivileged'")
		}
		if indexedKey(k, "unused") {
			return paramErr(map[string]string{k: "unable to set unused volume through the API"})
		}
		if err := checkCTModifyPerm(k, v, unpriv); err != nil {
			return err
		}
		if isMountKey(k) && g.conf["protection"] == "1" {
			if _, exists := g.conf[k]; exists {
				return fail500("can't update CT %d drive '%s' - protection mode enabled", g.vmid, k)
			}
		}
	}
	return nil
}

// checkLXCNewDisks refuses a new mount point on a storage without container directories.
func (s *Sim) checkLXCNewDisks(cc configChange) error {
	for _, k := range sortedKeys(cc.sets) {
		if !isMountKey(k) {
			continue
		}
		if m := reNewDisk.FindStringSubmatch(parseMount(cc.sets[k]).volume); m != nil {
			if st := s.storages[m[1]]; st != nil && !st.hasContent("rootdir") {
				return fail500("storage '%s' does not allow content type 'rootdir' (Container)", m[1])
			}
		}
	}
	return nil
}

// applyLXCSets allocates new mount points and writes each key, or keeps it pending
// when the running container cannot take it live.
func (s *Sim) applyLXCSets(g *guest, cc configChange) error {
	var allocated []string
	for _, k := range sortedKeys(cc.sets) {
		v := cc.sets[k]
		if isMountKey(k) {
			nv, vols, err := s.prepareMount(g.node, g.vmid, k, v)
			allocated = append(allocated, vols...)
			if err != nil {
				for _, a := range allocated {
					_ = s.freeVolume(g.node, a)
				}
				return err
			}
			v = nv
		}
		if indexedKey(k, "net") {
			v = s.normalizeLXCNet(g.vmid, v)
		}
		if k == "tags" {
			v = normalizeTags(v)
		}
		_, exists := g.conf[k]
		if g.running && !lxcHotplug(k, exists) {
			g.pending[k] = v
			delete(g.pendingDelete, k)
			continue
		}
		keepReplacedVolume(g, k, v)
		g.conf[k] = v
		delete(g.pending, k)
	}
	return nil
}

// applyLXCDeletes drops each key, or marks it for deletion when the running container
// cannot drop it live; a deleted mount point becomes unused, a deleted unused volume
// of this container is freed.
func (s *Sim) applyLXCDeletes(g *guest, cc configChange) error {
	for _, k := range cc.deletes {
		if g.running && !lxcHotDelete(k) {
			if _, ok := g.conf[k]; ok {
				g.pendingDelete[k] = true
			}
			delete(g.pending, k)
			continue
		}
		old, ok := g.conf[k]
		delete(g.pending, k)
		if !ok {
			continue
		}
		switch {
		case indexedKey(k, "mp"):
			keepReplacedVolume(g, k, "")
		case indexedKey(k, "unused"):
			if err := s.freeOwnedVolume(g, old); err != nil {
				return err
			}
		}
		delete(g.conf, k)
	}
	return nil
}

// freeOwnedVolume frees a volume if it belongs to g.
func (s *Sim) freeOwnedVolume(g *guest, volid string) error {
	owner, err := s.volumeOwner(volid)
	if err != nil {
		return fail500("%v", err)
	}
	if owner != g.vmid {
		return nil
	}
	if err := s.freeVolume(g.node, volid); err != nil {
		return fail500("%v", err)
	}
	return nil
}
