package lxc

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"pvebill/i18n"
	"pvebill/modules/kinds"
	"pvebill/modules/plans"
	"pvebill/modules/pve"
	"pvebill/modules/pve/pveconf"
)

// The contract of the container module.
const (
	// Kind is the guest type this module provisions.
	Kind = plans.Container
	// Interface is the container's first network interface name.
	Interface = "eth0"
	// DefaultShutdownTimeout bounds the graceful shutdown of a suspend before the hard stop (R15).
	DefaultShutdownTimeout = 60 * time.Second
)

// Stage names reported with task results.
const (
	StageCreate    = "create"
	StageConfigure = "configure"
	StageStart     = "start"
	StageShutdown  = "shutdown"
	StageStop      = "stop"
	StageResize    = "resize"
	StageDestroy   = "destroy"
)

// capabilities is what this module implements. A container can never pause, hibernate, boot an
// ISO or the network, or choose firmware (R10); its plan rules (planrules.go) refuse those
// permanently.
var capabilities = []plans.Capability{
	plans.CapCreate, plans.CapSuspend, plans.CapUnsuspend, plans.CapTerminate, plans.CapChangePlan,
	plans.CapUsage, plans.CapMonitoring,
}

// Module provisions LXC containers.
type Module struct {
	// ShutdownTimeout bounds the graceful shutdown before the hard stop (zero: the default).
	ShutdownTimeout time.Duration
	// StateWait bounds the wait for the power state after a start or stop (zero: the default).
	StateWait time.Duration
}

// New returns the container module with its defaults.
func New() *Module {
	return &Module{ShutdownTimeout: DefaultShutdownTimeout, StateWait: kinds.DefaultStateWait}
}

// Kind is plans.Container.
func (m *Module) Kind() plans.GuestType { return Kind }

// CheckOS refuses an OS without a container template in the plan.
func (m *Module) CheckOS(p plans.Plan, os string) error {
	_, err := p.ContainerTemplate(os)
	return err
}

// ResourceType is the type /cluster/resources gives the kind's guests.
func (m *Module) ResourceType() string { return "lxc" }

// Capabilities lists what the module implements.
func (m *Module) Capabilities() []plans.Capability {
	return append([]plans.Capability(nil), capabilities...)
}

func ct(g kinds.Guest) *pve.LXCClient { return g.Client.Node(g.Node).LXC(g.VMID) }

// shutdownTimeout is the graceful shutdown's bound: ShutdownTimeout, or the default.
func (m *Module) shutdownTimeout() time.Duration {
	if m.ShutdownTimeout <= 0 {
		return DefaultShutdownTimeout
	}
	return m.ShutdownTimeout
}

// CreateRequest builds the short create body (R5–R7): vmid (in the path's client), ostemplate,
// hostname, unprivileged=1, cores, memory, swap (always, 0 included), rootfs in allocation form,
// net0 with firewall=1, password and/or ssh-public-keys, nameserver when static, the stamp tag
// and description. Never arch, features, mounts or devices.
func CreateRequest(g kinds.Guest, spec kinds.CreateSpec) (pve.LXCCreateRequest, error) {
	tmpl, err := spec.Plan.ContainerTemplate(spec.OS)
	if err != nil {
		return pve.LXCCreateRequest{}, err
	}
	req, err := plannedRequest(g, spec, tmpl)
	if err != nil {
		return pve.LXCCreateRequest{}, err
	}
	req.Password = pve.Secret(spec.Password)
	req.SSHPublicKeys = strings.Join(spec.SSHKeys, "\n")
	if spec.Address != nil && len(spec.Address.Nameservers) > 0 {
		req.Nameserver = strings.Join(spec.Address.Nameservers, " ")
	}
	return req, nil
}

