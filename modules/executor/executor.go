package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"pvebill/i18n"
	"pvebill/models"
)

// Stage names one step of an operation, as recorded on its row (operations.stage). Every
// action's stage names are constants of this type.
type Stage string

// Action is one kind of operation: an ordered list of stages and the function that runs them.
type Action struct {
	Name string
	// Stages is the one ordered list of this action's stages (R27).
	Stages []Stage
	// Irreversible names the first stage after whose start a failure cannot be rolled back
	// ("" when the action has none). Whether a failure is destructive is derived from it in
	// exactly one place: Action.Destructive.
	Irreversible Stage
	// Long marks an action that holds its worker for minutes (a backup's vzdump): a replica
	// runs at most Config.LongWorkers of them at once, so the other workers stay free.
	Long bool
	Run  func(ctx context.Context, r *Run) error
	// Resolver establishes the facts after the irreversible stage began and names the stage
	// to resume from (R58); nil: such a run ends needs_reconciliation as it is.
	Resolver Resolver
}

// StageIndex returns the position of a stage in the action's list, or -1.
func (a Action) StageIndex(stage Stage) int {
	for i, s := range a.Stages {
		if s == stage {
			return i
		}
	}
	return -1
}

// Destructive reports whether reaching the stage at index means an irreversible step may have
// happened. This is the single place that decides it (R27).
func (a Action) Destructive(index int) bool {
	if a.Irreversible == "" || index < 0 {
		return false
	}
	return index >= a.StageIndex(a.Irreversible)
}

// Config tunes the executor.
type Config struct {
	Owner        string // this process's name in lease_owner; unique per replica
	Workers      int
	Lease        time.Duration
	PollInterval time.Duration
	// LongWorkers caps the operations of Long actions this replica runs at once; 0 means
	// DefaultLongWorkers(Workers). A worker claims one only while the cap has room, and claims
	// every other action whatever the long ones do.
	LongWorkers int
	// HealAttempts bounds the resumed runs of one operation past its destructive point, within
	// HealWindow; HealBackoff is the first pause between them (doubling), and FactsBudget how
	// long the reads of the facts are retried before they count as unknowable (R58).
	HealAttempts int
	HealWindow   time.Duration
	HealBackoff  time.Duration
	FactsBudget  time.Duration
	// RunContext, when set, derives each run's context: the wiring marks it so that a Proxmox
	// call of an operation waits for a cluster's agent to be connected (R57), where an API read
	// fails at once.
	RunContext func(context.Context) context.Context
	// TaskObserver, when set, derives a run's context under which every Proxmox task the run
	// starts is handed to the function given (its UPID) before anything waits on it, so that
	// the task is recorded on the row (R58). The wiring sets the Proxmox client's.
	TaskObserver func(ctx context.Context, f func(upid string)) context.Context
	// Now, when set, is the clock the heal's deadlines are read from (the facts budget, the
	// heal window); nil is time.Now. A test moves it past a deadline instead of waiting for it.
	Now func() time.Time
}

// healDefaults: three resumes within 60 s (R58), 5 s backoff doubling (resumes at about 0, 5
// and 15 s after the failures, so that a passing Proxmox trouble has passed), 30 s for the
// facts.
func (cfg *Config) healDefaults() {
	if cfg.HealAttempts < 1 {
		cfg.HealAttempts = 3
	}
	if cfg.HealWindow <= 0 {
		cfg.HealWindow = time.Minute
	}
	if cfg.HealBackoff <= 0 {
		cfg.HealBackoff = 5 * time.Second
	}
	if cfg.FactsBudget <= 0 {
		cfg.FactsBudget = 30 * time.Second
	}
}

// DefaultLongWorkers is the default cap on long operations for a replica with workers workers:
// half of them, at least one, and with more than one worker never all of them.
func DefaultLongWorkers(workers int) int {
	n := max(workers/2, 1)
	if workers > 1 {
		n = min(n, workers-1)
	}
	return n
}

