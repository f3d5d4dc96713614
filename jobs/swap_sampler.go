package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"pvebill/models"
	"pvebill/modules/kinds"
	"pvebill/modules/usage"
)

// Swap sampler defaults (R31).
const (
	DefaultSamplingInterval    = time.Minute
	DefaultSamplingConcurrency = 2 // pvedaemon has 3 workers, shared with provisioning
	DefaultMaxBackoffRounds    = 15
)

// Round results of pvebill_swap_sampling_rounds_total.
const (
	RoundOK      = "ok"      // the node answered and every managed running container was sampled
	RoundPartial = "partial" // some containers could not be read, or their buckets not written
	RoundSkipped = "skipped" // the node's previous round still ran (never stacked), or it backs off
	RoundFailed  = "failed"  // the node could not be read
)

// SamplerConfig tunes the sampler; zero values take the defaults.
type SamplerConfig struct {
	// Interval is the cron interval (default 1m); the defaults below derive from it.
	Interval time.Duration
	// Concurrency is the most calls in flight per node (default 2).
	Concurrency int
	// RoundDeadline bounds one node's round from its start (default 3/4 of Interval).
	RoundDeadline time.Duration
	// Stagger spreads the nodes' start times over this window (default Interval/10).
	Stagger time.Duration
	// MaxBackoffRounds caps how many rounds a failing node sits out (default 15). After n
	// consecutive failures a node sits out 2^(n-1)-1 rounds.
	MaxBackoffRounds int
	// Now is the clock of the samples (tests); default time.Now.
	Now func() time.Time
	// Shard, when set, names the nodes this replica samples (node leases shared by the
	// replicas); nil samples every node.
	Shard NodeShard
}

func (c *SamplerConfig) defaults() {
	if c.Interval <= 0 {
		c.Interval = DefaultSamplingInterval
	}
	if c.Concurrency <= 0 {
		c.Concurrency = DefaultSamplingConcurrency
	}
	if c.RoundDeadline <= 0 {
		c.RoundDeadline = c.Interval * 3 / 4
	}
	if c.Stagger < 0 {
		c.Stagger = 0
	} else if c.Stagger == 0 {
		c.Stagger = c.Interval / 10
	}
	if c.MaxBackoffRounds <= 0 {
		c.MaxBackoffRounds = DefaultMaxBackoffRounds
	}
	if c.Now == nil {
		c.Now = time.Now
	}
}

// SamplerMetrics are the sampler's own series.
type SamplerMetrics struct {
	roundDuration *prometheus.HistogramVec
	rounds        *prometheus.CounterVec
	samples       *prometheus.CounterVec
	failures      *prometheus.GaugeVec
}

// NewSamplerMetrics registers the sampler metrics on reg:
//
//	pvebill_swap_sampling_round_duration_seconds{cluster,node}
//	pvebill_swap_sampling_rounds_total{cluster,node,result}   result: ok, partial, skipped, failed
//	pvebill_swap_samples_total{cluster,node,result}           result: ok, failed
//	pvebill_swap_sampling_node_consecutive_failures{cluster,node}
func NewSamplerMetrics(reg prometheus.Registerer) *SamplerMetrics {
	m := &SamplerMetrics{
		roundDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "pvebill_swap_sampling_round_duration_seconds",
			Help:    "Duration of one node's swap sampling round.",
			Buckets: []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 20, 30, 45, 60}}, []string{"cluster", "node"}),
		rounds: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pvebill_swap_sampling_rounds_total",
			Help: "Swap sampling rounds per node, by result (ok, partial, skipped, failed)."}, []string{"cluster", "node", "result"}),
		samples: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pvebill_swap_samples_total",
			Help: "Container samples taken, by result (ok, failed)."}, []string{"cluster", "node", "result"}),
		failures: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "pvebill_swap_sampling_node_consecutive_failures",
			Help: "Consecutive failed sampling rounds of a node (0 once it answers again)."}, []string{"cluster", "node"}),
	}
	reg.MustRegister(m.roundDuration, m.rounds, m.samples, m.failures)
	return m
}

