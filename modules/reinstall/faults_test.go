package reinstall_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"pvebill/i18n"
	"pvebill/models"
	"pvebill/models/dbtest"
	"pvebill/modules/executor"
	"pvebill/modules/pve/pvesim"
	"pvebill/modules/reinstall"
)

// R27, R28, R58: a fault at each stage. Before destroy the run fails and releases the lock; at
// or after destroy the facts are read and the run resumed (three times at most): a fault that
// passes (verify's one read) ends succeeded, one that stays needs reconciliation (resume_failed),
// keeps the lock, and says whether the guest existed.
func TestFaultAtEveryStage(t *testing.T) {
	yes, no := new(true), new(false)
	cases := []struct {
		stage   string
		faults  []pvesim.Fault
		existed *bool // nil: null
	}{
		{"precheck", []pvesim.Fault{{Method: "GET", PathPattern: "/cluster/resources", Status: 500, Message: "boom"}}, nil},
		{"stop", []pvesim.Fault{{Method: "POST", PathPattern: "/nodes/{node}/lxc/{vmid}/status/stop", TaskFail: "command 'lxc-stop' failed"}}, nil},
		{"destroy", []pvesim.Fault{{Method: "DELETE", PathPattern: "/nodes/{node}/lxc/{vmid}", TaskFail: "volume deletion failed"}}, yes},
		{"create", []pvesim.Fault{{Method: "POST", PathPattern: "/nodes/{node}/lxc", Status: 500, Message: "unable to create CT 5001 - storage full"}}, no},
		{"configure", []pvesim.Fault{{Method: "PUT", PathPattern: "/nodes/{node}/lxc/{vmid}/firewall/options", Status: 500, Message: "firewall down"}}, yes},
		{"start", []pvesim.Fault{{Method: "POST", PathPattern: "/nodes/{node}/lxc/{vmid}/status/start", TaskFail: "startup for container '5001' failed"}}, yes},
		// verify: the 5th config read (precheck, re-read before destroy, destroy read-back,
		// configure, verify).
		{"verify", []pvesim.Fault{{Method: "GET", PathPattern: "/nodes/{node}/lxc/{vmid}/config", Nth: 5, Status: 500, Message: "pmxcfs hiccup"}}, yes},
	}
	for _, c := range cases {
		t.Run(c.stage, func(t *testing.T) {
			e := newEnv(t, "sqlite")
			e.seed("svc-fault", 5001, "ct-8", true, nil)
			in := e.preview("svc-fault")
			for _, f := range c.faults {
				e.sim.InjectFault(f)
			}
			op, err := e.apply("svc-fault", in)
			if err != nil {
				t.Fatal(err)
			}
			done := e.wait(op)
			if done.Stage != c.stage {
				t.Fatalf("failed at %q, want %q (%s %s)", done.Stage, c.stage, deref(done.ErrorCode), deref(done.Result))
			}
			s := e.service("svc-fault")
			got := e.intent("svc-fault")
			destructive := c.stage != "precheck" && c.stage != "stop"
			if c.stage == "verify" {
				// A fault that passes: the run resumes at verify and succeeds.
				if done.State != models.OpSucceeded || done.Resumed != 1 || s.State != models.ServiceActive || s.LockOperationID != nil {
					t.Fatalf("op %s resumed %d, service %s lock %v", done.State, done.Resumed, s.State, s.LockOperationID)
				}
				if got.State != models.IntentCompleted {
					t.Fatalf("intent %s", got.State)
				}
				assertResumedAudit(t, e, "svc-fault", op.ID, "failed", "verify")
				return
			}
			if !destructive {
				if done.State != models.OpFailed || s.LockOperationID != nil || s.State != models.ServiceActive {
					t.Fatalf("op %s, service %s lock %v", done.State, s.State, s.LockOperationID)
				}
				if got.State != models.IntentFailed {
					t.Fatalf("intent %s", got.State)
				}
				if n := len(e.requests("DELETE", "/lxc/5001")); n != 0 {
					t.Fatalf("%d destroys", n)
				}
				return
			}
			if done.State != models.OpNeedsReconciliation || s.LockOperationID == nil || *s.LockOperationID != op.ID ||
				s.State != models.ServiceNeedsReconciliation {
				t.Fatalf("op %s, service %s lock %v", done.State, s.State, s.LockOperationID)
			}
			v := reinstall.ViewOf(got, "en")
			if got.State != models.IntentNeedsReconciliation || v.Reconciliation == nil {
				t.Fatalf("intent %s %+v", got.State, v.Reconciliation)
			}
			r := v.Reconciliation
			if done.Resumed != 3 || r.Reason != "resume_failed" || r.Facts == nil || r.Facts.GuestPresent == nil ||
				*r.Facts.GuestPresent != (c.stage != "create") {
				t.Fatalf("resumed %d, reconciliation %+v facts %+v", done.Resumed, r, r.Facts)
			}
			if r.VMID != 5001 || r.FailedStage != c.stage || fmt.Sprint(deref2(r.GuestExisted)) != fmt.Sprint(deref2(c.existed)) {
				t.Fatalf("reconciliation %+v existed %v, want %v", r, deref2(r.GuestExisted), deref2(c.existed))
			}
			// The lock stays closed: no reinstall may start.
			if _, _, err := e.svc.Preview(t.Context(), client, "svc-fault", reinstall.PreviewRequest{}); problemCode(err) != i18n.CodeServiceLocked {
				t.Fatalf("preview while awaiting reconciliation: %v", err)
			}
			// An operator resolves it; the audit log records it and the lock opens.
			if _, err := e.svc.Reconcile(t.Context(), "ops", models.ServiceKey{ClientID: client, ServiceID: "svc-fault"}, reinstall.ReconcileRequest{Resolution: "recreated", Note: "checked by hand"}); err != nil {
				t.Fatal(err)
			}
			s = e.service("svc-fault")
			if s.State != models.ServiceActive || s.LockOperationID != nil {
				t.Fatalf("after reconcile: %s lock %v", s.State, s.LockOperationID)
			}
			if got := e.intent("svc-fault"); got.State != models.IntentResolved {
				t.Fatalf("intent after reconcile %s", got.State)
			}
			evs, err := e.db.ListAudit(t.Context(), models.ServiceKey{ClientID: client, ServiceID: "svc-fault"})
			if err != nil {
				t.Fatal(err)
			}
			last := evs[len(evs)-1]
			if last.Event != "reconciled" || last.Actor != "ops" || last.OperationID != op.ID || deref(last.Detail) != `{"note":"checked by hand","resolution":"recreated"}` {
				t.Fatalf("audit %+v %s", last, deref(last.Detail))
			}
			if _, err := e.svc.Reconcile(t.Context(), "ops", models.ServiceKey{ClientID: client, ServiceID: "svc-fault"}, reinstall.ReconcileRequest{Resolution: "recreated"}); problemCode(err) != i18n.CodeNothingToReconcile {
				t.Fatalf("second reconcile: %v", err)
			}
		})
	}
}