// plannedRequest is what every create body of a container sends, a restore's too: ostemplate,
// hostname, unprivileged=1, the plan's cores, memory and swap (always, 0 included), the rootfs
// in allocation form at the plan's size, net0 and the stamp (R5, R9, R39).
func plannedRequest(g kinds.Guest, spec kinds.CreateSpec, ostemplate string) (pve.LXCCreateRequest, error) {
	p := spec.Plan
	net0, err := net0Of(spec)
	if err != nil {
		return pve.LXCCreateRequest{}, err
	}
	unpriv := true
	cores, mem, swap := p.Cores, p.MemoryMiB, p.SwapMiB
	return pve.LXCCreateRequest{
		OSTemplate:   ostemplate,
		Hostname:     spec.Hostname,
		Unprivileged: &unpriv,
		Cores:        &cores,
		Memory:       &mem,
		Swap:         &swap,
		RootFS:       pveconf.FormatRootfsAlloc(p.Storage, p.DiskGiB),
		Net:          map[int]string{0: net0},
		Tags:         kinds.StampTag,
		Description:  kinds.StampDescription(g),
	}, nil
}

// fillIPFilter writes the container's static addresses and net0's link-local address into
// ipfilter-net0; a container without a static address (DHCP) gets nothing written.
func fillIPFilter(ctx context.Context, g kinds.Guest, a *kinds.Address) error {
	if a == nil {
		return nil
	}
	c := ct(g)
	_, mac, err := configAndMAC(ctx, c, g)
	if err != nil {
		return err
	}
	return writeIPFilter(ctx, c, g, a, mac)
}

// writeIPFilter makes ipfilter-net0 hold the addresses and the link-local address of mac.
func writeIPFilter(ctx context.Context, c *pve.LXCClient, g kinds.Guest, a *kinds.Address, mac string) error {
	if a == nil {
		return nil
	}
	entries, err := kinds.IPFilterEntries(a, mac)
	if err != nil {
		return fmt.Errorf("container %d: %w", g.VMID, err)
	}
	return kinds.FillIPFilter(ctx, c.Firewall(), fmt.Sprintf("container %d", g.VMID), entries)
}

// configAndMAC reads the container's config and the MAC address of its net0.
func configAndMAC(ctx context.Context, c *pve.LXCClient, g kinds.Guest) (pve.LXCConfig, string, error) {
	cfg, err := c.Config(ctx)
	if err != nil {
		return cfg, "", fmt.Errorf("read container %d config: %w", g.VMID, err)
	}
	mac, err := kinds.Net0MAC(cfg.Net[0])
	if err != nil {
		return cfg, "", fmt.Errorf("container %d: %w", g.VMID, err)
	}
	return cfg, mac, nil
}

// Readdress rewrites net0 with the plan's bridge and rate and the service's addresses, keeping
// its MAC, and makes ipfilter-net0 hold them (R54, R9).
func (m *Module) Readdress(ctx context.Context, g kinds.Guest, p plans.Plan, a *kinds.Address) error {
	c := ct(g)
	cfg, mac, err := configAndMAC(ctx, c, g)
	if err != nil {
		return err
	}
	net0, err := net0With(kinds.CreateSpec{Plan: p, Address: a}, mac)
	if err != nil {
		return err
	}
	if net0 != cfg.Net[0] {
		if err := c.UpdateConfig(ctx, pve.LXCConfigUpdate{Net: map[int]string{0: net0}, Digest: cfg.Digest}); err != nil {
			return fmt.Errorf("update container %d net0: %w", g.VMID, err)
		}
	}
	return writeIPFilter(ctx, c, g, a, mac)
}

// net0Of is the container's interface as the plan and the address make it: on the plan's
// bridge, with the firewall on (R9), the plan's rate, and DHCP or the static address.
func net0Of(spec kinds.CreateSpec) (string, error) { return net0With(spec, "") }

// net0With is net0Of with the MAC net0 keeps; "" lets Proxmox generate one.
func net0With(spec kinds.CreateSpec, mac string) (string, error) {
	p := spec.Plan
	n := pveconf.LXCNet{Name: Interface, Bridge: p.Bridge, Firewall: true, IP: "dhcp", HWAddr: mac}
	if a := spec.Address; a != nil {
		if a.CIDR != "" {
			n.IP, n.GW = a.CIDR, a.Gateway
		}
		// The IPv6 assignment (R54); gw6 only beside a static ip6.
		n.IP6, n.GW6 = a.IP6, a.Gateway6
	}
	if p.RateMbps != nil {
		n.Rate = *p.RateMbps
	}
	net0, err := pveconf.FormatLXCNet(n)
	if err != nil {
		return "", fmt.Errorf("net0: %w", err)
	}
	return net0, nil
}

