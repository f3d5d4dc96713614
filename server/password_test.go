package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"pvebill/models/dbtest"
	"pvebill/modules/pve/pvesim/simtest"
	"pvebill/modules/stack"
)

const newPassword = "N3w-Passw0rd-Never-Stored"

func passwordBody(pw string) []byte {
	b, _ := json.Marshal(map[string]string{"root_password": pw})
	return b
}

// agentCalls lists the guest agent calls in the simulator's log from index from on, as
// "METHOD command", and fails on any cloud-init password sent after create (R56).
func agentCalls(t *testing.T, sim *simtest.Server, from int) []string {
	t.Helper()
	var out []string
	for _, r := range sim.Requests()[from:] {
		if r.Form.Get("cipassword") != "" {
			t.Errorf("cipassword sent: %s %s", r.Method, r.Path)
		}
		if i := strings.Index(r.Path, "/agent/"); i >= 0 {
			out = append(out, r.Method+" "+r.Path[i+len("/agent/"):])
		}
	}
	return out
}

// noSecretAnywhere fails when pw is in a log line or a row of any table that holds operations
// or request records (R26).
func noSecretAnywhere(t *testing.T, h *svcHarness, pw string) {
	t.Helper()
	if strings.Contains(h.logs.String(), pw) {
		t.Error("the password is in the log")
	}
	for _, table := range []string{"services", "operations", "idempotency_keys", "audit_events"} {
		rows := dbtest.TableRows(t, h.db, table)
		if strings.Contains(fmt.Sprint(rows), pw) {
			t.Errorf("the password is in table %s", table)
		}
	}
}

// R56: a VM's password changes through its guest agent: one ping and one set-user-password for
// root with the new password, no cipassword; the operation succeeds once the agent answered;
// the password is in no table and no log line (R26); the plans list the capability.
func TestPasswordChangeThroughGuestAgent(t *testing.T) {
	for _, dialect := range dbtest.Dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			h := newServicesHarness(t, dialect)
			succeeded(t, h.billing("POST", "/v1/services?wait=20", createBody("pw-vm", "vm-2g")))
			n := len(h.sim.Requests())
			r := h.billing("POST", "/v1/services/pw-vm/password", passwordBody(newPassword),
				withHeader("Idempotency-Key", "pw-vm-password-1"))
			op := operationOf(t, r, 202)
			if op["action"] != "password" {
				t.Fatalf("operation %v", op)
			}
			op = succeeded(t, h.billing("GET", "/v1/operations/"+op["id"].(string)+"?wait=20", nil))
			if op["stage"] != "set_password" {
				t.Fatalf("operation %v", op)
			}
			calls := agentCalls(t, h.sim, n)
			if strings.Join(calls, ",") != "POST ping,POST ping,POST set-user-password" {
				t.Fatalf("agent calls %v", calls)
			}
			var set int
			for _, q := range h.sim.Requests()[n:] {
				if strings.HasSuffix(q.Path, "/agent/set-user-password") {
					set++
					if q.Form.Get("username") != "root" || q.Form.Get("password") != newPassword || q.Form.Has("crypted") {
						t.Fatalf("set-user-password form %v", q.Form)
					}
				}
			}
			if set != 1 {
				t.Fatalf("%d set-user-password calls", set)
			}
			noSecretAnywhere(t, h, newPassword)

			plan := h.billing("GET", "/v1/plans/vm-2g", nil).json(t)["plan"].(map[string]any)
			vmCap := plan["capabilities"].(map[string]any)["vm"].(map[string]any)["password"].(map[string]any)
			if vmCap["available"] != true {
				t.Fatalf("vm password capability %v", vmCap)
			}
			ct := h.billing("GET", "/v1/plans/ct-1g", nil, withHeader("Accept-Language", "de")).json(t)["plan"].(map[string]any)
			ctCap := ct["capabilities"].(map[string]any)["container"].(map[string]any)["password"].(map[string]any)
			if ctCap["available"] != false || ctCap["refusal"] != "permanent" || !strings.Contains(fmt.Sprint(ctCap["reason"]), "neu") {
				t.Fatalf("container password capability %v", ctCap)
			}
		})
	}
}

