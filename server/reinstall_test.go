package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"pvebill/models/dbtest"
	"pvebill/modules/pve/pvesim"
)

const reinstallPassword = "N3w-R00t-Reinstall-Secret"

// The whole reinstall through HTTP on both databases: a container with a bind mount and
// another guest's volume; preview (200, labels, confirmations), a mismatched apply (409
// confirmations_mismatch), the apply (operation), the intent advancing on read to completed;
// every answer conforms to openapi.yaml, and the password is in no answer, log line or table.
func TestReinstallOverHTTP(t *testing.T) {
	for _, dialect := range dbtest.Dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			h := newServicesHarness(t, dialect)
			check := openAPIChecker(t)
			id := "whmcs-reinstall"
			succeeded(t, h.billing("POST", "/v1/services?wait=20", createBody(id, "ct-1g")))
			vmid := int(h.service(id)["vmid"].(float64))
			if err := h.sim.SetConfig(vmid, "mp0", "/srv/shared,mp=/mnt/shared"); err != nil {
				t.Fatal(err)
			}
			if err := h.sim.SetConfig(vmid, "mp1", "local-lvm:vm-6002-disk-1,mp=/data"); err != nil {
				t.Fatal(err)
			}
			var answers [][]byte
			r := h.billing("POST", "/v1/services/"+id+"/reinstall/preview?wait=10", []byte(`{}`))
			check("POST", "/v1/services/"+id+"/reinstall/preview", r, 200)
			answers = append(answers, r.Body)
			in := r.json(t)["intent"].(map[string]any)
			if in["state"] != "preview_ready" || len(in["blockers"].([]any)) != 0 {
				t.Fatalf("intent %s", r.Body)
			}
			mounts := in["mounts"].([]any)
			var labels []string
			for _, m := range mounts {
				mm := m.(map[string]any)
				labels = append(labels, fmt.Sprintf("%s:%s:%s", mm["key"], mm["data"], mm["mount_after"]))
			}
			if strings.Join(labels, " ") != "rootfs:erased:recreated mp0:untouched:removed mp1:excluded:removed" {
				t.Fatalf("labels %v", labels)
			}
			intentID := in["id"].(string)
			confs := in["confirmations"]

			r = h.billing("GET", "/v1/services/"+id+"/reinstall", nil)
			check("GET", "/v1/services/"+id+"/reinstall", r, 200)

			bad, _ := json.Marshal(map[string]any{"intent_id": intentID, "root_password": reinstallPassword,
				"confirmations": []map[string]string{{"key": "rootfs", "volume": fmt.Sprintf("local-lvm:vm-%d-disk-0", vmid)}}})
			r = h.billing("POST", "/v1/services/"+id+"/reinstall", bad, withHeader("Accept-Language", "de"))
			checkProblem(t, r, 409, "confirmations_mismatch")
			check("POST", "/v1/services/"+id+"/reinstall", r, 409)
			answers = append(answers, r.Body)

			body, _ := json.Marshal(map[string]any{"intent_id": intentID, "root_password": reinstallPassword, "confirmations": confs})
			r = h.billing("POST", "/v1/services/"+id+"/reinstall?wait=20", body, withHeader("Idempotency-Key", "apply-1"))
			check("POST", "/v1/services/"+id+"/reinstall", r, 200)
			answers = append(answers, r.Body)
			op := succeeded(t, r)
			if op["action"] != "reinstall" {
				t.Fatalf("operation %v", op)
			}
			// A retry with the same key replays the answer and starts nothing.
			replay := h.billing("POST", "/v1/services/"+id+"/reinstall?wait=20", body, withHeader("Idempotency-Key", "apply-1"))
			if rop := operationOf(t, replay, 200); rop["id"] != op["id"] {
				t.Fatalf("replay answered operation %v, want %v", rop["id"], op["id"])
			}
			r = h.billing("GET", "/v1/services/"+id+"/reinstall/"+intentID, nil)
			check("GET", "/v1/services/"+id+"/reinstall/"+intentID, r, 200)
			answers = append(answers, r.Body)
			got := r.json(t)["intent"].(map[string]any)
			if got["state"] != "completed" || got["applied"] == nil {
				t.Fatalf("intent after apply %s", r.Body)
			}
			// A second apply of a used intent is stale.
			r = h.billing("POST", "/v1/services/"+id+"/reinstall", body)
			checkProblem(t, r, 409, "preview_stale")
			g, _ := h.sim.Guest(vmid)
			if _, ok := g.Config["mp0"]; ok || g.Status != "running" {
				t.Fatalf("guest after reinstall %+v", g)
			}
			sent := false
			for _, req := range h.sim.Requests() {
				if req.Method == "POST" && req.Form.Get("vmid") == fmt.Sprint(vmid) && req.Form.Get("password") == reinstallPassword {
					sent = true
				}
				if req.Method == "DELETE" && req.Form.Has("destroy-unreferenced-disks") && strings.HasSuffix(req.Path, fmt.Sprint(vmid)) {
					t.Error("the reinstall destroy sent destroy-unreferenced-disks")
				}
			}
			if !sent {
				t.Error("the new password never reached Proxmox")
			}
			assertPasswordNowhere(t, h, answers)
		})
	}
}

