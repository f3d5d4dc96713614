package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"pvebill/models"
	"pvebill/models/dbtest"
	"pvebill/modules/agent"
	"pvebill/modules/agent/agenttest"
	"pvebill/modules/pve/pvesim/simtest"
	"pvebill/modules/stack"
	"pvebill/modules/stack/stacktest/poll"
	"pvebill/server/config"
)

// peeringSecret is the replicas' shared peering secret in these tests.
const peeringSecret = "peering-secret-of-the-test-replicas-0123"

// peerReplica is one in-process pvebill replica with peering on, serving on its own listener.
type peerReplica struct {
	app  *app
	base string
	stop func()
}

// startPeerReplicas starts n replicas of one MariaDB database whose cluster "default" is
// reached only through an agent, each advertising its own URL for peering.
func startPeerReplicas(t *testing.T, n int, public string) []*peerReplica {
	t.Helper()
	dsn := dbtest.DSN(t, models.MySQL)
	out := make([]*peerReplica, n)
	for i := range out {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		cfg := config.Defaults()
		cfg.Database = config.Database{Driver: models.MySQL, DSN: dsn}
		cfg.Clients = []config.Client{{ID: "whmcs", Secret: replicaSecret, Scopes: []string{"billing", "admin"}}}
		cfg.Clusters = []config.Cluster{{Name: "default", Agent: &config.ClusterAgent{PublicKey: public}}}
		cfg.Executor.PollInterval = 20 * time.Millisecond
		cfg.Jobs.ReadinessInterval = 200 * time.Millisecond
		cfg.Peering = config.Peering{URL: "http://" + ln.Addr().String(), Secret: peeringSecret}
		schema := stack.RequireSchema
		if i == 0 {
			schema = stack.MigrateSchema
		}
		ctx, cancel := context.WithCancel(context.Background())
		a, err := buildApp(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), schema)
		if err == nil && i == 0 {
			err = a.loadExamplePlans(ctx)
		}
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- a.serve(ctx, ln) }()
		var once sync.Once
		stop := func() {
			once.Do(func() {
				cancel()
				if err := <-done; err != nil {
					t.Error(err)
				}
			})
		}
		t.Cleanup(stop)
		out[i] = &peerReplica{app: a, base: "http://" + ln.Addr().String(), stop: stop}
	}
	return out
}

// forwarded sums the replica's pvebill_agent_forwarded_total series of direction.
func (r *peerReplica) forwarded(direction string) float64 {
	mfs, _ := r.app.reg.Gather()
	sum := 0.0
	for _, mf := range mfs {
		if mf.GetName() != "pvebill_agent_forwarded_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "direction" && l.GetValue() == direction {
					sum += m.GetCounter().GetValue()
				}
			}
		}
	}
	return sum
}

// tunnels is how many agent tunnels the replica holds.
func (r *peerReplica) tunnels() int { return len(r.app.agents.Agents("default")) }

// roundRobin is a TCP load balancer: each connection goes to the next backend that accepts it.
type roundRobin struct {
	ln       net.Listener
	backends []string
	next     atomic.Uint64
}

func startRoundRobin(t *testing.T, backends []string) *roundRobin {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lb := &roundRobin{ln: ln, backends: backends}
	t.Cleanup(func() { _ = ln.Close() })
	go lb.accept()
	return lb
}

func (lb *roundRobin) accept() {
	for {
		c, err := lb.ln.Accept()
		if err != nil {
			return
		}
		go lb.serve(c)
	}
}

func (lb *roundRobin) serve(c net.Conn) {
	for range lb.backends {
		addr := lb.backends[lb.next.Add(1)%uint64(len(lb.backends))]
		b, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			continue
		}
		go func() { _, _ = io.Copy(b, c); _ = b.Close() }()
		_, _ = io.Copy(c, b)
		_ = c.Close()
		return
	}
	_ = c.Close()
}

