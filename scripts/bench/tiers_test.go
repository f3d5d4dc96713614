package bench

import (
	"context"
	"math"
	"testing"
	"time"

	"pvebill/jobs"
	"pvebill/models"
	"pvebill/modules/usage"
)

// usageTiers is scenario 7 (R45): guests sampled every minute while the clock moves through
// years, their 5-minute buckets synthesised straight into the 5-minute tier a week at a time,
// the roll-up job and the retention job (default retentions) run after each week. Then the
// storage per guest at steady state and per row of each tier, a month's report from the tiers
// against the same report from the 5-minute buckets alone, and the cost of one day's roll-up
// against one batched insert of that day's 5-minute buckets.
//
// Periods older than the 5-minute retention plus a week get one 5-minute bucket an hour, not
// twelve: the hourly and daily rows rolled up from them are the same rows whatever number of
// 5-minute buckets feeds them, and the 5-minute rows themselves are gone by the end; the last
// 5-minute retention plus a week is synthesised in full.
func usageTiers(t *testing.T, rep *Report) {
	const sc = "7 usage tiers"
	ctx := context.Background()
	d := dialect(t)
	db := openDB(t, d)
	guests := scale(benchTierGuests, 5)
	days := scale(3*365, 12)
	seedBucketServices(t, db, guests)
	end := time.Date(2029, 12, 1, 0, 0, 0, 0, time.UTC)
	start := end.AddDate(0, 0, -days)
	fullFrom := end.Add(-jobs.DefaultRetention5m - 7*24*time.Hour)
	roller := &usage.Roller{DB: db, MaxHours: 1 << 20}
	var dayInsert time.Duration
	for week := start; week.Before(end); week = week.AddDate(0, 0, 7) {
		wEnd := minTime(week.AddDate(0, 0, 7), end)
		for day := week; day.Before(wEnd); day = day.AddDate(0, 0, 1) {
			rows := synthDay(guests, day, !day.Before(fullFrom))
			t0 := time.Now()
			if err := db.UpsertUsageBuckets(ctx, rows); err != nil {
				t.Fatal(err)
			}
			if day.Equal(end.AddDate(0, 0, -2)) { // the day whose roll-up is measured alone
				dayInsert = time.Since(t0)
			}
		}
		now := wEnd.Add(usage.RollupGrace)
		roller.Now = func() time.Time { return now }
		if _, err := roller.Run(ctx); err != nil {
			t.Fatal(err)
		}
		if err := (jobs.UsageRetention{DB: db, Now: func() time.Time { return now }}).Run(ctx); err != nil {
			t.Fatal(err)
		}
	}
	tierStorage(t, rep, sc, db, guests)
	monthReport(t, rep, sc, db, guests, end)
	rep.info(sc, "one day's 5-minute buckets, batched insert", dayInsert.Seconds()*1000, "ms", itoa(guests*288)+" buckets")
	if dayInsert > 0 {
		rollupDay(t, rep, sc, db, guests, end.AddDate(0, 0, -2), dayInsert)
	}
}

// rollupDay measures the roll-up of one day alone: the day's hourly and daily rows removed and
// the marks set back to its start, then one run.
func rollupDay(t *testing.T, rep *Report, sc string, db *models.DB, guests int, day time.Time, insert time.Duration) {
	ctx := context.Background()
	for _, tier := range []models.Tier{models.Tier1h, models.Tier1d} {
		if err := db.Gorm.Exec("DELETE FROM usage_"+string(tier)+" WHERE start >= ?", day.Unix()).Error; err != nil {
			t.Fatal(err)
		}
		if err := db.SetUsageRollupMark(ctx, tier, day.Unix()); err != nil {
			t.Fatal(err)
		}
	}
	r := &usage.Roller{DB: db, Now: func() time.Time { return day.Add(24*time.Hour + usage.RollupGrace) }}
	t0 := time.Now()
	res, err := r.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(t0)
	rep.target(sc, "one day's roll-up: rows written", float64(res.Rows), "", "==", float64(guests*25), true, "24 hours and 1 day a guest")
	rep.info(sc, "one day's roll-up", took.Seconds()*1000, "ms", itoa(guests)+" guests")
	rep.target(sc, "one day's roll-up for 10,000 guests, share of the day", took.Seconds()*10000/float64(guests)/86400*100, "%",
		"<=", 1, false, "extrapolated linearly from "+itoa(guests)+" guests")
	rep.info(sc, "one day's roll-up / batched insert of the day's 5-minute buckets", took.Seconds()/insert.Seconds(), "x", "")
}

