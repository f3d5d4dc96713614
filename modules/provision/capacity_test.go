package provision_test

import (
	"fmt"
	"testing"
	"time"

	"pvebill/i18n"
	"pvebill/models"
	"pvebill/models/dbtest"
	"pvebill/modules/placement"
	"pvebill/modules/provision"
	"pvebill/modules/pve/pvesim"
	"pvebill/modules/pve/pvesim/simtest"
)

const gib = int64(1) << 30

// capacitySim is three nodes of small, unequal memory: pve1 6 GiB holding the demo's guests
// (a running 1 GiB container, a stopped 2 GiB VM and a template, which does not count), pve2
// 4 GiB and empty, pve3 8 GiB holding one stopped 7 GiB VM.
func capacitySim(t *testing.T) *pvesim.Sim {
	t.Helper()
	sim := pvesim.Demo(pvesim.Options{TokenID: simtest.TokenID, TokenSecret: simtest.TokenSecret,
		Nodes: []string{"pve1", "pve2", "pve3"}})
	for n, mem := range map[string]int64{"pve1": 6 * gib, "pve2": 4 * gib, "pve3": 8 * gib} {
		sim.SetNodeOptions(n, pvesim.NodeOptions{MemoryBytes: mem})
	}
	if err := sim.SeedGuest(pvesim.Guest{VMID: 400, Type: "qemu", Node: "pve3", Config: map[string]string{
		"name": "stopped-big", "memory": "7168", "scsi0": "local-lvm:vm-400-disk-0,size=8G"}}); err != nil {
		t.Fatal(err)
	}
	return sim
}

// gauge is the value of family{labels} in the test registry (ok false when absent).
func gauge(t *testing.T, e *env, family string, labels map[string]string) (float64, bool) {
	t.Helper()
	mfs, err := e.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != family {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if want, ok := labels[l.GetName()]; ok && want != l.GetValue() {
					continue next
				}
			}
			if m.GetCounter() != nil {
				return m.GetCounter().GetValue(), true
			}
			return m.GetGauge().GetValue(), true
		}
	}
	return 0, false
}

// R52: placement counts the memory committed to every guest, running or stopped, against the
// node's memory: a node whose free memory looks largest (pve3, its guest stopped) but whose
// guests' memory fills it is skipped; the creates of one plan go where the headroom is, and
// once no node has room the create ends no_capacity (503, temporary) with nothing sent to
// Proxmox and the refusal counted.
func TestPlacementCountsCommittedMemory(t *testing.T) {
	for _, dialect := range dbtest.Dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			e := newEnv(t, dialect, capacitySim(t), nil)
			// ct-big is 2 GiB. Headroom: pve1 6-3=3, pve2 4, pve3 8-7=1 GiB.
			want := []string{"pve2", "pve1", "pve2"}
			for i, node := range want {
				e.Clock.Advance(2 * sharedReadTTL) // the figures creates share are read again
				req := ctReq(fmt.Sprintf("svc-cap-%d", i))
				req.Plan = "ct-big"
				e.create(req)
				if got := e.service(req.ServiceID).Node; got != node {
					t.Fatalf("create %d placed on %s, want %s (headroom order)", i, got, node)
				}
			}
			// Headroom now: pve1 1, pve2 0, pve3 1 GiB: no node fits 2 GiB.
			e.Clock.Advance(2 * sharedReadTTL)
			e.sim.ResetLog()
			req := ctReq("svc-cap-full")
			req.Plan = "ct-big"
			op, _, err := e.svc.Create(t.Context(), "whmcs", req)
			if err != nil {
				t.Fatal(err)
			}
			got := e.wait(op)
			if got.State != models.OpFailed || deref(got.ErrorCode) != string(i18n.CodeNoCapacity) {
				t.Fatalf("create with no room: %s %s %s", got.State, deref(got.ErrorCode), deref(got.ErrorDetail))
			}
			for _, r := range e.sim.Requests() {
				if r.Method != "GET" {
					t.Errorf("no_capacity sent %s %s to Proxmox", r.Method, r.Path)
				}
			}
			if n, _ := gauge(t, e, "pvebill_placement_no_capacity_total", map[string]string{"cluster": "default"}); n != 1 {
				t.Errorf("no_capacity refusals counted %v, want 1", n)
			}
			if h, ok := gauge(t, e, "pvebill_node_memory_headroom_bytes", map[string]string{"cluster": "default", "node": "pve3"}); !ok || int64(h) != 1*gib {
				t.Errorf("pve3 headroom gauge %v %v, want 1 GiB", h, ok)
			}
			// A smaller plan still fits, on the node with the most headroom among the ties by
			// name: pve1 (1 GiB) before pve3 (1 GiB).
			small := ctReq("svc-cap-small")
			e.create(small)
			if n := e.service(small.ServiceID).Node; n != "pve1" {
				t.Errorf("512 MiB create placed on %s, want pve1", n)
			}
		})
	}
}

