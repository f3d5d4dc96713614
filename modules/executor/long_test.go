package executor_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"pvebill/models"
	"pvebill/models/dbtest"
	"pvebill/modules/executor"
)

// longProbe is a long action that runs until its run is let go, counting how many of it run at
// once, and a quick action that returns at once.
type longProbe struct {
	release chan struct{}
	running atomic.Int32
	mu      sync.Mutex
	most    int32
}

func (p *longProbe) actions() []executor.Action {
	return []executor.Action{
		{Name: "long", Long: true, Stages: []executor.Stage{"work"}, Run: func(ctx context.Context, r *executor.Run) error {
			if err := r.Stage(ctx, "work"); err != nil {
				return err
			}
			n := p.running.Add(1)
			defer p.running.Add(-1)
			p.mu.Lock()
			p.most = max(p.most, n)
			p.mu.Unlock()
			select {
			case <-p.release:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}},
		{Name: "quick", Stages: []executor.Stage{"work"}, Run: func(ctx context.Context, r *executor.Run) error {
			return r.Stage(ctx, "work")
		}},
	}
}

func enqueueAction(t *testing.T, db *models.DB, svc, action string) *models.Operation {
	t.Helper()
	ctx := context.Background()
	if err := db.InsertService(ctx, &models.Service{ServiceID: svc, ClientID: "c", State: models.ServiceActive}); err != nil {
		t.Fatal(err)
	}
	op := &models.Operation{ServiceID: svc, ClientID: "c", Action: action, Payload: "{}"}
	if err := db.InsertOperation(ctx, op); err != nil {
		t.Fatal(err)
	}
	return op
}

func countOps(t *testing.T, db *models.DB, action, state string) int64 {
	t.Helper()
	return dbtest.Count(t, db, "SELECT COUNT(*) FROM operations WHERE action = ? AND state = ?", action, state)
}

// R42: with two workers and a cap of one long operation, three queued long operations (each on
// its own service) run one at a time, and a quick operation queued behind them runs while the
// first is still running: the operations table shows one long operation running and two queued
// when the quick one has succeeded, and no two long runs were ever seen at once.
func TestLongActionsLeaveAWorkerFree(t *testing.T) {
	for _, dialect := range dbtest.Dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			db := dbtest.Open(t, dialect)
			p := &longProbe{release: make(chan struct{})}
			e := executor.New(db, executor.Config{Owner: "capped", Workers: 2, LongWorkers: 1, Lease: 5 * time.Second,
				PollInterval: 20 * time.Millisecond}, quiet, executor.NewMetrics(prometheus.NewRegistry()), p.actions()...)
			var longs []*models.Operation
			for _, svc := range []string{"l1", "l2", "l3"} {
				longs = append(longs, enqueueAction(t, db, svc, "long"))
			}
			quick := enqueueAction(t, db, "q1", "quick")
			e.Start(t.Context())
			t.Cleanup(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				defer cancel()
				e.Stop(ctx)
			})
			if got := waitState(t, db, e, quick.ID); got.State != models.OpSucceeded {
				t.Fatalf("quick ended %s", got.State)
			}
			// The free worker looks for work again: a second long run would start now.
			claimRounds(t, e)
			if r, q := countOps(t, db, "long", models.OpRunning), countOps(t, db, "long", models.OpQueued); r != 1 || q != 2 {
				t.Fatalf("after the quick operation: %d long running, %d queued; want 1 and 2", r, q)
			}
			for range longs {
				p.release <- struct{}{}
			}
			for _, op := range longs {
				if got := waitState(t, db, e, op.ID); got.State != models.OpSucceeded {
					t.Fatalf("long ended %s", got.State)
				}
			}
			p.mu.Lock()
			defer p.mu.Unlock()
			if p.most != 1 {
				t.Fatalf("%d long operations ran at once, cap 1", p.most)
			}
		})
	}
}

// The default cap is half the workers, at least one, and with more than one worker never all.
func TestDefaultLongWorkers(t *testing.T) {
	for workers, want := range map[int]int{1: 1, 2: 1, 3: 1, 4: 2, 5: 2, 8: 4, 256: 128} {
		if got := executor.DefaultLongWorkers(workers); got != want {
			t.Errorf("DefaultLongWorkers(%d) = %d, want %d", workers, got, want)
		}
	}
}