// nodeState is one node's sampling state across rounds.
type nodeState struct {
	mu       sync.Mutex
	busy     bool // a round runs
	failures int  // consecutive failed rounds
	sitOut   int  // rounds still to sit out (backoff)
}

// SwapSampler is the swap sampling job (R31): once a round, for every node of every cluster in
// parallel, one call to the node's container index GET /nodes/{node}/lxc, which carries swap
// and maxswap for every container. A node whose index lacks swap (an older Proxmox) gets
// per-container status/current calls for the managed running containers instead. At most
// Concurrency calls are in flight per node, each node's round has its own deadline and
// staggered start, a node whose previous round still runs is skipped (never stacked) and
// counted, and a failing node backs off. Only running containers of managed services produce
// samples; VMs and stopped containers produce none, and nothing QEMU-only is ever called.
type SwapSampler struct {
	db       *models.DB
	clusters []kinds.Cluster
	kinds    []kinds.SwapSampler
	folder   *usage.Folder
	guests   *usage.GuestMetrics
	metrics  *SamplerMetrics
	log      *slog.Logger
	cfg      SamplerConfig

	mu    sync.Mutex
	nodes map[string]*nodeState // by cluster + "/" + node
	// onNode lists the services last sampled on each node (by cluster + "/" + node), and
	// managed the services of the current round: when another replica takes a node over, the
	// folder forgets its services, so that if the node comes back their buckets are resumed
	// from the database instead of overwritten with this replica's stale copy.
	onNode  map[string][]models.ServiceKey
	managed map[models.ServiceKey]bool
	wg      sync.WaitGroup // node rounds in flight
	// base is what node rounds derive from: they outlive the job's round (each keeps its own
	// deadline) but end at Close.
	base  context.Context
	close context.CancelFunc
}

// NewSwapSampler builds the sampler.
func NewSwapSampler(db *models.DB, clusters []kinds.Cluster, samplers []kinds.SwapSampler, folder *usage.Folder,
	guests *usage.GuestMetrics, m *SamplerMetrics, log *slog.Logger, cfg SamplerConfig) *SwapSampler {
	cfg.defaults()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	base, cancel := context.WithCancel(context.Background())
	return &SwapSampler{db: db, clusters: clusters, kinds: samplers, folder: folder, guests: guests, metrics: m, log: log, cfg: cfg,
		nodes: map[string]*nodeState{}, onNode: map[string][]models.ServiceKey{}, base: base, close: cancel}
}

// Name implements Job.
func (*SwapSampler) Name() string { return "swap_sampling" }

// Config returns the effective configuration.
func (s *SwapSampler) Config() SamplerConfig { return s.cfg }

// Wait blocks until every node round started so far has ended (tests).
func (s *SwapSampler) Wait() { s.wg.Wait() }

// Close cancels the node rounds still running and waits for them (shutdown, after the
// scheduler stopped).
func (s *SwapSampler) Close() {
	s.close()
	s.wg.Wait()
}

// Run implements Job: one round. It returns when every node round it started has ended or ctx
// ends, whichever is first; a node round that outlives ctx keeps its own deadline and makes the
// node's next round skip.
func (s *SwapSampler) Run(ctx context.Context) error {
	types := make([]string, 0, len(s.kinds))
	for _, k := range s.kinds {
		types = append(types, string(k.Kind()))
	}
	svcs, err := s.db.SampledServices(ctx, types)
	if err != nil {
		return fmt.Errorf("list sampled services: %w", err)
	}
	byCluster := map[string]map[int]models.SampledService{}
	managed := make(map[models.ServiceKey]bool, len(svcs))
	for _, sv := range svcs {
		managed[models.ServiceKey{ClientID: sv.ClientID, ServiceID: sv.ServiceID}] = true
		m := byCluster[sv.Cluster]
		if m == nil {
			m = map[int]models.SampledService{}
			byCluster[sv.Cluster] = m
		}
		m[sv.VMID] = sv
	}
	s.folder.Retain(managed)
	s.mu.Lock()
	s.managed = managed
	s.mu.Unlock()
	done := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for _, cl := range s.clusters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.runCluster(ctx, cl, byCluster[cl.Name], &wg); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
	mu.Lock()
	defer mu.Unlock()
	return errors.Join(errs...)
}

