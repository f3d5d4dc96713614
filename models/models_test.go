package models_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"pvebill/models"
	"pvebill/models/dbtest"
)

func TestMigrationsApplyFromEmptyAndSchemaCheck(t *testing.T) {
	t.Parallel()
	for _, d := range dbtest.Dialects(t) {
		t.Run(d, func(t *testing.T) {
			ctx := t.Context()
			db := dbtest.OpenEmpty(t, d)
			var behind *models.ErrSchemaBehind
			if err := db.CheckSchema(ctx); !errors.As(err, &behind) || len(behind.Pending) == 0 {
				t.Fatalf("empty schema: CheckSchema = %v, want ErrSchemaBehind", err)
			}
			applied, err := db.Migrate(ctx)
			if err != nil {
				t.Fatal(err)
			}
			all, _ := models.Migrations(d)
			if len(applied) != len(all) {
				t.Fatalf("applied %v, want all %d", applied, len(all))
			}
			if err := db.CheckSchema(ctx); err != nil {
				t.Fatalf("after migrate: %v", err)
			}
			again, err := db.Migrate(ctx)
			if err != nil || len(again) != 0 {
				t.Fatalf("second migrate applied %v, %v", again, err)
			}
			// Every table exists and is usable.
			for _, table := range []string{"services", "operations", "idempotency_keys", "audit_events", "schema_migrations"} {
				var n int64
				if err := db.Gorm.Table(table).Count(&n).Error; err != nil {
					t.Errorf("table %s: %v", table, err)
				}
			}
		})
	}
}

func TestMigrationsMatchAcrossDialects(t *testing.T) {
	t.Parallel()
	my, _ := models.Migrations(models.MySQL)
	lite, _ := models.Migrations(models.SQLite)
	if len(my) != len(lite) {
		t.Fatalf("mysql has %d migrations, sqlite %d", len(my), len(lite))
	}
	for i := range my {
		if my[i].Name != lite[i].Name {
			t.Errorf("migration %d: %s vs %s", i, my[i].Name, lite[i].Name)
		}
	}
}

// R1: services are unique on (cluster, vmid) alone — the guest type is not part of the key.
func TestServiceUniqueClusterVMIDIgnoresGuestType(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		vmid := 5001
		a := &models.Service{ServiceID: "a", ClientID: "c", GuestType: "container", Cluster: "default", VMID: &vmid, State: models.ServiceActive}
		if err := models.InsertService(ctx, db.Gorm, a); err != nil {
			t.Fatal(err)
		}
		b := &models.Service{ServiceID: "b", ClientID: "c", GuestType: "vm", Cluster: "default", VMID: &vmid, State: models.ServiceActive}
		if err := models.InsertService(ctx, db.Gorm, b); !errors.Is(err, models.ErrDuplicate) {
			t.Fatalf("same vmid, other type: err = %v, want duplicate", err)
		}
		other := "other"
		c := &models.Service{ServiceID: "c", ClientID: "c", GuestType: "vm", Cluster: other, VMID: &vmid, State: models.ServiceActive}
		if err := models.InsertService(ctx, db.Gorm, c); err != nil {
			t.Fatalf("same vmid on another cluster: %v", err)
		}
		d := &models.Service{ServiceID: "a", ClientID: "c", Cluster: "default", State: models.ServiceActive}
		if err := models.InsertService(ctx, db.Gorm, d); !errors.Is(err, models.ErrDuplicate) {
			t.Fatalf("same service_id: err = %v, want duplicate", err)
		}
	})
}

func queue(t *testing.T, db *models.DB, serviceID string, n int) []string {
	t.Helper()
	ctx := t.Context()
	if _, err := models.GetService(ctx, db.Gorm, models.ServiceKey{ClientID: "c", ServiceID: serviceID}); errors.Is(err, models.ErrNotFound) {
		if err := models.InsertService(ctx, db.Gorm, &models.Service{ServiceID: serviceID, ClientID: "c", State: models.ServiceActive}); err != nil {
			t.Fatal(err)
		}
	}
	var ids []string
	for i := 0; i < n; i++ {
		op := &models.Operation{ServiceID: serviceID, ClientID: "c", Action: "test", Payload: "{}"}
		if err := models.InsertOperation(ctx, db.Gorm, op); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, op.ID)
	}
	return ids
}

