package qemu

import (
	"pvebill/modules"
	"pvebill/modules/plans"
)

// Template is the template a VM of the plan with os is cloned from: its create runs on the node
// holding it (modules.Cloner).
func (m *Module) Template(p plans.Plan, os string) (int, error) { return p.VMTemplate(os) }

var _ modules.Cloner = (*Module)(nil)
