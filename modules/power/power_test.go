package power_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"pvebill/i18n"
	"pvebill/models"
	"pvebill/models/dbtest"
	"pvebill/modules/power"
	"pvebill/modules/pve/pvesim"
	"pvebill/modules/stack/stacktest"
)

// env is the harness with the power helpers of these tests.
type env struct {
	*stacktest.Env
	t   *testing.T
	sim *pvesim.Sim
}

func newEnv(t *testing.T, dialect string) *env {
	t.Helper()
	e := stacktest.New(t, stacktest.Options{Dialect: dialect})
	return &env{Env: e, t: t, sim: e.Sim.Sim}
}

// power runs one power action to its end and returns the operation and the POSTs it sent.
func (e *env) power(action, serviceID string, timeout *int) (*models.Operation, []pvesim.Request) {
	e.t.Helper()
	ctx := e.t.Context()
	n := len(e.Sim.Requests())
	var op *models.Operation
	var err error
	switch action {
	case power.ActionStart:
		op, err = e.Stack.Power.Start(ctx, stacktest.Client, serviceID)
	case power.ActionStop:
		op, err = e.Stack.Power.Stop(ctx, stacktest.Client, serviceID)
	case power.ActionShutdown:
		op, err = e.Stack.Power.Shutdown(ctx, stacktest.Client, serviceID, power.ShutdownRequest{TimeoutSeconds: timeout})
	case power.ActionReboot:
		op, err = e.Stack.Power.Reboot(ctx, stacktest.Client, serviceID)
	}
	if err != nil {
		e.t.Fatalf("%s: %v", action, err)
	}
	return e.Wait(op), e.PostsSince(n)
}

func deref(s *string) string { return stacktest.Deref(s) }

// R40 and R11: each power action of each kind sends exactly its one call and reads the state
// back; start of a running guest and stop or shutdown of a stopped one send nothing; a reboot
// of a stopped guest is guest_not_running without a call.
func TestPowerActions(t *testing.T) {
	for _, dialect := range dbtest.Dialects(t) {
		for _, kind := range []struct{ name, plan, path string }{{"container", "ct-small", "/lxc/"}, {"vm", "vm-small", "/qemu/"}} {
			t.Run(dialect+"/"+kind.name, func(t *testing.T) {
				e := newEnv(t, dialect)
				req := stacktest.ContainerRequest("svc-pw")
				if kind.name == "vm" {
					req = stacktest.Request("svc-pw", kind.plan)
				}
				e.Create(req)
				testPowerActions(t, e, *e.Service("svc-pw").VMID, kind.path)
			})
		}
	}
}

func testPowerActions(t *testing.T, e *env, vmid int, path string) {
	status := func() string { g, _ := e.sim.Guest(vmid); return g.Status }
	one := func(action string, posts []pvesim.Request, suffix string) {
		t.Helper()
		if len(posts) != 1 || !strings.HasSuffix(posts[0].Path, path+strconv.Itoa(vmid)+suffix) {
			t.Fatalf("%s sent %+v, want one POST …%s", action, posts, suffix)
		}
	}
	noop := func(action string) {
		t.Helper()
		op, posts := e.power(action, "svc-pw", nil)
		if op.State != models.OpSucceeded || stacktest.ResultOf(t, op)["noop"] != true || len(posts) != 0 {
			t.Fatalf("%s: %s %v, %d POSTs, want a no-op without a call", action, op.State, deref(op.Result), len(posts))
		}
	}
	noop(power.ActionStart)
	op, posts := e.power(power.ActionReboot, "svc-pw", nil)
	if op.State != models.OpSucceeded || status() != "running" {
		t.Fatalf("reboot: %s %s, guest %s", op.State, deref(op.ErrorCode), status())
	}
	one("reboot", posts, "/status/reboot")
	op, posts = e.power(power.ActionShutdown, "svc-pw", new(30))
	if op.State != models.OpSucceeded || status() != "stopped" {
		t.Fatalf("shutdown: %s %s, guest %s", op.State, deref(op.ErrorCode), status())
	}
	one("shutdown", posts, "/status/shutdown")
	if f := posts[0].Form; f.Get("forceStop") != "0" || f.Get("timeout") != "30" {
		t.Fatalf("shutdown form %v", f)
	}
	noop(power.ActionStop)
	noop(power.ActionShutdown)
	// A reboot of a stopped guest is refused at once: no operation, one read (the cluster's
	// guest listing) and nothing sent.
	n, ops := len(e.Sim.Requests()), e.Operations()
	if op, err := e.Stack.Power.Reboot(t.Context(), stacktest.Client, "svc-pw"); op != nil || !stacktest.IsCode(err, i18n.CodeGuestNotRunning, http.StatusConflict) {
		t.Fatalf("reboot of a stopped guest: %v %v", op, err)
	}
	if got := e.Sim.Requests()[n:]; len(got) != 1 || got[0].Method != "GET" || got[0].Path != "/cluster/resources" || e.Operations() != ops {
		t.Fatalf("reboot of a stopped guest sent %v, operations %d→%d", got, ops, e.Operations())
	}
	op, posts = e.power(power.ActionStart, "svc-pw", nil)
	if op.State != models.OpSucceeded || status() != "running" {
		t.Fatalf("start: %s %s, guest %s", op.State, deref(op.ErrorCode), status())
	}
	one("start", posts, "/status/start")
	op, posts = e.power(power.ActionStop, "svc-pw", nil)
	if op.State != models.OpSucceeded || status() != "stopped" {
		t.Fatalf("stop: %s %s, guest %s", op.State, deref(op.ErrorCode), status())
	}
	one("stop", posts, "/status/stop")
}

