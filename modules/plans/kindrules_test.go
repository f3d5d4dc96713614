package plans_test

import (
	"slices"
	"testing"

	"pvebill/i18n"
	"pvebill/modules/plans"

	// The kinds register their plan rules when loaded: the plans are judged by them.
	_ "pvebill/modules/lxc"
	_ "pvebill/modules/qemu"
)

// testKind is a guest kind known only to this test, with rules of its own.
const testKind plans.GuestType = "testkind"

type testRules struct{}

func (testRules) Kind() plans.GuestType                   { return testKind }
func (testRules) SetFields(plans.Spec) []string           { return nil }
func (testRules) CheckSpec(plans.Spec, *i18n.FieldErrors) {}
func (testRules) RefuseAlone(plans.Spec) error            { return nil }
func (testRules) Snapshots(storageType string) bool       { return storageType == "tape" }
func (testRules) Reasons() []string                       { return []string{"capability.not_possible.usage"} }
func (testRules) Capability(_ plans.Plan, c plans.Capability) (plans.State, plans.Capability, bool) {
	switch c {
	case plans.CapUsage:
		return plans.State{Refusal: i18n.Permanent, Reason: "capability.not_possible.usage"}, c, true
	case plans.CapHibernate:
		return plans.State{}, plans.CapSuspend, false
	}
	return plans.State{}, c, false
}

// The plans ask the kind: a kind's own refusal, a capability it judges as another and the
// storages it snapshots on are honoured, and its reasons are listed; a kind with no rules
// refuses nothing of its own.
func TestKindRulesAsked(t *testing.T) {
	plans.RegisterKind(testRules{})
	t.Cleanup(func() { plans.UnregisterKind(testKind) })
	if r, ok := plans.RulesOf(testKind); !ok || r.Kind() != testKind {
		t.Fatal("the test kind's rules are not registered")
	}
	built := plans.Built{testKind: {plans.CapUsage, plans.CapSuspend, plans.CapSnapshot, plans.CapPause}}
	p := plans.Plan{GuestTypes: []plans.GuestType{testKind}, SnapshotsMax: 1, StorageType: "tape"}
	set := plans.CapabilitiesOf(p, built)[testKind]
	if s := set[plans.CapUsage]; s.Available || s.Refusal != i18n.Permanent || s.Reason != "capability.not_possible.usage" {
		t.Errorf("usage %+v, want the kind's refusal", s)
	}
	if s := set[plans.CapHibernate]; !s.Available {
		t.Errorf("hibernate %+v, want what suspend is", s)
	}
	if s := set[plans.CapPause]; !s.Available {
		t.Errorf("pause %+v, want available: the kind does not refuse it", s)
	}
	if s := set[plans.CapSnapshot]; !s.Available {
		t.Errorf("snapshot on the kind's storage %+v", s)
	}
	p.StorageType = "lvmthin"
	if s := plans.CapabilitiesOf(p, built)[testKind][plans.CapSnapshot]; s.Refusal != i18n.Permanent || s.Reason != plans.ReasonStorageCannotSnap {
		t.Errorf("snapshot on another storage %+v", s)
	}
	if !slices.Contains(plans.ReasonKeys(), "capability.not_possible.usage") {
		t.Error("the kind's reasons are not among the reason keys")
	}
	bare := plans.GuestType("bare")
	if s := plans.CapabilitiesOf(plans.Plan{GuestTypes: []plans.GuestType{bare}}, plans.Built{bare: {plans.CapPause}})[bare][plans.CapPause]; !s.Available {
		t.Errorf("a kind without rules: pause %+v", s)
	}
	defer func() {
		if recover() == nil {
			t.Error("a second registration of a kind does not panic")
		}
	}()
	plans.RegisterKind(testRules{})
}

// The container and the VM register their rules.
func TestBuiltKindsHaveRules(t *testing.T) {
	for _, k := range plans.GuestTypes {
		if r, ok := plans.RulesOf(k); !ok || r.Kind() != k {
			t.Errorf("%s: no rules registered", k)
		}
	}
}
