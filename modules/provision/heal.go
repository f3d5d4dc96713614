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
	case f.Lock != "" && !recordedIn(f, StageDestroy):
		return dec, executor.ErrUnsettled
	default:
		// Ours, and no destroy of it is running: destroy it (again).
		dec.Resume = StageDestroy
	}
	return dec, nil
}

// resolveRollback establishes the facts of a snapshot rollback past its start (R58): a rollback
// task the operation recorded that ended OK means it is done; our guest with no rollback running
// is rolled back (again: the same snapshot gives the same state); a guest locked by a task
// nobody recorded, or not ours, is for an operator.
func (s *Provisioner) resolveRollback(ctx context.Context, r *executor.Run) (executor.Decision, error) {
	svc, err := s.db.GetService(ctx, r.Op.Key())
	if err != nil || svc.VMID == nil {
		return executor.Decision{Reason: executor.ReasonNotOurs}, err
	}
	f, err := s.guests.Facts(ctx, svc, r.Op)
	dec := executor.Decision{Facts: f}
	switch {
	case err != nil:
		return dec, err
	case *f.GuestPresent && !*f.Stamped:
		dec.Reason = executor.ReasonNotOurs
	case recordedIn(f, StageSnapshot) && f.LastTask.OK():
		dec.Done = true
	case f.Lock != "" && !recordedIn(f, StageSnapshot):
		return dec, executor.ErrUnsettled
	default:
		dec.Resume = StageSnapshot
	}
	return dec, nil
}

// recordedIn reports whether the last task the operation recorded was started by stage.
func recordedIn(f executor.Facts, stage executor.Stage) bool {
	return f.LastTask != nil && f.LastTask.Stage == string(stage)
}
