package pvesim

import (
	"fmt"
	"strconv"
)

// VM clones (POST /nodes/{node}/qemu/{vmid}/clone), after qemu-server's API2/Qemu.pm
// clone_vm: checked in steps under the lock, then a qmclone task copies or links each
// drive and writes the new config.

// qemuClone is one clone request while it is checked and run.
type qemuClone struct {
	s           *Sim
	c           *reqCtx
	src         *guest
	newid       int
	full        bool
	target      string   // the node of the clone
	targetStore *storage // the storage of a full clone's disks; nil keeps each disk's
	created     []string // volumes the task created, freed again if it fails
}

func (s *Sim) hQemuClone(c *reqCtx) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	src, err := s.loadGuest(c, "qemu")
	if err != nil {
		return nil, err
	}
	cl := &qemuClone{s: s, c: c, src: src, newid: c.integer("newid"), full: src.conf["template"] != "1", target: c.node}
	if c.has("full") {
		cl.full = c.boolean("full")
	}
	for _, step := range []func() error{cl.checkNewID, cl.checkLinked, cl.checkSource, cl.checkTargetNode, cl.checkTargetStorage} {
		if err := step(); err != nil {
			return nil, err
		}
	}
	return cl.startTask(), nil
}

func (cl *qemuClone) checkNewID() error {
	if err := cl.s.checkVMIDUnused(cl.newid); err != nil {
		return err
	}
	return cl.s.checkPool(cl.c)
}

// checkLinked refuses storage and format for a linked clone, and a linked clone of a
// drive that is no base volume (volume_has_feature(clone)).
func (cl *qemuClone) checkLinked() error {
	c, src := cl.c, cl.src
	if cl.full {
		return nil
	}
	if c.has("storage") {
		return fail500("parameter 'storage' not allowed for linked clones")
	}
	if c.has("format") {
		return fail500("parameter 'format' not allowed for linked clones")
	}
	for _, k := range sortedKeys(src.conf) {
		if !qemuDiskKey(k) {
			continue
		}
		ms := parseMount(src.conf[k])
		if ms.volume == "none" || ms.opts["media"] == "cdrom" || isCloudInitVol(ms) {
			continue
		}
		store, name, ok := splitVolid(ms.volume)
		st := cl.s.storages[store]
		if !ok || st == nil {
			continue
		}
		info, err := parseVolname(st.Type, name)
		if err != nil || !info.isBase || st.Type == "lvm" {
			return fail500("Linked clone feature is not supported for drive '%s'", k)
		}
	}
	return nil
}

func (cl *qemuClone) checkSource() error {
	if cl.c.has("snapname") {
		return fail500("snapshot '%s' does not exist", cl.c.str("snapname"))
	}
	return checkLock(cl.src)
}

// checkTargetNode refuses an unknown target node, and one other than the source's when
// a disk stays on local storage.
func (cl *qemuClone) checkTargetNode() error {
	s, c := cl.s, cl.c
	if !c.has("target") || c.str("target") == c.node {
		return nil
	}
	cl.target = c.str("target")
	if s.nodes[cl.target] == nil {
		return paramErr(map[string]string{"target": fmt.Sprintf("no such cluster node '%s'", cl.target)})
	}
	if c.has("storage") && s.storages[c.str("storage")] != nil && !s.storages[c.str("storage")].Shared {
		return fail500("can't clone to non-shared storage '%s'", c.str("storage"))
	}
	toShared := cl.full && c.has("storage") && s.storages[c.str("storage")] != nil && s.storages[c.str("storage")].Shared
	for _, k := range sortedKeys(cl.src.conf) {
		if !qemuDiskKey(k) {
			continue
		}
		store, _, ok := splitVolid(parseMount(cl.src.conf[k]).volume)
		if !ok {
			continue
		}
		if st := s.storages[store]; st != nil && !st.Shared && !toShared {
			return fail500("can't clone VM to node '%s' (VM uses local storage)", cl.target)
		}
	}
	return nil
}

