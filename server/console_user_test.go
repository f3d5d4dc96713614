package server_test

import (
	"net/http"
	"strings"
	"testing"

	"pvebill/i18n"
	"pvebill/models/dbtest"
	"pvebill/modules/kinds"
	"pvebill/modules/plans"
	"pvebill/modules/pve/pvesim/simtest"
	"pvebill/modules/stack"
	"pvebill/server/config"
)

// A cluster without a console user (R41), on both databases: the console is on (console.secret
// set) but the cluster has no console_user, so POST /v1/services/{id}/console is 409
// capability_refused, permanent, with the translated reason, for a container and a VM alike;
// nothing reaches the simulator (no status read, no ticket login, no termproxy or vncproxy:
// its request log stays as it was), and the plans' console capability says the same. A
// cluster with a console user offers the console in the same plans.
func TestConsoleWithoutConsoleUser(t *testing.T) {
	for _, dialect := range dbtest.Dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			sim := simtest.Start(t, nil)
			h := newServicesReplica(t, dbtest.Open(t, dialect), sim, &config.Console{Secret: consoleSecret}, "test-"+dialect, true,
				func(o *stack.Options) { o.Clusters = []kinds.Cluster{{Name: "default", Client: sim.Client(t, nil)}} })
			succeeded(t, h.billing("POST", "/v1/services?wait=20", createBody("nouser-ct", "ct-1g")))
			succeeded(t, h.billing("POST", "/v1/services?wait=20", createBody("nouser-vm", "vm-2g")))
			before := len(h.sim.Requests())
			for _, id := range []string{"nouser-ct", "nouser-vm"} {
				p := checkProblem(t, h.billing("POST", "/v1/services/"+id+"/console", nil, withHeader("Accept-Language", "de")),
					http.StatusConflict, "capability_refused")
				if p["permanence"] != "permanent" || p["reason"] != i18n.T("de", plans.ReasonNoConsoleUser, nil) {
					t.Errorf("%s: %v", id, p)
				}
			}
			if reqs := h.sim.Requests()[before:]; len(reqs) != 0 {
				t.Errorf("a refused console reached Proxmox: %+v", reqs)
			}
			if v := metricValue(t, h.reg, "pvebill_console_refused_total", "reason", "plan_refused"); v != 2 {
				t.Errorf("refused{plan_refused} %v", v)
			}
			for code, kind := range map[string]string{"ct-1g": "container", "vm-2g": "vm"} {
				c := capOf(t, planOf(t, h.billing("GET", "/v1/plans/"+code, nil, withHeader("Accept-Language", "fr"))), kind, "console")
				if c["available"] != false || c["refusal"] != "permanent" || c["reason"] != i18n.T("fr", plans.ReasonNoConsoleUser, nil) {
					t.Errorf("%s console: %v", code, c)
				}
			}
		})
	}
	with := newConsoleHarness(t, "sqlite", 0)
	for code, kind := range map[string]string{"ct-1g": "container", "vm-2g": "vm"} {
		if c := capOf(t, planOf(t, with.billing("GET", "/v1/plans/"+code, nil)), kind, "console"); c["available"] != true {
			t.Errorf("%s console with a console user: %v", code, c)
		}
	}
}

// A console configured by halves (R41), on both databases: the cluster has a console user but
// console.secret is not set. The start logs a warning that names console.secret; the plans'
// console capability is refused permanently with the translated reason that names the setting,
// and POST /v1/services/{id}/console is 409 capability_refused with the same permanence and
// reason, for a container and a VM alike, with nothing sent to the simulator. A stack with
// both set says nothing of it.
func TestConsoleWithoutSecret(t *testing.T) {
	for _, dialect := range dbtest.Dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			sim := simtest.Start(t, nil)
			h := newServicesReplica(t, dbtest.Open(t, dialect), sim, nil, "test-"+dialect, true,
				func(o *stack.Options) { o.Clusters = []kinds.Cluster{{Name: "default", Client: consoleClient(t, sim)}} })
			warned := false
			for _, line := range strings.Split(h.logs.String(), "\n") {
				if strings.Contains(line, `"level":"WARN"`) && strings.Contains(line, `"missing":"console.secret"`) &&
					strings.Contains(line, `"clusters":["default"]`) {
					warned = true
				}
			}
			if !warned {
				t.Errorf("no warning names console.secret:\n%s", h.logs.String())
			}
			for code, kind := range map[string]string{"ct-1g": "container", "vm-2g": "vm"} {
				c := capOf(t, planOf(t, h.billing("GET", "/v1/plans/"+code, nil, withHeader("Accept-Language", "pl"))), kind, "console")
				if c["available"] != false || c["refusal"] != "permanent" || c["reason"] != i18n.T("pl", plans.ReasonConsoleSecretNotSet, nil) ||
					!strings.Contains(c["reason"].(string), "console.secret") {
					t.Errorf("%s console: %v", code, c)
				}
			}
			succeeded(t, h.billing("POST", "/v1/services?wait=20", createBody("nosecret-ct", "ct-1g")))
			succeeded(t, h.billing("POST", "/v1/services?wait=20", createBody("nosecret-vm", "vm-2g")))
			before := len(h.sim.Requests())
			for _, id := range []string{"nosecret-ct", "nosecret-vm"} {
				p := checkProblem(t, h.billing("POST", "/v1/services/"+id+"/console", nil, withHeader("Accept-Language", "de")),
					http.StatusConflict, "capability_refused")
				if p["permanence"] != "permanent" || p["reason"] != i18n.T("de", plans.ReasonConsoleSecretNotSet, nil) ||
					!strings.Contains(p["reason"].(string), "console.secret") {
					t.Errorf("%s: %v", id, p)
				}
			}
			if reqs := h.sim.Requests()[before:]; len(reqs) != 0 {
				t.Errorf("a refused console reached Proxmox: %+v", reqs)
			}
			if v := metricValue(t, h.reg, "pvebill_console_refused_total", "reason", "not_configured"); v != 2 {
				t.Errorf("refused{not_configured} %v", v)
			}
		})
	}
	with := newConsoleHarness(t, "sqlite", 0)
	if strings.Contains(with.logs.String(), "console.secret") {
		t.Errorf("a stack with console.secret warns of it:\n%s", with.logs.String())
	}
}
