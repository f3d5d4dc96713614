package server_test

import (
	"encoding/json"
	"testing"
	"time"

	"pvebill/models/dbtest"
	"pvebill/modules/pve/pvesim"
	"pvebill/modules/pve/pvesim/simtest"
	"pvebill/modules/stack"
)

// R58, R28: a terminate whose destroy task keeps failing is resumed from the facts three times
// and then needs reconciliation; the operation says so over HTTP (resumed, reconciliation with
// the facts and resume_failed), and GET /v1/admin/reconciliations lists it for an operator —
// admin only, the answer checked against openapi.yaml by the harness — until the reconcile
// route closes it.
func TestAdminReconciliationsOverHTTP(t *testing.T) {
	for _, dialect := range dbtest.Dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			fast := func(o *stack.Options) {
				o.Executor.HealBackoff, o.Executor.FactsBudget = 20*time.Millisecond, 300*time.Millisecond
			}
			h := newServicesReplica(t, dbtest.Open(t, dialect), simtest.Start(t, nil), nil, "test-rec", true, fast)
			succeeded(t, h.billing("POST", "/v1/services?wait=20", createBody("whmcs-rec", "ct-1g")))
			if r := h.admin("GET", "/v1/admin/reconciliations"); r.Status != 200 || string(r.Body) != `{"reconciliations":[]}` {
				t.Fatalf("empty list %d %s", r.Status, r.Body)
			}
			h.sim.InjectFault(pvesim.Fault{Method: "DELETE", PathPattern: "/nodes/{node}/lxc/{vmid}", TaskFail: "chaos: volume busy"})
			op := operationOf(t, h.billing("POST", "/v1/services/whmcs-rec/terminate?wait=20", []byte(`{}`)), 200)
			rec, _ := op["reconciliation"].(map[string]any)
			facts, _ := rec["facts"].(map[string]any)
			if op["state"] != "needs_reconciliation" || op["resumed"] != float64(3) || rec["reason"] != "resume_failed" ||
				facts["guest_present"] != true || facts["last_task"] == nil {
				t.Fatalf("operation %v", op)
			}
			r := h.admin("GET", "/v1/admin/reconciliations?limit=10")
			var list struct {
				Reconciliations []struct {
					ServiceID   string         `json:"service_id"`
					Client      string         `json:"client"`
					OperationID string         `json:"operation_id"`
					Action      string         `json:"action"`
					FailedStage string         `json:"failed_stage"`
					Reason      string         `json:"reason"`
					Facts       map[string]any `json:"facts"`
				} `json:"reconciliations"`
			}
			if r.Status != 200 || json.Unmarshal(r.Body, &list) != nil || len(list.Reconciliations) != 1 {
				t.Fatalf("list %d %s", r.Status, r.Body)
			}
			got := list.Reconciliations[0]
			if got.ServiceID != "whmcs-rec" || got.Client != "whmcs" || got.OperationID != op["id"] || got.Action != "terminate" ||
				got.FailedStage != "destroy" || got.Reason != "resume_failed" || got.Facts["guest_present"] != true {
				t.Fatalf("entry %+v", got)
			}
			checkProblem(t, h.billing("GET", "/v1/admin/reconciliations", nil), 403, "forbidden")
			checkProblem(t, h.admin("GET", "/v1/admin/reconciliations?limit=0"), 422, "validation_failed")
			h.sim.ClearFaults()
			if r := h.signed("POST", "/v1/admin/services/whmcs-rec/reconcile", "ops", adminSecret,
				[]byte(`{"resolution":"abandoned","note":"stub config removed by hand"}`)); r.Status != 200 {
				t.Fatalf("reconcile %d %s", r.Status, r.Body)
			}
			if r := h.admin("GET", "/v1/admin/reconciliations"); string(r.Body) != `{"reconciliations":[]}` {
				t.Fatalf("after reconcile %s", r.Body)
			}
		})
	}
}
