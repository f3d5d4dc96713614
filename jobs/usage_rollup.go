package jobs

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"pvebill/models"
	"pvebill/modules/usage"
)

// UsageRollup is the roll-up job (R45): it closes the finished hours and days of usage into the
// hourly and daily tiers (usage.Roller), one replica per tick (run it under a TickLease).
type UsageRollup struct {
	Roller  *usage.Roller
	Metrics *RollupMetrics // nil: not measured
	Log     *slog.Logger
}

// Name implements Job.
func (UsageRollup) Name() string { return "usage_rollup" }

// Run implements Job.
func (j UsageRollup) Run(ctx context.Context) error {
	start := time.Now()
	res, err := j.Roller.Run(ctx)
	if j.Metrics != nil {
		j.Metrics.duration.Observe(time.Since(start).Seconds())
		j.Metrics.rows.Add(float64(res.Rows))
	}
	if err == nil && res.Rows > 0 && j.Log != nil {
		j.Log.Info("usage rolled up", "hours", res.Hours, "days", res.Days, "rows", res.Rows,
			"until", res.HourMark)
	}
	return err
}

// RollupMetrics are the roll-up job's duration and rows written; its lag behind real time is
// read from the database at scrape time, so every replica reports it whichever ran the job.
type RollupMetrics struct {
	duration prometheus.Histogram
	rows     prometheus.Counter
}

// NewRollupMetrics registers the roll-up metrics on reg; db answers the lag.
func NewRollupMetrics(reg prometheus.Registerer, db *models.DB, now func() time.Time) *RollupMetrics {
	if now == nil {
		now = time.Now
	}
	m := &RollupMetrics{
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "pvebill_usage_rollup_duration_seconds",
			Help:    "Duration of one usage roll-up run.",
			Buckets: []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300}}),
		rows: prometheus.NewCounter(prometheus.CounterOpts{Name: "pvebill_usage_rollup_rows_total",
			Help: "Hourly and daily usage rows written by the roll-up."}),
	}
	reg.MustRegister(m.duration, m.rows, &rollupLag{db: db, now: now, desc: prometheus.NewDesc(
		"pvebill_usage_rollup_lag_seconds",
		"Seconds between now and the end of the last hour rolled up (0 before there is anything to roll up).", nil, nil)})
	return m
}

// rollupLag reports how far the hourly tier is behind real time.
type rollupLag struct {
	db   *models.DB
	now  func() time.Time
	desc *prometheus.Desc
}

func (c *rollupLag) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *rollupLag) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	marks, err := c.db.UsageRollupMarks(ctx)
	if err != nil {
		return
	}
	lag := 0.0
	if mark, ok := marks[models.Tier1h]; ok {
		lag = c.now().Sub(time.Unix(mark, 0)).Seconds()
	}
	ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, lag)
}

// UsageRetention deletes the usage buckets of each tier past its retention. A bucket not yet
// rolled up into the next tier is kept whatever its age, so retention never loses what a coarser
// tier has not taken over.
type UsageRetention struct {
	DB                                    *models.DB
	Retention5m, Retention1h, Retention1d time.Duration // zero: the tier's default
	Now                                   func() time.Time
	Log                                   *slog.Logger
}

// Default retentions of the usage tiers (usage.retention_5m, retention_1h, retention_1d).
const (
	DefaultRetention5m = 35 * 24 * time.Hour
	DefaultRetention1h = 400 * 24 * time.Hour
	DefaultRetention1d = 3 * 365 * 24 * time.Hour
)

// usagePurgeBatch is how many rows one retention statement deletes at most.
const usagePurgeBatch = 5000

// Name implements Job.
func (UsageRetention) Name() string { return "usage_retention" }

// Run implements Job.
func (j UsageRetention) Run(ctx context.Context) error {
	now := time.Now
	if j.Now != nil {
		now = j.Now
	}
	marks, err := j.DB.UsageRollupMarks(ctx)
	if err != nil {
		return err
	}
	for _, t := range []struct {
		tier models.Tier
		ret  time.Duration
		def  time.Duration
		next models.Tier // the tier that takes over; "" for none
	}{
		{models.Tier5m, j.Retention5m, DefaultRetention5m, models.Tier1h},
		{models.Tier1h, j.Retention1h, DefaultRetention1h, models.Tier1d},
		{models.Tier1d, j.Retention1d, DefaultRetention1d, ""},
	} {
		if t.ret <= 0 {
			t.ret = t.def
		}
		cut := now().Add(-t.ret).Unix()
		if t.next != "" {
			mark, ok := marks[t.next]
			if !ok {
				continue // nothing rolled up yet: keep everything
			}
			cut = min(cut, mark)
		}
		n, err := j.DB.PurgeUsageTier(ctx, t.tier, cut, usagePurgeBatch)
		if err != nil {
			return err
		}
		if n > 0 && j.Log != nil {
			j.Log.Info("purged usage buckets past retention", "tier", t.tier, "count", n)
		}
	}
	return nil
}
