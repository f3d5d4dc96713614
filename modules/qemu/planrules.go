package qemu

import (
	"maps"
	"slices"
	"strconv"

	"pvebill/i18n"
	"pvebill/modules/plans"
)

// The VM's plan rules are registered with the plans when the package is loaded: every binary
// that can provision a VM judges its plans by them.
func init() { plans.RegisterKind(planRules{}) }

// Fields of a plan that only a VM uses.
const (
	fieldCatalog = "os.vm"
	fieldClone   = "vm_clone"
)

// planRules is what a VM knows about the plans that offer it (plans.KindRules).
type planRules struct{}

func (planRules) Kind() plans.GuestType { return Kind }

// SetFields: the VM catalog and a linked clone (a container is created from a template
// archive, never cloned; a full clone is the default and needs no VM).
func (planRules) SetFields(s plans.Spec) []string {
	var out []string
	if len(s.OS.VM) > 0 {
		out = append(out, fieldCatalog)
	}
	if s.VMClone == plans.CloneLinked {
		out = append(out, fieldClone)
	}
	return out
}

// CheckSpec checks the VM OS catalog: not empty, each name well-formed and each entry a
// template vmid (100 to 999,999,999) or a VM name.
func (planRules) CheckSpec(s plans.Spec, v *i18n.FieldErrors) {
	catalog := s.OS.VM
	if len(catalog) == 0 {
		v.Add(fieldCatalog, i18n.FieldRequired, "")
	}
	for _, name := range slices.Sorted(maps.Keys(catalog)) {
		field := fieldCatalog + "[" + name + "]"
		t := catalog[name]
		switch {
		case v.Has(field):
		case t.Name == "" && t.VMID < plans.MinVMID:
			v.Add(field, i18n.FieldTooSmall, strconv.Itoa(plans.MinVMID))
		case t.Name == "" && t.VMID > plans.MaxVMID:
			v.Add(field, i18n.FieldTooLarge, strconv.Itoa(plans.MaxVMID))
		case !plans.OSNameOK(name) || !t.Valid():
			v.Add(field, i18n.FieldPattern, "")
		}
	}
}

// RefuseAlone: a VM plan may suspend by stop or by pause.
func (planRules) RefuseAlone(plans.Spec) error { return nil }

// Capability: a VM's pause follows the plan's vm_suspend_mode (R15): with stop it is refused
// permanently for the plan; with pause it is what suspend is.
func (planRules) Capability(p plans.Plan, c plans.Capability) (plans.State, plans.Capability, bool) {
	if c != plans.CapPause {
		return plans.State{}, c, false
	}
	if p.VMSuspendMode != plans.SuspendPause {
		return plans.State{Refusal: i18n.Permanent, Reason: plans.ReasonPlanSuspendsByStop}, c, true
	}
	return plans.State{}, plans.CapSuspend, false // a pause-mode plan pauses exactly when it suspends
}

// Snapshots: a VM's disk on a file storage can be qcow2 (a full clone keeps its template's
// format there), which snapshots.
func (planRules) Snapshots(storageType string) bool { return plans.StorageSnapshotsQcow2(storageType) }

// Reasons lists the reasons of the VM's refusals.
func (planRules) Reasons() []string { return []string{plans.ReasonPlanSuspendsByStop} }