func deref2(b *bool) any {
	if b == nil {
		return nil
	}
	return *b
}

// R28, R58: null is not false — when the existence check itself keeps failing after a destroy,
// the intent says null, even though the resumes (three, all failing at create) saw the vmid free
// in the cluster listing.
func TestGuestExistedUnknown(t *testing.T) {
	e := newEnv(t, "sqlite")
	e.seed("svc-null", 5001, "ct-8", true, nil)
	in := e.preview("svc-null")
	e.sim.InjectFault(pvesim.Fault{Method: "POST", PathPattern: "/nodes/{node}/lxc", Status: 500, Message: "storage full"})
	// From the 4th config read on (the existence check after the failed create), every read fails.
	e.sim.InjectFault(pvesim.Fault{Method: "GET", PathPattern: "/nodes/{node}/lxc/{vmid}/config", Nth: 4, Times: 1000, Status: 500, Message: "cluster file system not ready"})
	op, err := e.apply("svc-null", in)
	if err != nil {
		t.Fatal(err)
	}
	done := e.wait(op)
	if done.State != models.OpNeedsReconciliation || done.Stage != "create" {
		t.Fatalf("op %s at %s", done.State, done.Stage)
	}
	v := reinstall.ViewOf(e.intent("svc-null"), "en")
	if v.Reconciliation == nil || v.Reconciliation.GuestExisted != nil || v.Reconciliation.Reason != "resume_failed" ||
		done.Resumed != 3 || v.Reconciliation.Facts == nil || *v.Reconciliation.Facts.GuestPresent {
		t.Fatalf("reconciliation %+v resumed %d", v.Reconciliation, done.Resumed)
	}
	e.sim.ClearFaults()
	// The guest is in fact gone: null was the honest answer, not false by default.
	if _, ok := e.sim.Guest(5001); ok {
		t.Fatal("guest still there")
	}
	// Abandoned: the service fails (billing terminates or re-creates).
	if _, err := e.svc.Reconcile(t.Context(), "ops", models.ServiceKey{ClientID: client, ServiceID: "svc-null"}, reinstall.ReconcileRequest{Resolution: "abandoned"}); err != nil {
		t.Fatal(err)
	}
	if s := e.service("svc-null"); s.State != models.ServiceFailed || s.LockOperationID != nil {
		t.Fatalf("service %s lock %v", s.State, s.LockOperationID)
	}
}

