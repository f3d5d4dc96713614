package provision_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"pvebill/modules/stack/stacktest"

	"github.com/prometheus/client_golang/prometheus"

	"pvebill/models"
	"pvebill/models/dbtest"
	"pvebill/modules/executor"
	"pvebill/modules/kinds"
	"pvebill/modules/lxc"
	"pvebill/modules/plans"
	"pvebill/modules/provision"
	"pvebill/modules/pve"
	"pvebill/modules/pve/pvesim"
	"pvebill/modules/pve/pvesim/simtest"
	"pvebill/modules/qemu"
	"pvebill/modules/stack"
)

const testPassword = "Sup3r-Secret-Root-pw"

type env struct {
	t      *testing.T
	db     *models.DB
	sim    *simtest.Server
	svc    *provision.Provisioner
	exec   *executor.Executor
	logs   *stacktest.LogBuffer
	reg    *prometheus.Registry
	plans  *plans.Service
	client *pve.Client
	kinds  *kinds.Registry
}

// testPlans are the plans every test environment holds.
func testPlans() []plans.Spec {
	return []plans.Spec{
		{Code: "ct-small", Name: "Container small", GuestTypes: []plans.GuestType{plans.Container}, Cluster: "default",
			Cores: new(1), MemoryMiB: new(512), DiskGiB: new(8), Storage: "local-lvm", Bridge: "vmbr0",
			OS: plans.OSCatalog{Container: map[string]string{"debian-12": "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst"}}},
		{Code: "ct-big", Name: "Container big", GuestTypes: []plans.GuestType{plans.Container}, Cluster: "default",
			Cores: new(2), MemoryMiB: new(2048), SwapMiB: new(256), DiskGiB: new(12), Storage: "local-lvm", Bridge: "vmbr0",
			OS: plans.OSCatalog{Container: map[string]string{"debian-12": "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst"}}},
		{Code: "vm-small", Name: "VM small", GuestTypes: []plans.GuestType{plans.VM}, Cluster: "default",
			Cores: new(2), MemoryMiB: new(2048), DiskGiB: new(10), Storage: "local-lvm", Bridge: "vmbr0",
			OS: plans.OSCatalog{VM: map[string]plans.VMTemplate{"debian-12": {VMID: 9000}}}},
		{Code: "vm-pause", Name: "VM pause", GuestTypes: []plans.GuestType{plans.VM}, Cluster: "default",
			Cores: new(4), MemoryMiB: new(4096), DiskGiB: new(20), Storage: "local-lvm", Bridge: "vmbr0",
			VMSuspendMode: plans.SuspendPause, OS: plans.OSCatalog{VM: map[string]plans.VMTemplate{"debian-12": {VMID: 9000}}}},
		{Code: "flex", Name: "Flex", GuestTypes: []plans.GuestType{plans.Container, plans.VM}, Cluster: "default",
			Cores: new(1), MemoryMiB: new(1024), DiskGiB: new(8), Storage: "local-lvm", Bridge: "vmbr0",
			OS: plans.OSCatalog{Container: map[string]string{"debian-12": "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst"},
				VM: map[string]plans.VMTemplate{"debian-12": {VMID: 9000}}}},
	}
}

// newEnvWithPlanPool is newEnv with addresses and the VM plan vm-pool that names an ip_pool;
// vm-pause names it too.
func newEnvWithPlanPool(t *testing.T, addrs provision.Addresses) *env {
	t.Helper()
	return newEnvPlans(t, "sqlite", nil, addrs, true)
}

func newEnv(t *testing.T, dialect string, sim *pvesim.Sim, addrs provision.Addresses) *env {
	t.Helper()
	return newEnvPlans(t, dialect, sim, addrs, false)
}

// sharedReadTTL is how long the test environments' creates share node lists and next-id reads:
// short, so that a test that changes the cluster sees the change after a short wait.
var sharedReadTTL = 50 * time.Millisecond

// testOvercommit is the test cluster's memory_overcommit (zero: 1.0).
var testOvercommit float64

// newEnvOvercommit is newEnv (SQLite) with the cluster's memory_overcommit set to oc.
func newEnvOvercommit(t *testing.T, sim *pvesim.Sim, oc float64) *env {
	t.Helper()
	testOvercommit = oc
	defer func() { testOvercommit = 0 }()
	return newEnv(t, "sqlite", sim, nil)
}

