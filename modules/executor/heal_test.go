package executor_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"gorm.io/gorm"

	"pvebill/i18n"
	"pvebill/models"
	"pvebill/models/dbtest"
	"pvebill/modules/executor"
	"pvebill/modules/stack/stacktest/poll"
	"pvebill/modules/stack/stacktest/testclock"
)

// healer is an action with an irreversible stage whose steps record what ran, fail where told,
// and whose resolver answers what the test scripts (R58).
type healer struct {
	mu      sync.Mutex
	ran     []executor.Stage
	failAt  map[executor.Stage]int // stage -> failures left (-1: always)
	resolve func(r *executor.Run) (executor.Decision, error)
	calls   int
	// clock, when set, is the executor's clock (its heal deadlines).
	clock *testclock.Clock
}

func (h *healer) action() executor.Action {
	stages := []executor.Stage{"precheck", "destroy", "create", "start"}
	steps := make([]executor.Step[*healer], len(stages))
	for i, st := range stages {
		steps[i] = executor.Step[*healer]{Stage: st, Run: func(_ context.Context, h *healer) error {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.ran = append(h.ran, st)
			if n := h.failAt[st]; n != 0 {
				if n > 0 {
					h.failAt[st] = n - 1
				}
				return i18n.NewProblem(502, i18n.CodeProxmoxTaskFailed)
			}
			return nil
		}}
	}
	return executor.Action{Name: "replace", Stages: stages, Irreversible: "destroy",
		Run: func(ctx context.Context, r *executor.Run) error { return executor.RunSteps(ctx, r, steps, h) },
		Resolver: executor.ResolverFunc(func(_ context.Context, r *executor.Run) (executor.Decision, error) {
			h.mu.Lock()
			h.calls++
			h.mu.Unlock()
			return h.resolve(r)
		})}
}

// startHealer runs h's action on one worker with a 5 s lease (or lease, when given).
func startHealer(t *testing.T, db *models.DB, h *healer, lease ...time.Duration) *executor.Executor {
	t.Helper()
	cfg := executor.Config{Owner: "w", Workers: 1, Lease: 5 * time.Second, PollInterval: 20 * time.Millisecond,
		HealBackoff: 10 * time.Millisecond, FactsBudget: 200 * time.Millisecond}
	if len(lease) > 0 {
		cfg.Lease = lease[0]
	}
	if h.clock != nil {
		cfg.Now = h.clock.Now
	}
	e := executor.New(db, cfg, quiet, executor.NewMetrics(prometheus.NewRegistry()), h.action())
	e.Start(context.Background())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		e.Stop(ctx)
	})
	return e
}

func present(b bool) *bool { return &b }

func reconciliationOf(t *testing.T, op *models.Operation) executor.Reconciliation {
	t.Helper()
	var rec executor.Reconciliation
	if op.Reconciliation == nil || json.Unmarshal([]byte(*op.Reconciliation), &rec) != nil {
		t.Fatalf("no reconciliation on %s operation", op.State)
	}
	return rec
}

