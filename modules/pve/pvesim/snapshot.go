package pvesim

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Guest snapshots (/nodes/{node}/{lxc,qemu}/{vmid}/snapshot), after guest-common's
// PVE/AbstractConfig.pm (snapshot_prepare, snapshot_commit, snapshot_delete,
// snapshot_rollback), pve-container's src/PVE/API2/LXC/Snapshot.pm and qemu-server's
// PVE/API2/Qemu.pm (docs/proxmox.md §15):
//
//   - a snapshot is a `[name]` section of the guest config holding a copy of the config as it
//     was, with snaptime, description and parent; the current config's `parent` names the
//     newest snapshot it descends from. The sections are part of the config, so the digest
//     covers them;
//   - create, delete and rollback are tasks (vzsnapshot, vzdelsnapshot, vzrollback for a
//     container; qmsnapshot, qmdelsnapshot, qmrollback for a VM) whose worker checks the lock
//     and the snapshot itself, so those refusals fail the task, not the request. While it runs
//     the guest holds the lock `snapshot`, `snapshot-delete` or `rollback`; a failed create
//     removes its half-made section and the lock, a failed delete or rollback leaves its lock
//     (Proxmox needs an unlock then);
//   - "current" and "pending" are reserved names, refused before any task;
//   - a snapshot needs every volume of the guest on a storage that can snapshot it
//     (volume_has_feature 'snapshot'): LVM-thin, ZFS, Ceph RBD and btrfs can, a directory
//     storage only for qcow2 files, thick LVM and iSCSI not at all; a bind or device mount of a
//     container prevents it. The worker dies with "snapshot feature is not available";
//   - a rollback stops the guest first and starts it again only with start=1 (there is no RAM
//     state here); ZFS rolls back only to its most recent snapshot;
//   - a destroyed guest takes its snapshots with it: freeing a volume frees its snapshots
//     (LvmThinPlugin removes the snap_ volumes, ZFS destroys recursively, RBD purges), and the
//     config with its sections goes.

// snapStateKey marks a snapshot whose create or delete has not finished.
const snapStateKey = "snapstate"

func snapTaskType(typ, op string) string {
	if typ == "lxc" {
		return map[string]string{"create": "vzsnapshot", "delete": "vzdelsnapshot", "rollback": "vzrollback"}[op]
	}
	return map[string]string{"create": "qmsnapshot", "delete": "qmdelsnapshot", "rollback": "qmrollback"}[op]
}

// hSnapshotList answers GET …/snapshot: every snapshot, in no particular order (Proxmox walks
// a hash), then the "current" pseudo-entry.
func hSnapshotList(typ string) route {
	return func(s *Sim, c *reqCtx) (any, error) {
		return s.readGuest(c, typ, func(g *guest) any {
			out := []map[string]any{}
			for _, name := range sortedKeys(g.snapshotNames()) {
				sn := g.snaps[name]
				e := map[string]any{"name": name, "description": sn["description"]}
				if t, err := strconv.ParseInt(sn["snaptime"], 10, 64); err == nil {
					e["snaptime"] = t
				}
				if p := sn["parent"]; p != "" {
					e["parent"] = p
				}
				out = append(out, e)
			}
			cur := map[string]any{"name": "current", "description": "You are here!", "running": boolInt(g.running),
				"digest": configDigest(g)}
			if p := g.conf["parent"]; p != "" {
				cur["parent"] = p
			}
			return append(out, cur)
		})
	}
}

// hSnapshotConfig answers GET …/snapshot/{snapname}/config: the section's keys.
func hSnapshotConfig(typ string) route {
	return func(s *Sim, c *reqCtx) (any, error) {
		s.mu.RLock()
		defer s.mu.RUnlock()
		g, err := s.loadGuest(c, typ)
		if err != nil {
			return nil, err
		}
		sn := g.snaps[c.str("snapname")]
		if sn == nil {
			return nil, fail500("snapshot '%s' does not exist", c.str("snapname"))
		}
		out := map[string]any{}
		for k, v := range sn {
			out[k] = s.typedValue(g.typ, k, v)
		}
		out["digest"] = configDigest(g)
		return out, nil
	}
}

