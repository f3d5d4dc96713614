package plans_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"pvebill/i18n"
	"pvebill/modules/plans"
)

// R41: a plan on a cluster without a console user refuses the console permanently, with its
// translated reason, for every kind that has one, and plans.Refused makes it 409
// capability_refused; a kind without a console keeps its own refusal, and a cluster with a
// console user offers it.
func TestConsoleCapabilityFollowsTheConsoleUser(t *testing.T) {
	both := containerSpec()
	both.GuestTypes = []plans.GuestType{plans.Container, plans.VM}
	both.OS.VM = map[string]plans.VMTemplate{"debian-12": {VMID: 9000}}
	p, err := plans.Validate(both, nil)
	if err != nil {
		t.Fatal(err)
	}
	built := plans.Built{plans.Container: {plans.CapCreate, plans.CapConsole}, plans.VM: {plans.CapCreate}}
	users := func(cluster string) bool { return cluster == "with-user" }
	svc := plans.NewService(nil, plans.Options{Built: built, ConsoleUsers: users})

	p.Cluster = "with-user"
	if s := svc.Capabilities(p)[plans.Container][plans.CapConsole]; !s.Available {
		t.Fatalf("container console on a cluster with a console user: %+v", s)
	}
	p.Cluster = "default"
	caps := svc.Capabilities(p)
	ct := caps[plans.Container][plans.CapConsole]
	if ct.Available || ct.Refusal != i18n.Permanent || ct.Reason != plans.ReasonNoConsoleUser || ct.Message("de") == ct.Message("en") {
		t.Fatalf("container console without a console user: %+v", ct)
	}
	if vm := caps[plans.VM][plans.CapConsole]; vm.Reason != plans.ReasonNotYetAvailable || vm.Refusal != i18n.Temporary {
		t.Fatalf("a kind without a console keeps its refusal: %+v", vm)
	}
	if s := caps[plans.Container][plans.CapCreate]; !s.Available {
		t.Fatalf("create: %+v", s)
	}
	var prob *i18n.Problem
	if err := plans.Refused(plans.CapConsole, ct); !errors.As(err, &prob) || prob.Status != http.StatusConflict ||
		prob.Code != i18n.CodeCapabilityRefused || prob.Reason != plans.ReasonNoConsoleUser {
		t.Fatalf("refused: %v", err)
	}
	if s := plans.NewService(nil, plans.Options{Built: built}).Capabilities(p)[plans.Container][plans.CapConsole]; !s.Available {
		t.Fatalf("without ConsoleUsers every cluster has one: %+v", s)
	}
}

// R41: without console.secret every plan refuses the console permanently with the reason that
// names the setting; a cluster without a console user keeps its own reason.
func TestConsoleCapabilityFollowsTheSecret(t *testing.T) {
	p, err := plans.Validate(containerSpec(), nil)
	if err != nil {
		t.Fatal(err)
	}
	built := plans.Built{plans.Container: {plans.CapCreate, plans.CapConsole}}
	users := func(cluster string) bool { return cluster == "with-user" }
	svc := plans.NewService(nil, plans.Options{Built: built, ConsoleUsers: users, NoConsoleSecret: true})
	p.Cluster = "with-user"
	ct := svc.Capabilities(p)[plans.Container][plans.CapConsole]
	if ct.Available || ct.Refusal != i18n.Permanent || ct.Reason != plans.ReasonConsoleSecretNotSet {
		t.Fatalf("container console without console.secret: %+v", ct)
	}
	for _, lang := range i18n.Languages {
		if msg := ct.Message(lang); !strings.Contains(msg, "console.secret") {
			t.Errorf("%s: the reason %q does not name console.secret", lang, msg)
		}
	}
	p.Cluster = "default"
	if ct := svc.Capabilities(p)[plans.Container][plans.CapConsole]; ct.Reason != plans.ReasonNoConsoleUser {
		t.Fatalf("no console user and no secret: %+v", ct)
	}
}
