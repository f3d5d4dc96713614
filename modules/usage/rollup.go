package usage

import (
	"context"
	"time"

	"pvebill/models"
)

// Roll-up defaults.
const (
	// RollupGrace is how long after an hour ends its 5-minute buckets may still be written (the
	// last bucket's samples arrive in the minute after it, flushed by the next sampler round);
	// the hour is closed and rolled up after it.
	RollupGrace = 10 * time.Minute
	// DefaultRollupHours bounds the hours one run closes, so that catching up after a long stop
	// is spread over several runs instead of one long one.
	DefaultRollupHours = 7 * 24
	// rollupServicePage is how many services one read and one upsert cover.
	rollupServicePage = 500
	// hourSpan and daySpan are how many hours and days one pass over the services closes.
	hourSpan = 24 * 3600
	daySpan  = 7 * 86400
)

// Roller rolls closed hours of 5-minute buckets into the hourly tier and closed days of hours
// into the daily tier (R45). Each coarse bucket is recomputed from the whole of its finer
// buckets and written with an upsert keyed on the service and the period, so a second run
// writes the same rows; a tier's mark (how far it is rolled up) moves only after every service
// of a span is written, so a run killed half-way is redone by the next one, neither losing nor
// double-counting. The current partial hour and day are never rolled up: reports read them from
// the finer tiers.
type Roller struct {
	DB  *models.DB
	Now func() time.Time // nil is time.Now
	// MaxHours bounds the hours one run closes (0 is DefaultRollupHours).
	MaxHours int
	// PageSize is how many services one read and upsert cover (0 is 500).
	PageSize int

	// fault, when set, is called after each page is written; an error stops the run there
	// (the crash-safety test kills a run half-way with it).
	fault func() error
}

// RollupResult says what a run did.
type RollupResult struct {
	Hours, Days int   // periods closed
	Rows        int64 // coarse rows written
	// HourMark is the end of the last closed hour (zero when nothing was ever rolled up).
	HourMark time.Time
}

// Run closes the finished hours and days not yet rolled up.
func (r *Roller) Run(ctx context.Context) (RollupResult, error) {
	var res RollupResult
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	marks, err := r.DB.UsageRollupMarks(ctx)
	if err != nil {
		return res, err
	}
	hourMark, dayMark, ok, err := r.marks(ctx, marks)
	if err != nil || !ok {
		return res, err
	}
	maxHours := r.MaxHours
	if maxHours <= 0 {
		maxHours = DefaultRollupHours
	}
	hourEnd := min(floorTo(now().Add(-RollupGrace).Unix(), 3600), hourMark+int64(maxHours)*3600)
	hourMark, err = r.rollTier(ctx, models.Tier5m, models.Tier1h, hourMark, hourEnd, hourSpan, &res)
	res.HourMark = time.Unix(hourMark, 0).UTC()
	if err != nil {
		return res, err
	}
	_, err = r.rollTier(ctx, models.Tier1h, models.Tier1d, dayMark, floorTo(hourMark, 86400), daySpan, &res)
	return res, err
}

// marks returns how far the hourly and daily tiers are rolled up. Before the first run both
// start at the earliest 5-minute bucket and are recorded at once (were the daily mark taken
// later from the hourly one, a run killed between the two would skip the first days); ok is
// false while there is nothing to roll up.
func (r *Roller) marks(ctx context.Context, marks map[models.Tier]int64) (hour, day int64, ok bool, err error) {
	hour, okH := marks[models.Tier1h]
	day, okD := marks[models.Tier1d]
	if okH && okD {
		return hour, day, true, nil
	}
	earliest, found, err := r.DB.UsageEarliest(ctx, models.Tier5m)
	if err != nil || !found {
		return 0, 0, false, err
	}
	if !okH {
		hour = floorTo(earliest, 3600)
	}
	if !okD {
		day = floorTo(min(hour, earliest), 86400)
	}
	if err := r.DB.SetUsageRollupMark(ctx, models.Tier1d, day); err != nil {
		return 0, 0, false, err
	}
	if err := r.DB.SetUsageRollupMark(ctx, models.Tier1h, hour); err != nil {
		return 0, 0, false, err
	}
	return hour, day, true, nil
}

