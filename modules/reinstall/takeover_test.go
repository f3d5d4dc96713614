package reinstall_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"pvebill/models"
	"pvebill/models/dbtest"
	"pvebill/modules/executor"
	"pvebill/modules/pve/pvesim"
	"pvebill/modules/reinstall"
	"pvebill/modules/stack/stacktest/poll"
)

// replica is a second pvebill process on the env's database and simulator: its own executor
// and its own memory, so it holds none of the first one's secrets.
type replica struct {
	exec *executor.Executor
	svc  *reinstall.Replacer
	reg  *prometheus.Registry
}

func (e *env) replica(owner string) *replica {
	e.t.Helper()
	st := e.Replica(fastHeal(owner))
	return &replica{exec: st.Exec, svc: st.Replacer, reg: st.Metrics}
}

// takenOverAndResumed lets a second replica take op over and requires it to end succeeded,
// resumed once from the facts (R58).
func (e *env) takenOverAndResumed(op *models.Operation) {
	e.t.Helper()
	r := e.replica("second")
	r.exec.Kick()
	ctx, cancel := context.WithTimeout(e.t.Context(), 20*time.Second)
	defer cancel()
	done, err := executor.WaitTerminal(ctx, e.db, r.exec.Broker(), op.ID, 10*time.Millisecond)
	if err != nil {
		e.t.Fatal(err)
	}
	if done.State != models.OpSucceeded || done.Resumed != 1 {
		e.t.Fatalf("op %s resumed %d at %s: %s %s", done.State, done.Resumed, done.Stage, deref(done.ErrorCode), deref(done.Result))
	}
}

// killAt runs op on the env's executor until the injected fault (its id) holds it at stage
// (for a task, until the task's UPID of kind is recorded) with its request inside the simulator,
// then stops that executor there the way a SIGKILL would leave it for the database: running, its
// lease to expire, nothing written after. The lease is then made to expire.
func (e *env) killAt(op *models.Operation, stage, kind string, fault int) {
	e.t.Helper()
	e.start()
	e.exec.Kick()
	var cur *models.Operation
	held := poll.Wait(10*time.Second, func() bool {
		var err error
		if cur, err = e.db.GetOperation(e.t.Context(), op.ID); err != nil {
			e.t.Fatal(err)
		}
		if models.IsTerminal(cur.State) {
			e.t.Fatalf("operation %s at %q, never held at %s (%s)", cur.State, cur.Stage, stage, kind)
		}
		return cur.Stage == stage && (kind == "" || cur.TaskUPID != nil && strings.Contains(*cur.TaskUPID, ":"+kind+":"))
	})
	if !held {
		e.t.Fatalf("operation %s at %q, never held at %s (%s)", cur.State, cur.Stage, stage, kind)
	}
	poll.Until(e.t, 10*time.Second, "the held request to reach the simulator", func() bool { return e.sim.FaultFired(fault) > 0 })
	ctx, cancel := context.WithTimeout(e.t.Context(), 50*time.Millisecond)
	defer cancel()
	e.exec.Stop(ctx)
	e.sim.ClearFaults()
	dbtest.ExpireLease(e.t, e.db, op.ID)
}

// R58, R38, R26: a replica dies at every stage of a reinstall past its destroy — with the
// request in flight, or while it waits on the task it started — and another replica, which
// holds none of its secrets, takes the operation over. The facts decide: it ends succeeded
// with the service's guest made exactly once (one destroy, one create reached Proxmox), the
// operation says it resumed and the audit log why. Without SSH keys and with a new guest to
// make, the intent waits in awaiting_password until the apply's password is sent again.
func TestTakeoverAtEveryStage(t *testing.T) {
	cases := []struct {
		name, stage, task string
		fault             pvesim.Fault
		needsPassword     bool
	}{
		{"destroy sent, unanswered", "destroy", "", pvesim.Fault{Method: "DELETE", PathPattern: "/nodes/{node}/lxc/{vmid}", Hang: true}, true},
		{"destroy task running", "destroy", "vzdestroy", pvesim.Fault{Method: "GET", PathPattern: `.*:vzdestroy:.*/status`, Hang: true}, true},
		{"create sent, unanswered", "create", "", pvesim.Fault{Method: "POST", PathPattern: "/nodes/{node}/lxc", Hang: true}, true},
		{"create task running", "create", "vzcreate", pvesim.Fault{Method: "GET", PathPattern: `.*:vzcreate:.*/status`, Hang: true}, true},
		{"configure", "configure", "", pvesim.Fault{Method: "PUT", PathPattern: "/nodes/{node}/lxc/{vmid}/firewall/options", Hang: true}, false},
		{"start task running", "start", "vzstart", pvesim.Fault{Method: "GET", PathPattern: `.*:vzstart:.*/status`, Hang: true}, false},
		{"verify", "verify", "", pvesim.Fault{Method: "GET", PathPattern: "/nodes/{node}/lxc/{vmid}/config", Nth: 5, Hang: true}, false},
	}
	for _, c := range cases {
		for _, keys := range []bool{true, false} {
			name := c.name + map[bool]string{true: "/with keys", false: "/password only"}[keys]
			t.Run(name, func(t *testing.T) { takeover(t, c.stage, c.task, c.fault, keys, c.needsPassword && !keys) })
		}
	}
}

