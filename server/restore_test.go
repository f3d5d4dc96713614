package server_test

import (
	"encoding/json"
	"testing"
	"time"

	"pvebill/models/dbtest"
)

// R43 over HTTP on both databases: a restore from the service's own backup is previewed (200,
// kind restore, the backup's id, the reinstall's labels and confirmations), read back at
// GET …/restore and …/restore/{id} (and not at …/reinstall/{id}), refused for a foreign id
// (404) and a mismatched confirmation list (409), applied as an operation with action restore
// that succeeds, and the intent advances to completed; every answer conforms to openapi.yaml.
func TestRestoreOverHTTP(t *testing.T) {
	for _, dialect := range dbtest.Dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			h := newServicesHarness(t, dialect)
			if r := h.signed("PUT", "/v1/admin/plans/ct-bk", "ops", adminSecret, backupPlanBody("local", nil)); r.Status != 201 {
				t.Fatalf("plan: %d %s", r.Status, r.Body)
			}
			id := "rs-1"
			succeeded(t, h.billing("POST", "/v1/services?wait=20", createBody(id, "ct-bk")))
			op := finished(t, h, h.billing("POST", "/v1/services/"+id+"/backups?wait=20", nil))
			backupID := op["result"].(map[string]any)["backup"].(map[string]any)["id"].(string)
			base := "/v1/services/" + id + "/restore"

			foreign, _ := json.Marshal(map[string]string{"backup_id": "vzdump-lxc-999-2020_01_01-00_00_00.tar.zst"})
			r := h.billing("POST", base+"/preview?wait=10", foreign)
			checkProblem(t, r, 404, "not_found")
			conform(t, "POST", base+"/preview", r)
			checkProblem(t, h.billing("POST", base+"/preview?wait=10", []byte(`{"backup_id":"x","os":"debian-12"}`)), 422, "validation_failed")

			body, _ := json.Marshal(map[string]string{"backup_id": backupID})
			r = h.billing("POST", base+"/preview?wait=10", body)
			conform(t, "POST", base+"/preview", r)
			in := r.json(t)["intent"].(map[string]any)
			if r.Status != 200 || in["kind"] != "restore" || in["backup_id"] != backupID || in["state"] != "preview_ready" ||
				len(in["blockers"].([]any)) != 0 || len(in["mounts"].([]any)) != 1 {
				t.Fatalf("preview %d %s", r.Status, r.Body)
			}
			intentID := in["id"].(string)
			if loc := r.Header.Get("Location"); loc != base+"/"+intentID {
				t.Fatalf("Location %q", loc)
			}
			r = h.billing("GET", base, nil)
			conform(t, "GET", base, r)
			if r.json(t)["intent"].(map[string]any)["id"] != intentID {
				t.Fatalf("latest restore %s", r.Body)
			}
			checkProblem(t, h.billing("GET", "/v1/services/"+id+"/reinstall/"+intentID, nil), 404, "not_found")

			bad, _ := json.Marshal(map[string]any{"intent_id": intentID, "confirmations": []map[string]string{{"key": "rootfs", "volume": "x"}}})
			r = h.billing("POST", base, bad)
			checkProblem(t, r, 409, "confirmations_mismatch")
			conform(t, "POST", base, r)

			apply, _ := json.Marshal(map[string]any{"intent_id": intentID, "confirmations": in["confirmations"]})
			r = h.billing("POST", base+"?wait=20", apply)
			conform(t, "POST", base, r)
			if done := succeeded(t, r); done["action"] != "restore" || done["stage"] != "verify" {
				t.Fatalf("restore operation %v", done)
			}
			r = h.billing("GET", base+"/"+intentID, nil)
			conform(t, "GET", base+"/"+intentID, r)
			if got := r.json(t)["intent"].(map[string]any); got["state"] != "completed" {
				t.Fatalf("intent %s", r.Body)
			}
			if s := h.service(id); s["state"] != "active" || s["power"] != "running" {
				t.Fatalf("service %v", s)
			}
		})
	}
}

// R41, R43: a restore ends the service's console sessions the moment its operation starts
// (close code 4001), as a reinstall does.
func TestRestoreEndsConsoleSessions(t *testing.T) {
	h := newConsoleHarness(t, "sqlite", 0)
	if r := h.signed("PUT", "/v1/admin/plans/ct-bk", "ops", adminSecret, backupPlanBody("local", nil)); r.Status != 201 {
		t.Fatalf("plan: %d %s", r.Status, r.Body)
	}
	id := "rs-con"
	succeeded(t, h.billing("POST", "/v1/services?wait=20", createBody(id, "ct-bk")))
	op := finished(t, h, h.billing("POST", "/v1/services/"+id+"/backups?wait=20", nil))
	backupID := op["result"].(map[string]any)["backup"].(map[string]any)["id"].(string)
	body, _ := json.Marshal(map[string]string{"backup_id": backupID})
	r := h.billing("POST", "/v1/services/"+id+"/restore/preview?wait=10", body)
	in := r.json(t)["intent"].(map[string]any)
	if in["state"] != "preview_ready" {
		t.Fatalf("preview %s", r.Body)
	}
	c, _, err := dialConsole(t, h.openConsole(t, id, "", "terminal"))
	if err != nil {
		t.Fatal(err)
	}
	readUntil(t, c, ":~# ")
	apply, _ := json.Marshal(map[string]any{"intent_id": in["id"], "confirmations": in["confirmations"]})
	r = h.billing("POST", "/v1/services/"+id+"/restore", apply)
	if r.Status != 202 && r.Status != 200 {
		t.Fatalf("restore %d %s", r.Status, r.Body)
	}
	if code := waitClose(t, c, 3*time.Second); code != 4001 {
		t.Fatalf("close code %d, want 4001", code)
	}
	succeeded(t, h.billing("GET", "/v1/operations/"+operationOf(t, r, r.Status)["id"].(string)+"?wait=20", nil))
}
