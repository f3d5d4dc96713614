package bench

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"pvebill/models"
	"pvebill/models/dbtest"
	"pvebill/modules/agent"
	"pvebill/modules/agent/agenttest"
	"pvebill/modules/pve"
	"pvebill/modules/pve/pvesim"
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
	rep.info("13 agent", "console stream direct", direct, "msg/s", "terminal input frames typed back to back, answered")
	rep.target("13 agent", "console stream through the agent / direct", through/direct, "x", ">=", 0.9, false, "")
	rep.info("13 agent", "heap per open stream", streamHeap(t, e), "bytes", "both ends in one process")
	agentCreates(t, rep)
	agentSampling(t, rep)
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
	// Frames typed back to back (a paste, a fast typist), the last one marked: the rate at which
	// the terminal's answers come back, pipelined as a stream is.
	const rounds = 2000
	start := time.Now()
	errc := make(chan error, 1)
	go func() {
		for range rounds {
			if err := ws.Write(ctx, websocket.MessageBinary, []byte("0:7:echo x\n")); err != nil {
				errc <- err
				return
			}
		}
		errc <- ws.Write(ctx, websocket.MessageBinary, []byte("0:9:echo end\n"))
	}()
	readFor(ctx, t, ws, "end\r\n")
	if err := <-errc; err != nil {
		t.Fatal(err)
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

// createsTime runs n concurrent creates through pvebill's API against a stack whose Proxmox
// client is c, and returns the time until every operation ended.
func createsTime(t *testing.T, c *pve.Client, n int) time.Duration {
	t.Helper()
	st := newStack(t, openDB(t, dialect(t)), c, 64, slog.New(slog.NewJSONHandler(io.Discard, nil)))
	st.exec.Start(context.Background())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		st.exec.Stop(ctx)
	})
	api := httptest.NewServer(st.srv)
	t.Cleanup(api.Close)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 32}}
	start := time.Now()
	_, _ = load(t, client, n, 32, http.StatusAccepted, func(i int) *http.Request {
		id := fmt.Sprintf("agent-%05d", i)
		req := signedRequest(http.MethodPost, api.URL+"/v1/services", createBody(id))
		req.Header.Set("Idempotency-Key", "create-"+id)
		return req
	})
	deadline := time.Now().Add(scale(4*time.Minute, time.Minute))
	var done, ok int64
	for time.Now().Before(deadline) {
		_ = dbtest.Query(st.db, &done, "SELECT COUNT(*) FROM operations WHERE state IN ?",
			[]string{models.OpSucceeded, models.OpFailed, models.OpNeedsReconciliation})
		if done >= int64(n) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	elapsed := time.Since(start)
	ok = dbtest.Count(t, st.db, "SELECT COUNT(*) FROM operations WHERE state = ?", models.OpSucceeded)
	if ok != int64(n) {
		var codes []struct {
			Code  string
			Count int
		}
		dbtest.Scan(t, st.db, &codes, `SELECT error_code AS code, COUNT(*) AS count FROM operations WHERE state <> ? GROUP BY error_code`,
			models.OpSucceeded)
		t.Errorf("%d of %d creates succeeded; the others: %v", ok, n, codes)
	}
	return elapsed
}

// agentCreates: concurrent creates through the agent against the same creates sent directly,
// each on a fresh busy simulator (Proxmox's service times, 3 workers a node) and database in the
// same run (≤ 1.1×).
func agentCreates(t *testing.T, rep *Report) {
	// 1,000 at once on 20 nodes with memory for all of them: on four nodes placement refused
	// that many in flight (R52), which is not what this compares.
	n, nodes := scale(1000, 40), scale(20, 4)
	task := scale(500*time.Millisecond, 50*time.Millisecond)
	direct := func() time.Duration {
		sim := roomySim(t, nodes, task)
		hs := httptest.NewServer(sim.Busy(pvesim.ServiceModel{Workers: 3, Seed: 2}))
		t.Cleanup(hs.Close)
		c, err := pve.New(pve.Config{Cluster: "default", URL: hs.URL, TokenID: tokenID, TokenSecret: tokenSecret}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return createsTime(t, c, n)
	}()
	through := func() time.Duration {
		sim := roomySim(t, nodes, task)
		hs := httptest.NewServer(sim.Busy(pvesim.ServiceModel{Workers: 3, Seed: 2}))
		t.Cleanup(hs.Close)
		return createsTime(t, agentClient(t, "default", hs.URL), n)
	}()
	rep.info("13 agent", fmt.Sprintf("%d concurrent creates, direct", n), direct.Seconds(), "s", "")
	rep.info("13 agent", fmt.Sprintf("%d concurrent creates, through the agent", n), through.Seconds(), "s", "")
	rep.target("13 agent", "creates through the agent / direct", through.Seconds()/direct.Seconds(), "x", "<=", 1.1, false, "")
}

// agentClient starts pvebill's end of a tunnel and a real agent in front of the Proxmox API at
// url (the bench's token, no console user), and returns cluster's client through it.
func agentClient(t *testing.T, cluster, url string) *pve.Client {
	t.Helper()
	keyFile, _, pub := agenttest.Key(t)
	hub := agent.NewHub(agent.HubOptions{Keys: map[string]ed25519.PublicKey{cluster: pub}})
	mux := http.NewServeMux()
	mux.Handle("GET "+agent.ConnectPath, hub)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { hub.Shutdown(context.Background()) })
	cfg := agenttest.Config(srv.URL, cluster, keyFile, url)
	cfg.Proxmox.TokenID, cfg.Proxmox.TokenSecret = tokenID, tokenSecret
	cfg.Proxmox.ConsoleUser, cfg.Proxmox.ConsolePassword = "", ""
	agenttest.Start(t, cfg, agent.Options{})
	deadline := time.Now().Add(5 * time.Second)
	for len(hub.Agents(cluster)) == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	c, err := pve.New(pve.Config{Cluster: cluster, Tunnel: hub.Transport(cluster)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// agentSampling: a swap-sampling round of the sampler's cluster (10,000 containers on 20 nodes
// at full scale, Proxmox's service times) through the agent against the same round sent
// directly, each on its own simulator and database in the same run (≤ 1.1×).
func agentSampling(t *testing.T, rep *Report) {
	nodes, perNode, rounds := scale(20, 3), scale(500, 20), scale(5, 2)
	model := pvesim.ServiceModel{Workers: 3, Seed: 1}
	if !*full {
		model.Median = func(m, p string, n int) time.Duration { return pvesim.DefaultMedian(m, p, n) / 20 }
	}
	medianRound := func(via route) time.Duration {
		e := newSamplerEnv(t, openDB(t, dialect(t)), nodes, perNode, model, via)
		e.round(t) // warm
		var ds []float64
		for range rounds {
			d, _ := e.round(t)
			ds = append(ds, d.Seconds())
		}
		return time.Duration(median(ds) * float64(time.Second))
	}
	d, a := medianRound(direct), medianRound(throughAgent)
	rep.info("13 agent", fmt.Sprintf("sampling round of %d containers on %d nodes, direct", nodes*perNode, nodes), d.Seconds(), "s", "median")
	rep.info("13 agent", "sampling round through the agent", a.Seconds(), "s", "median")
	rep.target("13 agent", "sampling round through the agent / direct", a.Seconds()/d.Seconds(), "x", "<=", 1.1, false, "")
}
