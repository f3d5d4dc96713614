package executor

import (
	"context"
	"errors"
)

// ErrDone is returned by a step when the operation has nothing left to do (a suspend of a
// suspended service): RunSteps ends successfully without entering the remaining stages.
var ErrDone = errors.New("executor: nothing left to do")

// Step is one stage of an operation and the small function that runs it. S is the state the
// steps of one run share (what earlier stages found, what later ones need).
type Step[S any] struct {
	Stage Stage
	Run   func(ctx context.Context, st S) error
}

// StagesOf is the stage list of a step list: an action built from steps has exactly these
// stages, in this order, so the stage list and the code that runs it cannot drift apart.
func StagesOf[S any](steps []Step[S]) []Stage {
	out := make([]Stage, len(steps))
	for i, s := range steps {
		out[i] = s.Stage
	}
	return out
}

// RunSteps records each step's stage on the operation row and runs it, in list order, and stops
// at the first error (ErrDone: successfully). Whether a failure is destructive is decided from
// the recorded stage by Action.Destructive, not here.
func RunSteps[S any](ctx context.Context, r *Run, steps []Step[S], st S) error {
	for _, s := range steps {
		if r.Skips(s.Stage) {
			// Resumed from the facts past this stage (R58).
			continue
		}
		if err := r.Stage(ctx, s.Stage); err != nil {
			return err
		}
		if err := s.Run(ctx, st); errors.Is(err, ErrDone) {
			return nil
		} else if err != nil {
			return err
		}
	}
	return nil
}
