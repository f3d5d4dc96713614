package executor_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
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
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

type probe struct {
	gate     chan struct{}
	failAt   executor.Stage
	panicAt  executor.Stage
	runs     atomic.Int32
	resumed  atomic.Bool
	skipped  atomic.Int32
	finished atomic.Int32
}

func (p *probe) action() executor.Action {
	return executor.Action{
		Name:         "replace",
		Stages:       []executor.Stage{"precheck", "stop", "destroy", "create", "start"},
		Irreversible: "destroy",
		Run: func(ctx context.Context, r *executor.Run) error {
			p.runs.Add(1)
			if r.Resumed {
				p.resumed.Store(true)
			}
			for _, st := range r.Action.Stages {
				if r.Completed(st) {
					p.skipped.Add(1)
					continue
				}
				if err := r.Stage(ctx, st); err != nil {
					return err
				}
				if st == "stop" && p.gate != nil {
					select {
					case <-p.gate:
					case <-ctx.Done():
						return ctx.Err()
					}
				}
				if st == p.panicAt {
					panic("boom at " + string(st))
				}
				if st == p.failAt {
					return i18n.NewProblem(502, i18n.CodeProxmoxTaskFailed)
				}
			}
			p.finished.Add(1)
			return nil
		},
	}
}

func start(t *testing.T, db *models.DB, p *probe, owner string, lease time.Duration) (*executor.Executor, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	e := executor.New(db, executor.Config{Owner: owner, Workers: 2, Lease: lease, PollInterval: 20 * time.Millisecond},
		quiet, executor.NewMetrics(reg), p.action())
	e.Start(context.Background())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		e.Stop(ctx)
	})
	return e, reg
}

func enqueue(t *testing.T, db *models.DB, svc string) *models.Operation {
	t.Helper()
	ctx := context.Background()
	if _, err := db.GetService(ctx, models.ServiceKey{ClientID: "c", ServiceID: svc}); errors.Is(err, models.ErrNotFound) {
		if err := db.InsertService(ctx, &models.Service{ServiceID: svc, ClientID: "c", State: models.ServiceActive}); err != nil {
			t.Fatal(err)
		}
	}
	op := &models.Operation{ServiceID: svc, ClientID: "c", Action: "replace", Payload: "{}"}
	if err := db.InsertOperation(ctx, op); err != nil {
		t.Fatal(err)
	}
	return op
}

func waitState(t *testing.T, db *models.DB, e *executor.Executor, id string) *models.Operation {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	op, err := executor.WaitTerminal(ctx, db, e.Broker(), id, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if !models.IsTerminal(op.State) {
		t.Fatalf("operation still %s at stage %s", op.State, op.Stage)
	}
	return op
}

func lockOf(t *testing.T, db *models.DB, svc string) *string {
	t.Helper()
	s, err := db.GetService(context.Background(), models.ServiceKey{ClientID: "c", ServiceID: svc})
	if err != nil {
		t.Fatal(err)
	}
	return s.LockOperationID
}

func TestSuccessReleasesLockAndCounts(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		p := &probe{}
		e, reg := start(t, db, p, "w", 5*time.Second)
		op := enqueue(t, db, "svc")
		e.Kick()
		got := waitState(t, db, e, op.ID)
		if got.State != models.OpSucceeded || got.Stage != "start" || got.FinishedAt == nil {
			t.Fatalf("%+v", got)
		}
		if lockOf(t, db, "svc") != nil {
			t.Fatal("lock not released")
		}
		if n := counterValue(t, reg, "pvebill_operations_total", "result", "succeeded"); n != 1 {
			t.Fatalf("pvebill_operations_total{succeeded} = %v", n)
		}
	})
}

func counterValue(t *testing.T, reg *prometheus.Registry, name, label, value string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// R27/R28: a failure before the irreversible stage fails and releases the lock; at or after it,
// the operation needs reconciliation and the lock stays closed.
func TestFailureBeforeAndAfterIrreversibleStage(t *testing.T) {
	for _, tc := range []struct {
		stage string
		want  string
		lock  bool
	}{
		{"precheck", models.OpFailed, false},
		{"stop", models.OpFailed, false},
		{"destroy", models.OpNeedsReconciliation, true},
		{"create", models.OpNeedsReconciliation, true},
		{"start", models.OpNeedsReconciliation, true},
	} {
		t.Run(tc.stage, func(t *testing.T) {
			dbtest.Each(t, func(t *testing.T, db *models.DB) {
				p := &probe{failAt: executor.Stage(tc.stage)}
				e, _ := start(t, db, p, "w", 5*time.Second)
				op := enqueue(t, db, "svc")
				e.Kick()
				got := waitState(t, db, e, op.ID)
				if got.State != tc.want || got.Stage != tc.stage || got.ErrorCode == nil || *got.ErrorCode != "proxmox_task_failed" {
					t.Fatalf("state %s stage %s code %v", got.State, got.Stage, got.ErrorCode)
				}
				if (lockOf(t, db, "svc") != nil) != tc.lock {
					t.Fatalf("lock held = %v, want %v", lockOf(t, db, "svc") != nil, tc.lock)
				}
			})
		})
	}
}

func TestPanicInActionFailsTheOperation(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		e, _ := start(t, db, &probe{panicAt: "precheck"}, "w", 5*time.Second)
		op := enqueue(t, db, "svc")
		e.Kick()
		got := waitState(t, db, e, op.ID)
		if got.State != models.OpFailed || *got.ErrorCode != "internal_error" {
			t.Fatalf("%+v", got)
		}
	})
}