// benchTierGuests is the guests of the full-scale run: fewer than the 1,000 of the issue so
// that three simulated years fit the bench's time on two shared cores; storage and roll-up cost
// are per guest, and the roll-up's share of the day is extrapolated to 10,000 guests.
const benchTierGuests = 100

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// synthDay builds a day of 5-minute buckets for the guests: all 288 when full, else the first
// bucket of each hour.
func synthDay(guests int, day time.Time, full bool) []models.UsageBucket {
	step := int64(300)
	if !full {
		step = 3600
	}
	var out []models.UsageBucket
	for g := range guests {
		for s := int64(0); s < 86400; s += step {
			at := day.Unix() + s
			swap, mem, disk, net := int64(g)*4096+s, int64(1<<30)+s, int64(8<<30), s*1000+int64(g)
			lim := int64(512 << 20)
			out = append(out, models.UsageBucket{ServiceID: "svc-" + itoa(100000+g), BucketStart: at, Cluster: "c1", Node: "node01",
				Samples: 5, SwapSamples: 5, SwapSum: 5 * swap, SwapMax: &swap, SwapLimit: &lim, MemSum: 5 * mem, MemMax: &mem,
				CPUSum: 0.25 + float64(s%7)/10, DiskMax: &disk, NetIn: &net, NetOut: &net, LastNetIn: &net, LastNetOut: &net,
				LastUptime: &s, LastSample: at + 240})
		}
	}
	return out
}

// tierStorage reports rows and bytes (data and indexes, MariaDB's own accounting) per tier and
// per guest.
func tierStorage(t *testing.T, rep *Report, sc string, db *models.DB, guests int) {
	var total float64
	for _, tier := range models.Tiers {
		table := "usage_" + string(tier)
		var rows int64
		if err := db.Gorm.Table(table).Count(&rows).Error; err != nil {
			t.Fatal(err)
		}
		rep.info(sc, table+" rows per guest", float64(rows)/float64(guests), "", "")
		if db.Dialect != models.MySQL {
			continue
		}
		if err := db.Gorm.Exec("ANALYZE TABLE " + table).Error; err != nil {
			t.Fatal(err)
		}
		var bytes float64
		if err := db.Gorm.Raw("SELECT data_length + index_length FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?",
			table).Scan(&bytes).Error; err != nil {
			t.Fatal(err)
		}
		total += bytes
		if rows > 0 {
			rep.info(sc, table+" bytes per row", bytes/float64(rows), "B", "data and indexes")
		}
	}
	if db.Dialect == models.MySQL {
		rep.target(sc, "storage per guest at steady state", total/float64(guests)/(1<<20), "MiB", "<=", 3, false,
			"data_length + index_length of the tiers / guests, default retentions")
	}
}

// monthReport pages through a month's report of every guest from the tiers and from the
// 5-minute buckets alone (the roll-up marks removed), in the same run; their figures must agree.
func monthReport(t *testing.T, rep *Report, sc string, db *models.DB, guests int, end time.Time) {
	ctx := context.Background()
	to := end.AddDate(0, 0, -1)
	from := to.AddDate(0, 0, -31)
	marks, err := db.UsageRollupMarks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var read int64
	for _, seg := range usage.Plan(from.Unix(), to.Unix(), marks) {
		var n int64
		if err := db.Gorm.Table("usage_"+string(seg.Tier)).Where("start >= ? AND start < ?", seg.From, seg.To).Count(&n).Error; err != nil {
			t.Fatal(err)
		}
		read += n
	}
	rep.target(sc, "month's report: rows read per service", float64(read)/float64(guests), "", "<=", 62, true, "")
	r := usage.NewReporter(db, nil, func() time.Time { return end })
	page := func() ([]usage.ServiceUsage, time.Duration) {
		var all []usage.ServiceUsage
		t0 := time.Now()
		q := usage.Query{From: from, To: to, Limit: usage.MaxPageSize}
		for {
			p, err := r.Report(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, p.Services...)
			if p.NextCursor == nil {
				return all, time.Since(t0)
			}
			q.After = *p.NextCursor
		}
	}
	tiers, tTiers := page()
	if err := db.Gorm.Exec("DELETE FROM usage_rollups").Error; err != nil {
		t.Fatal(err)
	}
	fine, tFine := page()
	for tier, m := range marks {
		if err := db.SetUsageRollupMark(ctx, tier, m); err != nil {
			t.Fatal(err)
		}
	}
	same := len(tiers) == len(fine) && len(tiers) == guests
	for i := 0; same && i < len(tiers); i++ {
		a, b := tiers[i], fine[i]
		same = a.Samples == b.Samples && *a.NetInBytes == *b.NetInBytes && *a.SwapMaxBytes == *b.SwapMaxBytes &&
			*a.MemoryAvgBytes == *b.MemoryAvgBytes && math.Abs(*a.CPUAvg-*b.CPUAvg) < 1e-9
	}
	rep.target(sc, "month's report from the tiers equals the 5-minute one", b2f(same), "", "==", 1, true, itoa(guests)+" services")
	rep.info(sc, "month's report, paged, from the tiers", tTiers.Seconds()*1000, "ms", "")
	rep.info(sc, "month's report, paged, from 5-minute buckets alone", tFine.Seconds()*1000, "ms", "")
	rep.target(sc, "5-minute time / tiers time", tFine.Seconds()/tTiers.Seconds(), "x", ">=", 20, false, "")
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