func (cl *qemuClone) checkTargetStorage() error {
	if !cl.c.has("storage") {
		return nil
	}
	cl.targetStore = cl.s.storages[cl.c.str("storage")]
	if cl.targetStore == nil {
		return fail500("storage '%s' does not exist", cl.c.str("storage"))
	}
	if !cl.targetStore.hasContent("images") {
		return fail500("storage '%s' does not support vm images", cl.targetStore.ID)
	}
	return nil
}

// startTask takes the new vmid, locked, and starts the task that does the work.
func (cl *qemuClone) startTask() string {
	s, c := cl.s, cl.c
	ng := &guest{vmid: cl.newid, typ: "qemu", node: cl.target, conf: map[string]string{"lock": "clone"}, pending: map[string]string{},
		pendingDelete: map[string]bool{}, firewall: map[string]string{}, ipsets: map[string]*ipset{}}
	s.addGuest(ng)
	t := s.newTask(c, c.node, "qmclone", strconv.Itoa(cl.src.vmid))
	srcConf := copyMap(cl.src.conf)
	t.finish = func(t *task) error { return cl.finish(t, ng, srcConf) }
	t.rollback = func(*task) {
		for _, v := range cl.created {
			_ = s.freeVolume(cl.target, v)
		}
		s.removeGuest(ng)
	}
	return t.upid
}

// finish writes the clone's config from the source's: a new name, MAC addresses,
// SMBIOS and generation ids, and a copy or link of each drive.
func (cl *qemuClone) finish(t *task, ng *guest, srcConf map[string]string) error {
	s, c, newid := cl.s, cl.c, cl.newid
	conf := map[string]string{}
	for k, v := range srcConf {
		if k == "template" || k == "lock" || indexedKey(k, "unused") || k == "parent" {
			continue
		}
		conf[k] = v
	}
	conf["name"] = "Copy-of-VM-" + srcConf["name"]
	if name := c.str("name"); name != "" {
		conf["name"] = name
	}
	if c.has("description") {
		conf["description"] = c.str("description")
	}
	for _, k := range sortedKeys(conf) {
		switch {
		case indexedKey(k, "net"):
			conf[k] = s.qemuNetWithNewMAC(newid, conf[k])
		case k == "smbios1":
			conf[k] = s.newSMBIOS(newid, conf[k])
		case k == "vmgenid":
			conf[k] = s.newUUID(newid, 1)
		case qemuDiskKey(k):
			nv, vol, err := cl.cloneDrive(t, ng, k, conf[k])
			if err != nil {
				return err
			}
			if vol != "" {
				cl.created = append(cl.created, vol)
			}
			conf[k] = nv
		}
	}
	ng.conf = conf
	if poolID := c.str("pool"); poolID != "" {
		s.addToPool(poolID, newid)
	}
	return nil
}

// cloneDrive copies or links one drive of the source to the clone dst. It returns the
// new drive value and the volume it created ("" for none).
func (cl *qemuClone) cloneDrive(t *task, dst *guest, key, val string) (string, string, error) {
	s := cl.s
	ms := parseMount(val)
	if ms.volume == "none" || ms.volume == "cdrom" {
		return val, "", nil
	}
	store, name, ok := splitVolid(ms.volume)
	if !ok {
		return val, "", nil
	}
	st := s.storages[store]
	if st == nil {
		return "", "", fmt.Errorf("storage '%s' does not exist", store)
	}
	if ms.opts["media"] == "cdrom" && !isCloudInitVol(ms) {
		return val, "", nil
	}
	srcVol := s.vols[store][name]
	if srcVol == nil {
		return "", "", fmt.Errorf("volume '%s' does not exist", ms.volume)
	}
	switch {
	case isCloudInitVol(ms):
		return cl.cloneCloudInit(t, dst, key, val, ms, st, srcVol)
	case cl.full:
		return cl.cloneFull(t, dst, key, ms, st, srcVol)
	}
	return cl.cloneLinked(t, dst, key, ms, st, srcVol)
}

