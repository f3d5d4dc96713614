package agent_test

import (
	"context"
	"crypto/ed25519"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"pvebill/models"
	"pvebill/models/dbtest"
	"pvebill/modules/agent"
	"pvebill/modules/agent/agenttest"
	"pvebill/modules/pve"
	"pvebill/modules/pve/pvesim"
	"pvebill/modules/pve/pvesim/simtest"
	"pvebill/modules/stack/stacktest/poll"
)

const peerSecret = "peering-test-secret-0123456789abcdef"

// replica is one pvebill replica's agent side: its hub, its endpoint on loopback TCP and its
// client of cluster "c1".
type replica struct {
	name   string
	hub    *agent.Hub
	srv    *httptest.Server
	reg    *prometheus.Registry
	client *pve.Client
	stop   context.CancelFunc
	done   chan struct{}
}

// startReplica starts a replica with peering over db's route table, refreshed every 50 ms.
func startReplica(t *testing.T, db *models.DB, name string, pub ed25519.PublicKey) *replica {
	t.Helper()
	r := &replica{name: name, reg: prometheus.NewRegistry(), done: make(chan struct{})}
	mux := http.NewServeMux()
	r.srv = httptest.NewUnstartedServer(mux)
	url := "http://" + r.srv.Listener.Addr().String()
	r.hub = agent.NewHub(agent.HubOptions{Keys: map[string]ed25519.PublicKey{"c1": pub}, Metrics: agent.NewMetrics(r.reg),
		Replica: name, Peering: &agent.Peering{URL: url, Secret: []byte(peerSecret), Refresh: 50 * time.Millisecond,
			Routes: models.AgentRouteTable{DB: db, Fresh: 200 * time.Millisecond}},
		LiveReplicas: func(context.Context) (int, error) { return 2, nil }})
	mux.Handle("GET "+agent.ConnectPath, r.hub)
	mux.HandleFunc(agent.ForwardPath+"/", r.hub.ServeForward)
	r.srv.Start()
	ctx, cancel := context.WithCancel(context.Background())
	r.stop = func() {
		cancel()
		<-r.done
		r.srv.CloseClientConnections()
		r.srv.Close()
	}
	go func() {
		defer close(r.done)
		r.hub.Run(ctx)
	}()
	t.Cleanup(func() {
		select {
		case <-r.done:
		default:
			r.stop()
		}
	})
	client, err := pve.New(pve.Config{Cluster: "c1", Tunnel: r.hub.Transport("c1")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.client = client
	return r
}

func (r *replica) metric(name, label string) float64 {
	mfs, _ := r.reg.Gather()
	sum := 0.0
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetValue() == label {
					sum += m.GetCounter().GetValue()
				}
			}
		}
	}
	return sum
}

// peerStand is two replicas on one database, the simulator, and an agent connected to the
// first replica only.
type peerStand struct {
	a, b  *replica
	sim   *simtest.Server
	agent *agenttest.Running
	key   string
}

func newPeerStand(t *testing.T, db *models.DB) *peerStand {
	t.Helper()
	keyFile, _, pub := agenttest.Key(t)
	s := &peerStand{a: startReplica(t, db, "replica-a", pub), b: startReplica(t, db, "replica-b", pub),
		sim: simtest.Start(t, nil), key: keyFile}
	cfg := agenttest.Config(s.a.srv.URL, "c1", keyFile, s.sim.URL)
	cfg.Tunnels = 1
	s.agent = agenttest.Start(t, cfg, agent.Options{BackoffBase: 20 * time.Millisecond, BackoffMax: 100 * time.Millisecond})
	poll.Until(t, 5*time.Second, "the agent's route on replica-b", func() bool {
		return s.b.hub.Transport("c1").(pve.TunnelWaiter).WaitReady(shortCtx(t, 100*time.Millisecond)) == nil
	})
	return s
}

func shortCtx(t *testing.T, d time.Duration) context.Context {
	c, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return c
}

// R57: a replica without a tunnel reaches the cluster through the replica that has one, one
// hop, each call sent once; the route goes when that replica stops, and the calls are then
// temporarily unavailable, nothing sent.
func TestForwardedToTheReplicaWithTheTunnel(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		s := newPeerStand(t, db)
		if len(s.b.hub.Agents("c1")) != 0 {
			t.Fatal("replica-b holds a tunnel itself")
		}
		nodes, err := s.b.client.Nodes(ctx(t))
		if err != nil || len(nodes) == 0 {
			t.Fatalf("nodes through replica-a: %v, %v", nodes, err)
		}
		_, err = s.b.client.Node("pve1").LXC(5001).Start(ctx(t))
		if err != nil && !errors.Is(err, pve.ErrNotFound) {
			t.Fatalf("a write through replica-a: %v", err)
		}
		if got := starts(s); got != 1 {
			t.Fatalf("the forwarded write reached Proxmox %d times, want 1", got)
		}
		before := len(s.sim.Requests())
		sent, served := s.b.metric("pvebill_agent_forwarded_total", "sent"), s.a.metric("pvebill_agent_forwarded_total", "served")
		if sent != float64(before) || served != float64(before) {
			t.Fatalf("forwarded: %v sent by replica-b, %v served by replica-a; want %d each", sent, served, before)
		}
		s.a.stop()
		s.agent.Kill()
		poll.Until(t, 2*time.Second, "withdrawn route", func() bool {
			_, err := s.b.client.Nodes(shortCtx(t, time.Second))
			return errors.Is(err, pve.ErrTransient)
		})
		if n := len(s.sim.Requests()); n != before {
			t.Fatalf("%d requests reached Proxmox after the route went, want none", n-before)
		}
	})
}

