package main

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"testing"

	"pvebill/models"
	"pvebill/models/dbtest"
)

// The chaos suite on a three-node MariaDB Galera cluster (R51): the cluster comes from
// scripts/galera.sh (bootstrap of node 1, the others joining by SST), each replica uses its own
// node and fails over to the others, and besides the replica kills and the simulator faults the
// database nodes are SIGKILLed one at a time (quorum holds) and each rejoins before the next
// kill. The invariants are the chaos suite's.
//
//	make chaos-galera        the long run (>= 3,000 operations, >= 20 database-node kills)
//	make chaos-galera-short  the short run (.ci/run)
//
// PVEBILL_TEST_GALERA (short | long) turns it on; it needs mariadbd, the galera-4 provider and
// rsync, and fails, never skips, when they are missing.

var (
	galeraShort = chaosScale{name: "galera-short", services: 30, minOps: 150, minKills: 4, workers: 10,
		killGap: [2]int{20, 40}, minDBKills: 3, dbKillGap: [2]int{1, 3}}
	galeraLong = chaosScale{name: "galera-long", services: 700, minOps: 3000, minKills: 30, workers: 24,
		killGap: [2]int{60, 120}, minDBKills: 20, dbKillGap: [2]int{2, 6}}
)

func TestChaosGalera(t *testing.T) {
	var scale chaosScale
	switch v := os.Getenv("PVEBILL_TEST_GALERA"); v {
	case "short":
		scale = galeraShort
	case "long":
		scale = galeraLong
	case "":
		t.Skip("the Galera chaos run is make chaos-galera (PVEBILL_TEST_GALERA=short|long)")
	default:
		t.Fatalf("PVEBILL_TEST_GALERA=%q: want short or long", v)
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
	c.galera = startGalera(t)
	c.retriesByCode = map[string]int64{}
	c.run()
}

// galeraCluster is a cluster brought up by scripts/galera.sh in a folder of its own.
type galeraCluster struct {
	t      *testing.T
	script string
	dir    string
	admin  []string // root DSNs of the three nodes
}

func startGalera(t *testing.T) *galeraCluster {
	script, err := filepath.Abs("scripts/galera.sh")
	if err != nil {
		t.Fatal(err)
	}
	// Not t.TempDir: the nodes run as the mysql user, which must reach their folder.
	dir, err := os.MkdirTemp("", "pvebill-galera-")
	if err != nil {
		t.Fatal(err)
	}
	g := &galeraCluster{t: t, script: script, dir: dir}
	t.Cleanup(func() {
		if out, err := exec.Command(script, "down", dir).CombinedOutput(); err != nil {
			t.Logf("galera down: %v\n%s", err, out)
		}
	})
	began := time.Now()
	if out, err := exec.Command(script, "up", dir).CombinedOutput(); err != nil {
		t.Fatalf("galera up: %v\n%s", err, out)
	}
	out, err := exec.Command(script, "dsns").Output()
	if err != nil {
		t.Fatal(err)
	}
	g.admin = strings.Fields(string(out))
	t.Logf("three-node Galera cluster up in %s: %v", time.Since(began).Round(time.Second), g.admin)
	return g
}

func (g *galeraCluster) kill(n int) error {
	out, err := exec.Command(g.script, "kill", g.dir, strconv.Itoa(n)).CombinedOutput()
	if err != nil {
		return fmt.Errorf("kill node %d: %w: %s", n, err, out)
	}
	return nil
}

func (g *galeraCluster) start(n int) error {
	out, err := exec.Command(g.script, "start", g.dir, strconv.Itoa(n)).CombinedOutput()
	if err != nil {
		return fmt.Errorf("start node %d: %w: %s", n, err, out)
	}
	return nil
}

// setUpGalera starts the simulator, creates the chaos database on the cluster (DDL runs
// cluster-wide), opens the checker's handle over every node and writes the plans file; it returns
// node 1's DSN.
func (c *chaos) setUpGalera() string {
	t := c.t
	c.startSim()
	admin, err := models.Open(models.MySQL, c.galera.admin[0])
	if err != nil {
		t.Fatal(err)
	}
	dbtest.Exec(t, admin, "CREATE DATABASE pvebill_chaos CHARACTER SET utf8mb4 COLLATE utf8mb4_bin")
	_ = admin.Close()
	for _, a := range c.galera.admin {
		c.dsns = append(c.dsns, strings.TrimSuffix(a, "/")+"/pvebill_chaos")
	}
	db, err := models.Open(models.MySQL, c.dsns[0], c.dsns[1:]...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	c.db = db
	plans, err := os.ReadFile("modules/plans/examples.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(c.dir, "plans.yaml"), plans, 0o600); err != nil {
		t.Fatal(err)
	}
	return c.dsns[0]
}

// dbKiller SIGKILLs one database node at a time, at seeded random nodes: the node is restarted
// after a short pause and waited for until it is Synced again, then a seeded pause passes
// before the next kill. Two nodes always run, so the cluster keeps its quorum.
func (c *chaos) dbKiller(stop chan struct{}) {
	for {
		pause := time.Duration(c.scale.dbKillGap[0]+c.intn(c.scale.dbKillGap[1]-c.scale.dbKillGap[0]+1)) * time.Second
		select {
		case <-stop:
			return
		case <-time.After(pause):
		}
		if c.done.Load() && c.dbKills.Load() >= int64(c.scale.minDBKills) {
			continue
		}
		n := 1 + c.intn(3)
		if err := c.galera.kill(n); err != nil {
			c.t.Error(err)
			return
		}
		c.dbKills.Add(1)
		time.Sleep(time.Duration(500+c.intn(1500)) * time.Millisecond)
		if err := c.galera.start(n); err != nil {
			c.t.Error(err)
			return
		}
	}
}

// scrapeRetries adds the replica's transaction retries (pvebill_db_tx_retries_total by code)
// and give-ups (pvebill_db_tx_retries_exhausted_total) to the run's count; it is read just
// before the replica is stopped or killed.
func (c *chaos) scrapeRetries(r *replica) {
	if c.galera == nil {
		return
	}
	client := http.Client{Timeout: time.Second}
	resp, err := client.Get("http://" + r.addr + "/metrics")
	if err != nil {
		return // the replica is not up yet: nothing counted since its start
	}
	defer func() { _ = resp.Body.Close() }()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		m := retryLineRE.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		v, err := strconv.ParseFloat(m[3], 64)
		if err != nil {
			continue
		}
		if m[1] == "exhausted_" {
			c.dbGiveUps.Add(int64(v))
			continue
		}
		c.dbRetries.Add(int64(v))
		c.mu.Lock()
		c.retriesByCode[m[2]] += int64(v)
		c.mu.Unlock()
	}
}

var retryLineRE = regexp.MustCompile(`^pvebill_db_tx_retries_(exhausted_)?total\{code="(\d+)"\} (\S+)$`)

// reportGalera logs the run's Galera figures in one line (the table of docs/operations.md reads them).
func (c *chaos) reportGalera(violations int) {
	ops := c.acceptedCount()
	per1000 := 0.0
	if ops > 0 {
		per1000 = float64(c.dbRetries.Load()) * 1000 / float64(ops)
	}
	c.t.Logf("galera %s seed=%d: %d operations, %d pvebill kills, %d database-node kills, %d invariant violations, "+
		"%d transaction retries (%.1f per 1,000 operations; by code %v), %d given up", c.scale.name, c.seed, ops, c.kills.Load(),
		c.dbKills.Load(), violations, c.dbRetries.Load(), per1000, c.retriesByCode, c.dbGiveUps.Load())
	if c.dbKills.Load() < int64(c.scale.minDBKills) {
		c.t.Errorf("only %d database-node kills, want at least %d", c.dbKills.Load(), c.scale.minDBKills)
	}
}