func takeover(t *testing.T, stage, task string, fault pvesim.Fault, keys, awaits bool) {
	e := newEnv(t, "sqlite")
	e.seed("svc-kill", 5001, "ct-8", true, nil)
	in := e.preview("svc-kill")
	e.resetLog()
	faultID := e.sim.InjectFault(fault)
	req := reinstall.ApplyRequest{IntentID: in.ID, Confirmations: e.view(in).Confirmations, RootPassword: testPassword}
	if keys {
		req.SSHKeys = []string{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGd3kq1J8wq5sTGsH6xkq0tQ2Jb5wqG1XwJXy2lY3v1a ops@example"}
	}
	op, _, err := e.svc.Apply(t.Context(), client, "svc-kill", req)
	if err != nil {
		t.Fatal(err)
	}
	e.killAt(op, stage, task, faultID)
	r := e.replica("second")
	r.exec.Kick()
	if awaits {
		waitAwaiting(t, e, op.ID)
		got, err := r.svc.Get(t.Context(), client, "svc-kill", "")
		if err != nil || got.State != models.IntentAwaitingPassword {
			t.Fatalf("intent %v %v", got, err)
		}
		if _, _, err := r.svc.Apply(t.Context(), client, "svc-kill", reinstall.ApplyRequest{IntentID: in.ID,
			Confirmations: req.Confirmations}); problemCode(err) != "validation_failed" {
			t.Fatalf("apply again without the password: %v", err)
		}
		req.RootPassword = testPassword
		if _, got, err = r.svc.Apply(t.Context(), client, "svc-kill", req); err != nil || got.State != models.IntentApplying {
			t.Fatalf("apply again with the password: %v %v", got, err)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	done, err := executor.WaitTerminal(ctx, e.db, r.exec.Broker(), op.ID, 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if done.State != models.OpSucceeded || done.Resumed < 1 {
		t.Fatalf("op %s resumed %d at %s: %s %s", done.State, done.Resumed, done.Stage, deref(done.ErrorCode), deref(done.Result))
	}
	if got, _ := r.svc.Get(t.Context(), client, "svc-kill", ""); got.State != models.IntentCompleted {
		t.Fatalf("intent %s", got.State)
	}
	s := e.service("svc-kill")
	g, ok := e.sim.Guest(5001)
	if s.State != models.ServiceActive || s.LockOperationID != nil || !ok || g.Status != "running" ||
		!strings.Contains(g.Config["description"], "pvebill-service: "+client+"/svc-kill") {
		t.Fatalf("service %s lock %v; guest %v %+v", s.State, s.LockOperationID, ok, g)
	}
	destroys, creates := 0, 0
	for _, q := range e.sim.Requests() {
		switch {
		case q.Status == 200 && q.Method == "DELETE" && strings.HasSuffix(q.Path, "/lxc/5001"):
			destroys++
		case q.Status == 200 && q.Method == "POST" && strings.HasSuffix(q.Path, "/lxc"):
			creates++
		}
	}
	if destroys != 1 || creates != 1 {
		t.Fatalf("%d destroys and %d creates reached Proxmox, want one each", destroys, creates)
	}
	assertResumedAudit(t, e, "svc-kill", op.ID, map[bool]string{true: executor.CauseWoken, false: executor.CauseTakenOver}[awaits], stage)
	if n := testutil.ToFloat64(resumedMetric(r.reg)); n < 1 {
		t.Fatalf("pvebill_operations_resumed_total %v", n)
	}
}

// waitAwaiting waits until the operation is parked for the password.
func waitAwaiting(t *testing.T, e *env, id string) {
	t.Helper()
	parked := poll.Wait(10*time.Second, func() bool {
		op, err := e.db.GetOperation(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if models.IsTerminal(op.State) {
			t.Fatalf("operation ended %s at %s (%s) instead of waiting for the password", op.State, op.Stage, deref(op.ErrorCode))
		}
		return op.Awaiting != nil && *op.Awaiting == models.AwaitingPassword && op.State == models.OpQueued
	})
	if !parked {
		t.Fatal("operation never waited for the password")
	}
}

// resumedMetric is the sum of pvebill_operations_resumed_total over its labels.
func resumedMetric(reg *prometheus.Registry) prometheus.Collector {
	return collectorFunc(func(ch chan<- prometheus.Metric) {
		mfs, _ := reg.Gather()
		total := 0.0
		for _, mf := range mfs {
			if mf.GetName() == "pvebill_operations_resumed_total" {
				for _, m := range mf.GetMetric() {
					total += m.GetCounter().GetValue()
				}
			}
		}
		ch <- prometheus.MustNewConstMetric(prometheus.NewDesc("resumed", "", nil, nil), prometheus.CounterValue, total)
	})
}

type collectorFunc func(chan<- prometheus.Metric)

func (f collectorFunc) Describe(chan<- *prometheus.Desc)    {}
func (f collectorFunc) Collect(ch chan<- prometheus.Metric) { f(ch) }

// R58, R43: a replica dies during a restore — the restore sent and never answered, its task
// running, configure, start — and another replica takes it over. The facts decide: it ends
// succeeded with the service's guest running, and the archive reached Proxmox once, or once
// more only when the facts could not show that the first restore had ended (a restore over the
// guest gives the same guest again).
func TestRestoreTakeoverAtEveryStage(t *testing.T) {
	cases := []struct {
		name, stage, task string
		fault             pvesim.Fault
		restores          int
	}{
		{"restore sent, unanswered", "restore", "", pvesim.Fault{Method: "POST", PathPattern: "/nodes/{node}/lxc", Hang: true}, 1},
		{"restore task running", "restore", "vzrestore", pvesim.Fault{Method: "GET", PathPattern: `.*:vzrestore:.*/status`, Hang: true}, 1},
		{"configure", "configure", "", pvesim.Fault{Method: "PUT", PathPattern: "/nodes/{node}/lxc/{vmid}/firewall/options", Hang: true}, 1},
		{"start task running", "start", "vzstart", pvesim.Fault{Method: "GET", PathPattern: `.*:vzstart:.*/status`, Hang: true}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, "sqlite")
			backupID := e.backedUp("svc-rk", 5001)
			in := e.restorePreview("svc-rk", backupID)
			e.resetLog()
			fault := e.sim.InjectFault(c.fault)
			op, err := e.applyRestore("svc-rk", in)
			if err != nil {
				t.Fatal(err)
			}
			e.killAt(op, c.stage, c.task, fault)
			e.takenOverAndResumed(op)
			g, ok := e.sim.Guest(5001)
			if s := e.service("svc-rk"); s.State != models.ServiceActive || s.LockOperationID != nil || !ok || g.Status != "running" ||
				g.Config["cores"] != "2" {
				t.Fatalf("service %s lock %v; guest %v %+v", s.State, s.LockOperationID, ok, g)
			}
			restores := 0
			for _, q := range e.requests("POST", "/nodes/pve1/lxc") {
				if q.Status == 200 && q.Form.Get("restore") == "1" {
					restores++
				}
			}
			if restores != c.restores {
				t.Fatalf("%d restores reached Proxmox, want %d", restores, c.restores)
			}
			assertResumedAudit(t, e, "svc-rk", op.ID, executor.CauseTakenOver, c.stage)
		})
	}
}

// R58, R30: a VM reinstall (a re-clone) taken over while its destroy or its clone runs, or
// between the clone and the configuration that completes it, ends succeeded with one destroy
// and one clone: a clone that ran is completed by the kind's Configure, never cloned again.
func TestVMTakeoverAtEveryStage(t *testing.T) {
	cases := []struct {
		name, stage, task string
		fault             pvesim.Fault
	}{
		{"destroy task running", "destroy", "qmdestroy", pvesim.Fault{Method: "GET", PathPattern: `.*:qmdestroy:.*/status`, Hang: true}},
		{"clone task running", "create", "qmclone", pvesim.Fault{Method: "GET", PathPattern: `.*:qmclone:.*/status`, Hang: true}},
		{"clone made, not configured", "create", "qmclone", pvesim.Fault{Method: "PUT", PathPattern: "/nodes/{node}/qemu/{vmid}/config", Hang: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, "sqlite")
			e.seedVM("svc-vmk", 301, true, nil)
			in := e.preview("svc-vmk")
			e.resetLog()
			fault := e.sim.InjectFault(c.fault)
			op, _, err := e.svc.Apply(t.Context(), client, "svc-vmk", reinstall.ApplyRequest{IntentID: in.ID,
				Confirmations: e.view(in).Confirmations, RootPassword: testPassword,
				SSHKeys: []string{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGd3kq1J8wq5sTGsH6xkq0tQ2Jb5wqG1XwJXy2lY3v1a ops@example"}})
			if err != nil {
				t.Fatal(err)
			}
			e.killAt(op, c.stage, c.task, fault)
			e.takenOverAndResumed(op)
			g, ok := e.sim.Guest(301)
			if s := e.service("svc-vmk"); s.State != models.ServiceActive || !ok || g.Status != "running" {
				t.Fatalf("service %s; guest %v %+v", s.State, ok, g)
			}
			destroys, clones := 0, 0
			for _, q := range e.sim.Requests() {
				switch {
				case q.Status == 200 && q.Method == "DELETE" && strings.HasSuffix(q.Path, "/qemu/301"):
					destroys++
				case q.Status == 200 && q.Method == "POST" && strings.HasSuffix(q.Path, "/clone"):
					clones++
				}
			}
			if destroys != 1 || clones != 1 {
				t.Fatalf("%d destroys and %d clones reached Proxmox, want one each", destroys, clones)
			}
		})
	}
}