// Executor claims and runs operations.
type Executor struct {
	db      *models.DB
	cfg     Config
	actions map[string]Action
	log     *slog.Logger
	metrics *Metrics
	broker  *Broker
	secrets *Secrets

	// onStart is told of each operation as a worker starts running it (OnStart).
	onStart []func(*models.Operation)

	// long holds one token per long operation running on this replica (Config.LongWorkers).
	long      chan struct{}
	longNames []string // the registered long actions, sorted (set by Start)
	kick      chan struct{}
	stop      chan struct{}
	stopOnce  sync.Once
	runCtx    context.Context
	cancel    context.CancelFunc
	wg        sync.WaitGroup

	// rounds counts the claims the workers completed (ClaimRounds).
	rounds atomic.Int64
}

// New builds an executor. Duplicate action names panic: registration is static.
func New(db *models.DB, cfg Config, log *slog.Logger, m *Metrics, actions ...Action) *Executor {
	if cfg.Workers < 1 {
		cfg.Workers = 1
	}
	if cfg.Lease <= 0 {
		cfg.Lease = 30 * time.Second
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = time.Second
	}
	if cfg.Owner == "" {
		cfg.Owner = "pvebill-" + models.NewID()[:8]
	}
	if cfg.LongWorkers < 1 {
		cfg.LongWorkers = DefaultLongWorkers(cfg.Workers)
	}
	cfg.healDefaults()
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	e := &Executor{db: db, cfg: cfg, actions: map[string]Action{}, log: log, metrics: m,
		long: make(chan struct{}, cfg.LongWorkers), broker: NewBroker(), secrets: NewSecrets(), kick: make(chan struct{}, cfg.Workers), stop: make(chan struct{})}
	e.secrets.owner, e.secrets.pin = cfg.Owner, cfg.Lease
	for _, a := range actions {
		e.Register(a)
	}
	return e
}

// Register adds an action before Start.
func (e *Executor) Register(a Action) {
	if _, dup := e.actions[a.Name]; dup {
		panic("executor: duplicate action " + a.Name)
	}
	if a.Irreversible != "" && a.StageIndex(a.Irreversible) < 0 {
		panic("executor: action " + a.Name + " names an unknown irreversible stage")
	}
	e.actions[a.Name] = a
}

// OnStart registers f to be called, in the worker, as each operation starts running (after its
// claim has locked the service). Registration is static: call it before Start.
func (e *Executor) OnStart(f func(*models.Operation)) { e.onStart = append(e.onStart, f) }

// Broker returns the notifier long-polls wait on.
func (e *Executor) Broker() *Broker { return e.broker }

// Secrets returns the in-memory store of transient secrets (never written anywhere).
func (e *Executor) Secrets() *Secrets { return e.secrets }

// Owner is the lease owner name of this executor.
func (e *Executor) Owner() string { return e.cfg.Owner }

// ClaimRounds is how many times this executor's workers have looked for an operation to claim
// and got an answer from the database, whether or not they found one. It is counted once the
// claim is committed, so whatever that look claimed is already running.
func (e *Executor) ClaimRounds() int64 { return e.rounds.Load() }

// FreshRound is the ClaimRounds count by which at least one look began after this call: a look
// under way now is at most one per worker. A test that must show an operation is not taken
// waits until ClaimRounds reaches it instead of sleeping for a few poll intervals.
func (e *Executor) FreshRound() int64 { return e.rounds.Load() + int64(e.cfg.Workers) + 1 }

// Start launches the workers.
func (e *Executor) Start(ctx context.Context) {
	e.runCtx, e.cancel = context.WithCancel(context.WithoutCancel(ctx))
	e.longNames = e.longActions()
	for i := 0; i < e.cfg.Workers; i++ {
		e.wg.Add(1)
		go e.worker()
	}
}

// Kick wakes one idle worker (called after an operation is queued). A worker that claims an
// operation wakes the next before running it, so a burst of queued operations is taken up by as
// many workers as it needs, while each queued operation costs one claim, not one claim per idle
// worker (a thousand creates at once would otherwise make every idle worker run a claim
// transaction for each of them).
func (e *Executor) Kick() {
	select {
	case e.kick <- struct{}{}:
	default:
	}
}

// Stop stops claiming, lets running stages finish until ctx ends, then cancels them; operations
// cancelled before their irreversible stage are released for another worker or replica.
func (e *Executor) Stop(ctx context.Context) {
	e.stopOnce.Do(func() { close(e.stop) })
	done := make(chan struct{})
	go func() { e.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		if e.cancel != nil {
			e.cancel()
		}
		<-done
	}
	if e.cancel != nil {
		e.cancel()
	}
}

