package qemu

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"pvebill/modules/kinds"
	"pvebill/modules/plans"
	"pvebill/modules/pve"
	"pvebill/modules/pve/pveconf"
)

// The contract of the VM module.
const (
	// Kind is the guest type this module provisions.
	Kind = plans.VM
	// CIUser is the cloud-init user that receives the password and the SSH keys.
	CIUser = "root"
	// IPFilterSet is the ipset that restricts net0's source addresses (R9). It must hold the
	// VM's addresses before ipfilter is enabled, or the VM is cut off.
	IPFilterSet = kinds.IPFilterSet
	// DefaultShutdownTimeout bounds the graceful shutdown of a stop-mode suspend.
	DefaultShutdownTimeout = 60 * time.Second
)

// Stage names reported with task results.
const (
	StageClone    = "clone"
	StageResize   = "resize"
	StageStart    = "start"
	StageShutdown = "shutdown"
	StageStop     = "stop"
	StagePause    = "pause"
	StageResume   = "resume"
	StageDestroy  = "destroy"
)

// capabilities is what this module implements itself; what its optional interfaces add
// (reinstall) is computed by kinds.Capabilities.
var capabilities = []plans.Capability{
	plans.CapCreate, plans.CapSuspend, plans.CapUnsuspend, plans.CapTerminate, plans.CapChangePlan,
	plans.CapUsage, plans.CapMonitoring,
}

// Module provisions QEMU VMs by cloning the plan's template (R8).
type Module struct {
	// ShutdownTimeout bounds the graceful shutdown of a stop-mode suspend (zero: the default).
	ShutdownTimeout time.Duration
	// StateWait bounds the wait for the power state after a start or stop (zero: the default).
	StateWait time.Duration
}

// New returns the VM module with its defaults.
func New() *Module {
	return &Module{ShutdownTimeout: DefaultShutdownTimeout, StateWait: kinds.DefaultStateWait}
}

// expect reads the VM's status back until want holds, within StateWait.
func (m *Module) expect(ctx context.Context, g kinds.Guest, what string, want func(pve.QEMUStatus) bool) error {
	wait := m.StateWait
	if wait <= 0 {
		wait = kinds.DefaultStateWait
	}
	last := ""
	err := kinds.WaitFor(ctx, wait, 500*time.Millisecond, func(ctx context.Context) (bool, error) {
		st, err := vm(g).Status(ctx)
		if err != nil {
			return false, fmt.Errorf("read VM %d status: %w", g.VMID, err)
		}
		last = st.Status + "/" + st.QMPStatus
		return want(st), nil
	})
	if err != nil && last != "" {
		return fmt.Errorf("VM %d reads back %s, not %s: %w", g.VMID, last, what, err)
	}
	return err
}

// Kind is plans.VM.
func (m *Module) Kind() plans.GuestType { return Kind }

// CheckOS refuses an OS without a VM template in the plan.
func (m *Module) CheckOS(p plans.Plan, os string) error {
	_, err := p.VMTemplate(os)
	return err
}

// ResourceType is the type /cluster/resources gives the kind's guests.
func (m *Module) ResourceType() string { return "qemu" }

// Capabilities lists what the module implements.
func (m *Module) Capabilities() []plans.Capability {
	return append([]plans.Capability(nil), capabilities...)
}

func vm(g kinds.Guest) *pve.QEMUClient { return g.Client.Node(g.Node).QEMU(g.VMID) }

// bootDisk returns the key of the VM's boot disk: the first disk of boot=order=…, else the
// first of scsi0, virtio0, sata0, ide0 present.
func bootDisk(cfg pve.QEMUConfig) string {
	if order, ok := strings.CutPrefix(cfg.Boot, "order="); ok {
		for _, k := range strings.Split(order, ";") {
			if v, ok := cfg.Disks[k]; ok && !strings.Contains(v, "media=cdrom") {
				return k
			}
		}
	}
	for _, k := range []string{"scsi0", "virtio0", "sata0", "ide0"} {
		if v, ok := cfg.Disks[k]; ok && !strings.Contains(v, "media=cdrom") {
			return k
		}
	}
	return ""
}