// R57: a forwarded call goes only into the receiving replica's own tunnels: replica-b, which has
// none, answers 503 no_agent although replica-a has one, and nothing reaches Proxmox.
func TestForwardedCallIsNeverForwardedAgain(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		s := newPeerStand(t, db)
		resp := s.forward(t, s.b, "replica-a", time.Now(), nil)
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get(agent.HeaderForward) != "no_agent" {
			t.Fatalf("second hop answered %d %q", resp.StatusCode, resp.Header.Get(agent.HeaderForward))
		}
		if n := len(s.sim.Requests()); n != 0 {
			t.Fatalf("%d requests reached Proxmox", n)
		}
	})
}

// answer is a forwarded call's status and headers, and the headers it was sent with.
type answer struct {
	StatusCode int
	Header     http.Header
	sent       http.Header
}

// forward sends GET /nodes to r's forward endpoint, signed as from at when (unsigned without
// from), or with the headers of reuse.
func (s *peerStand) forward(t *testing.T, r *replica, from string, when time.Time, reuse http.Header) answer {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, r.srv.URL+agent.ForwardPath+"/c1"+pve.APIBasePath+"/nodes", nil)
	if reuse != nil {
		req.Header = reuse.Clone()
	} else if from != "" {
		if err := agent.SignForward(req, []byte(peerSecret), from, nil, when); err != nil {
			t.Fatal(err)
		}
	}
	return sendPeer(t, req)
}

func sendPeer(t *testing.T, req *http.Request) answer {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	return answer{StatusCode: resp.StatusCode, Header: resp.Header, sent: req.Header}
}

// R57: the internal endpoint takes only calls signed with the replicas' secret, fresh and
// never seen: an unsigned, a wrongly signed, a stale and a replayed call are refused, counted,
// and reach no agent.
func TestForwardRefusals(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		s := newPeerStand(t, db)
		ok := s.forward(t, s.a, "replica-b", time.Now(), nil)
		if ok.StatusCode != http.StatusOK {
			t.Fatalf("a signed call answered %d", ok.StatusCode)
		}
		wrong, _ := http.NewRequest(http.MethodGet, s.a.srv.URL+agent.ForwardPath+"/c1"+pve.APIBasePath+"/nodes", nil)
		if err := agent.SignForward(wrong, []byte("another-secret-0123456789abcdefghij"), "replica-b", nil, time.Now()); err != nil {
			t.Fatal(err)
		}
		cases := map[string]answer{
			agent.PeerUnauthenticated: s.forward(t, s.a, "", time.Now(), nil),
			agent.PeerStale:           s.forward(t, s.a, "replica-b", time.Now().Add(-time.Minute), nil),
			agent.PeerReplayed:        s.forward(t, s.a, "", time.Time{}, ok.sent),
		}
		if resp := sendPeer(t, wrong); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("wrong secret: answered %d", resp.StatusCode)
		}
		for reason, resp := range cases {
			if resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("%s: answered %d", reason, resp.StatusCode)
			}
			if n := s.a.metric("pvebill_agent_forward_refusals_total", reason); n < 1 {
				t.Errorf("%s not counted", reason)
			}
		}
		if n := len(s.sim.Requests()); n != 1 {
			t.Fatalf("%d requests reached Proxmox, want only the signed one", n)
		}
		if n := s.a.metric("pvebill_agent_forward_refusals_total", agent.PeerUnauthenticated); n != 2 {
			t.Fatalf("%v unauthenticated refusals, want 2", n)
		}
	})
}

// R57: a forwarded write whose tunnel breaks while Proxmox works on it has an unknown outcome:
// the sending replica's client says it may have been applied and does not send it again.
func TestForwardedWriteBrokenMidCall(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		s := newPeerStand(t, db)
		fault := s.sim.InjectFault(pvesim.Fault{Method: http.MethodPost, PathPattern: "/nodes/{node}/lxc/{vmid}/status/start",
			Delay: time.Second})
		killed := make(chan struct{})
		go func() {
			defer close(killed)
			// The agent dies while Proxmox holds the write (the fault's delay has begun): an open
			// stream alone may not have reached Proxmox yet on a loaded machine.
			poll.Wait(5*time.Second, func() bool { return s.sim.FaultFired(fault) > 0 })
			s.agent.Kill()
		}()
		_, err := s.b.client.Node("pve1").LXC(5001).Start(ctx(t))
		<-killed
		if !errors.Is(err, pve.ErrMaybeApplied) {
			t.Fatalf("the broken forwarded write: %v, want ErrMaybeApplied", err)
		}
		// The agent was the only way to Proxmox and is gone: once every call it sent is in the
		// simulator's log, no other write can come.
		poll.Until(t, 5*time.Second, "every call the agent sent in the simulator's log", func() bool {
			n := len(s.sim.Requests())
			return n > 0 && int64(n) >= s.agent.Agent.Served()
		})
		if n, arrived := starts(s), s.sim.FaultFired(fault); n != 1 || arrived != 1 {
			t.Fatalf("the write reached Proxmox %d times (%d arrived), want 1", n, arrived)
		}
	})
}

// starts counts the container starts the simulator received.
func starts(s *peerStand) int {
	n := 0
	for _, r := range s.sim.Requests() {
		if r.Method == http.MethodPost && strings.HasSuffix(r.Path, "/status/start") {
			n++
		}
	}
	return n
}
