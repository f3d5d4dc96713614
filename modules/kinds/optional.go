package kinds

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"pvebill/modules/plans"
)

// The optional interfaces below are what a guest kind may implement beyond Module, found by type
// assertion on its module. Each capability a kind has lives in one file of the kind's package
// (modules/lxc/reinstall.go, modules/qemu/reinstall.go ...), so that a new capability is a new
// file per kind, and a new kind touches no code outside its package but the registry's table.

// Cloner is a kind whose guests are cloned from a template (R52, docs/proxmox.md §16): a create
// can run only on a node some template of the plan's catalog entry serves.
type Cloner interface {
	// TemplateSources maps each node a guest of the plan with os can be created on to the
	// template it is cloned from: a node holding such a template clones its own; a template
	// whose volumes are all on shared storage also serves every other node (a clone with
	// target), when the plan's clone can land there.
	TemplateSources(ctx context.Context, cl Cluster, p plans.Plan, os string) (map[string]TemplateSource, error)
}

// TemplateSource is the template a clone is made from: its vmid and the node that holds it
// (the clone is sent there; with another node as target when the guest is to live elsewhere).
type TemplateSource struct {
	VMID int
	Node string
}

// SuspendModer is a kind whose suspend follows its plan (a VM stops or pauses, R15); a kind
// without it always stops.
type SuspendModer interface {
	SuspendMode(p plans.Plan) plans.SuspendMode
}

// Reinstaller is a kind whose guest can be replaced in place at its vmid (R22, R26–R30): the
// calls of a reinstall's apply that only the kind knows, each reading its effect back. Having
// it is what makes the kind offer plans.CapReinstall.
type Reinstaller interface {
	// StopForReinstall stops the guest if it runs and reports whether it is HA-managed.
	StopForReinstall(ctx context.Context, g Guest) (ha bool, err error)
	// DestroyForReinstall destroys the guest without destroy-unreferenced-disks (R17), with
	// purge only when asked, and reads back that its config is gone.
	DestroyForReinstall(ctx context.Context, g Guest, purge bool) error
	// Exists reports whether a config is at the guest's vmid.
	Exists(ctx context.Context, g Guest) (bool, error)
	// Recreate makes the guest again at g.VMID from spec (the plan, the OS, the new secrets)
	// and returns the guest where it now is.
	Recreate(ctx context.Context, g Guest, spec CreateSpec) (Guest, error)
	// Reconfigure is what follows Recreate: it applies, or reads back, what a reinstall
	// promises (firewall, onboot, the plan's disk).
	Reconfigure(ctx context.Context, g Guest, spec CreateSpec) error
	// RootDiskFits reports whether a root disk of have bytes, read back after the reinstall,
	// is what a plan of planned bytes makes.
	RootDiskFits(have, planned int64) bool
}

// PowerController is a kind whose guest the customer may stop, shut down and reboot (R40);
// starting is Module.Start. Having it is what makes the kind offer plans.PowerCapabilities.
// Each call waits for its task and reads the power state back (R11), and sends nothing to
// Proxmox when the guest is already where the call would take it.
type PowerController interface {
	// Stop stops the guest hard and reads back that it is stopped.
	Stop(ctx context.Context, g Guest, rep Reporter) error
	// Shutdown asks the guest to shut down within timeout and never stops it: a guest still
	// running when the time is up is ErrShutdownTimeout.
	Shutdown(ctx context.Context, g Guest, timeout time.Duration, rep Reporter) error
	// Reboot reboots a running guest (ErrGuestNotRunning otherwise) and reads back that it
	// runs again.
	Reboot(ctx context.Context, g Guest, rep Reporter) error
}

// Consoler is a kind whose guest has a console the customer may open through pvebill's relay
// (R41): a terminal for a container, a screen for a VM. Having it is what makes the kind offer
// plans.CapConsole.
type Consoler interface {
	// ConsoleProtocols lists the consoles the kind's guests have, the default first.
	ConsoleProtocols() []ConsoleProtocol
	// OpenConsole checks the guest's stamp (R39) and that it runs, then opens its console as
	// the cluster's console user, past Proxmox's authentication. ctx bounds the session's whole
	// life: cancelling it closes the upstream stream. A guest that is not the service's is
	// ErrNotOurs, a stopped one ErrGuestNotRunning.
	OpenConsole(ctx context.Context, g Guest) (*Console, error)
}

// ErrNotOurs is a guest that does not carry its service's stamp (R39).
var ErrNotOurs = errors.New("guest does not carry the service's stamp")

// Snapshotter is a kind whose guests can be snapshotted (R44). Having it is what makes the kind
// offer plans.CapSnapshot (which the plan may still refuse, by its snapshots_max and storage).
// Each change waits for its task and reads its effect back from the guest's snapshot list (R11).
type Snapshotter interface {
	// Snapshots lists the guest's snapshots, without Proxmox's "current" pseudo-entry, oldest
	// first.
	Snapshots(ctx context.Context, g Guest) ([]Snapshot, error)
	// CreateSnapshot takes a snapshot named name and reads back that it is listed.
	CreateSnapshot(ctx context.Context, g Guest, name, description string, rep Reporter) error
	// DeleteSnapshot deletes a snapshot and reads back that it is gone.
	DeleteSnapshot(ctx context.Context, g Guest, name string, rep Reporter) error
	// RollbackSnapshot rolls the guest back to a snapshot (Proxmox stops it first), starts it
	// again when it was running, and reads back that it descends from that snapshot and runs as
	// before.
	RollbackSnapshot(ctx context.Context, g Guest, name string, rep Reporter) error
}

