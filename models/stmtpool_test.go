package models_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"gorm.io/gorm"

	"pvebill/models"
	"pvebill/models/dbtest"
	"pvebill/modules/stack/stacktest/poll"
)

// The webhook path's statements are prepared once and reused, outside and inside
// transactions, with the same results and the same error translation as before.
func TestStatementPool(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		create := func(id string) error {
			svc := &models.Service{ServiceID: id, ClientID: "whmcs", Plan: "p", GuestType: "container", Cluster: "default",
				State: models.ServiceProvisioning, ParamsHash: "h"}
			return db.CreateServiceOperation(ctx, svc, &models.Operation{ServiceID: id, ClientID: "whmcs", Action: "create", Payload: "{}"})
		}
		for i := range 3 {
			if err := create(fmt.Sprintf("svc-%d", i)); err != nil {
				t.Fatal(err)
			}
			if _, err := models.GetService(ctx, db.Gorm, models.ServiceKey{ClientID: "whmcs", ServiceID: fmt.Sprintf("svc-%d", i)}); err != nil {
				t.Fatal(err)
			}
		}
		// Statements are prepared in the background after their first run.
		if _, seen := models.PooledStatementsForTest(db); seen == 0 {
			t.Fatal("no statement went through the pool")
		}
		poll.Until(t, 10*time.Second, "every pooled statement prepared", func() bool {
			prepared, seen := models.PooledStatementsForTest(db)
			return prepared == seen
		})
		if err := create("svc-1"); !errors.Is(err, models.ErrDuplicate) {
			t.Fatalf("duplicate create in a pooled transaction: %v, want ErrDuplicate", err)
		}
		if _, err := db.ReserveIdempotencyKey(ctx, "whmcs", "k", "h", models.IdempotencyPendingTTL); err != nil {
			t.Fatal(err)
		}
		if err := db.CompleteIdempotencyKey(ctx, "whmcs", "k", 202, "application/json", "", []byte(`{}`), models.IdempotencyPendingTTL); err != nil {
			t.Fatal(err)
		}
		rec, err := db.ReserveIdempotencyKey(ctx, "whmcs", "k", "h", models.IdempotencyPendingTTL)
		if err != nil || rec == nil || rec.State != models.IdemDone || rec.StatusCode != 202 {
			t.Fatalf("replayed record %+v, %v", rec, err)
		}
		_, again := models.PooledStatementsForTest(db)
		for i := range 3 {
			if _, err := db.ReserveIdempotencyKey(ctx, "whmcs", fmt.Sprintf("k%d", i), "h", models.IdempotencyPendingTTL); err != nil {
				t.Fatal(err)
			}
			if err := create(fmt.Sprintf("svc-again-%d", i)); err != nil {
				t.Fatal(err)
			}
		}
		if _, n := models.PooledStatementsForTest(db); n != again {
			t.Fatalf("the same statements were prepared again: %d, then %d", again, n)
		}
		var ops int64
		if err := db.Gorm.Model(&models.Operation{}).Count(&ops).Error; err != nil || ops != 6 {
			t.Fatalf("operations %d, %v; want 6", ops, err)
		}
		// A transaction on the pool is a transaction to the query functions.
		err = models.PooledForTest(ctx, db.Gorm).Transaction(func(tx *gorm.DB) error {
			if !models.InTransactionForTest(tx) {
				t.Error("a pooled transaction is not seen as one")
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if models.InTransactionForTest(models.PooledForTest(ctx, db.Gorm)) {
			t.Error("the pool is seen as a transaction")
		}
	})
}

// Past its bound the pool runs statements unprepared.
func TestStatementPoolBound(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		for i := range 80 {
			var n int64
			q := models.PooledForTest(ctx, db.Gorm).Model(&models.Service{}).Where(fmt.Sprintf("service_id <> ? AND %d = %d", i, i), "x")
			if err := q.Count(&n).Error; err != nil {
				t.Fatal(err)
			}
		}
		if _, n := models.PooledStatementsForTest(db); n > 64 {
			t.Fatalf("%d statements pooled, bound 64", n)
		}
	})
}
