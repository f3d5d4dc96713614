package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"pvebill/models/dbtest"
)

// conform checks that an answer to method path is what openapi.yaml declares.
func conform(t *testing.T, method, path string, resp response) {
	t.Helper()
	router, err := gorillamux.NewRouter(loadSpec(t))
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(method, "http://127.0.0.1:8080"+path, nil)
	route, params, err := router.FindRoute(req)
	if err != nil {
		t.Fatalf("%s %s: not in spec: %v", method, path, err)
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: resp.Status, Header: resp.Header,
		Body: io.NopCloser(bytes.NewReader(resp.Body)), Options: &openapi3filter.Options{IncludeResponseStatus: true}}
	if err := openapi3filter.ValidateResponse(t.Context(), out); err != nil {
		t.Errorf("%s %s (%d): %v\n%s", method, path, resp.Status, err, resp.Body)
	}
}

// backupPlanBody is a container plan with backups on storage (and extra fields).
func backupPlanBody(storage string, extra map[string]any) []byte {
	m := map[string]any{"name": "CT backups", "guest_types": []string{"container"}, "cluster": "default", "cores": 1,
		"memory_mib": 1024, "disk_gib": 8, "storage": "local-lvm", "bridge": "vmbr0",
		"os":             map[string]any{"container": map[string]string{"debian-12": "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst"}},
		"backup_storage": storage, "backups_max": 2}
	for k, v := range extra {
		m[k] = v
	}
	b, _ := json.Marshal(m)
	return b
}

// R42 over HTTP on both databases: a plan's backup storage is checked against the cluster
// when it is saved (one that does not hold backups is refused, naming the ones that do) and
// its schedule must parse; the plan's capabilities say backup and restore are available, and a plan without backups refuses both permanently; a backup is an operation whose
// result names the archive; the list shows it (and answers as openapi.yaml says), the usage
// report carries backup_bytes, a protected backup is 409 backup_protected with no DELETE sent,
// an unknown id 404, a delete an operation backup_delete after which backup_bytes is 0; a service whose plan has no backups is 409 capability_refused.
func TestBackupsOverHTTP(t *testing.T) {
	for _, dialect := range dbtest.Dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			h := newServicesHarness(t, dialect)
			testBackupPlansOverHTTP(t, h)
			testBackupsOverHTTP(t, h)
		})
	}
}

func testBackupPlansOverHTTP(t *testing.T, h *svcHarness) {
	for _, bad := range []struct {
		body        []byte
		field, code string
	}{
		{backupPlanBody("local-lvm", nil), "backup_storage", "not_allowed_value"},
		{backupPlanBody("nowhere", nil), "backup_storage", "not_allowed_value"},
		{backupPlanBody("local", map[string]any{"backup_schedule": "every day"}), "backup_schedule", "bad_format"},
		{backupPlanBody("local", map[string]any{"backup_mode": "suspend"}), "backup_mode", "not_allowed_value"},
		{backupPlanBody("", map[string]any{"backup_storage": nil}), "backups_max", "not_applicable"},
	} {
		r := h.signed("PUT", "/v1/admin/plans/ct-bk", "ops", adminSecret, bad.body)
		m := checkProblem(t, r, 422, "validation_failed")
		raw, _ := json.Marshal(m["errors"])
		if !strings.Contains(string(raw), `"field":"`+bad.field+`"`) || !strings.Contains(string(raw), bad.code) {
			t.Fatalf("%s: errors %s, want %s %s", bad.body, raw, bad.field, bad.code)
		}
		if bad.field == "backup_storage" && !strings.Contains(string(raw), "one of: local.") {
			t.Fatalf("the refusal does not name the storage that holds backups: %s", raw)
		}
	}
	h.sim.ResetLog()
	r := h.signed("PUT", "/v1/admin/plans/ct-bk", "ops", adminSecret, backupPlanBody("local",
		map[string]any{"backup_schedule": "0 3 * * *", "backups_on_terminate": "keep"}))
	if r.Status != 201 {
		t.Fatalf("plan with backups: %d %s", r.Status, r.Body)
	}
	// One read of the cluster's storages serves both the backup storage check (R42) and the
	// storage type the snapshot capability follows (R44).
	var reads []string
	for _, q := range h.sim.Requests() {
		reads = append(reads, q.Method+" "+q.Path)
	}
	if len(reads) != 1 || reads[0] != "GET /storage" {
		t.Fatalf("a plan save read %v from Proxmox, want one GET /storage", reads)
	}
	conform(t, "PUT", "/v1/admin/plans/ct-bk", r)
	p := r.json(t)["plan"].(map[string]any)
	caps := p["capabilities"].(map[string]any)["container"].(map[string]any)
	if p["backup_mode"] != "snapshot" || p["backups_max"] != 2.0 || caps["backup"].(map[string]any)["available"] != true ||
		caps["restore"].(map[string]any)["available"] != true {
		t.Fatalf("plan %v", p)
	}
	r = h.signed("GET", "/v1/plans/ct-1g", "ops", adminSecret, nil)
	caps = r.json(t)["plan"].(map[string]any)["capabilities"].(map[string]any)["container"].(map[string]any)
	for _, c := range []string{"backup", "restore"} {
		if s := caps[c].(map[string]any); s["available"] != false || s["refusal"] != "permanent" || s["reason"] == "" {
			t.Fatalf("%s on a plan without backups: %v", c, s)
		}
	}
}

