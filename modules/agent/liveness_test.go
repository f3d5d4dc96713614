package agent_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
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
	poll.Wait(30*time.Second, func() bool {
		if hubSaw == 0 && !containsSince(s.hub.Agents("c1"), up) {
			hubSaw = time.Since(cut)
		}
		if agentSaw == 0 && !r.Agent.Connected().Equal(up) {
			agentSaw = time.Since(cut)
		}
		return hubSaw != 0 && agentSaw != 0
	})
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

// pingCounter counts the ping rounds an agent reads on an idle tunnel: reads that come after at
// least half a ping interval without one. Nothing but pings crosses an idle tunnel and neither
// end pings before SendPing without a frame, so each counted read is a ping or its answer, and
// two counted reads are at least half a ping interval apart: n of them span at least
// (n-1)·SendPing/2.
type pingCounter struct {
	quiet time.Duration
	last  atomic.Int64 // when the agent last read, in Unix nanoseconds
	n     atomic.Int64
}

// dial is throughProxy with the agent's reads counted.
func (pc *pingCounter) dial(p *agenttest.Proxy) func(ctx context.Context, network, addr string) (net.Conn, error) {
	through := throughProxy(p)
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := through(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &countingConn{Conn: c, pc: pc}, nil
	}
}

type countingConn struct {
	net.Conn
	pc *pingCounter
}

func (c *countingConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		now := time.Now().UnixNano()
		if prev := c.pc.last.Swap(now); time.Duration(now-prev) >= c.pc.quiet {
			c.pc.n.Add(1)
		}
	}
	return n, err
}

// R57: behind a proxy that closes a connection after 30 s without a byte, an idle tunnel stays
// up: the pings inside it are bytes to the proxy. The default ping interval is inside that idle
// time; the test runs the default ping interval and the proxy's idle time fifty times faster
// (a ping after 100 ms without a frame, a proxy closing after 600 ms) and waits for as many
// pings as span two of the proxy's idle times. The harness is proved by a proxy whose idle time
// is shorter than the ping interval, which does drop the tunnel.
func TestIdleTunnelBehindProxyStaysUp(t *testing.T) {
	t.Parallel()
	const proxyIdle, scale = 30 * time.Second, 50
	if agent.DefaultLiveness.SendPing >= proxyIdle {
		t.Fatalf("the default ping interval %s is not shorter than a proxy's idle time of %s: an idle tunnel would be dropped",
			agent.DefaultLiveness.SendPing, proxyIdle)
	}
	// Only the ping interval is scaled: a generous time-out for the answer keeps a slow machine
	// from declaring the healthy tunnel dead, and plays no part here.
	live := agent.Liveness{SendPing: agent.DefaultLiveness.SendPing / scale, PingTimeout: 5 * time.Second}
	idle := proxyIdle / scale
	s := newStand(t, agent.HubOptions{Liveness: live})
	p := agenttest.StartProxy(t, strings.TrimPrefix(s.srv.URL, "http://"), idle)
	pings := &pingCounter{quiet: live.SendPing / 2}
	r := s.startAgent(t, agent.Options{DialContext: pings.dial(p), Liveness: live})
	// The hub lists the agent as soon as the handshake is verified; the agent records its own
	// connection time a moment later.
	poll.Until(t, 5*time.Second, "the agent's connection time", func() bool { return !r.Agent.Connected().IsZero() })
	up := r.Agent.Connected()
	// Counted pings n apart span at least (n-1)·SendPing/2: want two idle times.
	from, want := pings.n.Load(), int64(4*idle/live.SendPing)+1
	poll.Until(t, 30*time.Second, fmt.Sprintf("%d pings", want), func() bool { return pings.n.Load()-from >= want })
	if since := time.Since(up); since < 2*idle {
		t.Fatalf("%d pings counted within %s, less than two proxy idle times (%s): the count does not measure pings", want, since, 2*idle)
	}
	if p.IdleClosed() != 0 || !r.Agent.Connected().Equal(up) || !containsSince(s.hub.Agents("c1"), up) {
		t.Fatalf("idle tunnel dropped: proxy closed %d, agent up since %v (was %v)", p.IdleClosed(), r.Agent.Connected(), up)
	}
	if _, err := s.client.Nodes(ctx(t)); err != nil {
		t.Fatal(err)
	}

	live2 := agent.Liveness{SendPing: 500 * time.Millisecond, PingTimeout: 5 * time.Second}
	s2 := newStand(t, agent.HubOptions{Liveness: live2})
	p2 := agenttest.StartProxy(t, strings.TrimPrefix(s2.srv.URL, "http://"), live2.SendPing/2)
	s2.startAgent(t, agent.Options{DialContext: throughProxy(p2), Liveness: live2, BackoffBase: time.Hour, BackoffMax: time.Hour})
	if !poll.Wait(10*time.Second, func() bool { return p2.IdleClosed() > 0 }) {
		t.Fatal("the proxy's idle timer never fired: the harness proves nothing")
	}
}

// R57: a tunnel that has read nothing for longer than a ping's round (cut without a FIN, not
// yet declared dead) takes no new call while another tunnel of the cluster is healthy: calls
// made in that window go to the live agent instead of waiting for the cut one to be noticed.
func TestSilentTunnelAvoided(t *testing.T) {
	t.Parallel()
	live := agent.Liveness{SendPing: 200 * time.Millisecond, PingTimeout: 5 * time.Second} // silent after 0.7 s, dead after 5 s
	s := newStand(t, agent.HubOptions{Liveness: live})
	p := agenttest.StartProxy(t, strings.TrimPrefix(s.srv.URL, "http://"), 0)
	s.startAgent(t, agent.Options{DialContext: throughProxy(p), Liveness: live})
	agenttest.Start(t, agenttest.Config(s.srv.URL, "c1", s.keyFile, s.sim.URL), agent.Options{Liveness: live})
	s.waitAgents(t, 2, 5*time.Second)
	p.Stall()
	cut := time.Now()
	poll.Until(t, 5*time.Second, "the cut tunnel silent", func() bool { return s.hub.SilentTunnels("c1") == 1 })
	for i := range 10 {
		if _, err := s.client.Nodes(ctx(t)); err != nil {
			t.Fatalf("call %d after the cut: %v", i, err)
		}
	}
	// A call sent into the cut tunnel ends only when its ping times out, a ping interval at most
	// before PingTimeout after the cut.
	if took := time.Since(cut); took > live.PingTimeout-live.SendPing {
		t.Fatalf("10 calls made once the cut tunnel fell silent ended %s after the cut: some waited for it to be declared dead", took)
	}
	if n := len(s.hub.Agents("c1")); n != 2 {
		t.Fatalf("%d tunnels listed after the calls, want 2: the cut one was declared dead before them, so they proved nothing", n)
	}
}