// Inspect reads the VM's config and status.
func (m *Module) Inspect(ctx context.Context, g kinds.Guest) (kinds.Inspection, error) {
	q := vm(g)
	cfg, err := q.Config(ctx)
	if errors.Is(err, pve.ErrNotFound) {
		return kinds.Inspection{}, nil
	}
	if err != nil {
		return kinds.Inspection{}, fmt.Errorf("read VM %d config: %w", g.VMID, err)
	}
	in := kinds.Inspection{Exists: true, Kind: Kind, Stamped: kinds.HasStamp(cfg.Description, g),
		Protected: bool(cfg.Protection), Lock: cfg.Lock, OnBoot: bool(cfg.OnBoot)}
	if k := bootDisk(cfg); k != "" {
		in.DiskBytes = kinds.RootDiskSize(k, cfg.Disks[k])
	}
	st, err := q.Status(ctx)
	if err != nil {
		return in, fmt.Errorf("read VM %d status: %w", g.VMID, err)
	}
	in.Running = st.Running()
	in.HAManaged = st.HA != nil && bool(st.HA.Managed)
	return in, nil
}

// Create clones the plan's template onto g.VMID on g.Node — from the template placement chose,
// with target when that template is on another node (R52) — a full clone unless the plan says
// linked, with the stamp in its description, then sets cores, memory,
// cloud-init (ciuser, cipassword, sshkeys in Proxmox's encoding, ipconfig0, nameserver), the
// stamp tag, onboot, net0's bridge and firewall=1, grows the boot disk to the plan size, fills
// the ipfilter-net0 ipset and only then enables the firewall with ipfilter (R8, R9).
func (m *Module) Create(ctx context.Context, g kinds.Guest, spec kinds.CreateSpec, rep kinds.Reporter) error {
	p := spec.Plan
	src, err := m.sourceFor(ctx, g, spec)
	if err != nil {
		return err
	}
	full := p.VMClone != plans.CloneLinked
	req := pve.QEMUCloneRequest{NewID: g.VMID, Name: spec.Hostname, Description: kinds.StampDescription(g), Full: &full}
	if full {
		req.Storage = p.Storage
	}
	if src.Node != g.Node {
		req.Target = g.Node
	}
	res, err := g.Client.Node(src.Node).QEMU(src.VMID).Clone(ctx, req)
	if err != nil {
		return fmt.Errorf("clone template %d on %s to %d on %s: %w", src.VMID, src.Node, g.VMID, g.Node, err)
	}
	kinds.Report(rep, StageClone, res)
	return m.Configure(ctx, g, spec, rep)
}

// Configure sets the clone's resources, cloud-init, stamp tag, onboot and net0, grows its boot
// disk and enables its firewall (ipset first), reading each back.
func (m *Module) Configure(ctx context.Context, g kinds.Guest, spec kinds.CreateSpec, rep kinds.Reporter) error {
	p := spec.Plan
	q := vm(g)
	cfg, err := q.Config(ctx)
	if err != nil {
		return fmt.Errorf("read VM %d config: %w", g.VMID, err)
	}
	if !kinds.HasStamp(cfg.Description, g) {
		return fmt.Errorf("VM %d reads back without its stamp", g.VMID)
	}
	net0, err := vmNet0(cfg.Net[0], p)
	if err != nil {
		return fmt.Errorf("VM %d net0: %w", g.VMID, err)
	}
	ipconfig := ipconfigOf(spec.Address)
	on := true
	cores, mem := p.Cores, p.MemoryMiB
	u := pve.QEMUConfigUpdate{
		Tags: kinds.StampTags(cfg.Tags), Cores: &cores, Memory: &mem, OnBoot: &on,
		CIUser: CIUser, CIPassword: pve.Secret(spec.Password), SSHKeys: spec.SSHKeys,
		IPConfig: map[int]string{0: ipconfig}, Net: map[int]string{0: net0}, Digest: cfg.Digest,
	}
	if a := spec.Address; a != nil && len(a.Nameservers) > 0 {
		u.Nameserver = strings.Join(a.Nameservers, " ")
	}
	if err := q.UpdateConfig(ctx, u); err != nil {
		return fmt.Errorf("configure VM %d: %w", g.VMID, err)
	}
	if err := m.grow(ctx, g, p, rep); err != nil {
		return err
	}
	if err := m.firewall(ctx, g, spec.Address); err != nil {
		return err
	}
	cfg, err = q.Config(ctx)
	if err != nil {
		return fmt.Errorf("read VM %d config: %w", g.VMID, err)
	}
	if cfg.Cores == nil || cfg.Cores.Int() != cores || cfg.IPConfig[0] != ipconfig || cfg.CIUser != CIUser || !bool(cfg.OnBoot) {
		return fmt.Errorf("VM %d configuration does not read back as sent", g.VMID)
	}
	return nil
}

