package pvesim

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// VM endpoints after qemu-server's API2/Qemu.pm and API2/Qemu/Agent.pm.

// qemuFastPlug are keys a running VM takes at once ($fast_plug_option).
func qemuFastPlug(k string) bool {
	switch k {
	case "lock", "name", "onboot", "shares", "startup", "description", "protection", "vmstatestorage", "hookscript", "tags":
		return true
	}
	return false
}

// cloudInitKey reports the config keys the cloud-init drive is generated from
// (qemu-server cloudinit_pending_properties: the cloud-init options, name and netN).
func cloudInitKey(k string) bool {
	switch k {
	case "ciuser", "cipassword", "sshkeys", "nameserver", "searchdomain", "citype", "ciupgrade", "cicustom", "name":
		return true
	}
	return indexedKey(k, "ipconfig") || indexedKey(k, "net")
}

// cloudInitOption reports the cloud-init options proper; a running VM takes them into
// its config at once, only the drive regeneration is pending (GET .../cloudinit).
func cloudInitOption(k string) bool {
	return cloudInitKey(k) && k != "name" && !indexedKey(k, "net")
}

func ciSnapshot(conf map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range conf {
		if cloudInitKey(k) {
			out[k] = v
		}
	}
	return out
}

func hashPassword(vmid int, pw string) string {
	if strings.HasPrefix(pw, "$") {
		return pw
	}
	sum := sha256.Sum256([]byte(fmt.Sprintf("%d:%s", vmid, pw)))
	return "$5$pvesim" + strconv.Itoa(vmid) + "$" + hex.EncodeToString(sum[:])[:43]
}

func isCloudInitVol(ms mountSpec) bool {
	return strings.Contains(ms.volume, "cloudinit")
}

func (s *Sim) qemuStatus(g *guest, current bool) map[string]any {
	st := s.guestStats(g)
	e := map[string]any{
		"vmid": g.vmid, "name": s.guestName(g), "status": "stopped", "uptime": st.uptime, "cpu": st.cpu,
		"cpus": st.cpus, "mem": st.mem, "maxmem": st.maxmem, "disk": 0, "maxdisk": st.maxdisk,
		"netin": st.netin, "netout": st.netout, "diskread": st.diskread, "diskwrite": st.diskwrite,
	}
	if current {
		e["qmpstatus"] = "stopped"
	}
	if g.running {
		e["status"] = "running"
		e["pid"] = g.pid
		if current {
			e["qmpstatus"] = "running"
			if g.paused {
				e["qmpstatus"] = "paused"
			}
			e["running-machine"] = "pc-i440fx-9.2+pve1"
			e["running-qemu"] = "9.2.0"
			e["balloon"] = st.maxmem
			e["balloon_min"] = st.maxmem
			e["shares"] = 1000
			e["freemem"] = st.maxmem - st.mem
			e["ballooninfo"] = map[string]any{"actual": st.maxmem, "max_mem": st.maxmem, "free_mem": st.maxmem - st.mem,
				"total_mem": st.maxmem, "major_page_faults": 1811, "minor_page_faults": 3803793, "mem_swapped_in": 0, "mem_swapped_out": 0}
			e["nics"] = map[string]any{fmt.Sprintf("tap%di0", g.vmid): map[string]any{"netin": st.netin, "netout": st.netout}}
			blocks := map[string]any{}
			for k, v := range g.conf {
				if !qemuDiskKey(k) || parseMount(v).volume == "none" {
					continue
				}
				blocks[k] = map[string]any{"rd_bytes": st.diskread / 2, "wr_bytes": st.diskwrite / 2, "rd_operations": st.diskread / 4096,
					"wr_operations": st.diskwrite / 4096, "flush_operations": st.uptime, "failed_rd_operations": 0, "failed_wr_operations": 0,
					"idle_time_ns": 1000000, "account_failed": true, "account_invalid": true, "timed_stats": []any{}}
			}
			e["blockstat"] = blocks
			if strings.HasPrefix(g.conf["vga"], "qxl") {
				e["spice"] = 1
			}
			e["proxmox-support"] = map[string]any{"pbs-dirty-bitmap": true, "query-bitmap-info": true, "pbs-library-version": "1.5.1", "backup-max-workers": true}
		}
		if s.opts.PVEMajor >= 9 {
			e["pressurecpusome"] = st.pressureCPU
			e["pressurecpufull"] = roundTo(st.pressureCPU/2, 2)
			e["pressureiosome"] = st.pressure
			e["pressureiofull"] = roundTo(st.pressure/2, 2)
			e["pressurememorysome"] = 0
			e["pressurememoryfull"] = 0
			e["memhost"] = st.mem
		}
	}
	if g.conf["template"] == "1" {
		e["template"] = 1
	}
	if v := g.conf["lock"]; v != "" {
		e["lock"] = v
	}
	if v := g.conf["tags"]; v != "" {
		e["tags"] = v
	}
	if current {
		if strings.HasPrefix(g.conf["agent"], "1") || strings.Contains(g.conf["agent"], "enabled=1") {
			e["agent"] = 1
		}
		if r := s.ha[haSID(g)]; r != nil {
			e["ha"] = map[string]any{"managed": 1, "state": r.State}
		} else {
			e["ha"] = map[string]any{"managed": 0}
		}
		e["clipboard"] = nil
		delete(e, "clipboard")
	}
	return e
}

