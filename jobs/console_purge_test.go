package jobs_test

import (
	"io"
	"log/slog"
	"strings"
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
			ctx := t.Context()
			dbs := replicas(t, d, 3)
			expires := time.Now().Add(time.Minute).Truncate(time.Second)
			nonce := []byte("0123456789abcdef")
			wins := claimRace(t, dbs, 4, func(db *models.DB) (bool, error) {
				return db.ClaimConsole(ctx, models.ConsoleOpen{Nonce: nonce, ServiceRef: 7, ClientID: "whmcs", Expires: expires})
			})
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

// R41: the open console sessions are counted in the database, whichever replica holds them: a
// claim counts for its service and its client while its open_until is ahead, is renewed while
// its relay runs, stops counting when it ends (the token stays used) or lapses (a replica that
// died), and is released entirely when its open was refused. The purge never drops a claim
// whose session is open, even past its token's expiry.
func TestConsoleSessionsCountedAcrossReplicas(t *testing.T) {
	for _, d := range dbtest.Dialects(t) {
		t.Run(d, func(t *testing.T) {
			ctx := t.Context()
			dbs := replicas(t, d, 2)
			now := time.Now().Truncate(time.Second)
			claim := func(db *models.DB, nonce string, ref int64, client string, until time.Time) {
				t.Helper()
				ok, err := db.ClaimConsole(ctx, models.ConsoleOpen{Nonce: []byte(nonce), ServiceRef: ref, ClientID: client,
					Expires: now.Add(time.Minute), OpenUntil: until})
				if !ok || err != nil {
					t.Fatalf("claim %s: %v %v", nonce, ok, err)
				}
			}
			count := func(db *models.DB, client string, ref int64, at time.Time, wantSvc, wantClient int64) {
				t.Helper()
				svc, cl, err := db.OpenConsoleSessions(ctx, client, ref, at)
				if err != nil || svc != wantSvc || cl != wantClient {
					t.Fatalf("%s/%d at +%s: %d of the service, %d of the client (%v); want %d, %d", client, ref,
						at.Sub(now), svc, cl, err, wantSvc, wantClient)
				}
			}
			lease := now.Add(30 * time.Second)
			claim(dbs[0], "a-session-of-s1.", 1, "whmcs", lease)
			claim(dbs[1], "b-session-of-s1.", 1, "whmcs", lease)
			claim(dbs[1], "b-session-of-s2.", 2, "whmcs", lease)
			claim(dbs[0], "other-client-s3.", 3, "other", lease)
			count(dbs[1], "whmcs", 1, now, 2, 3)
			count(dbs[0], "whmcs", 2, now, 1, 3)
			count(dbs[0], "other", 3, now, 1, 1)
			// Past the lease only the renewed ones count; an ended one stays used, a released
			// one can be claimed again.
			if err := dbs[0].RenewConsoleSessions(ctx, [][]byte{[]byte("a-session-of-s1."), []byte("b-session-of-s2.")},
				now.Add(5*time.Minute)); err != nil {
				t.Fatal(err)
			}
			count(dbs[1], "whmcs", 1, now.Add(time.Minute), 1, 2)
			if err := dbs[1].EndConsoleSession(ctx, []byte("b-session-of-s2.")); err != nil {
				t.Fatal(err)
			}
			if err := dbs[1].RenewConsoleSessions(ctx, [][]byte{[]byte("b-session-of-s2.")}, now.Add(5*time.Minute)); err != nil {
				t.Fatal(err)
			}
			count(dbs[0], "whmcs", 2, now, 0, 2)
			if used, err := dbs[0].ConsoleClaimed(ctx, []byte("b-session-of-s2.")); !used || err != nil {
				t.Fatalf("an ended session's token is no longer used: %v %v", used, err)
			}
			if err := dbs[0].ReleaseConsoleClaim(ctx, []byte("other-client-s3.")); err != nil {
				t.Fatal(err)
			}
			count(dbs[1], "other", 3, now, 0, 0)
			claim(dbs[1], "other-client-s3.", 3, "other", lease)

			log := slog.New(slog.NewTextHandler(io.Discard, nil))
			purge := jobs.ConsolePurge{DB: dbs[1], Log: log, Now: func() time.Time { return now.Add(3 * time.Minute) }}
			if err := purge.Run(ctx); err != nil {
				t.Fatal(err)
			}
			var left []string
			dbtest.Scan(t, dbs[0], &left, "SELECT nonce FROM console_claims ORDER BY nonce")
			if strings.Join(left, ",") != "a-session-of-s1." {
				t.Fatalf("after the purge: %q, want the open session's claim only", left)
			}
		})
	}
}
