package bench

import (
	"context"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"pvebill/jobs"
	"pvebill/models"
	"pvebill/models/dbtest"
	"pvebill/modules/usage"
)

// Scale of scenario 7 at full size (the figures).
const (
	benchTierGuests   = 1000  // guests sampled through the simulated years
	benchTierServices = 10000 // services in the month's report and the measured day's roll-up
	bulkRows          = 2000  // rows one synthesised INSERT statement carries
)

// usageTiers is scenario 7 (R45): 1,000 guests sampled every minute while the clock moves
// through three years, with the default retentions. What is synthesised, and what the jobs
// compute:
//
//   - Synthesised: 5-minute buckets (five one-minute samples each) inserted straight into
//     usage_5m with plain multi-row INSERTs, a day of all guests per transaction. Only what the
//     roll-up reads to make the rows that are still there at the end is synthesised: a day whose
//     hourly rows the hourly retention drops by the end gets one 5-minute bucket a guest (it
//     becomes one hourly and one daily row, the daily row being all that is kept); a day whose
//     hourly rows are kept but whose 5-minute buckets are not gets one bucket an hour (24 hourly
//     rows a guest, as a fully sampled day gives); the last 35 days (the 5-minute retention) get
//     all 288 buckets. Rolling up more 5-minute buckets into an hour changes the hourly row's
//     values, never their number or width.
//   - Computed by the real jobs: every hourly and daily row (usage.Roller, run after each
//     simulated week) and every deletion past retention (jobs.UsageRetention, run after each
//     week), so the tables end at steady state: 35 days of 5-minute buckets, 400 days of hourly
//     ones and three years of daily ones, with InnoDB's pages as the deletions left them.
//
// Then 9,000 more services get a month of buckets (one a day, synthesised) and the roll-up
// redoes that month for all 10,000: the month's report of the 10,000 is read from the tiers,
// and the 1,000 fully sampled services' report from the tiers against the same report from
// their 5-minute buckets alone (8,928 rows a service; the same for 10,000 would be 89 million
// rows, more than the bench's time on two shared cores allows). Last, one day of all 288
// buckets for all 10,000 services is inserted (the batched insert) and rolled up (the job).
func usageTiers(t *testing.T, rep *Report) {
	const sc = "7 usage tiers"
	ctx := context.Background()
	db := openDB(t, dialect(t))
	guests := scale(benchTierGuests, 5)
	services := scale(benchTierServices, 20)
	days := scale(3*365, 12)
	seedTierServices(t, db, 0, guests, "whmcs")
	keys := serviceKeys(t, db, 0, guests)
	node := benchNodeID(t, db)
	end := time.Date(2029, 12, 1, 0, 0, 0, 0, time.UTC)
	start := end.AddDate(0, 0, -days)
	hourlyFrom := end.Add(-jobs.DefaultRetention1h)
	fullFrom := end.Add(-jobs.DefaultRetention5m)
	roller := &usage.Roller{DB: db, MaxHours: 1 << 20}
	var synth, roll, purge time.Duration
	var synthRows int
	for week := start; week.Before(end); week = week.AddDate(0, 0, 7) {
		wEnd := minTime(week.AddDate(0, 0, 7), end)
		t0 := time.Now()
		for day := week; day.Before(wEnd); day = day.AddDate(0, 0, 1) {
			step := int64(86400)
			switch {
			case !day.Before(fullFrom):
				step = 300
			case !day.Before(hourlyFrom):
				step = 3600
			}
			synthRows += insertDay(t, db, keys, node, day, step)
		}
		t1 := time.Now()
		now := wEnd.Add(usage.RollupGrace)
		roller.Now = func() time.Time { return now }
		if _, err := roller.Run(ctx); err != nil {
			t.Fatal(err)
		}
		t2 := time.Now()
		if err := (jobs.UsageRetention{DB: db, Now: func() time.Time { return now }}).Run(ctx); err != nil {
			t.Fatal(err)
		}
		synth, roll, purge = synth+t1.Sub(t0), roll+t2.Sub(t1), purge+time.Since(t2)
		if wEnd.Sub(start)%(13*7*24*time.Hour) == 0 || !wEnd.Before(end) {
			t.Logf("simulated until %s: synthesis %s, roll-up %s, retention %s", wEnd.Format("2006-01-02"), secs(synth), secs(roll), secs(purge))
		}
	}
	rep.info(sc, "simulated years: 5-minute buckets synthesised", float64(synthRows), "",
		strconv.Itoa(guests)+" guests, "+strconv.Itoa(days)+" days, in "+secs(synth))
	rep.info(sc, "simulated years: roll-up job, all runs", roll.Seconds(), "s", "")
	rep.info(sc, "simulated years: retention job, all runs", purge.Seconds(), "s", "")
	tierStorage(t, rep, sc, db, guests)
	monthReport(t, rep, sc, db, guests, services, end, node)
	rollupDay(t, rep, sc, db, services, end, node)
}

