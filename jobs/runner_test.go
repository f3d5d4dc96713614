package jobs

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"pvebill/modules/stack/stacktest/poll"
)

type fnJob struct {
	name string
	f    func(ctx context.Context) error
}

func (j fnJob) Name() string                  { return j.name }
func (j fnJob) Run(ctx context.Context) error { return j.f(ctx) }

func newSched(_ *testing.T) (*Scheduler, *Metrics) {
	m := NewMetrics(prometheus.NewRegistry())
	return NewScheduler(slog.New(slog.NewTextHandler(io.Discard, nil)), m), m
}

// A round still running makes the next one skip (never stack), and counts it.
func TestOverlappingRoundIsSkipped(t *testing.T) {
	s, m := newSched(t)
	release := make(chan struct{})
	started := make(chan struct{})
	job := fnJob{"slow", func(context.Context) error {
		close(started)
		<-release
		return nil
	}}
	w := &wrapped{job: job, s: s, deadline: time.Minute}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); w.Run() }()
	<-started
	w.Run() // overlaps: skipped immediately
	close(release)
	wg.Wait()
	if got := testutil.ToFloat64(m.runs.WithLabelValues("slow", "skipped")); got != 1 {
		t.Fatalf("skipped = %v", got)
	}
	if got := testutil.ToFloat64(m.runs.WithLabelValues("slow", "ok")); got != 1 {
		t.Fatalf("ok = %v", got)
	}
	if testutil.ToFloat64(m.lastSuccess.WithLabelValues("slow")) == 0 {
		t.Fatal("last success not set")
	}
}

func TestFailurePanicAndDeadline(t *testing.T) {
	s, m := newSched(t)
	s.RunOnce(fnJob{"bad", func(context.Context) error { return errors.New("nope") }}, time.Second)
	s.RunOnce(fnJob{"boom", func(context.Context) error { panic("x") }}, time.Second)
	var sawDeadline bool
	s.RunOnce(fnJob{"late", func(ctx context.Context) error {
		<-ctx.Done()
		sawDeadline = errors.Is(ctx.Err(), context.DeadlineExceeded)
		return ctx.Err()
	}}, 20*time.Millisecond)
	if testutil.ToFloat64(m.runs.WithLabelValues("bad", "failed")) != 1 ||
		testutil.ToFloat64(m.runs.WithLabelValues("boom", "panic")) != 1 ||
		testutil.ToFloat64(m.runs.WithLabelValues("late", "failed")) != 1 || !sawDeadline {
		t.Fatal("results not counted as expected")
	}
	if testutil.ToFloat64(m.lastSuccess.WithLabelValues("bad")) != 0 {
		t.Fatal("a failed round set last success")
	}
}

func TestScheduleAndStop(t *testing.T) {
	s, m := newSched(t)
	var mu sync.Mutex
	n := 0
	if err := s.Add("@every 1s", fnJob{"tick", func(context.Context) error { mu.Lock(); n++; mu.Unlock(); return nil }}, time.Second); err != nil {
		t.Fatal(err)
	}
	if err := s.Add("not a spec", fnJob{"x", nil}, time.Second); err == nil {
		t.Fatal("bad spec accepted")
	}
	s.Start()
	poll.Until(t, 5*time.Second, "the first scheduled round", func() bool {
		return testutil.ToFloat64(m.runs.WithLabelValues("tick", "ok")) >= 1
	})
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	s.Stop(ctx)
	mu.Lock()
	defer mu.Unlock()
	if n < 1 || testutil.ToFloat64(m.runs.WithLabelValues("tick", "ok")) < 1 {
		t.Fatalf("ran %d times", n)
	}
}
