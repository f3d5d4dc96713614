package pvesim

import (
	"fmt"
	"strconv"
)

// VM restore (POST /nodes/{node}/qemu with archive=, the API of qmrestore), after
// qemu-server's API2/Qemu.pm create_vm and QemuServer.pm restore_*_archive: drives may not
// be passed beside the archive; with force=1 a stopped, unprotected VM of this node is
// overwritten; the qmrestore task destroys its drives first, then allocates the archive's
// drives on the storage asked for at their archived sizes and writes the archive's config
// with every other passed option overriding it. The archive's firewall file replaces the
// VM's. Only restores are simulated: a create without archive= is refused.

// qemuCreateOnly are the parameters of a VM create that are no config keys.
var qemuCreateOnly = map[string]bool{"vmid": true, "archive": true, "force": true, "storage": true, "unique": true,
	"pool": true, "bwlimit": true, "live-restore": true, "start": true}

func (s *Sim) hQemuCreate(c *reqCtx) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	vmid, archive := c.integer("vmid"), c.str("archive")
	if archive == "" {
		return nil, fail500("simulator: creating a VM without archive= is not simulated")
	}
	for k := range c.params {
		if qemuDiskKey(k) {
			return nil, paramErr(map[string]string{k: "option conflicts with option 'archive'"})
		}
	}
	if err := s.checkVolumeAccess(archive, "backup"); err != nil {
		return nil, err
	}
	bs, bn, _ := splitVolid(archive)
	bv := s.vols[bs][bn]
	if bv == nil || bv.Config == nil {
		return nil, fail500("unable to restore VM %d - can't find archive '%s'", vmid, archive)
	}
	old := s.guests[vmid]
	if old == nil {
		if err := s.checkVMIDUnused(vmid); err != nil {
			return nil, err
		}
	} else if err := checkQemuOverwrite(c, old, vmid); err != nil {
		return nil, err
	}
	st := s.storages[c.str("storage")]
	if c.has("storage") && (st == nil || !st.hasContent("images")) {
		return nil, fail500("storage '%s' does not support vm images", c.str("storage"))
	}
	return s.startQemuRestore(c, old, vmid, bv, st), nil
}

// checkQemuOverwrite allows a restore over old only with force=1, on its node, stopped and
// unprotected.
func checkQemuOverwrite(c *reqCtx, old *guest, vmid int) error {
	switch {
	case !c.boolean("force") || old.typ != "qemu" || old.node != c.node:
		return fail500("unable to restore VM %d - VM %d already exists on node '%s'", vmid, vmid, old.node)
	case old.running:
		return fail500("unable to restore VM %d - VM is running", vmid)
	case old.conf["protection"] == "1":
		return fail500("unable to restore VM %d - protection mode enabled", vmid)
	}
	return checkLock(old)
}

// startQemuRestore locks the vmid and starts the qmrestore task.
func (s *Sim) startQemuRestore(c *reqCtx, old *guest, vmid int, bv *volume, st *storage) string {
	g := old
	var oldConf map[string]string
	if g == nil {
		g = &guest{vmid: vmid, typ: "qemu", node: c.node, pending: map[string]string{}, pendingDelete: map[string]bool{},
			firewall: map[string]string{}, ipsets: map[string]*ipset{}}
		s.addGuest(g)
	} else {
		oldConf = copyMap(g.conf)
	}
	g.conf = map[string]string{"lock": "create"}
	g.pending, g.pendingDelete = map[string]string{}, map[string]bool{}
	t := s.newTask(c, c.node, "qmrestore", strconv.Itoa(vmid))
	var allocated []string
	t.finish = func(t *task) error {
		var err error
		allocated, err = s.finishQemuRestore(t, c, g, oldConf, bv, st)
		if err != nil {
			return fmt.Errorf("unable to restore VM %d - %w", vmid, err)
		}
		return nil
	}
	t.rollback = func(*task) {
		for _, v := range allocated {
			_ = s.freeVolume(c.node, v)
		}
		s.removeGuest(g)
	}
	return t.upid
}

// finishQemuRestore destroys the old VM's drives, then (unless a fault stops it there)
// allocates the archive's drives and writes the config. It returns the volumes it allocated.
func (s *Sim) finishQemuRestore(t *task, c *reqCtx, g *guest, oldConf map[string]string, bv *volume, st *storage) ([]string, error) {
	if oldConf != nil {
		s.destroyQemuVolumes(t, &guest{vmid: g.vmid, node: g.node, conf: oldConf, pending: map[string]string{}})
	}
	if t.unpackFail != "" {
		return nil, fmt.Errorf("%s", t.unpackFail)
	}
	t.logf("restore vma archive: zstd -q -d -c %s", bv.volid())
	conf := map[string]string{}
	var allocated []string
	for _, k := range sortedKeys(bv.Config) {
		v := bv.Config[k]
		if k == "lock" || indexedKey(k, "unused") || k == "parent" {
			continue
		}
		if qemuDiskKey(k) {
			nv, vol, err := s.restoreDrive(g, st, v)
			if err != nil {
				return allocated, err
			}
			if vol != "" {
				allocated = append(allocated, vol)
			}
			v = nv
		}
		conf[k] = v
	}
	for k := range c.params {
		if !qemuCreateOnly[k] {
			conf[k] = c.str(k)
		}
	}
	if bv.Firewall != nil {
		g.firewall = copyMap(bv.Firewall) // the archive's firewall file replaces the VM's
	}
	g.conf = conf
	return allocated, nil
}

// restoreDrive allocates one archived drive anew for g at its archived size, on st or on the
// drive's own storage; CD drives come back as they were.
func (s *Sim) restoreDrive(g *guest, st *storage, v string) (string, string, error) {
	ms := parseMount(v)
	store, _, ok := splitVolid(ms.volume)
	if !ok || ms.opts["media"] == "cdrom" && !isCloudInitVol(ms) {
		return v, "", nil
	}
	dst := st
	if dst == nil {
		dst = s.storages[store]
	}
	if dst == nil {
		return "", "", fmt.Errorf("storage '%s' does not exist", store)
	}
	size, _ := parseSize(ms.opts["size"])
	nv := s.allocVolume(dst, g.node, g.vmid, false, size, "")
	ms.volume = nv.volid()
	return qemuDriveString(ms), nv.volid(), nil
}
