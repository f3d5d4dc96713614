package models_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"pvebill/models"
	"pvebill/models/dbtest"
)

// R47: of concurrent claims of one signature exactly one wins; another client's claim of the
// same signature is its own; a purge drops only the expired records.
func TestClaimSignatureOnce(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		exp := time.Now().Add(5 * time.Minute)
		var wins atomic.Int32
		var wg sync.WaitGroup
		for i := 0; i < 16; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ok, err := db.ClaimSignature(ctx, "whmcs", "v1=abc", exp)
				if err != nil {
					t.Error(err)
				}
				if ok {
					wins.Add(1)
				}
			}()
		}
		wg.Wait()
		if wins.Load() != 1 {
			t.Fatalf("%d claims won, want 1", wins.Load())
		}
		if ok, err := db.ClaimSignature(ctx, "other", "v1=abc", exp); !ok || err != nil {
			t.Fatalf("other client: %v %v", ok, err)
		}
		if ok, err := db.ClaimSignature(ctx, "whmcs", "v1=old", time.Now().Add(-time.Hour)); !ok || err != nil {
			t.Fatalf("old: %v %v", ok, err)
		}
		n, err := db.PurgeSeenSignatures(ctx, time.Now())
		if err != nil || n != 1 {
			t.Fatalf("purged %d, %v; want 1", n, err)
		}
		if ok, err := db.ClaimSignature(ctx, "whmcs", "v1=abc", exp); ok || err != nil {
			t.Fatalf("replay after purge: %v %v", ok, err)
		}
	})
}
