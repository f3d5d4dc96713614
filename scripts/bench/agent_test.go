package bench

import (
	"context"
	"crypto/ed25519"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"pvebill/modules/agent"
	"pvebill/modules/agent/agenttest"
	"pvebill/modules/pve"
	"pvebill/modules/pve/pvesim/simtest"
)

// agentEnv is one simulator reached two ways: directly, and through a real agent over a
// loopback WebSocket tunnel (R57).
type agentEnv struct {
	sim     *simtest.Server
	hub     *agent.Hub
	direct  *pve.Client
	through *pve.Client
}

func newAgentEnv(t *testing.T) *agentEnv {
	t.Helper()
	sim := simtest.Start(t, nil)
	keyFile, _, pub := agenttest.Key(t)
	hub := agent.NewHub(agent.HubOptions{Keys: map[string]ed25519.PublicKey{"c1": pub}})
	mux := http.NewServeMux()
	mux.Handle("GET "+agent.ConnectPath, hub)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { hub.Shutdown(context.Background()) })
	agenttest.Start(t, agenttest.Config(srv.URL, "c1", keyFile, sim.URL), agent.Options{})
	deadline := time.Now().Add(5 * time.Second)
	for len(hub.Agents("c1")) == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	direct, err := pve.New(pve.Config{Cluster: "c1", URL: sim.URL, TokenID: simtest.TokenID, TokenSecret: simtest.TokenSecret,
		ConsoleUser: simtest.ConsoleUser, ConsolePassword: simtest.ConsolePassword}, nil)
	if err != nil {
		t.Fatal(err)
	}
	through, err := pve.New(pve.Config{Cluster: "c1", Tunnel: hub.Transport("c1")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &agentEnv{sim: sim, hub: hub, direct: direct, through: through}
}

// callTimes times n sequential reads.
func callTimes(t *testing.T, c *pve.Client, n int) []time.Duration {
	t.Helper()
	out := make([]time.Duration, 0, n)
	for range n {
		start := time.Now()
		if _, err := c.Cluster().NextID(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		out = append(out, time.Since(start))
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// agentTunnel: the latency a Proxmox call gains through the agent (p50 ≤ 0.5 ms, p99 ≤ 2 ms on
// loopback), the console's stream through it against direct (≥ 0.9×), and the heap an open
// stream costs.
func agentTunnel(t *testing.T, rep *Report) {
	e := newAgentEnv(t)
	n := scale(6000, 600)
	callTimes(t, e.direct, n/10)
	callTimes(t, e.through, n/10)
	var d, a []time.Duration
	for range 3 {
		d = append(d, callTimes(t, e.direct, n/3)...)
		a = append(a, callTimes(t, e.through, n/3)...)
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	sort.Slice(a, func(i, j int) bool { return a[i] < a[j] })
	ms := func(x time.Duration) float64 { return float64(x.Microseconds()) / 1000 }
	p := func(ds []time.Duration, q int) time.Duration { return ds[len(ds)*q/100] }
	rep.info("13 agent", "call p50 direct", ms(p(d, 50)), "ms", "")
	rep.info("13 agent", "call p50 through the agent", ms(p(a, 50)), "ms", "")
	rep.target("13 agent", "call p50 added by the agent", ms(p(a, 50)-p(d, 50)), "ms", "<=", 0.5, false, "")
	rep.target("13 agent", "call p99 added by the agent", ms(p(a, 99)-p(d, 99)), "ms", "<=", 2, false, "")
	direct, through := consoleRate(t, e.direct), consoleRate(t, e.through)
	rep.info("13 agent", "console stream direct", direct, "msg/s", "terminal echo round trips")
	rep.target("13 agent", "console stream through the agent / direct", through/direct, "x", ">=", 0.9, false, "")
	rep.info("13 agent", "heap per open stream", streamHeap(t, e), "bytes", "both ends in one process")
}

// consoleRate opens a container's terminal and counts echo round trips per second.
func consoleRate(t *testing.T, c *pve.Client) float64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := c.Termproxy(ctx, "pve1", 200)
	if err != nil {
		t.Fatal(err)
	}
	ws, err := c.DialConsole(ctx, "pve1", "lxc", 200, p)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ws.CloseNow() }()
	if err := ws.Write(ctx, websocket.MessageBinary, []byte(p.User+":"+p.Ticket+"\n")); err != nil {
		t.Fatal(err)
	}
	readFor(ctx, t, ws, "OK")
	const rounds = 300
	start := time.Now()
	for range rounds {
		if err := ws.Write(ctx, websocket.MessageBinary, []byte("0:7:echo x\n")); err != nil {
			t.Fatal(err)
		}
		readFor(ctx, t, ws, "x\r\n")
	}
	return rounds / time.Since(start).Seconds()
}

func readFor(ctx context.Context, t *testing.T, ws *websocket.Conn, want string) {
	t.Helper()
	var got []byte
	for !strings.Contains(string(got), want) {
		_, b, err := ws.Read(ctx)
		if err != nil {
			t.Fatalf("console after %q: %v", got, err)
		}
		got = append(got, b...)
	}
}

// streamHeap holds 200 streams open (answers not yet read) and returns the heap each costs.
func streamHeap(t *testing.T, e *agentEnv) float64 {
	t.Helper()
	const streams = 200
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var wg sync.WaitGroup
	release := make(chan struct{})
	opened := make(chan struct{}, streams)
	tr := e.hub.Transport("c1")
	for range streams {
		wg.Go(func() {
			req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet,
				"https://proxmox.agent.invalid"+pve.APIBasePath+"/nodes", nil)
			resp, err := tr.RoundTrip(req)
			opened <- struct{}{}
			if err == nil {
				<-release
				_ = resp.Body.Close()
			}
		})
	}
	for range streams {
		<-opened
	}
	runtime.ReadMemStats(&after)
	close(release)
	wg.Wait()
	return float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / streams
}
