package jobs_test

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"pvebill/jobs"
	"pvebill/models"
	"pvebill/models/dbtest"
)

// R47: three replicas claiming one signature at once accept it once; the purge keeps a seen
// signature until a minute past its expiry (clock skew between replicas), then drops it.
func TestSignatureClaimedOnceAcrossReplicasAndPurged(t *testing.T) {
	for _, d := range dbtest.Dialects(t) {
		t.Run(d, func(t *testing.T) {
			ctx := t.Context()
			dbs := replicas(t, d, 3)
			now := time.Now()
			expires := now.Add(5 * time.Minute)
			wins := claimRace(t, dbs, 4, func(db *models.DB) (bool, error) { return db.ClaimSignature(ctx, "whmcs", "v1=0123", expires) })
			if wins != 1 {
				t.Fatalf("%d of 12 claims accepted, want 1", wins)
			}
			log := slog.New(slog.NewTextHandler(io.Discard, nil))
			purge := func(at time.Time) {
				t.Helper()
				if err := (jobs.SignaturePurge{DB: dbs[1], Log: log, Now: func() time.Time { return at }}).Run(ctx); err != nil {
					t.Fatal(err)
				}
			}
			purge(expires.Add(30 * time.Second))
			if ok, err := dbs[2].ClaimSignature(ctx, "whmcs", "v1=0123", expires); ok || err != nil {
				t.Fatalf("replay within the skew margin: accepted %v, %v", ok, err)
			}
			purge(expires.Add(2 * time.Minute))
			if ok, err := dbs[2].ClaimSignature(ctx, "whmcs", "v1=0123", expires); !ok || err != nil {
				t.Fatalf("after the purge the row is gone: accepted %v, %v", ok, err)
			}
		})
	}
}