// rollTier rolls the buckets of src starting in [mark, end) into dst, span seconds at a time,
// recording dst's mark after each span; it returns the mark reached.
func (r *Roller) rollTier(ctx context.Context, src, dst models.Tier, mark, end, span int64, res *RollupResult) (int64, error) {
	for mark < end {
		to := min(end, mark+span)
		n, err := r.rollSpan(ctx, src, dst, mark, to)
		res.Rows += n
		if err != nil {
			return mark, err
		}
		if err := r.DB.SetUsageRollupMark(ctx, dst, to); err != nil {
			return mark, err
		}
		if dst == models.Tier1h {
			res.Hours += int((to - mark) / 3600)
		} else {
			res.Days += int((to - mark) / 86400)
		}
		mark = to
	}
	return mark, nil
}

// rollSpan recomputes dst's buckets in [from, to) from src for every service, a page of
// services at a time.
func (r *Roller) rollSpan(ctx context.Context, src, dst models.Tier, from, to int64) (int64, error) {
	page := r.PageSize
	if page <= 0 {
		page = rollupServicePage
	}
	var written, after int64
	for {
		keys, err := r.DB.UsageServiceKeyPage(ctx, after, page)
		if err != nil || len(keys) == 0 {
			return written, err
		}
		after = keys[len(keys)-1]
		rows, err := r.DB.UsageTierRows(ctx, src, keys, from, to)
		if err != nil {
			return written, err
		}
		out := RollUp(rows, dst.Seconds())
		if err := r.DB.UpsertUsageTier(ctx, dst, out); err != nil {
			return written, err
		}
		written += int64(len(out))
		if r.fault != nil {
			if err := r.fault(); err != nil {
				return written, err
			}
		}
	}
}

// RollUp folds buckets (ordered by service and start) into buckets width seconds wide: counts
// and sums add up, maxima are the largest, network deltas add up with nil only where every
// finer bucket had none, and the node and swap limit are the latest known.
func RollUp(rows []models.UsageTierRow, width int64) []models.UsageTierRow {
	var out []models.UsageTierRow
	for _, r := range rows {
		start := floorTo(r.Start, width)
		if n := len(out); n == 0 || out[n-1].Svc != r.Svc || out[n-1].Start != start {
			out = append(out, models.UsageTierRow{Svc: r.Svc, Start: start})
		}
		o := &out[len(out)-1]
		o.NodeID = r.NodeID
		Merge(&o.UsageFigures, r.UsageFigures)
	}
	return out
}

// Merge adds the figures of a later bucket b to a.
func Merge(a *models.UsageFigures, b models.UsageFigures) {
	a.Samples += b.Samples
	a.SwapSamples += b.SwapSamples
	a.SwapSum += b.SwapSum
	a.SwapMax = maxOf(a.SwapMax, b.SwapMax)
	if b.SwapLimit != nil {
		a.SwapLimit = b.SwapLimit
	}
	a.MemSum += b.MemSum
	a.MemMax = maxOf(a.MemMax, b.MemMax)
	a.CPUSum += b.CPUSum
	a.DiskMax = maxOf(a.DiskMax, b.DiskMax)
	a.NetIn = sumOf(a.NetIn, b.NetIn)
	a.NetOut = sumOf(a.NetOut, b.NetOut)
}

func maxOf(a, b *int64) *int64 {
	if b == nil {
		return a
	}
	return maxPtr(a, *b)
}

func sumOf(a, b *int64) *int64 {
	if b == nil {
		return a
	}
	return addPtr(a, *b)
}

// floorTo is the start of the width-second period t (unix seconds) falls in.
func floorTo(t, width int64) int64 { return t - mod(t, width) }
