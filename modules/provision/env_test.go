package provision_test

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"pvebill/models"
	"pvebill/modules/executor"
	"pvebill/modules/kinds"
	"pvebill/modules/placement"
	"pvebill/modules/plans"
	"pvebill/modules/provision"
	"pvebill/modules/pve"
	"pvebill/modules/pve/pvesim"
	"pvebill/modules/pve/pvesim/simtest"
	"pvebill/modules/stack"
	"pvebill/modules/stack/stacktest"
)

const testPassword = stacktest.Password

type env struct {
	*stacktest.Env
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
	specs := stacktest.Plans()
	if pool {
		vp := specs[2]
		vp.Code, vp.IPPool = "vm-pool", new("pool-a")
		specs = append(specs, vp)
		specs[3].IPPool = new("pool-a")
	}
	oc := testOvercommit
	se := stacktest.New(t, stacktest.Options{Dialect: dialect, Sim: sim, Plans: specs, Stack: func(o *stack.Options) {
		o.Clusters[0].MemoryOvercommit = oc
		o.Provision = provision.Options{Addresses: addrs}
		o.Placement = placement.Options{SharedReadTTL: sharedReadTTL}
	}})
	st := se.Stack
	e := &env{Env: se, t: t, db: se.DB, sim: se.Sim, logs: se.Logs, reg: se.Metrics, client: se.Client,
		plans: st.Plans, exec: st.Exec, svc: st.Provisioner, kinds: st.Kinds}
	se.Start()
	return e
}

// wait runs the executor until op ends and returns it.
func (e *env) wait(op *models.Operation) *models.Operation {
	e.t.Helper()
	return e.Wait(op)
}

func (e *env) mustSucceed(op *models.Operation, err error) *models.Operation {
	e.t.Helper()
	return e.MustSucceed(op, err)
}

func (e *env) create(req provision.CreateRequest) *models.Operation {
	e.t.Helper()
	return e.Create(req)
}

func deref(s *string) string { return stacktest.Deref(s) }

func (e *env) service(id string) *models.Service {
	e.t.Helper()
	return e.Service(id)
}

// requests returns the simulator's requests matching method and a path suffix.
func (e *env) requests(method, pathSuffix string) []pvesim.Request {
	return e.Requests(method, pathSuffix)
}

func resultOf(t *testing.T, op *models.Operation) map[string]any { return stacktest.ResultOf(t, op) }

func ctReq(id string) provision.CreateRequest { return stacktest.ContainerRequest(id) }

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
