package bench

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"pvebill/jobs"
	"pvebill/models"
	"pvebill/models/dbtest"
	"pvebill/modules/kinds"
	"pvebill/modules/lxc"
	"pvebill/modules/pve"
	"pvebill/modules/pve/pvesim"
	"pvebill/modules/usage"
)

// modelText states the simulator's service-time model the scenarios run behind.
const modelText = "pvesim.Busy: 3 workers per node, a request holds one for a log-normal service time " +
	"(sigma 0.35, p99 about 2.3x the median), the simulator's handling inside it (the answer is held until the drawn time has passed); medians (pvesim.DefaultMedian): " +
	"container index GET /nodes/{node}/lxc 20 ms + 2 ms per container on the node, status/current 40 ms, " +
	"task status 10 ms, POST/PUT/DELETE 60 ms, other GETs 25 ms; cluster-wide paths use the entry node's workers"

const (
	tokenID     = "pvebill@pve!provision"
	tokenSecret = "00000000-0000-0000-0000-000000000000"
)

// samplerEnv is a simulated cluster of running containers, each a managed service, read by the
// real sampler through the busy front.
type samplerEnv struct {
	sim     *pvesim.Sim
	busy    *pvesim.Busy
	db      *models.DB
	reg     *prometheus.Registry
	client  *pve.Client
	sampler *jobs.SwapSampler
	nodes   []string
	guests  int
	conc    int
	clock   *clock
	// viaAgent: the client reaches the simulator through a real agent (R57).
	viaAgent bool
}

// route is how a bench's client reaches Proxmox.
type route int

const (
	direct route = iota
	throughAgent
)

// clock is the sampler's and the simulator's time: it stands still and moves a sampling
// interval per round, so that the folder's buckets and five-minute windows fill as they do in
// production, where rounds are a minute apart.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newSamplerEnv(t *testing.T, db *models.DB, nodes, perNode int, model pvesim.ServiceModel, via route) *samplerEnv {
	t.Helper()
	e := &samplerEnv{db: db, reg: prometheus.NewRegistry(), guests: nodes * perNode, viaAgent: via == throughAgent,
		clock: &clock{t: time.Now().UTC().Truncate(5 * time.Minute).Add(10 * time.Second)}}
	for i := range nodes {
		e.nodes = append(e.nodes, fmt.Sprintf("node%02d", i+1))
	}
	e.sim = pvesim.New(pvesim.Options{Nodes: e.nodes, TokenID: tokenID, TokenSecret: tokenSecret, Seed: 7, Now: e.clock.Now})
	e.busy = e.sim.Busy(model)
	srv := httptest.NewServer(e.busy)
	t.Cleanup(srv.Close)
	var err error
	if e.viaAgent {
		e.client = agentClient(t, "c1", srv.URL)
	} else {
		e.client, err = pve.New(pve.Config{Cluster: "c1", URL: srv.URL, TokenID: tokenID, TokenSecret: tokenSecret}, pve.NewMetrics(e.reg))
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(e.client.Close)
	created := e.clock.Now().Add(-24 * time.Hour)
	var svcs []models.Service
	vmid := 1000
	for _, n := range e.nodes {
		for range perNode {
			vmid++
			if err := e.sim.SeedGuest(pvesim.Guest{VMID: vmid, Type: "lxc", Node: n, Running: true, Config: map[string]string{
				"hostname": "ct" + strconv.Itoa(vmid), "memory": "1024", "swap": "512", "cores": "1",
				"rootfs": fmt.Sprintf("local-lvm:vm-%d-disk-0,size=8G", vmid)}}); err != nil {
				t.Fatal(err)
			}
			id := vmid
			svcs = append(svcs, models.Service{ServiceID: "svc-" + strconv.Itoa(vmid), ClientID: "whmcs", Plan: "p",
				GuestType: "container", Cluster: "c1", Node: n, VMID: &id, State: models.ServiceActive,
				CreatedAt: created, UpdatedAt: created})
		}
	}
	dbtest.Insert(t, db, svcs, 500)
	e.conc = jobs.DefaultSamplingConcurrency
	e.sampler = jobs.NewSwapSampler(db, []kinds.Cluster{{Name: "c1", Client: e.client}}, []kinds.SwapSampler{lxc.New()}, usage.NewFolder(db),
		usage.NewGuestMetrics(e.reg), jobs.NewSamplerMetrics(e.reg), nil,
		jobs.SamplerConfig{Interval: time.Minute, RoundDeadline: 5 * time.Minute, Stagger: -1, Concurrency: e.conc,
			Now: e.clock.Now})
	t.Cleanup(e.sampler.Close)
	return e
}

