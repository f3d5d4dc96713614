package usage

import (
	"context"
	"errors"
	"time"

	"pvebill/models"
)

// Series limits.
const (
	DefaultSeriesPoints = 300
	MaxSeriesPoints     = 1000
)

// Series metrics.
var seriesUnits = map[string]string{"swap": "bytes", "memory": "bytes", "cpu": "ratio", "disk": "bytes",
	"netin": "bytes_per_second", "netout": "bytes_per_second"}

// Errors of a malformed series query.
var (
	ErrMetric = errors.New("usage: metric must be swap, memory, cpu, netin, netout or disk")
	ErrPoints = errors.New("usage: points out of range")
)

// SeriesQuery selects one metric of one service over [From, To) for a graph.
type SeriesQuery struct {
	ServiceID string
	Svc       int64 // the service's key (services.id): its id alone may name several (R46)
	Metric    string
	From, To  time.Time
	Points    int // at most this many points; 0 is DefaultSeriesPoints
}

// Check validates a series query.
func (q SeriesQuery) Check() error {
	if _, ok := seriesUnits[q.Metric]; !ok {
		return ErrMetric
	}
	if q.Points < 0 || q.Points > MaxSeriesPoints {
		return ErrPoints
	}
	if !q.From.Before(q.To) || q.To.Sub(q.From) > MaxPeriod {
		return ErrPeriod
	}
	return nil
}

// Series is a metric over time: one point a step from the period's first whole bucket, each
// with the average and the maximum over its step, null where not known (no sample, or a figure
// the metric does not keep: CPU and network have no maximum, disk no average).
type Series struct {
	Metric      string        `json:"metric"`
	Unit        string        `json:"unit"`
	StepSeconds int64         `json:"step_seconds"`
	Points      []SeriesPoint `json:"points"`
}

// SeriesPoint is one step of a series.
type SeriesPoint struct {
	T   time.Time `json:"t"`
	Avg *float64  `json:"avg"`
	Max *float64  `json:"max"`
}

// Series answers a series query from the coarsest tier that still gives the points asked for
// (the 5-minute one when none does), buckets merged into steps when there are more.
func (r *Reporter) Series(ctx context.Context, q SeriesQuery) (Series, error) {
	if err := q.Check(); err != nil {
		return Series{}, err
	}
	if q.Points == 0 {
		q.Points = DefaultSeriesPoints
	}
	from, to := ceilUnix(q.From.UTC()), ceilUnix(q.To.UTC())
	tier := models.Tier5m
	for _, t := range []models.Tier{models.Tier1d, models.Tier1h} {
		if (to-ceilTo(from, t.Seconds()))/t.Seconds() >= int64(q.Points) {
			tier = t
			break
		}
	}
	w := tier.Seconds()
	first := ceilTo(from, w)
	n := (to - first + w - 1) / w // buckets starting in the period
	per := max(1, (n+int64(q.Points)-1)/int64(q.Points))
	step := per * w
	out := Series{Metric: q.Metric, Unit: seriesUnits[q.Metric], StepSeconds: step, Points: []SeriesPoint{}}
	if first >= to {
		return out, nil
	}
	marks, err := r.db.UsageRollupMarks(ctx)
	if err != nil {
		return Series{}, err
	}
	rows, err := r.tierBuckets(ctx, []int64{q.Svc}, tier, first, to, marks)
	if err != nil {
		return Series{}, err
	}
	steps := rollBuckets(shift(rows, first), step)
	i := 0
	for t := int64(0); first+t < to; t += step {
		p := SeriesPoint{T: time.Unix(first+t, 0).UTC()}
		if i < len(steps) && steps[i].BucketStart == t {
			p.Avg, p.Max = seriesValues(q.Metric, steps[i], step)
			i++
		}
		out.Points = append(out.Points, p)
	}
	return out, nil
}

// shift makes bucket starts relative to first, so that steps are counted from it.
func shift(rows []models.UsageBucket, first int64) []models.UsageBucket {
	for i := range rows {
		rows[i].BucketStart -= first
	}
	return rows
}

// seriesValues are a step's average and maximum of the metric; nil where not known.
func seriesValues(metric string, b models.UsageBucket, step int64) (avg, peak *float64) {
	f := func(v int64) *float64 { return ptr(float64(v)) }
	fp := func(v *int64) *float64 {
		if v == nil {
			return nil
		}
		return f(*v)
	}
	rate := func(v *int64) *float64 {
		if v == nil {
			return nil
		}
		return ptr(float64(*v) / float64(step))
	}
	switch metric {
	case "swap":
		if b.SwapSamples > 0 {
			return ptr(float64(b.SwapSum) / float64(b.SwapSamples)), fp(b.SwapMax)
		}
	case "memory":
		if b.Samples > 0 {
			return ptr(float64(b.MemSum) / float64(b.Samples)), fp(b.MemMax)
		}
	case "cpu":
		if b.Samples > 0 {
			return ptr(b.CPUSum / float64(b.Samples)), nil
		}
	case "disk":
		if b.Samples > 0 {
			return nil, fp(b.DiskMax)
		}
	case "netin":
		return rate(b.NetIn), nil
	case "netout":
		return rate(b.NetOut), nil
	}
	return nil, nil
}
