package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/pprof"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/prometheus/client_golang/prometheus"
	"gorm.io/gorm"

	"pvebill/models"
	"pvebill/models/dbtest"
	"pvebill/modules/executor"
	"pvebill/modules/kinds"
	"pvebill/modules/plans"
	"pvebill/modules/provision"
	"pvebill/modules/pve"
	"pvebill/modules/pve/pvesim"
	wiring "pvebill/modules/stack"
	"pvebill/modules/stack/serve"
	"pvebill/server"
	"pvebill/server/config"
)

// sessionsPerSim keeps each simulated cluster under its 100 console ports (5900-5999).
const sessionsPerSim = 90

// consoleEnv is pvebill with the console on, over as many simulated clusters as the sessions
// need, each with one node and its console user.
type consoleEnv struct {
	db      *models.DB
	reg     *prometheus.Registry
	api     *httptest.Server
	clients map[string]*pve.Client
	// counting and reads count the statements reading services (serviceReads).
	counting atomic.Bool
	reads    atomic.Int64
}

func newConsoleEnv(t *testing.T, sessions int) *consoleEnv {
	t.Helper()
	e := &consoleEnv{db: openDB(t, dialect(t)), reg: prometheus.NewRegistry(), clients: map[string]*pve.Client{}}
	e.countServiceReads(t)
	var cls []kinds.Cluster
	var specs []plans.Spec
	for i := range (sessions + sessionsPerSim - 1) / sessionsPerSim {
		name := fmt.Sprintf("c%d", i)
		sim := pvesim.New(pvesim.Options{Nodes: []string{"node01"}, TokenID: tokenID, TokenSecret: tokenSecret, Seed: int64(i + 1)})
		sim.AddVolume("local", "vztmpl/debian-12-standard_12.7-1_amd64.tar.zst", 126<<20, "vztmpl")
		hs := httptest.NewServer(sim)
		t.Cleanup(hs.Close)
		pc, err := pve.New(pve.Config{Cluster: name, URL: hs.URL, TokenID: tokenID, TokenSecret: tokenSecret,
			ConsoleUser: pvesim.DefaultConsoleUser, ConsolePassword: pvesim.DefaultConsolePassword,
			TaskPollInterval: time.Millisecond, TaskPollMaxInterval: 10 * time.Millisecond}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pc.Close)
		e.clients[name] = pc
		cls = append(cls, kinds.Cluster{Name: name, Client: pc})
		p := benchPlans()[0]
		p.Code, p.Cluster = "ct-"+name, name
		specs = append(specs, p)
	}
	w := wiring.New(wiring.Options{DB: e.db, Log: slog.New(slog.NewJSONHandler(io.Discard, nil)), Metrics: e.reg,
		Kinds: wiring.Kinds(), Clusters: cls, Console: config.Console{Secret: strings.Repeat("k", 40),
			MaxSessionsPerClient: 100000}, // one billing client holds every session
		Executor: executor.Config{Owner: "bench", Workers: 16, Lease: 30 * time.Second, PollInterval: 20 * time.Millisecond}})
	if _, err := w.Plans.Import(context.Background(), specs, plans.SourceFile); err != nil {
		t.Fatal(err)
	}
	cfg := config.Defaults()
	cfg.Clients = []config.Client{{ID: billingID, Secret: billingSecret, Scopes: []string{"billing"}}}
	srv := server.New(serve.Options(w, cfg))
	w.Exec.Start(context.Background())
	e.api = httptest.NewServer(srv)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		e.api.Close()
		w.Exec.Stop(ctx)
	})
	return e
}

// countServiceReads counts, while e.counting is on, the statements that read the services
// table; registered before anything runs (gorm's callbacks are not to be changed while
// statements run).
func (e *consoleEnv) countServiceReads(t *testing.T) {
	t.Helper()
	count := func(tx *gorm.DB) {
		if e.counting.Load() && tx.Statement.Table == "services" {
			e.reads.Add(1)
		}
	}
	dbtest.After(t, e.db, "bench:service_reads", count, dbtest.OnQuery, dbtest.OnRow)
}

