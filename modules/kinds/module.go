package kinds

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"pvebill/modules/plans"
	"pvebill/modules/pve"
	"pvebill/modules/pve/pveconf"
)

// Guest addresses one guest: the cluster's client, the node it is on, its vmid and the service
// it belongs to, named by its billing client and its id (whose stamp it must carry, R39, R46).
type Guest struct {
	Client    *pve.Client
	Cluster   string
	Node      string
	VMID      int
	ClientID  string
	ServiceID string
	// LegacyStamp accepts the one-part stamp that names the service id alone: only a service
	// that existed before service ids became per client may own a guest stamped so (R46).
	LegacyStamp bool
}

// Address is a static IPv4 address for a guest's first interface. A nil *Address means DHCP.
type Address struct {
	CIDR        string // "203.0.113.10/24"; "" without an IPv4 pool (DHCP)
	Gateway     string
	Nameservers []string
	// IP6 is the guest's IPv6 address with the assigned prefix length ("2001:db8:0:1::1/64")
	// and Gateway6 the pool's gateway, from an IPv6 pool (R54); "" without one.
	IP6      string
	Gateway6 string
}

// Merge6 returns a with the IPv6 part of b (an allocation from an IPv6 pool) added; the
// nameservers of both are kept, a's first, without duplicates.
func (a Address) Merge6(b Address) Address {
	a.IP6, a.Gateway6 = b.IP6, b.Gateway6
	ns := append([]string{}, a.Nameservers...)
	for _, n := range b.Nameservers {
		if !slices.Contains(ns, n) {
			ns = append(ns, n)
		}
	}
	a.Nameservers = ns[:min(len(ns), maxNameservers)]
	return a
}

// Readdresser is a kind that writes a service's addresses onto its existing guest (R54): after
// a change of plan, the new plan's pools. a nil address is DHCP.
type Readdresser interface {
	Readdress(ctx context.Context, g Guest, p plans.Plan, a *Address) error
}

// maxNameservers is how many nameservers a guest is given: a resolver reads three.
const maxNameservers = 3

// PlanAddress is what a plan's pools give a service (R54): the allocation from its ip_pool and
// from its ip6_pool, merged; nil when the plan names neither. alloc allocates from one pool.
func PlanAddress(ctx context.Context, p plans.Plan, alloc func(ctx context.Context, pool string) (Address, error)) (*Address, error) {
	var out *Address
	if p.IPPool != nil {
		a, err := alloc(ctx, *p.IPPool)
		if err != nil {
			return nil, err
		}
		out = &a
	}
	if p.IP6Pool != nil {
		a6, err := alloc(ctx, *p.IP6Pool)
		if err != nil {
			return nil, err
		}
		if a6.IP6 == "" {
			return nil, fmt.Errorf("plan %s: ip6_pool %s is not an IPv6 pool", p.Code, *p.IP6Pool)
		}
		merged := Address{}.Merge6(a6)
		if out != nil {
			merged = out.Merge6(a6)
		}
		out = &merged
	}
	return out, nil
}

// CreateSpec is everything a module needs to create a guest. Password and SSHKeys are transient
// (R26): they travel to Proxmox and are never stored.
type CreateSpec struct {
	Plan     plans.Plan
	OS       string
	Hostname string
	Password string
	SSHKeys  []string
	Address  *Address
	// Template is the template a Cloner's create clones from, as placement chose it for the
	// guest's node (nil: the kind finds one that serves the guest's node itself).
	Template *TemplateSource
}

// Inspection is what the guest at a vmid says about itself, read from its config and status.
type Inspection struct {
	Exists    bool
	Kind      plans.GuestType // the kind found at the vmid (may differ from the module's)
	Stamped   bool            // carries the stamp of the Guest's service
	Protected bool
	Lock      string
	Running   bool
	HAManaged bool
	// DiskBytes is the size of the root disk (rootfs or the VM's boot disk); 0 when unknown.
	DiskBytes int64
	OnBoot    bool
}

// Status is a guest's live power state and monitoring, from one status call. A nil field is
// unknown or does not exist for the guest kind (R14): never a healthy-looking zero.
type Status struct {
	Power          string // running, stopped, unknown
	Paused         bool
	CPU            *float64
	MemoryBytes    *int64
	MemoryMaxBytes *int64
	DiskBytes      *int64
	DiskMaxBytes   *int64
	SwapBytes      *int64
	SwapMaxBytes   *int64
	NetInBytes     *int64
	NetOutBytes    *int64
	UptimeSeconds  *int64
	GuestAgent     *bool // QEMU only: whether the agent is configured; always nil for a container
}

// Reporter collects what the tasks of an operation reported: a task that ended with
// "WARNINGS: n" is a success whose warnings are recorded (R11).
type Reporter interface {
	Task(stage string, res pve.TaskResult)
}

