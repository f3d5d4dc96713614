package server_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"pvebill/models/dbtest"
	"pvebill/modules/pve"
	"pvebill/modules/pve/pvesim"
	"pvebill/modules/pve/pvesim/simtest"
)

// threeNodes is a replica over the demo cluster with three nodes (template 9000 on pve1).
func threeNodes(t *testing.T, dialect string) *svcHarness {
	t.Helper()
	sim := pvesim.Demo(pvesim.Options{TokenID: simtest.TokenID, TokenSecret: simtest.TokenSecret,
		Nodes: []string{"pve1", "pve2", "pve3"}})
	for _, n := range []string{"pve1", "pve2", "pve3"} {
		sim.SetNodeOptions(n, pvesim.NodeOptions{MemoryBytes: 16 << 30})
	}
	return newServicesReplica(t, dbtest.Open(t, dialect), simtest.Start(t, sim), nil, "test-"+dialect, true)
}

// adminBody sends a signed admin request with a JSON body.
func (h *svcHarness) adminBody(method, path, body string) response {
	h.t.Helper()
	return h.signed(method, path, "ops", adminSecret, []byte(body))
}

// waitOps waits for every operation to end and returns them by id.
func (h *svcHarness) waitOps(ops []any) map[string]map[string]any {
	h.t.Helper()
	out := map[string]map[string]any{}
	for _, o := range ops {
		id := o.(map[string]any)["id"].(string)
		r := h.admin("GET", "/v1/operations/"+id+"?wait=30")
		out[id] = r.json(h.t)["operation"].(map[string]any)
	}
	return out
}

// guestNodes is where the simulator has each service's guest.
func (h *svcHarness) guestNodes(ids ...string) map[string]string {
	out := map[string]string{}
	for _, id := range ids {
		g, _ := h.sim.Guest(int(h.service(id)["vmid"].(float64)))
		out[id] = g.Node
	}
	return out
}

// R52, R53: a node in maintenance receives no new guest from that moment; a drain moves every
// service's guest off it as migrate operations (containers in restart mode), one at a time per
// source node, to nodes placement chooses (never the node in maintenance), and each service's
// node follows. Taking the node out of maintenance gives it back to placement.
func TestNodeMaintenanceAndDrain(t *testing.T) {
	for _, dialect := range dbtest.Dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			h := threeNodes(t, dialect)
			ids := []string{"m-1", "m-2", "m-3", "m-4", "m-5", "m-6"}
			for _, id := range ids {
				succeeded(t, h.billing("POST", "/v1/services?wait=20", createBody(id, "ct-1g")))
			}
			before := h.guestNodes(ids...)
			var onPve2 []string
			for id, n := range before {
				if n == "pve2" {
					onPve2 = append(onPve2, id)
				}
			}
			if len(onPve2) < 2 {
				t.Fatalf("six containers on three nodes of 16 GiB: %v, want at least two on pve2", before)
			}

			// Each migration takes 150 ms: a second one sent while the first runs would show.
			h.sim.SetTaskDuration("vzmigrate", 150*time.Millisecond)
			r := h.adminBody("PUT", "/v1/admin/clusters/default/nodes/pve2/maintenance", `{"enabled":true,"drain":true}`)
			if r.Status != 200 {
				t.Fatalf("maintenance: %d %s", r.Status, r.Body)
			}
			body := r.json(t)
			node := body["node"].(map[string]any)
			if node["node"] != "pve2" || node["maintenance"] != true || node["skipped"] != "maintenance" {
				t.Fatalf("node after maintenance %v", node)
			}
			ops := body["operations"].([]any)
			if len(ops) != len(onPve2) {
				t.Fatalf("drain queued %d operations, want %d: %s", len(ops), len(onPve2), r.Body)
			}
			for id, op := range h.waitOps(ops) {
				if op["state"] != "succeeded" || op["action"] != "migrate" {
					t.Fatalf("migrate %s: %v", id, op)
				}
				res := op["result"].(map[string]any)
				if res["from"] != "pve2" || res["node"] == "pve2" {
					t.Errorf("result %v", res)
				}
			}
			after := h.guestNodes(ids...)
			for _, id := range ids {
				if after[id] == "pve2" {
					t.Errorf("%s still on the drained node", id)
				}
				if s := h.service(id); s["node"] != after[id] || s["power"] != "running" {
					t.Errorf("%s: view node %v power %v, guest on %s", id, s["node"], s["power"], after[id])
				}
			}
			migrations := 0
			var last time.Time
			for _, q := range h.sim.Requests() {
				if q.Method == "POST" && strings.HasSuffix(q.Path, "/migrate") {
					migrations++
					if !last.IsZero() && q.Time.Sub(last) < 150*time.Millisecond {
						t.Errorf("a migration from pve2 was sent %v after the previous one, while it ran", q.Time.Sub(last))
					}
					last = q.Time
					if !strings.HasPrefix(q.Path, "/nodes/pve2/lxc/") || q.Form.Get("restart") != "1" || q.Form.Get("target") == "pve2" {
						t.Errorf("migration request %s %v", q.Path, q.Form)
					}
				}
			}
			if migrations != len(onPve2) {
				t.Errorf("%d migrations sent, want %d (one per guest, none repeated)", migrations, len(onPve2))
			}

			// Placement leaves the node out while it is in maintenance, and takes it back after.
			for _, id := range []string{"m-7", "m-8", "m-9"} {
				succeeded(t, h.billing("POST", "/v1/services?wait=20", createBody(id, "ct-1g")))
				if n := h.guestNodes(id)[id]; n == "pve2" {
					t.Fatalf("%s placed on the node in maintenance", id)
				}
			}
			r = h.adminBody("PUT", "/v1/admin/clusters/default/nodes/pve2/maintenance", `{"enabled":false}`)
			if r.Status != 200 || r.json(t)["node"].(map[string]any)["maintenance"] != false {
				t.Fatalf("maintenance off: %d %s", r.Status, r.Body)
			}
			succeeded(t, h.billing("POST", "/v1/services?wait=20", createBody("m-10", "ct-1g")))
			if n := h.guestNodes("m-10")["m-10"]; n != "pve2" {
				t.Errorf("the emptied node was not chosen after maintenance: %s", n)
			}
		})
	}
}