// hSnapshotCreate is POST …/snapshot.
func hSnapshotCreate(typ string) route {
	return func(s *Sim, c *reqCtx) (any, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		g, err := s.loadGuest(c, typ)
		if err != nil {
			return nil, err
		}
		name := c.str("snapname")
		if name == "current" || strings.EqualFold(name, "pending") {
			return nil, fail500("unable to use snapshot name '%s' (reserved name)", name)
		}
		t := s.newTask(c, g.node, snapTaskType(typ, "create"), strconv.Itoa(g.vmid))
		if err := s.snapshotPrepare(g, name, c.str("description")); err != nil {
			t.finish = func(*task) error { return err }
			return t.upid, nil
		}
		t.logf("snapshotting '%s'", name)
		t.finish = func(*task) error {
			delete(g.snaps[name], snapStateKey)
			delete(g.conf, "lock")
			g.conf["parent"] = name
			return nil
		}
		t.rollback = func(*task) {
			delete(g.snaps, name)
			delete(g.conf, "lock")
		}
		return t.upid, nil
	}
}

// snapshotPrepare is snapshot_prepare: the checks, then the lock and the half-made section.
func (s *Sim) snapshotPrepare(g *guest, name, description string) error {
	if err := checkLock(g); err != nil {
		return pveError(strings.TrimSuffix(err.Error(), "\n"))
	}
	if _, ok := g.snaps[name]; ok {
		return pveErrorf("snapshot name '%s' already used", name)
	}
	if !s.canSnapshot(g) {
		return pveErrorf("snapshot feature is not available")
	}
	sn := map[string]string{}
	for k, v := range g.conf {
		if k == "lock" || k == "description" || k == "digest" || indexedKey(k, "unused") {
			continue
		}
		sn[k] = v
	}
	sn[snapStateKey] = "prepare"
	sn["snaptime"] = strconv.FormatInt(s.now().Unix(), 10)
	if description != "" {
		sn["description"] = description
	}
	if g.snaps == nil {
		g.snaps = map[string]map[string]string{}
	}
	g.snaps[name] = sn
	g.conf["lock"] = "snapshot"
	return nil
}

// canSnapshot is has_feature('snapshot') over the guest's current volumes. Callers hold s.mu.
func (s *Sim) canSnapshot(g *guest) bool {
	for _, k := range sortedKeys(g.conf) {
		if g.typ == "lxc" && !isMountKey(k) || g.typ == "qemu" && !qemuDiskKey(k) {
			continue
		}
		ms := parseMount(g.conf[k])
		if g.typ == "qemu" && ms.opts["media"] == "cdrom" || ms.volume == "none" {
			continue
		}
		if ms.kind != "volume" {
			return false
		}
		st, v, err := s.lookupVolume(g.node, ms.volume)
		if err != nil || !storageSnapshots(st.Type, v.Format) {
			return false
		}
	}
	return true
}

// storageSnapshots is the storage plugins' volume_has_feature for 'snapshot' (pve-storage:
// PVE/Storage/Plugin.pm lists qcow2 only for a file storage; LvmThinPlugin.pm, ZFSPoolPlugin.pm,
// RBDPlugin.pm and BTRFSPlugin.pm list their raw and subvol volumes; LVMPlugin.pm and the
// iSCSI plugins list none).
func storageSnapshots(stType, format string) bool {
	switch stType {
	case "lvmthin", "zfspool", "zfs", "rbd", "btrfs":
		return true
	case "dir", "nfs", "cifs", "glusterfs", "cephfs":
		return format == "qcow2"
	}
	return false
}

// hSnapshotDelete is DELETE …/snapshot/{snapname}.
func hSnapshotDelete(typ string) route {
	return func(s *Sim, c *reqCtx) (any, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		g, err := s.loadGuest(c, typ)
		if err != nil {
			return nil, err
		}
		name := c.str("snapname")
		t := s.newTask(c, g.node, snapTaskType(typ, "delete"), strconv.Itoa(g.vmid))
		sn := g.snaps[name]
		if sn == nil {
			t.finish = func(*task) error { return pveErrorf("snapshot '%s' does not exist", name) }
			return t.upid, nil
		}
		if err := checkLock(g); err != nil && !c.boolean("force") {
			t.finish = func(*task) error { return pveError(err.Error()) }
			return t.upid, nil
		}
		g.conf["lock"] = "snapshot-delete"
		sn[snapStateKey] = "delete"
		t.finish = func(*task) error {
			parent := sn["parent"]
			for _, other := range g.snaps {
				if other["parent"] == name {
					setOrDelete(other, "parent", parent)
				}
			}
			if g.conf["parent"] == name {
				setOrDelete(g.conf, "parent", parent)
			}
			delete(g.snaps, name)
			delete(g.conf, "lock")
			return nil
		}
		return t.upid, nil
	}
}

