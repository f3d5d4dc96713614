package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"pvebill/modules/stack/stacktest"

	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/prometheus/client_golang/prometheus"

	"pvebill/models"
	"pvebill/models/dbtest"
	"pvebill/modules/ippool"
	"pvebill/modules/kinds"
	"pvebill/modules/lxc"
	"pvebill/modules/plans"
	"pvebill/modules/provision"
	"pvebill/modules/pve"
	"pvebill/modules/pve/pvesim/simtest"
	"pvebill/modules/qemu"
	"pvebill/modules/stack"
	"pvebill/modules/stack/serve"
	"pvebill/server"
	"pvebill/server/config"
)

const rootPassword = "R00t-Passw0rd-Never-Stored"

type svcHarness struct {
	*harness
	sim *simtest.Server
	reg *prometheus.Registry
	st  *stack.Stack
}

func lifecyclePlans() []plans.Spec {
	p := func(v int) *int { return &v }
	pool := "pool-a"
	tmpl := map[string]string{"debian-12": "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst"}
	return []plans.Spec{
		{Code: "ct-1g", Name: "CT 1G", GuestTypes: []plans.GuestType{plans.Container}, Cluster: "default", Cores: p(1),
			MemoryMiB: p(1024), DiskGiB: p(8), Storage: "local-lvm", Bridge: "vmbr0", OS: plans.OSCatalog{Container: tmpl}},
		{Code: "ct-2g", Name: "CT 2G", GuestTypes: []plans.GuestType{plans.Container}, Cluster: "default", Cores: p(2),
			MemoryMiB: p(2048), SwapMiB: p(512), DiskGiB: p(16), Storage: "local-lvm", Bridge: "vmbr0", OS: plans.OSCatalog{Container: tmpl}},
		{Code: "vm-2g", Name: "VM 2G", GuestTypes: []plans.GuestType{plans.VM}, Cluster: "default", Cores: p(2),
			MemoryMiB: p(2048), DiskGiB: p(10), Storage: "local-lvm", Bridge: "vmbr0", IPPool: &pool,
			OS: plans.OSCatalog{VM: map[string]plans.VMTemplate{"debian-12": {VMID: 9000}}}},
		{Code: "vm-4g", Name: "VM 4G", GuestTypes: []plans.GuestType{plans.VM}, Cluster: "default", Cores: p(4),
			MemoryMiB: p(4096), DiskGiB: p(20), Storage: "local-lvm", Bridge: "vmbr0", IPPool: &pool,
			OS: plans.OSCatalog{VM: map[string]plans.VMTemplate{"debian-12": {VMID: 9000}}}},
	}
}

// testKinds are the guest kinds with short timeouts for the simulator.
func testKinds() []kinds.Module {
	return []kinds.Module{&lxc.Module{ShutdownTimeout: time.Second}, &qemu.Module{ShutdownTimeout: time.Second}}
}

// newServicesHarness is the harness with provisioning and reinstall wired to a simulator: every
// plan of lifecyclePlans (the VM plans vm-2g and vm-4g clone template 9000 and take addresses
// from pool-a), pool-a given to provisioning and to the reinstall as app.go does, and another
// guest's volume (vm-6002-disk-1) for the reinstall tests to attach.
func newServicesHarness(t *testing.T, dialect string) *svcHarness {
	t.Helper()
	return newServicesHarnessWith(t, dialect, nil)
}

// newServicesHarnessWith is newServicesHarness with the console configured when cc is not nil:
// its public URL is the harness's own address, and the cluster's client logs in as the
// simulator's console user.
func newServicesHarnessWith(t *testing.T, dialect string, cc *config.Console) *svcHarness {
	t.Helper()
	sim := simtest.Start(t, nil)
	sim.AddVolume("local-lvm", "vm-6002-disk-1", 1<<30, "images")
	return newServicesReplica(t, dbtest.Open(t, dialect), sim, cc, "test-"+dialect, true)
}

