package jobs

import (
	"context"
	"log/slog"

	"pvebill/modules/provision"
)

// Limits is the limit enforcement and drift repair job (schedule jobs.limits, R16): one
// /cluster/resources call per cluster per round; guests over their bandwidth allowance are
// stopped (service limited) and suspended or limited guests found running are stopped again,
// each through a suspend operation that checks the guest's stamp first.
type Limits struct {
	Provision *provision.Provisioner
	Log       *slog.Logger
	// Kick wakes the executor after a round queued operations (nil: they wait for its poll).
	Kick func()
}

// Name implements Job.
func (Limits) Name() string { return "limits" }

// Run implements Job.
func (j Limits) Run(ctx context.Context) error {
	round, err := j.Provision.EnforceLimits(ctx)
	queued := 0
	for reason, n := range round.Enforced {
		queued += n
		j.Log.Info("limit enforcement", "reason", reason, "stops_queued", n)
	}
	if queued > 0 && j.Kick != nil {
		j.Kick()
	}
	return err
}
