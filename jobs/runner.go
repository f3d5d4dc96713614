package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/robfig/cron/v3"
)

// Job is one named cron job.
type Job interface {
	Name() string
	Run(ctx context.Context) error
}

// Metrics are the per-job series every job gets from the wrapper.
type Metrics struct {
	duration    *prometheus.HistogramVec
	lastSuccess *prometheus.GaugeVec
	runs        *prometheus.CounterVec
}

// NewMetrics registers the job metrics on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "pvebill_job_duration_seconds",
			Help: "Duration of a cron job round.", Buckets: []float64{.01, .05, .1, .5, 1, 5, 10, 30, 60}}, []string{"job_name"}),
		lastSuccess: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "pvebill_job_last_success_timestamp_seconds",
			Help: "Unix time of a cron job's last successful round."}, []string{"job_name"}),
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pvebill_job_runs_total",
			Help: "Cron job rounds by result (ok, failed, skipped, panic)."}, []string{"job_name", "result"}),
	}
	reg.MustRegister(m.duration, m.lastSuccess, m.runs)
	return m
}

// Scheduler runs jobs on robfig/cron, each wrapped once with recover, skip-if-still-running,
// a per-round deadline and metrics.
type Scheduler struct {
	cron    *cron.Cron
	log     *slog.Logger
	metrics *Metrics
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

// NewScheduler builds an idle scheduler.
func NewScheduler(log *slog.Logger, m *Metrics) *Scheduler {
	ctx, cancel := context.WithCancel(context.Background())
	return &Scheduler{cron: cron.New(), log: log, metrics: m, ctx: ctx, cancel: cancel}
}

// Add schedules job with a robfig/cron spec ("@every 1m", "*/5 * * * *"); deadline bounds one round.
func (s *Scheduler) Add(spec string, job Job, deadline time.Duration) error {
	w := &wrapped{job: job, s: s, deadline: deadline}
	if _, err := s.cron.AddJob(spec, w); err != nil {
		return fmt.Errorf("schedule job %s (%q): %w", job.Name(), spec, err)
	}
	return nil
}

// RunOnce runs a job through the same wrapper now (the tests drive single rounds with it).
func (s *Scheduler) RunOnce(job Job, deadline time.Duration) {
	(&wrapped{job: job, s: s, deadline: deadline}).Run()
}

// Start starts the cron loop.
func (s *Scheduler) Start() { s.cron.Start() }

// Stop stops scheduling, cancels running rounds' contexts once ctx ends, and waits for them.
func (s *Scheduler) Stop(ctx context.Context) {
	stopped := s.cron.Stop()
	select {
	case <-stopped.Done():
	case <-ctx.Done():
		s.cancel()
		<-stopped.Done()
	}
	s.cancel()
	s.wg.Wait()
}

type wrapped struct {
	job      Job
	s        *Scheduler
	deadline time.Duration
	running  atomic.Bool
}

func (w *wrapped) Run() {
	name := w.job.Name()
	if !w.running.CompareAndSwap(false, true) {
		w.s.metrics.runs.WithLabelValues(name, "skipped").Inc()
		w.s.log.Warn("job still running; round skipped", "job", name)
		return
	}
	w.s.wg.Add(1)
	defer w.s.wg.Done()
	defer w.running.Store(false)
	ctx, cancel := context.WithTimeout(w.s.ctx, w.deadline)
	defer cancel()
	start := time.Now()
	defer func() {
		w.s.metrics.duration.WithLabelValues(name).Observe(time.Since(start).Seconds())
		if p := recover(); p != nil {
			w.s.metrics.runs.WithLabelValues(name, "panic").Inc()
			w.s.log.Error("job panicked", "job", name, "panic", fmt.Sprint(p))
		}
	}()
	if err := w.job.Run(ctx); err != nil {
		w.s.metrics.runs.WithLabelValues(name, "failed").Inc()
		w.s.log.Error("job failed", "job", name, "err", err)
		return
	}
	w.s.metrics.runs.WithLabelValues(name, "ok").Inc()
	w.s.metrics.lastSuccess.WithLabelValues(name).SetToCurrentTime()
}
