package provision_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"pvebill/i18n"
	"pvebill/models"
	"pvebill/models/dbtest"
	"pvebill/modules/executor"
	"pvebill/modules/kinds"
	"pvebill/modules/lxc"
	"pvebill/modules/placement"
	"pvebill/modules/plans"
	"pvebill/modules/pve"
	"pvebill/modules/pve/pvesim/simtest"
	"pvebill/modules/qemu"
	"pvebill/modules/stack"
	"pvebill/modules/stack/stacktest"
)

// refusingAgent stands for an agent whose route table lacks the container create (an agent
// older than pvebill): it answers that call as the agent does (403 with the refusal header and
// the reason) and carries every other call to the simulator with the agent's token.
type refusingAgent struct {
	sim     *url.URL
	refused atomic.Int32
}

func (a *refusingAgent) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/lxc") {
		a.refused.Add(1)
		h := http.Header{}
		h.Set(pve.HeaderAgentRefused, "route_not_allowed")
		h.Set("Content-Type", "application/json")
		return &http.Response{StatusCode: http.StatusForbidden, Header: h, Request: req,
			Body: io.NopCloser(strings.NewReader(`{"status":403,"code":"agent_refused","reason":"route_not_allowed"}`))}, nil
	}
	out := req.Clone(req.Context())
	out.URL.Scheme, out.URL.Host, out.Host = a.sim.Scheme, a.sim.Host, ""
	out.Header.Set("Authorization", "PVEAPIToken="+simtest.TokenID+"="+simtest.TokenSecret)
	return http.DefaultTransport.RoundTrip(out)
}

// R57: a call the cluster's agent refuses fails the operation at once as a Proxmox-side failure
// with a stable code (proxmox_task_failed, permanent, with a reason), asked of the agent once:
// neither a retry loop nor a wait for an agent that is there, and nothing reaches Proxmox.
func TestAgentRefusalFailsTheOperation(t *testing.T) {
	sim := simtest.Start(t, nil)
	base, err := url.Parse(sim.URL)
	if err != nil {
		t.Fatal(err)
	}
	ag := &refusingAgent{sim: base}
	client, err := pve.New(pve.Config{Cluster: "default", Tunnel: ag, Timeout: 5 * time.Second,
		RetryBaseDelay: time.Millisecond, RetryMaxDelay: 4 * time.Millisecond,
		TaskPollInterval: time.Millisecond, TaskPollMaxInterval: 10 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.Close)
	db := dbtest.Open(t, models.SQLite)
	st := stack.New(stack.Options{DB: db, Log: slog.New(slog.NewJSONHandler(io.Discard, nil)), Metrics: prometheus.NewRegistry(),
		Kinds:     []kinds.Module{&lxc.Module{ShutdownTimeout: time.Second}, &qemu.Module{ShutdownTimeout: time.Second}},
		Clusters:  []kinds.Cluster{{Name: "default", Client: client, MemoryOvercommit: testOvercommit}},
		Executor:  stacktest.Executor("test"),
		Placement: placement.Options{SharedReadTTL: sharedReadTTL}})
	if _, err := st.Plans.Import(t.Context(), stacktest.Plans(), plans.SourceFile); err != nil {
		t.Fatal(err)
	}
	sim.ResetLog()
	st.Exec.Start(context.Background())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		st.Exec.Stop(ctx)
	})

	op, _, err := st.Provisioner.Create(t.Context(), "whmcs", ctReq("refused-1"))
	if err != nil {
		t.Fatalf("the create was not accepted: %v", err)
	}
	st.Exec.Kick()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	got, err := executor.WaitTerminal(ctx, db, st.Exec.Broker(), op.ID, 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != models.OpFailed || deref(got.ErrorCode) != string(i18n.CodeProxmoxTaskFailed) ||
		deref(got.ErrorPermanence) != string(i18n.Permanent) {
		t.Fatalf("operation %s, code %q, permanence %q, detail %q; want failed proxmox_task_failed permanent",
			got.State, deref(got.ErrorCode), deref(got.ErrorPermanence), deref(got.ErrorDetail))
	}
	if !strings.Contains(deref(got.ErrorReason), "agent refused") {
		t.Errorf("the reason does not say the agent refused: %q", deref(got.ErrorReason))
	}
	if n := ag.refused.Load(); n != 1 {
		t.Errorf("the agent was asked the refused call %d times, want 1", n)
	}
	for _, r := range sim.Requests() {
		if r.Method == http.MethodPost && strings.HasSuffix(r.Path, "/lxc") {
			t.Errorf("a refused create reached Proxmox: %s %s", r.Method, r.Path)
		}
	}
}
