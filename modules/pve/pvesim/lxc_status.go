package pvesim

import (
	"fmt"
	"strconv"
)

// Container status and power operations (/nodes/{node}/lxc/{vmid}/status/...), after
// pve-container's API2/LXC/Status.pm: the lock and state checks run in the worker, so
// they fail the task, not the request.

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

func (s *Sim) hLXCStop(c *reqCtx) (any, error) { return s.lxcStopTask(c, "vzstop", "mounted") }

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
