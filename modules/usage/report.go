package usage

import (
	"context"
	"errors"
	"strings"
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
	// MaxBucketPeriod and MaxBucketPageSize bound a report with 5-minute buckets (a month of
	// them is 8,928 per service); MaxHourBucketPeriod one with hourly buckets (2,208 per
	// service); daily buckets go up to MaxPeriod.
	MaxBucketPeriod     = 31 * 24 * time.Hour
	MaxHourBucketPeriod = 92 * 24 * time.Hour
	MaxBucketPageSize   = 100
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
	Buckets   bool // include the 5-minute buckets (Granularity 5m)
	// Granularity includes the buckets of that tier (5m, 1h or 1d); "" is none unless Buckets.
	Granularity models.Tier
	After       string // page cursor: the previous page's next_cursor (FormatCursor), "" for the first page
	Limit       int    // page size; 0 is DefaultPageSize
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
	ServiceID string `json:"service_id"`
	// ClientID is the service's client, in an admin's report only (every client's services,
	// whose ids may repeat across clients: R46).
	ClientID            string   `json:"client_id,omitempty"`
	NetInBytes          *int64   `json:"netin_bytes"`
	NetOutBytes         *int64   `json:"netout_bytes"`
	DiskMaxBytes        *int64   `json:"disk_max_bytes"`
	MemoryAvgBytes      *int64   `json:"memory_avg_bytes"`
	MemoryMaxBytes      *int64   `json:"memory_max_bytes"`
	SwapAvgBytes        *int64   `json:"swap_avg_bytes"`
	SwapMaxBytes        *int64   `json:"swap_max_bytes"`
	CPUAvg              *float64 `json:"cpu_avg"`
	BandwidthLimitBytes *int64   `json:"bandwidth_limit_bytes"`
	DiskLimitBytes      *int64   `json:"disk_limit_bytes"`
	Samples             int64    `json:"samples"`
	// BackupBytes is the size of the service's backups when pvebill last listed them (a
	// backup, a rotation, a delete, a listing, R42); null when it never has. It is a current
	// figure, not one of the period.
	BackupBytes *int64        `json:"backup_bytes"`
	Buckets     []BucketUsage `json:"buckets,omitempty"`
}

