package provision_test

import (
	"context"
	"testing"
	"time"

	"pvebill/models"
	"pvebill/modules/provision"
	"pvebill/modules/stack/stacktest"
)

func (e *env) enforce() provision.LimitRound {
	e.t.Helper()
	round, err := e.svc.EnforceLimits(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	return round
}

func (e *env) waitLatest(serviceID, action string) *models.Operation {
	e.t.Helper()
	op, err := e.db.LatestOperation(context.Background(), models.ServiceKey{ClientID: "whmcs", ServiceID: serviceID}, action)
	if err != nil {
		e.t.Fatal(err)
	}
	return e.mustSucceed(op, nil)
}

// R16: a service over its bandwidth allowance is stopped and limited (never paused), counted
// by reason and guest type; the bandwidth follows counter resets.
func TestBandwidthLimit(t *testing.T) {
	e := newEnv(t, "sqlite", nil, nil)
	ctx := t.Context()
	spec := stacktest.Plans()[0]
	spec.Code, spec.BandwidthGiB = "ct-bw", new(int64(1))
	if _, _, err := e.plans.Put(ctx, spec.Code, spec); err != nil {
		t.Fatal(err)
	}
	req := ctReq("svc-bw")
	req.Plan = "ct-bw"
	e.create(req)
	e.create(ctReq("svc-free")) // no allowance: never limited

	if r := e.enforce(); r.Checked != 2 || len(r.Enforced) != 0 {
		t.Fatalf("first round %+v", r)
	}
	first, err := e.db.GetBandwidthUsage(ctx, models.ServiceKey{ClientID: "whmcs", ServiceID: "svc-bw"})
	if err != nil {
		t.Fatal(err)
	}
	e.sim.Advance(30 * 24 * time.Hour) // at ≥1.5 kB/s, more than 1 GiB
	if r := e.enforce(); r.Enforced[provision.ReasonBandwidth] != 1 {
		t.Fatalf("second round %+v", r)
	}
	e.waitLatest("svc-bw", provision.ActionSuspend)
	svc := e.service("svc-bw")
	g, _ := e.sim.Guest(*svc.VMID)
	if svc.State != models.ServiceLimited || g.Status != "stopped" || g.Config["onboot"] != "0" {
		t.Fatalf("limited service %s, guest %s onboot=%s", svc.State, g.Status, g.Config["onboot"])
	}
	second, _ := e.db.GetBandwidthUsage(ctx, models.ServiceKey{ClientID: "whmcs", ServiceID: "svc-bw"})
	if second.Bytes <= first.Bytes || second.Bytes <= 1<<30 {
		t.Fatalf("bandwidth %d then %d", first.Bytes, second.Bytes)
	}
	if v := enforcements(t, e, "bandwidth", "container"); v != 1 {
		t.Fatalf("enforcements %v", v)
	}
	if s := e.service("svc-free"); s.State != models.ServiceActive {
		t.Fatalf("service without allowance %s", s.State)
	}
	// A counter reset (restart) adds the new counter instead of going negative.
	free := e.service("svc-free")
	before, _ := e.db.GetBandwidthUsage(ctx, models.ServiceKey{ClientID: "whmcs", ServiceID: "svc-free"})
	e.mustSucceed(e.svc.Suspend(ctx, "whmcs", "svc-free", provision.SuspendRequest{}))
	e.mustSucceed(e.svc.Unsuspend(ctx, "whmcs", "svc-free"))
	e.sim.Advance(time.Hour)
	e.enforce()
	after, _ := e.db.GetBandwidthUsage(ctx, models.ServiceKey{ClientID: "whmcs", ServiceID: "svc-free"})
	if after.Bytes <= before.Bytes || after.LastCounter == nil || *after.LastCounter >= *before.LastCounter {
		t.Fatalf("across a restart of %d: %d (counter %d) then %d (counter %d)", *free.VMID,
			before.Bytes, *before.LastCounter, after.Bytes, *after.LastCounter)
	}
	if after.Bytes != before.Bytes+*after.LastCounter {
		t.Fatalf("bytes %d, want %d + %d", after.Bytes, before.Bytes, *after.LastCounter)
	}
}

// R16: a suspended guest found running is stopped again and counted as drift.
func TestDriftRepair(t *testing.T) {
	e := newEnv(t, "sqlite", nil, nil)
	ctx := t.Context()
	e.create(ctReq("svc-drift"))
	e.mustSucceed(e.svc.Suspend(ctx, "whmcs", "svc-drift", provision.SuspendRequest{}))
	svc := e.service("svc-drift")
	if _, err := e.client.Node(svc.Node).LXC(*svc.VMID).Start(ctx); err != nil {
		t.Fatal(err)
	}
	if r := e.enforce(); r.Enforced[provision.ReasonDrift] != 1 {
		t.Fatalf("round %+v", r)
	}
	e.waitLatest("svc-drift", provision.ActionSuspend)
	if g, _ := e.sim.Guest(*svc.VMID); g.Status != "stopped" {
		t.Fatalf("guest %s after drift repair", g.Status)
	}
	if s := e.service("svc-drift"); s.State != models.ServiceSuspended {
		t.Fatalf("state %s", s.State)
	}
	if v := enforcements(t, e, "drift", "container"); v != 1 {
		t.Fatalf("enforcements %v", v)
	}
	if r := e.enforce(); len(r.Enforced) != 0 {
		t.Fatalf("a stopped suspended guest was enforced again: %+v", r)
	}
}
