package server_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"pvebill/models/dbtest"
	"pvebill/modules/pve/pvesim"
)

// snapPlan is a plan offering snapshots (up to 2) on the given storage.
func snapPlan(kind, storage string) []byte {
	body := map[string]any{"name": "Snap " + kind, "guest_types": []string{kind}, "cluster": "default", "cores": 1,
		"memory_mib": 1024, "disk_gib": 8, "storage": storage, "bridge": "vmbr0", "snapshots_max": 2}
	if kind == "vm" {
		body["os"] = map[string]any{"vm": map[string]int{"debian-12": 9000}}
		body["ip_pool"] = "pool-a"
	} else {
		body["os"] = map[string]any{"container": map[string]string{"debian-12": "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst"}}
	}
	b, _ := json.Marshal(body)
	return b
}

// R44 over HTTP, for both kinds, on both databases: the plan's storage type is read when the
// plan is saved and decides the snapshot capability; a create with a bad name, at the limit or
// with a taken name, and a rollback with a wrong confirmation, are refused before anything
// reaches Proxmox; the list is sorted by time without "current"; a rollback restarts the guest
// that ran and reads back; snapshots do not block terminate.
func TestSnapshotsOverHTTP(t *testing.T) {
	for _, dialect := range dbtest.Dialects(t) {
		for _, kind := range []string{"container", "vm"} {
			t.Run(dialect+"/"+kind, func(t *testing.T) {
				h := newServicesHarness(t, dialect)
				code := "snap-" + kind
				r := h.signed("PUT", "/v1/admin/plans/"+code, "ops", adminSecret, snapPlan(kind, "local-lvm"))
				if r.Status != 201 {
					t.Fatalf("put plan: %d %s", r.Status, r.Body)
				}
				plan := h.billing("GET", "/v1/plans/"+code, nil).json(t)["plan"].(map[string]any)
				caps := plan["capabilities"].(map[string]any)[kind].(map[string]any)
				if plan["storage_type"] != "lvmthin" || caps["snapshot"].(map[string]any)["available"] != true {
					t.Fatalf("plan %v", plan)
				}
				id := "sn-" + kind
				succeeded(t, h.billing("POST", "/v1/services?wait=20", createBody(id, code)))
				testSnapshotsOverHTTP(t, h, id)
			})
		}
	}
}

// sentSince is what reached Proxmox since request n, task polls left out.
func sentSince(h *svcHarness, n int) []pvesim.Request {
	var out []pvesim.Request
	for _, r := range h.sim.Requests()[n:] {
		if !strings.Contains(r.Path, "/tasks/") {
			out = append(out, r)
		}
	}
	return out
}

func changesSince(h *svcHarness, n int) []string {
	var out []string
	for _, r := range sentSince(h, n) {
		if r.Method != "GET" {
			out = append(out, r.Method+" "+r.Path)
		}
	}
	return out
}

