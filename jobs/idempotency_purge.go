package jobs

import (
	"context"
	"log/slog"

	"pvebill/models"
)

// IdempotencyPurge deletes Idempotency-Key records older than their 24 h window.
type IdempotencyPurge struct {
	DB  *models.DB
	Log *slog.Logger
}

// Name implements Job.
func (IdempotencyPurge) Name() string { return "idempotency_purge" }

// Run implements Job.
func (j IdempotencyPurge) Run(ctx context.Context) error {
	n, err := j.DB.PurgeExpiredIdempotencyKeys(ctx)
	if err == nil && n > 0 {
		j.Log.Info("purged expired idempotency keys", "count", n)
	}
	return err
}
