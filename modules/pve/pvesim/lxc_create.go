package pvesim

import (
	"fmt"
	"strconv"
	"strings"
)

// Container create and restore (POST /nodes/{node}/lxc), after pve-container's
// API2/LXC.pm create_vm: the request is checked in steps under the lock, then a
// vzcreate or vzrestore task allocates the volumes and writes the config.

// lxcCreate is one create or restore request while it is checked and run.
type lxcCreate struct {
	s          *Sim
	c          *reqCtx
	vmid       int
	restore    bool
	unpriv     bool
	ostemplate string
	storageID  string
	// replaced is the stopped container a forced restore overwrites.
	replaced   *guest
	backupConf map[string]string // the configuration inside a restored archive
	conf       map[string]string
	hasRootfs  bool
	warnings   []string
	allocated  []string // volumes the task allocated, freed again if it fails
}

func (s *Sim) hLXCCreate(c *reqCtx) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cr := &lxcCreate{s: s, c: c, vmid: c.integer("vmid"), restore: c.boolean("restore"),
		unpriv: s.opts.PVEMajor >= 9, ostemplate: c.str("ostemplate"), storageID: c.str("storage")}
	if cr.restore {
		cr.unpriv = false
	}
	if c.has("unprivileged") {
		cr.unpriv = c.boolean("unprivileged")
	}
	if cr.storageID == "" {
		cr.storageID = "local"
	}
	for _, step := range []func() error{cr.checkTarget, cr.checkPerms, cr.checkTemplate,
		cr.readParams, cr.mergeBackup, cr.checkStorages} {
		if err := step(); err != nil {
			return nil, err
		}
	}
	cr.normalize()
	return cr.startTask(), nil
}

// checkTarget refuses a vmid in use, unless a forced restore overwrites a stopped,
// unprotected container of this node; then it checks the pool.
func (cr *lxcCreate) checkTarget() error {
	s, c, vmid := cr.s, cr.c, cr.vmid
	old := s.guests[vmid]
	sameExists := old != nil && old.node == c.node && old.typ == "lxc"
	if !sameExists || !cr.restore || !c.boolean("force") {
		if err := s.checkVMIDUnused(vmid); err != nil {
			return err
		}
		return s.checkPool(c)
	}
	if old.running {
		return fail500("can't overwrite running container")
	}
	if old.conf["protection"] == "1" {
		return fail500("unable to restore CT %d - protection mode enabled", vmid)
	}
	cr.replaced = old
	return s.checkPool(c)
}

