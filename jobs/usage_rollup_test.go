package jobs_test

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"pvebill/jobs"
	"pvebill/models"
	"pvebill/models/dbtest"
	"pvebill/modules/usage"
)

// Each tier keeps its buckets for its own retention, but a 5-minute or hourly bucket not yet
// rolled up into the next tier stays whatever its age; the roll-up job reports its rows and lag.
// R45: retention per tier, never ahead of the roll-up.
func TestUsageRetentionPerTierAndRollupJob(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		vmid := 9001
		if err := db.InsertService(ctx, &models.Service{ServiceID: "svc-ret", ClientID: "whmcs",
			GuestType: "container", Cluster: "c1", Node: "pve1", VMID: &vmid, State: models.ServiceActive}); err != nil {
			t.Fatal(err)
		}
		day := int64(86400)
		t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
		var rows []models.UsageBucket
		for d := int64(0); d < 10; d++ {
			for h := int64(0); h < 24; h += 6 {
				rows = append(rows, models.UsageBucket{ClientID: "whmcs", ServiceID: "svc-ret", BucketStart: t0 + d*day + h*3600,
					Cluster: "c1", Node: "pve1", UsageFigures: models.UsageFigures{Samples: 5, MemSum: 10},
					LastSample: t0 + d*day + h*3600 + 240})
			}
		}
		if err := db.UpsertUsageBuckets(ctx, rows); err != nil {
			t.Fatal(err)
		}
		now := time.Unix(t0+5*day, 0) // days 0-4 closed
		count := func(tier models.Tier) int {
			return len(tierRowsOf(t, db, tier))
		}
		ret := jobs.UsageRetention{DB: db, Retention5m: 24 * time.Hour, Retention1h: 48 * time.Hour,
			Retention1d: 72 * time.Hour, Now: func() time.Time { return now }}
		// Before any roll-up nothing goes.
		if err := ret.Run(ctx); err != nil || count(models.Tier5m) != 40 {
			t.Fatalf("purged before the roll-up: %v, %d left", err, count(models.Tier5m))
		}
		reg := prometheus.NewRegistry()
		job := jobs.UsageRollup{Roller: &usage.Roller{DB: db, Now: func() time.Time { return now }},
			Metrics: jobs.NewRollupMetrics(reg, db, func() time.Time { return now })}
		if err := job.Run(ctx); err != nil {
			t.Fatal(err)
		}
		// Hours closed until day 4, 23:00 (the last hour closes only after the grace): 4 rows a
		// day over days 0-4; day 4 is not closed, so days 0-3.
		if h, d := count(models.Tier1h), count(models.Tier1d); h != 20 || d != 4 {
			t.Fatalf("rolled up %d hours, %d days; want 20, 4", h, d)
		}
		if err := testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP pvebill_usage_rollup_lag_seconds Seconds between now and the end of the last hour rolled up (0 before there is anything to roll up).
# TYPE pvebill_usage_rollup_lag_seconds gauge
pvebill_usage_rollup_lag_seconds 3600
# HELP pvebill_usage_rollup_rows_total Hourly and daily usage rows written by the roll-up.
# TYPE pvebill_usage_rollup_rows_total counter
pvebill_usage_rollup_rows_total 24
`), "pvebill_usage_rollup_lag_seconds", "pvebill_usage_rollup_rows_total"); err != nil {
			t.Fatal(err)
		}
		if err := ret.Run(ctx); err != nil {
			t.Fatal(err)
		}
		// 5m: older than a day goes (days 0-3). 1h: older than two days (days 0-2), all rolled
		// into days. 1d: older than three days (days 0-1).
		if a, b, c := count(models.Tier5m), count(models.Tier1h), count(models.Tier1d); a != 24 || b != 8 || c != 2 {
			t.Fatalf("left %d 5-minute, %d hourly, %d daily rows; want 24, 8, 2", a, b, c)
		}
		// Much later, with no roll-up since, the marks hold the finer tiers back: the 5-minute rows
		// of days 5-9 and the hours of day 4 are not rolled up and stay whatever their age.
		now = time.Unix(t0+30*day, 0)
		if err := ret.Run(ctx); err != nil {
			t.Fatal(err)
		}
		if a, b, c := count(models.Tier5m), count(models.Tier1h), count(models.Tier1d); a != 20 || b != 4 || c != 0 {
			t.Fatalf("left %d 5-minute, %d hourly, %d daily rows; want 20, 4, 0", a, b, c)
		}
	})
}

func tierRowsOf(t *testing.T, db *models.DB, tier models.Tier) []models.UsageTierRow {
	t.Helper()
	keys, err := db.UsageServiceKeyPage(t.Context(), 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := db.UsageTierRows(t.Context(), tier, keys, 0, 1<<40)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}