// Inspect reads the container's config and status.
func (m *Module) Inspect(ctx context.Context, g kinds.Guest) (kinds.Inspection, error) {
	c := ct(g)
	cfg, err := c.Config(ctx)
	if errors.Is(err, pve.ErrNotFound) {
		return kinds.Inspection{}, nil
	}
	if err != nil {
		return kinds.Inspection{}, fmt.Errorf("read container %d config: %w", g.VMID, err)
	}
	in := kinds.Inspection{Exists: true, Kind: Kind, Stamped: kinds.HasStamp(cfg.Description, g),
		Protected: bool(cfg.Protection), Lock: cfg.Lock, OnBoot: bool(cfg.OnBoot),
		DiskBytes: kinds.RootDiskSize("rootfs", cfg.RootFS)}
	st, err := c.Status(ctx)
	if err != nil {
		return in, fmt.Errorf("read container %d status: %w", g.VMID, err)
	}
	in.Running = st.Running()
	in.HAManaged = st.HA != nil && bool(st.HA.Managed)
	return in, nil
}

// Create makes the container, enables its firewall with ipfilter (R9), sets onboot and reads
// the result back (R11). It does not start it.
func (m *Module) Create(ctx context.Context, g kinds.Guest, spec kinds.CreateSpec, rep kinds.Reporter) error {
	req, err := CreateRequest(g, spec)
	if err != nil {
		return err
	}
	c := ct(g)
	res, err := c.Create(ctx, req)
	if err != nil {
		return fmt.Errorf("create container %d: %w", g.VMID, err)
	}
	kinds.Report(rep, StageCreate, res)
	return m.Configure(ctx, g, spec, rep)
}

// Configure writes the container's addresses into ipfilter-net0 (R9, R54: Proxmox's nftables
// backend adds none of them to an explicit set), then enables the guest firewall with ipfilter,
// sets onboot=1 and reads both back with the stamp. Everything else a container gets is in its
// create body.
func (m *Module) Configure(ctx context.Context, g kinds.Guest, spec kinds.CreateSpec, _ kinds.Reporter) error {
	c := ct(g)
	on := true
	if err := fillIPFilter(ctx, g, spec.Address); err != nil {
		return err
	}
	if err := c.Firewall().SetOptions(ctx, pve.GuestFirewallOptionsUpdate{Enable: &on, IPFilter: &on}); err != nil {
		return fmt.Errorf("enable container %d firewall: %w", g.VMID, err)
	}
	if err := c.UpdateConfig(ctx, pve.LXCConfigUpdate{OnBoot: &on}); err != nil {
		return fmt.Errorf("set container %d onboot: %w", g.VMID, err)
	}
	fw, err := c.Firewall().Options(ctx)
	if err != nil {
		return fmt.Errorf("read container %d firewall: %w", g.VMID, err)
	}
	if fw.Enable == nil || !bool(*fw.Enable) || fw.IPFilter == nil || !bool(*fw.IPFilter) {
		return fmt.Errorf("container %d firewall reads back without enable=1,ipfilter=1", g.VMID)
	}
	cfg, err := c.Config(ctx)
	if err != nil {
		return fmt.Errorf("read container %d config: %w", g.VMID, err)
	}
	if !kinds.HasStamp(cfg.Description, g) {
		return fmt.Errorf("container %d reads back without its stamp", g.VMID)
	}
	if !bool(cfg.OnBoot) {
		return fmt.Errorf("container %d reads back without onboot", g.VMID)
	}
	return nil
}

// Start starts the container and reads back that it runs.
func (m *Module) Start(ctx context.Context, g kinds.Guest, rep kinds.Reporter) error {
	c := ct(g)
	st, err := c.Status(ctx)
	if err != nil {
		return fmt.Errorf("read container %d status: %w", g.VMID, err)
	}
	if !st.Running() {
		res, err := c.Start(ctx)
		if err != nil && !errors.Is(err, pve.ErrAlreadyRunning) {
			return fmt.Errorf("start container %d: %w", g.VMID, err)
		}
		kinds.Report(rep, StageStart, res)
	}
	return m.expect(ctx, g, true)
}

