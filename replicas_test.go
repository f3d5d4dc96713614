package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"pvebill/jobs"
	"pvebill/models"
	"pvebill/models/dbtest"
	"pvebill/modules/pve/pvesim"
	"pvebill/modules/pve/pvesim/simtest"
	"pvebill/modules/stack"
	"pvebill/modules/stack/stacktest/poll"
	"pvebill/server"
	"pvebill/server/config"
)

// replicaSecret is the billing client's secret of the in-process apps these tests start.
const replicaSecret = "replica-test-secret-0123456789"

// inProcessReplicas builds n whole apps (each its own DB pool, executor owner and scheduler)
// on one fresh MariaDB database and one simulator, as n replicas behind a load balancer.
func inProcessReplicas(t *testing.T, sim *pvesim.Sim, n int, sampling string) []*app {
	t.Helper()
	if len(dbtest.Dialects(t)) < 2 {
		t.Skip("several replicas need MariaDB (PVEBILL_TEST_MYSQL_DSN)")
	}
	srv := simtest.Start(t, sim)
	cfg := config.Defaults()
	cfg.Database = config.Database{Driver: models.MySQL, DSN: dbtest.DSN(t, models.MySQL)}
	cfg.Clients = []config.Client{{ID: "whmcs", Secret: replicaSecret, Scopes: []string{"billing", "admin"}}}
	cfg.Clusters = []config.Cluster{{Name: "default", URL: srv.URL, TokenID: simtest.TokenID, TokenSecret: simtest.TokenSecret}}
	cfg.Executor.PollInterval = 20 * time.Millisecond
	cfg.Jobs.SwapSampling = sampling
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	apps := make([]*app, n)
	for i := range apps {
		schema := stack.RequireSchema // the first replica migrates, the others find it done
		if i == 0 {
			schema = stack.MigrateSchema
		}
		a, err := buildApp(context.Background(), cfg, log, schema)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { a.db.Close() })
		apps[i] = a
	}
	if err := apps[0].loadExamplePlans(context.Background()); err != nil {
		t.Fatal(err)
	}
	return apps
}

// signedCall sends one signed API request to base.
func signedCall(t *testing.T, base, method, path string, body []byte) (int, map[string]any) {
	t.Helper()
	status, m, err := signedRequest(base, method, path, body)
	if err != nil {
		t.Fatal(err)
	}
	return status, m
}

// signedCallErr is signedCall for a goroutine that is not the test's: a transport error is a
// status of 0.
func signedCallErr(base, method, path string) (int, map[string]any) {
	status, m, _ := signedRequest(base, method, path, nil)
	return status, m
}

func signedRequest(base, method, path string, body []byte) (int, map[string]any, error) {
	req, _ := http.NewRequest(method, base+path, bytes.NewReader(body))
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	req.Header.Set(server.HeaderKey, "whmcs")
	req.Header.Set(server.HeaderTimestamp, ts)
	req.Header.Set(server.HeaderSignature, server.Sign([]byte(replicaSecret), ts, method, req.URL.RequestURI(), body))
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m, nil
}

func opState(m map[string]any) string {
	op, _ := m["operation"].(map[string]any)
	s, _ := op["state"].(string)
	return s
}

