package jobs_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"pvebill/jobs"
	"pvebill/models"
	"pvebill/models/dbtest"
	"pvebill/modules/kinds"
	"pvebill/modules/lxc"
	"pvebill/modules/pve"
	"pvebill/modules/pve/pvesim"
	"pvebill/modules/pve/pvesim/simtest"
	"pvebill/modules/stack/stacktest/poll"
	"pvebill/modules/usage"
)

// simStart is a bucket boundary: the simulator's clock is frozen there and moved by Advance.
var simStart = time.Date(2026, 3, 1, 12, 0, 10, 0, time.UTC)

type samplerEnv struct {
	t       *testing.T
	sim     *simtest.Server
	db      *models.DB
	client  *pve.Client
	reg     *prometheus.Registry
	sampler *jobs.SwapSampler
	folder  *usage.Folder
}

func newSamplerEnv(t *testing.T, db *models.DB, nodes []string, cfg jobs.SamplerConfig) *samplerEnv {
	t.Helper()
	sim := pvesim.New(pvesim.Options{Nodes: nodes, TokenID: simtest.TokenID, TokenSecret: simtest.TokenSecret,
		Now: func() time.Time { return simStart }})
	srv := simtest.Start(t, sim)
	client, err := pve.New(pve.Config{Cluster: "c1", URL: srv.URL, TokenID: simtest.TokenID, TokenSecret: simtest.TokenSecret,
		RetryBaseDelay: 10 * time.Millisecond, RetryMaxDelay: 20 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.Close)
	if db == nil {
		db = dbtest.Open(t, models.SQLite)
	}
	reg := prometheus.NewRegistry()
	folder := usage.NewFolder(db)
	if cfg.Stagger == 0 {
		cfg.Stagger = -1
	}
	cfg.Now = sim.Now
	s := jobs.NewSwapSampler(db, []kinds.Cluster{{Name: "c1", Client: client}}, []kinds.SwapSampler{lxc.New()}, folder,
		usage.NewGuestMetrics(reg), jobs.NewSamplerMetrics(reg), nil, cfg)
	t.Cleanup(s.Close)
	return &samplerEnv{t: t, sim: srv, db: db, client: client, reg: reg, sampler: s, folder: folder}
}

// guest seeds a guest in the simulator and, when serviceID is set, a managed service for it.
func (e *samplerEnv) guest(vmid int, typ, node string, running bool, serviceID string) {
	e.t.Helper()
	conf := map[string]string{"memory": "1024", "cores": "1"}
	guestType := "vm"
	if typ == "lxc" {
		guestType = "container"
		conf["hostname"] = fmt.Sprintf("ct%d", vmid)
		conf["swap"] = "512"
		conf["rootfs"] = fmt.Sprintf("local-lvm:vm-%d-disk-0,size=8G", vmid)
	} else {
		conf["name"] = fmt.Sprintf("vm%d", vmid)
		conf["scsi0"] = fmt.Sprintf("local-lvm:vm-%d-disk-0,size=8G", vmid)
	}
	if err := e.sim.SeedGuest(pvesim.Guest{VMID: vmid, Type: typ, Node: node, Running: running, Config: conf}); err != nil {
		e.t.Fatal(err)
	}
	if serviceID == "" {
		return
	}
	id := vmid
	svc := &models.Service{ServiceID: serviceID, ClientID: "whmcs", Plan: "p", GuestType: guestType, Cluster: "c1",
		Node: node, VMID: &id, State: models.ServiceActive}
	if err := e.db.InsertService(context.Background(), svc); err != nil {
		e.t.Fatal(err)
	}
	// The service exists before the simulator's (frozen, past) clock.
	dbtest.SetServiceCreated(e.t, e.db, serviceID, simStart.Add(-24*time.Hour))
}

func (e *samplerEnv) run(d time.Duration) time.Duration {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	start := time.Now()
	if err := e.sampler.Run(ctx); err != nil {
		e.t.Logf("round: %v", err)
	}
	return time.Since(start)
}

// calls counts the logged requests by "METHOD path".
func (e *samplerEnv) calls() map[string]int {
	out := map[string]int{}
	for _, r := range e.sim.Requests() {
		out[r.Method+" "+r.Path]++
	}
	return out
}

func (e *samplerEnv) rounds(node, result string) float64 {
	return e.counter("pvebill_swap_sampling_rounds_total", map[string]string{"cluster": "c1", "node": node, "result": result})
}

func (e *samplerEnv) counter(name string, labels map[string]string) float64 {
	e.t.Helper()
	fams, err := e.reg.Gather()
	if err != nil {
		e.t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	next:
		for _, m := range f.GetMetric() {
			got := map[string]string{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			for k, v := range labels {
				if got[k] != v {
					continue next
				}
			}
			switch {
			case m.GetCounter() != nil:
				return m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				return m.GetGauge().GetValue()
			case m.GetHistogram() != nil:
				return float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return 0
}

// serviceIDs lists every service (the buckets are read per service).
func (e *samplerEnv) serviceIDs() []string {
	e.t.Helper()
	var ids []string
	dbtest.Scan(e.t, e.db, &ids, "SELECT service_id FROM services")
	return ids
}

func (e *samplerEnv) buckets() map[string]models.UsageBucket {
	e.t.Helper()
	rows, err := e.db.UsageBuckets(context.Background(), e.serviceIDs(), 0, 1<<40)
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string]models.UsageBucket{}
	for _, r := range rows {
		out[r.ServiceID] = r
	}
	return out
}

// One index call per node per round and nothing else: no per-guest call when the index has
// swap, nothing for VMs, stopped or unmanaged containers; samples only for running containers
// of managed services, with the swap the node reported.
func TestSamplerOneIndexCallPerNode(t *testing.T) {
	e := newSamplerEnv(t, nil, []string{"pve1", "pve2", "pve3"}, jobs.SamplerConfig{})
	e.guest(1001, "lxc", "pve1", true, "svc-1001")
	e.guest(1002, "lxc", "pve1", false, "svc-1002") // stopped
	e.guest(1003, "lxc", "pve1", true, "")          // not ours
	e.guest(2001, "lxc", "pve2", true, "svc-2001")
	e.guest(2002, "qemu", "pve2", true, "svc-2002") // a VM
	e.guest(3001, "lxc", "pve3", true, "svc-3001")
	want := map[int]pve.LXCStatus{}
	for _, id := range []int{1001, 2001, 3001} {
		st, err := e.client.Node(map[int]string{1001: "pve1", 2001: "pve2", 3001: "pve3"}[id]).LXC(id).Status(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		want[id] = st
	}
	e.sim.ResetLog()

	e.run(10 * time.Second)
	e.sim.Advance(time.Minute)
	e.run(10 * time.Second)

	got := e.calls()
	wantCalls := map[string]int{"GET /nodes": 2, "GET /nodes/pve1/lxc": 2, "GET /nodes/pve2/lxc": 2, "GET /nodes/pve3/lxc": 2}
	if fmt.Sprint(got) != fmt.Sprint(wantCalls) {
		t.Fatalf("calls = %v, want %v", got, wantCalls)
	}
	b := e.buckets()
	if len(b) != 3 || b["svc-1001"].Samples != 2 || b["svc-2001"].Samples != 2 || b["svc-3001"].Samples != 2 {
		t.Fatalf("buckets: %+v", b)
	}
	for id, st := range map[string]pve.LXCStatus{"svc-1001": want[1001], "svc-2001": want[2001], "svc-3001": want[3001]} {
		if *b[id].SwapLimit != int64(*st.MaxSwap) || *b[id].DiskMax < int64(st.Disk) || *b[id].SwapMax < int64(*st.Swap) {
			t.Errorf("%s: bucket %+v vs status %+v", id, b[id], st)
		}
		// The first round read the node at the clock the status above was read at: the same swap.
		if w, ok := e.folder.SwapWindow(models.ServiceKey{ClientID: "whmcs", ServiceID: id}); !ok || w.Samples != 2 {
			t.Errorf("%s: swap window %+v", id, w)
		}
	}
	if e.rounds("pve1", "ok") != 2 || e.rounds("pve2", "ok") != 2 || e.rounds("pve3", "ok") != 2 {
		t.Fatal("rounds not counted ok")
	}
	if n := e.counter("pvebill_swap_samples_total", map[string]string{"node": "pve1", "result": "ok"}); n != 2 {
		t.Fatalf("samples ok on pve1 = %v", n)
	}
}

// A node whose index lacks swap (older Proxmox) gets status/current for exactly its running
// managed containers, never more than Concurrency at once; nothing for its VM, its stopped or
// unmanaged containers. The other node still costs one call.
func TestSamplerFallbackWithoutSwapInIndex(t *testing.T) {
	e := newSamplerEnv(t, nil, []string{"pve1", "pve2"}, jobs.SamplerConfig{Concurrency: 2})
	e.sim.SetNodeOptions("pve2", pvesim.NodeOptions{NoSwapInIndex: true, OldIndex: true, Latency: 20 * time.Millisecond})
	e.guest(1001, "lxc", "pve1", true, "svc-1001")
	var running []int
	for i := 0; i < 7; i++ {
		id := 2001 + i
		e.guest(id, "lxc", "pve2", true, fmt.Sprintf("svc-%d", id))
		running = append(running, id)
	}
	e.guest(2101, "lxc", "pve2", false, "svc-2101") // stopped
	e.guest(2102, "lxc", "pve2", true, "")          // not ours
	e.guest(2103, "qemu", "pve2", true, "svc-2103") // VM
	e.sim.ResetLog()

	e.run(10 * time.Second)

	got := e.calls()
	want := map[string]int{"GET /nodes": 1, "GET /nodes/pve1/lxc": 1, "GET /nodes/pve2/lxc": 1}
	for _, id := range running {
		want[fmt.Sprintf("GET /nodes/pve2/lxc/%d/status/current", id)] = 1
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("calls:\n got %v\nwant %v", got, want)
	}
	if m := e.sim.MaxInFlight("pve2"); m > 2 || m < 1 {
		t.Fatalf("max in flight on pve2 = %d, cap 2", m)
	}
	b := e.buckets()
	if len(b) != 8 {
		t.Fatalf("buckets for %d services, want 8: %v", len(b), keys(b))
	}
	for _, id := range running {
		bk := b[fmt.Sprintf("svc-%d", id)]
		if bk.SwapSamples != 1 || bk.SwapLimit == nil || *bk.SwapLimit != 512<<20 {
			t.Errorf("fallback sample of %d: %+v", id, bk)
		}
	}
	if e.rounds("pve2", "ok") != 1 {
		t.Fatal("fallback round not ok")
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// A dead node costs at most its deadline, does not slow the others, is counted as failed and
// backs off: after n consecutive failures it sits out 2^(n-1)-1 rounds.
func TestSamplerDeadNodeAndBackoff(t *testing.T) {
	// A deadline long enough that a healthy round (well under half of it) stays clear of it
	// even on a loaded 2-core machine under the race detector.
	const deadline = time.Second
	e := newSamplerEnv(t, nil, []string{"pve1", "pve2", "pve3"}, jobs.SamplerConfig{RoundDeadline: deadline})
	e.guest(1001, "lxc", "pve1", true, "svc-1001")
	e.guest(2001, "lxc", "pve2", true, "svc-2001")
	e.guest(3001, "lxc", "pve3", true, "svc-3001")
	e.sim.InjectFault(pvesim.Fault{Method: "GET", PathPattern: "/nodes/pve3/lxc", Hang: true})
	e.sim.ResetLog()

	took := e.run(10 * time.Second)
	if took > deadline+time.Second {
		t.Fatalf("round took %v with a %v node deadline", took, deadline)
	}
	if e.rounds("pve3", "failed") != 1 || e.rounds("pve1", "ok") != 1 || e.rounds("pve2", "ok") != 1 {
		t.Fatalf("results: pve3 failed %v, pve1 ok %v, pve2 ok %v", e.rounds("pve3", "failed"), e.rounds("pve1", "ok"), e.rounds("pve2", "ok"))
	}
	// The healthy nodes' rounds were short: the dead one did not hold them up.
	if b := e.buckets(); len(b) != 2 || b["svc-3001"].Samples != 0 {
		t.Fatalf("buckets: %v", keys(b))
	}
	fams, _ := e.reg.Gather()
	for _, f := range fams {
		if f.GetName() != "pvebill_swap_sampling_round_duration_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			node := ""
			for _, l := range m.GetLabel() {
				if l.GetName() == "node" {
					node = l.GetValue()
				}
			}
			h := m.GetHistogram()
			if avg := h.GetSampleSum() / float64(h.GetSampleCount()); node != "pve3" && avg > float64(deadline)/float64(time.Second)/2 {
				t.Errorf("node %s round took %.3fs next to a dead node", node, avg)
			}
		}
	}
	// Rounds 2..6: attempts at 2 (fail → sit out 1), 4 (fail → sit out 3), then 3 skipped.
	var attempts []float64
	for range 5 {
		e.sim.Advance(time.Minute)
		e.run(10 * time.Second)
		attempts = append(attempts, e.rounds("pve3", "failed"))
	}
	if fmt.Sprint(attempts) != "[2 2 3 3 3]" {
		t.Fatalf("pve3 attempts after each round = %v, want [2 2 3 3 3]", attempts)
	}
	// The simulator logs a hung request once the client has given up on it.
	poll.Until(t, 2*time.Second, "the third pve3 index call in the simulator's log", func() bool {
		return e.calls()["GET /nodes/pve3/lxc"] >= 3
	})
	if n := e.calls()["GET /nodes/pve3/lxc"]; n != 3 {
		t.Fatalf("pve3 index calls = %d, want 3", n)
	}
	if f := e.counter("pvebill_swap_sampling_node_consecutive_failures", map[string]string{"node": "pve3"}); f != 3 {
		t.Fatalf("consecutive failures = %v", f)
	}
	if e.rounds("pve3", "skipped") != 3 || e.rounds("pve1", "ok") != 6 {
		t.Fatalf("pve3 skipped %v, pve1 ok %v", e.rounds("pve3", "skipped"), e.rounds("pve1", "ok"))
	}
	// The node recovers: it sits out its last backoff round, then the attempt succeeds and the
	// failures reset.
	e.sim.ClearFaults()
	for range 2 {
		e.sim.Advance(time.Minute)
		e.run(10 * time.Second)
	}
	if e.rounds("pve3", "ok") != 1 || e.rounds("pve3", "skipped") != 4 || e.counter("pvebill_swap_sampling_node_consecutive_failures", map[string]string{"node": "pve3"}) != 0 {
		t.Fatalf("pve3 did not recover: ok %v", e.rounds("pve3", "ok"))
	}
}

// A node whose previous round still runs is skipped, never stacked, and counted; the other
// nodes go on; once the slow round ends the node is sampled again.
func TestSamplerSkipsNotStacks(t *testing.T) {
	e := newSamplerEnv(t, nil, []string{"pve1", "pve2"}, jobs.SamplerConfig{RoundDeadline: 5 * time.Second})
	e.guest(1001, "lxc", "pve1", true, "svc-1001")
	e.guest(2001, "lxc", "pve2", true, "svc-2001")
	e.sim.SetNodeOptions("pve2", pvesim.NodeOptions{Latency: 600 * time.Millisecond})
	e.sim.ResetLog()

	e.run(150 * time.Millisecond) // the job's round ends; pve2's round goes on
	e.sim.Advance(time.Minute)
	e.run(150 * time.Millisecond)
	if e.rounds("pve2", "skipped") != 1 || e.rounds("pve1", "ok") != 2 {
		t.Fatalf("pve2 skipped %v, pve1 ok %v", e.rounds("pve2", "skipped"), e.rounds("pve1", "ok"))
	}
	e.sampler.Wait()
	if n := e.calls()["GET /nodes/pve2/lxc"]; n != 1 {
		t.Fatalf("pve2 index calls = %d, want 1 (stacked?)", n)
	}
	if e.rounds("pve2", "ok") != 1 {
		t.Fatal("the slow round did not finish")
	}
	e.sim.Advance(time.Minute)
	e.run(5 * time.Second)
	if e.rounds("pve2", "ok") != 2 || e.calls()["GET /nodes/pve2/lxc"] != 2 {
		t.Fatalf("pve2 not sampled after its slow round: ok %v", e.rounds("pve2", "ok"))
	}
}

// The per-guest series, as exposed: four per sampled guest with the values the node reported;
// gone when the guest stops, when its service is terminated, and when its node fails.
func TestSamplerGuestSeriesExposition(t *testing.T) {
	e := newSamplerEnv(t, nil, []string{"pve1", "pve2"}, jobs.SamplerConfig{RoundDeadline: time.Second})
	e.guest(1001, "lxc", "pve1", true, "svc-1001")
	e.guest(1002, "lxc", "pve1", true, "svc-1002")
	e.guest(2001, "lxc", "pve2", true, "svc-2001")
	e.guest(2002, "qemu", "pve2", true, "svc-2002")
	var swaps []int64
	for _, id := range []int{1001, 1002, 2001} {
		st, err := e.client.Node(map[int]string{1001: "pve1", 1002: "pve1", 2001: "pve2"}[id]).LXC(id).Status(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		swaps = append(swaps, int64(*st.Swap))
	}
	e.run(10 * time.Second)

	var exp strings.Builder
	for _, name := range []string{"pvebill_guest_swap_5m_avg_bytes", "pvebill_guest_swap_5m_max_bytes", "pvebill_guest_swap_bytes", "pvebill_guest_swap_limit_bytes"} {
		help := map[string]string{
			"pvebill_guest_swap_bytes":        "Swap used by the guest at its latest sample.",
			"pvebill_guest_swap_limit_bytes":  "Swap the guest may use (its configured swap).",
			"pvebill_guest_swap_5m_avg_bytes": "Average swap used over the last five minutes of samples.",
			"pvebill_guest_swap_5m_max_bytes": "Maximum swap used over the last five minutes of samples.",
		}[name]
		fmt.Fprintf(&exp, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name)
		for i, g := range []struct {
			node string
			vmid int
		}{{"pve1", 1001}, {"pve1", 1002}, {"pve2", 2001}} {
			v := swaps[i]
			if name == "pvebill_guest_swap_limit_bytes" {
				v = 512 << 20
			}
			fmt.Fprintf(&exp, "%s{client_id=\"whmcs\",cluster=\"c1\",guest_type=\"container\",node=%q,service_id=\"svc-%d\",vmid=\"%d\"} %d\n", name, g.node, g.vmid, g.vmid, v)
		}
	}
	names := []string{"pvebill_guest_swap_bytes", "pvebill_guest_swap_limit_bytes", "pvebill_guest_swap_5m_avg_bytes", "pvebill_guest_swap_5m_max_bytes"}
	if err := testutil.GatherAndCompare(e.reg, strings.NewReader(exp.String()), names...); err != nil {
		t.Fatal(err)
	}

	// 1002 stops, svc-2001 is terminated: both lose every series; then pve1 dies: 1001 goes too.
	if _, err := e.client.Node("pve1").LXC(1002).Stop(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := e.db.UpdateService(t.Context(), models.ServiceKey{ClientID: "whmcs", ServiceID: "svc-2001"}, map[string]any{"state": models.ServiceTerminated}); err != nil {
		t.Fatal(err)
	}
	e.sim.Advance(time.Minute)
	e.run(10 * time.Second)
	if n := testutil.CollectAndCount(e.reg, names...); n != 4 {
		t.Fatalf("%d series after a stop and a termination, want 4 (one guest)", n)
	}
	e.sim.SetNodeOnline("pve1", false)
	e.sim.Advance(time.Minute)
	e.run(10 * time.Second)
	if n := testutil.CollectAndCount(e.reg, names...); n != 0 {
		t.Fatalf("%d series left after the node failed", n)
	}

	// The node is back; then the cluster's node list fails: the job's round fails, no series stay.
	e.sim.SetNodeOnline("pve1", true)
	for range 2 {
		e.sim.Advance(time.Minute)
		e.run(10 * time.Second)
	}
	if n := testutil.CollectAndCount(e.reg, names...); n != 4 {
		t.Fatalf("%d series after the node came back, want 4", n)
	}
	e.sim.InjectFault(pvesim.Fault{Method: "GET", PathPattern: "/nodes", Status: 500, Message: "cluster not ready - no quorum?"})
	e.sim.Advance(time.Minute)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := e.sampler.Run(ctx); err == nil {
		t.Fatal("a round without the node list succeeded")
	}
	if n := testutil.CollectAndCount(e.reg, names...); n != 0 {
		t.Fatalf("%d series left after the node list failed", n)
	}
	if e.rounds("", "failed") != 1 {
		t.Fatal("cluster-level failure not counted")
	}
}

// Node rounds start staggered across the stagger window, not all at once.
func TestSamplerStaggersNodes(t *testing.T) {
	const stagger = 400 * time.Millisecond
	e := newSamplerEnv(t, nil, []string{"pve1", "pve2"}, jobs.SamplerConfig{Stagger: stagger})
	e.guest(1001, "lxc", "pve1", true, "svc-1001")
	e.guest(2001, "lxc", "pve2", true, "svc-2001")
	if took := e.run(10 * time.Second); took < stagger/2 {
		t.Fatalf("round took %v: the second node did not wait its %v share of the stagger", took, stagger/2)
	}
	if e.rounds("pve1", "ok") != 1 || e.rounds("pve2", "ok") != 1 {
		t.Fatal("both nodes should be sampled")
	}
	if d, ok := jobs.SpecInterval("@every 30s"); !ok || d != 30*time.Second {
		t.Fatalf("SpecInterval = %v, %v", d, ok)
	}
	if _, ok := jobs.SpecInterval("*/5 * * * *"); ok {
		t.Fatal("a cron expression has no fixed interval here")
	}
}

// From the node's answers to the report: five rounds a minute apart fill one bucket, and the
// report's swap avg/max, memory and traffic equal what the simulator reported at each round.
func TestSamplerToReport(t *testing.T) {
	e := newSamplerEnv(t, nil, []string{"pve1"}, jobs.SamplerConfig{})
	e.guest(1001, "lxc", "pve1", true, "svc-1001")
	var swaps, mems, netins []int64
	for range 5 {
		st, err := e.client.Node("pve1").LXC(1001).Status(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		swaps, mems, netins = append(swaps, int64(*st.Swap)), append(mems, int64(st.Mem)), append(netins, int64(st.NetIn))
		e.run(10 * time.Second)
		e.sim.Advance(time.Minute)
	}
	start := usage.BucketStart(simStart)
	rep, err := usage.NewReporter(e.db, nil, e.sim.Now).Report(t.Context(),
		usage.Query{From: start, To: start.Add(usage.BucketWidth), Buckets: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Services) != 1 {
		t.Fatalf("services: %+v", rep.Services)
	}
	u := rep.Services[0]
	var swapSum, swapMax, memSum, memMax int64
	for i := range swaps {
		swapSum, memSum = swapSum+swaps[i], memSum+mems[i]
		swapMax, memMax = max(swapMax, swaps[i]), max(memMax, mems[i])
	}
	if u.Samples != 5 || *u.SwapAvgBytes != swapSum/5 || *u.SwapMaxBytes != swapMax ||
		*u.MemoryAvgBytes != memSum/5 || *u.MemoryMaxBytes != memMax || *u.NetInBytes != netins[4]-netins[0] {
		t.Fatalf("report %+v\nwant swap avg %d max %d, mem avg %d max %d, netin %d", u, swapSum/5, swapMax, memSum/5, memMax, netins[4]-netins[0])
	}
	if len(u.Buckets) != 1 || u.Buckets[0].Partial || u.Buckets[0].Samples != 5 {
		t.Fatalf("buckets: %+v", u.Buckets)
	}
}
