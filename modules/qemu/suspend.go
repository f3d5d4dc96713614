package qemu

import (
	"pvebill/modules/kinds"
	"pvebill/modules/plans"
)

// SuspendMode is the plan's vm_suspend_mode: a VM stops or pauses as its plan says (R15).
func (m *Module) SuspendMode(p plans.Plan) plans.SuspendMode { return p.VMSuspendMode }

var _ kinds.SuspendModer = (*Module)(nil)
