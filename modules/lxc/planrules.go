package lxc

import (
	"maps"
	"net/http"
	"slices"

	"pvebill/i18n"
	"pvebill/modules/plans"
	"pvebill/modules/pve/pveconf"
)

// The container's plan rules are registered with the plans when the package is loaded: every
// binary that can provision a container judges its plans by them.
func init() { plans.RegisterKind(planRules{}) }

// never is what a container can never do, whatever is built (R10, R15): refused permanently,
// each with its own reason, in the order of plans.AllCapabilities.
var never = []struct {
	cap    plans.Capability
	reason string
}{
	{plans.CapPause, "capability.not_possible.pause"},
	{plans.CapHibernate, "capability.not_possible.hibernate"},
	{plans.CapISOInstall, "capability.not_possible.iso_install"},
	{plans.CapPXEBoot, "capability.not_possible.pxe_boot"},
	{plans.CapFirmwareSelection, "capability.not_possible.firmware_selection"},
	{plans.CapPassword, "capability.not_possible.password"},
}

// Fields of a plan that only a container uses.
const (
	fieldCatalog = "os.container"
	fieldSwap    = "swap_mib"
)

// planRules is what a container knows about the plans that offer it (plans.KindRules).
type planRules struct{}

func (planRules) Kind() plans.GuestType { return Kind }

// SetFields: the container catalog and the swap (a VM has no swap setting, R5).
func (planRules) SetFields(s plans.Spec) []string {
	var out []string
	if len(s.OS.Container) > 0 {
		out = append(out, fieldCatalog)
	}
	if s.SwapMiB != nil && *s.SwapMiB != 0 {
		out = append(out, fieldSwap)
	}
	return out
}

// CheckSpec checks the container OS catalog: not empty, each name well-formed and each value a
// template volume.
func (planRules) CheckSpec(s plans.Spec, v *i18n.FieldErrors) {
	catalog := s.OS.Container
	if len(catalog) == 0 {
		v.Add(fieldCatalog, i18n.FieldRequired, "")
	}
	for _, name := range slices.Sorted(maps.Keys(catalog)) {
		field := fieldCatalog + "[" + name + "]"
		if v.Has(field) {
			continue
		}
		if !plans.OSNameOK(name) || !isTemplateVolume(catalog[name]) {
			v.Add(field, i18n.FieldPattern, "")
		}
	}
}

// isTemplateVolume reports whether s is a container template volume id, STORAGE:vztmpl/NAME,
// as Proxmox's storage layer parses it (a filesystem path is root@pam only, so refused here).
func isTemplateVolume(s string) bool {
	vol, err := pveconf.ParseVolume(s)
	return err == nil && vol.Kind == pveconf.VolumeStorage && vol.VType == pveconf.VTypeVZTmpl
}

// RefuseAlone: a container is suspended by stopping it, so a plan that offers only containers
// and asks for another suspend mode is not possible (R15).
func (planRules) RefuseAlone(s plans.Spec) error {
	if s.VMSuspendMode == "" || s.VMSuspendMode == plans.SuspendStop {
		return nil
	}
	p := i18n.NewProblem(http.StatusUnprocessableEntity, i18n.CodeNotPossibleContainer).Perm(i18n.Permanent)
	p.Fields = []i18n.FieldError{{Field: "vm_suspend_mode", Code: i18n.FieldOneOf, Param: string(plans.SuspendStop)}}
	return p
}

// Capability refuses for good what a container can never do, even if a module claimed it.
func (planRules) Capability(_ plans.Plan, c plans.Capability) (plans.State, plans.Capability, bool) {
	for _, n := range never {
		if n.cap == c {
			return plans.State{Refusal: i18n.Permanent, Reason: n.reason}, c, true
		}
	}
	return plans.State{}, c, false
}

// Snapshots: a container's volume on a file storage is raw or a subvolume, which never
// snapshots; only storages that snapshot every volume can.
func (planRules) Snapshots(storageType string) bool {
	return plans.StorageSnapshotsEveryVolume(storageType)
}

// Reasons lists the reasons of what a container can never do.
func (planRules) Reasons() []string {
	out := make([]string, 0, len(never))
	for _, n := range never {
		out = append(out, n.reason)
	}
	return out
}
