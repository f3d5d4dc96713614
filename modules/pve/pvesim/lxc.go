package pvesim

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Container endpoints, after pve-container's API2/LXC.pm, API2/LXC/Config.pm and
// API2/LXC/Status.pm.

// createOnlyParams are create parameters that are not config keys.
var createOnlyParams = map[string]bool{
	"node": true, "vmid": true, "ostemplate": true, "password": true, "ssh-public-keys": true,
	"storage": true, "restore": true, "force": true, "unique": true, "start": true,
	"ignore-unpack-errors": true, "bwlimit": true, "ha-managed": true, "pool": true,
}

var reBareSize = regexp.MustCompile(`^\d+(\.\d+)?$`)

// lxcFastplug are the keys a running container takes at once ($LXC_FASTPLUG_OPTIONS).
func lxcFastplug(k string) bool {
	switch k {
	case "description", "onboot", "startup", "protection", "hostname", "hookscript", "cores", "tags", "lock":
		return true
	}
	return false
}

// lxcHotplug reports whether a running container applies a change of k live
// (vmconfig_hotplug_pending); exists says whether the key is already set.
func lxcHotplug(k string, exists bool) bool {
	switch {
	case lxcFastplug(k), k == "cpulimit", k == "cpuunits", k == "memory", k == "swap", indexedKey(k, "net"):
		return true
	case indexedKey(k, "mp"), indexedKey(k, "dev"):
		return !exists // never hotplugged over an existing one
	}
	return false
}

// lxcHotDelete reports whether a running container drops k at once.
func lxcHotDelete(k string) bool {
	return lxcFastplug(k) || indexedKey(k, "unused") || k == "swap" || k == "cpulimit" || k == "cpuunits" || indexedKey(k, "net")
}

// checkMountPerm refuses what a token (not root@pam) may not put into rootfs/mpN.
func checkMountPerm(_, val string) error {
	ms := parseMount(val)
	switch ms.kind {
	case "bind", "device":
		return permErr(fmt.Sprintf("mount point type %s is only allowed for root@pam", ms.kind))
	}
	if reBareSize.MatchString(ms.volume) {
		return fail500("Only root can pass arbitrary filesystem paths.")
	}
	return nil
}

// checkCTModifyPerm mirrors check_ct_modify_config_perm for a non-root caller.
func checkCTModifyPerm(key, val string, unprivileged bool) error {
	switch {
	case isMountKey(key):
		return checkMountPerm(key, val)
	case indexedKey(key, "dev"):
		return permErr("configuring device passthrough is only allowed for root@pam")
	case key == "hookscript":
		return permErr("changing the hookscript is only allowed for root@pam")
	case key == "features":
		if !unprivileged {
			return permErr("changing feature flags for privileged container is only allowed for root@pam")
		}
		for _, part := range strings.Split(val, ",") {
			k, v, _ := strings.Cut(part, "=")
			if k == "" || k == "nesting" {
				continue
			}
			if v == "0" {
				continue
			}
			return permErr("changing feature flags (except nesting) is only allowed for root@pam")
		}
	}
	return nil
}

var osFromTemplate = []struct{ prefix, ostype string }{
	{"debian", "debian"}, {"ubuntu", "ubuntu"}, {"alpine", "alpine"}, {"centos", "centos"},
	{"rockylinux", "centos"}, {"almalinux", "centos"}, {"fedora", "fedora"}, {"archlinux", "archlinux"},
	{"opensuse", "opensuse"}, {"gentoo", "gentoo"}, {"devuan", "devuan"}, {"nixos", "nixos"},
}

func detectOSType(tmpl string) string {
	base := tmpl
	if i := strings.LastIndex(base, "/"); i >= 0 {
		base = base[i+1:]
	}
	for _, o := range osFromTemplate {
		if strings.HasPrefix(base, o.prefix) {
			return o.ostype
		}
	}
	return "unmanaged"
}