// BucketUsage is one bucket of the report's granularity (5 minutes, an hour or a day). Partial
// marks the current, unfinished bucket; Samples says how many readings it holds (five in a full
// 5-minute bucket at one a minute): a bucket with fewer says so and its figures come from those
// readings only. Node is where the guest was at the bucket's latest reading.
type BucketUsage struct {
	Start          time.Time `json:"start"`
	Partial        bool      `json:"partial"`
	Samples        int64     `json:"samples"`
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

// cursorSep joins the two parts of a page cursor; neither a service id nor a client id may
// contain it.
const cursorSep = "/"

// FormatCursor is the page cursor after the service k: its service id and client id, the order
// of the report's pages (R46). Callers pass it back unchanged; it is opaque to them.
func FormatCursor(k models.ServiceKey) string { return k.ServiceID + cursorSep + k.ClientID }

// SplitCursor returns a cursor's service id and client id, and whether it had both. A cursor of
// a service id alone (as pages were chained before service ids became per client) has client
// id "": the page then starts after every service of that id.
func SplitCursor(cur string) (serviceID, clientID string, twoPart bool) {
	return strings.Cut(cur, cursorSep)
}

// Errors of a malformed query (the server maps them to validation failures).
var (
	ErrPeriod = errors.New("usage: from must be before to, and the period at most 400 days (31 with 5-minute buckets, 92 with hourly ones)")
	ErrLimit  = errors.New("usage: limit out of range")
)

// granularity is the tier whose buckets the report lists, "" for none.
func (q Query) granularity() models.Tier {
	if q.Granularity == "" && q.Buckets {
		return models.Tier5m
	}
	return q.Granularity
}

// Check validates a query's period and page size (the server maps failures to field errors).
func (q Query) Check() error {
	maxPeriod := map[models.Tier]time.Duration{"": MaxPeriod, models.Tier5m: MaxBucketPeriod,
		models.Tier1h: MaxHourBucketPeriod, models.Tier1d: MaxPeriod}[q.granularity()]
	if !q.From.Before(q.To) || q.To.Sub(q.From) > MaxPeriod || q.To.Sub(q.From) > maxPeriod {
		return ErrPeriod
	}
	maxLimit := MaxPageSize
	if q.granularity() != "" {
		maxLimit = MaxBucketPageSize
	}
	if q.Limit < 0 || q.Limit > maxLimit {
		return ErrLimit
	}
	return nil
}

// Report builds a page of the report. A bucket belongs to the period its start falls in:
// From <= start < To. Each part of the period is read from the coarsest tier that covers it
// (R45): whole rolled-up days from the daily tier, whole rolled-up hours from the hourly one,
// the ragged edges and the current hour from the 5-minute buckets; the figures are those the
// 5-minute buckets alone would give.
func (r *Reporter) Report(ctx context.Context, q Query) (Report, error) {
	if err := q.Check(); err != nil {
		return Report{}, err
	}
	if q.Limit == 0 {
		q.Limit = DefaultPageSize
		if q.granularity() != "" {
			q.Limit = MaxBucketPageSize
		}
	}
	from, to := q.From.UTC(), q.To.UTC()
	afterService, afterClient, _ := SplitCursor(q.After)
	svcs, err := r.db.UsageServices(ctx, models.UsageServicesQuery{ClientID: q.ClientID, ServiceID: q.ServiceID,
		AfterServiceID: afterService, AfterClientID: afterClient, Limit: q.Limit + 1, From: from, To: to})
	if err != nil {
		return Report{}, err
	}
	out := Report{From: from, To: to, Services: []ServiceUsage{}}
	if len(svcs) > q.Limit {
		svcs = svcs[:q.Limit]
		next := FormatCursor(svcs[len(svcs)-1].Key())
		out.NextCursor = &next
	}
	// Services are read by their keys: a service id alone may name services of several
	// clients (R46).
	ids := make([]int64, len(svcs))
	for i, s := range svcs {
		ids[i] = s.ID
	}
	// A bucket starting at s is in the period when from <= s < to; buckets start on whole
	// seconds, so the bounds round up to the next whole second.
	span := period{from: ceilUnix(from), to: ceilUnix(to)}
	marks, err := r.db.UsageRollupMarks(ctx)
	if err != nil {
		return Report{}, err
	}
	totals, err := r.totals(ctx, ids, span, marks)
	if err != nil {
		return Report{}, err
	}
	buckets, err := r.buckets(ctx, ids, q.granularity(), span, marks)
	if err != nil {
		return Report{}, err
	}
	backups, err := r.db.ServiceBackupBytes(ctx, ids)
	if err != nil {
		return Report{}, err
	}
	limits := map[string]planLimits{}
	for _, s := range svcs {
		u := ServiceUsage{ServiceID: s.ServiceID}
		if q.ClientID == "" {
			u.ClientID = s.ClientID
		}
		if b, ok := backups[s.ID]; ok {
			u.BackupBytes = &b
		}
		if t, ok := totals[s.ID]; ok {
			fill(&u, t)
		}
		lim, err := r.limits(ctx, s.Plan, limits)
		if err != nil {
			return Report{}, err
		}
		u.BandwidthLimitBytes, u.DiskLimitBytes = lim.bandwidth, lim.disk
		if buckets != nil {
			u.Buckets = buckets[s.ID]
			if u.Buckets == nil {
				u.Buckets = []BucketUsage{}
			}
		}
		out.Services = append(out.Services, u)
	}
	return out, nil
}

// totals sums each service's figures over the period, a query per part of its plan.
func (r *Reporter) totals(ctx context.Context, ids []int64, p period, marks map[models.Tier]int64) (map[int64]models.UsageTotals, error) {
	out := map[int64]models.UsageTotals{}
	for _, seg := range Plan(p.from, p.to, marks) {
		part, err := r.db.UsageTierTotalsOf(ctx, seg.Tier, ids, seg.From, seg.To)
		if err != nil {
			return nil, err
		}
		for id, t := range part {
			sum, ok := out[id]
			if !ok {
				out[id] = t
				continue
			}
			mergeTotals(&sum, t)
			out[id] = sum
		}
	}
	return out, nil
}

// buckets lists each service's buckets of granularity g (nil when g is ""): rolled-up ones from
// their tier, the rest (the current hour or day, or periods not yet rolled up) computed from
// the finer tiers.
func (r *Reporter) buckets(ctx context.Context, ids []int64, g models.Tier, p period, marks map[models.Tier]int64) (map[int64][]BucketUsage, error) {
	if g == "" {
		return nil, nil
	}
	rows, err := r.tierBuckets(ctx, ids, g, ceilTo(p.from, g.Seconds()), p.to, marks)
	if err != nil {
		return nil, err
	}
	now := r.now()
	out := map[int64][]BucketUsage{}
	for _, b := range rows {
		out[b.Svc] = append(out[b.Svc], bucketView(b, g, now))
	}
	return out, nil
}

// tierBuckets returns the buckets of tier g starting in [from, to) (from a multiple of g's
// width), ordered by service and start.
func (r *Reporter) tierBuckets(ctx context.Context, ids []int64, g models.Tier, from, to int64, marks map[models.Tier]int64) ([]models.UsageBucket, error) {
	if g == models.Tier5m {
		return r.db.UsageBucketsOf(ctx, ids, from, to)
	}
	mark := max(from, min(marks[g], to))
	stored, err := r.db.UsageTierBucketsOf(ctx, g, ids, from, mark)
	if err != nil || mark >= to {
		return stored, err
	}
	finer := models.Tier5m
	if g == models.Tier1d {
		finer = models.Tier1h
	}
	rest, err := r.tierBuckets(ctx, ids, finer, mark, ceilTo(to, g.Seconds()), marks)
	if err != nil {
		return nil, err
	}
	return mergeBuckets(stored, rollBuckets(rest, g.Seconds())), nil
}

// period is [from, to) in unix seconds.
type period struct{ from, to int64 }

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

func bucketView(b models.UsageBucket, g models.Tier, now time.Time) BucketUsage {
	start := time.Unix(b.BucketStart, 0).UTC()
	v := BucketUsage{Start: start, Partial: now.Before(start.Add(time.Duration(g.Seconds()) * time.Second)), Samples: b.Samples,
		SwapLimitBytes: b.SwapLimit, NetInBytes: b.NetIn, NetOutBytes: b.NetOut, Node: b.Node}
	if b.Samples > 0 {
		v.MemoryAvgBytes = ptr(b.MemSum / b.Samples)
		v.MemoryMaxBytes = b.MemMax
		v.CPUAvg = ptr(b.CPUSum / float64(b.Samples))
		v.DiskMaxBytes = b.DiskMax
	}
	if b.SwapSamples > 0 {
		v.SwapAvgBytes = ptr(b.SwapSum / b.SwapSamples)
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
