package usage_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"pvebill/models"
	"pvebill/models/dbtest"
	"pvebill/modules/usage"
)

// randomBuckets writes 5-minute buckets for the services at random over [from, to): some
// buckets missing, some with fewer samples, swap or network deltas unknown in some, the node
// changing now and then. It returns the service ids.
func randomBuckets(t *testing.T, db *models.DB, rng *rand.Rand, services int, from, to time.Time) []string {
	t.Helper()
	var ids []string
	for i := range services {
		ids = append(ids, fmt.Sprintf("svc-r%02d", i))
	}
	seedServices(t, db, ids...)
	opt := func(v int64) *int64 {
		if rng.IntN(6) == 0 {
			return nil
		}
		return i64(v)
	}
	var rows []models.UsageBucket
	for _, id := range ids {
		for at := from; at.Before(to); at = at.Add(usage.BucketWidth) {
			if rng.IntN(8) == 0 {
				continue
			}
			n := 1 + rng.IntN(5)
			b := models.UsageBucket{ClientID: "whmcs", ServiceID: id, BucketStart: at.Unix(), Cluster: "c1",
				Node: fmt.Sprintf("pve%d", 1+rng.IntN(3)), UsageFigures: models.UsageFigures{Samples: int64(n),
					MemSum: rng.Int64N(1 << 40), MemMax: i64(rng.Int64N(1 << 32)), CPUSum: rng.Float64() * float64(n),
					DiskMax: opt(rng.Int64N(1 << 34)), NetIn: opt(rng.Int64N(1 << 30)), NetOut: opt(rng.Int64N(1 << 30)),
					SwapLimit: opt(512 << 20)},
				LastSample: at.Unix() + 240}
			if rng.IntN(5) > 0 {
				b.SwapSamples = int64(n)
				b.SwapSum = rng.Int64N(1 << 36)
				b.SwapMax = i64(rng.Int64N(1 << 30))
			}
			rows = append(rows, b)
		}
	}
	if err := db.UpsertUsageBuckets(t.Context(), rows); err != nil {
		t.Fatal(err)
	}
	return ids
}

// tierRows reads every row of a tier.
func tierRows(t *testing.T, db *models.DB, tier models.Tier) []models.UsageTierRow {
	t.Helper()
	ctx := t.Context()
	keys, err := db.UsageServiceKeyPage(ctx, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := db.UsageTierRows(ctx, tier, keys, 0, 1<<40)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// reference sums the 5-minute rows into width-second buckets field by field, the way a report
// from the 5-minute tier alone would.
func reference(rows []models.UsageTierRow, width int64) map[[2]int64]models.UsageFigures {
	out := map[[2]int64]models.UsageFigures{}
	for _, r := range rows {
		k := [2]int64{r.Svc, r.Start - r.Start%width}
		f := out[k]
		f.Samples += r.Samples
		f.SwapSamples += r.SwapSamples
		f.SwapSum += r.SwapSum
		f.MemSum += r.MemSum
		f.CPUSum += r.CPUSum
		for _, p := range []struct {
			dst **int64
			v   *int64
			sum bool
		}{
			{&f.SwapMax, r.SwapMax, false}, {&f.MemMax, r.MemMax, false}, {&f.DiskMax, r.DiskMax, false},
			{&f.NetIn, r.NetIn, true}, {&f.NetOut, r.NetOut, true},
		} {
			switch {
			case p.v == nil:
			case *p.dst == nil:
				*p.dst = i64(*p.v)
			case p.sum:
				*p.dst = i64(**p.dst + *p.v)
			case *p.v > **p.dst:
				*p.dst = i64(*p.v)
			}
		}
		out[k] = f
	}
	return out
}

func sameFigures(a, b models.UsageFigures) bool {
	eq := func(x, y *int64) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	return a.Samples == b.Samples && a.SwapSamples == b.SwapSamples && a.SwapSum == b.SwapSum && a.MemSum == b.MemSum &&
		eq(a.SwapMax, b.SwapMax) && eq(a.MemMax, b.MemMax) && eq(a.DiskMax, b.DiskMax) && eq(a.NetIn, b.NetIn) &&
		eq(a.NetOut, b.NetOut) && math.Abs(a.CPUSum-b.CPUSum) <= 1e-9*math.Max(1, math.Abs(b.CPUSum))
}

func sameRows(a, b []models.UsageTierRow) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Svc != b[i].Svc || a[i].Start != b[i].Start || a[i].NodeID != b[i].NodeID ||
			a[i].CPUSum != b[i].CPUSum || !sameFigures(a[i].UsageFigures, b[i].UsageFigures) {
			return false
		}
	}
	return true
}