// Backupper is a kind whose guests are backed up with vzdump (R42). The call is the same for
// every kind; the archives differ (vzdump-lxc-…, vzdump-qemu-…, docs/proxmox.md §9.1), and a
// kind knows its own. Having it is what makes the kind offer plans.CapBackup.
type Backupper interface {
	// BackupSubtype is the subtype Proxmox lists for the kind's archives, which is also the
	// kind's word in their file names: vzdump-<subtype>-<vmid>-<time>.<format>.
	BackupSubtype() string
}

// Restorer is a kind whose guest can be replaced in place by one of its own backups (R43): a
// restore is a reinstall whose new guest comes from an archive instead of the OS. Having it is
// what makes the kind offer plans.CapRestore (which a plan without backups still refuses).
type Restorer interface {
	Backupper
	// RestoreOver replaces the stopped guest at g.VMID by the archive (a volume id of one of its
	// stamped backups) in one Proxmox call that destroys the old volumes before it unpacks
	// (docs/proxmox.md §9.3), sending the plan's cores, memory, swap and root size and the stamp
	// explicitly so that nothing of the archive's overrides them (R5). It waits for the task
	// and returns the guest where it now is.
	RestoreOver(ctx context.Context, g Guest, spec CreateSpec, archive string) (Guest, error)
	// ConfigureRestored applies again what the archive may have brought back in its own
	// version: the firewall with its anti-spoofing filter (R9) and onboot, then reads back the
	// stamp and the plan's cores, memory, swap and root size (R11).
	ConfigureRestored(ctx context.Context, g Guest, spec CreateSpec) error
}

// PasswordSetter is a kind whose guest's root password can be changed after create through
// Proxmox's API (R56): a VM, through its QEMU guest agent. Having it is what makes the kind
// offer plans.CapPassword; a kind without it cannot (a container: its reason says so).
type PasswordSetter interface {
	// AgentReady asks the guest's agent whether it answers: nil when it does, ErrAgentNotRunning
	// when it does not (the guest stopped, or its agent not installed or not running).
	AgentReady(ctx context.Context, g Guest) error
	// SetRootPassword sets root's password through the agent and returns once the agent
	// answered; ErrAgentNotRunning when it does not answer. The password goes nowhere else.
	SetRootPassword(ctx context.Context, g Guest, password string) error
}

// Migrator is a kind whose guest can move to another node of its cluster (R53): a VM online with
// its local disks, a container in restart mode (stopped, copied, started on the target).
type Migrator interface {
	// MigrationBlockers names what keeps the guest from moving, as Proxmox reports it (local
	// devices, an ISO on local storage); none is nil.
	MigrationBlockers(ctx context.Context, g Guest) ([]string, error)
	// Migrate moves the guest to target and waits for Proxmox's task; a move Proxmox refuses
	// is ErrMigrationRefused.
	Migrate(ctx context.Context, g Guest, target string) error
}

// ErrMigrationRefused is a move Proxmox refuses for the guest itself (its local devices or
// disks, a container live migration): asking again will not help (R53).
var ErrMigrationRefused = errors.New("guest cannot be migrated")

// ErrAgentNotRunning is a guest whose agent does not answer (R56).
var ErrAgentNotRunning = errors.New("guest agent does not answer")

// IsArchiveOf reports whether a backup archive's file name is one of kind b's archives of
// vmid (the file name, without storage and "backup/").
func IsArchiveOf(b Backupper, name string, vmid int) bool {
	return strings.HasPrefix(name, fmt.Sprintf("vzdump-%s-%d-", b.BackupSubtype(), vmid))
}

// ErrShutdownTimeout is a shutdown that ran out of time: the guest still runs (R40).
var ErrShutdownTimeout = errors.New("guest did not shut down in time")

// ErrGuestNotRunning is a reboot of a guest that does not run (R40).
var ErrGuestNotRunning = errors.New("guest is not running")

// Capabilities is what a module offers: its own list, plus what its optional interfaces
// provide. A capability is listed exactly when the code behind it is there.
func Capabilities(m Module) []plans.Capability {
	out := m.Capabilities()
	if _, ok := m.(Reinstaller); ok {
		out = append(out, plans.CapReinstall)
	}
	if _, ok := m.(PowerController); ok {
		out = append(out, plans.PowerCapabilities...)
	}
	if _, ok := m.(Consoler); ok {
		out = append(out, plans.CapConsole)
	}
	if _, ok := m.(Snapshotter); ok {
		out = append(out, plans.CapSnapshot)
	}
	if _, ok := m.(Backupper); ok {
		out = append(out, plans.CapBackup)
	}
	if _, ok := m.(Restorer); ok {
		out = append(out, plans.CapRestore)
	}
	if _, ok := m.(PasswordSetter); ok {
		out = append(out, plans.CapPassword)
	}
	return out
}