// Readdress writes the service's addresses into ipconfig0 and ipfilter-net0 and turns ipfilter on
// for a static IPv4 address (R54, R9); cloud-init applies ipconfig0 at the next boot.
func (m *Module) Readdress(ctx context.Context, g kinds.Guest, _ plans.Plan, a *kinds.Address) error {
	q := vm(g)
	cfg, err := q.Config(ctx)
	if err != nil {
		return fmt.Errorf("read VM %d config: %w", g.VMID, err)
	}
	ipconfig := ipconfigOf(a)
	if cfg.IPConfig[0] != ipconfig {
		u := pve.QEMUConfigUpdate{IPConfig: map[int]string{0: ipconfig}, Digest: cfg.Digest}
		if a != nil && len(a.Nameservers) > 0 {
			u.Nameserver = strings.Join(a.Nameservers, " ")
		}
		if err := q.UpdateConfig(ctx, u); err != nil {
			return fmt.Errorf("update VM %d ipconfig0: %w", g.VMID, err)
		}
	}
	return m.firewall(ctx, g, a)
}

// ipconfigOf is cloud-init's ipconfig0 for the address: the static IPv4 address or DHCP, and
// the IPv6 assignment with its gateway (R54). gw6 is written only beside a static ip6, never
// beside auto or dhcp, and never manual: cloud-init would drop the interface's whole
// configuration.
func ipconfigOf(a *kinds.Address) string {
	parts := []string{"ip=dhcp"}
	if a != nil && a.CIDR != "" {
		parts[0] = "ip=" + a.CIDR
		if a.Gateway != "" {
			parts = append(parts, "gw="+a.Gateway)
		}
	}
	if a != nil && a.IP6 != "" {
		parts = append(parts, "ip6="+a.IP6)
		if a.Gateway6 != "" {
			parts = append(parts, "gw6="+a.Gateway6)
		}
	}
	return strings.Join(parts, ",")
}

// vmNet0 rewrites the clone's net0 for the plan: the model and MAC the clone got, the plan's
// bridge and rate, firewall=1, and every other option as it was. It writes the canonical
// model=,macaddr= form rather than the model-as-key shorthand.
func vmNet0(current string, p plans.Plan) (string, error) {
	n, err := pveconf.ParseNet(current)
	if err != nil {
		return "", err
	}
	if n.Model == "" {
		return "", fmt.Errorf("net0 %q has no model", current)
	}
	parts := []string{"model=" + n.Model}
	if n.HWAddr != "" {
		parts = append(parts, "macaddr="+n.HWAddr)
	}
	parts = append(parts, "bridge="+p.Bridge, "firewall=1")
	if n.Tag > 0 {
		parts = append(parts, "tag="+strconv.Itoa(n.Tag))
	}
	if n.MTU > 0 {
		parts = append(parts, "mtu="+strconv.Itoa(n.MTU))
	}
	if p.RateMbps != nil {
		parts = append(parts, "rate="+strconv.FormatFloat(*p.RateMbps, 'f', -1, 64))
	}
	for _, o := range n.Extra {
		parts = append(parts, o.Key+"="+o.Value)
	}
	return strings.Join(parts, ","), nil
}

