package pvesim

import (
	"fmt"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Options configures a simulated cluster.
type Options struct {
	Nodes        []string      // default []string{"pve1","pve2"}
	TokenID      string        // default "pvebill@pve!provision"
	TokenSecret  string        // default "00000000-0000-0000-0000-000000000000"
	PVEMajor     int           // 8 or 9 (default 9)
	TaskDuration time.Duration // default 0: a task is stopped at its first status read
	Seed         int64

	// AuthFailDelay delays every 401 answer; real Proxmox waits about 3 s. Default 0.
	AuthFailDelay time.Duration
	// NextIDLower and NextIDUpper are datacenter.cfg's next-id range (default 100 and
	// 1000000, upper exclusive).
	NextIDLower, NextIDUpper int
	// Now is the simulator's clock source (default time.Now). Advance shifts it.
	Now func() time.Time
	// ConsoleUser and ConsolePassword are the one user that may log in with POST
	// /access/ticket (default "pvebill-console@pve" and "console-password-0000"); it holds
	// only VM.Console. TicketLifetime is how long its tickets last (default 2 h of sim time).
	ConsoleUser     string
	ConsolePassword string
	TicketLifetime  time.Duration
	// MaxLog caps the request log (0 = unlimited); the oldest entries are dropped first.
	// Useful for a long-running simulator process.
	MaxLog int
}

// Sim is a simulated Proxmox VE cluster serving the HTTP API.
type Sim struct {
	opts   Options
	schema *apiSchema
	routes map[string]handlerFunc
	// control serves the control API under /_sim/.
	control *http.ServeMux
	// lxcConf and qemuConf are the config parameter schemas (key existence and types).
	lxcConf, qemuConf *schemaMethod

	// mu guards the cluster's state, one part per resource.
	mu sync.RWMutex
	clusterNodes
	guestTable
	storageState
	taskTable
	firewallState
	haState
	poolState

	// clockOff is how far Advance moved the clock.
	clockOff atomic.Int64

	requestLog   // guarded by its own lock
	faultSet     // guarded by its own lock
	consoleState // guarded by its own lock
}

const (
	defaultTokenID     = "pvebill@pve!provision"
	defaultTokenSecret = "00000000-0000-0000-0000-000000000000"
)

// New returns an empty cluster: the nodes, and on each the storages local (dir:
// vztmpl, iso, backup, rootdir, images, snippets) and local-lvm (lvmthin: rootdir, images).
func New(opts Options) *Sim {
	if len(opts.Nodes) == 0 {
		opts.Nodes = []string{"pve1", "pve2"}
	}
	if opts.TokenID == "" {
		opts.TokenID = defaultTokenID
	}
	if opts.TokenSecret == "" {
		opts.TokenSecret = defaultTokenSecret
	}
	if opts.PVEMajor == 0 {
		opts.PVEMajor = 9
	}
	if opts.NextIDLower == 0 {
		opts.NextIDLower = 100
	}
	if opts.NextIDUpper == 0 {
		opts.NextIDUpper = 1000000
	}
	if opts.ConsoleUser == "" {
		opts.ConsoleUser = DefaultConsoleUser
	}
	if opts.ConsolePassword == "" {
		opts.ConsolePassword = DefaultConsolePassword
	}
	if opts.TicketLifetime == 0 {
		opts.TicketLifetime = DefaultTicketLifetime
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	sc, err := loadSchema()
	if err != nil {
		panic(fmt.Sprintf("pvesim: embedded schema: %v", err))
	}
	s := &Sim{opts: opts, schema: sc, faultSet: faultSet{hangCh: make(chan struct{})},
		lxcConf: lookupConfigSchema(sc, "lxc"), qemuConf: lookupConfigSchema(sc, "qemu")}
	s.consoleState = newConsoleState()
	s.routes = s.buildRoutes()
	s.control = s.buildControl()
	s.resetState()
	return s
}

// resetState (re)creates the empty cluster. Callers hold no lock or the write lock.
func (s *Sim) resetState() {
	s.resetNodes(s.opts.Nodes)
	s.resetGuests()
	s.resetStorage()
	s.resetTasks()
	s.resetFirewall()
	s.resetHA()
	s.resetPools()
}

// Reset returns the simulator to the state New gave it: no guests, tasks, faults or log.
func (s *Sim) Reset() {
	s.mu.Lock()
	s.resetState()
	s.mu.Unlock()
	s.ClearFaults()
	s.ResetLog()
	s.CloseConsoles()
	s.clockOff.Store(0)
}

// now is the simulator clock.
func (s *Sim) now() time.Time {
	return s.opts.Now().Add(time.Duration(s.clockOff.Load()))
}

// Now returns the simulator's current time.
func (s *Sim) Now() time.Time { return s.now() }

// Advance moves the simulator clock forward (running tasks may become due).
func (s *Sim) Advance(d time.Duration) {
	s.clockOff.Add(int64(d))
	s.settle()
}

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
