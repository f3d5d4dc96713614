package provision_test

import (
	"strings"
	"testing"

	"pvebill/i18n"
	"pvebill/models"
	"pvebill/modules/pve/pvesim"
)

// The conformance suite every guest kind passes: a Proxmox failure at each write of a create
// fails the operation with a typed code, and the billing system's retry of the same create
// ends with exactly one running guest carrying the service's stamp — the one the failed
// attempt made when there was one (adopted), never a second.
func TestCreateFaultAtEachStage(t *testing.T) {
	kinds := []struct {
		kind, plan string
		writes     []pvesim.Fault
	}{
		{"container", "ct-small", []pvesim.Fault{
			{Method: "POST", PathPattern: "/nodes/{node}/lxc", Status: 500, Message: "unable to create CT - storage error"},
			{Method: "POST", PathPattern: "/nodes/{node}/lxc", TaskFail: "unable to create CT - unpack failed"},
			{Method: "PUT", PathPattern: "/nodes/{node}/lxc/{vmid}/firewall/options", Status: 500, Message: "firewall config locked"},
			{Method: "PUT", PathPattern: "/nodes/{node}/lxc/{vmid}/config", Status: 500, Message: "got timeout"},
			{Method: "POST", PathPattern: "/nodes/{node}/lxc/{vmid}/status/start", TaskFail: "startup for container failed"},
		}},
		{"vm", "vm-pool", []pvesim.Fault{
			{Method: "POST", PathPattern: "/nodes/{node}/qemu/{vmid}/clone", TaskFail: "clone failed: storage error"},
			{Method: "PUT", PathPattern: "/nodes/{node}/qemu/{vmid}/config", Status: 500, Message: "got timeout"},
			{Method: "PUT", PathPattern: "/nodes/{node}/qemu/{vmid}/resize", TaskFail: "resize failed"},
			{Method: "POST", PathPattern: "/nodes/{node}/qemu/{vmid}/firewall/ipset", Status: 500, Message: "firewall config locked"},
			{Method: "POST", PathPattern: "/nodes/{node}/qemu/{vmid}/firewall/ipset/{name}", Status: 500, Message: "firewall config locked"},
			{Method: "PUT", PathPattern: "/nodes/{node}/qemu/{vmid}/firewall/options", Status: 500, Message: "firewall config locked"},
			{Method: "POST", PathPattern: "/nodes/{node}/qemu/{vmid}/status/start", TaskFail: "start failed: QEMU exited with code 1"},
		}},
	}
	for _, k := range kinds {
		for _, f := range k.writes {
			name := k.kind + " " + f.Method + " " + f.PathPattern
			if f.TaskFail != "" {
				name += " task"
			}
			t.Run(name, func(t *testing.T) {
				e := newEnvWithPlanPool(t, &staticAddresses{})
				f.Nth = 1
				e.sim.InjectFault(f)
				req := vmReq("svc-conf", k.plan)
				op, _, err := e.svc.Create(t.Context(), "whmcs", req)
				if err != nil {
					t.Fatal(err)
				}
				got := e.wait(op)
				code := deref(got.ErrorCode)
				if got.State != models.OpFailed || (code != string(i18n.CodeProxmoxTaskFailed) && code != string(i18n.CodeBlocked)) {
					t.Fatalf("failed create: %s %s %s", got.State, code, deref(got.ErrorDetail))
				}
				if s := e.service("svc-conf"); s.State != models.ServiceFailed {
					t.Fatalf("service %s after a failed create", s.State)
				}
				retry, created, err := e.svc.Create(t.Context(), "whmcs", req)
				if err != nil || !created {
					t.Fatalf("retry: %v %v", created, err)
				}
				e.mustSucceed(retry, nil)
				stamped := 0
				for id := 100; id < 120; id++ {
					if g, ok := e.sim.Guest(id); ok && strings.Contains(g.Config["description"], "pvebill-service: whmcs/svc-conf") {
						stamped++
						if g.Status != "running" {
							t.Errorf("guest %d %s", id, g.Status)
						}
					}
				}
				if stamped != 1 {
					t.Fatalf("%d guests carry the service's stamp, want 1", stamped)
				}
				if s := e.service("svc-conf"); s.State != models.ServiceActive {
					t.Fatalf("service %s after the retry", s.State)
				}
			})
		}
	}
}
