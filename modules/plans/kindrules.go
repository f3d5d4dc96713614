package plans

import (
	"fmt"
	"slices"
	"sync"

	"pvebill/i18n"
)

// KindRules is what a guest kind knows about the plans that offer it: which of a plan's fields
// are its own, how its OS catalog is checked, what it can never do and how its capabilities
// follow the plan. Each kind's package implements it and registers it when it is loaded
// (RegisterKind), so that this package judges a plan by asking the kinds and keeps no kind's
// knowledge itself. A kind with no registered rules has no fields, no catalog to check and no
// refusals of its own.
type KindRules interface {
	// Kind is the guest type the rules are for.
	Kind() GuestType
	// SetFields names the fields of s that only guests of the kind use and that s sets (its
	// OS catalog, a swap …): a plan that offers no kind using such a field refuses it as
	// not applicable.
	SetFields(s Spec) []string
	// CheckSpec adds the failures of the fields of s that the kind judges, for a plan that
	// offers it: its OS catalog.
	CheckSpec(s Spec, v *i18n.FieldErrors)
	// RefuseAlone is the refusal of a plan that offers the kind alone (nil: none).
	RefuseAlone(s Spec) error
	// Capability decides capability c of the kind for plan p when the kind alone decides it:
	// a permanent refusal, with ok true. Otherwise it answers the capability c is judged as
	// (c itself, or another that means the same for this plan) and ok false.
	Capability(p Plan, c Capability) (st State, as Capability, ok bool)
	// Snapshots reports whether a guest of the kind can be snapshotted on a storage of this
	// Proxmox type (R44).
	Snapshots(storageType string) bool
	// Reasons lists the catalog keys of the refusals the kind's rules give.
	Reasons() []string
}

var (
	rulesMu sync.RWMutex
	rules   = map[GuestType]KindRules{}
)

// RegisterKind registers the rules of a guest kind. Registration is static, done once when the
// kind's package is loaded: a second registration of a kind panics.
func RegisterKind(r KindRules) {
	rulesMu.Lock()
	defer rulesMu.Unlock()
	if _, dup := rules[r.Kind()]; dup {
		panic(fmt.Sprintf("plans: rules of %s registered twice", r.Kind()))
	}
	rules[r.Kind()] = r
}

// RulesOf returns the registered rules of kind t.
func RulesOf(t GuestType) (KindRules, bool) {
	rulesMu.RLock()
	defer rulesMu.RUnlock()
	r, ok := rules[t]
	return r, ok
}

// rulesOf returns the rules of kind t, or the rules of a kind that has none of its own.
func rulesOf(t GuestType) KindRules {
	if r, ok := RulesOf(t); ok {
		return r
	}
	return noRules(t)
}

// registeredRules lists the registered rules: the guest types' first, in their canonical order,
// then any other kind's by name.
func registeredRules() []KindRules {
	rulesMu.RLock()
	defer rulesMu.RUnlock()
	kinds := make([]GuestType, 0, len(rules))
	for k := range rules {
		kinds = append(kinds, k)
	}
	slices.SortFunc(kinds, func(a, b GuestType) int {
		ia, ib := slices.Index(GuestTypes, a), slices.Index(GuestTypes, b)
		switch {
		case ia >= 0 && ib >= 0:
			return ia - ib
		case ia >= 0:
			return -1
		case ib >= 0:
			return 1
		case a < b:
			return -1
		case a > b:
			return 1
		}
		return 0
	})
	out := make([]KindRules, 0, len(kinds))
	for _, k := range kinds {
		out = append(out, rules[k])
	}
	return out
}

// noRules are the rules of a kind that registered none.
type noRules GuestType

func (n noRules) Kind() GuestType                                         { return GuestType(n) }
func (noRules) SetFields(Spec) []string                                   { return nil }
func (noRules) CheckSpec(Spec, *i18n.FieldErrors)                         {}
func (noRules) RefuseAlone(Spec) error                                    { return nil }
func (noRules) Snapshots(storageType string) bool                         { return StorageSnapshotsEveryVolume(storageType) }
func (noRules) Reasons() []string                                         { return nil }
func (noRules) Capability(_ Plan, c Capability) (State, Capability, bool) { return State{}, c, false }