// firewall fills ipfilter-net0 with the VM's address and then enables the firewall with
// ipfilter. Proxmox adds nothing but link-local to a VM's set, so enabling ipfilter on an empty
// set would cut the VM off (R9): a VM without a static IPv4 address (DHCP) gets the firewall
// enabled without ipfilter, its set still holding its IPv6 assignment (R54) for when it gets one.
func (m *Module) firewall(ctx context.Context, g kinds.Guest, a *kinds.Address) error {
	fw := vm(g).Firewall()
	on := true
	opts := pve.GuestFirewallOptionsUpdate{Enable: &on}
	if a != nil {
		if err := fillIPFilter(ctx, g, fw, a); err != nil {
			return err
		}
		if a.CIDR != "" {
			opts.IPFilter = &on
		}
	}
	if err := fw.SetOptions(ctx, opts); err != nil {
		return fmt.Errorf("enable VM %d firewall: %w", g.VMID, err)
	}
	got, err := fw.Options(ctx)
	if err != nil {
		return fmt.Errorf("read VM %d firewall: %w", g.VMID, err)
	}
	if got.Enable == nil || !bool(*got.Enable) || (opts.IPFilter != nil && (got.IPFilter == nil || !bool(*got.IPFilter))) {
		return fmt.Errorf("VM %d firewall does not read back as enabled", g.VMID)
	}
	return nil
}

// fillIPFilter puts the VM's addresses into its ipfilter-net0 ipset (R9, R54): the IPv4
// address, the IPv6 assignment and the link-local address of net0's MAC.
func fillIPFilter(ctx context.Context, g kinds.Guest, fw *pve.FirewallClient, a *kinds.Address) error {
	cfg, err := vm(g).Config(ctx)
	if err != nil {
		return fmt.Errorf("read VM %d config: %w", g.VMID, err)
	}
	mac, err := kinds.Net0MAC(cfg.Net[0])
	if err != nil {
		return fmt.Errorf("VM %d: %w", g.VMID, err)
	}
	entries, err := kinds.IPFilterEntries(a, mac)
	if err != nil {
		return fmt.Errorf("VM %d: %w", g.VMID, err)
	}
	return kinds.FillIPFilter(ctx, fw, fmt.Sprintf("VM %d", g.VMID), entries)
}

// grow resizes the boot disk to the plan size when it is smaller; never shrinks.
func (m *Module) grow(ctx context.Context, g kinds.Guest, p plans.Plan, rep kinds.Reporter) error {
	q := vm(g)
	cfg, err := q.Config(ctx)
	if err != nil {
		return fmt.Errorf("read VM %d config: %w", g.VMID, err)
	}
	disk := bootDisk(cfg)
	if disk == "" {
		return fmt.Errorf("VM %d has no boot disk", g.VMID)
	}
	cur := kinds.RootDiskSize(disk, cfg.Disks[disk])
	want := int64(p.DiskGiB) * kinds.GiB
	if cur == 0 {
		return fmt.Errorf("VM %d %s size cannot be read", g.VMID, disk)
	}
	if want <= cur {
		return nil
	}
	res, err := q.Resize(ctx, pve.ResizeRequest{Disk: disk, Size: kinds.GiBSize(p.DiskGiB), Digest: cfg.Digest})
	if err != nil {
		return fmt.Errorf("grow VM %d %s: %w", g.VMID, disk, err)
	}
	kinds.Report(rep, StageResize, res)
	if cfg, err = q.Config(ctx); err != nil {
		return fmt.Errorf("read VM %d config: %w", g.VMID, err)
	}
	if got := kinds.RootDiskSize(disk, cfg.Disks[disk]); got < want {
		return fmt.Errorf("VM %d %s reads back %d bytes, want %d", g.VMID, disk, got, want)
	}
	return nil
}

