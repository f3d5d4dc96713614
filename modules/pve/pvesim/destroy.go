package pvesim

import (
	"strconv"
	"strings"
)

// Guest destroy (DELETE /nodes/{node}/{lxc,qemu}/{vmid}): the guest's own volumes go,
// volumes another guest owns stay, as in pve-container's and qemu-server's destroy.

// destroyVolumes frees the volumes a container destroy removes (§6.2): rootfs, mpN and
// unusedN of the active and pending config, only those whose name says owner == vmid.
// Callers hold the write lock. It returns the first error (the LXC destroy is not
// error-tolerant).
func (s *Sim) destroyVolumes(t *task, vmid int, node string, conf, pending map[string]string, tolerant bool) error {
	seen := map[string]bool{}
	var firstErr error
	walk := func(m map[string]string) error {
		// rootfs, mp0, mp1, ..., then unused0, unused1, ... (foreach_volume order)
		keys := mountKeysInOrder(m)
		keys = append(keys, unusedKeysInOrder(m)...)
		for _, k := range keys {
			ms := parseMount(m[k])
			if ms.kind != "volume" || ms.volume == "none" || ms.volume == "cdrom" || seen[ms.volume] {
				continue
			}
			seen[ms.volume] = true
			owner, err := s.volumeOwner(ms.volume)
			if err != nil {
				if tolerant {
					t.logf("could not parse volume '%s' - %v", ms.volume, err)
					continue
				}
				return err
			}
			if owner != vmid {
				t.logf("ignore deletion of '%s', CT %d isn't the owner!", ms.volume, vmid)
				continue
			}
			if err := s.freeVolume(node, ms.volume); err != nil {
				if tolerant {
					t.logf("could not remove disk '%s', check manually: %v", ms.volume, err)
					continue
				}
				return err
			}
			s.logVolumeRemoved(t, ms.volume)
		}
		return nil
	}
	if err := walk(conf); err != nil {
		firstErr = err
	}
	if firstErr == nil && pending != nil {
		firstErr = walk(pending)
	}
	return firstErr
}

func (s *Sim) logVolumeRemoved(t *task, volid string) {
	store, name, _ := splitVolid(volid)
	if st := s.storages[store]; st != nil && (st.Type == "lvmthin" || st.Type == "lvm") {
		t.logf("  Logical volume \"%s\" successfully removed.", name)
	}
}

// destroyUnreferenced frees every volume named for vmid on the enabled storages with
// the given content (rootdir for containers, images for VMs). Callers hold the write lock.
func (s *Sim) destroyUnreferenced(t *task, vmid int, node, content string) error {
	for _, id := range s.stOrder {
		st := s.storages[id]
		if !st.Enabled || !st.hasContent(content) {
			continue
		}
		for _, name := range sortedKeys(s.vols[id]) {
			v := s.vols[id][name]
			if !(st.Shared || v.Node == "" || v.Node == node) {
				continue
			}
			if v.Content != "images" && v.Content != "rootdir" {
				continue
			}
			info, err := parseVolname(st.Type, name)
			if err != nil || info.owner != vmid {
				continue
			}
			if err := s.freeVolume(node, v.volid()); err != nil {
				return err
			}
			s.logVolumeRemoved(t, v.volid())
		}
	}
	return nil
}