// One running operation per service: a second operation waits for the first.
func TestOneRunningOperationPerService(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		p := &probe{gate: make(chan struct{})}
		e, _ := start(t, db, p, "w", 5*time.Second)
		first := enqueue(t, db, "svc")
		second := enqueue(t, db, "svc")
		e.Kick()
		poll.Until(t, 10*time.Second, "the first run to start", func() bool { return p.runs.Load() >= 1 })
		// Both workers look for work again while the first run holds the service: the second
		// operation is theirs to take if the lock let it through.
		claimRounds(t, e)
		if n := p.runs.Load(); n != 1 {
			t.Fatalf("%d runs started while the first holds the service", n)
		}
		s, _ := db.GetOperation(t.Context(), second.ID)
		if s.State != models.OpQueued {
			t.Fatalf("second is %s", s.State)
		}
		close(p.gate)
		waitState(t, db, e, first.ID)
		if got := waitState(t, db, e, second.ID); got.State != models.OpSucceeded {
			t.Fatalf("second: %+v", got)
		}
	})
}

// The heartbeat keeps the lease alive for a run longer than the lease.
func TestHeartbeatKeepsLease(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		p := &probe{gate: make(chan struct{})}
		// A lease of 1 s renewed every third of it; the run outlives it several times over.
		e, _ := start(t, db, p, "w1", time.Second)
		op := enqueue(t, db, "svc")
		e.Kick()
		// The run outlives its first lease: the lease has been renewed past twice its length
		// after the run started.
		poll.Until(t, 10*time.Second, "the run to start", func() bool { return p.runs.Load() == 1 })
		started := models.Now()
		renewedPast := func(at time.Time) func() bool {
			return func() bool {
				got, err := db.GetOperation(context.Background(), op.ID)
				return err == nil && got.LeaseUntil != nil && got.LeaseUntil.After(at)
			}
		}
		poll.Until(t, 10*time.Second, "the lease renewed twice over", renewedPast(started.Add(2*time.Second)))
		// A second executor, claiming every 20 ms, must not take it over while the first renews
		// it, for two more renewals.
		p2 := &probe{}
		start(t, db, p2, "w2", time.Second)
		poll.Until(t, 10*time.Second, "two more renewals", renewedPast(models.Now().Add(time.Second+700*time.Millisecond)))
		if p2.runs.Load() != 0 {
			t.Fatal("a live operation was taken over")
		}
		close(p.gate)
		if got := waitState(t, db, e, op.ID); got.State != models.OpSucceeded || got.Attempts != 1 {
			t.Fatalf("%+v", got)
		}
	})
}

// R38: a crashed worker's operation is resumed when no irreversible stage had started…
func TestTakeoverResumesBeforeIrreversibleStage(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		op := enqueue(t, db, "svc")
		c, err := db.ClaimNext(ctx, "crashed", time.Minute)
		if err != nil || c == nil {
			t.Fatal(c, err)
		}
		if err := db.SetStage(ctx, op.ID, "crashed", "stop", 1); err != nil {
			t.Fatal(err)
		}
		dbtest.ExpireLease(t, db, op.ID)
		p := &probe{}
		e, _ := start(t, db, p, "survivor", 5*time.Second)
		got := waitState(t, db, e, op.ID)
		if got.State != models.OpSucceeded || !p.resumed.Load() || p.skipped.Load() != 1 || got.Attempts != 2 {
			t.Fatalf("state %s resumed %v skipped %d attempts %d", got.State, p.resumed.Load(), p.skipped.Load(), got.Attempts)
		}
	})
}

// …and moved to needs_reconciliation when it had.
func TestTakeoverAfterIrreversibleStageNeedsReconciliation(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		op := enqueue(t, db, "svc")
		if c, err := db.ClaimNext(ctx, "crashed", time.Minute); err != nil || c == nil {
			t.Fatal(c, err)
		}
		if err := db.SetStage(ctx, op.ID, "crashed", "destroy", 2); err != nil {
			t.Fatal(err)
		}
		dbtest.ExpireLease(t, db, op.ID)
		p := &probe{}
		e, _ := start(t, db, p, "survivor", 5*time.Second)
		got := waitState(t, db, e, op.ID)
		if got.State != models.OpNeedsReconciliation || got.Stage != "destroy" || *got.ErrorCode != "operation_interrupted" {
			t.Fatalf("%+v", got)
		}
		if p.runs.Load() != 0 {
			t.Fatal("the action ran again after an interrupted destroy")
		}
		if lockOf(t, db, "svc") == nil {
			t.Fatal("lock released")
		}
	})
}

