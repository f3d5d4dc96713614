package server_test

import (
	"strings"
	"testing"

	"pvebill/models/dbtest"
	"pvebill/modules/pve/pvesim"
)

// R40 over HTTP, for both kinds, on both databases: shutdown (forceStop=0, the body's
// time-out), start, reboot and stop each send their one call and read the power back; a no-op
// sends none; a suspended service refuses start and reboot with 409 service_suspended in the
// caller's language; a timed-out shutdown is shutdown_timeout; the operations metric counts
// each action by result; every answer conforms to openapi.yaml.
func TestPowerOverHTTP(t *testing.T) {
	kinds := []struct{ kind, plan string }{{"container", "ct-1g"}, {"vm", "vm-2g"}}
	for _, dialect := range dbtest.Dialects(t) {
		for _, k := range kinds {
			t.Run(dialect+"/"+k.kind, func(t *testing.T) {
				h := newServicesHarness(t, dialect)
				id := "pw-" + k.kind
				succeeded(t, h.billing("POST", "/v1/services?wait=20", createBody(id, k.plan)))
				testPowerOverHTTP(t, h, id)
			})
		}
	}
}

func testPowerOverHTTP(t *testing.T, h *svcHarness, id string) {
	base := "/v1/services/" + id
	posts := func(from int) []pvesim.Request {
		var out []pvesim.Request
		for _, r := range h.sim.Requests()[from:] {
			if r.Method == "POST" {
				out = append(out, r)
			}
		}
		return out
	}
	act := func(action, body, power string, calls int) []pvesim.Request {
		t.Helper()
		n := len(h.sim.Requests())
		var b []byte
		if body != "" {
			b = []byte(body)
		}
		op := finished(t, h, h.billing("POST", base+"/"+action+"?wait=20", b))
		if op["action"] != action || op["state"] != "succeeded" {
			t.Fatalf("operation %v", op)
		}
		if s := h.service(id); s["power"] != power {
			t.Fatalf("after %s: power %v", action, s["power"])
		}
		p := posts(n)
		if len(p) != calls || (calls == 1 && !strings.HasSuffix(p[0].Path, "/status/"+action)) {
			t.Fatalf("%s sent %+v, want %d POST", action, p, calls)
		}
		return p
	}
	act("start", "", "running", 0)
	if p := act("shutdown", `{"timeout_seconds":45}`, "stopped", 1); p[0].Form.Get("forceStop") != "0" || p[0].Form.Get("timeout") != "45" {
		t.Fatalf("shutdown form %v", p[0].Form)
	}
	act("stop", "{}", "stopped", 0)
	act("shutdown", "", "stopped", 0)
	// R40: refused at once, before an operation is written.
	r := h.billing("POST", base+"/reboot?wait=20", nil)
	conform(t, "POST", base+"/reboot", r)
	checkProblem(t, r, 409, "guest_not_running")
	act("start", "", "running", 1)
	act("reboot", "", "running", 1)
	checkProblem(t, h.billing("POST", base+"/shutdown", []byte(`{"timeout_seconds":5}`)), 422, "validation_failed")
	checkProblem(t, h.billing("POST", base+"/stop", []byte(`{"force":true}`)), 422, "validation_failed")

	h.sim.InjectFault(pvesim.Fault{Method: "POST", PathPattern: `/nodes/[^/]+/(lxc|qemu)/[0-9]+/status/shutdown`, Nth: 1,
		TaskFail: "shutdown timed out"})
	if op := finished(t, h, h.billing("POST", base+"/shutdown?wait=20", nil)); op["state"] != "failed" || errorCode(op) != "shutdown_timeout" {
		t.Fatalf("timed-out shutdown: %v", op)
	}
	if s := h.service(id); s["power"] != "running" {
		t.Fatalf("after a timed-out shutdown: power %v", s["power"])
	}
	act("stop", "", "stopped", 1)

	succeeded(t, h.billing("POST", base+"/suspend?wait=20", nil))
	n := len(h.sim.Requests())
	for _, action := range []string{"start", "reboot"} {
		p := checkProblem(t, h.billing("POST", base+"/"+action, nil, withHeader("Accept-Language", "de")), 409, "service_suspended")
		if d, _ := p["detail"].(string); !strings.Contains(d, "gesperrt") {
			t.Fatalf("%s: detail %q not in German", action, d)
		}
	}
	if len(h.sim.Requests()) != n {
		t.Fatal("a refused power action reached Proxmox")
	}
	for _, want := range []struct{ action, result string }{{"start", "succeeded"}, {"stop", "succeeded"},
		{"shutdown", "succeeded"}, {"shutdown", "failed"}, {"reboot", "succeeded"}} {
		if v := counterValue(t, h, "pvebill_operations_total", map[string]string{"action": want.action, "result": want.result}); v < 1 {
			t.Errorf("pvebill_operations_total{action=%q,result=%q} = %v", want.action, want.result, v)
		}
	}
}

// finished is the operation of an answer once it has ended: a 202 (the wait ran out on a
// loaded machine) is followed on GET /v1/operations/{id}.
func finished(t *testing.T, h *svcHarness, r response) map[string]any {
	t.Helper()
	if r.Status != 202 {
		return operationOf(t, r, 200)
	}
	op := operationOf(t, r, 202)
	for range 5 {
		r = h.billing("GET", "/v1/operations/"+op["id"].(string)+"?wait=20", nil)
		if op = operationOf(t, r, 200); op["state"] != "queued" && op["state"] != "running" {
			return op
		}
	}
	t.Fatalf("operation still %v", op["state"])
	return nil
}

func errorCode(op map[string]any) any {
	e, _ := op["error"].(map[string]any)
	return e["code"]
}

// counterValue is the value of a counter's series with the given labels (0 when absent).
func counterValue(t *testing.T, h *svcHarness, name string, labels map[string]string) float64 {
	t.Helper()
	mfs, err := h.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			match := true
			for _, l := range m.GetLabel() {
				if v, ok := labels[l.GetName()]; ok && v != l.GetValue() {
					match = false
				}
			}
			if match {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}