// prepareMounts resolves rootfs/mpN values of a create or config change: STORAGE:N
// allocates, an existing volume is adopted. It returns the final value and the volumes
// allocated. Callers hold the write lock.
func (s *Sim) prepareMount(node string, vmid int, _, val string) (string, []string, error) {
	ms := parseMount(val)
	if ms.kind != "volume" {
		return val, nil, nil
	}
	if m := reNewDisk.FindStringSubmatch(ms.volume); m != nil {
		st := s.storages[m[1]]
		if st == nil {
			return "", nil, fail500("storage '%s' does not exist", m[1])
		}
		if !st.hasContent("rootdir") {
			return "", nil, fail500("storage '%s' does not support container directories", m[1])
		}
		gb, _ := strconv.ParseFloat(m[2], 64)
		size := gibToBytes(gb)
		if size == 0 && !(st.pathBased() || st.Type == "zfspool") {
			return "", nil, fail500("unable to create containers on storage '%s' with size 0", m[1])
		}
		v := s.allocVolume(st, node, vmid, true, size, "")
		ms.volume = v.volid()
		ms.opts["size"] = formatSize(size)
		if size == 0 {
			delete(ms.opts, "size")
			ms.opts["size"] = "0T"
		}
		return ms.String(), []string{v.volid()}, nil
	}
	st, v, err := s.lookupVolume(node, ms.volume)
	if err != nil {
		return "", nil, fail500("%v", err)
	}
	if !st.hasContent("rootdir") {
		return "", nil, fail500("storage '%s' does not support container directories", st.ID)
	}
	if _, ok := ms.opts["size"]; !ok {
		ms.opts["size"] = formatSize(v.Size)
	}
	return ms.String(), nil, nil
}

func (s *Sim) hLXCIndex(c *reqCtx) (any, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	ns := s.nodes[c.node]
	out := make([]*lxcStatusEntry, 0, len(s.byNode[c.node]))
	for _, g := range s.guestsOnNode(c.node, "lxc") {
		e := s.lxcStatus(g, false)
		if ns.opts.OldIndex {
			e.VMID = strconv.Itoa(g.vmid)
		}
		if ns.opts.NoSwapInIndex {
			e.Swap, e.MaxSwap = nil, nil
		}
		out = append(out, e)
	}
	return out, nil
}

// lxcStatusEntry is a container's vmstatus entry (status/current and the node index).
// Fields are encoded in a struct, not a map, so large node indexes stay fast.
type lxcStatusEntry struct {
	CPU                float64  `json:"cpu"`
	CPUs               int      `json:"cpus"`
	Disk               int64    `json:"disk"`
	DiskRead           int64    `json:"diskread"`
	DiskWrite          int64    `json:"diskwrite"`
	HA                 any      `json:"ha,omitempty"`
	Lock               string   `json:"lock,omitempty"`
	MaxDisk            int64    `json:"maxdisk"`
	MaxMem             int64    `json:"maxmem"`
	MaxSwap            *int64   `json:"maxswap,omitempty"`
	Mem                int64    `json:"mem"`
	Name               string   `json:"name"`
	NetIn              int64    `json:"netin"`
	NetOut             int64    `json:"netout"`
	PID                *int     `json:"pid,omitempty"`
	PressureCPUFull    *float64 `json:"pressurecpufull,omitempty"`
	PressureCPUSome    *float64 `json:"pressurecpusome,omitempty"`
	PressureIOFull     *float64 `json:"pressureiofull,omitempty"`
	PressureIOSome     *float64 `json:"pressureiosome,omitempty"`
	PressureMemoryFull *float64 `json:"pressurememoryfull,omitempty"`
	PressureMemorySome *float64 `json:"pressurememorysome,omitempty"`
	Status             string   `json:"status"`
	Swap               *int64   `json:"swap,omitempty"`
	Tags               string   `json:"tags,omitempty"`
	Template           *int     `json:"template,omitempty"`
	Type               string   `json:"type"`
	Uptime             int64    `json:"uptime"`
	VMID               any      `json:"vmid"`
}

func ptr[T any](v T) *T { return &v }