func setOrDelete(m map[string]string, k, v string) {
	if v == "" {
		delete(m, k)
		return
	}
	m[k] = v
}

// hSnapshotRollback is POST …/snapshot/{snapname}/rollback.
func hSnapshotRollback(typ string) route {
	return func(s *Sim, c *reqCtx) (any, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		g, err := s.loadGuest(c, typ)
		if err != nil {
			return nil, err
		}
		name := c.str("snapname")
		t := s.newTask(c, g.node, snapTaskType(typ, "rollback"), strconv.Itoa(g.vmid))
		if err := s.rollbackPossible(g, name); err != nil {
			t.finish = func(*task) error { return err }
			return t.upid, nil
		}
		g.conf["lock"] = "rollback"
		start := c.boolean("start")
		t.finish = func(t *task) error {
			if g.running {
				t.logf("stopping %s %d", s.guestTypeName(g.typ), g.vmid)
				g.running, g.paused, g.pid = false, false, 0
			}
			s.restoreSnapshot(g, name)
			if start {
				s.startGuest(g)
			}
			return nil
		}
		return t.upid, nil
	}
}

// rollbackPossible is snapshot_rollback's checks. Callers hold s.mu.
func (s *Sim) rollbackPossible(g *guest, name string) error {
	sn := g.snaps[name]
	if sn == nil {
		return pveErrorf("snapshot '%s' does not exist", name)
	}
	if st := sn[snapStateKey]; st != "" {
		return pveErrorf("unable to rollback to incomplete snapshot (snapstate = %s)", st)
	}
	if err := checkLock(g); err != nil {
		return pveError(err.Error())
	}
	for _, k := range sortedKeys(sn) {
		if g.typ == "lxc" && !isMountKey(k) || g.typ == "qemu" && !qemuDiskKey(k) {
			continue
		}
		ms := parseMount(sn[k])
		st := s.storages[strings.SplitN(ms.volume, ":", 2)[0]]
		if st == nil || st.Type != "zfspool" {
			continue
		}
		// ZFSPoolPlugin's volume_rollback_is_possible: only the most recent snapshot.
		for other, o := range g.snaps {
			if other != name && o["snaptime"] > sn["snaptime"] {
				return pveErrorf("can't rollback, '%s' is not most recent snapshot on '%s'", name, ms.volume)
			}
		}
	}
	return nil
}

// restoreSnapshot makes the snapshot's config current again, pending changes dropped.
// Callers hold the write lock.
func (s *Sim) restoreSnapshot(g *guest, name string) {
	sn := g.snaps[name]
	conf := map[string]string{}
	for k, v := range sn {
		if k == "snaptime" || k == "description" || k == snapStateKey {
			continue
		}
		conf[k] = v
	}
	if d, ok := g.conf["description"]; ok {
		conf["description"] = d
	}
	conf["parent"] = name
	g.conf = conf
	g.pending = map[string]string{}
	g.pendingDelete = map[string]bool{}
}

// snapshotNames is the set of the guest's snapshot names.
func (g *guest) snapshotNames() map[string]bool {
	out := make(map[string]bool, len(g.snaps))
	for n := range g.snaps {
		out[n] = true
	}
	return out
}

// snapshotSections renders the `[name]` sections of the config file.
func snapshotSections(g *guest) string {
	var b strings.Builder
	names := make([]string, 0, len(g.snaps))
	for n := range g.snaps {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "\n[%s]\n", n)
		for _, k := range sortedKeys(g.snaps[n]) {
			b.WriteString(k + ": " + g.snaps[n][k] + "\n")
		}
	}
	return b.String()
}

// Snapshots returns the names of a guest's snapshots, sorted, and the lock it holds.
func (s *Sim) Snapshots(vmid int) (names []string, lock string, ok bool) {
	s.settle()
	s.mu.RLock()
	defer s.mu.RUnlock()
	g := s.guests[vmid]
	if g == nil {
		return nil, "", false
	}
	return sortedKeys(g.snapshotNames()), g.conf["lock"], true
}

// snapshotRoutes are the snapshot routes below /nodes/{node}/{lxc,qemu}/{vmid}/snapshot.
func snapshotRoutes(typ string) map[string]route {
	return map[string]route{
		"GET ":                      hSnapshotList(typ),
		"POST ":                     hSnapshotCreate(typ),
		"DELETE /{snapname}":        hSnapshotDelete(typ),
		"POST /{snapname}/rollback": hSnapshotRollback(typ),
		"GET /{snapname}/config":    hSnapshotConfig(typ),
	}
}