// Two (here: eight) workers claiming concurrently never get the same operation, and each
// service has at most one running operation (the service lock).
func TestConcurrentClaimsNeverShareAnOperation(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		const services = 12
		for i := 0; i < services; i++ {
			queue(t, db, fmt.Sprintf("svc-%d", i), 2)
		}
		var mu sync.Mutex
		claimed := map[string]string{}
		runningPerService := map[string]int{}
		var wg sync.WaitGroup
		errs := make(chan error, 64)
		for w := 0; w < 8; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				owner := fmt.Sprintf("worker-%d", w)
				for {
					c, err := db.ClaimNext(ctx, owner, time.Minute)
					if err != nil {
						errs <- err
						return
					}
					if c == nil {
						return
					}
					mu.Lock()
					if prev, dup := claimed[c.Op.ID]; dup {
						errs <- fmt.Errorf("operation %s claimed by %s and %s", c.Op.ID, prev, owner)
					}
					claimed[c.Op.ID] = owner
					runningPerService[c.Op.ServiceID]++
					if runningPerService[c.Op.ServiceID] > 1 {
						errs <- fmt.Errorf("service %s has two running operations", c.Op.ServiceID)
					}
					mu.Unlock()
					// While it holds the claim, the worker reads the service's running operations
					// from the database: a round trip in which the others claim, and a second
					// check of the same rule.
					var running int64
					if err := db.Gorm.WithContext(ctx).Model(&models.Operation{}).
						Where("client_id = ? AND service_id = ? AND state = ?", c.Op.ClientID, c.Op.ServiceID, models.OpRunning).
						Count(&running).Error; err != nil {
						errs <- err
						return
					}
					if running != 1 {
						errs <- fmt.Errorf("service %s has %d running operations in the database", c.Op.ServiceID, running)
					}
					mu.Lock()
					runningPerService[c.Op.ServiceID]--
					mu.Unlock()
					if err := db.Finish(ctx, c.Op.ID, owner, models.OpSucceeded, nil, nil, nil); err != nil {
						errs <- err
						return
					}
				}
			}(w)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if len(claimed) != services*2 {
			t.Fatalf("claimed %d operations, want %d", len(claimed), services*2)
		}
	})
}

func TestExpiredLeaseIsTakenOver(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		ids := queue(t, db, "svc", 1)
		const lease = time.Minute
		begin := models.Now()
		c, err := db.ClaimNext(ctx, "dead-worker", lease)
		if err != nil || c == nil || c.TakeOver {
			t.Fatalf("first claim: %+v, %v", c, err)
		}
		if c2, _ := db.ClaimNext(ctx, "other", time.Minute); c2 != nil {
			t.Fatalf("a live lease was taken: %+v", c2.Op)
		}
		// The claim holds the operation for the lease it asked for, counted from the claim.
		op, err := models.GetOperation(ctx, db.Gorm, ids[0])
		if err != nil {
			t.Fatal(err)
		}
		if op.LeaseUntil == nil || op.LeaseUntil.Before(begin.Add(lease)) || op.LeaseUntil.After(models.Now().Add(lease)) {
			t.Fatalf("lease until %v, want the claim time plus %v (claimed after %v)", op.LeaseUntil, lease, begin)
		}
		// The worker dies and the lease runs out: its end is moved into the past rather than
		// waited for.
		if err := db.Gorm.WithContext(ctx).Model(&models.Operation{}).Where("id = ?", ids[0]).
			Update("lease_until", models.Now().Add(-time.Second)).Error; err != nil {
			t.Fatal(err)
		}
		c3, err := db.ClaimNext(ctx, "survivor", time.Minute)
		if err != nil || c3 == nil {
			t.Fatalf("takeover claim: %+v, %v", c3, err)
		}
		if c3.Op.ID != ids[0] || !c3.TakeOver || c3.Op.Attempts != 2 {
			t.Fatalf("takeover = %+v (takeover %v)", c3.Op, c3.TakeOver)
		}
		// The dead worker can no longer write to it.
		if err := db.SetStage(ctx, ids[0], "dead-worker", "x", 0); !errors.Is(err, models.ErrLeaseLost) {
			t.Fatalf("stale owner SetStage: %v", err)
		}
		if err := db.Finish(ctx, ids[0], "dead-worker", models.OpSucceeded, nil, nil, nil); !errors.Is(err, models.ErrLeaseLost) {
			t.Fatalf("stale owner Finish: %v", err)
		}
		if err := db.Finish(ctx, ids[0], "survivor", models.OpSucceeded, nil, nil, nil); err != nil {
			t.Fatal(err)
		}
	})
}

