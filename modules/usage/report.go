package usage

import (
	"context"
	"errors"
	"time"

	"pvebill/i18n"
	"pvebill/models"
	"pvebill/modules/plans"
)

// Page sizes of the usage report.
const (
	DefaultPageSize = 100
	MaxPageSize     = 1000
	// MaxPeriod bounds one report's period.
	MaxPeriod = 400 * 24 * time.Hour
	// MaxBucketPeriod and MaxBucketPageSize bound a report with buckets (a month of 5-minute
	// buckets is 8,928 per service).
	MaxBucketPeriod   = 31 * 24 * time.Hour
	MaxBucketPageSize = 100
)

// PlanSource looks plans up by code (the plans service).
type PlanSource interface {
	Get(ctx context.Context, code string) (plans.Plan, error)
}

// Reporter builds usage reports from the stored buckets (R34).
type Reporter struct {
	db    *models.DB
	plans PlanSource
	now   func() time.Time
}

// NewReporter returns a reporter. plans may be nil (no bandwidth limits); now nil is time.Now.
func NewReporter(db *models.DB, p PlanSource, now func() time.Time) *Reporter {
	if now == nil {
		now = time.Now
	}
	return &Reporter{db: db, plans: p, now: now}
}

// Query selects a report.
type Query struct {
	ClientID  string // the billing client whose services are reported; "" for all (admin)
	ServiceID string // one service, or "" for all of the client's
	From, To  time.Time
	Buckets   bool   // include the 5-minute buckets
	After     string // page cursor (the last service_id of the previous page)
	Limit     int    // page size; 0 is DefaultPageSize
}

// Report is the usage of a page of services over [From, To).
type Report struct {
	From       time.Time      `json:"from"`
	To         time.Time      `json:"to"`
	Services   []ServiceUsage `json:"services"`
	NextCursor *string        `json:"next_cursor"`
}

// ServiceUsage is one service's usage over the period. Every figure is nil (JSON null) when no
// sample or delta carried it: unknown is never zero.
type ServiceUsage struct {
	ServiceID           string        `json:"service_id"`
	NetInBytes          *int64        `json:"netin_bytes"`
	NetOutBytes         *int64        `json:"netout_bytes"`
	DiskMaxBytes        *int64        `json:"disk_max_bytes"`
	MemoryAvgBytes      *int64        `json:"memory_avg_bytes"`
	MemoryMaxBytes      *int64        `json:"memory_max_bytes"`
	SwapAvgBytes        *int64        `json:"swap_avg_bytes"`
	SwapMaxBytes        *int64        `json:"swap_max_bytes"`
	CPUAvg              *float64      `json:"cpu_avg"`
	BandwidthLimitBytes *int64        `json:"bandwidth_limit_bytes"`
	DiskLimitBytes      *int64        `json:"disk_limit_bytes"`
	Samples             int64         `json:"samples"`
	Buckets             []BucketUsage `json:"buckets,omitempty"`
}

// BucketUsage is one 5-minute bucket. Partial marks the current, unfinished bucket; Samples
// says how many readings it holds (five in a full bucket at one a minute): a bucket with fewer
// says so and its figures come from those readings only.
type BucketUsage struct {
	Start          time.Time `json:"start"`
	Partial        bool      `json:"partial"`
	Samples        int       `json:"samples"`
	SwapAvgBytes   *int64    `json:"swap_avg_bytes"`
	SwapMaxBytes   *int64    `json:"swap_max_bytes"`
	SwapLimitBytes *int64    `json:"swap_limit_bytes"`
	MemoryAvgBytes *int64    `json:"memory_avg_bytes"`
	MemoryMaxBytes *int64    `json:"memory_max_bytes"`
	CPUAvg         *float64  `json:"cpu_avg"`
	DiskMaxBytes   *int64    `json:"disk_max_bytes"`
	NetInBytes     *int64    `json:"netin_bytes"`
	NetOutBytes    *int64    `json:"netout_bytes"`
	Node           string    `json:"node"`
}

// Errors of a malformed query (the server maps them to validation failures).
var (
	ErrPeriod = errors.New("usage: from must be before to, and the period at most 400 days (31 with buckets)")
	ErrLimit  = errors.New("usage: limit out of range")
)

// Check validates a query's period and page size (the server maps failures to field errors).
func (q Query) Check() error {
	if !q.From.Before(q.To) || q.To.Sub(q.From) > MaxPeriod || (q.Buckets && q.To.Sub(q.From) > MaxBucketPeriod) {
		return ErrPeriod
	}
	maxLimit := MaxPageSize
	if q.Buckets {
		maxLimit = MaxBucketPageSize
	}
	if q.Limit < 0 || q.Limit > maxLimit {
		return ErrLimit
	}
	return nil
}