func (s *Sim) hQemuConfigGet(c *reqCtx) (any, error) {
	return s.readGuest(c, "qemu", func(g *guest) any { return s.configOutput(g, c.boolean("current")) })
}

func (s *Sim) hQemuPending(c *reqCtx) (any, error) {
	return s.readGuest(c, "qemu", func(g *guest) any { return s.pendingOutput(g) })
}

var reQemuNewDisk = regexp.MustCompile(`^([a-zA-Z][a-zA-Z0-9\-_.]*[a-zA-Z0-9]):(\d+(?:\.\d+)?|cloudinit)$`)

// prepareQemuDisk allocates STORE:N and STORE:cloudinit drives. Callers hold the write lock.
func (s *Sim) prepareQemuDisk(g *guest, _, val string) (string, []string, error) {
	ms := parseMount(val)
	m := reQemuNewDisk.FindStringSubmatch(ms.volume)
	if m == nil {
		if ms.volume != "none" && ms.volume != "cdrom" && !strings.HasPrefix(ms.volume, "/") {
			if _, _, err := s.lookupVolume(g.node, ms.volume); err != nil {
				return "", nil, fail500("%v", err)
			}
		}
		return val, nil, nil
	}
	st := s.storages[m[1]]
	if st == nil {
		return "", nil, fail500("storage '%s' does not exist", m[1])
	}
	if !st.hasContent("images") {
		return "", nil, fail500("storage '%s' does not support vm images", m[1])
	}
	if m[2] == "cloudinit" {
		name := fmt.Sprintf("vm-%d-cloudinit", g.vmid)
		format := "raw"
		if st.pathBased() {
			name = fmt.Sprintf("%d/vm-%d-cloudinit.qcow2", g.vmid, g.vmid)
			format = "qcow2"
		}
		if _, exists := s.vols[st.ID][name]; exists {
			return "", nil, fail500("cloud-init drive '%s:%s' already exists", st.ID, name)
		}
		vnode := ""
		if !st.Shared {
			vnode = g.node
		}
		s.vols[st.ID][name] = &volume{Storage: st.ID, Name: name, Node: vnode, Size: 4 * mib, Content: "images", Format: format, Ctime: s.now().Unix()}
		ms.volume = st.ID + ":" + name
		ms.opts["media"] = "cdrom"
		return qemuDriveString(ms), []string{st.ID + ":" + name}, nil
	}
	gb, _ := strconv.ParseFloat(m[2], 64)
	size := gibToBytes(gb)
	v := s.allocVolume(st, g.node, g.vmid, false, size, ms.opts["format"])
	delete(ms.opts, "format")
	ms.volume = v.volid()
	ms.opts["size"] = formatSize(size)
	return qemuDriveString(ms), []string{v.volid()}, nil
}

// qemuDriveString prints a drive: the volume first, the other keys sorted.
func qemuDriveString(ms mountSpec) string {
	var b strings.Builder
	b.WriteString(ms.volume)
	for _, k := range sortedKeys(ms.opts) {
		b.WriteString("," + k + "=" + ms.opts[k])
	}
	return b.String()
}