// checkPerms is check_ct_modify_config_perm: it sees the parameters before bare sizes
// are rewritten.
func (cr *lxcCreate) checkPerms() error {
	c := cr.c
	for _, k := range sortedKeys(c.params) {
		if createOnlyParams[k] || k == "unprivileged" || k == "vmid" {
			continue
		}
		v := c.str(k)
		if !isMountKey(k) {
			if err := checkCTModifyPerm(k, v, cr.unpriv); err != nil {
				return err
			}
			continue
		}
		ms := parseMount(v)
		if ms.kind != "volume" {
			return permErr(fmt.Sprintf("mount point type %s is only allowed for root@pam", ms.kind))
		}
		if !reNewDisk.MatchString(ms.volume) {
			if err := cr.s.checkVolumeAccess(ms.volume, "rootdir"); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkTemplate checks the template (or, for a restore, the backup) volume and reads
// the configuration a backup carries.
func (cr *lxcCreate) checkTemplate() error {
	want := "vztmpl"
	if cr.restore {
		want = "backup"
	}
	if err := cr.s.checkVolumeAccess(cr.ostemplate, want); err != nil {
		return err
	}
	if !cr.restore {
		return nil
	}
	if bs, bn, ok := splitVolid(cr.ostemplate); ok {
		if bv := cr.s.vols[bs][bn]; bv != nil && bv.Config != nil {
			cr.backupConf = bv.Config
		}
	}
	if cr.backupConf != nil && !cr.c.has("unprivileged") {
		cr.unpriv = cr.backupConf["unprivileged"] == "1"
	}
	return nil
}

// readParams takes the config keys of the request; a bare size becomes STORAGE:SIZE.
func (cr *lxcCreate) readParams() error {
	c := cr.c
	cr.conf = map[string]string{}
	hasMP := false
	for _, k := range sortedKeys(c.params) {
		if createOnlyParams[k] || k == "unprivileged" {
			continue
		}
		if indexedKey(k, "unused") {
			cr.warnings = append(cr.warnings, fmt.Sprintf("ignoring '%s', cannot create/restore with unused volume", k))
			continue
		}
		v := c.str(k)
		if isMountKey(k) {
			cr.hasRootfs = cr.hasRootfs || k == "rootfs"
			hasMP = hasMP || k != "rootfs"
			if reBareSize.MatchString(parseMount(v).volume) {
				v = cr.storageID + ":" + v
			}
		}
		cr.conf[k] = v
	}
	if hasMP && !cr.hasRootfs {
		return fail500("mount points configured, but 'rootfs' not set - aborting")
	}
	return nil
}

// mergeBackup takes what the request did not pass from the configuration inside the
// archive; its mount points are restored only when the request names none.
func (cr *lxcCreate) mergeBackup() error {
	explicitMounts := cr.hasRootfs
	for _, k := range sortedKeys(cr.backupConf) {
		v := cr.backupConf[k]
		if _, given := cr.conf[k]; given || k == "lock" || k == "template" || k == "unprivileged" || indexedKey(k, "unused") {
			continue
		}
		if isMountKey(k) {
			if explicitMounts {
				continue
			}
			nv, err := cr.restoredMount(k, v)
			if err != nil {
				return err
			}
			v = nv
			cr.hasRootfs = cr.hasRootfs || k == "rootfs"
		}
		if indexedKey(k, "net") && cr.c.boolean("unique") {
			v = withoutHWAddr(v) // unique=1: the restored interfaces get new MAC addresses
		}
		cr.conf[k] = v
	}
	return nil
}

// restoredMount turns a backed-up mount point into a new volume of its size on the
// target storage.
func (cr *lxcCreate) restoredMount(k, v string) (string, error) {
	ms := parseMount(v)
	if ms.kind != "volume" {
		if k == "rootfs" {
			return "", fail500("restoring rootfs to %s mount is only possible by specifying -rootfs manually!", ms.kind)
		}
		return "", fail500("restoring '%s' to %s mount is only possible for root", k, ms.kind)
	}
	size, _ := parseSize(ms.opts["size"])
	delete(ms.opts, "size")
	ms.volume = cr.storageID + ":" + strconv.FormatFloat(float64(size)/float64(gib), 'f', -1, 64)
	return ms.String(), nil
}

func withoutHWAddr(v string) string {
	var parts []string
	for _, part := range strings.Split(v, ",") {
		if !strings.HasPrefix(part, "hwaddr=") {
			parts = append(parts, part)
		}
	}
	return strings.Join(parts, ",")
}

// checkStorages checks that every mount point's storage holds container directories;
// without a rootfs, one of 4 GiB goes onto the default storage.
func (cr *lxcCreate) checkStorages() error {
	for _, k := range sortedKeys(cr.conf) {
		if !isMountKey(k) {
			continue
		}
		sid, _, _ := strings.Cut(parseMount(cr.conf[k]).volume, ":")
		if err := cr.checkStorage(sid); err != nil {
			return err
		}
	}
	if cr.hasRootfs {
		return nil
	}
	if err := cr.checkStorage(cr.storageID); err != nil {
		return err
	}
	cr.conf["rootfs"] = cr.storageID + ":4"
	return nil
}

func (cr *lxcCreate) checkStorage(sid string) error {
	st := cr.s.storages[sid]
	if st == nil {
		return fail500("storage '%s' does not exist", sid)
	}
	if !st.hasContent("rootdir") {
		return paramErr(map[string]string{"storage": fmt.Sprintf("storage '%s' does not support container directories", sid)})
	}
	return nil
}

func (cr *lxcCreate) normalize() {
	for k, v := range cr.conf {
		if indexedKey(k, "net") {
			cr.conf[k] = cr.s.normalizeLXCNet(cr.vmid, v)
		}
		if k == "tags" {
			cr.conf[k] = normalizeTags(v)
		}
	}
}

// startTask takes the vmid (create_and_lock_config) and starts the task that does the
// work. The old container of a forced restore is destroyed after the new volumes exist.
func (cr *lxcCreate) startTask() string {
	s, c := cr.s, cr.c
	typ := "vzcreate"
	if cr.restore {
		typ = "vzrestore"
	}
	var oldConf map[string]string
	g := cr.replaced
	if g == nil {
		g = &guest{vmid: cr.vmid, typ: "lxc", node: c.node, pending: map[string]string{}, pendingDelete: map[string]bool{},
			firewall: map[string]string{}, ipsets: map[string]*ipset{}}
		s.addGuest(g)
	} else {
		oldConf = copyMap(g.conf)
	}
	g.conf = map[string]string{"lock": "create"}
	g.pending = map[string]string{}
	g.pendingDelete = map[string]bool{}
	g.lxcRaw = nil
	t := s.newTask(c, c.node, typ, strconv.Itoa(cr.vmid))
	for _, w := range cr.warnings {
		t.warnf("%s", w)
	}
	t.finish = func(t *task) error {
		if err := cr.finish(t, g, oldConf); err != nil {
			if cr.restore {
				return fmt.Errorf("unable to restore CT %d - %w", cr.vmid, err)
			}
			return fmt.Errorf("unable to create CT %d - %w", cr.vmid, err)
		}
		return nil
	}
	t.rollback = func(*task) {
		for _, v := range cr.allocated {
			_ = s.freeVolume(c.node, v)
		}
		s.removeGuest(g)
	}
	return t.upid
}

// finish is the task's work: allocate the mount points, destroy a replaced
// container's volumes, unpack the template and write the config.
func (cr *lxcCreate) finish(t *task, g *guest, oldConf map[string]string) error {
	s, node, vmid := cr.s, cr.c.node, cr.vmid
	if s.guests[vmid] != g {
		return fmt.Errorf("container vanished")
	}
	for _, k := range mountKeysInOrder(cr.conf) {
		nv, vols, err := s.prepareMount(node, vmid, k, cr.conf[k])
		cr.allocated = append(cr.allocated, vols...)
		if err != nil {
			return err
		}
		cr.conf[k] = nv
	}
	if oldConf != nil {
		if err := s.destroyVolumes(t, vmid, node, oldConf, nil, false); err != nil {
			return err
		}
	}
	if t.unpackFail != "" {
		return fmt.Errorf("%s", t.unpackFail)
	}
	store, name, _ := splitVolid(cr.ostemplate)
	tv := s.vols[store][name]
	if tv == nil || (tv.Node != "" && tv.Node != node && !s.storages[tv.Storage].Shared) {
		return fmt.Errorf("volume '%s' does not exist", cr.ostemplate)
	}
	if cr.restore && tv.Firewall != nil {
		g.firewall = copyMap(tv.Firewall) // the archive's firewall file replaces the guest's
	}
	cr.fillDefaults()
	if cr.restore {
		t.logf("restoring '%s' now..", cr.ostemplate)
	} else {
		t.logf("extracting archive '%s'", cr.ostemplate)
	}
	t.logf("Total bytes read: %d (%s)", tv.Size*3, formatSize(tv.Size*3))
	if _, ok := cr.conf["arch"]; !ok {
		cr.conf["arch"] = "amd64"
		t.logf("Detected container architecture: amd64")
	}
	g.conf = cr.conf
	cr.place(g)
	return nil
}

// fillDefaults sets what pve-container defaults when the request left it out.
func (cr *lxcCreate) fillDefaults() {
	conf := cr.conf
	if _, ok := conf["memory"]; !ok || conf["memory"] == "0" {
		conf["memory"] = "512"
	}
	if _, ok := conf["swap"]; !ok {
		conf["swap"] = "512"
	}
	if _, ok := conf["hostname"]; !ok {
		conf["hostname"] = "CT" + strconv.Itoa(cr.vmid)
	}
	if cr.unpriv {
		conf["unprivileged"] = "1"
	}
	if _, ok := conf["ostype"]; !ok {
		conf["ostype"] = detectOSType(cr.ostemplate)
	}
}

// place adds the new container to its pool, starts it and makes it HA-managed as asked.
func (cr *lxcCreate) place(g *guest) {
	s, c := cr.s, cr.c
	if poolID := c.str("pool"); poolID != "" {
		s.addToPool(poolID, cr.vmid)
	}
	start := c.boolean("start")
	if start {
		s.startGuest(g)
	}
	if c.boolean("ha-managed") {
		state := "stopped"
		if start {
			state = "started"
		}
		s.ha[haSID(g)] = &haResource{SID: haSID(g), State: state}
	}
}