// seedTierServices adds n services numbered from first (usage is stored under the service's
// key), of the given client.
func seedTierServices(t *testing.T, db *models.DB, first, n int, client string) {
	t.Helper()
	created := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	svcs := make([]models.Service, n)
	for i := range svcs {
		vmid := 100000 + first + i
		svcs[i] = models.Service{ServiceID: "svc-" + strconv.Itoa(vmid), ClientID: client, Plan: "p", GuestType: "container",
			Cluster: "c1", Node: "node01", VMID: &vmid, State: models.ServiceActive, CreatedAt: created, UpdatedAt: created}
	}
	dbtest.Insert(t, db, svcs, 500)
}

// serviceKeys returns the keys (services.id) of the services numbered [first, first+n).
func serviceKeys(t *testing.T, db *models.DB, first, n int) []int64 {
	t.Helper()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = "svc-" + strconv.Itoa(100000+first+i)
	}
	// The bench's service ids are distinct across its clients, so the id alone finds the row.
	var rows []models.Service
	dbtest.Scan(t, db, &rows, "SELECT id, service_id FROM services WHERE service_id IN ?", ids)
	m := make(map[string]int64, len(rows))
	for _, r := range rows {
		m[r.ServiceID] = r.ID
	}
	out := make([]int64, 0, n)
	for _, id := range ids {
		out = append(out, m[id])
	}
	return out
}

// benchNodeID is the usage_nodes id of the one node the guests run on.
func benchNodeID(t *testing.T, db *models.DB) int {
	t.Helper()
	dbtest.Exec(t, db, "INSERT INTO usage_nodes (cluster, node) VALUES ('c1', 'node01')")
	var id int
	dbtest.Scan(t, db, &id, "SELECT id FROM usage_nodes WHERE cluster = 'c1' AND node = 'node01'")
	return id
}

