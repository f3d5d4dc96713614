package pvesim

import (
	"fmt"
	"strings"
)

// VM config changes (PUT and POST /nodes/{node}/qemu/{vmid}/config), after
// qemu-server's API2/Qemu.pm update_vm_api: checked, then applied at once or, for a
// running VM and a key it cannot take live, kept as pending.

// qemuConfigSkip are request parameters of a VM config change that are not config keys.
var qemuConfigSkip = map[string]bool{
	"node": true, "vmid": true, "delete": true, "revert": true, "digest": true,
	"skiplock": true, "force": true, "background_delay": true,
}

func (s *Sim) updateQemuConfig(c *reqCtx, g *guest) error {
	if err := checkSkiplock(c); err != nil {
		return err
	}
	if err := checkLock(g); err != nil {
		return err
	}
	if err := checkDigest(c, g); err != nil {
		return err
	}
	cc := configChange{sets: map[string]string{}, deletes: parseDeleteList(c.str("delete")),
		reverts: parseDeleteList(c.str("revert"))}
	for k := range c.params {
		if !qemuConfigSkip[k] {
			cc.sets[k] = c.str(k)
		}
	}
	for _, k := range cc.deletes {
		if _, both := cc.sets[k]; both {
			return paramErr(map[string]string{"delete": fmt.Sprintf("you can't use '-%s' and -delete %s' at the same time", k, k)})
		}
		if (qemuDiskKey(k) || indexedKey(k, "unused")) && g.conf["protection"] == "1" {
			return fail500("can't remove drive '%s' - protection mode enabled", k)
		}
	}
	for _, k := range cc.reverts {
		delete(g.pending, k)
		delete(g.pendingDelete, k)
	}
	if err := s.applyQemuSets(g, cc); err != nil {
		return err
	}
	return s.applyQemuDeletes(g, cc)
}

// applyQemuSets writes each key, or keeps it pending when the running VM cannot take it
// live; a new disk is allocated first.
func (s *Sim) applyQemuSets(g *guest, cc configChange) error {
	var allocated []string
	for _, k := range sortedKeys(cc.sets) {
		if err := checkQemuSet(g, k); err != nil {
			return err // what was allocated for earlier keys stays, as it always has
		}
		v, vols, err := s.qemuConfigValue(g, k, cc.sets[k])
		allocated = append(allocated, vols...)
		if err != nil {
			for _, a := range allocated {
				_ = s.freeVolume(g.node, a)
			}
			return err
		}
		live := !g.running || qemuFastPlug(k) || cloudInitOption(k) || indexedKey(k, "net") || (qemuDiskKey(k) && g.conf[k] == "")
		if !live {
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

// checkQemuSet refuses setting an unused volume or changing a protected drive.
func checkQemuSet(g *guest, k string) error {
	if indexedKey(k, "unused") {
		return paramErr(map[string]string{k: "unable to set unused volume through the API"})
	}
	if qemuDiskKey(k) && g.conf["protection"] == "1" {
		if _, exists := g.conf[k]; exists {
			return fail500("can't update drive '%s' - protection mode enabled", k)
		}
	}
	return nil
}

// qemuConfigValue is the value stored for a key set through the API, with the volumes a
// new disk allocated.
func (s *Sim) qemuConfigValue(g *guest, k, v string) (string, []string, error) {
	switch {
	case qemuDiskKey(k):
		return s.prepareQemuDisk(g, k, v)
	case indexedKey(k, "net"):
		return s.qemuNetWithMAC(g.vmid, v), nil, nil
	case k == "cipassword":
		return hashPassword(g.vmid, v), nil, nil
	case k == "tags":
		return normalizeTags(v), nil, nil
	}
	return v, nil, nil
}

// applyQemuDeletes drops each key, or marks it for deletion when the running VM cannot
// drop it live.
func (s *Sim) applyQemuDeletes(g *guest, cc configChange) error {
	for _, k := range cc.deletes {
		if g.running && !qemuFastPlug(k) && !cloudInitOption(k) && !indexedKey(k, "net") && !indexedKey(k, "unused") {
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
		if err := s.deleteQemuKey(g, k, old); err != nil {
			return err
		}
	}
	return nil
}

// deleteQemuKey drops one key of the active config: a deleted disk becomes unused (its
// cloud-init volume is freed), a deleted unused volume of this VM is freed.
func (s *Sim) deleteQemuKey(g *guest, k, old string) error {
	delete(g.conf, k)
	switch {
	case qemuDiskKey(k):
		ms := parseMount(old)
		if isCloudInitVol(ms) {
			if owner, err := s.volumeOwner(ms.volume); err == nil && owner == g.vmid {
				_ = s.freeVolume(g.node, ms.volume)
			}
			return nil
		}
		if ms.opts["media"] != "cdrom" && ms.volume != "none" && !strings.HasPrefix(ms.volume, "/") {
			g.conf[k] = old
			keepReplacedVolume(g, k, "")
			delete(g.conf, k)
		}
	case indexedKey(k, "unused"):
		if owner, err := s.volumeOwner(old); err == nil && owner == g.vmid {
			if err := s.freeVolume(g.node, old); err != nil {
				g.conf[k] = old
				return fail500("%v", err)
			}
		}
	}
	return nil
}