// assertPasswordNowhere checks R26 for the reinstall password: in no answer, log line or table
// row.
func assertPasswordNowhere(t *testing.T, h *svcHarness, answers [][]byte) {
	t.Helper()
	for _, a := range answers {
		if bytes.Contains(a, []byte(reinstallPassword)) {
			t.Errorf("an answer holds the password: %s", a)
		}
	}
	if strings.Contains(h.logs.String(), reinstallPassword) {
		t.Error("the password is in the log")
	}
	for _, table := range []string{"services", "operations", "idempotency_keys", "audit_events", "reinstall_intents"} {
		rows := dbtest.TableRows(t, h.db, table)
		if strings.Contains(fmt.Sprint(rows), reinstallPassword) {
			t.Errorf("the password is in table %s", table)
		}
	}
}

// R28 through HTTP: a create that fails after destroy leaves the service awaiting
// reconciliation — further reinstalls are refused — until an admin reconciles it.
func TestReconcileOverHTTP(t *testing.T) {
	h := newServicesHarness(t, "sqlite")
	check := openAPIChecker(t)
	id := "whmcs-recon"
	succeeded(t, h.billing("POST", "/v1/services?wait=20", createBody(id, "ct-1g")))
	r := h.billing("POST", "/v1/services/"+id+"/reinstall/preview?wait=10", nil)
	in := r.json(t)["intent"].(map[string]any)
	h.sim.InjectFault(pvesim.Fault{Method: "POST", PathPattern: "/nodes/{node}/lxc", Status: 500, Message: "storage full"})
	body, _ := json.Marshal(map[string]any{"intent_id": in["id"], "root_password": reinstallPassword, "confirmations": in["confirmations"]})
	op := operationOf(t, h.billing("POST", "/v1/services/"+id+"/reinstall?wait=20", body), 200)
	if op["state"] != "needs_reconciliation" || op["stage"] != "create" {
		t.Fatalf("operation %v", op)
	}
	r = h.billing("GET", "/v1/services/"+id+"/reinstall", nil)
	check("GET", "/v1/services/"+id+"/reinstall", r, 200)
	got := r.json(t)["intent"].(map[string]any)
	rec, _ := got["reconciliation"].(map[string]any)
	if got["state"] != "needs_reconciliation" || rec == nil || rec["failed_stage"] != "create" || rec["guest_existed"] != false {
		t.Fatalf("intent %s", r.Body)
	}
	checkProblem(t, h.billing("POST", "/v1/services/"+id+"/reinstall/preview", nil), 409, "service_locked")
	r = h.billing("POST", "/v1/admin/services/"+id+"/reconcile", []byte(`{"resolution":"abandoned"}`))
	checkProblem(t, r, 403, "forbidden")
	r = h.signed("POST", "/v1/admin/services/"+id+"/reconcile", "ops", adminSecret, []byte(`{"resolution":"maybe"}`))
	checkProblem(t, r, 422, "validation_failed")
	r = h.signed("POST", "/v1/admin/services/"+id+"/reconcile", "ops", adminSecret, []byte(`{"resolution":"abandoned","note":"guest lost"}`))
	check("POST", "/v1/admin/services/"+id+"/reconcile", r, 200)
	if rc := r.json(t)["reconciliation"].(map[string]any); rc["state"] != "failed" {
		t.Fatalf("reconcile %s", r.Body)
	}
	r = h.signed("POST", "/v1/admin/services/"+id+"/reconcile", "ops", adminSecret, []byte(`{"resolution":"abandoned"}`))
	checkProblem(t, r, 409, "nothing_to_reconcile")
	check("POST", "/v1/admin/services/"+id+"/reconcile", r, 409)
	if got := h.billing("GET", "/v1/services/"+id+"/reinstall", nil).json(t)["intent"].(map[string]any); got["state"] != "resolved" {
		t.Fatalf("intent %v", got["state"])
	}
}