// R52: the maintenance route's refusals: drain without enabled, an unknown node or cluster, a
// missing enabled, and a billing client.
func TestNodeMaintenanceRefusals(t *testing.T) {
	h := threeNodes(t, "sqlite")
	checkProblem(t, h.adminBody("PUT", "/v1/admin/clusters/default/nodes/pve2/maintenance", `{"enabled":false,"drain":true}`), 422, "validation_failed")
	checkProblem(t, h.adminBody("PUT", "/v1/admin/clusters/default/nodes/pve2/maintenance", `{"drain":true}`), 422, "validation_failed")
	checkProblem(t, h.adminBody("PUT", "/v1/admin/clusters/default/nodes/pve9/maintenance", `{"enabled":true}`), 404, "not_found")
	checkProblem(t, h.adminBody("PUT", "/v1/admin/clusters/nope/nodes/pve1/maintenance", `{"enabled":true}`), 404, "not_found")
	checkProblem(t, h.billing("PUT", "/v1/admin/clusters/default/nodes/pve1/maintenance", []byte(`{"enabled":true}`)), 403, "forbidden")
	rows, err := h.db.NodesInMaintenance(t.Context(), "default")
	if err != nil || len(rows) != 0 {
		t.Fatalf("a refused request changed maintenance: %v %v", rows, err)
	}
}

// R53: an admin migration of a running VM moves it online with its local disks to the node
// named; a VM with a local device is migration_refused (permanent, Proxmox's reason) and keeps
// running where it was, with no migration sent; a target that is the guest's own node or no node
// is 422, and nothing is queued.
func TestAdminMigrateVM(t *testing.T) {
	h := threeNodes(t, "sqlite")
	succeeded(t, h.billing("POST", "/v1/services?wait=20", createBody("vm-a", "vm-2g")))
	svc := h.service("vm-a")
	vmid, from := int(svc["vmid"].(float64)), svc["node"].(string)

	checkProblem(t, h.adminBody("POST", "/v1/admin/services/vm-a/migrate", `{"target_node":"`+from+`"}`), 422, "validation_failed")
	checkProblem(t, h.adminBody("POST", "/v1/admin/services/vm-a/migrate", `{"target_node":"pve9"}`), 422, "validation_failed")

	h.sim.ResetLog()
	op := succeeded(t, h.adminBody("POST", "/v1/admin/services/vm-a/migrate?wait=30", `{"target_node":"pve3"}`))
	if res := op["result"].(map[string]any); op["action"] != "migrate" || res["node"] != "pve3" || res["power"] != "running" || res["from"] != from {
		t.Fatalf("operation %v", op)
	}
	var sent []pvesim.Request
	for _, q := range h.sim.Requests() {
		if q.Method == "POST" && strings.HasSuffix(q.Path, "/migrate") {
			sent = append(sent, q)
		}
	}
	if len(sent) != 1 || sent[0].Path != "/nodes/"+from+"/qemu/"+strconv.Itoa(vmid)+"/migrate" ||
		sent[0].Form.Get("online") != "1" || sent[0].Form.Get("with-local-disks") != "1" || sent[0].Form.Get("target") != "pve3" {
		t.Fatalf("migration requests %+v", sent)
	}
	if g, _ := h.sim.Guest(vmid); g.Node != "pve3" || g.Status != "running" {
		t.Fatalf("guest after the migration: %s %s", g.Node, g.Status)
	}

	if err := h.sim.SetConfig(vmid, "hostpci0", "0000:01:00.0"); err != nil {
		t.Fatal(err)
	}
	h.sim.ResetLog()
	r := h.adminBody("POST", "/v1/admin/services/vm-a/migrate?wait=30", "")
	op = operationOf(t, r, 200)
	errv, _ := op["error"].(map[string]any)
	if op["state"] != "failed" || errv["code"] != "migration_refused" || errv["permanence"] != "permanent" ||
		!strings.Contains(errv["reason"].(string), "hostpci0") {
		t.Fatalf("refused migration: %s", r.Body)
	}
	for _, q := range h.sim.Requests() {
		if q.Method == "POST" && strings.HasSuffix(q.Path, "/migrate") {
			t.Errorf("a refused migration sent %s", q.Path)
		}
	}
	if g, _ := h.sim.Guest(vmid); g.Node != "pve3" || g.Status != "running" {
		t.Fatalf("guest after the refusal: %s %s", g.Node, g.Status)
	}
	raw, _ := json.Marshal(h.service("vm-a"))
	if !strings.Contains(string(raw), `"node":"pve3"`) {
		t.Errorf("service after the refusal %s", raw)
	}
}