// lxcStatus builds a container's vmstatus entry. Callers hold s.mu.
func (s *Sim) lxcStatus(g *guest, current bool) *lxcStatusEntry {
	st := s.guestStats(g)
	e := &lxcStatusEntry{
		VMID: g.vmid, Name: s.guestName(g), Type: "lxc", Status: "stopped",
		Uptime: st.uptime, CPU: st.cpu, CPUs: st.cpus, Mem: st.mem, MaxMem: st.maxmem,
		Swap: ptr(st.swap), MaxSwap: ptr(st.maxswap), Disk: st.disk, MaxDisk: st.maxdisk,
		NetIn: st.netin, NetOut: st.netout, DiskRead: st.diskread, DiskWrite: st.diskwrite,
		Lock: g.conf["lock"], Tags: g.conf["tags"],
	}
	if g.running {
		e.Status = "running"
		e.PID = ptr(g.pid)
		if s.opts.PVEMajor >= 9 {
			e.PressureCPUSome = ptr(st.pressureCPU)
			e.PressureCPUFull = ptr(roundTo(st.pressureCPU/2, 2))
			e.PressureIOSome = ptr(st.pressure)
			e.PressureIOFull = ptr(roundTo(st.pressure/2, 2))
			e.PressureMemorySome = ptr(0.0)
			e.PressureMemoryFull = ptr(0.0)
		}
	}
	if g.conf["template"] == "1" {
		e.Template = ptr(1)
	}
	if current {
		if r := s.ha[haSID(g)]; r != nil {
			e.HA = map[string]any{"managed": 1, "state": r.State}
		} else {
			e.HA = map[string]any{"managed": 0}
		}
	}
	return e
}

// errArbitraryPath is PVE::Storage::check_volume_access refusing a path to a non-root
// caller. The die has no newline, so Perl appends the source position.
func errArbitraryPath() error {
	return fail500("Only root can pass arbitrary filesystem paths. at /usr/share/perl5/PVE/Storage.pm line 651.")
}

// checkVolumeAccess mirrors PVE::Storage::check_volume_access for a token: paths are
// refused, the content type must match. Existence is not checked here. Callers hold s.mu.
func (s *Sim) checkVolumeAccess(volid, contentType string) error {
	store, name, ok := splitVolid(volid)
	if !ok {
		return errArbitraryPath()
	}
	st := s.storages[store]
	if st == nil {
		return fail500("storage '%s' does not exist", store)
	}
	info, err := parseVolname(st.Type, name)
	if err != nil {
		return fail500("%v", err)
	}
	if contentType != "" && info.vtype != contentType && !(contentType == "rootdir" && info.vtype == "images") {
		return fail500("unable to use volume %s - content type needs to be '%s'", volid, contentType)
	}
	return nil
}

