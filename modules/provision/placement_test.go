package provision_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"pvebill/i18n"
	"pvebill/models"
	"pvebill/models/dbtest"
	"pvebill/modules/provision"
	"pvebill/modules/pve/pvesim"
	"pvebill/modules/pve/pvesim/simtest"
	"pvebill/modules/stack/stacktest"
)

// Placement (R52) takes the allowed online node that is least full (its guests' memory, running
// or stopped, over its memory) when no create is in flight: a plan's node list
// is respected and an offline node is never chosen (no candidate: no_capacity).
func TestPlacement(t *testing.T) {
	sim := pvesim.Demo(pvesim.Options{TokenID: simtest.TokenID, TokenSecret: simtest.TokenSecret, Nodes: []string{"pve1", "pve2", "pve3"}})
	e := newEnv(t, "sqlite", sim, nil)
	ctx := t.Context()

	// Unrestricted: the node the guest leaves least full right now.
	rows, err := e.client.Cluster().Resources(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	mem, used := map[string]int64{}, map[string]int64{}
	for _, r := range rows {
		switch {
		case r.Type == "node" && r.Status == "online":
			mem[r.Node] = int64(r.MaxMem)
		case r.VMID.Int() > 0 && !bool(r.Template):
			used[r.Node] += int64(r.MaxMem)
		}
	}
	best, bestFill := "", 2.0
	for n, m := range mem {
		f := float64(used[n]) / float64(m)
		if f < bestFill || (f == bestFill && n < best) {
			best, bestFill = n, f
		}
	}
	e.create(ctReq("svc-free"))
	if n := e.service("svc-free").Node; n != best {
		t.Fatalf("placed on %s, the least full is %s", n, best)
	}

	spec := stacktest.Plans()[0]
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
	e.Clock.Advance(2 * sharedReadTTL) // the node list creates share is read again
	req.ServiceID = "svc-p3-off"
	op, _, err := e.svc.Create(ctx, "whmcs", req)
	if err != nil {
		t.Fatal(err)
	}
	got := e.wait(op)
	if got.State != models.OpFailed || deref(got.ErrorCode) != string(i18n.CodeNoCapacity) {
		t.Fatalf("create with the only allowed node offline: %s %s", got.State, deref(got.ErrorCode))
	}
}

// burst submits the creates at once and waits for them all to succeed, returning the node each
// service was placed on.
func (e *env) burst(reqs []provision.CreateRequest) map[string]int {
	e.t.Helper()
	ops := make([]*models.Operation, len(reqs))
	var wg sync.WaitGroup
	for i, req := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			op, _, err := e.svc.Create(context.Background(), "whmcs", req)
			if err != nil {
				e.t.Error(err)
				return
			}
			ops[i] = op
		}()
	}
	wg.Wait()
	perNode := map[string]int{}
	for i, op := range ops {
		e.mustSucceed(op, nil)
		s := e.service(reqs[i].ServiceID)
		g, ok := e.sim.Guest(*s.VMID)
		if !ok || g.Node != s.Node {
			e.t.Fatalf("%s: recorded on %s, guest found %v on %s", s.ServiceID, s.Node, ok, g.Node)
		}
		perNode[s.Node]++
	}
	return perNode
}

// R2 and placement: a burst of creates is spread over the nodes by the creates in flight on each, not piled on
// the node with the most headroom (whose figure does not move until the guests exist); the
// burst shares its reads of the cluster's figures and of the next free vmid.
func TestPlacementSpreadsABurst(t *testing.T) {
	for _, dialect := range dbtest.Dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			nodes := []string{"pve1", "pve2", "pve3"}
			sim := pvesim.Demo(pvesim.Options{TokenID: simtest.TokenID, TokenSecret: simtest.TokenSecret, Nodes: nodes,
				TaskDuration: 150 * time.Millisecond})
			// Equal nodes (pve1 holds the demo guests' 3 GiB, the others a stopped 3 GiB VM each):
			// only the creates in flight tell them apart.
			for i, n := range nodes {
				sim.SetNodeOptions(n, pvesim.NodeOptions{MemoryBytes: 64 * gib})
				if n == "pve1" {
					continue
				}
				if err := sim.SeedGuest(pvesim.Guest{VMID: 700 + i, Type: "qemu", Node: n, Config: map[string]string{"memory": "3072"}}); err != nil {
					t.Fatal(err)
				}
			}
			ttl := sharedReadTTL
			sharedReadTTL = time.Minute
			e := newEnv(t, dialect, sim, nil)
			sharedReadTTL = ttl
			e.sim.ResetLog()
			var reqs []provision.CreateRequest
			for i := range 12 {
				reqs = append(reqs, ctReq(fmt.Sprintf("svc-burst-%02d", i)))
			}
			perNode := e.burst(reqs)
			// The creates share one read of the node list and of the next free vmid; each
			// candidate vmid is still reserved and confirmed on its own (R2).
			lists, bases, confirms := 0, 0, 0
			for _, r := range e.sim.Requests() {
				switch {
				case r.Path == "/cluster/resources" && r.Form.Get("type") == "":
					lists++
				case r.Path == "/cluster/nextid" && r.Form.Get("vmid") == "":
					bases++
				case r.Path == "/cluster/nextid":
					confirms++
				}
			}
			if lists != 1 || bases != 1 || confirms < 12 {
				t.Errorf("12 creates read the node list %d times, the next id %d times, confirmed %d ids", lists, bases, confirms)
			}
			for _, n := range nodes {
				// 4 executor workers over 3 nodes: each node holds one or two creates at a time.
				if perNode[n] < 2 || perNode[n] > 6 {
					t.Errorf("burst of 12 placed %v", perNode)
					break
				}
			}

		})
	}
}
