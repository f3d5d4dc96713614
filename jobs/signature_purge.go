package jobs

import (
	"context"
	"log/slog"
	"time"

	"pvebill/models"
)

// signatureSkew is how long a seen signature is kept past its own expiry: replicas whose
// clocks differ by less still refuse its replay.
const signatureSkew = time.Minute

// SignaturePurge deletes the seen-signature records (R47) whose signatures left the acceptance
// window: such a signature is refused as expired whether or not it was seen.
type SignaturePurge struct {
	DB  *models.DB
	Log *slog.Logger
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// Name implements Job.
func (SignaturePurge) Name() string { return "signature_purge" }

// Run implements Job.
func (j SignaturePurge) Run(ctx context.Context) error {
	now := time.Now
	if j.Now != nil {
		now = j.Now
	}
	n, err := j.DB.PurgeSeenSignatures(ctx, now().Add(-signatureSkew))
	if err == nil && n > 0 {
		j.Log.Debug("purged expired seen signatures", "count", n)
	}
	return err
}
