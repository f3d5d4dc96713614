package snapshots

import (
	"context"

	"pvebill/modules/executor"
	"pvebill/modules/operation"
)

// resolveRollback establishes the facts of a snapshot rollback past its start (R58): a rollback
// task the operation recorded that ended OK means it is done; our guest with no rollback running
// is rolled back (again: the same snapshot gives the same state); a guest locked by a task
// nobody recorded, or not ours, is for an operator.
func (s *Service) resolveRollback(ctx context.Context, r *executor.Run) (executor.Decision, error) {
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
	case operation.RecordedIn(f, StageSnapshot) && f.LastTask.OK():
		dec.Done = true
	case f.Lock != "" && !operation.RecordedIn(f, StageSnapshot):
		return dec, executor.ErrUnsettled
	default:
		dec.Resume = StageSnapshot
	}
	return dec, nil
}
