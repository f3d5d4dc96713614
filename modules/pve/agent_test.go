package pve

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"pvebill/modules/pve/pvesim"
)

// The guest agent calls a password change makes (docs/proxmox.md §8.6) on the simulator: a
// running VM's agent answers ping and set-user-password; once its agent is stopped (through
// the control API, as a separate simulator process is driven) both fail with Proxmox's
// message, sorted as ErrAgentNotRunning; a stopped VM is ErrNotRunning. The password is in the
// form and in no error.
func TestAgentPasswordOnSimulator(t *testing.T) {
	sim, c := newSim(t)
	ctx := testContext(t)
	noErr(t, sim.SeedGuest(pvesim.Guest{VMID: 310, Type: "qemu", Node: "pve1", Running: true,
		Config: map[string]string{"name": "agent-vm", "agent": "1", "memory": "1024"}}))
	vm := c.Node("pve1").QEMU(310)
	req := AgentPasswordRequest{Username: "root", Password: "s3cret-agent-pass"}
	noErr(t, vm.AgentPing(ctx))
	noErr(t, vm.SetUserPassword(ctx, req))
	last := sim.Requests()[len(sim.Requests())-1]
	if last.Form.Get("username") != "root" || last.Form.Get("password") != "s3cret-agent-pass" {
		t.Fatalf("set-user-password form %v", last.Form)
	}

	rec := httptest.NewRecorder()
	sim.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/_sim/guests/310/agent", strings.NewReader(`{"running":false}`)))
	if rec.Code != http.StatusOK {
		t.Fatalf("control answered %d %s", rec.Code, rec.Body)
	}
	for name, call := range map[string]func() error{
		"ping": func() error { return vm.AgentPing(ctx) },
		"set":  func() error { return vm.SetUserPassword(ctx, req) },
	} {
		err := call()
		if !errors.Is(err, ErrAgentNotRunning) || !strings.Contains(err.Error(), "QEMU guest agent is not running") {
			t.Fatalf("%s with the agent stopped: %v", name, err)
		}
		if strings.Contains(err.Error(), "s3cret-agent-pass") {
			t.Fatalf("%s: the password is in the error", name)
		}
	}
	noErr(t, sim.SetAgentRunning(310, true))
	_, err := vm.Stop(ctx)
	noErr(t, err)
	if err := vm.AgentPing(ctx); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("ping of a stopped VM: %v", err)
	}
	if err := sim.SetAgentRunning(200, false); err == nil {
		t.Fatal("a container's agent was stopped")
	}
}
