package provision_test

import (
	"context"
	"testing"

	"pvebill/i18n"
	"pvebill/models"
	"pvebill/modules/pve/pvesim"
	"pvebill/modules/pve/pvesim/simtest"
)

// Placement takes the allowed online node with the most free memory: a plan's node list is
// respected and an offline node is never chosen.
func TestPlacement(t *testing.T) {
	sim := pvesim.Demo(pvesim.Options{TokenID: simtest.TokenID, TokenSecret: simtest.TokenSecret, Nodes: []string{"pve1", "pve2", "pve3"}})
	e := newEnv(t, "sqlite", sim, nil)
	ctx := context.Background()

	// Unrestricted: the node with the most free memory right now.
	rows, err := e.client.Cluster().Resources(ctx, "node")
	if err != nil {
		t.Fatal(err)
	}
	best, bestFree := "", int64(-1)
	for _, r := range rows {
		if free := int64(r.MaxMem) - int64(r.Mem); r.Status == "online" && (free > bestFree || (free == bestFree && r.Node < best)) {
			best, bestFree = r.Node, free
		}
	}
	e.create(ctReq("svc-free"))
	if n := e.service("svc-free").Node; n != best {
		t.Fatalf("placed on %s, most free memory is on %s", n, best)
	}

	spec := testPlans()[0]
	spec.Code, spec.Nodes = "ct-pve3", []string{"pve3"}
	if _, _, err := e.plans.Put(ctx, spec.Code, spec); err != nil {
		t.Fatal(err)
	}
	req := ctReq("svc-p3")
	req.Plan = "ct-pve3"
	e.create(req)
	if n := e.service("svc-p3").Node; n != "pve3" {
		t.Fatalf("placed on %s, the plan allows pve3 only", n)
	}

	e.sim.SetNodeOnline("pve3", false)
	req.ServiceID = "svc-p3-off"
	op, _, err := e.svc.Create(ctx, "whmcs", req)
	if err != nil {
		t.Fatal(err)
	}
	got := e.wait(op)
	if got.State != models.OpFailed || deref(got.ErrorCode) != string(i18n.CodeProxmoxUnavailable) {
		t.Fatalf("create with the only allowed node offline: %s %s", got.State, deref(got.ErrorCode))
	}
}