func newEnvPlans(t *testing.T, dialect string, sim *pvesim.Sim, addrs provision.Addresses, pool bool) *env {
	t.Helper()
	e := &env{t: t, logs: &stacktest.LogBuffer{}, reg: prometheus.NewRegistry()}
	e.db = dbtest.Open(t, dialect)
	e.sim = simtest.Start(t, sim)
	client := e.sim.Client(t, nil)
	log := slog.New(slog.NewJSONHandler(io.MultiWriter(e.logs), &slog.HandlerOptions{Level: slog.LevelDebug}))
	st := stack.New(stack.Options{DB: e.db, Log: log, Metrics: e.reg,
		Kinds:     []kinds.Module{&lxc.Module{ShutdownTimeout: time.Second}, &qemu.Module{ShutdownTimeout: time.Second}},
		Clusters:  []kinds.Cluster{{Name: "default", Client: client, MemoryOvercommit: testOvercommit}},
		Executor:  stacktest.Executor("test"),
		Provision: provision.Options{Addresses: addrs, SharedReadTTL: sharedReadTTL}})
	ps := st.Plans
	e.plans, e.client, e.exec, e.svc, e.kinds = ps, client, st.Exec, st.Provisioner, st.Kinds
	specs := testPlans()
	if pool {
		vp := specs[2]
		vp.Code, vp.IPPool = "vm-pool", new("pool-a")
		specs = append(specs, vp)
		specs[3].IPPool = new("pool-a")
	}
	if _, err := ps.Import(context.Background(), specs, plans.SourceFile); err != nil {
		t.Fatal(err)
	}
	// Saving the plans read their storages' types (R44): the tests count from here.
	e.sim.ResetLog()
	e.exec.Start(context.Background())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		e.exec.Stop(ctx)
	})
	return e
}

// wait runs the executor until op ends and returns it.
func (e *env) wait(op *models.Operation) *models.Operation {
	e.t.Helper()
	e.exec.Kick()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got, err := executor.WaitTerminal(ctx, e.db, e.exec.Broker(), op.ID, 20*time.Millisecond)
	if err != nil {
		e.t.Fatal(err)
	}
	if !models.IsTerminal(got.State) {
		e.t.Fatalf("operation %s still %s", op.ID, got.State)
	}
	return got
}

func (e *env) mustSucceed(op *models.Operation, err error) *models.Operation {
	e.t.Helper()
	if err != nil {
		e.t.Fatal(err)
	}
	got := e.wait(op)
	if got.State != models.OpSucceeded {
		e.t.Fatalf("%s ended %s: %v %v result %v", got.Action, got.State, deref(got.ErrorCode), deref(got.ErrorDetail), deref(got.Result))
	}
	return got
}

func (e *env) create(req provision.CreateRequest) *models.Operation {
	e.t.Helper()
	op, _, err := e.svc.Create(context.Background(), "whmcs", req)
	return e.mustSucceed(op, err)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func (e *env) service(id string) *models.Service {
	e.t.Helper()
	s, err := models.GetService(context.Background(), e.db.Gorm, models.ServiceKey{ClientID: "whmcs", ServiceID: id})
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

// requests returns the simulator's requests matching method and a path suffix.
func (e *env) requests(method, pathSuffix string) []pvesim.Request {
	var out []pvesim.Request
	for _, r := range e.sim.Requests() {
		if r.Method == method && strings.HasSuffix(r.Path, pathSuffix) {
			out = append(out, r)
		}
	}
	return out
}

func resultOf(t *testing.T, op *models.Operation) map[string]any {
	t.Helper()
	m := map[string]any{}
	if op.Result != nil {
		if err := json.Unmarshal([]byte(*op.Result), &m); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

func ctReq(id string) provision.CreateRequest {
	return provision.CreateRequest{ServiceID: id, Plan: "ct-small", Hostname: "web1.example.com", OS: "debian-12",
		RootPassword: testPassword, SSHKeys: []string{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGd3kq1J8wq5sTGsH6xkq0tQ2Jb5wqG1XwJXy2lY3v1a test@example"}}
}

// enforcements returns the value of pvebill_enforcements_total{reason, guest_type} (0 when
// the series does not exist).
func enforcements(t *testing.T, e *env, reason, kind string) float64 {
	t.Helper()
	mfs, err := e.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "pvebill_enforcements_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["reason"] == reason && labels["guest_type"] == kind {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}
