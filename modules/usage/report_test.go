package usage_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"pvebill/models"
	"pvebill/models/dbtest"
	"pvebill/modules/plans"
	"pvebill/modules/usage"
)

type planMap map[string]plans.Plan

func (m planMap) Get(_ context.Context, code string) (plans.Plan, error) {
	p, ok := m[code]
	if !ok {
		return plans.Plan{}, models.ErrNotFound
	}
	return p, nil
}

// The report's numbers equal the known inputs; a bucket belongs to the period its start falls
// in; unknown values are null; the current bucket is partial; pages chain by cursor.
// R34: the usage report's figures come from the buckets, with null where a value is not known.
func TestReportFromKnownBuckets(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		seedService(t, db, "svc-1", "whmcs", "ct-2g", 5001, t0.Add(-24*time.Hour))
		seedService(t, db, "svc-2", "whmcs", "gone-plan", 5002, t0.Add(-24*time.Hour))
		seedService(t, db, "svc-3", "whmcs", "ct-2g", 5003, t0.Add(-24*time.Hour))
		seedService(t, db, "svc-other", "someone-else", "ct-2g", 5004, t0.Add(-24*time.Hour))
		seedService(t, db, "svc-late", "whmcs", "ct-2g", 5005, t0.Add(48*time.Hour)) // created after the period
		bw := int64(2000)
		p := planMap{"ct-2g": {Code: "ct-2g", BandwidthGiB: &bw, DiskGiB: 20}}

		b := func(id string, start time.Time, samples int, swapSum, swapMax, memSum, memMax int64, cpu float64, disk int64, in, out *int64) models.UsageBucket {
			return models.UsageBucket{ClientID: "whmcs", ServiceID: id, BucketStart: start.Unix(), Cluster: "c1", Node: "pve1", VMID: 5001,
				GuestType: "container", UsageFigures: models.UsageFigures{Samples: int64(samples), SwapSamples: int64(samples),
					SwapSum: swapSum, SwapMax: i64(swapMax), SwapLimit: i64(1 << 30), MemSum: memSum, MemMax: i64(memMax),
					CPUSum: cpu, DiskMax: i64(disk), NetIn: in, NetOut: out},
				LastSample: start.Unix() + 240}
		}
		rows := []models.UsageBucket{
			b("svc-1", t0.Add(-5*time.Minute), 5, 999, 999, 999, 999, 9, 999, i64(999), i64(999)), // before the period
			b("svc-1", t0, 5, 500, 200, 5000, 1500, 1.0, 7000, i64(100), i64(10)),
			b("svc-1", t0.Add(5*time.Minute), 3, 900, 400, 3000, 1200, 0.5, 8000, i64(50), nil),
			b("svc-1", t0.Add(60*time.Minute), 5, 999, 999, 999, 999, 9, 999, i64(999), i64(999)), // starts at `to`: next period
			b("svc-2", t0, 2, 0, 0, 400, 300, 0.2, 100, nil, nil),
		}
		if err := db.UpsertUsageBuckets(ctx, rows); err != nil {
			t.Fatal(err)
		}
		now := t0.Add(7 * time.Minute) // the bucket at t0+5m is the current one
		r := usage.NewReporter(db, p, func() time.Time { return now })
		rep, err := r.Report(ctx, usage.Query{ClientID: "whmcs", From: t0, To: t0.Add(time.Hour), Buckets: true, Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Services) != 2 || rep.NextCursor == nil || *rep.NextCursor != "svc-2/whmcs" {
			t.Fatalf("page 1: %+v cursor %v", rep.Services, rep.NextCursor)
		}
		s1 := rep.Services[0]
		want := map[string]any{
			"service_id": "svc-1", "netin_bytes": 150.0, "netout_bytes": 10.0, "disk_max_bytes": 8000.0,
			"memory_avg_bytes": 1000.0, "memory_max_bytes": 1500.0, "swap_avg_bytes": 175.0, "swap_max_bytes": 400.0,
			"cpu_avg": 1.5 / 8, "bandwidth_limit_bytes": float64(2000 << 30), "disk_limit_bytes": float64(20 << 30), "samples": 8.0,
		}
		got := asMap(t, s1)
		for k, v := range want {
			if got[k] != v {
				t.Errorf("svc-1 %s = %v, want %v", k, got[k], v)
			}
		}
		if len(s1.Buckets) != 2 || s1.Buckets[0].Partial || !s1.Buckets[1].Partial || s1.Buckets[1].Samples != 3 {
			t.Fatalf("svc-1 buckets: %+v", s1.Buckets)
		}
		if *s1.Buckets[1].SwapAvgBytes != 300 || *s1.Buckets[1].SwapMaxBytes != 400 || s1.Buckets[1].NetOutBytes != nil {
			t.Errorf("svc-1 bucket 2: %+v", s1.Buckets[1])
		}
		// svc-2: traffic never known → null; its plan is gone → no limit (null).
		g2 := asMap(t, rep.Services[1])
		for _, k := range []string{"netin_bytes", "netout_bytes", "bandwidth_limit_bytes", "disk_limit_bytes"} {
			if v, ok := g2[k]; !ok || v != nil {
				t.Errorf("svc-2 %s = %v (present %v), want null", k, v, ok)
			}
		}
		// Page 2: svc-3 has no buckets at all → every figure null, samples 0; svc-late and
		// another client's service are not listed.
		rep2, err := r.Report(ctx, usage.Query{ClientID: "whmcs", From: t0, To: t0.Add(time.Hour), After: *rep.NextCursor, Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep2.Services) != 1 || rep2.Services[0].ServiceID != "svc-3" || rep2.NextCursor != nil {
			t.Fatalf("page 2: %+v", rep2)
		}
		g3 := asMap(t, rep2.Services[0])
		for _, k := range []string{"netin_bytes", "disk_max_bytes", "memory_avg_bytes", "swap_avg_bytes", "swap_max_bytes", "cpu_avg"} {
			if g3[k] != nil {
				t.Errorf("svc-3 %s = %v, want null", k, g3[k])
			}
		}
		if _, ok := g3["buckets"]; ok {
			t.Error("buckets present without granularity")
		}
		if _, err := r.Report(ctx, usage.Query{From: t0, To: t0}); !errors.Is(err, usage.ErrPeriod) {
			t.Errorf("empty period: %v", err)
		}
	})
}

func asMap(t *testing.T, v any) map[string]any {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}
