package usage_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"pvebill/models"
	"pvebill/models/dbtest"
	"pvebill/modules/usage"
)

// Over random samples and random periods, with the roll-up run at random points in time, every
// figure of the report equals what the 5-minute buckets alone give, and so do its hourly and
// daily buckets; a month aligned to days reads at most 31 rows per service.
// R45: a report over any period equals what the 5-minute buckets would give.
func TestReportFromTiersEqualsFiveMinuteBuckets(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		rng := rand.New(rand.NewPCG(45, 1))
		start := time.Date(2026, 2, 26, 21, 40, 0, 0, time.UTC)
		end := start.Add(6*24*time.Hour + 7*time.Hour)
		ids := randomBuckets(t, db, rng, 4, start, end)
		now := start
		r := usage.NewReporter(db, nil, func() time.Time { return now })
		read := map[models.Tier]int{}
		for round := range 5 {
			now = now.Add(time.Duration(rng.Int64N(int64(36 * time.Hour)))) // the roll-up catches up at random
			if _, err := (&usage.Roller{DB: db, Now: func() time.Time { return now }, MaxHours: 30}).Run(ctx); err != nil {
				t.Fatal(err)
			}
			marks, err := db.UsageRollupMarks(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for range 6 {
				from := start.Add(-time.Hour + time.Duration(rng.Int64N(int64(end.Sub(start)))))
				to := from.Add(time.Duration(1 + rng.Int64N(int64(end.Sub(from)+2*time.Hour))))
				if rng.IntN(3) == 0 { // whole days and hours too
					from, to = from.Truncate(24*time.Hour), to.Truncate(time.Hour).Add(time.Hour)
				}
				checkReport(t, db, r, ids, from, to, round)
				for _, seg := range usage.Plan(from.Unix(), to.Unix(), marks) {
					read[seg.Tier]++
				}
			}
		}
		if read[models.Tier1h] == 0 || read[models.Tier1d] == 0 {
			t.Fatalf("the periods read %v: the coarse tiers were never used", read)
		}
	})
}

// R45: a month of whole days, rolled up, is one read of the daily tier (31 rows a service); its
// ragged edges come from hours and 5-minute buckets; nothing rolled up is read from 5 minutes.
func TestPlanReadsCoarsestTier(t *testing.T) {
	day, hour := int64(86400), int64(3600)
	m0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC).Unix()
	marks := map[models.Tier]int64{models.Tier1h: m0 + 40*day + 5*hour, models.Tier1d: m0 + 40*day}
	for _, c := range []struct {
		name     string
		from, to int64
		marks    map[models.Tier]int64
		want     []usage.Segment
	}{
		{"month", m0, m0 + 31*day, marks, []usage.Segment{{Tier: models.Tier1d, From: m0, To: m0 + 31*day}}},
		{"ragged", m0 - 2*hour - 600, m0 + 2*day + 3*hour + 900, marks, []usage.Segment{
			{Tier: models.Tier5m, From: m0 - 2*hour - 600, To: m0 - 2*hour}, {Tier: models.Tier1h, From: m0 - 2*hour, To: m0},
			{Tier: models.Tier1d, From: m0, To: m0 + 2*day}, {Tier: models.Tier1h, From: m0 + 2*day, To: m0 + 2*day + 3*hour},
			{Tier: models.Tier5m, From: m0 + 2*day + 3*hour, To: m0 + 2*day + 3*hour + 900}}},
		{"past the marks", m0 + 39*day, m0 + 42*day, marks, []usage.Segment{
			{Tier: models.Tier1d, From: m0 + 39*day, To: m0 + 40*day}, {Tier: models.Tier1h, From: m0 + 40*day, To: m0 + 40*day + 5*hour},
			{Tier: models.Tier5m, From: m0 + 40*day + 5*hour, To: m0 + 42*day}}},
		{"never rolled up", m0, m0 + 31*day, nil, []usage.Segment{{Tier: models.Tier5m, From: m0, To: m0 + 31*day}}},
	} {
		got := usage.Plan(c.from, c.to, c.marks)
		if len(got) != len(c.want) {
			t.Fatalf("%s: %+v, want %+v", c.name, got, c.want)
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Fatalf("%s: %+v, want %+v", c.name, got, c.want)
			}
		}
	}
}

func checkReport(t *testing.T, db *models.DB, r *usage.Reporter, ids []string, from, to time.Time, round int) {
	t.Helper()
	ctx := t.Context()
	fromS, toS := from.Unix(), to.Unix()
	if from.Nanosecond() > 0 {
		fromS++
	}
	want, err := db.UsageTotalsFor(ctx, ids, fromS, toS)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []models.Tier{"", models.Tier1h, models.Tier1d} {
		if g == models.Tier1h && to.Sub(from) > usage.MaxHourBucketPeriod {
			continue
		}
		rep, err := r.Report(ctx, usage.Query{From: from, To: to, Granularity: g})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range rep.Services {
			w := want[s.ServiceID]
			if !sameUsage(s, w) {
				t.Fatalf("round %d, [%v, %v) %s: report %+v, 5-minute buckets %+v", round, from, to, s.ServiceID,
					s, w)
			}
			if g != "" {
				checkBuckets(t, db, s, g, fromS, toS)
			}
		}
	}
}