// Start starts the VM (resumes it when paused) and reads back that it runs.
func (m *Module) Start(ctx context.Context, g kinds.Guest, rep kinds.Reporter) error {
	q := vm(g)
	st, err := q.Status(ctx)
	if err != nil {
		return fmt.Errorf("read VM %d status: %w", g.VMID, err)
	}
	switch {
	case st.Paused():
		res, err := q.Resume(ctx)
		if err != nil {
			return fmt.Errorf("resume VM %d: %w", g.VMID, err)
		}
		kinds.Report(rep, StageResume, res)
	case !st.Running():
		res, err := q.Start(ctx)
		if err != nil && !errors.Is(err, pve.ErrAlreadyRunning) {
			return fmt.Errorf("start VM %d: %w", g.VMID, err)
		}
		kinds.Report(rep, StageStart, res)
	}
	return m.expect(ctx, g, "running", func(st pve.QEMUStatus) bool { return st.Running() && !st.Paused() })
}

// Suspend follows the plan's mode: pause keeps the VM in memory (status/suspend without
// todisk); stop clears onboot, shuts down with a timeout and stops if needed.
func (m *Module) Suspend(ctx context.Context, g kinds.Guest, mode plans.SuspendMode, rep kinds.Reporter) error {
	q := vm(g)
	if mode == plans.SuspendPause {
		st, err := q.Status(ctx)
		if err != nil {
			return fmt.Errorf("read VM %d status: %w", g.VMID, err)
		}
		if st.Running() && !st.Paused() {
			res, err := q.Suspend(ctx)
			if err != nil {
				return fmt.Errorf("pause VM %d: %w", g.VMID, err)
			}
			kinds.Report(rep, StagePause, res)
		}
		return m.expect(ctx, g, "paused", func(st pve.QEMUStatus) bool { return !st.Running() || st.Paused() })
	}
	off := false
	if err := q.UpdateConfig(ctx, pve.QEMUConfigUpdate{OnBoot: &off}); err != nil {
		return fmt.Errorf("clear VM %d onboot: %w", g.VMID, err)
	}
	st, err := q.Status(ctx)
	if err != nil {
		return fmt.Errorf("read VM %d status: %w", g.VMID, err)
	}
	if st.HA != nil && bool(st.HA.Managed) {
		if err := g.Client.Cluster().SetHAState(ctx, pve.HAResourceID(pve.HAVM, g.VMID), "stopped"); err != nil {
			return err
		}
	}
	if st.Running() {
		how := stopGracefully
		if st.Paused() {
			how = stopAtOnce // a paused VM cannot answer ACPI
		}
		if err := m.stop(ctx, g, how, rep); err != nil {
			return err
		}
	}
	return m.expect(ctx, g, "stopped", func(st pve.QEMUStatus) bool { return !st.Running() })
}

// stopMode is how stop ends a VM.
type stopMode int

const (
	stopAtOnce     stopMode = iota // a hard stop
	stopGracefully                 // an ACPI shutdown first, a hard stop when that fails
)

// stop shuts the VM down gracefully (when asked) and stops it when that fails.
func (m *Module) stop(ctx context.Context, g kinds.Guest, how stopMode, rep kinds.Reporter) error {
	q := vm(g)
	if how == stopGracefully {
		timeout := m.ShutdownTimeout
		if timeout <= 0 {
			timeout = DefaultShutdownTimeout
		}
		res, err := q.Shutdown(ctx, int(timeout.Seconds()), false)
		switch {
		case err == nil:
			kinds.Report(rep, StageShutdown, res)
			return nil
		case errors.Is(err, pve.ErrNotRunning):
			return nil
		case !errors.Is(err, pve.ErrTaskFailed):
			return fmt.Errorf("shut down VM %d: %w", g.VMID, err)
		}
	}
	res, err := q.Stop(ctx)
	if err != nil && !errors.Is(err, pve.ErrNotRunning) {
		return fmt.Errorf("stop VM %d: %w", g.VMID, err)
	}
	kinds.Report(rep, StageStop, res)
	return nil
}