func testBackupsOverHTTP(t *testing.T, h *svcHarness) {
	succeeded(t, h.billing("POST", "/v1/services?wait=20", createBody("bk-1", "ct-bk")))
	succeeded(t, h.billing("POST", "/v1/services?wait=20", createBody("bk-none", "ct-1g")))
	base := "/v1/services/bk-1/backups"
	for _, bad := range []string{`{"note":"one\ntwo"}`, `{"note":"` + strings.Repeat("x", 201) + `"}`} {
		r := h.billing("POST", base, []byte(bad))
		conform(t, "POST", base, r)
		m := checkProblem(t, r, 422, "validation_failed")
		if raw, _ := json.Marshal(m["errors"]); !strings.Contains(string(raw), `"field":"note"`) {
			t.Fatalf("%s: errors %s", bad, raw)
		}
	}
	op := finished(t, h, h.billing("POST", base+"?wait=20", []byte(`{"note":"before the upgrade"}`)))
	res, _ := op["result"].(map[string]any)
	made, _ := res["backup"].(map[string]any)
	if op["state"] != "succeeded" || op["action"] != "backup" || made == nil {
		t.Fatalf("backup operation %v", op)
	}
	r := h.billing("GET", base, nil)
	conform(t, "GET", base, r)
	list := r.json(t)["backups"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["id"] != made["id"] || list[0].(map[string]any)["note"] != "before the upgrade" ||
		list[0].(map[string]any)["kind"] != "manual" {
		t.Fatalf("list %s, made %v", r.Body, made)
	}
	id := made["id"].(string)
	from := time.Now().Add(-time.Hour)
	path := "/v1/usage?" + url.Values{"from": {from.Format(time.RFC3339)}, "to": {from.Add(2 * time.Hour).Format(time.RFC3339)},
		"service_id": {"bk-1"}}.Encode()
	r = h.billing("GET", path, nil)
	conform(t, "GET", path, r)
	if svcs := r.json(t)["services"].([]any); len(svcs) != 1 || svcs[0].(map[string]any)["backup_bytes"] != made["size_bytes"] {
		t.Fatalf("usage %s, want backup_bytes %v", r.Body, made["size_bytes"])
	}
	h.sim.SetVolumeProtected("local", "backup/"+id, true, "pvebill-service: whmcs/bk-1")
	h.sim.ResetLog()
	r = h.billing("DELETE", base+"/"+id, nil)
	conform(t, "DELETE", base+"/"+id, r)
	checkProblem(t, r, 409, "backup_protected")
	for _, q := range h.sim.Requests() {
		if q.Method != "GET" {
			t.Fatalf("the delete of a protected backup sent %s %s", q.Method, q.Path)
		}
	}
	h.sim.SetVolumeProtected("local", "backup/"+id, false, "pvebill-service: whmcs/bk-1")
	checkProblem(t, h.billing("DELETE", base+"/vzdump-lxc-999-2020_01_01-00_00_00.tar.zst", nil), 404, "not_found")
	checkProblem(t, h.billing("DELETE", base+"/local:"+id, nil), 404, "not_found")
	checkProblem(t, h.billing("DELETE", base+"/..%2F"+id, nil), 404, "route_not_found")
	r = h.billing("DELETE", base+"/"+id, nil)
	conform(t, "DELETE", base+"/"+id, r)
	if op := finished(t, h, r); op["action"] != "backup_delete" || op["state"] != "succeeded" {
		t.Fatalf("delete: %d %v", r.Status, op)
	}
	if svcs := h.billing("GET", path, nil).json(t)["services"].([]any); svcs[0].(map[string]any)["backup_bytes"] != 0.0 {
		t.Fatalf("backup_bytes after the delete: %v", svcs[0])
	}
	if list := h.billing("GET", base, nil).json(t)["backups"].([]any); len(list) != 0 {
		t.Fatalf("after delete: %v", list)
	}
	r = h.billing("POST", "/v1/services/bk-none/backups", nil)
	conform(t, "POST", "/v1/services/bk-none/backups", r)
	if m := checkProblem(t, r, 409, "capability_refused"); m["permanence"] != "permanent" || m["reason"] == nil || strings.HasPrefix(m["reason"].(string), "capability.") {
		t.Fatalf("a plan without backups: permanence or translated reason missing: %s", r.Body)
	}
	checkProblem(t, h.billing("GET", "/v1/services/bk-none/backups", nil), 409, "capability_refused")
}

// R42, docs/api.md: backups_max 0 is the plan without backups. A plans file holding such a
// plan is imported at start, the admin API saves one, and its backup capability is refused
// permanently; with a backup storage, 0 is too small.
func TestPlanBackupsMaxZero(t *testing.T) {
	h := newServicesHarness(t, "sqlite")
	path := filepath.Join(t.TempDir(), "plans.yaml")
	yaml := `- code: file-nobk
  name: No backups
  guest_types: [container]
  cluster: default
  cores: 1
  memory_mib: 1024
  disk_gib: 8
  storage: local-lvm
  bridge: vmbr0
  backups_max: 0
  os:
    container:
      debian-12: "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst"
`
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := h.st.Plans.LoadFile(t.Context(), path); err != nil {
		t.Fatalf("a plans file with backups_max 0 stops the start: %v", err)
	}
	r := h.signed("PUT", "/v1/admin/plans/api-nobk", "ops", adminSecret, backupPlanBody("", map[string]any{"backup_storage": nil, "backups_max": 0}))
	if r.Status != 201 {
		t.Fatalf("plan save with backups_max 0: %d %s", r.Status, r.Body)
	}
	for _, code := range []string{"file-nobk", "api-nobk"} {
		p := h.signed("GET", "/v1/plans/"+code, "ops", adminSecret, nil).json(t)["plan"].(map[string]any)
		c := p["capabilities"].(map[string]any)["container"].(map[string]any)["backup"].(map[string]any)
		if p["backups_max"] != 0.0 || c["available"] != false || c["refusal"] != "permanent" || c["reason"] == "" {
			t.Fatalf("%s: backups_max %v, backup capability %v", code, p["backups_max"], c)
		}
	}
	r = h.signed("PUT", "/v1/admin/plans/bad-bk", "ops", adminSecret, backupPlanBody("local", map[string]any{"backups_max": 0}))
	m := checkProblem(t, r, 422, "validation_failed")
	if raw, _ := json.Marshal(m["errors"]); !strings.Contains(string(raw), `"field":"backups_max"`) || !strings.Contains(string(raw), "too_small") {
		t.Fatalf("backups_max 0 with a backup storage: %s", raw)
	}
	succeeded(t, h.billing("POST", "/v1/services?wait=20", createBody("nobk-1", "file-nobk")))
	h.sim.ResetLog()
	m = checkProblem(t, h.billing("POST", "/v1/services/nobk-1/backups", nil), 409, "capability_refused")
	if m["permanence"] != "permanent" || len(h.sim.Requests()) != 0 {
		t.Fatalf("a backup on a plan with backups_max 0: %v, Proxmox saw %d requests", m, len(h.sim.Requests()))
	}
}