func (e *Executor) worker() {
	defer e.wg.Done()
	ticker := time.NewTicker(e.cfg.PollInterval)
	defer ticker.Stop()
	for {
		select {
		case <-e.stop:
			return
		default:
		}
		if e.claimAndRun() {
			continue
		}
		select {
		case <-e.stop:
			return
		case <-e.kick:
		case <-ticker.C:
		}
	}
}

// claimAndRun claims one operation and runs it; false when there was nothing to claim. A long
// action is claimable only when this replica's cap on long operations has room: the worker
// takes a token first, and gives it back when it claimed something else or its long run ends.
func (e *Executor) claimAndRun() bool {
	var skip []string
	token := e.takeLong()
	if !token {
		skip = e.longNames
	}
	claim, err := e.db.ClaimNext(e.runCtx, e.cfg.Owner, e.cfg.Lease, skip...)
	if err != nil && e.runCtx.Err() == nil {
		e.log.Error("claim operation", "err", err)
	}
	if err == nil {
		e.rounds.Add(1)
	}
	if token && (claim == nil || !e.actions[claim.Op.Action].Long) {
		e.giveLong()
		token = false
	}
	if claim == nil {
		return false
	}
	e.Kick()
	e.execute(claim)
	if token {
		e.giveLong()
	}
	return true
}

func (e *Executor) takeLong() bool {
	select {
	case e.long <- struct{}{}:
		return true
	default:
		return false
	}
}

func (e *Executor) giveLong() { <-e.long }

