package models_test

import (
	"testing"
	"time"

	"pvebill/models"
	"pvebill/models/dbtest"
)

// R36 and R38 together: a replica killed between reserving an Idempotency-Key and storing its
// answer leaves a pending record. It holds the key only for IdempotencyPendingTTL, not for the
// 24 h a completed answer is replayed, so the billing system's retry is served again.
func TestPendingIdempotencyKeyOfADeadReplicaExpires(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		if rec, err := db.ReserveIdempotencyKey(ctx, "c", "crashed", "h", 24*time.Hour); err != nil || rec != nil {
			t.Fatalf("reserve: %v %v", rec, err)
		}
		rec, err := db.GetIdempotencyKey(ctx, "c", "crashed")
		if err != nil {
			t.Fatal(err)
		}
		if limit := time.Now().Add(models.IdempotencyPendingTTL + time.Second); rec.ExpiresAt.After(limit) {
			t.Fatalf("a pending reservation holds its key until %v, past the pending TTL", rec.ExpiresAt)
		}
		// A shorter ttl bounds the pending window too.
		if rec, err := db.ReserveIdempotencyKey(ctx, "c", "short", "h", time.Minute); err != nil || rec != nil {
			t.Fatalf("reserve: %v %v", rec, err)
		}
		if rec, err := db.GetIdempotencyKey(ctx, "c", "short"); err != nil || rec.ExpiresAt.After(time.Now().Add(time.Minute)) {
			t.Fatalf("a reservation for a minute holds its key until %v (%v)", rec, err)
		}
		// The pending window passes with no answer (its replica died): its end is moved into
		// the past rather than waited for.
		if err := db.Gorm.WithContext(ctx).Model(&models.IdempotencyKey{}).Where("client_id = ? AND idem_key = ?", "c", "short").
			Update("expires_at", models.Now().Add(-time.Second)).Error; err != nil {
			t.Fatal(err)
		}
		if rec, err := db.ReserveIdempotencyKey(ctx, "c", "short", "h", 24*time.Hour); err != nil || rec != nil {
			t.Fatalf("the retry after the pending window did not get the key: %+v %v", rec, err)
		}
		// A completed answer is kept for the full TTL.
		if err := db.CompleteIdempotencyKey(ctx, "c", "short", 202, "application/json", "", []byte(`{}`), 24*time.Hour); err != nil {
			t.Fatal(err)
		}
		rec, err = db.GetIdempotencyKey(ctx, "c", "short")
		if err != nil {
			t.Fatal(err)
		}
		if rec.State != models.IdemDone || rec.ExpiresAt.Before(time.Now().Add(23*time.Hour)) {
			t.Fatalf("completed record %s expires %v", rec.State, rec.ExpiresAt)
		}
	})
}