// R28: needs_reconciliation keeps the service lock closed; other finishes release it.
func TestNeedsReconciliationKeepsServiceLock(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		queue(t, db, "svc", 2)
		c, _ := db.ClaimNext(ctx, "w", time.Minute)
		if err := db.Finish(ctx, c.Op.ID, "w", models.OpNeedsReconciliation, nil, nil, nil); err != nil {
			t.Fatal(err)
		}
		if c2, err := db.ClaimNext(ctx, "w", time.Minute); err != nil || c2 != nil {
			t.Fatalf("claimed %+v behind a needs_reconciliation lock (%v)", c2, err)
		}
		svc, _ := models.GetService(ctx, db.Gorm, models.ServiceKey{ClientID: "c", ServiceID: "svc"})
		if svc.LockOperationID == nil || *svc.LockOperationID != c.Op.ID {
			t.Fatalf("lock = %v, want %s", svc.LockOperationID, c.Op.ID)
		}
		if svc.State != models.ServiceNeedsReconciliation {
			t.Fatalf("service state %s, want needs_reconciliation", svc.State)
		}
	})
}

func TestReleaseRequeues(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		ids := queue(t, db, "svc", 1)
		c, _ := db.ClaimNext(ctx, "w1", time.Minute)
		if err := db.Release(ctx, c.Op.ID, "w1"); err != nil {
			t.Fatal(err)
		}
		c2, err := db.ClaimNext(ctx, "w2", time.Minute)
		if err != nil || c2 == nil || c2.Op.ID != ids[0] || c2.TakeOver {
			t.Fatalf("after release: %+v %v", c2, err)
		}
	})
}

func TestIdempotencyReservationIsExclusive(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		var wg sync.WaitGroup
		var mu sync.Mutex
		winners := 0
		for i := 0; i < 16; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rec, err := db.ReserveIdempotencyKey(ctx, "c", "k", "h", time.Hour)
				if err != nil {
					t.Error(err)
					return
				}
				if rec == nil {
					mu.Lock()
					winners++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if winners != 1 {
			t.Fatalf("%d requests reserved one key", winners)
		}
		// Scoped per client.
		if rec, err := db.ReserveIdempotencyKey(ctx, "other", "k", "h", time.Hour); err != nil || rec != nil {
			t.Fatalf("another client's key: %+v %v", rec, err)
		}
		// Expired records are replaced.
		if rec, err := db.ReserveIdempotencyKey(ctx, "c", "old", "h", -time.Second); err != nil || rec != nil {
			t.Fatal(rec, err)
		}
		if rec, err := db.ReserveIdempotencyKey(ctx, "c", "old", "h2", time.Hour); err != nil || rec != nil {
			t.Fatalf("expired key not replaced: %+v %v", rec, err)
		}
	})
}

func TestSplitSQLIgnoresCommentSemicolons(t *testing.T) {
	t.Parallel()
	got := models.SplitSQLForTest("-- a comment; with a semicolon\nCREATE TABLE a (x INT);\n\n-- another;\nCREATE INDEX i ON a (x);\n")
	if len(got) != 2 || got[0] != "CREATE TABLE a (x INT)" || got[1] != "CREATE INDEX i ON a (x)" {
		t.Fatalf("%q", got)
	}
}