// cloneCloudInit copies the cloud-init drive, always in full.
func (cl *qemuClone) cloneCloudInit(t *task, dst *guest, key, val string, ms mountSpec, st *storage, srcVol *volume) (string, string, error) {
	cst := st
	if cl.full && cl.targetStore != nil {
		cst = cl.targetStore
	}
	vnode := ""
	if !cst.Shared {
		vnode = dst.node
	}
	cname := fmt.Sprintf("vm-%d-cloudinit", dst.vmid)
	cformat := "raw"
	if cst.pathBased() {
		cname = fmt.Sprintf("%d/vm-%d-cloudinit.qcow2", dst.vmid, dst.vmid)
		cformat = "qcow2"
	}
	cl.s.vols[cst.ID][cname] = &volume{Storage: cst.ID, Name: cname, Node: vnode, Size: srcVol.Size, Content: "images", Format: cformat, Ctime: cl.s.now().Unix()}
	ms.volume = cst.ID + ":" + cname
	t.logf("create full clone of drive %s (%s)", key, val)
	return qemuDriveString(ms), ms.volume, nil
}

// cloneFull copies a disk onto the target storage (or its own), in the requested
// format where the storage keeps files.
func (cl *qemuClone) cloneFull(t *task, dst *guest, key string, ms mountSpec, st *storage, srcVol *volume) (string, string, error) {
	dstSt := st
	if cl.targetStore != nil {
		dstSt = cl.targetStore
	}
	f := cl.c.str("format")
	if f == "" && dstSt.pathBased() {
		f = srcVol.Format
		if f == "" || f == "subvol" {
			f = "raw"
		}
	}
	if !dstSt.pathBased() {
		f = ""
	}
	v := cl.s.allocVolume(dstSt, dst.node, dst.vmid, false, srcVol.Size, f)
	t.logf("create full clone of drive %s (%s)", key, ms.volume)
	ms.volume = v.volid()
	ms.opts["size"] = formatSize(srcVol.Size)
	return qemuDriveString(ms), v.volid(), nil
}

// cloneLinked links a base volume, named as the storage plugin names a linked clone.
func (cl *qemuClone) cloneLinked(t *task, dst *guest, key string, ms mountSpec, st *storage, srcVol *volume) (string, string, error) {
	s := cl.s
	_, name, _ := splitVolid(ms.volume)
	info, err := parseVolname(st.Type, name)
	if err != nil {
		return "", "", err
	}
	if !info.isBase {
		return "", "", fmt.Errorf("clone_image only works on base images")
	}
	used := usedDiskIndexes(sortedKeys(s.vols[st.ID]), dst.vmid)
	i := 0
	for used[i] {
		i++
	}
	var newName, f string
	switch st.Type {
	case "lvmthin", "rbd":
		newName, f = fmt.Sprintf("vm-%d-disk-%d", dst.vmid, i), "raw"
		if st.Type == "rbd" {
			newName = name + "/" + newName
		}
	case "zfspool":
		newName, f = fmt.Sprintf("%s/vm-%d-disk-%d", name, dst.vmid, i), "raw"
	case "dir", "nfs", "cifs", "cephfs", "btrfs":
		newName, f = fmt.Sprintf("%s/%d/vm-%d-disk-%d.qcow2", name, dst.vmid, dst.vmid, i), "qcow2"
	default:
		return "", "", fmt.Errorf("linked clone feature is not supported for drive '%s'", key)
	}
	vnode := ""
	if !st.Shared {
		vnode = dst.node
	}
	s.vols[st.ID][newName] = &volume{Storage: st.ID, Name: newName, Node: vnode, Size: srcVol.Size, Content: "images", Format: f, Ctime: s.now().Unix()}
	t.logf("create linked clone of drive %s (%s)", key, ms.volume)
	ms.volume = st.ID + ":" + newName
	return qemuDriveString(ms), ms.volume, nil
}
