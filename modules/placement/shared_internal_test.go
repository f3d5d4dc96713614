package placement

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"pvebill/modules/stack/stacktest/poll"
)

// R52: the creates of a burst share one read in flight, and a create whose context ends stops
// waiting for a read that hangs (a cut agent tunnel), instead of queueing behind it. When the
// shared read fails, the callers that did not start it read once more, together.
func TestSharedReadOneInFlight(t *testing.T) {
	t.Parallel()
	var r sharedRead[int]
	// joined counts, per round, the callers waiting for a read.
	var joined [2]atomic.Int32
	r.waiting = func(round int) { joined[round].Add(1) }
	var fetches atomic.Int32
	releases := []chan struct{}{make(chan struct{}), make(chan struct{})}
	fail := errors.New("agent tunnel lost")
	fetch := func(context.Context) (int, error) {
		n := fetches.Add(1)
		<-releases[min(int(n), 2)-1]
		return 0, fail
	}
	var wg sync.WaitGroup
	errs := make(chan error, 5)
	for range 5 {
		wg.Go(func() {
			_, err := r.get(t.Context(), time.Now(), time.Minute, fetch)
			errs <- err
		})
	}
	// A caller with a short deadline gives up while the read still hangs.
	short, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	began := time.Now()
	if _, err := r.get(short, time.Now(), time.Minute, fetch); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a caller whose context ended: %v", err)
	}
	if waited := time.Since(began); waited > time.Second {
		t.Fatalf("a caller whose context ended waited %s for the hanging read", waited)
	}
	// The five callers wait for the first read too: one that came after it would start a read
	// of its own.
	poll.Until(t, 10*time.Second, "the six callers to wait for the first read", func() bool { return joined[0].Load() == 6 })
	close(releases[0])
	// Each of the five has either returned the failure (it led the first read) or joined the
	// second read: one joining after the second read ended would start a third.
	poll.Until(t, 10*time.Second, "the callers that did not lead to join the second read", func() bool {
		return len(errs)+int(joined[1].Load()) == 5
	})
	close(releases[1])
	wg.Wait()
	close(errs)
	for err := range errs {
		if !errors.Is(err, fail) {
			t.Fatalf("a caller got %v, want the shared read's failure", err)
		}
	}
	if n := fetches.Load(); n != 2 {
		t.Fatalf("%d reads for six callers at once, want 2 (the shared one, and once more for those that did not lead it)", n)
	}
	v, err := r.get(t.Context(), time.Now(), time.Minute, func(context.Context) (int, error) { fetches.Add(1); return 7, nil })
	if err != nil || v != 7 {
		t.Fatalf("after the failure: %d, %v", v, err)
	}
	if v, _ := r.get(t.Context(), time.Now(), time.Minute, fetch); v != 7 || fetches.Load() != 3 {
		t.Fatalf("within the ttl: %d after %d reads, want the shared 7 after 3", v, fetches.Load())
	}
}