// R52, R53: a drain of a node holding a VM and containers moves the VM online with its local
// disks and the containers in restart mode, each running on its new node as before; a container
// whose snapshots cannot travel (LVM-thin) is migration_refused with Proxmox's reason and left
// running where it was; the node's other guests (not pvebill's) are not touched.
func TestDrainMixedNode(t *testing.T) {
	h := threeNodes(t, "sqlite")
	for _, n := range []string{"pve2", "pve3"} { // steer the creates to pve1
		if r := h.adminBody("PUT", "/v1/admin/clusters/default/nodes/"+n+"/maintenance", `{"enabled":true}`); r.Status != 200 {
			t.Fatalf("maintenance %s: %d %s", n, r.Status, r.Body)
		}
	}
	succeeded(t, h.billing("POST", "/v1/services?wait=20", createBody("d-vm", "vm-2g")))
	succeeded(t, h.billing("POST", "/v1/services?wait=20", createBody("d-ct", "ct-1g")))
	succeeded(t, h.billing("POST", "/v1/services?wait=20", createBody("d-snap", "ct-1g")))
	for id, n := range h.guestNodes("d-vm", "d-ct", "d-snap") {
		if n != "pve1" {
			t.Fatalf("%s on %s, want pve1", id, n)
		}
	}
	for _, n := range []string{"pve2", "pve3"} {
		h.adminBody("PUT", "/v1/admin/clusters/default/nodes/"+n+"/maintenance", `{"enabled":false}`)
	}
	snapVMID := int(h.service("d-snap")["vmid"].(float64))
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	c := h.sim.Client(t, nil)
	if _, err := c.Node("pve1").LXC(snapVMID).Snapshots().Create(ctx, pve.SnapshotCreateRequest{SnapName: "before"}); err != nil {
		t.Fatal(err)
	}
	h.sim.ResetLog()

	r := h.adminBody("PUT", "/v1/admin/clusters/default/nodes/pve1/maintenance", `{"enabled":true,"drain":true}`)
	ops := r.json(t)["operations"].([]any)
	if r.Status != 200 || len(ops) != 3 {
		t.Fatalf("drain: %d %s", r.Status, r.Body)
	}
	byService := map[string]map[string]any{}
	for _, op := range h.waitOps(ops) {
		byService[op["service_id"].(string)] = op
	}
	for _, id := range []string{"d-vm", "d-ct"} {
		op := byService[id]
		if op["state"] != "succeeded" || op["result"].(map[string]any)["power"] != "running" {
			t.Errorf("%s: %v", id, op)
		}
		if n := h.guestNodes(id)[id]; n == "pve1" || h.service(id)["power"] != "running" {
			t.Errorf("%s on %s, power %v", id, n, h.service(id)["power"])
		}
	}
	refused := byService["d-snap"]
	errv, _ := refused["error"].(map[string]any)
	if refused["state"] != "failed" || errv["code"] != "migration_refused" || errv["permanence"] != "permanent" ||
		!strings.Contains(errv["reason"].(string), "non-migratable snapshot") {
		t.Fatalf("snapshotted container: %v", refused)
	}
	if g, _ := h.sim.Guest(snapVMID); g.Node != "pve1" || g.Status != "running" {
		t.Errorf("snapshotted container after the refusal: %s %s", g.Node, g.Status)
	}
	for _, q := range h.sim.Requests() {
		if q.Method == "POST" && strings.HasSuffix(q.Path, "/migrate") {
			switch {
			case strings.Contains(q.Path, "/qemu/"):
				if q.Form.Get("online") != "1" || q.Form.Get("with-local-disks") != "1" {
					t.Errorf("VM migration %v", q.Form)
				}
			case q.Form.Get("restart") != "1":
				t.Errorf("container migration %s %v", q.Path, q.Form)
			}
			if strings.Contains(q.Path, "/200/") || strings.Contains(q.Path, "/300/") {
				t.Errorf("a guest that is not pvebill's was moved: %s", q.Path)
			}
		}
	}
}

