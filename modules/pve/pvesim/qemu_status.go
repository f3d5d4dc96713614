package pvesim

import (
	"fmt"
	"strconv"
	"strings"
)

// VM status and power operations (/nodes/{node}/qemu/{vmid}/status/...), after
// qemu-server's API2/Qemu.pm.

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
			qemuRunningDetails(e, g, st)
		}
		if s.opts.PVEMajor >= 9 {
			pressureFields(e, st)
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

// hQemuReboot is a shutdown and a start in one task (qmreboot) that applies pending changes;
// a VM that does not run is refused at once (qemu-server API2/Qemu.pm vm_reboot).
func (s *Sim) hQemuReboot(c *reqCtx) (any, error) {
	return s.qemuRunningTask(c, "qmreboot", func(g *guest) error { s.startGuest(g); return nil })
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

// qemuRunningDetails adds what status/current tells of a running VM beyond the index
// entry: QMP status, machine, balloon, NICs, block statistics.
func qemuRunningDetails(e map[string]any, g *guest, st guestStatValues) {
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

// pressureFields adds the pressure stall figures PVE 9 reports for a running VM.
func pressureFields(e map[string]any, st guestStatValues) {
	e["pressurecpusome"] = st.pressureCPU
	e["pressurecpufull"] = roundTo(st.pressureCPU/2, 2)
	e["pressureiosome"] = st.pressure
	e["pressureiofull"] = roundTo(st.pressure/2, 2)
	e["pressurememorysome"] = 0
	e["pressurememoryfull"] = 0
	e["memhost"] = st.mem
}
