package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"pvebill/modules/plans"
	"pvebill/modules/stack/stacktest"
	"pvebill/server"
	"pvebill/server/config"
)

const ctTemplate = "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst"

// planBody builds a plan body from a base plan and JSON edits: keys set to nil are removed.
func planBody(t *testing.T, guestTypes string, edits map[string]any) []byte {
	t.Helper()
	m := map[string]any{
		"name": "Test plan", "cluster": "default", "cores": 2, "memory_mib": 2048, "disk_gib": 20,
		"storage": "local-lvm", "bridge": "vmbr0", "bandwidth_gib": 2000, "rate_mbps": nil,
	}
	os := map[string]any{}
	switch guestTypes {
	case "container":
		m["guest_types"] = []string{"container"}
		os["container"] = map[string]any{"debian-12": ctTemplate}
	case "vm":
		m["guest_types"] = []string{"vm"}
		os["vm"] = map[string]any{"debian-12": 9000}
	default:
		m["guest_types"] = []string{"container", "vm"}
		os["container"] = map[string]any{"debian-12": ctTemplate}
		os["vm"] = map[string]any{"debian-12": 9000}
	}
	m["os"] = os
	for k, v := range edits {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func (h *harness) admin(method, path string, body []byte, opts ...reqOpt) response {
	h.t.Helper()
	return h.signed(method, path, "ops", adminSecret, body, opts...)
}

func (h *harness) shop(method, path string, body []byte, opts ...reqOpt) response {
	h.t.Helper()
	return h.signed(method, path, "shop", shopSecret, body, opts...)
}

func planOf(t *testing.T, r response) map[string]any {
	t.Helper()
	p, ok := r.json(t)["plan"].(map[string]any)
	if !ok {
		t.Fatalf("no plan envelope: %s", r.Body)
	}
	return p
}

func capOf(t *testing.T, plan map[string]any, guestType, name string) map[string]any {
	t.Helper()
	caps, _ := plan["capabilities"].(map[string]any)
	set, _ := caps[guestType].(map[string]any)
	c, ok := set[name].(map[string]any)
	if !ok {
		t.Fatalf("no capability %s.%s in %v", guestType, name, plan["capabilities"])
	}
	return c
}

// Admin PUT creates (201) and replaces (200); every scope reads; DELETE answers 204, then 404.
func TestPlanAdminRoundTrip(t *testing.T) {
	eachDialect(t, func(t *testing.T, h *harness) {
		r := h.admin("PUT", "/v1/admin/plans/ct-2g", planBody(t, "container", map[string]any{"swap_mib": 512}))
		if r.Status != 201 || r.Header.Get("Location") != "/v1/plans/ct-2g" {
			t.Fatalf("create: %d %v %s", r.Status, r.Header, r.Body)
		}
		if p := planOf(t, r); p["code"] != "ct-2g" || p["swap_mib"] != 512.0 {
			t.Fatalf("created plan: %v", p)
		}
		r = h.admin("PUT", "/v1/admin/plans/ct-2g", planBody(t, "container", map[string]any{"code": "ct-2g", "cores": 4}))
		if r.Status != 200 || planOf(t, r)["cores"] != 4.0 || r.Header.Get("Location") != "" {
			t.Fatalf("replace: %d %s", r.Status, r.Body)
		}
		for _, get := range []func(string, string, []byte, ...reqOpt) response{h.shop, h.billing, h.admin} {
			r = get("GET", "/v1/plans/ct-2g", nil)
			if r.Status != 200 || planOf(t, r)["cores"] != 4.0 || planOf(t, r)["swap_mib"] != 0.0 {
				t.Fatalf("get: %d %s", r.Status, r.Body)
			}
		}
		h.admin("PUT", "/v1/admin/plans/a-first", planBody(t, "vm", nil))
		r = h.shop("GET", "/v1/plans", nil)
		list, _ := r.json(t)["plans"].([]any)
		if r.Status != 200 || len(list) != 2 || list[0].(map[string]any)["code"] != "a-first" {
			t.Fatalf("list: %d %s", r.Status, r.Body)
		}

		r = h.admin("DELETE", "/v1/admin/plans/ct-2g", nil)
		if r.Status != 204 || len(r.Body) != 0 {
			t.Fatalf("delete: %d %s", r.Status, r.Body)
		}
		checkProblem(t, h.shop("GET", "/v1/plans/ct-2g", nil), 404, "not_found")
		checkProblem(t, h.admin("DELETE", "/v1/admin/plans/ct-2g", nil), 404, "not_found")
		if r = h.shop("GET", "/v1/plans", nil); len(r.json(t)["plans"].([]any)) != 1 {
			t.Fatalf("list after delete: %s", r.Body)
		}
	})
}

// An empty list is an empty array, not null.
func TestPlanListEmpty(t *testing.T) {
	h := newHarness(t, "sqlite")
	r := h.shop("GET", "/v1/plans", nil)
	if r.Status != 200 || strings.TrimSpace(string(r.Body)) != `{"plans":[]}` {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
}

// R5: a plan without swap_mib is stored and answered with swap_mib 0, present and explicit.
func TestPlanSwapAbsentIsZero(t *testing.T) {
	eachDialect(t, func(t *testing.T, h *harness) {
		r := h.admin("PUT", "/v1/admin/plans/ct-noswap", planBody(t, "container", nil))
		if r.Status != 201 || !bytes.Contains(r.Body, []byte(`"swap_mib":0`)) {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		r = h.shop("GET", "/v1/plans/ct-noswap", nil)
		if v, present := planOf(t, r)["swap_mib"]; !present || v != 0.0 {
			t.Fatalf("swap_mib %v (present %v)", v, present)
		}
		row, err := h.db.GetPlan(t.Context(), "ct-noswap")
		if err != nil || !strings.Contains(row.Body, `"swap_mib":0`) {
			t.Fatalf("stored %+v %v", row, err)
		}
		// swap_mib: null also means 0; an explicit 0 stays 0.
		for _, v := range []any{json.RawMessage("null"), 0} {
			r = h.admin("PUT", "/v1/admin/plans/ct-noswap", planBody(t, "container", map[string]any{"swap_mib": v}))
			if r.Status != 200 || planOf(t, r)["swap_mib"] != 0.0 {
				t.Fatalf("swap %v: %d %s", v, r.Status, r.Body)
			}
		}
	})
}

// R4: the guest types a plan offers, and capabilities listed for exactly those types.
func TestPlanShapes(t *testing.T) {
	h := newHarness(t, "sqlite")
	cases := map[string]struct{ kind, want string }{
		"ct-only": {"container", "container"},
		"vm-only": {"vm", "vm"},
		"flex":    {"both", "container,vm"},
	}
	for code, c := range cases {
		r := h.admin("PUT", "/v1/admin/plans/"+code, planBody(t, c.kind, map[string]any{"guest_types": strings.Split(c.want, ",")}))
		if r.Status != 201 {
			t.Fatalf("%s: %d %s", code, r.Status, r.Body)
		}
	}
	// A flex plan listed in VM-first order is answered in the canonical order.
	r := h.admin("PUT", "/v1/admin/plans/flex", planBody(t, "both", map[string]any{"guest_types": []string{"vm", "container"}}))
	if r.Status != 200 {
		t.Fatalf("flex reversed: %d %s", r.Status, r.Body)
	}
	for code, c := range cases {
		p := planOf(t, h.shop("GET", "/v1/plans/"+code, nil))
		var types []string
		for _, g := range p["guest_types"].([]any) {
			types = append(types, g.(string))
		}
		if strings.Join(types, ",") != c.want {
			t.Errorf("%s offers %v, want %s", code, types, c.want)
		}
		caps := p["capabilities"].(map[string]any)
		if len(caps) != len(types) {
			t.Errorf("%s: capabilities for %d types: %v", code, len(caps), caps)
		}
		for _, g := range types {
			if _, ok := caps[g]; !ok {
				t.Errorf("%s: no capabilities for %s", code, g)
			}
		}
		os := p["os"].(map[string]any)
		if len(os) != len(types) {
			t.Errorf("%s: os catalog %v", code, os)
		}
	}
}

// R10: permanent versus temporary refusals with reasons translated per request.
func TestPlanCapabilities(t *testing.T) {
	h := newHarness(t, "sqlite")
	if r := h.admin("PUT", "/v1/admin/plans/flex", planBody(t, "both", nil)); r.Status != 201 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	get := func(lang string) (map[string]any, response) {
		r := h.shop("GET", "/v1/plans/flex", nil, withHeader("Accept-Language", lang))
		if r.Status != 200 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		return planOf(t, r), r
	}
	en, _ := get("en")
	for _, name := range []string{"pause", "hibernate", "iso_install", "pxe_boot", "firmware_selection"} {
		c := capOf(t, en, "container", name)
		if c["available"] != false || c["refusal"] != "permanent" || c["reason"] == "" {
			t.Errorf("container %s: %v", name, c)
		}
	}
	for _, name := range []string{"console", "create", "reinstall"} {
		c := capOf(t, en, "container", name)
		if c["available"] != false || c["refusal"] != "temporary" || c["reason"] == "" {
			t.Errorf("container %s: %v", name, c)
		}
	}
	// For a VM, ISO install, PXE and firmware are not built yet; pause follows the plan's mode.
	for _, name := range []string{"iso_install", "pxe_boot", "firmware_selection", "console"} {
		if c := capOf(t, en, "vm", name); c["available"] != false || c["refusal"] != "temporary" {
			t.Errorf("vm %s: %v", name, c)
		}
	}
	if c := capOf(t, en, "vm", "pause"); c["refusal"] != "permanent" || !strings.Contains(c["reason"].(string), "stopping") {
		t.Errorf("vm pause on a stop plan: %v", c)
	}

	for _, lang := range []string{"de", "tr"} {
		other, r := get(lang)
		if r.Header.Get("Content-Language") != lang {
			t.Errorf("%s: Content-Language %q", lang, r.Header.Get("Content-Language"))
		}
		for _, gc := range [][2]string{{"container", "pause"}, {"container", "iso_install"}, {"container", "console"}, {"vm", "pause"}} {
			a, b := capOf(t, en, gc[0], gc[1]), capOf(t, other, gc[0], gc[1])
			if a["refusal"] != b["refusal"] || a["reason"] == b["reason"] || b["reason"] == "" {
				t.Errorf("%s %s.%s: en %v, %s %v", lang, gc[0], gc[1], a, lang, b)
			}
		}
	}
	// The German reason is the German catalog entry.
	de, _ := get("de-CH, en;q=0.5")
	if !strings.Contains(capOf(t, de, "container", "pause")["reason"].(string), "Container kann nicht pausiert") {
		t.Errorf("de: %v", capOf(t, de, "container", "pause"))
	}
}

// newBuiltHarness is a harness whose server reports the given capabilities as built.
func newBuiltHarness(t *testing.T, built plans.Built) *harness {
	h := newHarness(t, "sqlite")
	cfg := config.Defaults()
	cfg.Clients = []config.Client{
		{ID: "shop", Secret: shopSecret, Scopes: []string{"storefront"}},
		{ID: "ops", Secret: adminSecret, Scopes: []string{"admin"}},
	}
	spec, _ := os.ReadFile("../openapi.yaml")
	srv := server.New(stacktest.WithServices(server.Options{Config: cfg, DB: h.db, Executor: h.exec, Registry: prometheus.NewRegistry(),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), OpenAPI: spec, Now: h.clock,
		Plans: plans.NewService(h.db, plans.Options{Built: built})}))
	old := h.http
	h.http = httptest.NewServer(srv)
	old.Close()
	return h
}

// What exists is {"available": true}; a VM plan that pauses pauses exactly when suspend exists.
func TestPlanCapabilitiesBuilt(t *testing.T) {
	h := newBuiltHarness(t, plans.Built{
		plans.Container: {plans.CapCreate, plans.CapSuspend, plans.CapPause},
		plans.VM:        {plans.CapCreate, plans.CapSuspend},
	})
	r := h.admin("PUT", "/v1/admin/plans/flex", planBody(t, "both", map[string]any{"vm_suspend_mode": "pause"}))
	if r.Status != 201 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	p := planOf(t, h.shop("GET", "/v1/plans/flex", nil))
	for _, gc := range [][2]string{{"container", "create"}, {"container", "suspend"}, {"vm", "create"}, {"vm", "pause"}} {
		c := capOf(t, p, gc[0], gc[1])
		if c["available"] != true || len(c) != 1 {
			t.Errorf("%s.%s: %v", gc[0], gc[1], c)
		}
	}
	if c := capOf(t, p, "container", "pause"); c["available"] != false || c["refusal"] != "permanent" {
		t.Errorf("container pause claimed by a module: %v", c)
	}
}

// R15: a container-only plan asking for pause is refused at save, permanently, and not stored.
func TestPlanContainerPauseRefused(t *testing.T) {
	eachDialect(t, func(t *testing.T, h *harness) {
		r := h.admin("PUT", "/v1/admin/plans/ct-pause", planBody(t, "container", map[string]any{"vm_suspend_mode": "pause"}),
			withHeader("Accept-Language", "fr"))
		m := checkProblem(t, r, 422, "not_possible_for_container")
		if m["permanence"] != "permanent" || r.Header.Get("Content-Language") != "fr" {
			t.Fatalf("%s", r.Body)
		}
		errs, _ := m["errors"].([]any)
		if len(errs) != 1 || errs[0].(map[string]any)["field"] != "vm_suspend_mode" {
			t.Fatalf("errors %v", m["errors"])
		}
		checkProblem(t, h.shop("GET", "/v1/plans/ct-pause", nil), 404, "not_found")
		// The same mode on plans that offer VMs is accepted.
		for _, kind := range []string{"vm", "both"} {
			r = h.admin("PUT", "/v1/admin/plans/pause-"+kind, planBody(t, kind, map[string]any{"vm_suspend_mode": "pause"}))
			if r.Status != 201 || planOf(t, r)["vm_suspend_mode"] != "pause" {
				t.Fatalf("%s: %d %s", kind, r.Status, r.Body)
			}
		}
	})
}

// Bad plans are problem+json naming the field, and change nothing.
func TestPlanValidationFailures(t *testing.T) {
	h := newHarness(t, "sqlite")
	cases := []struct {
		name      string
		path      string
		body      []byte
		field     string
		fieldCode string
		status    int
		code      string
	}{
		{name: "typo swap_mb", body: planBody(t, "container", map[string]any{"swap_mb": 512}), field: "swap_mb", fieldCode: "unknown_field"},
		{name: "capabilities are not input", body: planBody(t, "container", map[string]any{"capabilities": map[string]any{}}), field: "capabilities", fieldCode: "unknown_field"},
		{name: "bad guest type", body: planBody(t, "container", map[string]any{"guest_types": []string{"lxc"}}), field: "guest_types[0]", fieldCode: "not_allowed_value"},
		{name: "no guest type", body: planBody(t, "container", map[string]any{"guest_types": []string{}}), field: "guest_types", fieldCode: "too_short"},
		{name: "empty catalog", body: planBody(t, "container", map[string]any{"os": map[string]any{"container": map[string]any{}}}), field: "os.container", fieldCode: "required"},
		{name: "no catalog for an offered type", body: planBody(t, "both", map[string]any{"os": map[string]any{"vm": map[string]any{"debian-12": 9000}}}), field: "os.container", fieldCode: "required"},
		{name: "iso as ostemplate", body: planBody(t, "container", map[string]any{"os": map[string]any{"container": map[string]any{"debian-12": "local:iso/debian-12.iso"}}}), field: "os.container[debian-12]", fieldCode: "bad_format"},
		{name: "ostemplate without storage", body: planBody(t, "container", map[string]any{"os": map[string]any{"container": map[string]any{"debian-12": "debian-12-standard_12.7-1_amd64.tar.zst"}}}), field: "os.container[debian-12]", fieldCode: "bad_format"},
		{name: "vmid as ostemplate", body: planBody(t, "container", map[string]any{"os": map[string]any{"container": map[string]any{"debian-12": 9000}}}), field: "os.container", fieldCode: "wrong_type"},
		{name: "negative cores", body: planBody(t, "container", map[string]any{"cores": -2}), field: "cores", fieldCode: "too_small"},
		{name: "negative memory", body: planBody(t, "container", map[string]any{"memory_mib": -2048}), field: "memory_mib", fieldCode: "too_small"},
		{name: "negative swap", body: planBody(t, "container", map[string]any{"swap_mib": -1}), field: "swap_mib", fieldCode: "too_small"},
		{name: "negative disk", body: planBody(t, "container", map[string]any{"disk_gib": -20}), field: "disk_gib", fieldCode: "too_small"},
		{name: "negative bandwidth", body: planBody(t, "container", map[string]any{"bandwidth_gib": -1}), field: "bandwidth_gib", fieldCode: "too_small"},
		{name: "fractional cores", body: planBody(t, "container", map[string]any{"cores": 1.5}), field: "cores", fieldCode: "wrong_type"},
		{name: "missing memory", body: planBody(t, "container", map[string]any{"memory_mib": nil}), field: "memory_mib", fieldCode: "required"},
		{name: "bad storage", body: planBody(t, "container", map[string]any{"storage": "local lvm"}), field: "storage", fieldCode: "bad_format"},
		{name: "swap on a vm plan", body: planBody(t, "vm", map[string]any{"swap_mib": 512}), field: "swap_mib", fieldCode: "not_applicable"},
		{name: "code differs from the path", body: planBody(t, "container", map[string]any{"code": "other"}), field: "code", fieldCode: "not_allowed_value"},
		{name: "bad code in the path", path: "/v1/admin/plans/bad%20code", body: planBody(t, "container", nil), field: "code", fieldCode: "bad_format"},
		{name: "malformed json", body: []byte(`{"name":`), status: 400, code: "malformed_json"},
		{name: "not json", body: []byte(`name: x`), status: 400, code: "malformed_json"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := c.path
			if path == "" {
				path = "/v1/admin/plans/p1"
			}
			status, code := c.status, c.code
			if status == 0 {
				status, code = 422, "validation_failed"
			}
			m := checkProblem(t, h.admin("PUT", path, c.body), status, code)
			if c.field == "" {
				return
			}
			errs, _ := m["errors"].([]any)
			for _, e := range errs {
				e := e.(map[string]any)
				if e["field"] == c.field && e["code"] == c.fieldCode && e["message"] != "" {
					return
				}
			}
			t.Fatalf("want %s:%s in %v", c.field, c.fieldCode, m["errors"])
		})
	}
	if r := h.shop("GET", "/v1/plans", nil); strings.TrimSpace(string(r.Body)) != `{"plans":[]}` {
		t.Fatalf("refused plans were stored: %s", r.Body)
	}
}

// Scopes: storefront and billing read; only admin writes; unsigned is 401.
func TestPlanScopes(t *testing.T) {
	h := newHarness(t, "sqlite")
	body := planBody(t, "container", nil)
	checkProblem(t, h.shop("PUT", "/v1/admin/plans/ct", body), 403, "forbidden")
	checkProblem(t, h.billing("PUT", "/v1/admin/plans/ct", body), 403, "forbidden")
	checkProblem(t, h.shop("GET", "/v1/plans/ct", nil), 404, "not_found")
	if r := h.admin("PUT", "/v1/admin/plans/ct", body); r.Status != 201 {
		t.Fatalf("admin put: %d %s", r.Status, r.Body)
	}
	checkProblem(t, h.shop("DELETE", "/v1/admin/plans/ct", nil), 403, "forbidden")
	checkProblem(t, h.billing("DELETE", "/v1/admin/plans/ct", nil), 403, "forbidden")
	for _, get := range []func(string, string, []byte, ...reqOpt) response{h.shop, h.billing, h.admin} {
		if r := get("GET", "/v1/plans/ct", nil); r.Status != 200 {
			t.Fatalf("get: %d %s", r.Status, r.Body)
		}
	}
	req, _ := http.NewRequest("GET", h.http.URL+"/v1/plans", nil)
	checkProblem(t, h.do(req), 401, "signature_invalid")
	if r := h.shop("GET", "/v1/plans/ct", nil); r.Status != 200 {
		t.Fatalf("plan changed by a refused call: %d", r.Status)
	}
}

// plans_file: a YAML list in a temporary directory, loaded at start, is what the API answers.
func TestPlansFileServed(t *testing.T) {
	eachDialect(t, func(t *testing.T, h *harness) {
		path := filepath.Join(t.TempDir(), "plans.yaml")
		yaml := `- code: file-ct
  name: From the file
  guest_types: [container]
  cluster: default
  cores: 1
  memory_mib: 1024
  disk_gib: 10
  storage: local-lvm
  bridge: vmbr0
  os:
    container:
      debian-12: "` + ctTemplate + `"
`
		if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		svc := plans.NewService(h.db, plans.Options{Clusters: plans.Clusters{"default": nil}})
		if _, err := svc.LoadFile(t.Context(), path); err != nil {
			t.Fatal(err)
		}
		p := planOf(t, h.shop("GET", "/v1/plans/file-ct", nil))
		if p["name"] != "From the file" || p["swap_mib"] != 0.0 || p["vm_suspend_mode"] != "stop" {
			t.Fatalf("%v", p)
		}
		// The admin API can then change it; the change persists.
		r := h.admin("PUT", "/v1/admin/plans/file-ct", planBody(t, "container", map[string]any{"name": "Changed"}))
		if r.Status != 200 || planOf(t, h.shop("GET", "/v1/plans/file-ct", nil))["name"] != "Changed" {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		row, _ := h.db.GetPlan(t.Context(), "file-ct")
		if row.Source != "api" {
			t.Fatalf("source %q", row.Source)
		}
	})
}

// Real plan responses validate against openapi.yaml.
func TestPlanResponsesConformToOpenAPI(t *testing.T) {
	h := newHarness(t, "sqlite")
	check := openAPIChecker(t)
	full := planBody(t, "both", map[string]any{"swap_mib": 256, "rate_mbps": 12.5, "ip_pool": "pool-a",
		"nodes": []string{"pve1"}, "vm_clone": "linked", "vm_suspend_mode": "pause"})
	check("PUT", "/v1/admin/plans/full", h.admin("PUT", "/v1/admin/plans/full", full), 201)
	check("PUT", "/v1/admin/plans/full", h.admin("PUT", "/v1/admin/plans/full", full), 200)
	check("PUT", "/v1/admin/plans/ct", h.admin("PUT", "/v1/admin/plans/ct", planBody(t, "container", map[string]any{"bandwidth_gib": nil})), 201)
	check("PUT", "/v1/admin/plans/vm", h.admin("PUT", "/v1/admin/plans/vm", planBody(t, "vm", nil)), 201)
	check("GET", "/v1/plans", h.shop("GET", "/v1/plans", nil, withHeader("Accept-Language", "pl")), 200)
	check("GET", "/v1/plans/full", h.billing("GET", "/v1/plans/full", nil), 200)
	check("GET", "/v1/plans/nope", h.shop("GET", "/v1/plans/nope", nil), 404)
	check("GET", "/v1/plans", h.signed("GET", "/v1/plans", "shop", "wrong-secret-123", nil), 401)
	check("PUT", "/v1/admin/plans/x", h.shop("PUT", "/v1/admin/plans/x", full), 403)
	check("PUT", "/v1/admin/plans/x", h.admin("PUT", "/v1/admin/plans/x", planBody(t, "container", map[string]any{"swap_mb": 1})), 422)
	check("PUT", "/v1/admin/plans/x", h.admin("PUT", "/v1/admin/plans/x", []byte("{")), 400)
	check("DELETE", "/v1/admin/plans/vm", h.admin("DELETE", "/v1/admin/plans/vm", nil), 204)
	check("DELETE", "/v1/admin/plans/vm", h.admin("DELETE", "/v1/admin/plans/vm", nil), 404)
}