func (s *Sim) hLXCDelete(c *reqCtx) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, err := s.loadGuest(c, "lxc")
	if err != nil {
		return nil, err
	}
	if g.conf["protection"] == "1" {
		return nil, fail500("can't remove CT %d - protection mode enabled", g.vmid)
	}
	if err := checkLock(g); err != nil {
		return nil, err
	}
	purge := c.boolean("purge")
	if s.ha[haSID(g)] != nil && !purge {
		return nil, fail500("unable to remove CT %d - used in HA resources and purge parameter not set.", g.vmid)
	}
	if g.running && !c.boolean("force") {
		return nil, fail500("unable to destroy CT %d - container is running", g.vmid)
	}
	unref := c.boolean("destroy-unreferenced-disks")
	t := s.newTask(c, g.node, "vzdestroy", strconv.Itoa(g.vmid))
	if g.running {
		g.running = false
		g.pid = 0
		t.warnf("forced to stop CT %d before destroying!", g.vmid)
	}
	// the worker starts at once: volumes are freed, then a stub config with lock destroyed
	// is written; the config is removed when the task ends.
	if err := s.destroyVolumes(t, g.vmid, g.node, g.conf, g.pending, false); err != nil {
		t.finish = func(*task) error { return err }
		return t.upid, nil
	}
	if unref {
		if err := s.destroyUnreferenced(t, g.vmid, g.node, "rootdir"); err != nil {
			t.finish = func(*task) error { return err }
			return t.upid, nil
		}
	}
	g.conf = map[string]string{"lock": "destroyed"}
	g.pending = map[string]string{}
	g.pendingDelete = map[string]bool{}
	g.lxcRaw = nil
	g.snaps = nil
	g.firewall = map[string]string{}
	g.ipsets = map[string]*ipset{}
	if purge {
		t.logf("purging CT %d from related configurations..", g.vmid)
		if s.ha[haSID(g)] != nil {
			delete(s.ha, haSID(g))
			t.logf("NOTE: removed CT %d from HA resource configuration.", g.vmid)
		}
	}
	t.finish = func(*task) error {
		s.removeGuest(g)
		return nil
	}
	return t.upid, nil
}

func (s *Sim) hQemuDelete(c *reqCtx) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, err := s.loadGuest(c, "qemu")
	if err != nil {
		return nil, err
	}
	if err := checkSkiplock(c); err != nil {
		return nil, err
	}
	if err := checkLock(g, "suspended"); err != nil {
		return nil, err
	}
	if g.conf["protection"] == "1" {
		return nil, fail500("can't remove VM %d - protection mode enabled", g.vmid)
	}
	purge := c.boolean("purge")
	if s.ha[haSID(g)] != nil && !purge {
		return nil, fail500("unable to remove VM %d - used in HA resources and purge parameter not set.", g.vmid)
	}
	if g.running {
		return nil, fail500("VM %d is running - destroy failed", g.vmid)
	}
	unref := c.boolean("destroy-unreferenced-disks")
	t := s.newTask(c, g.node, "qmdestroy", strconv.Itoa(g.vmid))
	t.finish = func(t *task) error {
		s.destroyQemuVolumes(t, g)
		if unref {
			if err := s.destroyUnreferenced(t, g.vmid, g.node, "images"); err != nil {
				t.warnf("%v", err)
			}
		}
		if purge {
			delete(s.ha, haSID(g))
		}
		s.removeGuest(g)
		return nil
	}
	return t.upid, nil
}

// destroyQemuVolumes frees the VM's owned drives and unused volumes; failures are
// warnings, as in qemu-server's destroy_vm. Callers hold the write lock.
func (s *Sim) destroyQemuVolumes(t *task, g *guest) {
	seen := map[string]bool{}
	for _, m := range []map[string]string{g.conf, g.pending} {
		for _, k := range sortedKeys(m) {
			if !qemuDiskKey(k) && !indexedKey(k, "unused") {
				continue
			}
			ms := parseMount(m[k])
			if ms.volume == "none" || ms.volume == "cdrom" || strings.HasPrefix(ms.volume, "/") || seen[ms.volume] {
				continue
			}
			if ms.opts["media"] == "cdrom" && !isCloudInitVol(ms) {
				continue
			}
			seen[ms.volume] = true
			owner, err := s.volumeOwner(ms.volume)
			if err != nil || owner != g.vmid {
				continue
			}
			if err := s.freeVolume(g.node, ms.volume); err != nil {
				t.warnf("Could not remove disk '%s', check manually: %v", ms.volume, err)
				continue
			}
			s.logVolumeRemoved(t, ms.volume)
		}
	}
}