// round runs one sampler round and returns its wall time and the requests the front served.
func (e *samplerEnv) round(t *testing.T) (time.Duration, []pvesim.Served) {
	t.Helper()
	e.busy.ResetLog()
	e.clock.add(time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	if err := e.sampler.Run(ctx); err != nil {
		t.Fatalf("sampler round: %v", err)
	}
	return time.Since(start), e.busy.Served()
}

// roundBound is the lower bound of a round given the requests it made: the node list, then on
// every node in parallel its container index followed by its status reads spread over
// min(concurrency, workers) slots, the slowest node deciding. No client can finish the same
// calls sooner on these service times.
func roundBound(log []pvesim.Served, slots int) (time.Duration, int, int) {
	var list time.Duration
	index := map[string]time.Duration{}
	status := map[string]time.Duration{}
	perNode, other := 0, 0
	for _, r := range log {
		switch {
		case r.Path == "/nodes":
			list += r.Service()
			other++
		case strings.HasSuffix(r.Path, "/lxc"):
			index[r.Node] += r.Service()
			perNode++
		case strings.HasSuffix(r.Path, "/status/current"):
			status[r.Node] += r.Service()
			perNode++
		default:
			other++
		}
	}
	var worst time.Duration
	for n, d := range index {
		if b := d + status[n]/time.Duration(slots); b > worst {
			worst = b
		}
	}
	return list + worst, perNode, other
}

// rssBytes is the process's resident set after a full collection that returns freed memory.
func rssBytes(t *testing.T) float64 {
	runtime.GC()
	debug.FreeOSMemory()
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	f := strings.Fields(string(b))
	pages, _ := strconv.ParseFloat(f[1], 64)
	return pages * float64(os.Getpagesize())
}

func sampler(t *testing.T, rep *Report) {
	const sc = "1 sampler"
	nodes, perNode := scale(20, 3), scale(500, 20)
	rounds, warm := scale(30, 4), scale(5, 1)
	model := pvesim.ServiceModel{Workers: 3, Seed: 1}
	if !*full {
		model.Median = func(m, p string, n int) time.Duration { return pvesim.DefaultMedian(m, p, n) / 20 }
	}
	e := newSamplerEnv(t, openDB(t, dialect(t)), nodes, perNode, model, direct)
	slots := min(e.conc, model.Workers)
	rep.info(sc, "cluster", float64(e.guests), "running containers", fmt.Sprintf("%d nodes", nodes))

	// Index mode: every node's index carries swap.
	var ratios []float64
	var rssWarm, rssEnd float64
	callsOK := true
	perRound := 0
	for i := 1; i <= rounds; i++ {
		d, log := e.round(t)
		bound, perNodeCalls, other := roundBound(log, slots)
		if perNodeCalls != nodes {
			callsOK = false
		}
		perRound = perNodeCalls + other
		if i > 1 { // the first round also warms connections and the folder
			ratios = append(ratios, d.Seconds()/bound.Seconds())
		}
		if i == warm {
			rssWarm = rssBytes(t)
		}
	}
	rssEnd = rssBytes(t)
	samples := counterSum(t, e.reg, "pvebill_swap_samples_total", "result", "ok")
	rep.target(sc, "samples taken", samples, "", "==", float64(rounds*e.guests), true, "every running container, every round")
	rep.target(sc, "per-node calls per round, index mode", float64(boolInt(callsOK)*nodes), "", "==", float64(nodes), true,
		fmt.Sprintf("%d calls a round in all, with the node list", perRound))
	rep.target(sc, "round time / lower bound, index mode", median(ratios), "x", "<=", 1.2, false,
		fmt.Sprintf("median of %d rounds, max %.2f", len(ratios), maxOf(ratios)))
	rep.target(sc, "RSS growth over rounds", (rssEnd/rssWarm-1)*100, "%", "<=", 10, false,
		fmt.Sprintf("round %d %.0f MiB to round %d %.0f MiB", warm, rssWarm/(1<<20), rounds, rssEnd/(1<<20)))

	// Fallback mode: no node's index carries swap; one status/current per container.
	for _, n := range e.nodes {
		e.sim.SetNodeOptions(n, pvesim.NodeOptions{NoSwapInIndex: true})
	}
	fbRounds := scale(10, 2)
	ratios = ratios[:0]
	total, maxIn := 0, 0
	for range fbRounds {
		d, log := e.round(t)
		bound, _, _ := roundBound(log, slots)
		ratios = append(ratios, d.Seconds()/bound.Seconds())
		total += len(log)
		for _, n := range e.nodes {
			maxIn = max(maxIn, e.busy.MaxArrivals(n))
		}
	}
	rep.target(sc, "round time / lower bound, per-container fallback", median(ratios), "x", "<=", 1.2, false,
		fmt.Sprintf("median of %d rounds, max %.2f, %d slots a node", len(ratios), maxOf(ratios), slots))
	rep.target(sc, "max requests in flight per node, fallback", float64(maxIn), "", "<=", float64(e.conc), true,
		fmt.Sprintf("cap = sampler concurrency %d, node workers %d", e.conc, model.Workers))
	rep.target(sc, "requests in the fallback rounds", float64(total), "", ">=", float64(scale(100000, 2*nodes*perNode)), true, "")
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func maxOf(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = max(m, x)
	}
	return m
}

// counterSum sums the series of a counter whose label has the value.
func counterSum(t *testing.T, reg *prometheus.Registry, name, label, value string) float64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					sum += m.GetCounter().GetValue()
				}
			}
		}
	}
	return sum
}