// R16 on three replicas: limit enforcement and drift repair run on one replica per tick, so a
// suspended container found running is stopped by exactly one operation fleet-wide, although
// all three replicas fire the job at the same moments.
func TestReplicasIssueOneStopPerViolation(t *testing.T) {
	sim := pvesim.Demo(pvesim.Options{TokenID: simtest.TokenID, TokenSecret: simtest.TokenSecret})
	sim.SetClusterFirewall(true)
	apps := inProcessReplicas(t, sim, 3, "@every 1m")
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	for _, a := range apps {
		a.exec.Start(ctx)
		defer a.exec.Stop(t.Context())
	}
	bases := make([]string, len(apps))
	for i, a := range apps {
		hs := httptest.NewServer(a.srv)
		defer hs.Close()
		bases[i] = hs.URL
	}
	status, m := signedCall(t, bases[0], "POST", "/v1/services?wait=30", []byte(`{"service_id":"lim-1","plan":"ct-2g","hostname":"lim.example.com","os":"debian-12","root_password":"lim-pass-1234"}`))
	if status != 200 || opState(m) != "succeeded" {
		t.Fatalf("create: %d %v", status, m)
	}
	status, m = signedCall(t, bases[1], "POST", "/v1/services/lim-1/suspend?wait=30", []byte(`{}`))
	if status != 200 || opState(m) != "succeeded" {
		t.Fatalf("suspend: %d %v", status, m)
	}
	svc, err := apps[0].db.GetService(ctx, models.ServiceKey{ClientID: "whmcs", ServiceID: "lim-1"})
	if err != nil || svc.VMID == nil {
		t.Fatalf("service: %v %v", svc, err)
	}
	vmid := *svc.VMID
	g, ok := sim.Guest(vmid)
	if !ok || g.Status != "stopped" {
		t.Fatalf("guest after suspend: %+v", g)
	}
	// Somebody starts it behind our back.
	simPost(t, sim, fmt.Sprintf("/nodes/%s/lxc/%d/status/start", g.Node, vmid))
	sim.ResetLog()
	before := dbtest.Count(t, apps[0].db, "SELECT COUNT(*) FROM operations WHERE service_id = ?", "lim-1")
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for tick := range 3 {
		now := start.Add(time.Duration(tick) * time.Minute)
		var wg sync.WaitGroup
		for _, a := range apps {
			wg.Add(1)
			go func() {
				defer wg.Done()
				o := jobs.TickLease{Job: a.limits, DB: a.db, Owner: a.exec.Owner(), Every: time.Minute, Hold: time.Minute,
					Now: func() time.Time { return now }}
				if err := o.Run(ctx); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		// Let the queued stop finish before the next tick, as a minute between ticks would.
		for {
			if open := dbtest.Count(t, apps[0].db, "SELECT COUNT(*) FROM operations WHERE service_id = ? AND state IN ?", "lim-1",
				[]string{models.OpQueued, models.OpRunning}); open == 0 {
				break
			}
			select {
			case <-ctx.Done():
				t.Fatal("enforcement operation did not finish")
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	after := dbtest.Count(t, apps[0].db, "SELECT COUNT(*) FROM operations WHERE service_id = ?", "lim-1")
	if after-before != 1 {
		t.Fatalf("%d enforcement operations for one violation, want 1", after-before)
	}
	stops := 0
	for _, r := range sim.Requests() {
		if r.Method == "POST" && strings.HasPrefix(r.Path, fmt.Sprintf("/nodes/%s/lxc/%d/status/", g.Node, vmid)) {
			stops++
		}
	}
	if stops != 1 {
		t.Fatalf("%d stop/shutdown calls reached Proxmox for one violation, want 1", stops)
	}
	if g, _ := sim.Guest(vmid); g.Status != "stopped" {
		t.Fatalf("guest not stopped again: %s", g.Status)
	}
}

func simPost(t *testing.T, sim *pvesim.Sim, path string) {
	t.Helper()
	req := httptest.NewRequest("POST", "/api2/json"+path, nil)
	req.Header.Set("Authorization", "PVEAPIToken="+simtest.TokenID+"="+simtest.TokenSecret)
	w := httptest.NewRecorder()
	sim.ServeHTTP(w, req)
	if w.Code != 200 {
		t.Fatalf("POST %s: %d %s", path, w.Code, w.Body)
	}
	// The task finishes at its first status read; read the guest to settle it.
	var env struct {
		Data string `json:"data"`
	}
	_ = json.Unmarshal(w.Body.Bytes(), &env)
	node := strings.Split(path, "/")[2]
	poll.Until(t, 5*time.Second, "the task of "+path+" to stop", func() bool {
		r := httptest.NewRequest("GET", "/api2/json/nodes/"+node+"/tasks/"+env.Data+"/status", nil)
		r.Header.Set("Authorization", "PVEAPIToken="+simtest.TokenID+"="+simtest.TokenSecret)
		rw := httptest.NewRecorder()
		sim.ServeHTTP(rw, r)
		return strings.Contains(rw.Body.String(), `"stopped"`)
	})
}

// R31 on three replicas: 20 nodes are split between three samplers by node leases; once the
// split settles every node's container index is read exactly once per round fleet-wide, and
// when one replica stops, its nodes are read by the others from the next rounds on.
func TestReplicasShareSamplingByNode(t *testing.T) {
	nodes := make([]string, 20)
	for i := range nodes {
		nodes[i] = fmt.Sprintf("pve%02d", i+1)
	}
	sim := pvesim.Demo(pvesim.Options{Nodes: nodes, TokenID: simtest.TokenID, TokenSecret: simtest.TokenSecret})
	apps := inProcessReplicas(t, sim, 3, "@every 1s")
	for _, a := range apps {
		a.shards.Start(t.Context())
		defer a.shards.Stop(t.Context())
	}
	// round runs one sampling round on the given replicas at once and returns how often each
	// node's index was read.
	round := func(live []*app) map[string]int {
		t.Helper()
		sim.ResetLog()
		var wg sync.WaitGroup
		for _, a := range live {
			wg.Add(1)
			go func() {
				defer wg.Done()
				a.sched.RunOnce(a.sampler, 5*time.Second)
				a.sampler.Wait()
			}()
		}
		wg.Wait()
		reads := map[string]int{}
		for _, r := range sim.Requests() {
			parts := strings.Split(r.Path, "/")
			if r.Method == "GET" && len(parts) == 4 && parts[1] == "nodes" && parts[3] == "lxc" {
				reads[parts[2]]++
			}
		}
		for n, c := range reads {
			if c > 1 {
				t.Fatalf("node %s read %d times in one round", n, c)
			}
		}
		return reads
	}
	balanced := func() (bool, map[string]int) {
		holders, err := apps[0].db.LeaseHolders(t.Context(), models.LeaseNodePrefix)
		if err != nil {
			t.Fatal(err)
		}
		per := map[string]int{}
		for _, owner := range holders {
			per[owner]++
		}
		for _, c := range per {
			if c < 6 || c > 7 {
				return false, per
			}
		}
		return len(per) == 3, per
	}
	settled := false
	var per map[string]int
	for r := 0; r < 10 && !settled; r++ {
		covered := len(round(apps)) == len(nodes)
		ok, p := balanced()
		settled, per = covered && ok, p
	}
	if !settled {
		t.Fatalf("the three replicas did not settle on 7/7/6 covering all 20 nodes: %v", per)
	}
	// Settled: every following round reads each node exactly once.
	for range 3 {
		if got := len(round(apps)); got != len(nodes) {
			t.Fatalf("a settled round read %d of %d nodes", got, len(nodes))
		}
	}
	// Replica 2 stops gracefully: its leases are released and the others cover its nodes.
	apps[2].shards.Stop(t.Context())
	// Released leases are free at once; on a loaded machine give the survivors' rounds up to two
	// intervals (the bound for a dead replica) rather than a fixed number of back-to-back rounds.
	if !poll.Wait(2*time.Second, func() bool { return len(round(apps[:2])) == len(nodes) }) {
		t.Fatal("the two remaining replicas did not take over the stopped replica's nodes")
	}
}
