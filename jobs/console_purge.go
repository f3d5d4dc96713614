package jobs

import (
	"context"
	"log/slog"
	"time"

	"pvebill/models"
)

// consoleSkew is how long an opened console token's claim is kept past the token's expiry:
// replicas whose clocks differ by less still refuse its second open.
const consoleSkew = time.Minute

// ConsolePurge deletes the claims of console tokens (R41) that have expired: such a token is
// refused as expired whether or not it was opened.
type ConsolePurge struct {
	DB  *models.DB
	Log *slog.Logger
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// Name implements Job.
func (ConsolePurge) Name() string { return "console_purge" }

// Run implements Job.
func (j ConsolePurge) Run(ctx context.Context) error {
	now := time.Now
	if j.Now != nil {
		now = j.Now
	}
	n, err := j.DB.PurgeConsoleClaims(ctx, now().Add(-consoleSkew))
	if err == nil && n > 0 {
		j.Log.Debug("purged expired console claims", "count", n)
	}
	return err
}