// R56: a container's password change is refused permanently with the translated reason (it
// points to reinstall); a VM whose agent does not answer is refused temporarily with the
// reason, and no set-user-password is sent; bad input is 422; another client's service is 404.
func TestPasswordRefusals(t *testing.T) {
	h := newServicesHarness(t, "sqlite")
	succeeded(t, h.billing("POST", "/v1/services?wait=20", createBody("pw-ct", "ct-1g")))
	succeeded(t, h.billing("POST", "/v1/services?wait=20", createBody("pw-vm", "vm-2g")))
	n := len(h.sim.Requests())

	p := checkProblem(t, h.billing("POST", "/v1/services/pw-ct/password", passwordBody(newPassword),
		withHeader("Accept-Language", "fr")), 409, "capability_refused")
	if p["permanence"] != "permanent" || !strings.Contains(p["reason"].(string), "Réinstallez") {
		t.Fatalf("container refusal %v", p)
	}
	if c := len(h.sim.Requests()) - n; c != 0 {
		t.Fatalf("a container's refusal sent %d requests to Proxmox", c)
	}

	vmid := int(h.service("pw-vm")["vmid"].(float64))
	if err := h.sim.SetAgentRunning(vmid, false); err != nil {
		t.Fatal(err)
	}
	n = len(h.sim.Requests())
	p = checkProblem(t, h.billing("POST", "/v1/services/pw-vm/password", passwordBody(newPassword),
		withHeader("Accept-Language", "de")), 409, "capability_refused")
	if p["permanence"] != "temporary" || !strings.Contains(p["reason"].(string), "Gast-Agent") {
		t.Fatalf("agent refusal %v", p)
	}
	if calls := agentCalls(t, h.sim, n); strings.Join(calls, ",") != "POST ping" {
		t.Fatalf("agent calls after the refusal %v", calls)
	}
	if ops := dbtest.Count(t, h.db, "SELECT COUNT(*) FROM operations WHERE action = ?", "password"); ops != 0 {
		t.Fatalf("%d password operations written for refusals", ops)
	}

	checkProblem(t, h.billing("POST", "/v1/services/pw-vm/password", passwordBody("abc")), 422, "validation_failed")
	checkProblem(t, h.billing("POST", "/v1/services/pw-vm/password", []byte(`{}`)), 422, "validation_failed")
	checkProblem(t, h.billing("POST", "/v1/services/pw-vm/password", []byte(`{"root_password":"abcdef","x":1}`)), 422, "validation_failed")
	checkProblem(t, h.otherClient("POST", "/v1/services/pw-vm/password", passwordBody(newPassword)), 404, "not_found")

	if err := h.sim.SetAgentRunning(vmid, true); err != nil {
		t.Fatal(err)
	}
	succeeded(t, h.billing("POST", "/v1/services/pw-vm/password?wait=20", passwordBody(newPassword)))
	noSecretAnywhere(t, h, newPassword)
}

// R56, R26: the password lives only in the memory of the replica that accepted the request.
// When that replica is gone before the operation ran, the replica that takes it over fails it
// operation_interrupted (temporary) without a single agent call; asked again, it succeeds.
func TestPasswordLostWithItsReplica(t *testing.T) {
	for _, d := range dbtest.Dialects(t) {
		t.Run(d, func(t *testing.T) {
			dbA, dbB := replicaDatabases(t, d)
			sim := simtest.Start(t, nil)
			shortLease := func(o *stack.Options) { o.Executor.Lease = 600 * time.Millisecond }
			a := newServicesReplica(t, dbA, sim, nil, "replica-a", true, shortLease)
			succeeded(t, a.billing("POST", "/v1/services?wait=20", createBody("pw-rep", "vm-2g")))
			// B starts once the create is done: on a loaded machine A's 600 ms lease may lapse,
			// and B would take the create over without its password.
			b := newServicesReplica(t, dbB, sim, nil, "replica-b", false, shortLease)
			// A stops working (as if it died) but still answers HTTP: the operation it accepts is
			// pinned to it, and only B's workers run.
			sctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			a.exec.Stop(sctx)
			cancel()
			n := len(sim.Requests())
			op := operationOf(t, a.billing("POST", "/v1/services/pw-rep/password", passwordBody(newPassword)), 202)
			r := b.billing("GET", "/v1/operations/"+op["id"].(string)+"?wait=20", nil)
			done := operationOf(t, r, 200)
			errObj, _ := done["error"].(map[string]any)
			if done["state"] != "failed" || errObj["code"] != "operation_interrupted" {
				t.Fatalf("operation taken over without its password: %v", done)
			}
			for _, c := range agentCalls(t, sim, n) {
				if strings.HasSuffix(c, "set-user-password") {
					t.Fatal("set-user-password sent without the password")
				}
			}
			succeeded(t, b.billing("POST", "/v1/services/pw-rep/password?wait=20", passwordBody(newPassword)))
			noSecretAnywhere(t, a, newPassword)
			if strings.Contains(b.logs.String(), newPassword) {
				t.Error("the password is in replica B's log")
			}
		})
	}
}