// expect reads the container's status back until it is (not) running, within StateWait.
func (m *Module) expect(ctx context.Context, g kinds.Guest, running bool) error {
	wait := m.StateWait
	if wait <= 0 {
		wait = kinds.DefaultStateWait
	}
	last := ""
	err := kinds.WaitFor(ctx, wait, 500*time.Millisecond, func(ctx context.Context) (bool, error) {
		st, err := ct(g).Status(ctx)
		if err != nil {
			return false, fmt.Errorf("read container %d status: %w", g.VMID, err)
		}
		last = st.Status
		return st.Running() == running, nil
	})
	if err != nil && last != "" {
		return fmt.Errorf("container %d reads back %s: %w", g.VMID, last, err)
	}
	return err
}

// Suspend stops the container so that it stays down: onboot=0 first (a node reboot must not
// undo it), the HA state for an HA-managed guest, then a graceful shutdown bounded by
// ShutdownTimeout and a hard stop if that did not end it (R15). A container is never paused:
// a pause mode is refused as permanently impossible, and status/suspend is never called.
func (m *Module) Suspend(ctx context.Context, g kinds.Guest, mode plans.SuspendMode, rep kinds.Reporter) error {
	if mode == plans.SuspendPause {
		return i18n.NewProblem(http.StatusConflict, i18n.CodeNotPossibleContainer).Perm(i18n.Permanent)
	}
	c := ct(g)
	off := false
	if err := c.UpdateConfig(ctx, pve.LXCConfigUpdate{OnBoot: &off}); err != nil {
		return fmt.Errorf("clear container %d onboot: %w", g.VMID, err)
	}
	st, err := c.Status(ctx)
	if err != nil {
		return fmt.Errorf("read container %d status: %w", g.VMID, err)
	}
	if st.HA != nil && bool(st.HA.Managed) {
		if err := g.Client.Cluster().SetHAState(ctx, pve.HAResourceID(pve.HAContainer, g.VMID), "stopped"); err != nil {
			return err
		}
	}
	if st.Running() {
		res, err := c.Shutdown(ctx, int(m.shutdownTimeout().Seconds()), false)
		switch {
		case err == nil:
			kinds.Report(rep, StageShutdown, res)
		case errors.Is(err, pve.ErrNotRunning):
		case errors.Is(err, pve.ErrTaskFailed):
			// The guest did not shut down in time: stop it.
			res, err := c.Stop(ctx)
			if err != nil && !errors.Is(err, pve.ErrNotRunning) {
				return fmt.Errorf("stop container %d: %w", g.VMID, err)
			}
			kinds.Report(rep, StageStop, res)
		default:
			return fmt.Errorf("shut down container %d: %w", g.VMID, err)
		}
	}
	return m.expect(ctx, g, false)
}

// Unsuspend restores onboot (and the HA state) and starts the container.
func (m *Module) Unsuspend(ctx context.Context, g kinds.Guest, rep kinds.Reporter) error {
	c := ct(g)
	on := true
	if err := c.UpdateConfig(ctx, pve.LXCConfigUpdate{OnBoot: &on}); err != nil {
		return fmt.Errorf("restore container %d onboot: %w", g.VMID, err)
	}
	st, err := c.Status(ctx)
	if err != nil {
		return fmt.Errorf("read container %d status: %w", g.VMID, err)
	}
	if st.HA != nil && bool(st.HA.Managed) {
		if err := g.Client.Cluster().SetHAState(ctx, pve.HAResourceID(pve.HAContainer, g.VMID), "started"); err != nil {
			return err
		}
	}
	return m.Start(ctx, g, rep)
}

