package qemu

import (
	"pvebill/modules/kinds"
	"pvebill/modules/plans"
)

// Template is the template a VM of the plan with os is cloned from: its create runs on the node
// holding it (kinds.Cloner).
func (m *Module) Template(p plans.Plan, os string) (int, error) { return p.VMTemplate(os) }

var _ kinds.Cloner = (*Module)(nil)