// R40: a shutdown that runs out of time fails with shutdown_timeout and the guest keeps
// running: no stop is ever sent, and the default time-out is 120 s.
func TestShutdownTimeoutNeverStops(t *testing.T) {
	for _, kind := range []struct{ name, plan, path string }{{"container", "ct-small", "lxc"}, {"vm", "vm-small", "qemu"}} {
		t.Run(kind.name, func(t *testing.T) {
			e := newEnv(t, "sqlite")
			req := stacktest.ContainerRequest("svc-to")
			if kind.name == "vm" {
				req = stacktest.Request("svc-to", kind.plan)
			}
			e.Create(req)
			vmid := *e.Service("svc-to").VMID
			e.sim.InjectFault(pvesim.Fault{Method: "POST", PathPattern: "/nodes/{node}/" + kind.path + "/{vmid}/status/shutdown",
				Nth: 1, TaskFail: "shutdown timed out"})
			op, posts := e.power(power.ActionShutdown, "svc-to", nil)
			if op.State != models.OpFailed || deref(op.ErrorCode) != string(i18n.CodeShutdownTimeout) {
				t.Fatalf("shutdown: %s %s %s", op.State, deref(op.ErrorCode), deref(op.ErrorDetail))
			}
			if len(posts) != 1 || posts[0].Form.Get("forceStop") != "0" || posts[0].Form.Get("timeout") != "120" {
				t.Fatalf("POSTs %+v, want one shutdown with forceStop=0 and timeout=120", posts)
			}
			if g, _ := e.sim.Guest(vmid); g.Status != "running" {
				t.Fatalf("guest %s after a timed-out shutdown", g.Status)
			}
			if !strings.Contains(deref(op.Result), "failed_task") {
				t.Fatalf("result %s names no failed task", deref(op.Result))
			}
		})
	}
}

// R39: a power action on a guest that no longer carries the service's stamp is refused with
// guest_not_ours before any call.
func TestPowerChecksStamp(t *testing.T) {
	e := newEnv(t, "sqlite")
	e.Create(stacktest.ContainerRequest("svc-stamp"))
	vmid := *e.Service("svc-stamp").VMID
	if err := e.sim.SetConfig(vmid, "description", "someone else's guest"); err != nil {
		t.Fatal(err)
	}
	for _, action := range []string{power.ActionStart, power.ActionStop, power.ActionShutdown, power.ActionReboot} {
		op, posts := e.power(action, "svc-stamp", nil)
		if op.State != models.OpFailed || deref(op.ErrorCode) != string(i18n.CodeGuestNotOurs) || len(posts) != 0 {
			t.Fatalf("%s of a guest not ours: %s %s, %d POSTs", action, op.State, deref(op.ErrorCode), len(posts))
		}
	}
	if g, _ := e.sim.Guest(vmid); g.Status != "running" {
		t.Fatalf("guest %s", g.Status)
	}
}

// R39, R46: a guest stamped in the one-part form of earlier versions ("pvebill-service: ID") is
// recognised for a service the migration marked as existing before ids became per client, and
// refused as guest_not_ours for any other service: a bare id may be another client's service.
func TestLegacyStampOnlyForMigratedServices(t *testing.T) {
	e := newEnv(t, "sqlite")
	for _, id := range []string{"svc-old", "svc-new"} {
		e.Create(stacktest.ContainerRequest(id))
		if err := e.sim.SetConfig(*e.Service(id).VMID, "description", "pvebill-service: "+id); err != nil {
			t.Fatal(err)
		}
	}
	// Unmarked, the old service refuses its one-part stamp like any other.
	if op, posts := e.power(power.ActionStop, "svc-old", nil); op.State != models.OpFailed ||
		deref(op.ErrorCode) != string(i18n.CodeGuestNotOurs) || len(posts) != 0 {
		t.Fatalf("stop before the mark: %s %s, %d POSTs", op.State, deref(op.ErrorCode), len(posts))
	}
	dbtest.Exec(t, e.DB, "UPDATE services SET legacy_stamp = ? WHERE service_id = ?", true, "svc-old")
	if op, posts := e.power(power.ActionStop, "svc-old", nil); op.State != models.OpSucceeded || len(posts) != 1 {
		t.Fatalf("stop of a migrated service's guest: %s %s, %d POSTs", op.State, deref(op.ErrorCode), len(posts))
	}
	if g, _ := e.sim.Guest(*e.Service("svc-old").VMID); g.Status != "stopped" {
		t.Fatalf("migrated service's guest %s", g.Status)
	}
	if op, posts := e.power(power.ActionStop, "svc-new", nil); op.State != models.OpFailed ||
		deref(op.ErrorCode) != string(i18n.CodeGuestNotOurs) || len(posts) != 0 {
		t.Fatalf("stop of a new service's one-part stamp: %s %s, %d POSTs", op.State, deref(op.ErrorCode), len(posts))
	}
	if g, _ := e.sim.Guest(*e.Service("svc-new").VMID); g.Status != "running" {
		t.Fatalf("new service's guest %s", g.Status)
	}
}