// runCluster lists the cluster's nodes and starts a round per node, adding each to wg.
func (s *SwapSampler) runCluster(ctx context.Context, cl kinds.Cluster, managed map[int]models.SampledService, wg *sync.WaitGroup) error {
	names, present, err := s.listNodes(ctx, cl)
	if err != nil {
		return err
	}
	if s.cfg.Shard != nil {
		if names, err = s.ownedNodes(ctx, cl, names, present); err != nil {
			return err
		}
	}
	s.guests.RetainNodes(cl.Name, present)
	for i, name := range names {
		st := s.node(cl.Name, name)
		if !s.claimNode(cl, name, st) {
			continue
		}
		delay := time.Duration(0)
		if len(names) > 1 {
			delay = s.cfg.Stagger * time.Duration(i) / time.Duration(len(names))
		}
		wg.Add(1)
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer wg.Done()
			s.nodeRound(ctx, cl, name, managed, st, delay)
		}()
	}
	return nil
}

// listNodes returns the cluster's node names, sorted, and the same names as a set.
func (s *SwapSampler) listNodes(ctx context.Context, cl kinds.Cluster) ([]string, map[string]bool, error) {
	// The node list is one cheap call; it gets a third of a node's deadline.
	lctx, cancel := context.WithTimeout(ctx, s.cfg.RoundDeadline/3)
	nodes, err := cl.NodeList(lctx)
	cancel()
	if err != nil {
		// Nothing is known about the cluster's guests this round: their series go.
		s.guests.RetainNodes(cl.Name, nil)
		s.metrics.rounds.WithLabelValues(cl.Name, "", RoundFailed).Inc()
		return nil, nil, fmt.Errorf("cluster %s: list nodes: %w", cl.Name, err)
	}
	names := make([]string, 0, len(nodes))
	present := map[string]bool{}
	for _, n := range nodes {
		names = append(names, n.Node)
		present[n.Node] = true
	}
	sort.Strings(names)
	return names, present, nil
}

// ownedNodes keeps the nodes this replica's shard owns. A node another replica samples leaves
// present (that replica exports its series), and the folder forgets the services last seen on
// it.
func (s *SwapSampler) ownedNodes(ctx context.Context, cl kinds.Cluster, names []string, present map[string]bool) ([]string, error) {
	owned, err := s.cfg.Shard.Own(ctx, cl.Name, names)
	if err != nil {
		return nil, err
	}
	mine := names[:0]
	var lost []models.ServiceKey
	s.mu.Lock()
	for _, n := range names {
		if owned[n] {
			mine = append(mine, n)
			continue
		}
		delete(present, n) // another replica samples it and exports its series
		lost = append(lost, s.onNode[cl.Name+"/"+n]...)
		delete(s.onNode, cl.Name+"/"+n)
	}
	keep := make(map[models.ServiceKey]bool, len(s.managed))
	for id := range s.managed {
		keep[id] = true
	}
	s.mu.Unlock()
	if len(lost) > 0 {
		for _, id := range lost {
			delete(keep, id)
		}
		s.folder.Retain(keep)
	}
	return mine, nil
}

// claimNode marks the node busy for a round, or counts the round as skipped when the node's
// previous round still runs or it sits out a backoff round.
func (s *SwapSampler) claimNode(cl kinds.Cluster, name string, st *nodeState) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	switch {
	case st.busy:
		s.metrics.rounds.WithLabelValues(cl.Name, name, RoundSkipped).Inc()
		s.log.Warn("swap sampling: previous round of the node still runs; round skipped", "cluster", cl.Name, "node", name)
		return false
	case st.sitOut > 0:
		st.sitOut--
		s.metrics.rounds.WithLabelValues(cl.Name, name, RoundSkipped).Inc()
		return false
	}
	st.busy = true
	return true
}