// R58: a run that fails past its irreversible stage is resumed where the resolver says, the
// stages before it skipped; one whose resumes keep failing is needs_reconciliation
// (resume_failed) after three; facts that cannot be read are proxmox_unreachable after the
// budget, a lock nobody recorded task_not_recorded; a run that needs a secret is parked and
// claimed by nobody.
func TestHealFromTheFacts(t *testing.T) {
	resumeAt := func(st executor.Stage) func(*executor.Run) (executor.Decision, error) {
		return func(*executor.Run) (executor.Decision, error) {
			return executor.Decision{Resume: st, Facts: executor.Facts{VMID: 7, GuestPresent: present(false)}}, nil
		}
	}
	clock := &testclock.Clock{}
	cases := []struct {
		name     string
		failAt   map[executor.Stage]int
		resolve  func(*executor.Run) (executor.Decision, error)
		state    string
		reason   string
		resumed  int
		ran      []executor.Stage
		parked   bool
		minCalls int
	}{
		{name: "resumed once", failAt: map[executor.Stage]int{"create": 1}, resolve: resumeAt("create"),
			state: models.OpSucceeded, resumed: 1, ran: []executor.Stage{"precheck", "destroy", "create", "create", "start"}},
		{name: "resume keeps failing", failAt: map[executor.Stage]int{"create": -1}, resolve: resumeAt("create"),
			state: models.OpNeedsReconciliation, reason: executor.ReasonResumeFailed, resumed: 3,
			ran: []executor.Stage{"precheck", "destroy", "create", "create", "create", "create"}},
		{name: "facts unreadable", failAt: map[executor.Stage]int{"destroy": 1},
			resolve: func(*executor.Run) (executor.Decision, error) {
				return executor.Decision{}, errors.New("connection refused")
			},
			state: models.OpNeedsReconciliation, reason: executor.ReasonUnreachable, ran: []executor.Stage{"precheck", "destroy"}, minCalls: 3},
		{name: "one read outlasting the budget", failAt: map[executor.Stage]int{"destroy": 1},
			resolve: slowFirstRead(clock, 300*time.Millisecond, resumeAt("create")),
			state:   models.OpSucceeded, resumed: 1, ran: []executor.Stage{"precheck", "destroy", "create", "start"}, minCalls: 2},
		{name: "locked by a task nobody recorded", failAt: map[executor.Stage]int{"destroy": 1},
			resolve: func(*executor.Run) (executor.Decision, error) {
				return executor.Decision{Facts: executor.Facts{Lock: "destroyed"}}, executor.ErrUnsettled
			},
			state: models.OpNeedsReconciliation, reason: executor.ReasonTaskNotRecorded, ran: []executor.Stage{"precheck", "destroy"}, minCalls: 3},
		{name: "waits for the password", failAt: map[executor.Stage]int{"destroy": 1},
			resolve: func(*executor.Run) (executor.Decision, error) {
				return executor.Decision{Resume: "create", Await: models.AwaitingPassword}, nil
			},
			parked: true, ran: []executor.Stage{"precheck", "destroy"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dbtest.Each(t, func(t *testing.T, db *models.DB) {
				fail := map[executor.Stage]int{}
				for k, v := range c.failAt {
					fail[k] = v
				}
				h := &healer{failAt: fail, resolve: c.resolve, clock: clock}
				e := startHealer(t, db, h)
				op := enqueue(t, db, "svc")
				e.Kick()
				if c.parked {
					poll.Until(t, 5*time.Second, "the operation to be parked", func() bool {
						got, err := db.GetOperation(t.Context(), op.ID)
						return err == nil && got.State == models.OpQueued && got.Awaiting != nil
					})
					claimRounds(t, e) // the worker looks for work again: it may not take the parked one
					if got, _ := db.GetOperation(t.Context(), op.ID); got.State != models.OpQueued || lockOf(t, db, "svc") == nil {
						t.Fatalf("parked operation %s, lock %v", got.State, lockOf(t, db, "svc"))
					}
				} else {
					got := waitState(t, db, e, op.ID)
					if got.State != c.state || got.Resumed != c.resumed {
						t.Fatalf("operation %s resumed %d", got.State, got.Resumed)
					}
					if c.reason != "" {
						if rec := reconciliationOf(t, got); rec.Reason != c.reason {
							t.Fatalf("reason %q, want %q", rec.Reason, c.reason)
						}
					}
				}
				h.mu.Lock()
				defer h.mu.Unlock()
				if len(h.ran) != len(c.ran) {
					t.Fatalf("stages ran %v, want %v", h.ran, c.ran)
				}
				for i := range h.ran {
					if h.ran[i] != c.ran[i] {
						t.Fatalf("stages ran %v, want %v", h.ran, c.ran)
					}
				}
				if h.calls < c.minCalls {
					t.Fatalf("the facts were read %d times, want at least %d (retried within the budget)", h.calls, c.minCalls)
				}
			})
		})
	}
}

// R58: the database failing while a resume is being recorded (a database node lost) is no
// reason for needs_reconciliation: the run is left to its lease, and the worker that takes it
// over reads the facts again and finishes it.
func TestHealOutlivesADatabaseFailure(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		var injected atomic.Int32
		dbtest.BeforeCreate(t, db, "test:lose-resume", func(tx *gorm.DB) {
			ev, ok := tx.Statement.Dest.(*models.AuditEvent)
			if ok && ev.Event == "operation_resumed" && injected.Add(1) == 1 {
				_ = tx.AddError(errors.New("injected: the database node went away"))
			}
		})
		h := &healer{failAt: map[executor.Stage]int{"create": 1},
			resolve: func(*executor.Run) (executor.Decision, error) {
				return executor.Decision{Resume: "create", Facts: executor.Facts{VMID: 7, GuestPresent: present(false)}}, nil
			}}
		e := startHealer(t, db, h, 400*time.Millisecond)
		op := enqueue(t, db, "svc")
		e.Kick()
		got := waitState(t, db, e, op.ID)
		if got.State != models.OpSucceeded || got.Reconciliation != nil {
			t.Fatalf("operation %s (reconciliation %v), want succeeded after the takeover", got.State, got.Reconciliation)
		}
		if n := injected.Load(); n < 2 {
			t.Fatalf("%d resumes recorded, want the failed one and the takeover's", n)
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.calls < 2 {
			t.Fatalf("the facts were read %d times, want again after the takeover", h.calls)
		}
	})
}

// slowFirstRead is a resolver whose first read of each operation fails after d on clock (a call
// hung on a lost connection: the clock is moved on by d, as if the read had taken that long), and
// which then answers as then does.
func slowFirstRead(clock *testclock.Clock, d time.Duration, then func(*executor.Run) (executor.Decision, error)) func(*executor.Run) (executor.Decision, error) {
	var mu sync.Mutex
	read := map[string]bool{}
	return func(r *executor.Run) (executor.Decision, error) {
		mu.Lock()
		first := !read[r.Op.ID]
		read[r.Op.ID] = true
		mu.Unlock()
		if first {
			clock.Advance(d)
			return executor.Decision{}, errors.New("http2: client connection lost")
		}
		return then(r)
	}
}
