package stacktest

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"pvebill/models"
	"pvebill/models/dbtest"
	"pvebill/modules/executor"
	"pvebill/modules/kinds"
	"pvebill/modules/lxc"
	"pvebill/modules/plans"
	"pvebill/modules/pve"
	"pvebill/modules/pve/pvesim"
	"pvebill/modules/pve/pvesim/simtest"
	"pvebill/modules/qemu"
	"pvebill/modules/stack"
	"pvebill/modules/stack/stacktest/testclock"
)

// Options configure New. The zero value is a SQLite database, the simulator's default cluster,
// both guest kinds on one cluster named "default", the shared executor configuration (Executor)
// and the standard plans (Plans).
type Options struct {
	// Dialect is the database (dbtest.Open); empty: sqlite.
	Dialect string
	// Sim is the simulated cluster; nil: a new one with the simulator's defaults.
	Sim *pvesim.Sim
	// Executor configures the stack's executor; nil: Executor("test").
	Executor *executor.Config
	// Plans are imported before the test starts; nil: Plans(). A non-nil empty list imports none.
	Plans []plans.Spec
	// Stack, when set, changes the stack's options before it is built (a cluster's figures, the
	// provisioner's options). Replicas are built with the same change.
	Stack func(*stack.Options)
}

// Env is one test's pvebill: a database, a simulated cluster served over HTTP, a stack wired as
// in production and its log. Its executor starts with Start (or the first Wait) and stops when
// the test ends.
type Env struct {
	T       testing.TB
	DB      *models.DB
	Sim     *simtest.Server
	Client  *pve.Client
	Stack   *stack.Stack
	Logs    *LogBuffer
	Metrics *prometheus.Registry
	// Clock is the stack's clock (the provisioner's, placement's, backups', and the executor's
	// for its heal deadlines), unless the test's Stack hook sets its own: the wall clock, moved
	// on by Advance.
	Clock   *Clock
	opts    Options
	started sync.Once
}

// New builds the environment. The simulator's request log is empty when it returns: saving the
// plans read their storages (R44), and tests count from here.
func New(t testing.TB, o Options) *Env {
	t.Helper()
	if o.Dialect == "" {
		o.Dialect = "sqlite"
	}
	if o.Plans == nil {
		o.Plans = Plans()
	}
	e := &Env{T: t, Logs: &LogBuffer{}, Metrics: prometheus.NewRegistry(), Clock: &Clock{}, opts: o}
	e.DB = dbtest.Open(t, o.Dialect)
	e.Sim = simtest.Start(t, o.Sim)
	e.Client = e.Sim.Client(t, nil)
	cfg := Executor("test")
	if o.Executor != nil {
		cfg = *o.Executor
	}
	e.Stack = e.build(cfg, e.Metrics)
	if len(o.Plans) > 0 {
		if _, err := e.Stack.Plans.Import(context.Background(), o.Plans, plans.SourceFile); err != nil {
			t.Fatal(err)
		}
	}
	e.Sim.ResetLog()
	e.stopAtCleanup(e.Stack.Exec)
	return e
}

// build wires a stack over the environment's database and cluster.
func (e *Env) build(cfg executor.Config, reg *prometheus.Registry) *stack.Stack {
	log := slog.New(slog.NewJSONHandler(io.MultiWriter(e.Logs), &slog.HandlerOptions{Level: slog.LevelDebug}))
	so := stack.Options{DB: e.DB, Log: log, Metrics: reg,
		Kinds:    []kinds.Module{&lxc.Module{ShutdownTimeout: time.Second}, &qemu.Module{ShutdownTimeout: time.Second}},
		Clusters: []kinds.Cluster{{Name: "default", Client: e.Client}},
		Executor: cfg}
	if e.opts.Stack != nil {
		e.opts.Stack(&so)
	}
	if so.Provision.Now == nil {
		so.Provision.Now = e.Clock.Now
	}
	if so.Executor.Now == nil {
		so.Executor.Now = e.Clock.Now
	}
	return stack.New(so)
}

func (e *Env) stopAtCleanup(x *executor.Executor) {
	e.T.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		x.Stop(ctx)
	})
}