// nodeRound waits out the node's stagger delay and samples it, then frees the node.
func (s *SwapSampler) nodeRound(ctx context.Context, cl kinds.Cluster, name string, managed map[int]models.SampledService, st *nodeState, delay time.Duration) {
	defer func() {
		st.mu.Lock()
		st.busy = false
		st.mu.Unlock()
	}()
	if delay > 0 {
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			s.metrics.rounds.WithLabelValues(cl.Name, name, RoundSkipped).Inc()
			return
		}
	}
	// The node's round keeps its own deadline even if the job's round ends first.
	nctx, cancel := context.WithTimeout(s.base, s.cfg.RoundDeadline)
	defer cancel()
	s.runNode(nctx, cl, name, managed, st)
}

func (s *SwapSampler) node(cluster, node string) *nodeState {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := cluster + "/" + node
	st := s.nodes[k]
	if st == nil {
		st = &nodeState{}
		s.nodes[k] = st
	}
	return st
}

// runNode samples one node.
func (s *SwapSampler) runNode(ctx context.Context, cl kinds.Cluster, node string, managed map[int]models.SampledService, st *nodeState) {
	start := time.Now()
	result := s.sampleNode(ctx, cl, node, managed)
	s.metrics.roundDuration.WithLabelValues(cl.Name, node).Observe(time.Since(start).Seconds())
	s.metrics.rounds.WithLabelValues(cl.Name, node, result).Inc()
	st.mu.Lock()
	if result == RoundFailed {
		st.failures++
		st.sitOut = min(1<<min(st.failures-1, 30)-1, s.cfg.MaxBackoffRounds)
	} else {
		st.failures, st.sitOut = 0, 0
	}
	failures := st.failures
	st.mu.Unlock()
	s.metrics.failures.WithLabelValues(cl.Name, node).Set(float64(failures))
}

// nodeSem bounds the Proxmox calls in flight for one node round.
type nodeSem chan struct{}

// acquire takes a slot, or gives up when ctx ends.
func (n nodeSem) acquire(ctx context.Context) bool {
	select {
	case n <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

func (n nodeSem) release() { <-n }

// sampleNode reads one node (one index call per kind that samples swap) and folds its samples;
// it returns the round's result.
func (s *SwapSampler) sampleNode(ctx context.Context, cl kinds.Cluster, node string, managed map[int]models.SampledService) string {
	sem := make(nodeSem, s.cfg.Concurrency)
	now := s.cfg.Now().UTC()
	var samples []usage.Sample
	result := RoundOK
	for _, k := range s.kinds {
		if !sem.acquire(ctx) {
			return RoundFailed
		}
		idx, err := k.SwapIndex(ctx, cl.Client, node)
		sem.release()
		if err != nil {
			s.log.Warn("swap sampling: node index failed", "cluster", cl.Name, "node", node, "err", err)
			s.guests.RetainNode(cl.Name, node, nil)
			return RoundFailed
		}
		for vmid, f := range idx.Running {
			if sv, ok := managed[vmid]; ok && sv.GuestType == string(k.Kind()) {
				samples = append(samples, sampleOf(sv, cl.Name, node, now, f))
			}
		}
		var fallback []models.SampledService
		for _, vmid := range idx.NoSwap {
			if sv, ok := managed[vmid]; ok && sv.GuestType == string(k.Kind()) {
				fallback = append(fallback, sv)
			}
		}
		if len(fallback) == 0 {
			continue
		}
		more, failed := s.sampleOneByOne(ctx, cl, node, k, sem, fallback)
		samples = append(samples, more...)
		if failed > 0 {
			s.metrics.samples.WithLabelValues(cl.Name, node, "failed").Add(float64(failed))
			result = RoundPartial
		}
	}
	s.metrics.samples.WithLabelValues(cl.Name, node, "ok").Add(float64(len(samples)))
	if !s.foldSamples(ctx, cl, node, now, samples) {
		result = RoundPartial
	}
	return result
}

// sampleOneByOne reads each guest whose index row had no swap figure on its own, at most sem's
// capacity at a time; it returns the samples of those still running and how many could not be
// read.
func (s *SwapSampler) sampleOneByOne(ctx context.Context, cl kinds.Cluster, node string, k kinds.SwapSampler, sem nodeSem,
	fallback []models.SampledService) ([]usage.Sample, int) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	var samples []usage.Sample
	failed := 0
	for _, sv := range fallback {
		if !sem.acquire(ctx) {
			mu.Lock()
			failed++
			mu.Unlock()
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer sem.release()
			f, running, err := k.SwapOne(ctx, kinds.Guest{Client: cl.Client, Cluster: cl.Name, Node: node, VMID: sv.VMID})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed++
				s.log.Warn("swap sampling: guest status failed", "cluster", cl.Name, "node", node, "vmid", sv.VMID, "err", err)
				return
			}
			if running {
				samples = append(samples, sampleOf(sv, cl.Name, node, s.cfg.Now().UTC(), f))
			}
		}()
	}
	wg.Wait()
	return samples, failed
}