// insertDay synthesises the day's 5-minute buckets of the services, one every step seconds, in
// one transaction of multi-row INSERTs, and returns how many it wrote.
func insertDay(t *testing.T, db *models.DB, keys []int64, node int, day time.Time, step int64) int {
	t.Helper()
	const cols = "INSERT INTO usage_5m (svc, start, node_id, samples, swap_samples, swap_sum, swap_max, swap_limit, " +
		"mem_sum, mem_max, cpu_sum, disk_max, netin, netout, last_netin, last_netout, last_uptime, last_sample_at) VALUES "
	var b strings.Builder
	n, inStmt := 0, 0
	err := dbtest.Transaction(db, func(tx *gorm.DB) error {
		flush := func() error {
			if inStmt == 0 {
				return nil
			}
			inStmt = 0
			err := tx.Exec(b.String()).Error
			b.Reset()
			return err
		}
		for g, svc := range keys {
			for s := int64(0); s < 86400; s += step {
				if inStmt == 0 {
					b.WriteString(cols)
				} else {
					b.WriteByte(',')
				}
				writeBucket(&b, svc, node, g, day.Unix(), s)
				n++
				if inStmt++; inStmt == bulkRows {
					if err := flush(); err != nil {
						return err
					}
				}
			}
		}
		return flush()
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// writeBucket appends one synthesised bucket's values: five samples, swap growing with the
// guest and the time of day, network counters that only grow.
func writeBucket(b *strings.Builder, svc int64, node, g int, day, s int64) {
	at := day + s
	swap, mem, disk, net := int64(g)*4096+s, int64(1<<30)+s, int64(8<<30), s*1000+int64(g)
	cpu := 0.25 + float64(s%7)/10
	b.WriteByte('(')
	for i, v := range []int64{svc, at, int64(node), 5, 5, 5 * swap, swap, 512 << 20, 5 * mem, mem} {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(v, 10))
	}
	b.WriteByte(',')
	b.WriteString(strconv.FormatFloat(cpu, 'g', -1, 64))
	for _, v := range []int64{disk, net, net, net, net, s, at + 240} {
		b.WriteByte(',')
		b.WriteString(strconv.FormatInt(v, 10))
	}
	b.WriteByte(')')
}

// rollupDay inserts one day of all 288 buckets for every service (timed: the batched insert),
// then measures that day's roll-up by the job alone.
func rollupDay(t *testing.T, rep *Report, sc string, db *models.DB, services int, day time.Time, node int) {
	ctx := context.Background()
	keys := serviceKeys(t, db, 0, services)
	t0 := time.Now()
	rows := insertDay(t, db, keys, node, day, 300)
	insert := time.Since(t0)
	r := &usage.Roller{DB: db, Now: func() time.Time { return day.Add(24*time.Hour + usage.RollupGrace) }}
	t0 = time.Now()
	res, err := r.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(t0)
	rep.info(sc, "one day's 5-minute buckets, batched insert", insert.Seconds(), "s", strconv.Itoa(rows)+" buckets, "+strconv.Itoa(services)+" services")
	rep.target(sc, "one day's roll-up: rows written", float64(res.Rows), "", "==", float64(services*25), true, "24 hours and 1 day a service")
	rep.info(sc, "one day's roll-up", took.Seconds(), "s", strconv.Itoa(services)+" services")
	rep.target(sc, "one day's roll-up for 10,000 guests, share of the day", took.Seconds()*10000/float64(services)/86400*100, "%",
		"<=", 1, false, "measured for "+strconv.Itoa(services)+" services")
	rep.info(sc, "one day's roll-up / batched insert of the day's 5-minute buckets", took.Seconds()/insert.Seconds(), "x", "")
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func secs(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 0, 64) + " s" }

// tierStorage reports rows and bytes (data and indexes, MariaDB's own accounting) per tier and
// per guest.
func tierStorage(t *testing.T, rep *Report, sc string, db *models.DB, guests int) {
	var total float64
	for _, tier := range models.Tiers {
		table := "usage_" + string(tier)
		rows := dbtest.Count(t, db, "SELECT COUNT(*) FROM "+table)
		rep.info(sc, table+" rows per guest", float64(rows)/float64(guests), "", "")
		if db.Dialect != models.MySQL {
			continue
		}
		dbtest.Exec(t, db, "ANALYZE TABLE "+table)
		var bytes float64
		dbtest.Scan(t, db, &bytes, "SELECT data_length + index_length FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?",
			table)
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

// monthReport adds the services beyond the sampled guests with a month of buckets (one a day),
// rolls that month up again for every service, and reads a month's report: of every service
// from the tiers, and of the fully sampled guests from the tiers and from their 5-minute
// buckets alone (the roll-up marks removed), in the same run; those two must agree.
func monthReport(t *testing.T, rep *Report, sc string, db *models.DB, guests, services int, end time.Time, node int) {
	ctx := context.Background()
	to := end.AddDate(0, 0, -1)
	from := to.AddDate(0, 0, -31)
	seedTierServices(t, db, guests, services-guests, "other")
	extra := serviceKeys(t, db, guests, services-guests)
	for day := from.AddDate(0, 0, -1); day.Before(end); day = day.AddDate(0, 0, 1) {
		insertDay(t, db, extra, node, day, 86400)
	}
	t0 := time.Now()
	for _, tier := range []models.Tier{models.Tier1h, models.Tier1d} {
		if err := db.SetUsageRollupMark(ctx, tier, from.AddDate(0, 0, -1).Unix()); err != nil {
			t.Fatal(err)
		}
	}
	r := &usage.Roller{DB: db, MaxHours: 1 << 20, Now: func() time.Time { return end.Add(usage.RollupGrace) }}
	if _, err := r.Run(ctx); err != nil {
		t.Fatal(err)
	}
	rep.info(sc, "the month rolled up again for every service", time.Since(t0).Seconds(), "s", strconv.Itoa(services)+" services")
	marks, err := db.UsageRollupMarks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var read int64
	for _, seg := range usage.Plan(from.Unix(), to.Unix(), marks) {
		read += dbtest.Count(t, db, "SELECT COUNT(*) FROM usage_"+string(seg.Tier)+" WHERE start >= ? AND start < ?", seg.From, seg.To)
	}
	rep.target(sc, "month's report: rows read per service", float64(read)/float64(services), "", "<=", 62, true, strconv.Itoa(services)+" services")
	reporter := usage.NewReporter(db, nil, func() time.Time { return end })
	page := func(client string) ([]usage.ServiceUsage, time.Duration) {
		var all []usage.ServiceUsage
		t0 := time.Now()
		q := usage.Query{ClientID: client, From: from, To: to, Limit: usage.MaxPageSize}
		for {
			p, err := reporter.Report(ctx, q)
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
	everyone, tEveryone := page("")
	rep.target(sc, "month's report from the tiers: services", float64(len(everyone)), "", "==", float64(services), true, "")
	rep.info(sc, "month's report, paged, from the tiers", tEveryone.Seconds()*1000, "ms", strconv.Itoa(services)+" services")
	tiers, tTiers := page("whmcs")
	dbtest.Exec(t, db, "DELETE FROM usage_rollups")
	fine, tFine := page("whmcs")
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
	rep.target(sc, "month's report from the tiers equals the 5-minute one", b2f(same), "", "==", 1, true, strconv.Itoa(guests)+" fully sampled services")
	rep.info(sc, "month's report, paged, from the tiers", tTiers.Seconds()*1000, "ms", strconv.Itoa(guests)+" fully sampled services")
	rep.info(sc, "month's report, paged, from 5-minute buckets alone", tFine.Seconds()*1000, "ms", strconv.Itoa(guests)+" fully sampled services")
	rep.target(sc, "5-minute time / tiers time", tFine.Seconds()/tTiers.Seconds(), "x", ">=", 20, false, strconv.Itoa(guests)+" fully sampled services")
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
