package jobs_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"pvebill/jobs"
	"pvebill/models"
	"pvebill/models/dbtest"
)

// R41: a console token's nonce claimed by three replicas at once is claimed once (the token is
// single use on every replica); the purge keeps the claim until a minute past the token's
// expiry, then drops it.
func TestConsoleClaimedOnceAcrossReplicasAndPurged(t *testing.T) {
	for _, d := range dbtest.Dialects(t) {
		t.Run(d, func(t *testing.T) {
			ctx := context.Background()
			dbs := replicas(t, d, 3)
			expires := time.Now().Add(time.Minute).Truncate(time.Second)
			nonce := []byte("0123456789abcdef")
			wins := claimRace(t, dbs, 4, func(db *models.DB) (bool, error) { return db.ClaimConsole(ctx, nonce, 7, expires) })
			if wins != 1 {
				t.Fatalf("%d of 12 claims accepted, want 1", wins)
			}
			log := slog.New(slog.NewTextHandler(io.Discard, nil))
			purge := func(at time.Time) {
				t.Helper()
				if err := (jobs.ConsolePurge{DB: dbs[1], Log: log, Now: func() time.Time { return at }}).Run(ctx); err != nil {
					t.Fatal(err)
				}
			}
			purge(expires.Add(30 * time.Second))
			if used, err := dbs[2].ConsoleClaimed(ctx, nonce); !used || err != nil {
				t.Fatalf("within the skew margin the claim is kept: %v, %v", used, err)
			}
			purge(expires.Add(2 * time.Minute))
			if used, err := dbs[2].ConsoleClaimed(ctx, nonce); used || err != nil {
				t.Fatalf("after the purge the claim is gone: %v, %v", used, err)
			}
		})
	}
}