// R38, R58: a server that dies after destroy began leaves a running operation whose lease
// expires; the worker that takes it over reads the facts first. Where one cannot be known — the
// guest is locked by a task nobody recorded, or a guest without the service's stamp sits on the
// vmid — it moves the operation to needs_reconciliation with the facts and the reason, sends
// nothing that changes anything, and the lock stays closed.
func TestCrashAfterDestroyBeganUnknowable(t *testing.T) {
	cases := []struct {
		name, key, value, reason string
		stamped                  bool
	}{
		{"locked by an unrecorded task", "lock", "destroyed", "task_not_recorded", true},
		{"a guest not ours", "description", "somebody else's guest", "guest_not_ours", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, "sqlite")
			e.seed("svc-crash", 5001, "ct-8", true, nil)
			in := e.preview("svc-crash")
			e.hold("svc-crash")
			op, err := e.apply("svc-crash", in)
			if err != nil {
				t.Fatal(err)
			}
			// The dead process had claimed the operation and entered destroy; its lease ran out.
			past := time.Now().Add(-time.Minute)
			dbtest.Exec(t, e.db, "UPDATE operations SET state = ?, lease_owner = ?, lease_until = ?, stage = ?, stage_index = ?, attempts = 1 WHERE id = ?",
				models.OpRunning, "dead-process", past, "destroy", 2, op.ID)
			dbtest.Exec(t, e.db, "UPDATE services SET lock_operation_id = ? WHERE service_id = ?", op.ID, "svc-crash")
			must(e.sim.SetConfig(5001, c.key, c.value))
			e.resetLog()
			done := e.wait(op)
			if done.State != models.OpNeedsReconciliation || deref(done.ErrorCode) != string(i18n.CodeOperationInterrupted) || done.Resumed != 0 {
				t.Fatalf("op %s %s resumed %d", done.State, deref(done.ErrorCode), done.Resumed)
			}
			for _, r := range e.sim.Requests() {
				if r.Method != "GET" {
					t.Fatalf("the takeover sent %s %s", r.Method, r.Path)
				}
			}
			var rec executor.Reconciliation
			must(json.Unmarshal([]byte(deref(done.Reconciliation)), &rec))
			if rec.Reason != c.reason || rec.Facts.GuestPresent == nil || !*rec.Facts.GuestPresent || *rec.Facts.Stamped != c.stamped ||
				rec.Facts.VMID != 5001 {
				t.Fatalf("reconciliation %s", deref(done.Reconciliation))
			}
			got := e.intent("svc-crash")
			v := reinstall.ViewOf(got, "en")
			if got.State != models.IntentNeedsReconciliation || v.Reconciliation == nil || v.Reconciliation.FailedStage != "destroy" ||
				v.Reconciliation.GuestExisted != nil || v.Reconciliation.VMID != 5001 || v.Reconciliation.Reason != c.reason {
				t.Fatalf("intent %s %+v", got.State, v.Reconciliation)
			}
			s := e.service("svc-crash")
			if s.State != models.ServiceNeedsReconciliation || s.LockOperationID == nil || *s.LockOperationID != op.ID {
				t.Fatalf("service %s lock %v", s.State, s.LockOperationID)
			}
			if _, _, err := e.svc.Preview(t.Context(), client, "svc-crash", reinstall.PreviewRequest{}); problemCode(err) != i18n.CodeServiceLocked {
				t.Fatalf("preview: %v", err)
			}
		})
	}
}

// assertResumedAudit finds the audit entry that says why the operation resumed.
func assertResumedAudit(t *testing.T, e *env, id, opID, cause, stage string) {
	t.Helper()
	evs, err := e.db.ListAudit(t.Context(), models.ServiceKey{ClientID: client, ServiceID: id})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		var d struct {
			Cause string `json:"cause"`
			Stage string `json:"stage"`
		}
		if ev.Event == "operation_resumed" && ev.OperationID == opID && json.Unmarshal([]byte(deref(ev.Detail)), &d) == nil &&
			d.Cause == cause && d.Stage == stage {
			return
		}
	}
	t.Fatalf("no operation_resumed audit entry (cause %s, stage %s) among %d events", cause, stage, len(evs))
}