// serviceReads is the number of statements that read the services table during d (the
// sessions' re-checks while nothing else runs).
func (e *consoleEnv) serviceReads(d time.Duration) float64 {
	e.reads.Store(0)
	e.counting.Store(true)
	time.Sleep(d)
	e.counting.Store(false)
	return float64(e.reads.Load())
}

// closeIdle closes the idle keep-alive connections of the test's HTTP clients (the API's and
// Proxmox's), whose goroutines are not the relay's.
func (e *consoleEnv) closeIdle() {
	http.DefaultClient.CloseIdleConnections()
	for _, c := range e.clients {
		c.Close()
	}
	time.Sleep(50 * time.Millisecond)
}

// create makes n running containers through the API, spread over the clusters, and returns their ids.
func (e *consoleEnv) create(t *testing.T, n int) []string {
	t.Helper()
	ids := make([]string, n)
	_, _ = load(t, http.DefaultClient, n, 16, http.StatusOK, func(i int) *http.Request {
		ids[i] = fmt.Sprintf("con-%04d", i)
		b, _ := json.Marshal(provision.CreateRequest{ServiceID: ids[i], Plan: fmt.Sprintf("ct-c%d", i/sessionsPerSim),
			Hostname: ids[i] + ".example.com", OS: "debian-12", RootPassword: "Sup3r-Secret-Root-pw"})
		return signedRequest("POST", e.api.URL+"/v1/services?wait=60", b)
	})
	return ids
}

// open asks for a console URL and opens its WebSocket, as the page does.
func (e *consoleEnv) open(ctx context.Context, id string) (*websocket.Conn, error) {
	resp, err := http.DefaultClient.Do(signedRequest("POST", e.api.URL+"/v1/services/"+id+"/console", nil))
	if err != nil {
		return nil, err
	}
	var out struct {
		Console struct{ URL string } `json:"console"`
	}
	err = json.NewDecoder(resp.Body).Decode(&out)
	_ = resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("console of %s: %w", id, err)
	}
	if resp.StatusCode != http.StatusCreated {
		return nil, fmt.Errorf("console of %s: HTTP %d", id, resp.StatusCode)
	}
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(out.Console.URL, "http")+"/ws",
		&websocket.DialOptions{Subprotocols: []string{"binary"}, CompressionMode: websocket.CompressionDisabled})
	return c, err
}