// keepReplacedVolume turns the volume of a mount or drive that is removed or replaced
// by newVal ("" = removed) into an unusedN entry, as add_unused_volume does.
func keepReplacedVolume(g *guest, key, newVal string) {
	old, ok := g.conf[key]
	if !ok {
		return
	}
	isDisk := (g.typ == "lxc" && isMountKey(key)) || (g.typ == "qemu" && qemuDiskKey(key))
	if !isDisk {
		return
	}
	oms := parseMount(old)
	if oms.kind != "volume" || oms.volume == "none" || oms.volume == "cdrom" || oms.opts["media"] == "cdrom" {
		return
	}
	if newVal != "" && parseMount(newVal).volume == oms.volume {
		return
	}
	for k, v := range g.conf {
		if indexedKey(k, "unused") && v == oms.volume {
			return
		}
	}
	g.conf[nextUnusedKey(g.conf, g.pending)] = oms.volume
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

func (s *Sim) hLXCConfigGet(c *reqCtx) (any, error) {
	return s.readGuest(c, "lxc", func(g *guest) any { return s.configOutput(g, c.boolean("current")) })
}

func (s *Sim) hLXCPending(c *reqCtx) (any, error) {
	return s.readGuest(c, "lxc", func(g *guest) any { return s.pendingOutput(g) })
}

func (s *Sim) hLXCStatusCurrent(c *reqCtx) (any, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	g, err := s.loadGuest(c, "lxc")
	if err != nil {
		return nil, err
	}
	return s.lxcStatus(g, true), nil
}

// lxcRunning is PVE::LXC::check_running: it reads no config, so a container that does not
// exist (here) is "not running". Callers hold s.mu.
func (s *Sim) lxcRunning(node string, vmid int) bool {
	g := s.guests[vmid]
	return g != nil && g.node == node && g.typ == "lxc" && g.running
}

// lxcWorkerGuest loads the container inside a worker: a missing config or a lock fails the
// task, not the request (pve-container API2/LXC/Status.pm). Callers hold the write lock.
func (s *Sim) lxcWorkerGuest(node string, vmid int, tolerate ...string) (*guest, error) {
	g := s.guests[vmid]
	if g == nil || g.node != node || g.typ != "lxc" {
		return nil, pveErrorf("Configuration file 'nodes/%s/lxc/%d.conf' does not exist", node, vmid)
	}
	if err := checkLock(g, tolerate...); err != nil {
		return nil, err
	}
	return g, nil
}

func (s *Sim) hLXCStart(c *reqCtx) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := checkSkiplock(c); err != nil {
		return nil, err
	}
	vmid, node := c.integer("vmid"), c.node
	if s.lxcRunning(node, vmid) {
		return nil, fail500("CT %d already running", vmid)
	}
	if upid, ok := s.haTask(c, true, vmid, true); ok {
		return upid, nil
	}
	t := s.newTask(c, node, "vzstart", strconv.Itoa(vmid))
	t.finish = func(*task) error {
		g := s.guests[vmid]
		if g == nil || g.node != node || g.typ != "lxc" {
			return pveErrorf("Configuration file 'nodes/%s/lxc/%d.conf' does not exist", node, vmid)
		}
		if g.conf["template"] == "1" {
			return fmt.Errorf("you can't start a CT if it's a template")
		}
		if err := checkLock(g, "mounted"); err != nil {
			return err
		}
		if g.running {
			return fmt.Errorf("CT %d already running", vmid)
		}
		s.startGuest(g)
		return nil
	}
	return t.upid, nil
}

// lxcStopTask is stop and shutdown: "not running" is refused at once, a lock in the task.
func (s *Sim) lxcStopTask(c *reqCtx, typ string, tolerate ...string) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if typ == "vzstop" {
		if err := checkSkiplock(c); err != nil {
			return nil, err
		}
	}
	vmid, node := c.integer("vmid"), c.node
	if !s.lxcRunning(node, vmid) {
		return nil, fail500("CT %d not running", vmid)
	}
	if upid, ok := s.haTask(c, true, vmid, false); ok {
		return upid, nil
	}
	t := s.newTask(c, node, typ, strconv.Itoa(vmid))
	t.finish = func(*task) error {
		g, err := s.lxcWorkerGuest(node, vmid, tolerate...)
		if err != nil {
			return err
		}
		g.running, g.pid = false, 0
		return nil
	}
	return t.upid, nil
}

func (s *Sim) hLXCStop(c *reqCtx) (any, error)     { return s.lxcStopTask(c, "vzstop", "mounted") }
func (s *Sim) hLXCShutdown(c *reqCtx) (any, error) { return s.lxcStopTask(c, "vzshutdown") }

func (s *Sim) hLXCReboot(c *reqCtx) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	vmid, node := c.integer("vmid"), c.node
	if !s.lxcRunning(node, vmid) {
		// sic: the container reboot endpoint says "VM"
		return nil, fail500("VM %d not running", vmid)
	}
	t := s.newTask(c, node, "vzreboot", strconv.Itoa(vmid))
	t.finish = func(*task) error {
		g, err := s.lxcWorkerGuest(node, vmid)
		if err != nil {
			return err
		}
		s.startGuest(g)
		return nil
	}
	return t.upid, nil
}

// hLXCSuspend accepts the experimental CRIU checkpoint. CRIU is not installed with
// Proxmox, so the vzsuspend task fails and the container keeps running.
func (s *Sim) hLXCSuspend(c *reqCtx) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	vmid, node := c.integer("vmid"), c.node
	if !s.lxcRunning(node, vmid) {
		return nil, fail500("CT %d not running", vmid)
	}
	t := s.newTask(c, node, "vzsuspend", strconv.Itoa(vmid))
	t.finish = func(t *task) error {
		if _, err := s.lxcWorkerGuest(node, vmid); err != nil {
			return err
		}
		t.logf("lxc-checkpoint: criu: command not found")
		return fmt.Errorf("command 'lxc-checkpoint -n %d -s -D /var/lib/vz/dump' failed: exit code 1", vmid)
	}
	return t.upid, nil
}