// longActions names the registered long actions, in order.
func (e *Executor) longActions() []string {
	var out []string
	for name, a := range e.actions {
		if a.Long {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// Run is one execution of an operation, handed to the action.
type Run struct {
	Op       *models.Operation
	Action   Action
	Resumed  bool // a previous attempt had reached a stage (lease taken over, or released)
	resumeAt int
	// from is the stage index a run resumed from the facts starts at (0: the first), cause
	// why (R58).
	from   int
	cause  string
	e      *Executor
	result any
}

// Payload decodes the operation's payload into v.
func (r *Run) Payload(v any) error { return json.Unmarshal([]byte(r.Op.Payload), v) }

// Secret returns a transient secret handed over with the request, if this process holds it.
func (r *Run) Secret(name string) (string, bool) { return r.e.secrets.Get(r.Op.ID, name) }

// SetResult records a JSON-serialisable result on the operation when it finishes.
func (r *Run) SetResult(v any) { r.result = v }

// Stage records on the row that stage is about to run. Stages must be entered in list order.
func (r *Run) Stage(ctx context.Context, stage Stage) error {
	idx := r.Action.StageIndex(stage)
	if idx < 0 {
		return fmt.Errorf("action %s has no stage %q", r.Action.Name, stage)
	}
	if idx < r.Op.StageIndex && !r.Resumed {
		return fmt.Errorf("stage %q entered after %q", stage, r.Op.Stage)
	}
	if err := r.e.db.SetStage(ctx, r.Op.ID, r.e.cfg.Owner, string(stage), idx); err != nil {
		return err
	}
	r.Op.Stage, r.Op.StageIndex = string(stage), idx
	return nil
}

// ReleaseGate gives back the operation's gate (models/gate.go) before the run ends, once the
// part that needed it alone is over, and wakes a worker for the operation queued behind it.
func (r *Run) ReleaseGate(ctx context.Context) error {
	if r.Op.Gate == nil {
		return nil
	}
	err := r.e.db.ReleaseGate(ctx, r.Op.ID, r.e.cfg.Owner)
	r.e.Kick()
	return err
}

// Completed reports whether a resumed run had already finished stage before the takeover
// (stages strictly before the one recorded on the row).
func (r *Run) Completed(stage Stage) bool {
	return r.Resumed && r.Action.StageIndex(stage) < r.resumeAt
}

func (e *Executor) execute(c *models.Claim) {
	op := c.Op
	act, ok := e.actions[op.Action]
	log := e.log.With("operation_id", op.ID, "client_id", op.ClientID, "service_id", op.ServiceID, "action", op.Action)
	if !ok {
		log.Error("no such action")
		e.finish(op, models.OpFailed, nil, problemOf(fmt.Errorf("unknown action %q", op.Action)))
		return
	}
	if c.TakeOver && act.Destructive(op.StageIndex) && act.Resolver == nil {
		// The previous worker died after the irreversible stage had begun, and the action has
		// no resolver to establish the facts (R38).
		log.Warn("lease taken over after the irreversible stage began", "stage", op.Stage)
		e.finish(op, models.OpNeedsReconciliation, nil, i18n.NewProblem(409, i18n.CodeOperationInterrupted))
		return
	}
	for _, f := range e.onStart {
		f(op)
	}
	ctx, cancel := context.WithCancel(e.runCtx)
	defer cancel()
	if e.cfg.RunContext != nil {
		ctx = e.cfg.RunContext(ctx)
	}
	hbDone := make(chan struct{})
	go e.heartbeat(ctx, cancel, op.ID, hbDone)
	// A run resumes when a previous attempt reached a stage: taken over from a dead worker,
	// released at a graceful shutdown, or parked for a secret.
	run := &Run{Op: op, Action: act, Resumed: c.TakeOver || op.StageIndex >= 0, resumeAt: op.StageIndex, e: e}
	ctx = e.observeTasks(ctx, run, log)
	start := time.Now()
	var end healEnd
	if act.Resolver != nil && act.Destructive(op.StageIndex) {
		// Taken over, or woken with the secret it waited for, past the destructive point: the
		// facts decide where it resumes (R58).
		cause := CauseTakenOver
		if !c.TakeOver {
			cause = CauseWoken
		}
		log.Warn("operation past the irreversible stage resumes from the facts", "stage", op.Stage, "cause", cause)
		end = e.heal(ctx, run, log, cause, i18n.NewProblem(409, i18n.CodeOperationInterrupted))
	} else {
		end.err = safeRun(ctx, act, run)
		if end.err != nil && act.Resolver != nil && act.Destructive(run.Op.StageIndex) && ctx.Err() == nil &&
			!errors.Is(end.err, models.ErrLeaseLost) {
			end = e.heal(ctx, run, log, CauseFailed, end.err)
		}
	}
	if end.err != nil && ctx.Err() != nil && e.runCtx.Err() == nil {
		// Only the heartbeat cancels a run while the executor runs: the lease is gone.
		end = healEnd{err: models.ErrLeaseLost}
	}
	cancel()
	<-hbDone
	e.metrics.observe(op.Action, time.Since(start))
	e.conclude(op, act, run, end, log)
}

// conclude records how a run ended.
func (e *Executor) conclude(op *models.Operation, act Action, run *Run, end healEnd, log *slog.Logger) {
	err := end.err
	switch {
	case errors.Is(err, models.ErrLeaseLost):
		log.Warn("lease lost; another worker owns the operation now")
	case end.await != "":
		e.park(op, end.await, log)
	case end.rec != nil:
		p := i18n.NewProblem(409, i18n.CodeOperationInterrupted)
		if err != nil {
			p = problemOf(err)
		}
		e.finishWith(op, models.OpNeedsReconciliation, run.result, p, end.rec)
	case err == nil:
		e.finish(op, models.OpSucceeded, run.result, nil)
	case e.runCtx.Err() != nil && !act.Destructive(run.Op.StageIndex):
		// Shutdown before anything irreversible: give it back.
		if rerr := e.db.Release(context.Background(), op.ID, e.cfg.Owner); rerr != nil {
			log.Error("release operation", "err", rerr)
		} else {
			log.Info("operation released at shutdown", "stage", run.Op.Stage)
		}
	case e.runCtx.Err() != nil:
		log.Warn("shutdown after the irreversible stage began; the lease will expire", "stage", run.Op.Stage)
	case act.Resolver != nil && act.Destructive(run.Op.StageIndex):
		// The database failed while the facts were being recorded (a replica's database node
		// lost): nothing says the facts cannot be established, so the run is left to its lease,
		// and the worker that takes it over reads them again (R58).
		log.Warn("the database failed while resuming from the facts; the lease will expire and the facts be read again",
			"stage", run.Op.Stage, "err", err)
	case act.Destructive(run.Op.StageIndex):
		e.finish(op, models.OpNeedsReconciliation, run.result, problemOf(err))
	default:
		e.finish(op, models.OpFailed, run.result, problemOf(err))
	}
}

// park puts an operation back in the queue until what it waits for arrives (R58): its lock
// stays closed and its stage recorded; long-polls hear of it.
func (e *Executor) park(op *models.Operation, what string, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(e.runCtx), 10*time.Second)
	defer cancel()
	if err := e.db.Park(ctx, op.ID, e.cfg.Owner, what); err != nil {
		log.Error("park operation", "err", err)
		return
	}
	e.secrets.Drop(op.ID)
	log.Info("operation waits for what it needs", "awaiting", what, "stage", op.Stage)
	e.broker.Publish(op.ID)
}

func safeRun(ctx context.Context, act Action, run *Run) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic in action %s: %v", act.Name, p)
		}
	}()
	return act.Run(ctx, run)
}