// ChangePlan applies cores, memory and swap online and grows the root filesystem to the plan
// size; it never shrinks (the caller refuses a shrink before).
func (m *Module) ChangePlan(ctx context.Context, g kinds.Guest, p plans.Plan, rep kinds.Reporter) error {
	c := ct(g)
	cores, mem, swap := p.Cores, p.MemoryMiB, p.SwapMiB
	if err := c.UpdateConfig(ctx, pve.LXCConfigUpdate{Cores: &cores, Memory: &mem, Swap: &swap}); err != nil {
		return fmt.Errorf("update container %d resources: %w", g.VMID, err)
	}
	cfg, err := c.Config(ctx)
	if err != nil {
		return fmt.Errorf("read container %d config: %w", g.VMID, err)
	}
	want := int64(p.DiskGiB) * kinds.GiB
	cur := kinds.RootDiskSize("rootfs", cfg.RootFS)
	if cur == 0 {
		return fmt.Errorf("container %d rootfs size cannot be read", g.VMID)
	}
	if want > cur {
		res, err := c.Resize(ctx, pve.ResizeRequest{Disk: "rootfs", Size: kinds.GiBSize(p.DiskGiB), Digest: cfg.Digest})
		if err != nil {
			return fmt.Errorf("grow container %d rootfs: %w", g.VMID, err)
		}
		kinds.Report(rep, StageResize, res)
		if cfg, err = c.Config(ctx); err != nil {
			return fmt.Errorf("read container %d config: %w", g.VMID, err)
		}
		if got := kinds.RootDiskSize("rootfs", cfg.RootFS); got < want {
			return fmt.Errorf("container %d rootfs reads back %d bytes, want %d", g.VMID, got, want)
		}
	}
	if cfg.Cores == nil || cfg.Cores.Int() != cores || cfg.Memory == nil || cfg.Memory.Int() != mem ||
		cfg.Swap == nil || cfg.Swap.Int() != swap {
		return fmt.Errorf("container %d resources do not read back as the plan's", g.VMID)
	}
	return nil
}

// Destroy stops the container and destroys it with purge=1 and destroy-unreferenced-disks=1,
// so that no volume named for the vmid is left for a future guest with that id (R17); it reads
// back that the config is gone.
func (m *Module) Destroy(ctx context.Context, g kinds.Guest, rep kinds.Reporter) error {
	c := ct(g)
	st, err := c.Status(ctx)
	if err != nil {
		return fmt.Errorf("read container %d status: %w", g.VMID, err)
	}
	if st.Running() {
		res, err := c.Stop(ctx)
		if err != nil && !errors.Is(err, pve.ErrNotRunning) {
			return fmt.Errorf("stop container %d: %w", g.VMID, err)
		}
		kinds.Report(rep, StageStop, res)
		if err := m.expect(ctx, g, false); err != nil {
			return err
		}
	}
	res, err := c.Delete(ctx, pve.LXCDeleteOptions{Purge: true, DestroyUnreferencedDisks: true})
	if err != nil {
		return fmt.Errorf("destroy container %d: %w", g.VMID, err)
	}
	kinds.Report(rep, StageDestroy, res)
	if _, err := c.Config(ctx); !errors.Is(err, pve.ErrNotFound) {
		return fmt.Errorf("container %d still has a config after destroy (%v)", g.VMID, err) //nolint:errorlint // the guest's survival is the failure; the read's error is detail, not its cause
	}
	return nil
}

// Status reads power and monitoring from status/current. A container has no guest agent:
// GuestAgent stays nil (R14).
func (m *Module) Status(ctx context.Context, g kinds.Guest) (kinds.Status, error) {
	st, err := ct(g).Status(ctx)
	if err != nil {
		return kinds.Status{Power: "unknown"}, fmt.Errorf("read container %d status: %w", g.VMID, err)
	}
	out := kinds.Status{Power: "unknown"}
	switch st.Status {
	case "running", "stopped":
		out.Power = st.Status
	}
	cpu := float64(st.CPU)
	out.CPU = &cpu
	out.MemoryBytes, out.MemoryMaxBytes = kinds.I64(int64(st.Mem)), kinds.I64(int64(st.MaxMem))
	out.DiskBytes, out.DiskMaxBytes = kinds.I64(int64(st.Disk)), kinds.I64(int64(st.MaxDisk))
	if st.Swap != nil {
		out.SwapBytes = kinds.I64(int64(*st.Swap))
	}
	if st.MaxSwap != nil {
		out.SwapMaxBytes = kinds.I64(int64(*st.MaxSwap))
	}
	out.NetInBytes, out.NetOutBytes = kinds.I64(int64(st.NetIn)), kinds.I64(int64(st.NetOut))
	out.UptimeSeconds = kinds.I64(int64(st.Uptime))
	return out, nil
}

var _ kinds.Module = (*Module)(nil)