// Unsuspend restores onboot and the HA state and starts (or resumes) the VM.
func (m *Module) Unsuspend(ctx context.Context, g kinds.Guest, rep kinds.Reporter) error {
	q := vm(g)
	on := true
	if err := q.UpdateConfig(ctx, pve.QEMUConfigUpdate{OnBoot: &on}); err != nil {
		return fmt.Errorf("restore VM %d onboot: %w", g.VMID, err)
	}
	st, err := q.Status(ctx)
	if err != nil {
		return fmt.Errorf("read VM %d status: %w", g.VMID, err)
	}
	if st.HA != nil && bool(st.HA.Managed) {
		if err := g.Client.Cluster().SetHAState(ctx, pve.HAResourceID(pve.HAVM, g.VMID), "started"); err != nil {
			return err
		}
	}
	return m.Start(ctx, g, rep)
}

// ChangePlan applies cores and memory and grows the boot disk; never shrinks.
func (m *Module) ChangePlan(ctx context.Context, g kinds.Guest, p plans.Plan, rep kinds.Reporter) error {
	q := vm(g)
	cores, mem := p.Cores, p.MemoryMiB
	if err := q.UpdateConfig(ctx, pve.QEMUConfigUpdate{Cores: &cores, Memory: &mem}); err != nil {
		return fmt.Errorf("update VM %d resources: %w", g.VMID, err)
	}
	if err := m.grow(ctx, g, p, rep); err != nil {
		return err
	}
	cfg, err := q.Config(ctx)
	if err != nil {
		return fmt.Errorf("read VM %d config: %w", g.VMID, err)
	}
	if cfg.Cores == nil || cfg.Cores.Int() != cores {
		return fmt.Errorf("VM %d resources do not read back as the plan's", g.VMID)
	}
	return nil
}

// Destroy stops the VM and destroys it with purge=1 and destroy-unreferenced-disks=1 (R17),
// then reads back that the config is gone.
func (m *Module) Destroy(ctx context.Context, g kinds.Guest, rep kinds.Reporter) error {
	q := vm(g)
	st, err := q.Status(ctx)
	if err != nil {
		return fmt.Errorf("read VM %d status: %w", g.VMID, err)
	}
	if st.Running() {
		if err := m.stop(ctx, g, stopAtOnce, rep); err != nil {
			return err
		}
		if err := m.expect(ctx, g, "stopped", func(st pve.QEMUStatus) bool { return !st.Running() }); err != nil {
			return err
		}
	}
	res, err := q.Delete(ctx, pve.QEMUDeleteOptions{Purge: true, DestroyUnreferencedDisks: true})
	if err != nil {
		return fmt.Errorf("destroy VM %d: %w", g.VMID, err)
	}
	kinds.Report(rep, StageDestroy, res)
	if _, err := q.Config(ctx); !errors.Is(err, pve.ErrNotFound) {
		return fmt.Errorf("VM %d still has a config after destroy (%v)", g.VMID, err) //nolint:errorlint // the guest's survival is the failure; the read's error is detail, not its cause
	}
	return nil
}

// Status reads power and monitoring from status/current. A VM's disk usage is not reported by
// Proxmox (always 0) and it has no swap of its own: those stay nil (R14).
func (m *Module) Status(ctx context.Context, g kinds.Guest) (kinds.Status, error) {
	st, err := vm(g).Status(ctx)
	if err != nil {
		return kinds.Status{Power: "unknown"}, fmt.Errorf("read VM %d status: %w", g.VMID, err)
	}
	out := kinds.Status{Power: "unknown", Paused: st.Paused()}
	switch st.Status {
	case "running", "stopped":
		out.Power = st.Status
	}
	cpu := float64(st.CPU)
	out.CPU = &cpu
	out.MemoryBytes, out.MemoryMaxBytes = kinds.I64(int64(st.Mem)), kinds.I64(int64(st.MaxMem))
	out.DiskMaxBytes = kinds.I64(int64(st.MaxDisk))
	out.NetInBytes, out.NetOutBytes = kinds.I64(int64(st.NetIn)), kinds.I64(int64(st.NetOut))
	out.UptimeSeconds = kinds.I64(int64(st.Uptime))
	agent := bool(st.Agent)
	out.GuestAgent = &agent
	return out, nil
}

var _ kinds.Module = (*Module)(nil)
