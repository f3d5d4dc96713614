package plans

import (
	"net/http"
	"slices"

	"pvebill/i18n"
)

// Capability names something a customer of a plan might ask for (R10). The storefront and the
// billing panels read them as data: available, or refused with a permanence and a reason.
type Capability string

// Capabilities, in the order they are listed.
const (
	CapCreate            Capability = "create"
	CapSuspend           Capability = "suspend"
	CapUnsuspend         Capability = "unsuspend"
	CapTerminate         Capability = "terminate"
	CapReinstall         Capability = "reinstall"
	CapChangePlan        Capability = "change_plan"
	CapStart             Capability = "start"
	CapStop              Capability = "stop"
	CapShutdown          Capability = "shutdown"
	CapReboot            Capability = "reboot"
	CapUsage             Capability = "usage"
	CapMonitoring        Capability = "monitoring"
	CapConsole           Capability = "console"
	CapPause             Capability = "pause"
	CapHibernate         Capability = "hibernate"
	CapISOInstall        Capability = "iso_install"
	CapPXEBoot           Capability = "pxe_boot"
	CapFirmwareSelection Capability = "firmware_selection"
	CapSnapshot          Capability = "snapshot"
)

// Backup capabilities (R42, R43): offered by a kind that implements them, for a plan that
// names a backup storage.
const (
	CapBackup  Capability = "backup"
	CapRestore Capability = "restore"
)

// CapPassword is the root password change after create (R56): offered by a kind that
// implements it (through its guest agent); a kind may refuse it for good (KindRules).
const CapPassword Capability = "password"

// CapRDNS is setting the reverse DNS name of an address (R55). It depends on the configuration
// (dns.powerdns) and on the address's pool (its reverse_zone), not on the plan's kind, so it is
// not listed among a plan's capabilities; a refusal names it.
const CapRDNS Capability = "rdns"

// Reasons of a refused reverse DNS change (R55): permanent, the operator's configuration.
const (
	ReasonRDNSNotConfigured = "capability.rdns_not_configured"
	ReasonRDNSNoReverseZone = "capability.rdns_no_reverse_zone"
)

// BackupCapabilities are the capabilities a plan without a backup storage refuses.
var BackupCapabilities = []Capability{CapBackup, CapRestore}

// AllCapabilities lists every capability reported for each offered guest type.
var AllCapabilities = []Capability{
	CapCreate, CapSuspend, CapUnsuspend, CapTerminate, CapReinstall, CapChangePlan, CapStart, CapStop,
	CapShutdown, CapReboot, CapUsage, CapMonitoring, CapConsole, CapPause, CapHibernate, CapISOInstall,
	CapPXEBoot, CapFirmwareSelection, CapSnapshot,
	CapBackup, CapRestore, CapPassword,
}

// PowerCapabilities are the customer's power actions (R40): a kind offers all four or none.
var PowerCapabilities = []Capability{CapStart, CapStop, CapShutdown, CapReboot}

// Catalog keys of the refusal reasons.
const (
	ReasonNotYetAvailable    = "capability.not_yet_available"
	ReasonPlanSuspendsByStop = "capability.plan_suspends_by_stop"
	ReasonPlanHasNoBackups   = "capability.plan_has_no_backups"
	// ReasonGuestAgentNotRunning refuses, temporarily, a password change of a guest whose
	// agent does not answer (R56).
	ReasonGuestAgentNotRunning = "capability.guest_agent_not_running"
)

// ReasonKeys lists every catalog key a capability reason can use, those of the registered kinds'
// rules included (the catalog test checks them in all nine languages).
func ReasonKeys() []string {
	keys := []string{ReasonNotYetAvailable, ReasonPlanSuspendsByStop, ReasonSnapshotsOff, ReasonStorageCannotSnap,
		ReasonStorageTypeNotKnown, ReasonPlanHasNoBackups, ReasonNoConsoleUser, ReasonGuestAgentNotRunning,
		ReasonConsoleSecretNotSet, ReasonRDNSNotConfigured, ReasonRDNSNoReverseZone}
	for _, r := range registeredRules() {
		for _, k := range r.Reasons() {
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	return keys
}

// State is one capability of one guest type: available, or refused with a permanence and the
// catalog key of its reason.
type State struct {
	Available bool
	Refusal   i18n.Permanence // empty when available
	Reason    string          // catalog key; empty when available
}

// Message is the reason translated into lang ("" when available).
func (s State) Message(lang string) string {
	if s.Reason == "" {
		return ""
	}
	return i18n.T(lang, s.Reason, nil)
}

// Set is the capabilities of one guest type.
type Set map[Capability]State

// Built says which capabilities exist in this build, per guest type: the guest modules declare
// what they implement. Anything not listed is refused as not yet available (temporary).
type Built map[GuestType][]Capability

func (b Built) has(t GuestType, c Capability) bool {
	for _, x := range b[t] {
		if x == c {
			return true
		}
	}
	return false
}

// CapabilitiesOf computes the capabilities of every guest type the plan offers. The kind's rules
// speak first: what the kind can never do is refused permanently even if a module claimed it,
// and a capability may follow the plan (a pause that is the plan's suspend, KindRules).
func CapabilitiesOf(p Plan, built Built) map[GuestType]Set {
	out := make(map[GuestType]Set, len(p.GuestTypes))
	for _, t := range p.GuestTypes {
		set := make(Set, len(AllCapabilities))
		for _, c := range AllCapabilities {
			set[c] = capability(p, built, t, c)
		}
		out[t] = set
	}
	return out
}

func capability(p Plan, built Built, t GuestType, c Capability) State {
	kind := rulesOf(t)
	st, c, decided := kind.Capability(p, c)
	if decided {
		return st
	}
	if slices.Contains(BackupCapabilities, c) && !p.HasBackups() {
		return State{Refusal: i18n.Permanent, Reason: ReasonPlanHasNoBackups}
	}
	if built.has(t, c) {
		if c == CapSnapshot {
			return snapshotCapability(p, kind)
		}
		return State{Available: true}
	}
	return State{Refusal: i18n.Temporary, Reason: ReasonNotYetAvailable}
}

// Refused is the answer to a request for capability c in state st: nil when it is available,
// otherwise 409 capability_refused with the refusal's permanence and its reason (R10). Every
// route that needs a capability of the plan answers with it.
func Refused(c Capability, st State) error {
	if st.Available {
		return nil
	}
	perm, reason := st.Refusal, st.Reason
	if perm == "" {
		perm, reason = i18n.Temporary, ReasonNotYetAvailable
	}
	p := i18n.NewProblem(http.StatusConflict, i18n.CodeCapabilityRefused).Perm(perm).With("capability", string(c))
	p.Reason = reason
	return p
}