// checkTier holds every row of a coarse tier to the field-by-field sums of the 5-minute rows,
// and demands a row for every period that has 5-minute rows and no other.
func checkTier(t *testing.T, db *models.DB, tier models.Tier, closedUntil int64) {
	t.Helper()
	var fine []models.UsageTierRow
	for _, r := range tierRows(t, db, models.Tier5m) {
		if r.Start < closedUntil {
			fine = append(fine, r)
		}
	}
	want := reference(fine, tier.Seconds())
	got := tierRows(t, db, tier)
	if len(got) != len(want) {
		t.Fatalf("%s rows = %d, want %d", tier, len(got), len(want))
	}
	for _, r := range got {
		w, ok := want[[2]int64{r.Svc, r.Start}]
		if !ok || !sameFigures(r.UsageFigures, w) {
			t.Fatalf("%s row %d@%d = %+v, want %+v", tier, r.Svc, r.Start, r.UsageFigures, w)
		}
	}
}

// A roll-up killed half-way and run again loses nothing and counts nothing twice; run once
// more, from the start, it writes the same rows. Hours close only after the grace, days only
// when their every hour is closed; the partial hour and day stay in the 5-minute tier.
// R45: roll-ups are idempotent and crash-safe, and their sums, counts and maxima add up.
func TestRollupIdempotentAndCrashSafe(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		rng := rand.New(rand.NewPCG(7, 45))
		start := time.Date(2026, 3, 1, 7, 35, 0, 0, time.UTC)
		end := time.Date(2026, 3, 4, 13, 20, 0, 0, time.UTC)
		randomBuckets(t, db, rng, 5, start, end)
		now := end.Add(usage.RollupGrace - time.Minute) // 13:29: the hour from 13:00 is still open
		r := &usage.Roller{DB: db, Now: func() time.Time { return now }, PageSize: 2}
		boom := errors.New("killed")
		calls := 0
		usage.SetRollupFault(r, func() error {
			if calls++; calls == 4 {
				return boom
			}
			return nil
		})
		if _, err := r.Run(ctx); !errors.Is(err, boom) {
			t.Fatalf("faulty run: %v", err)
		}
		usage.SetRollupFault(r, nil)
		res, err := r.Run(ctx)
		if err != nil {
			t.Fatal(err)
		}
		hourEnd := time.Date(2026, 3, 4, 13, 0, 0, 0, time.UTC).Unix()
		dayEnd := time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC).Unix()
		if res.HourMark.Unix() != hourEnd {
			t.Fatalf("hour mark %v, want %v", res.HourMark, time.Unix(hourEnd, 0).UTC())
		}
		checkTier(t, db, models.Tier1h, hourEnd)
		checkTier(t, db, models.Tier1d, dayEnd)
		before1h, before1d := tierRows(t, db, models.Tier1h), tierRows(t, db, models.Tier1d)

		// Nothing new: a second run writes nothing. From the start again: the same rows.
		if res, err := r.Run(ctx); err != nil || res.Rows != 0 {
			t.Fatalf("second run: %+v, %v", res, err)
		}
		for _, tier := range []models.Tier{models.Tier1h, models.Tier1d} {
			if err := db.SetUsageRollupMark(ctx, tier, start.Truncate(24*time.Hour).Unix()); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := r.Run(ctx); err != nil {
			t.Fatal(err)
		}
		after1h, after1d := tierRows(t, db, models.Tier1h), tierRows(t, db, models.Tier1d)
		if !sameRows(after1h, before1h) || !sameRows(after1d, before1d) {
			t.Fatal("rolling up again changed the rows")
		}

		// The clock moves on: the rest of the last hour and day close.
		now = end.Add(24 * time.Hour)
		if _, err := r.Run(ctx); err != nil {
			t.Fatal(err)
		}
		checkTier(t, db, models.Tier1h, end.Add(time.Hour).Unix())
		checkTier(t, db, models.Tier1d, end.Add(24*time.Hour).Unix())
	})
}
