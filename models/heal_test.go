package models_test

import (
	"errors"
	"testing"
	"time"

	"pvebill/models"
	"pvebill/models/dbtest"
)

// R58: the open reconciliations are the needs_reconciliation operations that still hold their
// service's lock; their count and the end of the oldest are read on both databases (the
// figures of pvebill_reconciliations_open and the alert on those older than an hour). A parked
// operation waiting for its password is claimed by nobody until it is woken.
func TestOpenReconciliationsAndParking(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		g := db.Gorm.WithContext(ctx)
		if n, oldest, err := db.OpenReconciliationStats(ctx); err != nil || n != 0 || !oldest.IsZero() {
			t.Fatalf("empty: %d %v %v", n, oldest, err)
		}
		ended := time.Now().Add(-2 * time.Hour).UTC().Truncate(time.Second)
		for i, id := range []string{"svc-open", "svc-resolved", "svc-parked"} {
			s := &models.Service{ServiceID: id, ClientID: "c", Plan: "p", GuestType: "container", Cluster: "c", State: models.ServiceActive}
			must(t, models.InsertService(ctx, g, s))
			op := &models.Operation{ServiceID: id, ClientID: "c", Action: "terminate", Payload: "{}"}
			must(t, models.InsertOperation(ctx, g, op))
			switch i {
			case 0:
				must(t, g.Exec("UPDATE operations SET state = ?, finished_at = ? WHERE id = ?", models.OpNeedsReconciliation, ended, op.ID).Error)
				must(t, g.Exec("UPDATE services SET lock_operation_id = ? WHERE service_id = ?", op.ID, id).Error)
			case 1:
				// Resolved by an operator: the lock is open again.
				must(t, g.Exec("UPDATE operations SET state = ?, finished_at = ? WHERE id = ?", models.OpNeedsReconciliation, ended, op.ID).Error)
			case 2:
				claim, err := db.ClaimNext(ctx, "w", time.Minute)
				if err != nil || claim == nil || claim.Op.ID != op.ID {
					t.Fatalf("claim %+v %v", claim, err)
				}
				must(t, db.Park(ctx, op.ID, "w", models.AwaitingPassword))
				if claim, err := db.ClaimNext(ctx, "w", time.Minute); err != nil || claim != nil {
					t.Fatalf("a parked operation was claimed: %+v %v", claim, err)
				}
				must(t, db.Wake(ctx, op.ID, models.AwaitingPassword, "w", time.Now().Add(time.Minute)))
				if err := db.Wake(ctx, op.ID, models.AwaitingPassword, "w", time.Now()); !errors.Is(err, models.ErrNotAwaiting) {
					t.Fatalf("second wake: %v", err)
				}
				if claim, err := db.ClaimNext(ctx, "w", time.Minute); err != nil || claim == nil || claim.Op.ID != op.ID {
					t.Fatalf("the woken operation was not claimed (it holds its own lock): %+v %v", claim, err)
				}
			}
		}
		n, oldest, err := db.OpenReconciliationStats(ctx)
		if err != nil || n != 1 || !oldest.Equal(ended) {
			t.Fatalf("stats %d %v %v, want 1 %v", n, oldest, err, ended)
		}
		list, err := models.OpenReconciliations(ctx, g, 10)
		if err != nil || len(list) != 1 || list[0].ServiceID != "svc-open" {
			t.Fatalf("list %+v %v", list, err)
		}
	})
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