// R57: replicas share an agent's tunnels. An agent connected to one replica serves the other
// through one forwarded hop (each create sent once); an agent behind a load balancer keeps a
// tunnel to each of two replicas, learned from the welcome; when a replica stops, its tunnel
// moves to the other and the work goes on there.
func TestAgentAcrossReplicas(t *testing.T) {
	if len(dbtest.Dialects(t)) < 2 {
		t.Skip("several replicas need MariaDB (PVEBILL_TEST_MYSQL_DSN)")
	}
	sim := simtest.Start(t, nil)
	keyFile, public, _ := agenttest.Key(t)
	rs := startPeerReplicas(t, 2, public)
	fast := agent.Options{BackoffBase: 50 * time.Millisecond, BackoffMax: 200 * time.Millisecond}

	// One tunnel, to the first replica: the second forwards.
	cfg := agenttest.Config(rs[0].base, "default", keyFile, sim.URL)
	cfg.Tunnels = 1
	one := agenttest.Start(t, cfg, fast)
	poll.Until(t, 10*time.Second, "the agent on the first replica", func() bool { return rs[0].tunnels() == 1 })
	body := `{"service_id":"%s","plan":"ct-2g","hostname":"%s.example.com","os":"debian-12","root_password":"agent-pass-1234"}`
	createOn(t, rs[1].base, body, "peer-1")
	// The first replica counts a forwarded call when it arrives and the second once its answer
	// has come back: while a call of the second replica's own background work is on its way,
	// the first has counted one more. The counts agree between such calls.
	poll.Until(t, 5*time.Second, "as many forwarded calls served by the first replica as sent by the second", func() bool {
		return rs[0].forwarded("served") == rs[1].forwarded("sent")
	})
	if rs[1].tunnels() != 0 || rs[1].forwarded("sent") == 0 {
		t.Fatalf("second replica: %d tunnels, %v calls forwarded; first served %v", rs[1].tunnels(),
			rs[1].forwarded("sent"), rs[0].forwarded("served"))
	}
	one.Kill()
	poll.Until(t, 5*time.Second, "the killed agent's tunnel gone", func() bool { return rs[0].tunnels() == 0 })

	// Behind a load balancer, the default two tunnels land on both replicas. A replica lists a
	// tunnel once it has sent the welcome, the agent records it once it has read it.
	lb := startRoundRobin(t, []string{strings.TrimPrefix(rs[0].base, "http://"), strings.TrimPrefix(rs[1].base, "http://")})
	two := agenttest.Start(t, agenttest.Config("http://"+lb.ln.Addr().String(), "default", keyFile, sim.URL), fast)
	poll.Until(t, 20*time.Second, "a tunnel on each replica, both recorded by the agent", func() bool {
		return rs[0].tunnels() == 1 && rs[1].tunnels() == 1 && len(two.Agent.Tunnels()) == 2
	})
	held := two.Agent.Tunnels()
	if len(held) != 2 || held[0] == held[1] {
		t.Fatalf("the agent's tunnels: %v, want two distinct replicas", held)
	}
	sentBefore := rs[1].forwarded("sent")
	createOn(t, rs[1].base, body, "peer-2")
	if rs[1].forwarded("sent") != sentBefore {
		t.Fatal("the second replica forwarded although it holds a tunnel")
	}

	// The first replica stops: the agent's tunnels are all on the second (as many as replicas
	// live: its slot that held the first comes back there only if it is the first slot), which
	// goes on working.
	rs[0].stop()
	poll.Until(t, 20*time.Second, "the agent on the second replica only", func() bool {
		replicas := map[string]bool{}
		for _, r := range two.Agent.Tunnels() {
			replicas[r] = true
		}
		return len(replicas) == 1 && rs[1].tunnels() >= 1 && rs[1].tunnels() == len(two.Agent.Tunnels())
	})
	createOn(t, rs[1].base, body, "peer-3")
	if n := simCalls(sim.Sim, "POST", func(p string) bool { return strings.HasPrefix(p, "/nodes/") && strings.HasSuffix(p, "/lxc") }); n != 3 {
		t.Fatalf("R57: %d creates reached Proxmox, want 3", n)
	}
}

// createOn creates service id through base and fails the test unless it succeeded.
func createOn(t *testing.T, base, body, id string) {
	t.Helper()
	status, m := signedCall(t, base, "POST", "/v1/services?wait=60", []byte(strings.ReplaceAll(body, "%s", id)))
	if status != 200 || opState(m) != "succeeded" {
		t.Fatalf("create %s: %d %v", id, status, m)
	}
}