func testSnapshotsOverHTTP(t *testing.T, h *svcHarness, id string) {
	base := "/v1/services/" + id + "/snapshots"
	vmid := int(h.service(id)["vmid"].(float64))
	refused := func(method, path, body string, status int, code string) map[string]any {
		t.Helper()
		n := len(h.sim.Requests())
		var b []byte
		if body != "" {
			b = []byte(body)
		}
		p := checkProblem(t, h.billing(method, path, b), status, code)
		if c := changesSince(h, n); len(c) != 0 {
			t.Fatalf("%s %s %s: refused with %s but sent %v", method, path, body, code, c)
		}
		return p
	}
	refused("POST", base, `{"name":"has space"}`, 422, "validation_failed")
	refused("POST", base, `{"name":"current"}`, 422, "validation_failed")

	take := func(name string) {
		t.Helper()
		n := len(h.sim.Requests())
		op := finished(t, h, h.billing("POST", base+"?wait=20", []byte(`{"name":"`+name+`","description":"d-`+name+`"}`)))
		if op["state"] != "succeeded" || op["action"] != "snapshot_create" {
			t.Fatalf("create %s: %v", name, op)
		}
		c := changesSince(h, n)
		if len(c) != 1 || !strings.HasSuffix(c[0], fmt.Sprintf("/%d/snapshot", vmid)) {
			t.Fatalf("create %s sent %v", name, c)
		}
	}
	take("zeta")
	h.sim.Advance(2 * time.Second)
	take("alpha")
	if names, lock, _ := h.sim.Snapshots(vmid); !slices.Equal(names, []string{"alpha", "zeta"}) || lock != "" {
		t.Fatalf("in Proxmox: %v lock %q", names, lock)
	}
	// At snapshots_max, counted from the guest's real list: nothing sent.
	p := refused("POST", base, `{"name":"third"}`, 409, "snapshot_limit_reached")
	if p["permanence"] != "temporary" {
		t.Errorf("limit: %v", p)
	}
	refused("POST", base, `{"name":"zeta"}`, 409, "snapshot_exists")

	list := h.billing("GET", base, nil)
	openAPIChecker(t)("GET", base, list, 200)
	var got struct {
		Snapshots []struct {
			Name, Description string
			Parent            *string
		}
		SnapshotsMax int `json:"snapshots_max"`
	}
	if err := json.Unmarshal(list.Body, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Snapshots) != 2 || got.Snapshots[0].Name != "zeta" || got.Snapshots[1].Name != "alpha" ||
		got.Snapshots[0].Parent != nil || got.Snapshots[1].Parent == nil || *got.Snapshots[1].Parent != "zeta" ||
		got.Snapshots[0].Description != "d-zeta" || got.SnapshotsMax != 2 {
		t.Fatalf("list %s", list.Body)
	}

	// Rollback: the confirmation first, then the stamp and the snapshot; the running guest is
	// rolled back with start=1 and read back running, descending from the snapshot.
	refused("POST", base+"/zeta/rollback", `{"confirm":"alpha"}`, 422, "validation_failed")
	refused("POST", base+"/zeta/rollback", `{}`, 422, "validation_failed")
	refused("POST", base+"/nope/rollback", `{"confirm":"nope"}`, 404, "not_found")
	if h.service(id)["power"] != "running" {
		t.Fatal("guest not running before the rollback")
	}
	n := len(h.sim.Requests())
	op := finished(t, h, h.billing("POST", base+"/zeta/rollback?wait=20", []byte(`{"confirm":"zeta"}`)))
	if op["state"] != "succeeded" || op["action"] != "snapshot_rollback" {
		t.Fatalf("rollback: %v", op)
	}
	var rb []pvesim.Request
	for _, r := range sentSince(h, n) {
		if r.Method == "POST" {
			rb = append(rb, r)
		}
	}
	if len(rb) != 1 || !strings.HasSuffix(rb[0].Path, "/snapshot/zeta/rollback") || rb[0].Form.Get("start") != "1" {
		t.Fatalf("rollback sent %+v", rb)
	}
	if g, _ := h.sim.Guest(vmid); g.Status != "running" || g.Config["parent"] != "zeta" || g.Lock != "" {
		t.Fatalf("after rollback: %s parent %q lock %q", g.Status, g.Config["parent"], g.Lock)
	}

	refused("DELETE", base+"/nope", "", 404, "not_found")
	op = finished(t, h, h.billing("DELETE", base+"/alpha?wait=20", nil))
	if op["state"] != "succeeded" || op["action"] != "snapshot_delete" {
		t.Fatalf("delete: %v", op)
	}
	if names, _, _ := h.sim.Snapshots(vmid); !slices.Equal(names, []string{"zeta"}) {
		t.Fatalf("after delete: %v", names)
	}

	// A guest's snapshots do not block terminate; they go with it.
	succeeded(t, h.billing("POST", "/v1/services/"+id+"/terminate?wait=20", nil))
	if _, _, ok := h.sim.Snapshots(vmid); ok {
		t.Fatal("guest still there after terminate")
	}
}

// R44, R10: a plan without snapshots_max, or on a storage that cannot snapshot the guest type,
// refuses the capability permanently with its reason; a request for it is 409
// capability_refused with that permanence and the translated reason, and sends nothing.
func TestSnapshotCapabilityRefused(t *testing.T) {
	for _, dialect := range dbtest.Dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			h := newServicesHarness(t, dialect)
			if r := h.signed("PUT", "/v1/admin/plans/ct-dir", "ops", adminSecret, snapPlan("container", "local")); r.Status != 201 {
				t.Fatalf("put plan: %d %s", r.Status, r.Body)
			}
			plan := h.billing("GET", "/v1/plans/ct-dir", nil, withHeader("Accept-Language", "de")).json(t)["plan"].(map[string]any)
			snap := plan["capabilities"].(map[string]any)["container"].(map[string]any)["snapshot"].(map[string]any)
			if plan["storage_type"] != "dir" || snap["available"] != false || snap["refusal"] != "permanent" ||
				!strings.Contains(snap["reason"].(string), "Speicher") {
				t.Fatalf("dir plan: %v", plan)
			}
			vmDir := h.signed("PUT", "/v1/admin/plans/vm-dir", "ops", adminSecret, snapPlan("vm", "local")).json(t)["plan"].(map[string]any)
			if s := vmDir["capabilities"].(map[string]any)["vm"].(map[string]any)["snapshot"].(map[string]any); s["available"] != true {
				t.Fatalf("vm on dir (qcow2 can): %v", s)
			}

			succeeded(t, h.billing("POST", "/v1/services?wait=20", createBody("off-1", "ct-1g")))
			n := len(h.sim.Requests())
			p := checkProblem(t, h.billing("POST", "/v1/services/off-1/snapshots", []byte(`{"name":"s1"}`),
				withHeader("Accept-Language", "fr")), 409, "capability_refused")
			if p["permanence"] != "permanent" || !strings.Contains(p["reason"].(string), "instantané") {
				t.Fatalf("problem %v", p)
			}
			if c := changesSince(h, n); len(c) != 0 {
				t.Fatalf("sent %v", c)
			}
			// Listing needs no plan capability: an empty list with the plan's limit 0.
			if r := h.billing("GET", "/v1/services/off-1/snapshots", nil); r.Status != 200 ||
				!strings.Contains(string(r.Body), `"snapshots":[]`) || !strings.Contains(string(r.Body), `"snapshots_max":0`) {
				t.Fatalf("list %d %s", r.Status, r.Body)
			}
		})
	}
}