// qemuNetWithMAC makes sure a QEMU netN value carries a MAC ("virtio,bridge=x" → "virtio=MAC,bridge=x").
func (s *Sim) qemuNetWithMAC(vmid int, v string) string {
	parts := strings.Split(v, ",")
	if len(parts) > 0 && !strings.Contains(parts[0], "=") {
		parts[0] = parts[0] + "=" + s.nextMAC(vmid)
		return strings.Join(parts, ",")
	}
	if strings.HasPrefix(parts[0], "model=") && !strings.Contains(v, "macaddr=") {
		model := strings.TrimPrefix(parts[0], "model=")
		parts[0] = model + "=" + s.nextMAC(vmid)
		return strings.Join(parts, ",")
	}
	return v
}

func (s *Sim) hQemuConfigPut(c *reqCtx) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, err := s.loadGuest(c, "qemu")
	if err != nil {
		return nil, err
	}
	return nil, s.updateQemuConfig(c, g)
}

func (s *Sim) hQemuConfigPost(c *reqCtx) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, err := s.loadGuest(c, "qemu")
	if err != nil {
		return nil, err
	}
	if err := s.updateQemuConfig(c, g); err != nil {
		return nil, err
	}
	t := s.newTask(c, g.node, "qmconfig", strconv.Itoa(g.vmid))
	t.logf("update VM %d: %s", g.vmid, configChangeSummary(c))
	if c.has("background_delay") && !t.due.After(s.now()) && t.failWith == "" {
		s.completeTask(t)
		if t.exit == "OK" {
			return nil, nil
		}
	}
	return t.upid, nil
}

func configChangeSummary(c *reqCtx) string {
	var parts []string
	for _, k := range sortedKeys(c.params) {
		switch k {
		case "node", "vmid", "digest":
			continue
		case "cipassword", "sshkeys":
			parts = append(parts, "-"+k+" <hidden>")
			continue
		}
		parts = append(parts, "-"+k+" "+c.str(k))
	}
	return strings.Join(parts, " ")
}

func (s *Sim) hQemuCloudInitGet(c *reqCtx) (any, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	g, err := s.loadGuest(c, "qemu")
	if err != nil {
		return nil, err
	}
	cur := ciSnapshot(effectiveConfig(g))
	gen := g.ciGenerated
	if gen == nil {
		gen = map[string]string{}
	}
	keys := map[string]bool{}
	for k := range cur {
		keys[k] = true
	}
	for k := range gen {
		keys[k] = true
	}
	out := []map[string]any{}
	for _, k := range sortedKeys(keys) {
		e := map[string]any{"key": k}
		gv, inGen := gen[k]
		cv, inCur := cur[k]
		if inGen {
			e["value"] = gv
		}
		if inCur && (!inGen || gv != cv) {
			e["pending"] = cv
		}
		if inGen && !inCur {
			e["delete"] = 1
		}
		if k == "cipassword" {
			if _, ok := e["value"]; ok {
				e["value"] = "**********"
			}
			if _, ok := e["pending"]; ok {
				e["pending"] = "**********"
			}
		}
		out = append(out, e)
	}
	return out, nil
}

func (s *Sim) hQemuCloudInitPut(c *reqCtx) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, err := s.loadGuest(c, "qemu")
	if err != nil {
		return nil, err
	}
	if err := checkLock(g); err != nil {
		return nil, err
	}
	hasDrive := false
	for k, v := range g.conf {
		if qemuDiskKey(k) && isCloudInitVol(parseMount(v)) {
			hasDrive = true
		}
	}
	if !hasDrive {
		return nil, fail500("no cloudinit disk found")
	}
	g.ciGenerated = ciSnapshot(effectiveConfig(g))
	return nil, nil
}

func (s *Sim) hQemuStatusCurrent(c *reqCtx) (any, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	g, err := s.loadGuest(c, "qemu")
	if err != nil {
		return nil, err
	}
	return s.qemuStatus(g, true), nil
}

// qemuWorkerGuest loads the VM inside a worker, as qemu-server's vm_start/vm_stop do:
// a missing config or a lock fails the task, not the request. Callers hold the write lock.
func (s *Sim) qemuWorkerGuest(node string, vmid int, tolerate ...string) (*guest, error) {
	g := s.guests[vmid]
	if g == nil || g.node != node || g.typ != "qemu" {
		return nil, pveErrorf("Configuration file 'nodes/%s/qemu-server/%d.conf' does not exist", node, vmid)
	}
	if err := checkLock(g, tolerate...); err != nil {
		return nil, err
	}
	return g, nil
}

