package agent_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"pvebill/modules/agent"
	"pvebill/modules/agent/agenttest"
	"pvebill/modules/pve"
	"pvebill/modules/stack/stacktest/poll"
)

// R57: two agents of one cluster (one key) both hold a tunnel and pvebill spreads calls over
// them; killing one loses only its calls in flight (a read is repeated by the client, nothing
// is refused), and every later call goes through the other.
func TestTwoAgentsOneKilled(t *testing.T) {
	s := newStand(t, agent.HubOptions{})
	a1 := s.startAgent(t, agent.Options{})
	a2 := agenttest.Start(t, agenttest.Config(s.srv.URL, "c1", s.keyFile, s.sim.URL), agent.Options{})
	s.waitAgents(t, 2, 5*time.Second)
	c := ctx(t)
	for range 40 {
		if _, err := s.client.Nodes(c); err != nil {
			t.Fatal(err)
		}
	}
	if n1, n2 := a1.Agent.Served(), a2.Agent.Served(); n1 < 10 || n2 < 10 {
		t.Fatalf("calls not spread over the two agents: %d and %d", n1, n2)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 400)
	for i := range 400 {
		wg.Go(func() {
			if i == 100 {
				a1.Kill()
			}
			if _, err := s.client.Cluster().NextID(c, nil); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("a read failed with one agent left: %v", err)
	}
	s.waitAgents(t, 1, 20*time.Second)
	for range 20 {
		if _, err := s.client.Nodes(c); err != nil {
			t.Fatal(err)
		}
	}
}

// An agent told to stop (SIGTERM) lets the call in flight finish before it leaves: the tunnel
// drains instead of breaking.
func TestAgentStopDrains(t *testing.T) {
	t.Parallel()
	s := newStand(t, agent.HubOptions{})
	gate, arrived := make(chan struct{}), make(chan struct{}, 1)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == pve.APIBasePath+"/nodes" {
			arrived <- struct{}{}
			<-gate
		}
		s.sim.ServeHTTP(w, r)
	}))
	t.Cleanup(slow.Close)
	cfg := agenttest.Config(s.srv.URL, "c1", s.keyFile, slow.URL)
	a, err := agent.New(cfg, agent.Options{})
	if err != nil {
		t.Fatal(err)
	}
	actx, stop := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); a.Run(actx) }()
	s.waitAgents(t, 1, 5*time.Second)
	result := make(chan error, 1)
	go func() {
		_, err := s.client.Nodes(ctx(t))
		result <- err
	}()
	select {
	case <-arrived: // the call is at Proxmox
	case <-time.After(10 * time.Second):
		t.Fatal("the call never reached Proxmox")
	}
	stop()
	// The agent has acted on the stop once its tunnel takes no new call (it said it is going
	// away); only then may the call in flight end, or the test would not see a drain.
	poll.Until(t, 5*time.Second, "the stopped agent's tunnel taking no new call", func() bool { return s.hub.Accepting("c1") == 0 })
	close(gate)
	if err := <-result; err != nil {
		t.Fatalf("the call in flight at the agent's stop failed: %v", err)
	}
	<-done
	s.waitAgents(t, 0, 5*time.Second)
	if _, err := s.client.Nodes(ctx(t)); !errors.Is(err, pve.ErrTransient) {
		t.Fatalf("after the agent left: %v", err)
	}
}
