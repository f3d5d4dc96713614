package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"pvebill/models"
	"pvebill/models/dbtest"
	"pvebill/modules/kinds"
	"pvebill/modules/pve/pvesim"
	"pvebill/server"
)

// The chaos suite: three `pvebill serve` processes on one MariaDB and one `pvebill sim`
// process, a stream of mixed webhooks with duplicates and retries, replicas killed with
// SIGKILL and restarted at seeded random moments, and simulator faults; then the invariants
// are checked from the database, the simulator's guests and its request log.
//
// The short variant runs in `make test` (MariaDB required; skipped with -short). The long one:
//
//	make chaos   (PVEBILL_TEST_CHAOS=long go test -run TestChaosReplicas .)
//
// PVEBILL_TEST_CHAOS_SEED picks the seed (default 1).

type chaosScale struct {
	name     string
	services int // service ids, each with a script of operations
	minOps   int // accepted operations at least
	minKills int
	workers  int
	killGap  [2]int // accepted operations between two kills
	// The Galera variant (chaos_galera_test.go): database-node kills at least, and the pause
	// in seconds between one node's rejoin and the next kill.
	minDBKills int
	dbKillGap  [2]int
}

var (
	chaosShort = chaosScale{name: "short", services: 45, minOps: 200, minKills: 5, workers: 12, killGap: [2]int{15, 35}}
	chaosLong  = chaosScale{name: "long", services: 1100, minOps: 5000, minKills: 50, workers: 32, killGap: [2]int{40, 90}}
)

const (
	chaosMaxLog = 2_000_000
	chaosClient = "whmcs"
	chaosSecret = "chaos-client-secret-0123456789abcdef"
	chaosToken  = "pvebill@pve!provision"
	chaosTokSec = "00000000-0000-0000-0000-000000000000"
)

func TestChaosReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("chaos suite skipped with -short")
	}
	requireChaosDB(t)
	scale := chaosShort
	if os.Getenv("PVEBILL_TEST_CHAOS") == "long" {
		scale = chaosLong
	}
	seed := int64(1)
	if s := os.Getenv("PVEBILL_TEST_CHAOS_SEED"); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		seed = v
	}
	c := newChaos(t, scale, seed)
	c.run()
}

// requireChaosDB skips the suite without MariaDB only in a plain `go test` run: a chaos target
// (PVEBILL_TEST_CHAOS set) or CI (PVEBILL_TEST_REQUIRE_MYSQL=1) fails instead, so that no chaos
// run passes by skipping. A DSN whose server is down fails when the test database is created.
func requireChaosDB(t *testing.T) {
	t.Helper()
	if os.Getenv("PVEBILL_TEST_MYSQL_DSN") != "" {
		return
	}
	if os.Getenv("PVEBILL_TEST_REQUIRE_MYSQL") == "1" {
		t.Fatal("PVEBILL_TEST_REQUIRE_MYSQL=1 but PVEBILL_TEST_MYSQL_DSN is not set")
	}
	if v := os.Getenv("PVEBILL_TEST_CHAOS"); v != "" {
		t.Fatalf("PVEBILL_TEST_CHAOS=%s but PVEBILL_TEST_MYSQL_DSN is not set: a chaos run needs its database", v)
	}
	t.Skip("the chaos suite needs MariaDB (PVEBILL_TEST_MYSQL_DSN)")
}

type chaos struct {
	t     *testing.T
	scale chaosScale
	seed  int64
	dir   string
	bin   string
	sim   string // http://host:port
	db    *models.DB
	// galera is the three-node cluster of the Galera variant (nil on one MariaDB); dsns are its
	// nodes' DSNs for the chaos database, replica i preferring node i.
	galera *galeraCluster
	dsns   []string

	replicas []*replica

	mu        sync.Mutex
	rng       *rand.Rand
	passwords []string
	accepted  map[string]string // operation id -> action
	// backupRefusals counts the refused backups by status and code.
	backupRefusals map[string]int
	// retriesByCode counts the Galera run's transaction retries by MariaDB error number.
	retriesByCode map[string]int64

	kills, restarts, faults, requests, duplicates, retries, refusals atomic.Int64
	// passwordsResent counts the applies sent again for an intent awaiting_password (R58).
	passwordsResent atomic.Int64
	// aimedKills counts the kills aimed at a replica running an operation past its
	// destructive point (R58).
	aimedKills                                     atomic.Int64
	waitTimeouts, waitNanos, sendNanos, inProgress atomic.Int64
	dbKills, dbRetries, dbGiveUps                  atomic.Int64
	done                                           atomic.Bool
}

type replica struct {
	idx  int
	cfg  string
	addr string
	log  string

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{} // closed when cmd has been waited for
	up     bool
}

func newChaos(t *testing.T, scale chaosScale, seed int64) *chaos {
	dir := t.TempDir()
	c := &chaos{t: t, scale: scale, seed: seed, dir: dir, bin: filepath.Join(dir, "pvebill"),
		rng: rand.New(rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15)), accepted: map[string]string{},
		backupRefusals: map[string]int{}}
	build := exec.Command("go", "build", "-o", c.bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return c
}