func (s *Sim) hLXCResume(c *reqCtx) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	vmid, node := c.integer("vmid"), c.node
	if s.lxcRunning(node, vmid) {
		return nil, fail500("CT %d already running", vmid)
	}
	t := s.newTask(c, node, "vzresume", strconv.Itoa(vmid))
	t.finish = func(t *task) error {
		t.logf("lxc-checkpoint: criu: command not found")
		return fmt.Errorf("command 'lxc-checkpoint -n %d -r --foreground -D /var/lib/vz/dump' failed: exit code 1", vmid)
	}
	return t.upid, nil
}

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

var reResize = regexp.MustCompile(`^(\+)?(\d+(?:\.\d+)?)([KMGT])?$`)

func (s *Sim) hLXCResize(c *reqCtx) (any, error) {
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
	disk := c.str("disk")
	val, ok := g.conf[disk]
	if !ok {
		return nil, fail500("disk '%s' does not exist", disk)
	}
	ms := parseMount(val)
	if ms.kind != "volume" {
		return nil, fail500("you can't resize a mount point of type '%s'", ms.kind)
	}
	owner, err := s.volumeOwner(ms.volume)
	if err != nil {
		return nil, fail500("%v", err)
	}
	if owner != g.vmid {
		return nil, fail500("can't resize mount point owned by another container (%d)", owner)
	}
	_, vol, err := s.lookupVolume(g.node, ms.volume)
	if err != nil {
		return nil, fail500("%v", err)
	}
	size := vol.Size
	newSize, err := resizeTarget(c.str("size"), size)
	if err != nil {
		return nil, err
	}
	if newSize < size {
		return nil, fail500("unable to shrink disk size")
	}
	if newSize == size {
		return nil, fail500("disk is already at specified size")
	}
	t := s.newTask(c, g.node, "resize", strconv.Itoa(g.vmid))
	t.finish = func(t *task) error {
		vol.Size = newSize
		cur := parseMount(g.conf[disk])
		cur.opts["size"] = formatSize(newSize)
		g.conf[disk] = cur.String()
		t.logf("Size of logical volume changed to %s.", formatSize(newSize))
		return nil
	}
	return t.upid, nil
}

// resizeTarget computes the new size of a resize request ("+10G" or "40G"; bare bytes).
func resizeTarget(v string, cur int64) (int64, error) {
	m := reResize.FindStringSubmatch(v)
	if m == nil {
		return 0, paramErr(map[string]string{"size": "value does not match the regex pattern"})
	}
	n, _ := parseSize(m[2] + m[3])
	if m[1] == "+" {
		return cur + n, nil
	}
	return n, nil
}

func (s *Sim) hLXCInterfaces(c *reqCtx) (any, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	g, err := s.loadGuest(c, "lxc")
	if err != nil {
		return nil, err
	}
	if !g.running {
		return nil, fail500("CT %d is not running", g.vmid)
	}
	out := []map[string]any{{"name": "lo", "hwaddr": "00:00:00:00:00:00", "inet": "127.0.0.1/8", "inet6": "::1/128"}}
	for _, k := range sortedKeys(g.conf) {
		if !indexedKey(k, "net") {
			continue
		}
		kv := map[string]string{}
		for _, part := range strings.Split(g.conf[k], ",") {
			a, b, _ := strings.Cut(part, "=")
			kv[a] = b
		}
		e := map[string]any{"name": kv["name"], "hwaddr": strings.ToLower(kv["hwaddr"])}
		if ip := kv["ip"]; strings.Contains(ip, "/") {
			e["inet"] = ip
		}
		if ip := kv["ip6"]; strings.Contains(ip, "/") {
			e["inet6"] = ip
		}
		out = append(out, e)
	}
	return out, nil
}