// Report builds a page of the report. A bucket belongs to the period its start falls in:
// From <= start < To.
func (r *Reporter) Report(ctx context.Context, q Query) (Report, error) {
	if err := q.Check(); err != nil {
		return Report{}, err
	}
	if q.Limit == 0 {
		q.Limit = DefaultPageSize
		if q.Buckets {
			q.Limit = MaxBucketPageSize
		}
	}
	from, to := q.From.UTC(), q.To.UTC()
	// A bucket starting at s is in the period when from <= s < to; buckets start on whole
	// seconds, so the bounds round up to the next whole second.
	fromS, toS := ceilUnix(from), ceilUnix(to)
	svcs, err := r.db.UsageServices(ctx, models.UsageServicesQuery{ClientID: q.ClientID, ServiceID: q.ServiceID,
		After: q.After, Limit: q.Limit + 1, From: from, To: to})
	if err != nil {
		return Report{}, err
	}
	out := Report{From: from, To: to, Services: []ServiceUsage{}}
	if len(svcs) > q.Limit {
		svcs = svcs[:q.Limit]
		next := svcs[len(svcs)-1].ServiceID
		out.NextCursor = &next
	}
	ids := make([]string, len(svcs))
	for i, s := range svcs {
		ids[i] = s.ServiceID
	}
	totals, err := r.db.UsageTotalsFor(ctx, ids, fromS, toS)
	if err != nil {
		return Report{}, err
	}
	var buckets map[string][]BucketUsage
	if q.Buckets {
		rows, err := r.db.UsageBuckets(ctx, ids, fromS, toS)
		if err != nil {
			return Report{}, err
		}
		now := r.now()
		buckets = map[string][]BucketUsage{}
		for _, b := range rows {
			buckets[b.ServiceID] = append(buckets[b.ServiceID], bucketView(b, now))
		}
	}
	limits := map[string]planLimits{}
	for _, s := range svcs {
		u := ServiceUsage{ServiceID: s.ServiceID}
		if t, ok := totals[s.ServiceID]; ok {
			fill(&u, t)
		}
		lim, err := r.limits(ctx, s.Plan, limits)
		if err != nil {
			return Report{}, err
		}
		u.BandwidthLimitBytes, u.DiskLimitBytes = lim.bandwidth, lim.disk
		if q.Buckets {
			u.Buckets = buckets[s.ServiceID]
			if u.Buckets == nil {
				u.Buckets = []BucketUsage{}
			}
		}
		out.Services = append(out.Services, u)
	}
	return out, nil
}

func ceilUnix(t time.Time) int64 {
	s := t.Unix()
	if t.Nanosecond() > 0 {
		s++
	}
	return s
}

func fill(u *ServiceUsage, t models.UsageTotals) {
	u.Samples = t.Samples
	u.NetInBytes, u.NetOutBytes = t.NetIn, t.NetOut
	if t.Samples > 0 {
		u.DiskMaxBytes = t.DiskMax
		u.MemoryMaxBytes = t.MemMax
		if t.MemSum != nil {
			u.MemoryAvgBytes = ptr(*t.MemSum / t.Samples)
		}
		if t.CPUSum != nil {
			u.CPUAvg = ptr(*t.CPUSum / float64(t.Samples))
		}
	}
	if t.SwapSamples > 0 {
		u.SwapMaxBytes = t.SwapMax
		if t.SwapSum != nil {
			u.SwapAvgBytes = ptr(*t.SwapSum / t.SwapSamples)
		}
	}
}

func bucketView(b models.UsageBucket, now time.Time) BucketUsage {
	start := time.Unix(b.BucketStart, 0).UTC()
	v := BucketUsage{Start: start, Partial: now.Before(start.Add(BucketWidth)), Samples: b.Samples,
		SwapLimitBytes: b.SwapLimit, NetInBytes: b.NetIn, NetOutBytes: b.NetOut, Node: b.Node}
	if b.Samples > 0 {
		v.MemoryAvgBytes = ptr(b.MemSum / int64(b.Samples))
		v.MemoryMaxBytes = b.MemMax
		v.CPUAvg = ptr(b.CPUSum / float64(b.Samples))
		v.DiskMaxBytes = b.DiskMax
	}
	if b.SwapSamples > 0 {
		v.SwapAvgBytes = ptr(b.SwapSum / int64(b.SwapSamples))
		v.SwapMaxBytes = b.SwapMax
	}
	return v
}

// planLimits are a plan's allowances in bytes; nil is unlimited or unknown.
type planLimits struct{ bandwidth, disk *int64 }

// limits reads the plan's traffic allowance per period and its disk size; both nil for an
// unknown plan (deleted since), the bandwidth nil for an unlimited one.
func (r *Reporter) limits(ctx context.Context, code string, cache map[string]planLimits) (planLimits, error) {
	if r.plans == nil || code == "" {
		return planLimits{}, nil
	}
	if v, ok := cache[code]; ok {
		return v, nil
	}
	p, err := r.plans.Get(ctx, code)
	var lim planLimits
	switch {
	case err == nil:
		if p.BandwidthGiB != nil {
			lim.bandwidth = ptr(*p.BandwidthGiB << 30)
		}
		if p.DiskGiB > 0 {
			lim.disk = ptr(int64(p.DiskGiB) << 30)
		}
	case isNotFound(err):
	default:
		return planLimits{}, err
	}
	cache[code] = lim
	return lim, nil
}

func isNotFound(err error) bool {
	var p *i18n.Problem
	return errors.Is(err, models.ErrNotFound) || (errors.As(err, &p) && p.Code == i18n.CodeNotFound)
}
