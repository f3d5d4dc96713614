package provision_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"pvebill/i18n"
	"pvebill/models"
	"pvebill/models/dbtest"
	"pvebill/modules/provision"
	"pvebill/modules/pve/pvesim"
	"pvebill/modules/pve/pvesim/simtest"
)

// Placement takes the allowed online node with the most free memory when no create is in
// flight: a plan's node list is respected and an offline node is never chosen.
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
	time.Sleep(2 * sharedReadTTL) // the node list creates share is read again
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
// the node with the most free memory (whose figure does not move until the guests run); the
// burst shares its reads of the node list and of the next free vmid; and a node without the
// plan's memory free is passed over however idle it is.
func TestPlacementSpreadsABurst(t *testing.T) {
	for _, dialect := range dbtest.Dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			nodes := []string{"pve1", "pve2", "pve3"}
			sim := pvesim.Demo(pvesim.Options{TokenID: simtest.TokenID, TokenSecret: simtest.TokenSecret, Nodes: nodes,
				TaskDuration: 150 * time.Millisecond})
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
				case r.Path == "/cluster/resources" && r.Form.Get("type") == "node":
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

			// A plan whose memory only the roomiest node has free.
			rows, err := e.client.Cluster().Resources(context.Background(), "node")
			if err != nil {
				t.Fatal(err)
			}
			var frees []int64
			roomiest, most := "", int64(0)
			for _, r := range rows {
				free := int64(r.MaxMem) - int64(r.Mem)
				frees = append(frees, free)
				if free > most {
					roomiest, most = r.Node, free
				}
			}
			slices.Sort(frees)
			spec := testPlans()[0]
			spec.Code, spec.MemoryMiB = "ct-big", ptr(int((frees[len(frees)-2]+frees[len(frees)-1])/2>>20))
			if _, _, err := e.plans.Put(context.Background(), spec.Code, spec); err != nil {
				t.Fatal(err)
			}
			reqs = reqs[:0]
			for i := range 4 {
				req := ctReq(fmt.Sprintf("svc-big-%d", i))
				req.Plan = "ct-big"
				reqs = append(reqs, req)
			}
			if perNode := e.burst(reqs); perNode[roomiest] != 4 {
				t.Errorf("plan fitting only %s placed %v", roomiest, perNode)
			}
		})
	}
}