// foldSamples records which services the node holds, folds the samples into their buckets,
// exports the per-guest series and writes the buckets; it reports whether the write succeeded.
func (s *SwapSampler) foldSamples(ctx context.Context, cl kinds.Cluster, node string, now time.Time, samples []usage.Sample) bool {
	ids := make([]models.ServiceKey, len(samples))
	for i, smp := range samples {
		ids[i] = smp.Key()
	}
	s.mu.Lock()
	s.onNode[cl.Name+"/"+node] = ids
	s.mu.Unlock()
	if err := s.folder.Resume(ctx, ids, now); err != nil {
		s.log.Warn("swap sampling: resume stored buckets", "cluster", cl.Name, "node", node, "err", err)
	}
	keep := make(map[models.ServiceKey]bool, len(samples))
	for _, smp := range samples {
		s.folder.Add(smp)
		keep[smp.Key()] = true
		var w *usage.Window
		if win, ok := s.folder.SwapWindow(smp.Key()); ok {
			w = &win
		}
		s.guests.Set(usage.GuestLabels{Cluster: smp.Cluster, Node: smp.Node, VMID: smp.VMID, ServiceID: smp.ServiceID,
			GuestType: smp.GuestType, ClientID: smp.ClientID}, smp.Swap, smp.SwapLimit, w)
	}
	s.guests.RetainNode(cl.Name, node, keep)
	if _, err := s.folder.Flush(ctx); err != nil {
		s.log.Error("swap sampling: write usage buckets", "cluster", cl.Name, "node", node, "err", err)
		return false
	}
	return true
}

func sampleOf(sv models.SampledService, cluster, node string, at time.Time, f kinds.GuestFigures) usage.Sample {
	return usage.Sample{ClientID: sv.ClientID, ServiceID: sv.ServiceID, Cluster: cluster, Node: node, VMID: sv.VMID,
		GuestType: sv.GuestType, At: at, Mem: f.Mem, CPU: f.CPU, Disk: f.Disk, NetIn: f.NetIn, NetOut: f.NetOut,
		Uptime: f.Uptime, Swap: f.Swap, SwapLimit: f.SwapLimit}
}

// SpecInterval is the interval of an "@every D" cron spec; other specs report false.
func SpecInterval(spec string) (time.Duration, bool) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(spec), "@every ")
	if !ok {
		return 0, false
	}
	d, err := time.ParseDuration(strings.TrimSpace(rest))
	if err != nil || d <= 0 {
		return 0, false
	}
	return d, true
}