// direct opens the same container's terminal straight at the simulator, as the relay does.
func (e *consoleEnv) direct(ctx context.Context, t *testing.T, id string) net.Conn {
	t.Helper()
	svc, err := e.db.GetService(ctx, models.ServiceKey{ClientID: billingID, ServiceID: id})
	if err != nil {
		t.Fatal(err)
	}
	c, err := e.clients[svc.Cluster].OpenTerminal(ctx, svc.Node, *svc.VMID)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// readUntil reads from c until what was read ends with suffix.
func readUntil(c io.Reader, suffix string) (string, error) {
	var got []byte
	buf := make([]byte, 4096)
	for !bytes.HasSuffix(got, []byte(suffix)) {
		n, err := c.Read(buf)
		if err != nil {
			return string(got), err
		}
		got = append(got, buf[:n]...)
	}
	return string(got), nil
}

// roundTrips types one key n times and times each echo.
func roundTrips(c net.Conn, n int) ([]time.Duration, error) {
	out := make([]time.Duration, 0, n)
	one := make([]byte, 1)
	for range n {
		t0 := time.Now()
		if _, err := c.Write([]byte("0:1:a")); err != nil {
			return out, err
		}
		if _, err := io.ReadFull(c, one); err != nil || one[0] != 'a' {
			return out, fmt.Errorf("echo %q: %w", one, err)
		}
		out = append(out, time.Since(t0))
	}
	return out, nil
}

// stream types at rate bytes a second for d and returns the rate at which the echo came back
// (the bytes sent over the time until the last echoed byte arrived).
func stream(c net.Conn, rate int, d time.Duration) (float64, error) {
	const chunk = 4096
	frame := append([]byte(fmt.Sprintf("0:%d:", chunk)), bytes.Repeat([]byte{'x'}, chunk)...)
	total := rate * int(d/time.Millisecond) / 1000 / chunk * chunk
	start := time.Now()
	errc := make(chan error, 1)
	go func() {
		every := time.Duration(chunk) * time.Second / time.Duration(rate)
		for i := 0; i*chunk < total; i++ {
			time.Sleep(time.Until(start.Add(time.Duration(i) * every)))
			if _, err := c.Write(frame); err != nil {
				errc <- err
				return
			}
		}
		errc <- nil
	}()
	buf := make([]byte, 64<<10)
	for got := 0; got < total; {
		n, err := c.Read(buf)
		if err != nil {
			return 0, err
		}
		got += n
	}
	if err := <-errc; err != nil {
		return 0, err
	}
	return float64(total) / time.Since(start).Seconds(), nil
}

// relayGoroutines counts the goroutines in the console package or the WebSocket library.
func relayGoroutines() int {
	buf := make([]byte, 8<<20)
	n := 0
	for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
		if strings.Contains(g, "pvebill/modules/console.") || strings.Contains(g, "github.com/coder/websocket") {
			n++
		}
	}
	return n
}

// openSessions is the console sessions gauge, summed over its kinds.
func openSessions(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, f := range fams {
		if f.GetName() == "pvebill_console_sessions_open" {
			for _, m := range f.GetMetric() {
				sum += m.GetGauge().GetValue()
			}
		}
	}
	return sum
}