// R44: a reinstall preview lists the snapshots the reinstall will erase, and each is a
// confirmation: an apply without it is confirmations_mismatch, a snapshot taken after the
// preview makes the apply stale before anything is destroyed, and the applied reinstall leaves
// no snapshot behind.
func TestReinstallPreviewListsSnapshots(t *testing.T) {
	for _, dialect := range dbtest.Dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			h := newServicesHarness(t, dialect)
			check := openAPIChecker(t)
			if r := h.signed("PUT", "/v1/admin/plans/snap-ct", "ops", adminSecret, snapPlan("container", "local-lvm")); r.Status != 201 {
				t.Fatalf("put plan: %d %s", r.Status, r.Body)
			}
			id := "rs-snap"
			succeeded(t, h.billing("POST", "/v1/services?wait=20", createBody(id, "snap-ct")))
			vmid := int(h.service(id)["vmid"].(float64))
			succeeded(t, h.billing("POST", "/v1/services/"+id+"/snapshots?wait=20", []byte(`{"name":"keep1"}`)))

			preview := func() (string, any) {
				t.Helper()
				r := h.billing("POST", "/v1/services/"+id+"/reinstall/preview?wait=10", []byte(`{}`))
				check("POST", "/v1/services/"+id+"/reinstall/preview", r, 200)
				in := r.json(t)["intent"].(map[string]any)
				return in["id"].(string), in
			}
			intentID, in := preview()
			intent := in.(map[string]any)
			snaps := intent["snapshots"].([]any)
			if len(snaps) != 1 || snaps[0].(map[string]any)["name"] != "keep1" {
				t.Fatalf("preview snapshots %v", intent["snapshots"])
			}
			confs := intent["confirmations"].([]any)
			last := confs[len(confs)-1].(map[string]any)
			if last["key"] != "snapshot" || last["volume"] != "keep1" {
				t.Fatalf("confirmations %v", confs)
			}
			apply := func(confs any) response {
				body, _ := json.Marshal(map[string]any{"intent_id": intentID, "root_password": reinstallPassword, "confirmations": confs})
				return h.billing("POST", "/v1/services/"+id+"/reinstall?wait=20", body)
			}
			checkProblem(t, apply(confs[:len(confs)-1]), 409, "confirmations_mismatch")

			// A snapshot taken after the preview: the apply's own check finds it and stops
			// before the destroy.
			succeeded(t, h.billing("POST", "/v1/services/"+id+"/snapshots?wait=20", []byte(`{"name":"later"}`)))
			n := len(h.sim.Requests())
			if op := finished(t, h, apply(confs)); op["state"] != "failed" || errorCode(op) != "preview_stale" {
				t.Fatalf("apply after a new snapshot: %v", op)
			}
			for _, r := range sentSince(h, n) {
				if r.Method == "DELETE" {
					t.Fatalf("a stale apply destroyed: %s", r.Path)
				}
			}
			if names, _, _ := h.sim.Snapshots(vmid); len(names) != 2 {
				t.Fatalf("snapshots after a stale apply: %v", names)
			}

			intentID, in = preview()
			op := finished(t, h, apply(in.(map[string]any)["confirmations"]))
			if op["state"] != "succeeded" {
				t.Fatalf("apply: %v", op)
			}
			if names, _, ok := h.sim.Snapshots(vmid); !ok || len(names) != 0 {
				t.Fatalf("after the reinstall: %v (exists %v)", names, ok)
			}
			r := h.billing("GET", "/v1/services/"+id+"/snapshots", nil)
			check("GET", "/v1/services/"+id+"/snapshots", r, 200)
		})
	}
}