// R53, R11: a migration whose answer is lost after Proxmox started it (a proxy's 596) is not
// sent again: the run finds the guest gone from its source and records where it is; a migration
// whose task fails for another cause fails the operation (temporary) and leaves the guest where
// it was, running.
func TestMigrateAnswerLostOrTaskFailed(t *testing.T) {
	h := threeNodes(t, "sqlite")
	succeeded(t, h.billing("POST", "/v1/services?wait=20", createBody("lost-1", "ct-1g")))
	svc := h.service("lost-1")
	vmid, from := int(svc["vmid"].(float64)), svc["node"].(string)
	to := otherNode(from)

	h.sim.InjectFault(pvesim.Fault{Method: "POST", PathPattern: "/nodes/{node}/lxc/{vmid}/migrate", Nth: 1, Status: 596,
		Message: "Connection timed out", After: true})
	h.sim.ResetLog()
	op := succeeded(t, h.adminBody("POST", "/v1/admin/services/lost-1/migrate?wait=30", `{"target_node":"`+to+`"}`))
	if res := op["result"].(map[string]any); res["node"] != to || res["power"] != "running" {
		t.Fatalf("result %v", res)
	}
	sent := 0
	for _, q := range h.sim.Requests() {
		if q.Method == "POST" && strings.HasSuffix(q.Path, "/migrate") {
			sent++
		}
	}
	if sent != 1 {
		t.Errorf("%d migrations sent after a lost answer, want 1", sent)
	}
	if g, _ := h.sim.Guest(vmid); g.Node != to || g.Status != "running" {
		t.Fatalf("guest %s %s", g.Node, g.Status)
	}

	h.sim.ClearFaults()
	h.sim.InjectFault(pvesim.Fault{Method: "POST", PathPattern: "/nodes/{node}/lxc/{vmid}/migrate", Nth: 1,
		TaskFail: "migration aborted: ssh connection to target failed"})
	r := h.adminBody("POST", "/v1/admin/services/lost-1/migrate?wait=30", `{"target_node":"`+from+`"}`)
	op = operationOf(t, r, 200)
	errv, _ := op["error"].(map[string]any)
	if op["state"] != "failed" || errv["code"] != "proxmox_task_failed" {
		t.Fatalf("failed migration: %s", r.Body)
	}
	if g, _ := h.sim.Guest(vmid); g.Node != to || g.Status != "running" || g.Lock != "" {
		t.Fatalf("guest after the failed migration: %s %s lock %q", g.Node, g.Status, g.Lock)
	}
}

// R53: an admin migration of a guest moved by hand (its recorded node stale) is judged where the
// guest is: asked back to the recorded node, it is moved there, from where it really is.
func TestMigrateAGuestMovedByHand(t *testing.T) {
	h := threeNodes(t, "sqlite")
	succeeded(t, h.billing("POST", "/v1/services?wait=20", createBody("hand-1", "ct-1g")))
	svc := h.service("hand-1")
	vmid, recorded := int(svc["vmid"].(float64)), svc["node"].(string)
	actual := migrateOutside(t, h, "container", recorded, vmid)
	h.sim.ResetLog()
	op := succeeded(t, h.adminBody("POST", "/v1/admin/services/hand-1/migrate?wait=30", `{"target_node":"`+recorded+`"}`))
	if res := op["result"].(map[string]any); res["node"] != recorded {
		t.Fatalf("result %v", res)
	}
	var sent []string
	for _, q := range h.sim.Requests() {
		if q.Method == "POST" && strings.HasSuffix(q.Path, "/migrate") {
			sent = append(sent, q.Path+" target="+q.Form.Get("target"))
		}
	}
	if want := "/nodes/" + actual + "/lxc/" + strconv.Itoa(vmid) + "/migrate target=" + recorded; len(sent) != 1 || sent[0] != want {
		t.Fatalf("migrations sent %v, want [%s]", sent, want)
	}
	if g, _ := h.sim.Guest(vmid); g.Node != recorded {
		t.Fatalf("guest on %s", g.Node)
	}
}