// checkBuckets holds a service's coarse buckets to the 5-minute buckets they cover.
func checkBuckets(t *testing.T, db *models.DB, s usage.ServiceUsage, g models.Tier, from, to int64) {
	t.Helper()
	w := g.Seconds()
	first := (from + w - 1) / w * w // the first bucket starting in the period (from > 0)
	rows, err := db.UsageBuckets(t.Context(), []string{s.ServiceID}, first, (to+w-1)/w*w)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int64]*models.UsageTotals{}
	var starts []int64
	for _, b := range rows {
		k := b.BucketStart - b.BucketStart%w
		if k >= to {
			continue
		}
		if want[k] == nil {
			want[k] = &models.UsageTotals{}
			starts = append(starts, k)
		}
		addBucket(want[k], b)
	}
	if len(s.Buckets) != len(starts) {
		t.Fatalf("%s %s buckets: %d, want %d", s.ServiceID, g, len(s.Buckets), len(starts))
	}
	for i, b := range s.Buckets {
		if b.Start.Unix() != starts[i] {
			t.Fatalf("%s %s bucket %d starts %v, want %v", s.ServiceID, g, i, b.Start, time.Unix(starts[i], 0).UTC())
		}
		wt := want[starts[i]]
		got := usage.ServiceUsage{ServiceID: s.ServiceID, Samples: b.Samples, NetInBytes: b.NetInBytes,
			NetOutBytes: b.NetOutBytes, DiskMaxBytes: b.DiskMaxBytes, MemoryAvgBytes: b.MemoryAvgBytes,
			MemoryMaxBytes: b.MemoryMaxBytes, SwapAvgBytes: b.SwapAvgBytes, SwapMaxBytes: b.SwapMaxBytes, CPUAvg: b.CPUAvg}
		if !sameUsage(got, *wt) {
			t.Fatalf("%s %s bucket %v: %+v, want %+v", s.ServiceID, g, b.Start, b, *wt)
		}
	}
}

func addBucket(t *models.UsageTotals, b models.UsageBucket) {
	add := func(p **int64, v *int64, sum bool) {
		switch {
		case v == nil:
		case *p == nil:
			*p = i64(*v)
		case sum:
			*p = i64(**p + *v)
		case *v > **p:
			*p = i64(*v)
		}
	}
	t.Samples += b.Samples
	t.SwapSamples += b.SwapSamples
	add(&t.SwapSum, &b.SwapSum, true)
	add(&t.MemSum, &b.MemSum, true)
	add(&t.SwapMax, b.SwapMax, false)
	add(&t.MemMax, b.MemMax, false)
	add(&t.DiskMax, b.DiskMax, false)
	add(&t.NetIn, b.NetIn, true)
	add(&t.NetOut, b.NetOut, true)
	cpu := b.CPUSum
	if t.CPUSum != nil {
		cpu += *t.CPUSum
	}
	t.CPUSum = &cpu
}

// sameUsage compares a report's figures with the sums of the 5-minute buckets; the CPU average,
// a sum of floating-point fractions added in another order, to 1e-9 of itself.
func sameUsage(s usage.ServiceUsage, w models.UsageTotals) bool {
	eq := func(x, y *int64) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	div := func(sum *int64, n int64) *int64 {
		if sum == nil || n == 0 {
			return nil
		}
		return i64(*sum / n)
	}
	if s.Samples != w.Samples || !eq(s.NetInBytes, w.NetIn) || !eq(s.NetOutBytes, w.NetOut) {
		return false
	}
	if w.Samples > 0 && (!eq(s.DiskMaxBytes, w.DiskMax) || !eq(s.MemoryMaxBytes, w.MemMax) ||
		!eq(s.MemoryAvgBytes, div(w.MemSum, w.Samples))) {
		return false
	}
	if w.SwapSamples > 0 && (!eq(s.SwapMaxBytes, w.SwapMax) || !eq(s.SwapAvgBytes, div(w.SwapSum, w.SwapSamples))) {
		return false
	}
	if w.Samples == 0 || w.CPUSum == nil {
		return s.CPUAvg == nil || w.Samples == 0
	}
	want := *w.CPUSum / float64(w.Samples)
	return s.CPUAvg != nil && math.Abs(*s.CPUAvg-want) <= 1e-9*math.Max(1, math.Abs(want))
}
