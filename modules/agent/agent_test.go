package agent_test

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"pvebill/modules/agent"
	"pvebill/modules/agent/agenttest"
	"pvebill/modules/pve"
	"pvebill/modules/pve/pvesim/simtest"
	"pvebill/modules/stack/stacktest/poll"
)

// stand is pvebill's agent endpoint on loopback TCP, the simulator, and a client of the cluster
// "c1" whose calls go through the hub.
type stand struct {
	hub     *agent.Hub
	metrics *agent.Metrics
	reg     *prometheus.Registry
	srv     *httptest.Server
	sim     *simtest.Server
	client  *pve.Client
	keyFile string
	pub     ed25519.PublicKey
}

func newStand(t *testing.T, o agent.HubOptions) *stand {
	t.Helper()
	keyFile, _, pub := agenttest.Key(t)
	reg := prometheus.NewRegistry()
	m := agent.NewMetrics(reg)
	if o.Keys == nil {
		o.Keys = map[string]ed25519.PublicKey{"c1": pub}
	}
	o.Metrics = m
	hub := agent.NewHub(o)
	mux := http.NewServeMux()
	mux.Handle("GET "+agent.ConnectPath, hub)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { hub.Shutdown(context.Background()) })
	client, err := pve.New(pve.Config{Cluster: "c1", Tunnel: hub.Transport("c1")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &stand{hub: hub, metrics: m, reg: reg, srv: srv, sim: simtest.Start(t, nil), client: client, keyFile: keyFile, pub: pub}
}

func (s *stand) startAgent(t *testing.T, o agent.Options) *agenttest.Running {
	t.Helper()
	r := agenttest.Start(t, agenttest.Config(s.srv.URL, "c1", s.keyFile, s.sim.URL), o)
	s.waitAgents(t, 1, 5*time.Second)
	return r
}

func (s *stand) waitAgents(t *testing.T, n int, within time.Duration) {
	t.Helper()
	poll.Until(t, within, fmt.Sprintf("%d agents connected", n), func() bool { return len(s.hub.Agents("c1")) == n })
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// R57: pvebill's client holds no Proxmox credential; through the tunnel its calls reach the
// simulator with the agent's token (the simulator refuses any other), a task is started and
// waited for, and the call is counted.
func TestCallsThroughTunnel(t *testing.T) {
	s := newStand(t, agent.HubOptions{})
	s.startAgent(t, agent.Options{})
	nodes, err := s.client.Nodes(ctx(t))
	if err != nil || len(nodes) == 0 {
		t.Fatalf("nodes %v, %v", nodes, err)
	}
	_, err = s.client.Node("pve1").LXC(5001).Start(ctx(t))
	if err != nil && !errors.Is(err, pve.ErrNotFound) {
		t.Fatalf("start through the tunnel: %v", err)
	}
	reqs := s.sim.Requests()
	if len(reqs) < 2 || reqs[0].Path != "/nodes" {
		t.Fatalf("simulator saw %+v", reqs)
	}
	if got := testutil.ToFloat64(counterVec(s, "pvebill_agent_calls_total", "answered")); got < 2 {
		t.Fatalf("calls answered %v", got)
	}
}

// counterVec sums a metric's series that carry label value v.
func counterVec(s *stand, name, v string) prometheus.Collector {
	return collectorFunc(func() float64 {
		mfs, _ := s.reg.Gather()
		sum := 0.0
		for _, mf := range mfs {
			if mf.GetName() != name {
				continue
			}
			for _, m := range mf.GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetValue() == v {
						sum += m.GetCounter().GetValue() + m.GetGauge().GetValue()
					}
				}
			}
		}
		return sum
	})
}

type collectorFunc func() float64

func (f collectorFunc) Describe(ch chan<- *prometheus.Desc) {
	ch <- prometheus.NewDesc("x", "x", nil, nil)
}

func (f collectorFunc) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(prometheus.NewDesc("x", "x", nil, nil), prometheus.GaugeValue, f())
}

// R57: with no agent connected a call fails at once as a temporary failure, and nothing
// reaches Proxmox.
func TestNoAgentIsTemporary(t *testing.T) {
	s := newStand(t, agent.HubOptions{})
	_, err := s.client.Nodes(ctx(t))
	if !errors.Is(err, pve.ErrTransient) || errors.Is(err, pve.ErrMaybeApplied) {
		t.Fatalf("no agent: %v", err)
	}
	if !strings.Contains(err.Error(), "no agent") {
		t.Fatalf("no agent: %v", err)
	}
	if n := len(s.sim.Requests()); n != 0 {
		t.Fatalf("%d requests reached the simulator", n)
	}
}

// R57: an operation's call waits for the agent, but not forever: after MaxWait it fails as a
// temporary failure with nothing sent, so a cluster whose agent stays away holds no worker.
func TestWaitForAgentIsBounded(t *testing.T) {
	t.Parallel()
	s := newStand(t, agent.HubOptions{MaxWait: 300 * time.Millisecond})
	start := time.Now()
	_, err := s.client.Nodes(pve.WaitForTunnel(ctx(t)))
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 3*time.Second {
		t.Fatalf("after %s: %v", time.Since(start), err)
	}
	if n := len(s.sim.Requests()); n != 0 {
		t.Fatalf("%d calls reached the simulator", n)
	}
	done := make(chan error, 1)
	s2 := newStand(t, agent.HubOptions{})
	go func() {
		_, err := s2.client.Nodes(pve.WaitForTunnel(ctx(t)))
		done <- err
	}()
	poll.Until(t, 5*time.Second, "the call waiting for an agent", func() bool { return s2.hub.Waiting("c1") == 1 })
	s2.startAgent(t, agent.Options{})
	if err := <-done; err != nil {
		t.Fatalf("a call waiting for the agent: %v", err)
	}
}