// Graceful stop: a run cancelled before its irreversible stage is released to the queue.
func TestStopReleasesRunBeforeIrreversibleStage(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		p := &probe{gate: make(chan struct{})}
		reg := prometheus.NewRegistry()
		e := executor.New(db, executor.Config{Owner: "w", Workers: 1, Lease: 5 * time.Second, PollInterval: 20 * time.Millisecond},
			quiet, executor.NewMetrics(reg), p.action())
		e.Start(context.Background())
		op := enqueue(t, db, "svc")
		e.Kick()
		poll.Until(t, 5*time.Second, "the run to start", func() bool { return p.runs.Load() > 0 })
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		e.Stop(ctx)
		got, _ := db.GetOperation(context.Background(), op.ID)
		if got.State != models.OpQueued || got.LeaseOwner != nil || lockOf(t, db, "svc") != nil {
			t.Fatalf("after stop: state %s owner %v lock %v", got.State, got.LeaseOwner, lockOf(t, db, "svc"))
		}
		// A fresh executor picks it up and finishes it.
		e2, _ := start(t, db, &probe{}, "w2", 5*time.Second)
		if got := waitState(t, db, e2, op.ID); got.State != models.OpSucceeded {
			t.Fatalf("%+v", got)
		}
	})
}

func TestDestructiveIsDerivedFromPosition(t *testing.T) {
	a := (&probe{}).action()
	for i, want := range []bool{false, false, true, true, true} {
		if a.Destructive(i) != want {
			t.Errorf("stage %s destructive = %v", a.Stages[i], !want)
		}
	}
	if a.Destructive(-1) {
		t.Error("no stage yet is destructive")
	}
	if (executor.Action{Stages: []executor.Stage{"a"}}).Destructive(0) {
		t.Error("an action without an irreversible stage is never destructive")
	}
}

// claimRounds waits until e's workers have looked for work again, at least once after this call
// (executor.FreshRound): whatever they could have taken by now, they have taken.
func claimRounds(t *testing.T, e *executor.Executor) {
	t.Helper()
	until := e.FreshRound()
	poll.Until(t, 10*time.Second, "the workers to look for work again", func() bool { return e.ClaimRounds() >= until })
}

// countClaims counts the claim queries (the runnable-operations select) run on db.
func countClaims(t *testing.T, db *models.DB) *atomic.Int64 {
	t.Helper()
	var n atomic.Int64
	dbtest.After(t, db, "test:claims", func(tx *gorm.DB) {
		if strings.Contains(tx.Statement.SQL.String(), "ORDER BY created_at, id") {
			n.Add(1)
		}
	}, dbtest.OnQuery)
	return &n
}

// A queued operation wakes one idle worker, not all of them: each Kick costs about one claim
// however many workers are idle, and a burst queued behind a single Kick is still taken up by
// as many workers as it needs (each worker that claims wakes the next).
func TestKickWakesOneWorkerAndClaimsChain(t *testing.T) {
	for _, dialect := range dbtest.Dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			db := dbtest.Open(t, dialect)
			claims := countClaims(t, db) // registered before any worker runs a query
			p := &probe{gate: make(chan struct{})}
			e := executor.New(db, executor.Config{Owner: "a", Workers: 32, Lease: 10 * time.Second, PollInterval: time.Hour},
				quiet, executor.NewMetrics(prometheus.NewRegistry()), p.action())
			e.Start(t.Context())
			t.Cleanup(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				defer cancel()
				e.Stop(ctx)
			})
			// The workers' first claims at start find nothing; they are all over before the count
			// below begins (a claim still under way would land in it).
			poll.Until(t, 10*time.Second, "every worker's first claim", func() bool { return e.ClaimRounds() >= 32 })

			// A burst of 12 behind one Kick: all 12 end up running at once (the gate holds them).
			var ops []*models.Operation
			for i := range 12 {
				ops = append(ops, enqueue(t, db, fmt.Sprintf("burst-%02d", i)))
			}
			e.Kick()
			poll.Wait(5*time.Second, func() bool { return p.runs.Load() >= 12 })
			if got := p.runs.Load(); got != 12 {
				t.Fatalf("%d of 12 queued operations started after one Kick", got)
			}
			close(p.gate)
			for _, op := range ops {
				waitState(t, db, e, op.ID)
			}

			// Operations queued one at a time, each with its Kick, while 32 workers idle.
			before := claims.Load()
			for i := range 10 {
				op := enqueue(t, db, fmt.Sprintf("single-%02d", i))
				e.Kick()
				waitState(t, db, e, op.ID)
			}
			// Each costs its own claim, the one the claiming worker's wake-up causes, and the one its
			// worker makes after finishing it, about 30 in all; the room is for the burst's 12
			// workers, whose look for more work after finishing may land after the count began,
			// and for a claim retried after a deadlock. Not one per idle worker, which made 330.
			if got := claims.Load() - before; got > 45 {
				t.Errorf("%d claim queries for 10 operations queued one at a time with 32 idle workers", got)
			}
		})
	}
}