// newServicesReplica is one pvebill replica over db and sim, its executor named owner; the
// first replica also loads the plans and the address pool into the shared database.
func newServicesReplica(t *testing.T, db *models.DB, sim *simtest.Server, cc *config.Console, owner string, first bool,
	tweaks ...func(*stack.Options)) *svcHarness {
	t.Helper()
	h := &harness{t: t, now: time.Now(), logs: &stacktest.LogBuffer{}, gate: make(chan struct{})}
	close(h.gate)
	h.db = db
	cfg := config.Defaults()
	cfg.Clients = []config.Client{
		{ID: "whmcs", Secret: billingSecret, Scopes: []string{"billing"}},
		{ID: "other", Secret: otherSecret, Scopes: []string{"billing"}},
		{ID: "ops", Secret: adminSecret, Scopes: []string{"admin"}},
	}
	log := slog.New(slog.NewJSONHandler(io.MultiWriter(h.logs, testWriter()), &slog.HandlerOptions{Level: slog.LevelDebug}))
	reg := prometheus.NewRegistry()
	client := sim.Client(t, pve.NewMetrics(reg))
	h.http = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.srv.ServeHTTP(w, r) }))
	var console config.Console
	if cc != nil {
		console = *cc
		console.PublicURL = "http://" + h.http.Listener.Addr().String()
		client = consoleClient(t, sim)
	}
	sto := stack.Options{DB: h.db, Log: log, Metrics: reg, Kinds: testKinds(), Console: console,
		Clusters: []kinds.Cluster{{Name: "default", Client: client}},
		Executor: stacktest.Executor(owner)}
	for _, tw := range tweaks {
		tw(&sto)
	}
	st := stack.New(sto)
	h.exec = st.Exec
	ctx := t.Context()
	if first {
		if _, err := st.Plans.Import(ctx, lifecyclePlans(), plans.SourceFile); err != nil {
			t.Fatal(err)
		}
		if _, _, err := st.IPPools.Put(ctx, "pool-a", ippool.Spec{Name: "pool-a", Cluster: "default", Bridge: "vmbr0", CIDR: "203.0.113.0/24",
			Gateway: "203.0.113.1", First: "203.0.113.10", Last: "203.0.113.20", Nameservers: []string{"203.0.113.53"}}); err != nil {
			t.Fatal(err)
		}
	}
	spec, err := os.ReadFile("../openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	so := serve.Options(st, cfg)
	so.OpenAPI, so.Now, so.WaitRecheck = spec, h.clock, 50*time.Millisecond
	h.srv = server.New(so)
	h.exec.Start(context.Background()) // stopped by the cleanup, not by the test's end
	h.http.Start()
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = h.srv.Shutdown(sctx)
		h.http.Close()
		h.exec.Stop(sctx)
	})
	return &svcHarness{harness: h, sim: sim, reg: reg, st: st}
}

func (h *svcHarness) admin(method, path string) response {
	h.t.Helper()
	return h.signed(method, path, "ops", adminSecret, nil)
}

// operation returns the operation of an answer, checking the status.
func operationOf(t *testing.T, r response, status int) map[string]any {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d: %s", r.Status, status, r.Body)
	}
	op, _ := r.json(t)["operation"].(map[string]any)
	if op == nil {
		t.Fatalf("no operation: %s", r.Body)
	}
	return op
}

func succeeded(t *testing.T, r response) map[string]any {
	t.Helper()
	op := operationOf(t, r, 200)
	if op["state"] != "succeeded" {
		t.Fatalf("operation %v", op)
	}
	return op
}