// qemuRunning is check_running: it reads no config, so a missing VM is "not running".
// Callers hold s.mu.
func (s *Sim) qemuRunning(node string, vmid int) (*guest, bool) {
	g := s.guests[vmid]
	if g == nil || g.node != node || g.typ != "qemu" {
		return nil, false
	}
	return g, g.running
}

func (s *Sim) hQemuStart(c *reqCtx) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := checkSkiplock(c); err != nil {
		return nil, err
	}
	vmid, node := c.integer("vmid"), c.node
	if upid, ok := s.haTask(c, false, vmid, true); ok {
		return upid, nil
	}
	t := s.newTask(c, node, "qmstart", strconv.Itoa(vmid))
	t.finish = func(t *task) error {
		g, err := s.qemuWorkerGuest(node, vmid, "suspended")
		if err != nil {
			return err
		}
		if g.conf["template"] == "1" {
			return fmt.Errorf("you can't start a vm if it's a template")
		}
		if g.running {
			return fmt.Errorf("VM %d already running", vmid)
		}
		if g.conf["lock"] == "suspended" {
			t.logf("resuming VM %d from saved state", vmid)
			delete(g.conf, "lock")
		}
		s.startGuest(g)
		return nil
	}
	return t.upid, nil
}

func (s *Sim) hQemuStop(c *reqCtx) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := checkSkiplock(c); err != nil {
		return nil, err
	}
	if c.boolean("keepActive") {
		return nil, paramErr(map[string]string{"keepActive": "Only root may use this option."})
	}
	vmid, node := c.integer("vmid"), c.node
	if upid, ok := s.haTask(c, false, vmid, false); ok {
		return upid, nil
	}
	t := s.newTask(c, node, "qmstop", strconv.Itoa(vmid))
	t.finish = func(*task) error {
		g, err := s.qemuWorkerGuest(node, vmid)
		if err != nil {
			return err
		}
		g.running, g.paused, g.pid = false, false, 0
		return nil
	}
	return t.upid, nil
}

func (s *Sim) hQemuShutdown(c *reqCtx) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := checkSkiplock(c); err != nil {
		return nil, err
	}
	if c.boolean("keepActive") {
		return nil, paramErr(map[string]string{"keepActive": "Only root may use this option."})
	}
	vmid, node := c.integer("vmid"), c.node
	forced := false
	if g, running := s.qemuRunning(node, vmid); running && g.paused {
		if !c.boolean("forceStop") {
			return nil, fail500("VM is paused - cannot shutdown")
		}
		forced = true
	}
	if upid, ok := s.haTask(c, false, vmid, false); ok {
		return upid, nil
	}
	t := s.newTask(c, node, "qmshutdown", strconv.Itoa(vmid))
	if forced {
		t.warnf("VM is paused - stop instead of shutdown")
	}
	t.finish = func(*task) error {
		g, err := s.qemuWorkerGuest(node, vmid)
		if err != nil {
			return err
		}
		g.running, g.paused, g.pid = false, false, 0
		return nil
	}
	return t.upid, nil
}

// qemuRunningTask starts a task that needs a running VM, checked synchronously.
func (s *Sim) qemuRunningTask(c *reqCtx, typ string, finish func(g *guest) error) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := checkSkiplock(c); err != nil {
		return nil, err
	}
	vmid, node := c.integer("vmid"), c.node
	g, running := s.qemuRunning(node, vmid)
	if !running {
		return nil, fail500("VM %d not running", vmid)
	}
	t := s.newTask(c, node, typ, strconv.Itoa(vmid))
	t.finish = func(*task) error {
		if err := checkLock(g); err != nil {
			return err
		}
		return finish(g)
	}
	return t.upid, nil
}

func (s *Sim) hQemuReset(c *reqCtx) (any, error) {
	return s.qemuRunningTask(c, "qmreset", func(g *guest) error { g.paused = false; return nil })
}

