package stack

import (
	"context"
	"time"
)

// StartReadiness runs the clusters' background readiness check (R50) every interval until
// the returned stop is called; stop waits for the check to end.
func (st *Stack) StartReadiness(ctx context.Context, every time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		st.Readiness.Watch(ctx, every)
	}()
	return func() {
		cancel()
		<-done
	}
}