func createBody(id, plan string) []byte {
	b, _ := json.Marshal(map[string]any{"service_id": id, "plan": plan, "hostname": "web1.example.com", "os": "debian-12",
		"root_password": rootPassword, "ssh_keys": []string{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGd3kq1J8wq5sTGsH6xkq0tQ2Jb5wqG1XwJXy2lY3v1a ops@example"}})
	return b
}

func (h *svcHarness) service(id string) map[string]any {
	h.t.Helper()
	r := h.billing("GET", "/v1/services/"+id, nil)
	if r.Status != 200 {
		h.t.Fatalf("GET service: %d %s", r.Status, r.Body)
	}
	return r.json(h.t)["service"].(map[string]any)
}

// The whole lifecycle through the HTTP API, for both guest kinds, on both databases:
// create → suspend → unsuspend → change-plan → terminate; the simulator's log is checked for
// schema violations and QEMU-only calls for containers when each test ends (simtest).
func TestLifecycleOverHTTP(t *testing.T) {
	kinds := []struct{ kind, plan, bigger string }{{"container", "ct-1g", "ct-2g"}, {"vm", "vm-2g", "vm-4g"}}
	for _, dialect := range dbtest.Dialects(t) {
		for _, k := range kinds {
			t.Run(dialect+"/"+k.kind, func(t *testing.T) {
				h := newServicesHarness(t, dialect)
				id := "whmcs-" + k.kind
				op := succeeded(t, h.billing("POST", "/v1/services?wait=20", createBody(id, k.plan)))
				if op["action"] != "create" {
					t.Fatalf("operation %v", op)
				}
				svc := h.service(id)
				mon := svc["monitoring"].(map[string]any)
				if svc["state"] != "active" || svc["power"] != "running" || svc["guest_type"] != k.kind || svc["vmid"] == nil {
					t.Fatalf("service %v", svc)
				}
				if k.kind == "container" {
					if mon["guest_agent"] != nil || mon["swap_max_bytes"] == nil {
						t.Fatalf("container monitoring %v", mon)
					}
				} else {
					if mon["swap_bytes"] != nil || mon["disk_bytes"] != nil {
						t.Fatalf("VM monitoring must be null where unknown: %v", mon)
					}
					if ips := svc["ip_addresses"].([]any); len(ips) != 1 || ips[0] != "203.0.113.10" {
						t.Fatalf("addresses %v", svc["ip_addresses"])
					}
				}
				vmid := int(svc["vmid"].(float64))

				succeeded(t, h.billing("POST", "/v1/services/"+id+"/suspend?wait=20", []byte(`{"reason":"unpaid"}`)))
				if s := h.service(id); s["state"] != "suspended" || s["power"] != "stopped" {
					t.Fatalf("after suspend %v %v", s["state"], s["power"])
				}
				before := len(h.sim.Requests())
				succeeded(t, h.billing("POST", "/v1/services/"+id+"/suspend?wait=20", nil))
				if after := len(h.sim.Requests()); after != before {
					t.Fatalf("a second suspend sent %d requests to Proxmox", after-before)
				}
				succeeded(t, h.billing("POST", "/v1/services/"+id+"/unsuspend?wait=20", nil))
				if s := h.service(id); s["state"] != "active" || s["power"] != "running" {
					t.Fatalf("after unsuspend %v %v", s["state"], s["power"])
				}
				succeeded(t, h.billing("POST", "/v1/services/"+id+"/change-plan?wait=20", []byte(`{"plan":"`+k.bigger+`"}`)))
				if s := h.service(id); s["plan"] != k.bigger {
					t.Fatalf("after change-plan %v", s["plan"])
				}
				g, _ := h.sim.Guest(vmid)
				if g.Config["cores"] == "1" || (k.kind == "container" && g.Config["swap"] != "512") {
					t.Fatalf("config after change-plan %v", g.Config)
				}
				succeeded(t, h.billing("POST", "/v1/services/"+id+"/terminate?wait=20", nil))
				if _, ok := h.sim.Guest(vmid); ok {
					t.Fatal("guest still exists after terminate")
				}
				if s := h.service(id); s["state"] != "terminated" || len(s["ip_addresses"].([]any)) != 0 {
					t.Fatalf("after terminate %v", s)
				}
				before = len(h.sim.Requests())
				succeeded(t, h.billing("POST", "/v1/services/"+id+"/terminate?wait=20", nil))
				if after := len(h.sim.Requests()); after != before {
					t.Fatalf("a second terminate sent %d requests to Proxmox", after-before)
				}
				checkNoPassword(t, h)
			})
		}
	}
}

// checkNoPassword fails when the root password is in a log line or a table.
func checkNoPassword(t *testing.T, h *svcHarness) {
	t.Helper()
	if strings.Contains(h.logs.String(), rootPassword) {
		t.Error("the root password is in the log")
	}
	for _, table := range []string{"services", "operations", "idempotency_keys", "audit_events"} {
		rows := dbtest.TableRows(t, h.db, table)
		if strings.Contains(fmt.Sprint(rows), rootPassword) {
			t.Errorf("the root password is in table %s", table)
		}
	}
	sent := false
	for _, r := range h.sim.Requests() {
		sent = sent || r.Form.Get("password") == rootPassword || r.Form.Get("cipassword") == rootPassword
	}
	if !sent {
		t.Error("the root password never reached Proxmox")
	}
}

// R36 through HTTP: 20 concurrent identical creates make one guest and answer one operation;
// a different body is 409 service_exists; another client cannot see the service.
func TestConcurrentCreatesOverHTTP(t *testing.T) {
	h := newServicesHarness(t, "sqlite")
	var wg sync.WaitGroup
	ids := make([]string, 20)
	for i := range ids {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			r := h.billing("POST", "/v1/services", createBody("whmcs-20", "ct-1g"))
			if r.Status != 202 && r.Status != 200 {
				t.Errorf("status %d: %s", r.Status, r.Body)
				return
			}
			var m struct {
				Operation struct{ ID string } `json:"operation"`
			}
			_ = json.Unmarshal(r.Body, &m)
			ids[i] = m.Operation.ID
		}(i)
	}
	wg.Wait()
	for _, id := range ids {
		if id != ids[0] {
			t.Fatalf("operations %v", ids)
		}
	}
	succeeded(t, h.billing("GET", "/v1/operations/"+ids[0]+"?wait=20", nil))
	creates := 0
	for _, r := range h.sim.Requests() {
		if r.Method == "POST" && strings.HasSuffix(r.Path, "/lxc") {
			creates++
		}
	}
	if creates != 1 {
		t.Fatalf("%d Proxmox creates, want 1", creates)
	}
	r := h.billing("POST", "/v1/services", createBody("whmcs-20", "ct-2g"))
	checkProblem(t, r, 409, "service_exists")
	r = h.signed("GET", "/v1/services/whmcs-20", "other", otherSecret, nil)
	checkProblem(t, r, 404, "not_found")
	r = h.billing("POST", "/v1/services", []byte(`{"service_id":"x","plan":"ct-1g","hostname":"a.example","os":"debian-12","root_password":"secret1","swap_mb":1}`))
	checkProblem(t, r, 422, "validation_failed")
	if strings.Contains(string(r.Body), "secret1") {
		t.Fatal("a response echoes the password")
	}
}

// R3: the admin listing reads guest_type from each row's type and names managed guests'
// services.
func TestAdminGuests(t *testing.T) {
	h := newServicesHarness(t, "sqlite")
	succeeded(t, h.billing("POST", "/v1/services?wait=20", createBody("whmcs-g", "ct-1g")))
	r := h.admin("GET", "/v1/admin/guests")
	if r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	var body struct {
		Guests []provision.GuestView `json:"guests"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatal(err)
	}
	byID := map[int]provision.GuestView{}
	for _, g := range body.Guests {
		byID[g.VMID] = g
	}
	if byID[200].GuestType != "container" || byID[300].GuestType != "vm" || byID[9000].GuestType != "vm" {
		t.Fatalf("guest types %+v", body.Guests)
	}
	if byID[200].ServiceID != nil {
		t.Fatal("unmanaged guest has a service")
	}
	managed := 0
	for _, g := range body.Guests {
		if g.ServiceID != nil && *g.ServiceID == "whmcs-g" && g.GuestType == "container" {
			managed++
		}
	}
	if managed != 1 {
		t.Fatalf("managed guests %+v", body.Guests)
	}
	checkProblem(t, h.billing("GET", "/v1/admin/guests", nil), 403, "forbidden")
}

// R9: a disabled datacenter firewall is said on /readyz (still ready), in the gauge and the log.
func TestReadyzDatacenterFirewall(t *testing.T) {
	h := newServicesHarness(t, "sqlite")
	h.sim.SetClusterFirewall(false)
	h.st.Readiness.Check(t.Context())
	req, _ := http.NewRequest("GET", h.http.URL+"/readyz", nil)
	r := h.do(req)
	if r.Status != 200 {
		t.Fatalf("readyz %d %s", r.Status, r.Body)
	}
	if !strings.Contains(string(r.Body), `"datacenter_firewall":"disabled"`) {
		t.Fatalf("readyz %s", r.Body)
	}
	if v := gaugeValue(t, h.reg, "pvebill_datacenter_firewall_enabled"); v != 0 {
		t.Fatalf("gauge %v", v)
	}
	if !strings.Contains(h.logs.String(), "datacenter firewall is disabled") {
		t.Fatal("no log line")
	}
	h.sim.SetClusterFirewall(true)
	h.st.Readiness.Check(t.Context())
	r = h.do(req)
	if !strings.Contains(string(r.Body), `"datacenter_firewall":"enabled"`) {
		t.Fatalf("readyz %s", r.Body)
	}
}

func gaugeValue(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no single series of %s", name)
	return 0
}

// The lifecycle routes' answers validate against openapi.yaml.
func TestServiceResponsesConformToOpenAPI(t *testing.T) {
	doc := loadSpec(t)
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	h := newServicesHarness(t, "sqlite")
	check := func(method, path string, r response) {
		t.Helper()
		req, _ := http.NewRequest(method, "http://127.0.0.1:8080"+path, nil)
		route, params, err := router.FindRoute(req)
		if err != nil {
			t.Fatalf("%s %s: not in spec: %v", method, path, err)
		}
		in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
		out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: r.Status, Header: r.Header,
			Body: io.NopCloser(bytes.NewReader(r.Body)), Options: &openapi3filter.Options{IncludeResponseStatus: true}}
		if err := openapi3filter.ValidateResponse(t.Context(), out); err != nil {
			t.Errorf("%s %s (%d): %v\n%s", method, path, r.Status, err, r.Body)
		}
	}
	r := h.billing("POST", "/v1/services?wait=20", createBody("spec-1", "ct-1g"))
	check("POST", "/v1/services", r)
	check("POST", "/v1/services", h.billing("POST", "/v1/services", createBody("spec-1", "ct-1g")))
	check("POST", "/v1/services", h.billing("POST", "/v1/services", createBody("spec-1", "ct-2g")))
	check("GET", "/v1/services/spec-1", h.billing("GET", "/v1/services/spec-1", nil))
	check("GET", "/v1/services/nope", h.billing("GET", "/v1/services/nope", nil))
	check("POST", "/v1/services/spec-1/suspend", h.billing("POST", "/v1/services/spec-1/suspend", []byte(`{"reason":"x"}`)))
	check("POST", "/v1/services/spec-1/unsuspend", h.billing("POST", "/v1/services/spec-1/unsuspend?wait=20", nil))
	check("POST", "/v1/services/spec-1/shutdown", h.billing("POST", "/v1/services/spec-1/shutdown?wait=20", []byte(`{"timeout_seconds":30}`)))
	check("POST", "/v1/services/spec-1/reboot", h.billing("POST", "/v1/services/spec-1/reboot?wait=20", nil))
	check("POST", "/v1/services/spec-1/start", h.billing("POST", "/v1/services/spec-1/start?wait=20", nil))
	check("POST", "/v1/services/spec-1/stop", h.billing("POST", "/v1/services/spec-1/stop", nil))
	check("POST", "/v1/services/spec-1/change-plan", h.billing("POST", "/v1/services/spec-1/change-plan", []byte(`{"plan":"vm-2g"}`)))
	check("POST", "/v1/services/spec-1/terminate", h.billing("POST", "/v1/services/spec-1/terminate?wait=20", nil))
	check("GET", "/v1/admin/guests", h.admin("GET", "/v1/admin/guests"))
}