func problemOf(err error) *i18n.Problem {
	var p *i18n.Problem
	if errors.As(err, &p) {
		return p
	}
	return i18n.NewProblem(500, i18n.CodeInternal).Wrap(err)
}

func (e *Executor) finish(op *models.Operation, state string, result any, p *i18n.Problem) {
	e.finishWith(op, state, result, p, nil)
}

func (e *Executor) finishWith(op *models.Operation, state string, result any, p *i18n.Problem, rec *Reconciliation) {
	out := models.Outcome{State: state}
	if rec != nil {
		raw, _ := json.Marshal(rec)
		s := string(raw)
		out.Reconciliation, op.Reconciliation = &s, &s
	}
	if result != nil {
		if b, err := json.Marshal(result); err == nil {
			s := string(b)
			out.Result = &s
		}
	}
	if p != nil {
		c := string(p.Code)
		d := p.Detail("en")
		out.ErrorCode, out.ErrorDetail = &c, &d
		if p.Permanence != "" {
			perm := string(p.Permanence)
			out.ErrorPermanence = &perm
		}
		if r := p.Params[i18n.ParamReason]; r != "" {
			out.ErrorReason = &r
		}
		// The blockers the run found stay with the error, so every view of the operation lists
		// them (R25).
		for _, b := range p.Blockers {
			out.ErrorBlockers = append(out.ErrorBlockers, models.StoredBlocker{Code: b.Code, Params: b.Params})
		}
		e.log.Warn("operation ended with an error", "operation_id", op.ID, "code", c, "err", p.Error())
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(e.runCtx), 10*time.Second)
	defer cancel()
	if err := e.db.FinishOutcome(ctx, op.ID, e.cfg.Owner, out); err != nil {
		e.log.Error("finish operation", "operation_id", op.ID, "err", err)
		return
	}
	e.secrets.Drop(op.ID)
	e.metrics.finished(op.Action, state)
	e.broker.Publish(op.ID)
}

func (e *Executor) heartbeat(ctx context.Context, cancel context.CancelFunc, id string, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(e.cfg.Lease / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			err := e.db.RenewLease(context.WithoutCancel(ctx), id, e.cfg.Owner, e.cfg.Lease)
			if errors.Is(err, models.ErrLeaseLost) {
				e.log.Warn("lease lost during run", "operation_id", id)
				cancel()
				return
			}
			if err != nil {
				e.log.Error("renew lease", "operation_id", id, "err", err)
			}
		}
	}
}

// Metrics are the executor's Prometheus series.
type Metrics struct {
	total    *prometheus.CounterVec
	duration *prometheus.HistogramVec
	resumed  *prometheus.CounterVec
}

// NewMetrics registers the executor's metrics on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		total: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pvebill_operations_total",
			Help: "Operations that reached a terminal state, by action and result."}, []string{"action", "result"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "pvebill_operation_duration_seconds",
			Help: "Time an operation ran in a worker, by action.", Buckets: []float64{.1, .5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}},
			[]string{"action"}),
		resumed: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pvebill_operations_resumed_total",
			Help: "Runs resumed from the facts after a failure or a takeover past the destructive point (R58), by action and the stage resumed from."},
			[]string{"action", "stage"}),
	}
	reg.MustRegister(m.total, m.duration, m.resumed)
	return m
}

func (m *Metrics) finished(action, state string) {
	m.total.WithLabelValues(action, state).Inc()
}

func (m *Metrics) observe(action string, d time.Duration) {
	m.duration.WithLabelValues(action).Observe(d.Seconds())
}
