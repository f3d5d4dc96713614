package provision

import (
	"context"

	"pvebill/modules/executor"
	"pvebill/modules/operation"
)

// resolveTerminate establishes the facts of a terminate past its destroy (R58): a guest that is
// gone means the destroy is done (resume at release, or at the stage recorded after it); our
// guest still there is destroyed again; a guest without the service's stamp, or locked by a task
// nobody recorded, is for an operator.
func (s *Provisioner) resolveTerminate(ctx context.Context, r *executor.Run) (executor.Decision, error) {
	svc, err := s.db.GetService(ctx, r.Op.Key())
	if err != nil {
		return executor.Decision{}, err
	}
	if svc.VMID == nil {
		return executor.Decision{Resume: StageRelease}, nil
	}
	if stage := executor.Stage(r.Op.Stage); stage != StageDestroy {
		// The destroy ended before the row moved on: what is left is ours alone.
		return executor.Decision{Resume: stage, Facts: executor.Facts{VMID: *svc.VMID}}, nil
	}
	f, err := s.guests.Facts(ctx, svc, r.Op)
	dec := executor.Decision{Facts: f}
	switch {
	case err != nil:
		return dec, err
	case !*f.GuestPresent:
		dec.Resume = StageRelease
	case !operation.Ours(f, StageDestroy):
		dec.Reason = executor.ReasonNotOurs
	case f.Lock != "" && !operation.RecordedIn(f, StageDestroy):
		return dec, executor.ErrUnsettled
	default:
		// Ours, and no destroy of it is running: destroy it (again).
		dec.Resume = StageDestroy
	}
	return dec, nil
}
