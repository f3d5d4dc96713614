package pvesim

import (
	"sort"
	"strconv"
	"strings"
)

// Migration (POST /nodes/{node}/{qemu|lxc}/{vmid}/migrate and the VM's precondition read,
// GET /nodes/{node}/qemu/{vmid}/migrate), after qemu-server's API2/Qemu.pm migrate_vm and
// QemuMigrate.pm, and pve-container's API2/LXC.pm migrate_vm and LXC/Migrate.pm: the call is
// checked synchronously, a qmigrate or vzmigrate task on the source node copies the local
// volumes, and the config moves to the target, where every later call must address it.

// migration is one migrate request while it is checked and run.
type migration struct {
	s       *Sim
	c       *reqCtx
	g       *guest
	target  string
	restart bool // a running container stopped here and started on the target
}

func (s *Sim) hQemuMigrate(c *reqCtx) (any, error) { return s.migrate(c, "qemu") }

func (s *Sim) hLXCMigrate(c *reqCtx) (any, error) { return s.migrate(c, "lxc") }

func (s *Sim) migrate(c *reqCtx, typ string) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, err := s.loadGuest(c, typ)
	if err != nil {
		return nil, err
	}
	m := &migration{s: s, c: c, g: g, target: c.str("target")}
	if err := m.check(); err != nil {
		return nil, err
	}
	return m.startTask(), nil
}

// check refuses what Proxmox refuses before it forks the worker.
func (m *migration) check() error {
	s, c, g := m.s, m.c, m.g
	switch {
	case m.target == c.node:
		return paramErr(map[string]string{"target": "target is local node."})
	case s.nodes[m.target] == nil:
		return paramErr(map[string]string{"target": "no such cluster node '" + m.target + "'"})
	}
	if err := checkLock(g); err != nil {
		return err
	}
	if !g.running {
		return nil
	}
	if g.typ == "qemu" && !c.boolean("online") {
		return fail500("can't migrate running VM without --online")
	}
	if g.typ == "lxc" {
		if !c.boolean("restart") && !c.boolean("online") {
			return fail500("can't migrate running container without --online or --restart")
		}
		m.restart = c.boolean("restart")
	}
	return nil
}

// startTask locks the guest for the task; the config moves when the task finishes.
func (m *migration) startTask() string {
	s, c, g := m.s, m.c, m.g
	typ := "qmigrate"
	if g.typ == "lxc" {
		typ = "vzmigrate"
	}
	t := s.newTask(c, c.node, typ, strconv.Itoa(g.vmid))
	g.conf["lock"] = "migrate"
	source := c.node
	unlock := func() {
		if g.conf["lock"] == "migrate" {
			delete(g.conf, "lock")
		}
	}
	t.finish = func(t *task) error {
		defer unlock()
		return m.run(t, source)
	}
	// An aborted migration (an injected task failure included) removes its lock on the source.
	t.rollback = func(*task) { unlock() }
	return t.upid
}

// run is the task: the blockers Proxmox finds while it prepares, then the copy of the local
// volumes and the move of the config. A failed migration leaves the guest on the source,
// running again if it ran.
func (m *migration) run(t *task, source string) error {
	s, g := m.s, m.g
	if g.node != source {
		return pveErrorf("Configuration file 'nodes/%s/%s/%d.conf' does not exist", source, confDir(g.typ), g.vmid)
	}
	if g.typ == "lxc" && g.running && !m.restart {
		return pveErrorf("lxc live migration is currently not implemented")
	}
	if blockers := m.localDevices(); len(blockers) > 0 {
		return pveErrorf("can't migrate VM which uses local devices: %s", strings.Join(blockers, ", "))
	}
	local := s.localDisks(g)
	for _, d := range local {
		switch {
		case d.cdrom:
			t.logf("can't migrate local disk '%s': local cdrom image", d.volid)
		case len(g.snaps) > 0 && !snapshotsMove(s.storages[d.vol.Storage]):
			t.logf("can't migrate local disk '%s': non-migratable snapshot exists", d.volid)
		default:
			continue
		}
		if g.typ == "lxc" {
			return pveErrorf("migration aborted")
		}
		return pveErrorf("can't migrate VM - check log")
	}
	if g.typ == "qemu" && g.running && len(local) > 0 && !m.c.boolean("with-local-disks") {
		return pveErrorf("can't live migrate attached local disks without with-local-disks option")
	}
	if m.restart {
		t.logf("shutdown CT %d", g.vmid)
	}
	for _, d := range local {
		t.logf("copying local disk '%s' to node '%s'", d.volid, m.target)
		d.vol.Node = m.target
	}
	s.moveGuest(g, m.target)
	if m.restart {
		t.logf("start container on target node")
	}
	return nil
}