func pct(v []time.Duration, p float64) time.Duration {
	s := append([]time.Duration(nil), v...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[int(p*float64(len(s)-1))]
}

// consoleRelay is scenario 8 (R41): the console relay against a direct connection to the
// simulator's terminal in the same run, and many sessions at once.
func consoleRelay(t *testing.T, rep *Report) {
	n := scale(500, 20)
	e := newConsoleEnv(t, n)
	ids := e.create(t, n)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	relayLatency(ctx, t, rep, e, ids[0], scale(2000, 200), scale(3*time.Second, 500*time.Millisecond))
	manySessions(ctx, t, rep, e, ids)
}

// relayLatency: a keystroke's round trip through pvebill against the same straight to the
// simulator, interleaved in blocks, and a 1 MiB/s typed stream's echo rate both ways.
func relayLatency(ctx context.Context, t *testing.T, rep *Report, e *consoleEnv, id string, trips int, d time.Duration) {
	const sc = "8 console"
	dc := e.direct(ctx, t, id)
	defer func() { _ = dc.Close() }()
	ws, err := e.open(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	rc := websocket.NetConn(ctx, ws, websocket.MessageBinary)
	defer func() { _ = rc.Close() }()
	for _, c := range []net.Conn{dc, rc} {
		if _, err := readUntil(c, ":~# "); err != nil {
			t.Fatal(err)
		}
	}
	var direct, relay []time.Duration
	for len(direct) < trips {
		dl, err := roundTrips(dc, 50)
		if err != nil {
			t.Fatal(err)
		}
		rl, err := roundTrips(rc, 50)
		if err != nil {
			t.Fatal(err)
		}
		direct, relay = append(direct, dl...), append(relay, rl...)
	}
	added := float64(pct(relay, 0.5)-pct(direct, 0.5)) / float64(time.Millisecond)
	rep.info(sc, "round trip p50, direct to the simulator", float64(pct(direct, 0.5))/1e6, "ms", fmt.Sprintf("%d keystrokes", len(direct)))
	rep.info(sc, "round trip p50, through pvebill", float64(pct(relay, 0.5))/1e6, "ms", fmt.Sprintf("p99 %.3f ms", float64(pct(relay, 0.99))/1e6))
	rep.target(sc, "p50 added by the relay", added, "ms", "<=", 1, false, "relay p50 minus direct p50, same run")
	const rate = 1 << 20
	dr, err := stream(dc, rate, d)
	if err != nil {
		t.Fatal(err)
	}
	rr, err := stream(rc, rate, d)
	if err != nil {
		t.Fatal(err)
	}
	rep.info(sc, "1 MiB/s typed stream, echo rate direct", dr/(1<<20), "MiB/s", d.String())
	rep.target(sc, "1 MiB/s stream through pvebill vs direct", rr/dr, "x", ">=", 0.9, false, fmt.Sprintf("%.2f MiB/s", rr/(1<<20)))
}

// manySessions opens a session per service at once; each types an echo and must read its own
// answer. It reports the heap per open session and the goroutines left once all are closed.
func manySessions(ctx context.Context, t *testing.T, rep *Report, e *consoleEnv, ids []string) {
	const sc = "8 console"
	e.closeIdle()
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	baseG := runtime.NumGoroutine()
	conns := make([]*websocket.Conn, len(ids))
	var ok atomic.Int64
	var wg sync.WaitGroup
	sem := make(chan struct{}, 50)
	for i, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			c, err := e.open(ctx, id)
			if err != nil {
				t.Error(err)
				return
			}
			conns[i] = c
			nc := websocket.NetConn(ctx, c, websocket.MessageBinary)
			word := fmt.Sprintf("s%04d", i)
			line := "echo " + word + "\r"
			if _, err := readUntil(nc, ":~# "); err != nil {
				t.Error(err)
				return
			}
			if _, err := fmt.Fprintf(nc, "0:%d:%s", len(line), line); err != nil {
				t.Error(err)
				return
			}
			if out, err := readUntil(nc, ":~# "); err == nil && strings.Contains(out, "\r\n"+word+"\r\n") {
				ok.Add(1)
			}
		}()
	}
	wg.Wait()
	runtime.GC()
	var during runtime.MemStats
	runtime.ReadMemStats(&during)
	open := openSessions(t, e.reg)
	hold := scale(10*time.Second, 2*time.Second)
	rep.info(sc, "service reads per second while the sessions are open", e.serviceReads(hold)/hold.Seconds(), "/s",
		fmt.Sprintf("statements reading services over %s, %.0f sessions idle", hold, open))
	rep.info(sc, "relay goroutines per open session", float64(relayGoroutines())/float64(len(ids)), "",
		"console package and WebSocket library, pvebill, simulator and client sides")
	rep.target(sc, "concurrent sessions that echoed correctly", float64(ok.Load()), "", "==", float64(len(ids)), true,
		fmt.Sprintf("%.0f open at once", open))
	rep.info(sc, "heap per open session", float64(during.HeapInuse-before.HeapInuse)/float64(len(ids))/1024, "KiB",
		"relay, simulator and test client in one process")
	for _, c := range conns {
		if c != nil {
			_ = c.Close(websocket.StatusNormalClosure, "")
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	e.closeIdle()
	for (relayGoroutines() > 0 || openSessions(t, e.reg) > 0) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	left := relayGoroutines()
	if left > 0 {
		var buf bytes.Buffer
		_ = pprof.Lookup("goroutine").WriteTo(&buf, 1)
		t.Logf("goroutines after the sessions closed:\n%s", buf.String())
	}
	rep.target(sc, "relay goroutines left after the sessions closed", float64(left), "", "==", 0, true,
		"of the console package or the WebSocket library, any side")
	rep.info(sc, "all goroutines after against before", float64(runtime.NumGoroutine()-baseG), "",
		"the database pool may keep connections it opened meanwhile")
}
