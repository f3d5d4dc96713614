package pvesim

import (
	"bufio"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// ServiceModel makes the simulator answer like a busy Proxmox cluster, for benchmarks. Every
// node has Workers API workers (pvedaemon's default is 3); a request holds one of its node's
// workers for its service time, and requests beyond that wait in line. Cluster-wide paths
// (/cluster/..., /nodes, /version) are served by the entry node's workers, as on a real
// cluster where the node you talk to answers them.
//
// A service time is drawn from a log-normal distribution around the median Median returns
// for the call, with Sigma the standard deviation of its logarithm (0.35 gives a p99 about
// 2.3 times the median). The drawn time is the whole service time: the simulator handles the
// request as soon as a worker takes it, and the answer is released when the drawn time has
// passed (or when the handling ends, if that is later). The simulator's own work is not added
// on top: on a benchmark machine that also runs pvebill and its database, that work slows with
// the machine's load, and adding it would count the machine's load as Proxmox's.
type ServiceModel struct {
	// Workers per node (default 3).
	Workers int
	// Median returns the median service time of a call; containers is the number of
	// containers on the node the call is for. Nil uses DefaultMedian.
	Median func(method, path string, containers int) time.Duration
	// Sigma is the log-normal spread (default 0.35).
	Sigma float64
	// Seed seeds the draws (the draws' order follows the requests' arrival).
	Seed uint64
	// EntryNode serves cluster-wide paths (default the first node).
	EntryNode string
}

// DefaultMedian is the median service time of the default model:
//
//	GET  /nodes/{node}/lxc                      20 ms + 2 ms per container on the node
//	GET  /nodes/{node}/lxc/{vmid}/status/current 40 ms
//	GET  /nodes/{node}/tasks/{upid}/status       10 ms
//	POST, PUT, DELETE                            60 ms (a task is forked; its run is not a worker's time)
//	any other GET                                25 ms
func DefaultMedian(method, path string, containers int) time.Duration {
	switch {
	case method != http.MethodGet:
		return 60 * time.Millisecond
	case isNodeLXCIndex(path):
		return 20*time.Millisecond + time.Duration(containers)*2*time.Millisecond
	case strings.HasSuffix(path, "/status/current"):
		return 40 * time.Millisecond
	case strings.Contains(path, "/tasks/") && strings.HasSuffix(path, "/status"):
		return 10 * time.Millisecond
	}
	return 25 * time.Millisecond
}

func isNodeLXCIndex(path string) bool {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	return len(parts) == 3 && parts[0] == "nodes" && parts[2] == "lxc"
}

// Served is one request the busy front served.
type Served struct {
	Method string `json:"method"`
	Path   string `json:"path"`
	// Node is the node whose worker served it (the entry node for cluster-wide paths).
	Node string `json:"node"`
	// Arrived is when the request reached the node, Started when a worker took it, Ended when
	// the answer was written. Ended - Started is the service time.
	Arrived time.Time `json:"arrived"`
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended"`
	Status  int       `json:"status"`
}

// Service is the time the request held a worker.
func (r Served) Service() time.Duration { return r.Ended.Sub(r.Started) }

// Busy serves a simulator behind a ServiceModel. It is an http.Handler.
type Busy struct {
	sim   *Sim
	model ServiceModel

	mu       sync.Mutex
	rng      *rand.Rand
	workers  map[string]chan struct{}
	inflight map[string]int // arrived, not yet answered, per node
	maxIn    map[string]int
	log      []Served
	keepLog  bool
}

// Busy returns a handler that serves s behind the model. Its log of served requests is kept
// until ResetLog; Served and MaxArrivals read it.
func (s *Sim) Busy(m ServiceModel) *Busy {
	if m.Workers <= 0 {
		m.Workers = 3
	}
	if m.Median == nil {
		m.Median = DefaultMedian
	}
	if m.Sigma == 0 {
		m.Sigma = 0.35
	}
	if m.EntryNode == "" {
		m.EntryNode = s.opts.Nodes[0]
	}
	b := &Busy{sim: s, model: m, rng: rand.New(rand.NewPCG(m.Seed, 0x70766573696d)), workers: map[string]chan struct{}{},
		inflight: map[string]int{}, maxIn: map[string]int{}, keepLog: true}
	for _, n := range s.opts.Nodes {
		b.workers[n] = make(chan struct{}, m.Workers)
	}
	return b
}

// ServeHTTP queues the request for a worker of its node, has the simulator handle it, holds the
// answer and the worker until the drawn service time has passed, and logs it.
func (b *Busy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !strings.HasPrefix(r.URL.Path, apiPrefix) {
		b.sim.ServeHTTP(w, r)
		return
	}
	rel := strings.TrimPrefix(r.URL.Path, apiPrefix)
	node := nodeOfPath(rel)
	if node == "" {
		node = b.model.EntryNode
	}
	sem := b.workers[node]
	if sem == nil {
		b.sim.ServeHTTP(w, r)
		return
	}
	containers := 0
	if r.Method == http.MethodGet && isNodeLXCIndex(rel) {
		containers = b.sim.containersOn(node)
	}
	median := b.model.Median(r.Method, rel, containers)

	b.mu.Lock()
	d := time.Duration(float64(median) * math.Exp(b.model.Sigma*b.rng.NormFloat64()))
	b.inflight[node]++
	if b.inflight[node] > b.maxIn[node] {
		b.maxIn[node] = b.inflight[node]
	}
	b.mu.Unlock()
	e := &Served{Method: r.Method, Path: rel, Node: node, Arrived: time.Now()}
	logged := false
	// finish logs the entry once: when the answer's header is written, before the client can
	// read it, or when the request ends without an answer.
	finish := func(status int) {
		b.mu.Lock()
		defer b.mu.Unlock()
		if logged {
			return
		}
		logged = true
		e.Ended, e.Status = time.Now(), status
		if e.Started.IsZero() {
			e.Started = e.Ended
		}
		b.inflight[node]--
		if b.keepLog {
			b.log = append(b.log, *e)
		}
	}
	defer finish(0)

	select {
	case sem <- struct{}{}:
	case <-r.Context().Done():
		return
	}
	defer func() { <-sem }()
	e.Started = time.Now()
	t := time.NewTimer(d)
	defer t.Stop()
	hw := &heldWriter{ResponseWriter: w, finish: finish, hold: func() {
		select {
		case <-t.C:
		case <-r.Context().Done():
		}
	}}
	b.sim.ServeHTTP(hw, r)
	if !hw.released {
		hw.release(0)
	}
}

// heldWriter holds the answer until the drawn service time has passed, then logs it.
type heldWriter struct {
	http.ResponseWriter
	finish   func(status int)
	hold     func()
	released bool
}

func (w *heldWriter) release(code int) {
	w.released = true
	w.hold()
	w.finish(code)
}

func (w *heldWriter) WriteHeader(code int) {
	if !w.released {
		w.release(code)
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *heldWriter) Write(p []byte) (int, error) {
	if !w.released {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(p)
}

// Hijack lets the simulator's dropped-connection faults work behind the front.
func (w *heldWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

// Served returns a copy of the log of served requests.
func (b *Busy) Served() []Served {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Served(nil), b.log...)
}

// ResetLog empties the log and the arrival maxima.
func (b *Busy) ResetLog() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.log = nil
	clear(b.maxIn)
}

// KeepLog turns the log on or off (a long run that needs only MaxArrivals).
func (b *Busy) KeepLog(on bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.keepLog = on
}

// MaxArrivals is the highest number of requests for a node that had arrived and were not yet
// answered at one time since the last ResetLog: the client's concurrency towards the node,
// whether or not a worker was free.
func (b *Busy) MaxArrivals(node string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.maxIn[node]
}

// containersOn counts the containers on a node.
func (s *Sim) containersOn(node string) int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	n := 0
	for _, g := range s.byNode[node] {
		if g.typ == "lxc" {
			n++
		}
	}
	return n
}
