package provision_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"pvebill/models"
	"pvebill/models/dbtest"
	"pvebill/modules/executor"
	"pvebill/modules/pve/pvesim"
	"pvebill/modules/stack/stacktest/poll"
)

// R58, R38: a replica dies while a terminate destroys the guest — the destroy sent and never
// answered, the stop or the destroy task running — and another replica takes the operation
// over. The facts decide: it ends succeeded, the service terminated, the guest gone with
// exactly one destroy that reached Proxmox, and the operation says it resumed and the audit log
// why.
func TestTerminateTakeoverAtEveryStage(t *testing.T) {
	cases := []struct {
		name, task string
		fault      pvesim.Fault
	}{
		{"stop task running", "vzstop", pvesim.Fault{Method: "GET", PathPattern: `.*:vzstop:.*/status`, Hang: true}},
		{"destroy sent, unanswered", "", pvesim.Fault{Method: "DELETE", PathPattern: "/nodes/{node}/lxc/{vmid}", Hang: true}},
		{"destroy task running", "vzdestroy", pvesim.Fault{Method: "GET", PathPattern: `.*:vzdestroy:.*/status`, Hang: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, "sqlite", nil, nil)
			created := e.mustSucceed(e.create(ctReq("svc-term")), nil)
			vmid := int(resultOf(t, created)["vmid"].(float64))
			e.sim.ResetLog()
			fault := e.sim.InjectFault(c.fault)
			op, err := e.svc.Terminate(t.Context(), "whmcs", "svc-term")
			if err != nil {
				t.Fatal(err)
			}
			killAt(t, e, op.ID, "destroy", c.task, fault)
			second := e.Replica(executor.Config{Owner: "second", Workers: 2, Lease: 5 * time.Second,
				PollInterval: 10 * time.Millisecond, HealBackoff: 20 * time.Millisecond, FactsBudget: 300 * time.Millisecond})
			second.Exec.Kick()
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			done, err := executor.WaitTerminal(ctx, e.db, second.Exec.Broker(), op.ID, 10*time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			if done.State != models.OpSucceeded || done.Resumed != 1 {
				t.Fatalf("op %s resumed %d at %s: %s", done.State, done.Resumed, done.Stage, deref(done.ErrorCode))
			}
			if s := e.service("svc-term"); s.State != models.ServiceTerminated || s.LockOperationID != nil {
				t.Fatalf("service %s lock %v", s.State, s.LockOperationID)
			}
			if _, ok := e.sim.Guest(vmid); ok {
				t.Fatal("guest still there")
			}
			destroys := 0
			for _, q := range e.sim.Requests() {
				if q.Method == "DELETE" && q.Status == 200 && strings.HasSuffix(q.Path, "/lxc/"+strconv.Itoa(vmid)) {
					destroys++
				}
			}
			if destroys != 1 {
				t.Fatalf("%d destroys reached Proxmox, want 1", destroys)
			}
			evs, err := e.db.ListAudit(t.Context(), models.ServiceKey{ClientID: "whmcs", ServiceID: "svc-term"})
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, ev := range evs {
				var d struct{ Cause, Stage string }
				if ev.Event == "operation_resumed" && ev.OperationID == op.ID && json.Unmarshal([]byte(deref(ev.Detail)), &d) == nil &&
					d.Cause == executor.CauseTakenOver && d.Stage == "destroy" {
					found = true
				}
			}
			if !found {
				t.Fatalf("no operation_resumed audit entry among %d", len(evs))
			}
		})
	}
}

// killAt waits until the operation is held at stage (for a task, until the task's UPID of kind
// is recorded) by the injected fault, its request held inside the simulator, and stops the env's
// executor there the way a SIGKILL leaves it for the database: running, nothing written after;
// then the faults are cleared and the lease made to expire.
func killAt(t *testing.T, e *env, id, stage, kind string, fault int) {
	t.Helper()
	var cur *models.Operation
	poll.Until(t, 10*time.Second, fmt.Sprintf("the operation held at %s (%s)", stage, kind), func() bool {
		var err error
		if cur, err = e.db.GetOperation(t.Context(), id); err != nil {
			t.Fatal(err)
		}
		if models.IsTerminal(cur.State) {
			t.Fatalf("operation %s at %q, never held at %s (%s)", cur.State, cur.Stage, stage, kind)
		}
		return cur.Stage == stage && (kind == "" || cur.TaskUPID != nil && strings.Contains(*cur.TaskUPID, ":"+kind+":"))
	})
	poll.Until(t, 10*time.Second, "the held request to reach the simulator", func() bool { return e.sim.FaultFired(fault) > 0 })
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	e.exec.Stop(ctx)
	e.sim.ClearFaults()
	dbtest.ExpireLease(t, e.db, id)
}