func (c *chaos) intn(n int) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rng.IntN(n)
}

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// setUp starts the simulator, opens a fresh MariaDB database for the replicas and writes their
// plans file; it returns the database's DSN.
func (c *chaos) setUp() string {
	t := c.t
	c.startSim()
	dsn := dbtest.DSN(t, models.MySQL)
	db, err := models.Open(models.MySQL, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	c.db = db
	plans, err := os.ReadFile("modules/plans/examples.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// Scheduled backups (R42) every minute, so that the run's kills meet them, and one backup
	// kept, so that every backup after a service's first rotates one out.
	plans = bytes.ReplaceAll(plans, []byte(`backup_schedule: "0 3 * * *"`), []byte(`backup_schedule: "* * * * *"`))
	plans = bytes.ReplaceAll(plans, []byte(`backups_max: 3`), []byte(`backups_max: 1`))
	// The long run's 1,100 services would fill the simulator's storage many times over and end
	// as no_capacity (R52): the run is about kills and faults, not placement, so disks are small
	// (a VM's stays the template's 8 GiB) and local-lvm is re-added with its 1 TiB default below.
	plans = bytes.ReplaceAll(plans, []byte(`disk_gib: 20`), []byte(`disk_gib: 2`))
	plans = bytes.ReplaceAll(plans, []byte(`disk_gib: 40`), []byte(`disk_gib: 8`))
	c.simCtl("POST", "/_sim/storages", map[string]any{"id": "local-lvm", "type": "lvmthin", "content": []string{"rootdir", "images"}})
	if err := os.WriteFile(filepath.Join(c.dir, "plans.yaml"), plans, 0o600); err != nil {
		t.Fatal(err)
	}
	return dsn
}

func (c *chaos) run() {
	t := c.t
	var dsn string
	if c.galera != nil {
		dsn = c.setUpGalera()
	} else {
		dsn = c.setUp()
	}
	for i := range 3 {
		r := &replica{idx: i, addr: freeAddr(t), cfg: filepath.Join(c.dir, fmt.Sprintf("replica%d.yaml", i)),
			log: filepath.Join(c.dir, fmt.Sprintf("replica%d.log", i))}
		c.writeConfig(r, dsn)
		c.replicas = append(c.replicas, r)
	}
	if out, err := exec.Command(c.bin, "migrate", "--config", c.replicas[0].cfg).CombinedOutput(); err != nil {
		t.Fatalf("migrate: %v\n%s", err, out)
	}
	for _, r := range c.replicas {
		c.start(r)
	}
	t.Cleanup(func() {
		for _, r := range c.replicas {
			c.kill(r)
		}
	})
	for _, r := range c.replicas {
		c.waitUp(r, 30*time.Second)
	}
	// Creates take a little time on the simulator, so kills land inside tasks.
	c.simCtl("POST", "/_sim/task-duration", map[string]any{"type": "", "duration": "60ms"})

	began := time.Now()
	var bg sync.WaitGroup
	stopBG := make(chan struct{})
	bg.Add(2)
	go func() { defer bg.Done(); c.killer(stopBG) }()
	go func() { defer bg.Done(); c.faulter(stopBG) }()
	if c.galera != nil {
		bg.Add(1)
		go func() { defer bg.Done(); c.dbKiller(stopBG) }()
	}

	ids := make(chan int)
	var wg sync.WaitGroup
	for range c.scale.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range ids {
				c.script(fmt.Sprintf("chaos-%04d", i))
			}
		}()
	}
	for i := 0; i < c.scale.services || c.acceptedCount() < c.scale.minOps; i++ {
		ids <- i
	}
	close(ids)
	wg.Wait()
	workload := time.Since(began)
	c.done.Store(true)
	// Keep killing until the minimum is reached.
	for c.kills.Load() < int64(c.scale.minKills) || c.dbKills.Load() < int64(c.scale.minDBKills) {
		time.Sleep(200 * time.Millisecond)
	}
	close(stopBG)
	bg.Wait()
	c.simCtl("DELETE", "/_sim/faults", nil)
	for _, r := range c.replicas {
		if !r.running() {
			c.start(r)
		}
	}
	for _, r := range c.replicas {
		c.waitUp(r, 30*time.Second)
	}
	settleStart := time.Now()
	settled := c.waitSettled(90 * time.Second)
	t.Logf("workload %s, settling %s, %d operation waits timed out, %s waiting for operations and %s sending in all, %d answers idempotency_in_progress",
		workload.Round(time.Second), time.Since(settleStart).Round(time.Second), c.waitTimeouts.Load(),
		time.Duration(c.waitNanos.Load()).Round(time.Second), time.Duration(c.sendNanos.Load()).Round(time.Second), c.inProgress.Load())
	// Stop the replicas gracefully before reading their logs.
	for _, r := range c.replicas {
		c.term(r)
	}
	violations := c.check(settled)
	t.Logf("chaos %s seed=%d: %d operations accepted (%d requests, %d duplicate deliveries, %d retries, %d refusals), "+
		"%d kills, %d restarts, %d faults injected, %d invariant violations, %s",
		c.scale.name, c.seed, c.acceptedCount(), c.requests.Load(), c.duplicates.Load(), c.retries.Load(), c.refusals.Load(),
		c.kills.Load(), c.restarts.Load(), c.faults.Load(), violations, time.Since(began).Round(time.Second))
	if c.acceptedCount() < c.scale.minOps {
		t.Errorf("only %d operations accepted, want at least %d", c.acceptedCount(), c.scale.minOps)
	}
	if c.kills.Load() < int64(c.scale.minKills) {
		t.Errorf("only %d kills, want at least %d", c.kills.Load(), c.scale.minKills)
	}
	if c.galera != nil {
		c.reportGalera(violations)
	}
}

func (c *chaos) acceptedCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.accepted)
}

var simAddrRE = regexp.MustCompile(`http://([0-9.:]+)/api2/json`)

func (c *chaos) startSim() {
	t := c.t
	// The whole run's requests are kept: the invariants read every create and destroy.
	cmd := exec.Command(c.bin, "sim", "--listen", "127.0.0.1:0", "--seed", strconv.FormatInt(c.seed, 10), "--max-log", strconv.Itoa(chaosMaxLog))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("sim banner: %v", err)
	}
	m := simAddrRE.FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("sim banner %q", line)
	}
	c.sim = "http://" + m[1]
	go func() { _, _ = io.Copy(io.Discard, out) }()
}

func (c *chaos) writeConfig(r *replica, dsn string) {
	failover := "[]"
	if n := len(c.dsns); n > 0 {
		// Replica i uses node i and fails over to the next ones, in order.
		dsn = c.dsns[r.idx%n]
		var rest []string
		for k := 1; k < n; k++ {
			rest = append(rest, strconv.Quote(c.dsns[(r.idx+k)%n]))
		}
		failover = "[" + strings.Join(rest, ", ") + "]"
	}
	cfg := fmt.Sprintf(`listen: %q
log_format: json
log_level: info
database:
  driver: mysql
  dsn: %q
  failover: %s
clients:
  - id: %s
    secret: %q
    scopes: [billing, storefront, admin]
clusters:
  - name: default
    url: %q
    token_id: %q
    token_secret: %q
    # The long run's 1,100 services commit far more memory than the simulator's nodes have:
    # the run is about kills and faults, not placement (R52), so memory is overcommitted.
    memory_overcommit: 64
plans_file: plans.yaml
ip_pools:
  - name: chaos
    cluster: default
    bridge: vmbr0
    cidr: 10.77.0.0/16
    gateway: 10.77.0.1
    first: 10.77.0.10
    last: 10.77.250.250
jobs:
  swap_sampling: "@every 2s"
  limits: "@every 2s"
executor:
  workers: 4
  lease: 2s
  poll_interval: 50ms
  drain_timeout: 3s
`, r.addr, dsn, failover, chaosClient, chaosSecret, c.sim, chaosToken, chaosTokSec)
	if err := os.WriteFile(r.cfg, []byte(cfg), 0o600); err != nil {
		c.t.Fatal(err)
	}
}

func (r *replica) running() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.up
}

func (c *chaos) start(r *replica) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.up {
		return
	}
	f, err := os.OpenFile(r.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		c.t.Fatal(err)
	}
	cmd := exec.Command(c.bin, "serve", "--config", r.cfg)
	cmd.Dir = c.dir
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		c.t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); f.Close(); close(exited) }()
	r.cmd, r.exited, r.up = cmd, exited, true
}

// kill sends SIGKILL: no drain, no release, nothing written.
func (c *chaos) kill(r *replica) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.up {
		return
	}
	c.scrapeRetries(r)
	_ = r.cmd.Process.Signal(syscall.SIGKILL)
	<-r.exited
	r.up = false
}

// term sends SIGTERM and waits for the graceful exit.
func (c *chaos) term(r *replica) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.up {
		return
	}
	c.scrapeRetries(r)
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.exited:
	case <-time.After(15 * time.Second):
		_ = r.cmd.Process.Kill()
		<-r.exited
	}
	r.up = false
}