// R52: a node whose copy of the plan's storage has no room for the disk is no candidate, and
// memory_overcommit multiplies a node's memory.
func TestPlacementSkipsFullStorageAndOvercommits(t *testing.T) {
	sim := capacitySim(t)
	// pve2's local-lvm (400 GiB, not shared) keeps 4 GiB free: ct-big's 12 GiB disk does not fit.
	sim.AddVolumeOn("pve2", "local-lvm", "vm-990-disk-0", 396*gib, "images")
	e := newEnv(t, "sqlite", sim, nil)
	req := ctReq("svc-st-0")
	req.Plan = "ct-big"
	e.create(req)
	if n := e.service(req.ServiceID).Node; n != "pve1" {
		t.Fatalf("placed on %s: pve2's storage is full, pve3's memory is committed; want pve1", n)
	}

	// With memory_overcommit 3 every node is a candidate; pve2 is the least full (0 of 12 GiB)
	// before pve1 (3 of 18) and pve3 (7 of 24), although pve3 has the most headroom in bytes.
	e2 := newEnvOvercommit(t, capacitySim(t), 3)
	req = ctReq("svc-oc-0")
	req.Plan = "ct-big"
	e2.create(req)
	if n := e2.service(req.ServiceID).Node; n != "pve2" {
		t.Fatalf("with memory_overcommit 3 placed on %s, want pve2", n)
	}
}

// R52: a burst of 20 creates reads the cluster's figures once (one /cluster/resources, shared
// for a few seconds), and creates of one plan spread over nodes of unequal memory: none goes
// over its headroom.
func TestPlacementBurstSharesOneRead(t *testing.T) {
	sim := pvesim.Demo(pvesim.Options{TokenID: simtest.TokenID, TokenSecret: simtest.TokenSecret,
		Nodes: []string{"pve1", "pve2", "pve3"}, TaskDuration: 50 * time.Millisecond})
	// ct-small is 512 MiB: pve1 fits 8-3 GiB=10 of them, pve2 4 GiB=8, pve3 16 GiB=32.
	for n, mem := range map[string]int64{"pve1": 8 * gib, "pve2": 4 * gib, "pve3": 16 * gib} {
		sim.SetNodeOptions(n, pvesim.NodeOptions{MemoryBytes: mem})
	}
	ttl := sharedReadTTL
	sharedReadTTL = time.Minute
	e := newEnv(t, "sqlite", sim, nil)
	sharedReadTTL = ttl
	e.sim.ResetLog()
	var reqs []provision.CreateRequest
	for i := range 20 {
		reqs = append(reqs, ctReq(fmt.Sprintf("svc-b20-%02d", i)))
	}
	perNode := e.burst(reqs)
	reads := 0
	for _, r := range e.sim.Requests() {
		if r.Path == "/cluster/resources" && r.Form.Get("type") == "" {
			reads++
		}
	}
	t.Logf("20 creates: %d reads of /cluster/resources, placed %v", reads, perNode)
	if reads != 1 {
		t.Errorf("20 creates read /cluster/resources %d times, want 1", reads)
	}
	for n, max := range map[string]int{"pve1": 10, "pve2": 8, "pve3": 32} {
		if perNode[n] == 0 || perNode[n] > max {
			t.Errorf("burst of 20 placed %v: %s holds %d (room for %d)", perNode, n, perNode[n], max)
		}
	}
}

// R52: the node view and its gauge say which node an operator put into maintenance, and why it
// is no candidate.
func TestMaintenanceGauge(t *testing.T) {
	e := newEnv(t, "sqlite", capacitySim(t), nil)
	ctx := t.Context()
	if err := e.db.SetNodeMaintenance(ctx, models.NodeMaintenance{Cluster: "default", Node: "pve2"}); err != nil {
		t.Fatal(err)
	}
	nodes, err := e.Stack.Placement.Nodes(ctx, "default")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		g, ok := gauge(t, e, "pvebill_node_maintenance", map[string]string{"cluster": "default", "node": n.Node})
		want := 0.0
		if n.Node == "pve2" {
			want = 1
		}
		if !ok || g != want || n.Maintenance != (want == 1) || (want == 1 && n.Skipped != placement.SkipMaintenance) {
			t.Errorf("%s: gauge %v %v, view %+v", n.Node, g, ok, n)
		}
	}
}