// Start starts the environment's executor (once).
func (e *Env) Start() {
	e.started.Do(func() { e.Stack.Exec.Start(context.Background()) })
}

// Replica is a second pvebill over the same database and cluster, with its own executor
// (configured by cfg, started) and metrics: what another replica of a deployment is.
func (e *Env) Replica(cfg executor.Config) *stack.Stack {
	e.T.Helper()
	st := e.build(cfg, prometheus.NewRegistry())
	st.Exec.Start(context.Background())
	e.stopAtCleanup(st.Exec)
	return st
}

// Wait runs the executor until op ends and returns it as it ended.
func (e *Env) Wait(op *models.Operation) *models.Operation {
	e.T.Helper()
	e.Start()
	e.Stack.Exec.Kick()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got, err := executor.WaitTerminal(ctx, e.DB, e.Stack.Exec.Broker(), op.ID, 10*time.Millisecond)
	if err != nil {
		e.T.Fatal(err)
	}
	if !models.IsTerminal(got.State) {
		e.T.Fatalf("operation %s still %s", op.ID, got.State)
	}
	return got
}

// MustSucceed fails the test on err, or when op does not end succeeded.
func (e *Env) MustSucceed(op *models.Operation, err error) *models.Operation {
	e.T.Helper()
	if err != nil {
		e.T.Fatal(err)
	}
	got := e.Wait(op)
	if got.State != models.OpSucceeded {
		e.T.Fatalf("%s ended %s: %v %v result %v", got.Action, got.State, Deref(got.ErrorCode), Deref(got.ErrorDetail), Deref(got.Result))
	}
	return got
}

// Requests are the simulator's requests of method whose path ends in pathSuffix.
func (e *Env) Requests(method, pathSuffix string) []pvesim.Request {
	var out []pvesim.Request
	for _, r := range e.Sim.Requests() {
		if r.Method == method && strings.HasSuffix(r.Path, pathSuffix) {
			out = append(out, r)
		}
	}
	return out
}

// Clock is the wall clock moved on by what the test advanced it: a test that waits for a shared
// read to expire, or for a time-out, advances the clock instead of sleeping.
type Clock = testclock.Clock

// Deref is *s, or "" for nil.
func Deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// The OS images of the standard plans.
const (
	DebianTemplate = "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst"
	// VMTemplate is the vmid of the simulator's Debian 12 cloud-init template.
	VMTemplate = 9000
)

// Plans are the standard plans of the tests on cluster "default": two container plans
// (ct-small, ct-big with swap), two VM plans (vm-small; vm-pause, which pauses on suspend) and
// flex, which offers both kinds.
func Plans() []plans.Spec {
	ct := plans.OSCatalog{Container: map[string]string{"debian-12": DebianTemplate}}
	vm := plans.OSCatalog{VM: map[string]plans.VMTemplate{"debian-12": {VMID: VMTemplate}}}
	both := plans.OSCatalog{Container: ct.Container, VM: vm.VM}
	spec := func(code, name string, kind []plans.GuestType, cores, mem, disk int, os plans.OSCatalog) plans.Spec {
		return plans.Spec{Code: code, Name: name, GuestTypes: kind, Cluster: "default", Cores: new(cores),
			MemoryMiB: new(mem), DiskGiB: new(disk), Storage: "local-lvm", Bridge: "vmbr0", OS: os}
	}
	ctOnly, vmOnly := []plans.GuestType{plans.Container}, []plans.GuestType{plans.VM}
	big := spec("ct-big", "Container big", ctOnly, 2, 2048, 12, ct)
	big.SwapMiB = new(256)
	pause := spec("vm-pause", "VM pause", vmOnly, 4, 4096, 20, vm)
	pause.VMSuspendMode = plans.SuspendPause
	return []plans.Spec{
		spec("ct-small", "Container small", ctOnly, 1, 512, 8, ct), big,
		spec("vm-small", "VM small", vmOnly, 2, 2048, 10, vm), pause,
		spec("flex", "Flex", []plans.GuestType{plans.Container, plans.VM}, 1, 1024, 8, both),
	}
}
