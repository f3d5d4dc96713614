package modules

import (
	"context"

	"pvebill/modules/plans"
)

// The optional interfaces below are what a guest kind may implement beyond Module, found by type
// assertion on its module. Each capability a kind has lives in one file of the kind's package
// (modules/lxc/reinstall.go, modules/qemu/reinstall.go ...), so that a new capability is a new
// file per kind, and a new kind touches no code outside its package but the registry's table.

// Cloner is a kind whose guests are cloned from a template: a create runs on the node that
// holds the plan's template for the OS (what a create needs from a node), not on the node
// placement would pick by free memory.
type Cloner interface {
	Template(p plans.Plan, os string) (vmid int, err error)
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

// Capabilities is what a module offers: its own list, plus what its optional interfaces
// provide. A capability is listed exactly when the code behind it is there.
func Capabilities(m Module) []plans.Capability {
	out := m.Capabilities()
	if _, ok := m.(Reinstaller); ok {
		out = append(out, plans.CapReinstall)
	}
	return out
}
