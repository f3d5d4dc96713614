package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"pvebill/modules/stack/stacktest"

	"github.com/coder/websocket"

	"pvebill/modules/agent"
	"pvebill/modules/agent/agenttest"
	"pvebill/modules/pve/pvesim"
	"pvebill/modules/pve/pvesim/simtest"
	"pvebill/modules/stack/stacktest/poll"
	"pvebill/server"
	"pvebill/server/config"
)

// agentStand is a whole pvebill whose cluster "default" is reached only through a real agent
// running in-process: the simulator behind the agent, real WebSocket over loopback TCP between
// them. pvebill's config holds the agent's public key and nothing of Proxmox.
type agentStand struct {
	app     *app
	base    string
	sim     *simtest.Server
	cfg     config.Config
	dbPath  string
	log     *stacktest.LogBuffer
	agentLg *stacktest.LogBuffer
	agentCf agent.Config
	agent   *agenttest.Running
	// dial, when set, is how the agent reaches pvebill (a fault proxy).
	dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

func newAgentStand(t *testing.T) *agentStand {
	t.Helper()
	sim := simtest.Start(t, nil)
	keyFile, public, _ := agenttest.Key(t)
	s := &agentStand{sim: sim, log: &stacktest.LogBuffer{}, agentLg: &stacktest.LogBuffer{}}
	s.dbPath = filepath.Join(t.TempDir(), "app.db")
	cfg := config.Defaults()
	cfg.Database = config.Database{Driver: "sqlite", DSN: s.dbPath}
	cfg.Clients = []config.Client{{ID: "whmcs", Secret: replicaSecret, Scopes: []string{"billing", "admin"}}}
	cfg.Clusters = []config.Cluster{{Name: "default", Agent: &config.ClusterAgent{PublicKey: public}}}
	cfg.Executor.PollInterval = 20 * time.Millisecond
	cfg.Jobs.ReadinessInterval = 200 * time.Millisecond
	cfg.Console = config.Console{Secret: "agent-console-secret-0123456789abcdef"}
	s.cfg = cfg
	s.app, s.base = serveApp(t, cfg, slog.New(slog.NewJSONHandler(s.log, nil)), withExamplePlans)
	s.agentCf = agenttest.Config(s.base, "default", keyFile, sim.URL)
	s.startAgent(t)
	t.Cleanup(func() { s.agent.Kill() }) // before the app stops (cleanups run last first)
	return s
}

// startAgent starts (or restarts) the agent and waits for pvebill to list it.
func (s *agentStand) startAgent(t *testing.T) {
	t.Helper()
	s.agent = agenttest.Start(t, s.agentCf, agent.Options{Log: slog.New(slog.NewJSONHandler(s.agentLg, nil)),
		BackoffBase: 50 * time.Millisecond, BackoffMax: 200 * time.Millisecond, DialContext: s.dial})
	poll.Until(t, 10*time.Second, "the agent on /readyz", func() bool { return len(s.agents(t)) > 0 })
}

// agents reads the cluster's agents from /readyz.
func (s *agentStand) agents(t *testing.T) []any {
	t.Helper()
	resp, err := http.Get(s.base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m struct {
		Checks struct {
			Clusters map[string]map[string]any `json:"clusters"`
		} `json:"checks"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatal(err)
	}
	list, _ := m.Checks.Clusters["default"]["agents"].([]any)
	return list
}

func (s *agentStand) call(t *testing.T, method, path, body string) (int, map[string]any) {
	t.Helper()
	var b []byte
	if body != "" {
		b = []byte(body)
	}
	return signedCall(t, s.base, method, path, b)
}

// succeed runs a mutation with ?wait and fails the test unless its operation succeeded.
func (s *agentStand) succeed(t *testing.T, method, path, body string) map[string]any {
	t.Helper()
	status, m := s.call(t, method, path, body)
	if status != 200 || opState(m) != "succeeded" {
		t.Fatalf("%s %s: %d %v", method, path, status, m)
	}
	return m
}

// simCalls counts the simulator's requests of method whose path satisfies match.
func simCalls(sim *pvesim.Sim, method string, match func(string) bool) int {
	n := 0
	for _, r := range sim.Requests() {
		if r.Method == method && match(r.Path) {
			n++
		}
	}
	return n
}

// R57: the lifecycle through a real agent: create, suspend, unsuspend, a backup, a reinstall and
// terminate all succeed, the console opens, /readyz lists the agent, and no Proxmox secret is in
// pvebill's config, database file or log.
func TestAgentLifecycleThroughTunnel(t *testing.T) {
	s := newAgentStand(t)
	if ag := s.agents(t); len(ag) != 1 || ag[0].(map[string]any)["connected_at"] == "" || ag[0].(map[string]any)["remote"] == "" {
		t.Fatalf("readyz agents %v", ag)
	}
	s.succeed(t, "POST", "/v1/services?wait=20",
		`{"service_id":"ag-1","plan":"flex-2g","guest_type":"container","hostname":"ag.example.com","os":"debian-12","root_password":"agent-pass-1234"}`)
	s.succeed(t, "POST", "/v1/services/ag-1/suspend?wait=20", `{}`)
	s.succeed(t, "POST", "/v1/services/ag-1/unsuspend?wait=20", `{}`)
	s.succeed(t, "POST", "/v1/services/ag-1/backups?wait=30", `{}`)
	status, m := s.call(t, "POST", "/v1/services/ag-1/reinstall/preview?wait=20", `{}`)
	intent, _ := m["intent"].(map[string]any)
	if status != 200 || intent == nil {
		t.Fatalf("preview: %d %v", status, m)
	}
	body, _ := json.Marshal(map[string]any{"intent_id": intent["id"], "root_password": "agent-pass-5678",
		"confirmations": intent["confirmations"]})
	s.succeed(t, "POST", "/v1/services/ag-1/reinstall?wait=30", string(body))
	s.console(t, "ag-1")
	s.succeed(t, "POST", "/v1/services/ag-1/terminate?wait=30", `{}`)
	if n := simCalls(s.sim.Sim, "POST", func(p string) bool { return strings.HasSuffix(p, "/vzdump") }); n != 1 {
		t.Fatalf("%d vzdump calls", n)
	}
	s.noSecrets(t)
}

// console opens the service's console as the customer's page does and types a command: the
// relay's stream to Proxmox is one stream of the tunnel, opened by the agent's console user.
func (s *agentStand) console(t *testing.T, id string) {
	t.Helper()
	status, m := s.call(t, "POST", "/v1/services/"+id+"/console", `{}`)
	c, _ := m["console"].(map[string]any)
	url, _ := c["url"].(string)
	if status != http.StatusCreated || url == "" {
		t.Fatalf("console: %d %v", status, m)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(url, "http")+"/ws", &websocket.DialOptions{
		Subprotocols: []string{"binary"}, HTTPHeader: http.Header{"Origin": {strings.SplitN(url, "/console/", 2)[0]}}})
	if err != nil {
		t.Fatalf("console socket: %v", err)
	}
	defer func() { _ = ws.CloseNow() }()
	if err := ws.Write(ctx, websocket.MessageBinary, []byte("0:9:hostname\n")); err != nil {
		t.Fatal(err)
	}
	var got strings.Builder
	for !strings.Contains(got.String(), "ag.example.com") {
		_, b, err := ws.Read(ctx)
		if err != nil {
			t.Fatalf("console said %q: %v", got.String(), err)
		}
		got.Write(b)
	}
}

// noSecrets checks pvebill's config, database files and log for the agent's Proxmox secrets.
func (s *agentStand) noSecrets(t *testing.T) {
	t.Helper()
	texts := map[string]string{"config": s.cfg.String(), "log": s.log.String(), "the agent's log": s.agentLg.String()}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		raw, err := os.ReadFile(s.dbPath + suffix)
		if err == nil {
			texts["database"+suffix] = string(raw)
		}
	}
	for where, text := range texts {
		for _, secret := range []string{simtest.TokenSecret, simtest.ConsolePassword} { // the token id is no secret: Proxmox writes it into every UPID
			if strings.Contains(text, secret) {
				t.Errorf("R57: %s holds the agent's secret %q", where, secret)
			}
		}
	}
	if !strings.Contains(texts["database"]+texts["database-wal"], "ag-1") {
		t.Fatal("the database file was not read")
	}
}

// waitOperation polls an operation until it ends and returns its final state.
func (s *agentStand) waitOperation(t *testing.T, id string, within time.Duration) map[string]any {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		status, m := s.call(t, "GET", "/v1/operations/"+id+"?wait=5", "")
		op, _ := m["operation"].(map[string]any)
		if st := opState(m); status == 200 && (st == "succeeded" || st == "failed" || st == "needs_reconciliation") {
			return op
		}
		if time.Now().After(deadline) {
			s.dump(t, "operation "+id)
			t.Fatalf("operation %s not done after %s: %d %v", id, within, status, m)
		}
	}
}

// accepted sends a mutation without waiting and returns its operation id.
func (s *agentStand) accepted(t *testing.T, method, path, body string) string {
	t.Helper()
	status, m := s.call(t, method, path, body)
	op, _ := m["operation"].(map[string]any)
	id, _ := op["id"].(string)
	if status != http.StatusAccepted || id == "" {
		t.Fatalf("%s %s: %d %v", method, path, status, m)
	}
	return id
}

// killDuring kills the agent once the simulator has seen a first call that satisfies seen, and
// brings it back once a call of pvebill's waits for it: the operation has felt the outage.
func (s *agentStand) killDuring(t *testing.T, seen func() bool) {
	t.Helper()
	poll.Until(t, 20*time.Second, "the call to kill the agent after", seen)
	s.agent.Kill()
	poll.Until(t, 20*time.Second, "a call waiting for the killed agent", func() bool { return s.app.agents.Waiting("default") > 0 })
	s.startAgent(t)
}

// R57, R39: an agent killed during a create's task wait and during a destroy costs nothing but
// time: each operation finishes once the agent is back, no call is sent twice (one create, one
// destroy at the simulator), and the work is done once.
func TestAgentKilledMidCreateAndDestroy(t *testing.T) {
	s := newAgentStand(t)
	s.sim.SetTaskDuration("vzcreate", 1500*time.Millisecond)
	s.sim.SetTaskDuration("vzdestroy", 1500*time.Millisecond)
	isCreate := func(p string) bool { return strings.HasPrefix(p, "/nodes/") && strings.HasSuffix(p, "/lxc") }
	id := s.accepted(t, "POST", "/v1/services",
		`{"service_id":"ag-kill","plan":"ct-2g","hostname":"kill.example.com","os":"debian-12","root_password":"agent-pass-1234"}`)
	polling := func(task string) func() bool {
		return func() bool {
			return simCalls(s.sim.Sim, "GET", func(p string) bool { return strings.Contains(p, ":"+task+":") }) > 0
		}
	}
	s.killDuring(t, polling("vzcreate"))
	if op := s.waitOperation(t, id, 90*time.Second); op["state"] != "succeeded" {
		t.Fatalf("create after the agent came back: %v", op)
	}
	if n := simCalls(s.sim.Sim, "POST", isCreate); n != 1 {
		t.Fatalf("R57: %d creates sent, want 1", n)
	}
	_, m := s.call(t, "GET", "/v1/services/ag-kill", "")
	svc, _ := m["service"].(map[string]any)
	vmid, _ := svc["vmid"].(float64)
	isDestroy := func(p string) bool { return strings.HasSuffix(p, "/lxc/"+strconv.Itoa(int(vmid))) }
	id = s.accepted(t, "POST", "/v1/services/ag-kill/terminate", `{}`)
	s.killDuring(t, polling("vzdestroy"))
	if op := s.waitOperation(t, id, 90*time.Second); op["state"] != "succeeded" {
		t.Fatalf("terminate after the agent came back: %v", op)
	}
	if n := simCalls(s.sim.Sim, "DELETE", isDestroy); n != 1 {
		t.Fatalf("R57: %d destroys sent, want 1", n)
	}
	if _, ok := s.sim.Guest(int(vmid)); ok {
		t.Fatal("the guest is still there")
	}
}

// R57: with the cluster's agent away, a create is accepted (202) and nothing reaches Proxmox;
// a read that needs Proxmox is a temporary 503 proxmox_unavailable, answered at once; when the
// agent is back the create runs, once.
func TestAgentAwayCreateWaits(t *testing.T) {
	s := newAgentStand(t)
	s.agent.Kill()
	poll.Until(t, 5*time.Second, "the killed agent gone from /readyz", func() bool { return len(s.agents(t)) == 0 })
	before := len(s.sim.Requests())
	id := s.accepted(t, "POST", "/v1/services",
		`{"service_id":"ag-away","plan":"ct-2g","hostname":"away.example.com","os":"debian-12","root_password":"agent-pass-1234"}`)
	start := time.Now()
	status, m := s.call(t, "GET", "/v1/admin/clusters/default/nodes", "")
	if status != http.StatusServiceUnavailable || m["code"] != "proxmox_unavailable" || m["permanence"] != "temporary" {
		t.Fatalf("read while away: %d %v", status, m)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatalf("a read waited %s for the agent", time.Since(start))
	}
	// Once the create's first call to Proxmox waits for the agent, it has found none: nothing
	// can have been sent.
	poll.Until(t, 10*time.Second, "the create waiting for the agent", func() bool { return s.app.agents.Waiting("default") > 0 })
	if n := len(s.sim.Requests()); n != before {
		t.Fatalf("%d calls reached Proxmox with no agent", n-before)
	}
	_, m = s.call(t, "GET", "/v1/operations/"+id, "")
	if st := opState(m); st != "pending" && st != "running" {
		t.Fatalf("the create did not wait: %v", m)
	}
	s.startAgent(t)
	if op := s.waitOperation(t, id, 60*time.Second); op["state"] != "succeeded" {
		t.Fatalf("create after the agent came back: %v", op)
	}
	isCreate := func(p string) bool { return strings.HasPrefix(p, "/nodes/") && strings.HasSuffix(p, "/lxc") }
	if n := simCalls(s.sim.Sim, "POST", isCreate); n != 1 {
		t.Fatalf("%d creates sent, want 1", n)
	}
}

// R57 under chaos: services are created and terminated by concurrent billing clients while the
// agent is killed and its tunnel cut without a FIN (a proxy that stops forwarding), again and
// again. A client whose operation failed temporarily asks again, as a billing system does.
// Invariants: every operation ends; Proxmox sees at most one create per service (a create whose
// stream broke is adopted by its stamp, R39) and at most one destroy per vmid; at the end every
// service is terminated and no guest is left.
func TestAgentChaosKillsAndCuts(t *testing.T) {
	if testing.Short() {
		t.Skip("a minute of chaos")
	}
	s := newAgentStand(t)
	s.agent.Kill()
	proxy := agenttest.StartProxy(t, strings.TrimPrefix(s.base, "http://"), 0)
	s.dial = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, proxy.Addr())
	}
	s.startAgent(t)
	began := time.Now()
	s.sim.SetTaskDuration("vzcreate", 800*time.Millisecond)
	s.sim.SetTaskDuration("vzdestroy", 500*time.Millisecond)
	// The short form: 60 services (120 operations), a fault every 1.5 s, 5 kills and 5 cuts. The
	// long form (make chaos-agent): at least 1,500 services (3,000 operations) and at least 30
	// kills and 30 cuts, each fault once the cluster answered again after the last one and 3 s
	// of work went by (a cut is noticed after up to 15 s: faults on a fixed clock would keep the
	// cluster away most of the time, which measures nothing but the outage). Clients go on
	// creating and terminating until both counts are reached.
	services, workers, minFaults, faultCap, every, recovered := 60, 6, 5, 10, 1500*time.Millisecond, false
	if os.Getenv("PVEBILL_TEST_CHAOS_AGENT") == "long" {
		services, workers, minFaults, faultCap, every, recovered = 1500, 16, 30, 1<<30, 3*time.Second, true
	}
	stop := make(chan struct{})
	enough := make(chan struct{}) // closed when the fault loop reached its minimum
	var enoughOnce sync.Once
	var kills, cuts atomic.Int64
	go func() {
		var lastCut time.Time
		for i := 0; i < faultCap; i++ { // kills and cuts in turn
			if recovered && !s.answers(stop) {
				return
			}
			select {
			case <-stop:
				return
			case <-time.After(every):
			}
			if i%2 == 0 {
				before := len(s.app.agents.Agents("default"))
				// A tunnel that came up after the last cut ends with the agent, and the outage
				// begins once pvebill has seen it go (a tunnel cut before may stay listed until
				// its ping times out, so the list shrinks rather than empties). A tunnel cut
				// earlier tells pvebill nothing when the agent dies: no wait then.
				up := s.agent.Agent.Connected()
				s.agent.Kill()
				if up.After(lastCut) {
					poll.Wait(5*time.Second, func() bool { return len(s.app.agents.Agents("default")) < before })
				}
				kills.Add(1)
			} else {
				proxy.Stall()
				lastCut = time.Now()
				cuts.Add(1)
			}
			s.startAgentQuiet(t)
			if kills.Load() >= int64(minFaults) && cuts.Load() >= int64(minFaults) {
				enoughOnce.Do(func() { close(enough) })
			}
		}
	}()
	var next, finished atomic.Int64
	var usedMu sync.Mutex
	var used []string
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= services && closed(enough) {
					return
				}
				id := "chaos-" + strconv.Itoa(i)
				usedMu.Lock()
				used = append(used, id)
				usedMu.Unlock()
				s.untilDone(t, "POST", "/v1/services",
					`{"service_id":"`+id+`","plan":"ct-2g","hostname":"`+id+`.example.com","os":"debian-12","root_password":"agent-pass-1234"}`)
				s.untilDone(t, "POST", "/v1/services/"+id+"/terminate", `{}`)
				finished.Add(1)
			}
		})
	}
	if recovered { // the long form says how far it got, twice a minute
		go func() {
			for {
				select {
				case <-stop:
					return
				case <-time.After(30 * time.Second):
					t.Logf("%s: %d services done, %d kills, %d cuts", time.Since(began).Round(time.Second),
						finished.Load(), kills.Load(), cuts.Load())
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	creates, destroys := map[string]int{}, map[string]int{}
	for _, r := range s.sim.Requests() {
		if r.Method == "POST" && strings.HasSuffix(r.Path, "/lxc") {
			creates[r.Form.Get("hostname")]++
		}
		if r.Method == "DELETE" && strings.Contains(r.Path, "/lxc/") {
			destroys[r.Path]++
		}
	}
	for h, n := range creates {
		if n > 1 {
			t.Errorf("R57: %d creates of %s reached Proxmox", n, h)
		}
	}
	for p, n := range destroys {
		if n > 1 {
			t.Errorf("R57: %d destroys of %s reached Proxmox", n, p)
		}
	}
	for _, id := range used {
		_, m := s.call(t, "GET", "/v1/services/"+id, "")
		if svc, _ := m["service"].(map[string]any); svc["state"] != "terminated" {
			t.Errorf("%s: %v", id, svc["state"])
		}
	}
	for _, r := range s.sim.Requests() {
		if r.Method == "POST" && strings.HasSuffix(r.Path, "/lxc") {
			vmid := 0
			_, _ = fmt.Sscan(r.Form.Get("vmid"), &vmid)
			if _, ok := s.sim.Guest(vmid); ok {
				t.Errorf("guest %d of %s is left at Proxmox", vmid, r.Form.Get("hostname"))
			}
		}
	}
	t.Logf("chaos: %d services created and terminated (%d operations) through %d agent kills and %d tunnel cuts in %s",
		len(used), 2*len(used), kills.Load(), cuts.Load(), time.Since(began).Round(time.Second))
	if kills.Load() < int64(minFaults) || cuts.Load() < int64(minFaults) {
		t.Fatalf("only %d kills and %d cuts", kills.Load(), cuts.Load())
	}
}

// closed reports whether ch is closed.
func closed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// answers waits until a read that needs Proxmox succeeds through the cluster's agent (false
// when stop closes first).
func (s *agentStand) answers(stop chan struct{}) bool {
	for {
		if status, _ := signedCallErr(s.base, "GET", "/v1/admin/clusters/default/nodes"); status == http.StatusOK {
			return true
		}
		select {
		case <-stop:
			return false
		case <-time.After(1100 * time.Millisecond): // a second apart: the same signed request within one is a replay
		}
	}
}

// startAgentQuiet starts the agent again if it is not running, without waiting for it.
func (s *agentStand) startAgentQuiet(t *testing.T) {
	if s.agent.Running() {
		return
	}
	s.agent = agenttest.Start(t, s.agentCf, agent.Options{Log: slog.New(slog.NewJSONHandler(s.agentLg, nil)),
		BackoffBase: 50 * time.Millisecond, BackoffMax: 200 * time.Millisecond, DialContext: s.dial})
}

// untilDone sends a mutation as a billing system does: again (with the same body) while its
// operation fails temporarily, until it succeeds.
func (s *agentStand) untilDone(t *testing.T, method, path, body string) {
	t.Helper()
	var last any
	var at time.Time
	for attempt := 0; attempt < 20; attempt++ {
		// Each attempt is signed anew, at least a second after the last: the signature's time
		// has a resolution of a second, and the same signature again is a replay (401
		// signature_replayed), as a billing system that retries within the second finds.
		at = at.Add(time.Second)
		if now := time.Now(); now.After(at) {
			at = now
		}
		status, m := s.callAt(t, method, path+"?wait=30", body, at)
		if status == http.StatusOK && opState(m) == "succeeded" {
			return
		}
		last = m
		if status == http.StatusAccepted || status == http.StatusOK {
			op, _ := m["operation"].(map[string]any)
			id, _ := op["id"].(string)
			if id != "" {
				final := s.waitOperation(t, id, 180*time.Second)
				if final["state"] == "succeeded" {
					return
				}
				last = final
			}
		}
	}
	_, recs := s.call(t, "GET", "/v1/admin/reconciliations", "")
	t.Errorf("%s %s never succeeded; last answer %v; reconciliations %v", method, path, last, recs)
}

// callAt is call signed with the timestamp at instead of now (the server takes one within
// minutes of its clock).
func (s *agentStand) callAt(t *testing.T, method, path, body string, at time.Time) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), method, s.base+path, strings.NewReader(body))
	ts := strconv.FormatInt(at.Unix(), 10)
	req.Header.Set(server.HeaderKey, "whmcs")
	req.Header.Set(server.HeaderTimestamp, ts)
	req.Header.Set(server.HeaderSignature, server.Sign([]byte(replicaSecret), ts, method, req.URL.RequestURI(), []byte(body)))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

var dumpOnce sync.Once

// dumpGoroutines writes every goroutine's stack to the file PVEBILL_TEST_DUMP names (once per
// test binary), so that a chaos run's stuck operation can be read after the fact.
func (s *agentStand) dump(t *testing.T, why string) {
	path := os.Getenv("PVEBILL_TEST_DUMP")
	if path == "" {
		return
	}
	dumpOnce.Do(func() {
		f, err := os.Create(path)
		if err != nil {
			t.Log(err)
			return
		}
		defer f.Close()
		fmt.Fprintf(f, "%s, %s\n", why, time.Now().Format(time.RFC3339))
		_ = pprof.Lookup("goroutine").WriteTo(f, 2)
		_ = os.WriteFile(path+".log", []byte(s.log.String()), 0o600)
		_ = os.WriteFile(path+".agent.log", []byte(s.agentLg.String()), 0o600)
	})
}
