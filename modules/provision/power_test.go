package provision_test

import (
	"testing"

	"pvebill/i18n"
	"pvebill/models"
	"pvebill/modules/provision"
)

// R40 and R16: a suspended or limited service refuses start and reboot (service_suspended,
// nothing written, nothing sent); drift repair still stops the suspended guest someone started
// by hand.
func TestPowerRefusedWhileSuspended(t *testing.T) {
	e := newEnv(t, "sqlite", nil, nil)
	ctx := t.Context()
	e.create(ctReq("svc-ps"))
	e.mustSucceed(e.svc.Suspend(ctx, "whmcs", "svc-ps", provision.SuspendRequest{Reason: "unpaid"}))
	n := len(e.sim.Requests())
	if _, err := e.Stack.Power.Start(ctx, "whmcs", "svc-ps"); problem(t, err).Code != i18n.CodeServiceSuspended {
		t.Fatalf("start of a suspended service: %v", err)
	}
	if _, err := e.Stack.Power.Reboot(ctx, "whmcs", "svc-ps"); problem(t, err).Code != i18n.CodeServiceSuspended {
		t.Fatalf("reboot of a suspended service: %v", err)
	}
	if len(e.sim.Requests()) != n {
		t.Fatal("a refused power action reached Proxmox")
	}
	svc := e.service("svc-ps")
	if _, err := e.client.Node(svc.Node).LXC(*svc.VMID).Start(ctx); err != nil {
		t.Fatal(err)
	}
	if r := e.enforce(); r.Enforced[provision.ReasonDrift] != 1 {
		t.Fatalf("round %+v", r)
	}
	e.waitLatest("svc-ps", provision.ActionSuspend)
	if g, _ := e.sim.Guest(*svc.VMID); g.Status != "stopped" {
		t.Fatalf("guest %s after drift repair", g.Status)
	}
	if err := e.db.UpdateService(ctx, models.ServiceKey{ClientID: "whmcs", ServiceID: "svc-ps"}, map[string]any{"state": models.ServiceLimited}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Stack.Power.Start(ctx, "whmcs", "svc-ps"); problem(t, err).Code != i18n.CodeServiceSuspended {
		t.Fatalf("start of a limited service: %v", err)
	}
	e.mustSucceed(e.Stack.Power.Stop(ctx, "whmcs", "svc-ps"))
}