// Module is one guest kind's provisioning. Every call that changes a guest
// waits for its Proxmox task and reads the effect back before returning (R11). Calls that stop,
// destroy or reconfigure a guest do so only after the caller has checked its stamp (R39) with
// Inspect.
type Module interface {
	// Kind is the guest type the module provisions.
	Kind() plans.GuestType
	// ResourceType is the type /cluster/resources gives the kind's guests (R3).
	ResourceType() string
	// Capabilities lists what the module implements itself; Capabilities(m) adds what its
	// optional interfaces provide (the plans' capability sets read that).
	Capabilities() []plans.Capability
	// CheckOS refuses an OS the plan does not offer for the kind (its template catalog).
	CheckOS(p plans.Plan, os string) error
	// Inspect reads the guest at g.VMID on g.Node; Exists is false when there is none.
	Inspect(ctx context.Context, g Guest) (Inspection, error)
	// Create makes the guest (stamped, firewalled, configured) without starting it.
	Create(ctx context.Context, g Guest, spec CreateSpec, rep Reporter) error
	// Configure applies everything Create does after making the guest (firewall, onboot,
	// resources, cloud-init): a retried create runs it on the guest it adopts.
	Configure(ctx context.Context, g Guest, spec CreateSpec, rep Reporter) error
	// Start starts the guest; an already running guest is not an error.
	Start(ctx context.Context, g Guest, rep Reporter) error
	// Suspend stops (or, for a VM plan in pause mode, pauses) the guest so that it stays down.
	Suspend(ctx context.Context, g Guest, mode plans.SuspendMode, rep Reporter) error
	// Unsuspend brings a suspended guest back.
	Unsuspend(ctx context.Context, g Guest, rep Reporter) error
	// ChangePlan applies a plan's cores, memory (and swap) and grows the disk; never shrinks.
	ChangePlan(ctx context.Context, g Guest, p plans.Plan, rep Reporter) error
	// Destroy stops and destroys the guest with purge and destroy-unreferenced-disks (R17).
	Destroy(ctx context.Context, g Guest, rep Reporter) error
	// Status reads live power and monitoring from one status call (R14).
	Status(ctx context.Context, g Guest) (Status, error)
}

// StampTag is the tag every guest pvebill creates carries (R39).
const StampTag = "pvebill"

// stampPrefix starts the description line naming the service.
const stampPrefix = "pvebill-service: "

// StampLine is the description line naming a guest's service: its client and its id,
// "pvebill-service: CLIENT/ID" (R39, R46). A service id holds no "/", so the line names one
// service whatever the client id holds.
func StampLine(g Guest) string { return stampPrefix + g.ClientID + "/" + g.ServiceID }

// legacyStampLine is the one-part line guests were stamped with before service ids became per
// client: it names the id alone.
func legacyStampLine(serviceID string) string { return stampPrefix + serviceID }

// StampDescription is the description a new guest is created with.
func StampDescription(g Guest) string {
	return StampLine(g) + "\nManaged by pvebill: do not edit this line."
}

// StampTags adds the stamp tag to a guest's tags.
func StampTags(existing string) string {
	return pveconf.JoinTags(pveconf.NormalizeTags(existing + ";" + StampTag))
}

// HasStamp reports whether a config's description carries the stamp of g's service: a line that
// is exactly the stamp line (R39). The description is the authority because it is written by the
// very call that makes the guest (create or clone); the tag is a marker for people browsing the
// cluster, added with it or right after. The one-part line of earlier versions is accepted only
// when g.LegacyStamp says the service existed before ids became per client (R46): for any other
// service a bare id could be another client's service of the same id.
func HasStamp(description string, g Guest) bool {
	want, legacy := StampLine(g), ""
	if g.LegacyStamp {
		legacy = legacyStampLine(g.ServiceID)
	}
	for _, line := range strings.Split(description, "\n") {
		if t := strings.TrimSpace(line); t == want || (legacy != "" && t == legacy) {
			return true
		}
	}
	return false
}

// RootDiskSize returns the size in bytes of a disk value's size= option (0 when absent or not
// readable).
func RootDiskSize(key, value string) int64 {
	if key == "rootfs" {
		mp, err := pveconf.ParseMountPoint(key, value)
		if err != nil || !mp.SizeKnown {
			return 0
		}
		return mp.SizeBytes
	}
	for _, part := range strings.Split(value, ",") {
		if s, ok := strings.CutPrefix(part, "size="); ok {
			b, known, err := pveconf.ParseConfigSize(s)
			if err == nil && known {
				return b
			}
		}
	}
	return 0
}

// GiB is 1 GiB in bytes.
const GiB = int64(1) << 30

// GiBSize renders a whole number of GiB as a Proxmox size ("20G").
func GiBSize(gib int) string { return fmt.Sprintf("%dG", gib) }

// I64 returns a pointer to v.
func I64(v int64) *int64 { return &v }

// DefaultStateWait bounds how long a module waits for a guest to reach a power state after
// its task ended. An HA-managed guest's start or stop task only queues an HA request
// (docs/proxmox.md §7.1): the state follows later.
const DefaultStateWait = 30 * time.Second

// WaitFor reads cond until it holds, every interval up to timeout (ctx bounds it too). The
// first read is immediate; the last error or a timeout is returned.
func WaitFor(ctx context.Context, timeout, interval time.Duration, cond func(context.Context) (bool, error)) error {
	deadline := time.Now().Add(timeout)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		ok, err := cond(ctx)
		if ok && err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			if err != nil {
				return err
			}
			return errors.New("guest did not reach the expected state in time")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}
