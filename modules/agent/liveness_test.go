package agent_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"pvebill/modules/agent"
	"pvebill/modules/agent/agenttest"
	"pvebill/modules/stack/stacktest/poll"
)

// throughProxy dials the proxy instead of pvebill.
func throughProxy(p *agenttest.Proxy) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, p.Addr())
	}
}

// R57: a tunnel cut without a FIN (the proxy between them stops forwarding and keeps both
// connections open) is noticed by both ends within 15 s (a ping after 5 s idle, dead 10 s
// later), and the agent then connects again.
func TestHalfOpenTunnelNoticed(t *testing.T) {
	t.Parallel()
	s := newStand(t, agent.HubOptions{})
	p := agenttest.StartProxy(t, strings.TrimPrefix(s.srv.URL, "http://"), 0)
	r := s.startAgent(t, agent.Options{DialContext: throughProxy(p), BackoffBase: 100 * time.Millisecond,
		BackoffMax: 200 * time.Millisecond})
	up := r.Agent.Connected()
	p.Stall()
	cut := time.Now()
	var hubSaw, agentSaw time.Duration
	for (hubSaw == 0 || agentSaw == 0) && time.Since(cut) < 30*time.Second {
		if hubSaw == 0 && !containsSince(s.hub.Agents("c1"), up) {
			hubSaw = time.Since(cut)
		}
		if agentSaw == 0 && !r.Agent.Connected().Equal(up) {
			agentSaw = time.Since(cut)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("half-open tunnel noticed by pvebill after %s, by the agent after %s", hubSaw, agentSaw)
	if hubSaw == 0 || hubSaw > 16*time.Second || agentSaw == 0 || agentSaw > 16*time.Second {
		t.Fatalf("noticed after %s (pvebill) and %s (agent), want 15 s (5 s idle + 10 s for the ping), with a second for scheduling", hubSaw, agentSaw)
	}
	s.waitAgents(t, 1, 10*time.Second)
	if _, err := s.client.Nodes(ctx(t)); err != nil {
		t.Fatalf("after reconnecting: %v", err)
	}
}

// containsSince reports whether a tunnel connected at the agent's up time is still listed (the
// hub's connected_at is taken just after the agent's).
func containsSince(list []agent.Info, up time.Time) bool {
	for _, a := range list {
		if d := a.ConnectedAt.Sub(up); d > -time.Second && d < time.Second {
			return true
		}
	}
	return false
}

// R57: behind a proxy that closes a connection after 30 s without a byte, an idle tunnel stays
// up: the pings inside it are bytes to the proxy. The harness is proved by a proxy whose idle
// time is shorter than the ping interval, which does drop the tunnel.
func TestIdleTunnelBehindProxyStaysUp(t *testing.T) {
	if testing.Short() {
		t.Skip("45 s of idle time")
	}
	t.Parallel()
	s := newStand(t, agent.HubOptions{})
	p := agenttest.StartProxy(t, strings.TrimPrefix(s.srv.URL, "http://"), 30*time.Second)
	r := s.startAgent(t, agent.Options{DialContext: throughProxy(p)})
	// The hub lists the agent as soon as the handshake is verified; the agent records its own
	// connection time a moment later.
	poll.Wait(5*time.Second, func() bool { return !r.Agent.Connected().IsZero() })
	up := r.Agent.Connected()
	if up.IsZero() {
		t.Fatal("the agent never recorded its connection")
	}
	time.Sleep(45 * time.Second)
	if p.IdleClosed() != 0 || !r.Agent.Connected().Equal(up) || !containsSince(s.hub.Agents("c1"), up) {
		t.Fatalf("idle tunnel dropped: proxy closed %d, agent up since %v (was %v)", p.IdleClosed(), r.Agent.Connected(), up)
	}
	if _, err := s.client.Nodes(ctx(t)); err != nil {
		t.Fatal(err)
	}

	s2 := newStand(t, agent.HubOptions{})
	p2 := agenttest.StartProxy(t, strings.TrimPrefix(s2.srv.URL, "http://"), 2*time.Second)
	s2.startAgent(t, agent.Options{DialContext: throughProxy(p2), BackoffBase: time.Hour, BackoffMax: time.Hour})
	poll.Wait(10*time.Second, func() bool { return p2.IdleClosed() > 0 })
	if p2.IdleClosed() == 0 {
		t.Fatal("the proxy's idle timer never fired: the harness proves nothing")
	}
}

// R57: a tunnel that has read nothing for longer than a ping's round (cut without a FIN, not
// yet declared dead) takes no new call while another tunnel of the cluster is healthy: calls
// made in that window go to the live agent instead of waiting for the cut one to be noticed.
func TestSilentTunnelAvoided(t *testing.T) {
	t.Parallel()
	live := agent.Liveness{SendPing: time.Second, PingTimeout: 6 * time.Second} // silent after 1.6 s, dead after 7 s
	s := newStand(t, agent.HubOptions{Liveness: live})
	p := agenttest.StartProxy(t, strings.TrimPrefix(s.srv.URL, "http://"), 0)
	s.startAgent(t, agent.Options{DialContext: throughProxy(p), Liveness: live})
	agenttest.Start(t, agenttest.Config(s.srv.URL, "c1", s.keyFile, s.sim.URL), agent.Options{Liveness: live})
	s.waitAgents(t, 2, 5*time.Second)
	p.Stall()
	cut := time.Now()
	time.Sleep(2500 * time.Millisecond)
	for i := range 10 {
		if _, err := s.client.Nodes(ctx(t)); err != nil {
			t.Fatalf("call %d after the cut: %v", i, err)
		}
	}
	if took := time.Since(cut); took > 5*time.Second {
		t.Fatalf("10 calls made 2.5 s after the cut ended %s after it: some waited for the cut tunnel to be declared dead", took)
	}
}