func (c *chaos) waitUp(r *replica, d time.Duration) {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		resp, err := http.Get("http://" + r.addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	raw, _ := os.ReadFile(r.log)
	c.t.Fatalf("replica %d did not come up:\n%s", r.idx, tail(raw, 3000))
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// killer SIGKILLs a random replica each time a seeded random number of further operations
// has been accepted (or, once the workload is done, every second until the minimum is met),
// and restarts it shortly after.
func (c *chaos) killer(stop chan struct{}) {
	next := c.acceptedCount() + c.scale.killGap[0] + c.intn(c.scale.killGap[1]-c.scale.killGap[0]+1)
	for {
		select {
		case <-stop:
			return
		case <-time.After(50 * time.Millisecond):
		}
		if c.acceptedCount() < next && !c.done.Load() {
			continue
		}
		if c.done.Load() {
			time.Sleep(time.Second)
		}
		r := c.replicas[c.intn(len(c.replicas))]
		if c.intn(2) == 0 {
			// Every other kill aims at a replica running a terminate, reinstall or restore past
			// its destructive point, when one is (R58: the takeover reads the facts).
			if t := c.pastDestruction(); t != nil {
				r = t
				c.aimedKills.Add(1)
			}
		}
		if !r.running() {
			continue
		}
		c.kill(r)
		c.kills.Add(1)
		next = c.acceptedCount() + c.scale.killGap[0] + c.intn(c.scale.killGap[1]-c.scale.killGap[0]+1)
		go func() {
			time.Sleep(time.Duration(200+c.intn(1000)) * time.Millisecond)
			c.start(r)
			c.restarts.Add(1)
		}()
	}
}

// faulter injects one simulator fault at a time at seeded random moments.
func (c *chaos) faulter(stop chan struct{}) {
	kinds := []func() []map[string]any{
		func() []map[string]any { // an HTTP 500 on a container create
			return []map[string]any{{"method": "POST", "path_pattern": "/nodes/{node}/lxc", "nth": 1 + c.intn(3), "status": 500, "message": "chaos: internal error"}}
		},
		func() []map[string]any { // a dropped connection on a status read
			return []map[string]any{{"method": "GET", "path_pattern": "/nodes/{node}/lxc/{vmid}/status/current", "nth": 1 + c.intn(3), "drop_conn": true}}
		},
		func() []map[string]any { // a start task that fails
			return []map[string]any{{"method": "POST", "path_pattern": "/nodes/{node}/lxc/{vmid}/status/start", "nth": 1 + c.intn(2), "task_fail": "chaos: startup for container failed"}}
		},
		func() []map[string]any { // a latency spike
			return []map[string]any{{"method": "", "path_pattern": "/nodes/{node}/lxc/{vmid}/config", "nth": 1 + c.intn(3), "delay": "1500ms"}}
		},
		func() []map[string]any { // work done, then the answer is lost
			return []map[string]any{{"method": "POST", "path_pattern": "/nodes/{node}/lxc/{vmid}/status/stop", "nth": 1, "status": 500, "after": true}}
		},
		func() []map[string]any { // a destroy that succeeds followed by a create that fails
			return []map[string]any{
				{"method": "DELETE", "path_pattern": "/nodes/{node}/lxc/{vmid}", "nth": 1, "delay": "10ms"},
				{"method": "POST", "path_pattern": "/nodes/{node}/lxc", "nth": 1, "task_fail": "chaos: storage full"},
			}
		},
		func() []map[string]any { // a VM clone that fails
			return []map[string]any{{"method": "POST", "path_pattern": "/nodes/{node}/qemu/{vmid}/clone", "nth": 1, "status": 500, "message": "chaos: clone failed"}}
		},
	}
	for {
		select {
		case <-stop:
			return
		case <-time.After(time.Duration(200+c.intn(400)) * time.Millisecond):
		}
		for _, f := range kinds[c.intn(len(kinds))]() {
			f["times"] = 1
			c.simCtl("POST", "/_sim/faults", f)
			c.faults.Add(1)
		}
	}
}

func (c *chaos) simCtl(method, path string, body any) []byte {
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, c.sim+path, rd)
	if strings.HasPrefix(path, "/api2/") {
		req.Header.Set("Authorization", "PVEAPIToken="+chaosToken+"="+chaosTokSec)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Errorf("sim %s %s: %v", method, path, err)
		return nil
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return raw
}

// send delivers one webhook with an Idempotency-Key to a random replica, retrying the same key
// on another replica after a connection error or a 5xx (the billing system's retry), and now
// and then delivering it twice at once to two replicas. It returns the final answer.
func (c *chaos) send(method, path string, body []byte) (int, map[string]any) {
	start := time.Now()
	defer func() { c.sendNanos.Add(int64(time.Since(start))) }()
	key := models.NewID()
	// Each delivery is signed anew, as a billing system signs each retry: a signature is
	// accepted once (R47), so one delivery's timestamp is a second before the previous one's.
	ts := time.Now().Unix()
	dup := c.intn(5) == 0
	if dup {
		c.duplicates.Add(1)
		r := c.replicas[c.intn(len(c.replicas))]
		go func(ts int64) { _, _, _ = c.deliver(r, method, path, key, body, ts) }(ts)
	}
	for attempt := 0; attempt < 40; attempt++ {
		r := c.replicas[c.intn(len(c.replicas))]
		ts = min(time.Now().Unix(), ts-1)
		status, m, err := c.deliver(r, method, path, key, body, ts)
		if p, _ := m["code"].(string); p == "idempotency_key_in_progress" {
			c.inProgress.Add(1)
		}
		if err == nil && status < 500 {
			return status, m
		}
		c.retries.Add(1)
		time.Sleep(time.Duration(50+c.intn(200)) * time.Millisecond)
	}
	return 0, nil
}

func (c *chaos) deliver(r *replica, method, path, key string, body []byte, at int64) (int, map[string]any, error) {
	c.requests.Add(1)
	req, _ := http.NewRequest(method, "http://"+r.addr+path, bytes.NewReader(body))
	ts := strconv.FormatInt(at, 10)
	req.Header.Set(server.HeaderKey, chaosClient)
	req.Header.Set(server.HeaderTimestamp, ts)
	req.Header.Set(server.HeaderSignature, server.Sign([]byte(chaosSecret), ts, method, req.URL.RequestURI(), body))
	req.Header.Set("Idempotency-Key", key)
	req.Header.Set("Content-Type", "application/json")
	cl := http.Client{Timeout: 10 * time.Second}
	resp, err := cl.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	if op, ok := m["operation"].(map[string]any); ok && resp.StatusCode < 300 {
		if id, _ := op["id"].(string); id != "" {
			act, _ := op["action"].(string)
			c.mu.Lock()
			c.accepted[id] = act
			c.mu.Unlock()
		}
	}
	return resp.StatusCode, m, nil
}

// waitOp waits until an operation is terminal (from the database) and returns its state.
func (c *chaos) waitOp(id string, d time.Duration) string {
	start := time.Now()
	defer func() { c.waitNanos.Add(int64(time.Since(start))) }()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		op, err := c.db.GetOperation(context.Background(), id)
		if err == nil && models.IsTerminal(op.State) {
			return op.State
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.waitTimeouts.Add(1)
	return ""
}

func opID(m map[string]any) string {
	op, _ := m["operation"].(map[string]any)
	id, _ := op["id"].(string)
	return id
}

// script runs one service's life: create (retried while it fails), then a random sequence of
// suspend, unsuspend, change-plan, reinstall, the power actions, snapshot create and delete, and
// a backup followed by a restore, and sometimes terminate.
func (c *chaos) script(id string) {
	password := "Chaos-" + models.NewID()[:18]
	c.mu.Lock()
	c.passwords = append(c.passwords, password)
	c.mu.Unlock()
	plan, kind := "ct-2g", ""
	switch c.intn(4) {
	case 0:
		plan = "vm-4g"
	case 1:
		plan, kind = "flex-2g", "container" // a plan with backups, so that restores run
	}
	spec := map[string]any{"service_id": id, "plan": plan, "hostname": id + ".example.com",
		"os": "debian-12", "root_password": password}
	if kind != "" {
		spec["guest_type"] = kind
	}
	create, _ := json.Marshal(spec)
	created := false
	for try := 0; try < 3 && !created; try++ {
		status, m := c.send("POST", "/v1/services", create)
		if oid := opID(m); oid != "" {
			created = c.waitOp(oid, 60*time.Second) == models.OpSucceeded
		} else if status >= 400 {
			c.refusals.Add(1)
		}
	}
	if !created {
		return
	}
	steps := 2 + c.intn(4)
	for range steps {
		var path string
		var body []byte
		switch c.intn(13) {
		case 11, 12:
			c.backupAndRestore(id)
			continue
		case 9:
			path, body = "/v1/services/"+id+"/snapshots", []byte(`{"name":"s`+models.NewID()[:8]+`"}`)
		case 10:
			if path = c.oldestSnapshot(id); path == "" {
				continue
			}
			status, m := c.send("DELETE", path, nil)
			if oid := opID(m); oid != "" {
				c.waitOp(oid, 60*time.Second)
			} else if status >= 400 {
				c.refusals.Add(1)
			}
			continue
		case 5, 6, 7:
			path, body = "/v1/services/"+id+"/"+[]string{"start", "stop", "reboot"}[c.intn(3)], []byte(`{}`)
		case 8:
			path, body = "/v1/services/"+id+"/shutdown", []byte(`{"timeout_seconds":10}`)
		case 0:
			path, body = "/v1/services/"+id+"/suspend", []byte(`{}`)
		case 1:
			path, body = "/v1/services/"+id+"/unsuspend", []byte(`{}`)
		case 2:
			to := "flex-2g"
			if plan == "vm-4g" {
				to = "vm-4g"
			}
			path, body = "/v1/services/"+id+"/change-plan", []byte(`{"plan":"`+to+`"}`)
		case 3, 4:
			status, m := c.send("POST", "/v1/services/"+id+"/reinstall/preview?wait=10", []byte(`{}`))
			in, _ := m["intent"].(map[string]any)
			if status != 200 || in == nil || in["state"] != "preview_ready" {
				c.refusals.Add(1)
				continue
			}
			body, _ = json.Marshal(map[string]any{"intent_id": in["id"], "confirmations": in["confirmations"],
				"root_password": password})
			c.reinstall(id, body)
			continue
		}
		status, m := c.send("POST", path, body)
		if oid := opID(m); oid != "" {
			c.waitOp(oid, 60*time.Second)
		} else if status >= 400 {
			c.refusals.Add(1)
		}
	}
	if c.intn(3) == 0 {
		status, m := c.send("POST", "/v1/services/"+id+"/terminate", []byte(`{}`))
		if oid := opID(m); oid != "" {
			c.waitOp(oid, 60*time.Second)
		} else if status >= 400 {
			c.refusals.Add(1)
		}
	}
}

// reinstall applies a reinstall and, as the WHMCS module does, sends the apply again with the
// password while the intent waits for it: a replica that took the run over after the destroy
// holds no password (R26, R58).
func (c *chaos) reinstall(id string, body []byte) {
	status, m := c.send("POST", "/v1/services/"+id+"/reinstall", body)
	oid := opID(m)
	if oid == "" {
		if status >= 400 {
			c.refusals.Add(1)
		}
		return
	}
	deadline := time.Now().Add(120 * time.Second)
	for time.Now().Before(deadline) {
		op, err := c.db.GetOperation(context.Background(), oid)
		if err == nil && models.IsTerminal(op.State) {
			return
		}
		_, m := c.send("GET", "/v1/services/"+id+"/reinstall", nil)
		if in, _ := m["intent"].(map[string]any); in != nil && in["state"] == models.IntentAwaitingPassword {
			c.passwordsResent.Add(1)
			c.send("POST", "/v1/services/"+id+"/reinstall", body)
		}
		time.Sleep(time.Second)
	}
	c.waitTimeouts.Add(1)
}

// backupAndRestore backs the service up now and, every other time, restores its newest backup
// through the two phases (R42, R43). A plan without backups refuses both.
func (c *chaos) backupAndRestore(id string) {
	status, m := c.send("POST", "/v1/services/"+id+"/backups", nil)
	if oid := opID(m); oid != "" {
		c.waitOp(oid, 60*time.Second)
	} else if status >= 400 {
		c.refusals.Add(1)
		code, _ := m["code"].(string)
		c.mu.Lock()
		c.backupRefusals[fmt.Sprintf("%d %s", status, code)]++
		c.mu.Unlock()
		return
	}
	if c.intn(2) == 0 {
		return
	}
	_, m = c.send("GET", "/v1/services/"+id+"/backups", nil)
	list, _ := m["backups"].([]any)
	if len(list) == 0 {
		return
	}
	newest, _ := list[len(list)-1].(map[string]any)
	body, _ := json.Marshal(map[string]any{"backup_id": newest["id"]})
	status, m = c.send("POST", "/v1/services/"+id+"/restore/preview?wait=10", body)
	in, _ := m["intent"].(map[string]any)
	if status != 200 || in == nil || in["state"] != "preview_ready" {
		c.refusals.Add(1)
		return
	}
	body, _ = json.Marshal(map[string]any{"intent_id": in["id"], "confirmations": in["confirmations"]})
	status, m = c.send("POST", "/v1/services/"+id+"/restore", body)
	if oid := opID(m); oid != "" {
		c.waitOp(oid, 60*time.Second)
	} else if status >= 400 {
		c.refusals.Add(1)
	}
}

// oldestSnapshot is the path of the service's oldest snapshot ("" when it has none or the list
// is refused).
func (c *chaos) oldestSnapshot(id string) string {
	status, m := c.send("GET", "/v1/services/"+id+"/snapshots", nil)
	list, _ := m["snapshots"].([]any)
	if status != 200 || len(list) == 0 {
		return ""
	}
	name, _ := list[0].(map[string]any)["name"].(string)
	return "/v1/services/" + id + "/snapshots/" + name
}

// waitSettled waits until no operation is queued or running.
func (c *chaos) waitSettled(d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		var open int64
		if err := dbtest.Query(c.db, &open, "SELECT COUNT(*) FROM operations WHERE state IN ?",
			[]string{models.OpQueued, models.OpRunning}); err == nil && open == 0 {
			return true
		}
		time.Sleep(200 * time.Millisecond)
	}
	return false
}

// stampRE reads the service id out of the stamp the chaos client's services carry (R39, R46).
var stampRE = regexp.MustCompile(`pvebill-service: ` + regexp.QuoteMeta(chaosClient) + `/([A-Za-z0-9._:-]+)`)

// check verifies the invariants and returns how many were violated.
func (c *chaos) check(settled bool) int {
	t := c.t
	violations := 0
	fail := func(format string, args ...any) {
		violations++
		t.Errorf(format, args...)
	}
	// 1. Every accepted operation is terminal (or needs_reconciliation).
	var ops []models.Operation
	dbtest.Scan(t, c.db, &ops, "SELECT * FROM operations")
	byID := map[string]models.Operation{}
	states := map[string]int{}
	perService := map[string]map[string]int{}
	for _, op := range ops {
		byID[op.ID] = op
		states[op.State]++
		if perService[op.ServiceID] == nil {
			perService[op.ServiceID] = map[string]int{}
		}
		perService[op.ServiceID][op.Action]++
		// A run resumed from the facts (R58) may send its stage's call once more.
		perService[op.ServiceID]["resumed"] += op.Resumed
	}
	c.mu.Lock()
	for id := range c.accepted {
		op, ok := byID[id]
		switch {
		case !ok:
			fail("accepted operation %s has no row", id)
		case !models.IsTerminal(op.State):
			fail("accepted operation %s (%s) ended %s at stage %q", id, op.Action, op.State, op.Stage)
		}
	}
	c.mu.Unlock()
	if !settled {
		fail("operations still queued or running after the replicas settled: %v", states)
		c.logUnfinished(ops, byID)
	}
	t.Logf("operations by state: %v", states)
	failedBy := map[string]int{}
	for _, op := range ops {
		if op.State == models.OpFailed {
			failedBy[op.Action+" "+derefStr(op.ErrorCode)]++
		}
	}
	t.Logf("failed operations by action and code: %v", failedBy)
	c.checkReconciliations(ops, fail)

	// 2. No operation ran twice: per service, the guests created (a container create or a VM
	// clone that Proxmox accepted) are at most its create and reinstall operations, and the
	// guests destroyed at most its terminate and reinstall operations. 3. No destroy reached a
	// guest we had not created.
	var log []struct {
		Method string              `json:"method"`
		Path   string              `json:"path"`
		Form   map[string][]string `json:"form"`
		Status int                 `json:"status"`
	}
	if err := json.Unmarshal(c.simCtl("GET", "/_sim/requests", nil), &log); err != nil {
		t.Fatalf("request log: %v", err)
	}
	if len(log) >= chaosMaxLog {
		t.Fatalf("the simulator's request log reached its cap (%d entries): raise chaosMaxLog", chaosMaxLog)
	}
	createdBy := map[int]string{} // vmid -> service of the last guest created there
	creates, destroys, power, snaps := map[string]int{}, map[string]int{}, map[string]int{}, map[string]int{}
	restores := map[string]int{}
	for _, r := range log {
		parts := strings.Split(strings.Trim(r.Path, "/"), "/")
		if r.Status != 200 {
			continue
		}
		switch {
		case r.Method == "POST" && len(parts) == 3 && parts[0] == "nodes" && (parts[2] == "lxc" || parts[2] == "qemu"),
			r.Method == "POST" && len(parts) == 5 && parts[2] == "qemu" && parts[4] == "clone":
			key := "vmid"
			if len(parts) == 5 {
				key = "newid"
			}
			vmid, _ := strconv.Atoi(first(r.Form[key]))
			m := stampRE.FindStringSubmatch(first(r.Form["description"]))
			if m == nil {
				fail("guest %d created without our stamp: %v", vmid, r.Path)
				continue
			}
			createdBy[vmid] = m[1]
			creates[m[1]]++
			if first(r.Form["restore"]) == "1" || first(r.Form["archive"]) != "" {
				restores[m[1]]++
			}
		case r.Method == "POST" && len(parts) == 6 && parts[0] == "nodes" && parts[4] == "status":
			vmid, _ := strconv.Atoi(parts[3])
			power[parts[5]]++
			checkPowerCall(r.Path, parts[5], r.Form, createdBy[vmid] != "", fail)
		case len(parts) >= 5 && parts[0] == "nodes" && parts[4] == "snapshot" && r.Method != "GET":
			// R39, R44: every snapshot change reached a guest of ours, no more often than its
			// service's snapshot operations.
			vmid, _ := strconv.Atoi(parts[3])
			svc, ok := createdBy[vmid]
			if !ok {
				fail("snapshot call %s %s sent to guest %d, which pvebill never created", r.Method, r.Path, vmid)
				continue
			}
			snaps[svc+" "+r.Method]++
		case r.Method == "DELETE" && len(parts) == 4 && parts[0] == "nodes" && (parts[2] == "lxc" || parts[2] == "qemu"):
			vmid, _ := strconv.Atoi(parts[3])
			svc, ok := createdBy[vmid]
			if !ok {
				fail("destroy sent to guest %d, which pvebill never created (no stamp of ours)", vmid)
				continue
			}
			destroys[svc]++
			delete(createdBy, vmid)
		}
	}
	for svc, n := range creates {
		if allowed := perService[svc]["create"] + perService[svc]["reinstall"] + perService[svc]["restore"] + perService[svc]["resumed"]; n > allowed {
			fail("service %s: %d guests created by %d create/reinstall/restore operations", svc, n, allowed)
		}
	}
	for svc, n := range restores {
		if n > perService[svc]["restore"]+perService[svc]["resumed"] {
			fail("service %s: %d restores reached Proxmox for %d restore operations", svc, n, perService[svc]["restore"])
		}
	}
	checkRestores(ops, fail)
	c.checkBackups(perService, fail)
	for key, n := range snaps {
		svc, method, _ := strings.Cut(key, " ")
		action := map[string]string{"POST": "snapshot_create", "DELETE": "snapshot_delete"}[method]
		if n > perService[svc][action]+perService[svc]["snapshot_rollback"]+perService[svc]["resumed"] {
			fail("service %s: %d snapshot %s calls by %d %s operations", svc, n, method, perService[svc][action], action)
		}
	}
	for svc, n := range destroys {
		if allowed := perService[svc]["terminate"] + perService[svc]["reinstall"] + perService[svc]["resumed"]; n > allowed {
			fail("service %s: %d guests destroyed by %d terminate/reinstall operations", svc, n, allowed)
		}
	}
	for _, foreign := range []int{200, 300, 9000} {
		if raw := c.simCtl("GET", fmt.Sprintf("/_sim/guests/%d", foreign), nil); !bytes.Contains(raw, []byte(`"vmid"`)) {
			fail("the simulator's own guest %d is gone: %s", foreign, raw)
		}
	}

	// 4. No two live services share a vmid or an address.
	var svcs []models.Service
	dbtest.Scan(t, c.db, &svcs, "SELECT * FROM services")
	svcByID := map[string]models.Service{}
	vmids := map[int]string{}
	for _, s := range svcs {
		svcByID[s.ServiceID] = s
		if s.VMID == nil || s.State == models.ServiceTerminated {
			continue
		}
		if other, dup := vmids[*s.VMID]; dup {
			fail("services %s and %s share vmid %d", other, s.ServiceID, *s.VMID)
		}
		vmids[*s.VMID] = s.ServiceID
	}
	var allocs []models.IPAllocation
	dbtest.Scan(t, c.db, &allocs, "SELECT * FROM ip_allocations")
	addrs := map[string]string{}
	for _, a := range allocs {
		k := fmt.Sprintf("%s/%d", a.Pool, a.IP)
		if other, dup := addrs[k]; dup {
			fail("services %s and %s share address %s", other, a.ServiceID, k)
		}
		addrs[k] = a.ServiceID
	}

	// 5. Every stamped guest belongs to exactly one live service, at that service's vmid.
	var res struct {
		Data []struct {
			VMID int    `json:"vmid"`
			Type string `json:"type"`
		} `json:"data"`
	}
	if err := json.Unmarshal(c.simCtl("GET", "/api2/json/cluster/resources?type=vm", nil), &res); err != nil {
		t.Fatalf("cluster resources: %v", err)
	}
	stampedBy := map[string]int{}
	for _, g := range res.Data {
		var snap struct {
			Config map[string]string `json:"config"`
		}
		_ = json.Unmarshal(c.simCtl("GET", fmt.Sprintf("/_sim/guests/%d", g.VMID), nil), &snap)
		m := stampRE.FindStringSubmatch(snap.Config["description"])
		if m == nil {
			continue
		}
		svc, ok := svcByID[m[1]]
		switch {
		case !ok:
			fail("guest %d carries the stamp of unknown service %s", g.VMID, m[1])
		case svc.State == models.ServiceTerminated:
			fail("guest %d carries the stamp of terminated service %s", g.VMID, m[1])
		case svc.VMID == nil || *svc.VMID != g.VMID:
			fail("guest %d carries the stamp of service %s, whose vmid is %v", g.VMID, m[1], derefInt(svc.VMID))
		}
		if prev, dup := stampedBy[m[1]]; dup {
			fail("service %s stamped on guests %d and %d", m[1], prev, g.VMID)
		}
		stampedBy[m[1]] = g.VMID
	}
	t.Logf("simulator: %d guests, %d stamped; %d creates (%d restores) and %d destroys reached Proxmox; power calls %v; snapshot calls %v",
		len(res.Data), len(stampedBy), sum(creates), sum(restores), sum(destroys), power, snaps)
	// R43: no silent loss — a service that went through a restore and is live again has its
	// stamped guest at its vmid.
	for svc := range restores {
		s, ok := svcByID[svc]
		live := ok && (s.State == models.ServiceActive || s.State == models.ServiceSuspended || s.State == models.ServiceLimited)
		if live && (s.VMID == nil || stampedBy[svc] != *s.VMID) {
			fail("service %s is %s after a restore but no guest of it is at vmid %v", svc, s.State, derefInt(s.VMID))
		}
	}

	// 6. No secret in any table or log.
	c.mu.Lock()
	passwords := append([]string(nil), c.passwords...)
	c.mu.Unlock()
	var tables []string
	dbtest.Scan(t, c.db, &tables, "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE()")
	for _, tbl := range tables {
		// The text and binary columns' values: strings and bytes as the rows are read.
		var dump strings.Builder
		for _, row := range dbtest.TableRows(t, c.db, "`"+tbl+"`") {
			for _, v := range row {
				switch v := v.(type) {
				case []byte:
					dump.Write(v)
					dump.WriteByte('\n')
				case string:
					dump.WriteString(v)
					dump.WriteByte('\n')
				}
			}
		}
		for _, p := range passwords {
			if strings.Contains(dump.String(), p) {
				fail("a root password is stored in table %s", tbl)
				break
			}
		}
	}
	for _, r := range c.replicas {
		raw, _ := os.ReadFile(r.log)
		for _, p := range passwords {
			if bytes.Contains(raw, []byte(p)) {
				fail("a root password is in replica %d's log", r.idx)
				break
			}
		}
	}
	return violations
}

// checkReconciliations is the invariant of R58: every needs_reconciliation carries the facts
// and a reason, and the reason is confirmed from what the run recorded — a resume that kept
// failing resumed three times, a task that was not recorded was not, Proxmox unreachable only
// in a run that injected faults, a guest not ours not stamped for the service. It reports the
// figure the README shows: needs_reconciliation per 1,000 operations.
func (c *chaos) checkReconciliations(ops []models.Operation, fail func(string, ...any)) {
	reasons := map[string]int{}
	resumed := 0
	for _, op := range ops {
		resumed += op.Resumed
		if op.State != models.OpNeedsReconciliation {
			continue
		}
		var rec struct {
			Facts struct {
				GuestPresent *bool `json:"guest_present"`
				Stamped      *bool `json:"stamped"`
			} `json:"facts"`
			Reason string `json:"reason"`
		}
		if op.Reconciliation == nil || json.Unmarshal([]byte(*op.Reconciliation), &rec) != nil || rec.Reason == "" {
			fail("operation %s (%s) needs reconciliation at %s without facts and a reason", op.ID, op.Action, op.Stage)
			continue
		}
		reasons[rec.Reason]++
		if reasons[rec.Reason] <= 10 {
			c.t.Logf("needs_reconciliation: %s %s of %s at %s, resumed %d, error %s: %s", op.ID, op.Action, op.ServiceID, op.Stage,
				op.Resumed, derefStr(op.ErrorCode), *op.Reconciliation)
		}
		confirmed := false
		switch rec.Reason {
		case "resume_failed":
			confirmed = op.Resumed >= 3
		case "task_not_recorded":
			confirmed = op.TaskStage == nil || *op.TaskStage != op.Stage
		case "proxmox_unreachable":
			confirmed = c.faults.Load() > 0
		case "guest_not_ours":
			confirmed = rec.Facts.Stamped != nil && !*rec.Facts.Stamped
		}
		if !confirmed {
			fail("operation %s (%s) needs reconciliation for %q, which its row does not confirm: %s", op.ID, op.Action, rec.Reason, *op.Reconciliation)
		}
	}
	n := 0
	for _, v := range reasons {
		n += v
	}
	c.t.Logf("needs_reconciliation: %.1f per 1,000 operations (%d of %d; reasons %v); %d runs resumed from the facts, %d applies sent again with the password, %d kills aimed past a destructive point",
		1000*float64(n)/float64(max(len(ops), 1)), n, len(ops), reasons, resumed, c.passwordsResent.Load(), c.aimedKills.Load())
}

// checkRestores is the invariant of restore operations (R28, R43): one ends succeeded, or
// needs_reconciliation, or failed before Proxmox was asked to restore (precheck or stop) —
// never failed from the restore stage on, which would be a loss nobody is told about.
func checkRestores(ops []models.Operation, fail func(string, ...any)) {
	for _, op := range ops {
		if op.Action != "restore" || op.State != models.OpFailed {
			continue
		}
		if op.Stage != "precheck" && op.Stage != "stop" {
			fail("restore %s of service %s failed at stage %q instead of needing reconciliation", op.ID, op.ServiceID, op.Stage)
		}
	}
}

// checkBackups is the backups' invariant (R42): every vzdump and every backup delete that
// Proxmox accepted reached a guest pvebill created, no node ever ran two vzdumps at once (the
// simulator's vzdump log), and no rotation lost a verified backup: a service alive at the end
// that had a backup succeed still holds a stamped backup (the plan keeps one here, so every
// later backup rotates: a rotation before verification, or of the new one, would leave none).
func (c *chaos) checkBackups(perService map[string]map[string]int, fail func(string, ...any)) {
	t := c.t
	var log []struct {
		Method string              `json:"method"`
		Path   string              `json:"path"`
		Form   map[string][]string `json:"form"`
		Status int                 `json:"status"`
	}
	if err := json.Unmarshal(c.simCtl("GET", "/_sim/requests", nil), &log); err != nil {
		t.Fatalf("request log: %v", err)
	}
	ours := map[int]bool{}
	dumps, deletes := 0, 0
	for _, r := range log {
		parts := strings.Split(strings.Trim(r.Path, "/"), "/")
		if r.Status != 200 || r.Method == "GET" {
			continue
		}
		switch {
		case r.Method == "POST" && len(parts) == 3 && parts[0] == "nodes" && parts[2] == "lxc":
			vmid, _ := strconv.Atoi(first(r.Form["vmid"]))
			ours[vmid] = true
		case r.Method == "POST" && len(parts) == 5 && parts[2] == "qemu" && parts[4] == "clone":
			vmid, _ := strconv.Atoi(first(r.Form["newid"]))
			ours[vmid] = true
		case r.Method == "POST" && len(parts) == 3 && parts[2] == "vzdump":
			dumps++
			for _, x := range strings.Split(first(r.Form["vmid"]), ",") {
				if vmid, _ := strconv.Atoi(x); !ours[vmid] {
					fail("vzdump of guest %s, which pvebill never created", x)
				}
			}
		case r.Method == "DELETE" && len(parts) >= 6 && parts[4] == "content" && strings.Contains(r.Path, "vzdump-"):
			// The volume id (storage:backup/name) is one segment, escaped or not.
			volid := strings.Join(parts[5:], "/")
			deletes++
			if vmid := archiveVMID(volid); !ours[vmid] {
				fail("backup %s deleted, of a guest pvebill never created", volid)
			}
		}
	}
	var runs []pvesim.VzdumpRun
	if err := json.Unmarshal(c.simCtl("GET", "/_sim/vzdumps", nil), &runs); err != nil {
		t.Fatalf("vzdump log: %v", err)
	}
	if n := pvesim.VzdumpOverlaps(runs); n != 0 {
		fail("%d pairs of vzdumps ran at once on one node", n)
	}
	checked := c.checkKeptBackups(fail)
	c.mu.Lock()
	refused := fmt.Sprint(c.backupRefusals)
	c.mu.Unlock()
	t.Logf("backups: %d vzdumps and %d backup deletes reached Proxmox, %d vzdump tasks, %d services' backups checked; "+
		"backup operations %d, refused %s", dumps, deletes, len(runs), checked, backupOps(perService), refused)
}

// archiveVMID is the vmid in a vzdump archive's volume id (0 when it names none).
func archiveVMID(volid string) int {
	rest := volid[strings.Index(volid, "vzdump-")+len("vzdump-"):]
	var vmid int
	for _, kind := range []string{"lxc-%d-", "qemu-%d-"} {
		if _, err := fmt.Sscanf(rest, kind, &vmid); err == nil {
			return vmid
		}
	}
	return 0
}

// checkKeptBackups checks that every live service on the plan with backups whose backup once
// succeeded holds a stamped backup, and returns how many it checked.
func (c *chaos) checkKeptBackups(fail func(string, ...any)) int {
	var svcs []models.Service
	dbtest.Scan(c.t, c.db, &svcs, "SELECT * FROM services WHERE state IN ? AND plan = ?",
		[]string{models.ServiceActive, models.ServiceSuspended, models.ServiceLimited}, "flex-2g")
	checked := 0
	for _, s := range svcs {
		ok := dbtest.Count(c.t, c.db, "SELECT COUNT(*) FROM operations WHERE service_id = ? AND action = ? AND state = ?",
			s.ServiceID, "backup", models.OpSucceeded)
		if ok == 0 || s.VMID == nil {
			continue
		}
		if n := c.stampedBackups(s); n < 1 {
			fail("service %s has %d stamped backups after %d succeeded backups", s.ServiceID, n, ok)
		}
		checked++
	}
	return checked
}

// stampedBackups counts the archives of the service's vmid on the node its guest is on whose
// notes carry its stamp, as Proxmox lists them (the replicas are stopped by now).
func (c *chaos) stampedBackups(s models.Service) int {
	var res struct {
		Data []struct {
			Notes string `json:"notes"`
		} `json:"data"`
	}
	path := fmt.Sprintf("/api2/json/nodes/%s/storage/local/content?content=backup&vmid=%d", s.Node, *s.VMID)
	if err := json.Unmarshal(c.simCtl("GET", path, nil), &res); err != nil {
		c.t.Fatalf("backup list of %s: %v", s.ServiceID, err)
	}
	n := 0
	for _, b := range res.Data {
		if kinds.HasStamp(b.Notes, kinds.Guest{ClientID: s.ClientID, ServiceID: s.ServiceID}) {
			n++
		}
	}
	return n
}

// backupOps counts the backup operations of all services.
func backupOps(perService map[string]map[string]int) int {
	n := 0
	for _, m := range perService {
		n += m["backup"]
	}
	return n
}

// checkPowerCall is the invariant of one power call that Proxmox accepted (R39, R40): it reached
// a guest pvebill created, and a shutdown said forceStop=0, so that no shutdown ever turned
// into a stop.
func checkPowerCall(path, action string, form map[string][]string, ours bool, fail func(string, ...any)) {
	switch action {
	case "start", "stop", "shutdown", "reboot":
	default:
		return
	}
	if !ours {
		fail("%s sent to %s, a guest pvebill never created (no stamp of ours)", action, path)
	}
	if action == "shutdown" && first(form["forceStop"]) != "0" {
		fail("shutdown sent to %s without forceStop=0: %v", path, form)
	}
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

func derefStr(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func derefInt(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// SIGTERM drains: the listener closes at once (no new requests, so no new operations from
// this replica), a stage that is running finishes within executor.drain_timeout and its
// operation ends normally, and the replica's leases (its heartbeat and its sampled nodes) are
// released before the process exits 0.
func TestSIGTERMDrainsAndReleasesLeases(t *testing.T) {
	if testing.Short() {
		t.Skip("process test skipped with -short")
	}
	if os.Getenv("PVEBILL_TEST_MYSQL_DSN") == "" {
		t.Skip("needs MariaDB (PVEBILL_TEST_MYSQL_DSN)")
	}
	c := newChaos(t, chaosScale{name: "sigterm"}, 1)
	dsn := c.setUp()
	r := &replica{addr: freeAddr(t), cfg: filepath.Join(c.dir, "replica.yaml"), log: filepath.Join(c.dir, "replica.log")}
	c.writeConfig(r, dsn)
	c.replicas = []*replica{r}
	if out, err := exec.Command(c.bin, "migrate", "--config", r.cfg).CombinedOutput(); err != nil {
		t.Fatalf("migrate: %v\n%s", err, out)
	}
	c.start(r)
	t.Cleanup(func() { c.kill(r) })
	c.waitUp(r, 30*time.Second)
	// The replica holds its heartbeat and the sampled nodes after its first round.
	deadline := time.Now().Add(10 * time.Second)
	for {
		held, err := c.db.LeaseHolders(context.Background(), models.LeaseNodePrefix)
		if err != nil {
			t.Fatal(err)
		}
		if len(held) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the replica took no node lease")
		}
		time.Sleep(100 * time.Millisecond)
	}
	c.simCtl("POST", "/_sim/task-duration", map[string]any{"type": "vzcreate", "duration": "1500ms"})
	body, _ := json.Marshal(map[string]any{"service_id": "drain-1", "plan": "ct-2g", "hostname": "drain.example.com",
		"os": "debian-12", "root_password": "Drain-pass-12345"})
	status, m, err := c.deliver(r, "POST", "/v1/services", models.NewID(), body, time.Now().Unix())
	if err != nil || status != 202 {
		t.Fatalf("create: %d %v %v", status, m, err)
	}
	id := opID(m)
	// Wait until the create task is running, then ask the replica to stop.
	deadline = time.Now().Add(10 * time.Second)
	for {
		var n int64
		_ = dbtest.Query(c.db, &n, "SELECT COUNT(*) FROM operations WHERE id = ? AND state = ? AND stage_index >= 0", id, models.OpRunning)
		if n == 1 && c.sawCreateTask() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the create did not reach its create task")
		}
		time.Sleep(20 * time.Millisecond)
	}
	sent := time.Now()
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	// The listener closes quickly: new requests do not reach this replica.
	closed := false
	for time.Since(sent) < 2*time.Second {
		resp, err := http.Get("http://" + r.addr + "/healthz")
		if err != nil {
			closed = true
			break
		}
		_ = resp.Body.Close()
		time.Sleep(20 * time.Millisecond)
	}
	if !closed {
		t.Fatal("the replica still answered HTTP 2 s after SIGTERM")
	}
	select {
	case <-r.exited:
	case <-time.After(15 * time.Second):
		t.Fatal("the replica did not exit within 15 s of SIGTERM")
	}
	if code := r.cmd.ProcessState.ExitCode(); code != 0 {
		raw, _ := os.ReadFile(r.log)
		t.Fatalf("exit code %d after SIGTERM:\n%s", code, tail(raw, 2000))
	}
	r.mu.Lock()
	r.up = false
	r.mu.Unlock()
	op, err := c.db.GetOperation(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if op.State != models.OpSucceeded {
		t.Fatalf("the running create ended %s at stage %q; its stage should have finished within the drain timeout", op.State, op.Stage)
	}
	var leases []models.Lease
	dbtest.Scan(t, c.db, &leases, "SELECT * FROM leases WHERE owner IS NOT NULL")
	for _, l := range leases {
		if strings.HasPrefix(l.Name, models.LeaseNodePrefix) || strings.HasPrefix(l.Name, models.LeaseReplicaPrefix) {
			t.Errorf("lease %s still held by %s after a graceful stop", l.Name, *l.Owner)
		}
	}
	raw, _ := os.ReadFile(r.log)
	if !bytes.Contains(raw, []byte("pvebill stopped")) {
		t.Fatalf("no orderly stop in the log:\n%s", tail(raw, 2000))
	}
	t.Logf("SIGTERM to exit: %s; the running create finished and every lease was released", time.Since(sent).Round(time.Millisecond))
}

// sawCreateTask reports whether the simulator has been asked to create a container.
// pastDestruction is the replica running an operation past its destructive point (a
// terminate's destroy and after, a reinstall's destroy and after, a restore's restore and
// after), or nil. The lease owner names the replica's process id (modules/stack/config.go).
func (c *chaos) pastDestruction() *replica {
	var owners []string
	err := dbtest.Query(c.db, &owners, "SELECT lease_owner FROM operations WHERE state = ? AND lease_owner IS NOT NULL AND "+
		"((action IN ('terminate', 'reinstall') AND stage_index >= 1 AND stage <> 'stop') OR (action = 'restore' AND stage_index >= 2))",
		models.OpRunning)
	if err != nil || len(owners) == 0 {
		return nil
	}
	owner := owners[c.intn(len(owners))]
	for _, r := range c.replicas {
		r.mu.Lock()
		pid := 0
		if r.up && r.cmd != nil && r.cmd.Process != nil {
			pid = r.cmd.Process.Pid
		}
		r.mu.Unlock()
		if pid != 0 && strings.Contains(owner, fmt.Sprintf("-%d-", pid)) {
			return r
		}
	}
	return nil
}

func (c *chaos) sawCreateTask() bool {
	var log []struct {
		Method string `json:"method"`
		Path   string `json:"path"`
	}
	_ = json.Unmarshal(c.simCtl("GET", "/_sim/requests", nil), &log)
	for _, r := range log {
		parts := strings.Split(strings.Trim(r.Path, "/"), "/")
		if r.Method == "POST" && len(parts) == 3 && parts[0] == "nodes" && parts[2] == "lxc" {
			return true
		}
	}
	return false
}

// logUnfinished says, for each operation that is not terminal, what it is and what its service
// is doing: its state and the operation holding its lock.
func (c *chaos) logUnfinished(ops []models.Operation, byID map[string]models.Operation) {
	for _, op := range ops {
		if models.IsTerminal(op.State) {
			continue
		}
		svc, err := c.db.GetService(context.Background(), models.ServiceKey{ClientID: op.ClientID, ServiceID: op.ServiceID})
		if err != nil {
			c.t.Logf("unfinished %s %s of %s (attempts %d): service: %v", op.ID, op.Action, op.ServiceID, op.Attempts, err)
			continue
		}
		holder := "none"
		if svc.LockOperationID != nil {
			h := byID[*svc.LockOperationID]
			holder = fmt.Sprintf("%s %s %s", h.ID, h.Action, h.State)
		}
		c.t.Logf("unfinished %s %s of %s (state %s, attempts %d, created %s): service state %s, lock held by %s",
			op.ID, op.Action, op.ServiceID, op.State, op.Attempts, op.CreatedAt.Format(time.RFC3339), svc.State, holder)
	}
}