// snapshotsMove reports whether a local storage's snapshots travel with a migration: only ZFS and
// btrfs ones (and qcow2 files, which the simulator's storages do not hold) do.
func snapshotsMove(st *storage) bool {
	return st != nil && (st.Type == "zfspool" || st.Type == "btrfs")
}

// localDevices are the config keys that tie a VM to its node (hostpciN, usbN other than
// spice, serialN other than socket, parallelN, ivshmem).
func (m *migration) localDevices() []string {
	var out []string
	for _, k := range sortedKeys(m.g.conf) {
		v := m.g.conf[k]
		switch {
		case indexedKey(k, "hostpci"), indexedKey(k, "parallel"), k == "ivshmem":
			out = append(out, k)
		case indexedKey(k, "usb") && !strings.Contains(v, "spice"):
			out = append(out, k)
		case indexedKey(k, "serial") && v != "socket":
			out = append(out, k)
		}
	}
	return out
}

// localDisk is a volume of a guest on storage that is not shared.
type localDisk struct {
	key, volid string
	vol        *volume
	cdrom      bool
	cloudinit  bool
}

// localDisks lists the guest's volumes on non-shared storage: its disks or mount points,
// its unused volumes, ISOs in a CD-ROM drive and the cloud-init drive. Callers hold s.mu.
func (s *Sim) localDisks(g *guest) []localDisk {
	var out []localDisk
	for _, k := range sortedKeys(g.conf) {
		if !qemuDiskKey(k) && !isMountKey(k) && !indexedKey(k, "unused") {
			continue
		}
		ms := parseMount(g.conf[k])
		st, v, err := s.lookupVolume(g.node, ms.volume)
		if err != nil || st.Shared {
			continue
		}
		out = append(out, localDisk{key: k, volid: ms.volume, vol: v,
			cdrom: ms.opts["media"] == "cdrom" && !isCloudInitVol(ms), cloudinit: isCloudInitVol(ms)})
	}
	return out
}

// moveGuest renames the guest's config to the target node. Callers hold the write lock.
func (s *Sim) moveGuest(g *guest, target string) {
	if m := s.byNode[g.node]; m != nil && m[g.vmid] == g {
		delete(m, g.vmid)
	}
	g.node = target
	if s.byNode[target] == nil {
		s.byNode[target] = map[int]*guest{}
	}
	s.byNode[target][g.vmid] = g
}

// hQemuMigratePrecondition answers GET /nodes/{node}/qemu/{vmid}/migrate: running, the nodes
// allowed, the local disks and the local resources.
func (s *Sim) hQemuMigratePrecondition(c *reqCtx) (any, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	g, err := s.loadGuest(c, "qemu")
	if err != nil {
		return nil, err
	}
	if err := checkLock(g); err != nil {
		return nil, err
	}
	allowed := []string{}
	for n := range s.nodes {
		if n != c.node {
			allowed = append(allowed, n)
		}
	}
	sort.Strings(allowed)
	disks := []map[string]any{}
	for _, d := range s.localDisks(g) {
		disks = append(disks, map[string]any{"volid": d.volid, "size": d.vol.Size, "drivename": d.key,
			"cdrom": boolInt(d.cdrom), "is_cloudinit": boolInt(d.cloudinit), "is_attached": boolInt(!indexedKey(d.key, "unused")),
			"is_unused": boolInt(indexedKey(d.key, "unused")), "shared": 0})
	}
	m := &migration{s: s, c: c, g: g}
	res := m.localDevices()
	if res == nil {
		res = []string{}
	}
	return map[string]any{"running": boolInt(g.running), "allowed_nodes": allowed, "not_allowed_nodes": map[string]any{},
		"local_disks": disks, "local_resources": res, "mapped-resources": []string{}, "has-dbus-vmstate": 1}, nil
}

func confDir(typ string) string {
	if typ == "qemu" {
		return "qemu-server"
	}
	return "lxc"
}