func (s *Sim) hQemuSuspend(c *reqCtx) (any, error) {
	if c.boolean("todisk") {
		s.mu.Lock()
		defer s.mu.Unlock()
		if err := checkSkiplock(c); err != nil {
			return nil, err
		}
		if _, running := s.qemuRunning(c.node, c.integer("vmid")); !running {
			return nil, fail500("VM %d not running", c.integer("vmid"))
		}
		if s.ha["vm:"+c.str("vmid")] != nil {
			return nil, fail500("Cannot suspend HA managed VM to disk")
		}
		g, err := s.loadGuest(c, "qemu")
		if err != nil {
			return nil, err
		}
		if err := checkLock(g); err != nil {
			return nil, err
		}
		g.conf["lock"] = "suspending"
		t := s.newTask(c, g.node, "qmsuspend", strconv.Itoa(g.vmid))
		t.finish = func(*task) error {
			g.conf["lock"] = "suspended"
			g.running = false
			g.paused = false
			g.pid = 0
			return nil
		}
		t.rollback = func(*task) { delete(g.conf, "lock") }
		return t.upid, nil
	}
	return s.qemuRunningTask(c, "qmpause", func(g *guest) error { g.paused = true; return nil })
}

func (s *Sim) hQemuResume(c *reqCtx) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, err := s.loadGuest(c, "qemu")
	if err != nil {
		return nil, err
	}
	if g.conf["lock"] == "suspended" {
		t := s.newTask(c, g.node, "qmresume", strconv.Itoa(g.vmid))
		t.finish = func(*task) error {
			delete(g.conf, "lock")
			s.startGuest(g)
			return nil
		}
		return t.upid, nil
	}
	if err := checkLock(g); err != nil {
		return nil, err
	}
	if !g.running {
		return nil, fail500("VM %d not running", g.vmid)
	}
	t := s.newTask(c, g.node, "qmresume", strconv.Itoa(g.vmid))
	t.finish = func(*task) error { g.paused = false; return nil }
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

func (s *Sim) hQemuResize(c *reqCtx) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := checkSkiplock(c); err != nil {
		return nil, err
	}
	vmid := c.integer("vmid")
	node := c.node
	disk := c.str("disk")
	sizeStr := c.str("size")
	digest := c.str("digest")
	t := s.newTask(c, node, "resize", strconv.Itoa(vmid))
	// since qemu-server 8.0 every check runs inside the worker
	t.finish = func(t *task) error {
		g := s.guests[vmid]
		if g == nil || g.node != node || g.typ != "qemu" {
			return pveErrorf("Configuration file 'nodes/%s/qemu-server/%d.conf' does not exist", node, vmid)
		}
		if err := checkLock(g); err != nil {
			return err
		}
		if digest != "" && digest != configDigest(g) {
			return pveErrorf("detected modified configuration - file changed by other user? Try again.")
		}
		val, ok := g.conf[disk]
		if !ok {
			return fmt.Errorf("disk '%s' does not exist", disk)
		}
		ms := parseMount(val)
		if ms.opts["media"] == "cdrom" {
			return fmt.Errorf("you can't resize a cdrom")
		}
		_, vol, err := s.lookupVolume(g.node, ms.volume)
		if err != nil {
			return err
		}
		newSize, err := resizeTarget(sizeStr, vol.Size)
		if err != nil {
			return fmt.Errorf("invalid size '%s'", sizeStr)
		}
		if newSize < vol.Size {
			return fmt.Errorf("shrinking disks is not supported")
		}
		if newSize == vol.Size {
			return nil
		}
		vol.Size = newSize
		ms.opts["size"] = formatSize(newSize)
		g.conf[disk] = qemuDriveString(ms)
		t.logf("Image resized.")
		return nil
	}
	return t.upid, nil
}

func (s *Sim) newUUID(vmid int, salt uint64) string {
	s.macSeq++
	a := mix(uint64(s.opts.Seed) ^ uint64(vmid)<<8 ^ salt ^ s.macSeq<<32)
	b := mix(a ^ 0x5bd1e995)
	return fmt.Sprintf("%08x-%04x-4%03x-%04x-%012x", uint32(a>>32), uint16(a>>16), uint16(a)&0xfff, (uint16(b>>48)&0x3fff)|0x8000, b&0xffffffffffff)
}

func (s *Sim) newSMBIOS(vmid int, old string) string {
	parts := strings.Split(old, ",")
	for i, p := range parts {
		if strings.HasPrefix(p, "uuid=") {
			parts[i] = "uuid=" + s.newUUID(vmid, 2)
			return strings.Join(parts, ",")
		}
	}
	return "uuid=" + s.newUUID(vmid, 2)
}
