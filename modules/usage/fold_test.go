package usage_test

import (
	"testing"
	"time"

	"pvebill/models"
	"pvebill/models/dbtest"
	"pvebill/modules/usage"
)

// t0 is a bucket boundary.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func i64(v int64) *int64 { return &v }

func sample(id string, at time.Time, swap int64, mem int64, cpu float64, disk, netin, netout, uptime int64) usage.Sample {
	return usage.Sample{ClientID: "whmcs", ServiceID: id, Cluster: "c1", Node: "pve1", VMID: 5001, GuestType: "container", At: at,
		Swap: i64(swap), SwapLimit: i64(512 << 20), Mem: mem, CPU: cpu, Disk: disk, NetIn: netin, NetOut: netout, Uptime: uptime}
}

func seedService(t *testing.T, db *models.DB, id, client, plan string, vmid int, created time.Time) {
	t.Helper()
	s := &models.Service{ServiceID: id, ClientID: client, Plan: plan, GuestType: "container", Cluster: "c1",
		Node: "pve1", VMID: &vmid, State: models.ServiceActive}
	if err := db.InsertService(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	dbtest.SetServiceCreated(t, db, id, created)
}

// seedServices adds services for the ids (usage is stored under the service's key, so a
// bucket needs its service), each with a vmid of its own.
func seedServices(t *testing.T, db *models.DB, ids ...string) {
	t.Helper()
	for _, id := range ids {
		n := dbtest.Count(t, db, "SELECT COUNT(*) FROM services")
		seedService(t, db, id, "whmcs", "ct-2g", 7000+int(n), t0.Add(-24*time.Hour))
	}
}

func bucketsOf(t *testing.T, db *models.DB, id string) []models.UsageBucket {
	t.Helper()
	rows, err := db.UsageBuckets(t.Context(), []string{id}, 0, 1<<40)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// Known sample sequences give exact bucket averages, maxima and counts; a bucket with fewer
// samples says so; counter deltas survive a reset; the first reading has no delta (unknown).
// R32: samples fold into 5-minute buckets with average, maximum and count.
func TestFoldKnownSequences(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		seedServices(t, db, "svc-a")
		ctx := t.Context()
		f := usage.NewFolder(db)
		// Bucket 1: five samples a minute apart.
		swaps := []int64{100, 300, 200, 600, 300} // avg 300, max 600
		mems := []int64{1000, 2000, 3000, 4000, 5000}
		ins := []int64{10_000, 10_500, 11_500, 11_600, 12_000} // deltas 500+1000+100+400 = 2000
		for i := range swaps {
			f.Add(sample("svc-a", t0.Add(time.Duration(i)*time.Minute+5*time.Second), swaps[i], mems[i], 0.1*float64(i+1), 100+int64(i), ins[i], ins[i]/2, 1000+int64(i)*60))
		}
		// Bucket 2: two samples only; the guest restarted in between (uptime and counters fell).
		f.Add(sample("svc-a", t0.Add(5*time.Minute+5*time.Second), 50, 7000, 0.5, 90, 12_400, 6_200, 1300))
		f.Add(sample("svc-a", t0.Add(6*time.Minute+5*time.Second), 70, 9000, 0.7, 95, 300, 100, 20))
		if n, err := f.Flush(ctx); err != nil || n != 2 {
			t.Fatalf("flush = %d, %v", n, err)
		}
		rows := bucketsOf(t, db, "svc-a")
		if len(rows) != 2 {
			t.Fatalf("buckets = %+v", rows)
		}
		b1, b2 := rows[0], rows[1]
		if b1.BucketStart != t0.Unix() || b1.Samples != 5 || b1.SwapSamples != 5 || b1.SwapSum != 1500 || *b1.SwapMax != 600 {
			t.Errorf("bucket 1 swap: %+v", b1)
		}
		if b1.MemSum != 15000 || *b1.MemMax != 5000 || *b1.DiskMax != 104 {
			t.Errorf("bucket 1 mem/disk: %+v", b1)
		}
		if b1.CPUSum < 1.4999 || b1.CPUSum > 1.5001 {
			t.Errorf("bucket 1 cpu sum %v", b1.CPUSum)
		}
		if b1.NetIn == nil || *b1.NetIn != 2000 || *b1.NetOut != 1000 {
			t.Errorf("bucket 1 net: in %v out %v, want 2000/1000 (first reading has no delta)", deref(b1.NetIn), deref(b1.NetOut))
		}
		if b2.BucketStart != t0.Add(5*time.Minute).Unix() || b2.Samples != 2 || b2.SwapSum != 120 || *b2.SwapMax != 70 {
			t.Errorf("bucket 2: %+v", b2)
		}
		// 12_000 → 12_400 is +400; then a restart: the counter restarts, so +300.
		if *b2.NetIn != 400+300 || *b2.NetOut != 200+100 {
			t.Errorf("bucket 2 net: %d/%d, want 700/300", *b2.NetIn, *b2.NetOut)
		}
	})
}

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

// A guest seen once has no traffic figure: null, not 0. A sample without swap leaves swap
// unknown for that bucket.
func TestFoldUnknownStaysUnknown(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		seedServices(t, db, "svc-b")
		f := usage.NewFolder(db)
		s := sample("svc-b", t0.Add(time.Minute), 0, 100, 0.1, 10, 5000, 5000, 50)
		s.Swap, s.SwapLimit = nil, nil
		f.Add(s)
		if _, err := f.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
		b := bucketsOf(t, db, "svc-b")[0]
		if b.NetIn != nil || b.NetOut != nil || b.SwapMax != nil || b.SwapLimit != nil || b.SwapSamples != 0 || b.Samples != 1 {
			t.Fatalf("unknown values became numbers: %+v", b)
		}
		if _, ok := f.SwapWindow(models.ServiceKey{ClientID: "whmcs", ServiceID: "svc-b"}); ok {
			t.Fatal("swap window without any swap reading")
		}
	})
}

// Writing the same buckets again changes nothing; a restarted folder resumes the open bucket
// and the counters from storage instead of starting from nothing.
// R32: re-writing a bucket changes nothing, and a restart resumes the open bucket.
func TestFoldIdempotentAndResume(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		seedServices(t, db, "svc-c")
		ctx := t.Context()
		f := usage.NewFolder(db)
		for i := 0; i < 3; i++ {
			f.Add(sample("svc-c", t0.Add(time.Duration(i)*time.Minute), 100*int64(i+1), 1000, 0.2, 50, 1000*int64(i+1), 0, 100+60*int64(i)))
		}
		if _, err := f.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		before := bucketsOf(t, db, "svc-c")
		// The same rows again, as a batch: nothing changes.
		if err := db.UpsertUsageBuckets(ctx, before); err != nil {
			t.Fatal(err)
		}
		if err := db.UpsertUsageBuckets(ctx, before); err != nil {
			t.Fatal(err)
		}
		again := bucketsOf(t, db, "svc-c")
		if len(again) != 1 || !sameBucket(before[0], again[0]) {
			t.Fatalf("re-writing changed the bucket:\n%+v\n%+v", before, again)
		}
		// A flush with nothing new writes nothing.
		if n, err := f.Flush(ctx); err != nil || n != 0 {
			t.Fatalf("empty flush = %d, %v", n, err)
		}

		// A new process resumes.
		g := usage.NewFolder(db)
		now := t0.Add(3 * time.Minute)
		if err := g.Resume(ctx, []models.ServiceKey{{ClientID: "whmcs", ServiceID: "svc-c"}}, now); err != nil {
			t.Fatal(err)
		}
		g.Add(sample("svc-c", now, 400, 1000, 0.2, 50, 4500, 0, 100+60*3))
		if _, err := g.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		b := bucketsOf(t, db, "svc-c")[0]
		if b.Samples != 4 || b.SwapSum != 100+200+300+400 || *b.SwapMax != 400 || *b.NetIn != 3500 {
			t.Fatalf("resumed bucket: samples %d swap %d max %d netin %d", b.Samples, b.SwapSum, *b.SwapMax, *b.NetIn)
		}
	})
}

func sameBucket(a, b models.UsageBucket) bool {
	eq := func(x, y *int64) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	return a.ServiceID == b.ServiceID && a.BucketStart == b.BucketStart && a.Samples == b.Samples &&
		a.SwapSamples == b.SwapSamples && a.SwapSum == b.SwapSum && eq(a.SwapMax, b.SwapMax) && eq(a.SwapLimit, b.SwapLimit) &&
		a.MemSum == b.MemSum && eq(a.MemMax, b.MemMax) && a.CPUSum == b.CPUSum && eq(a.DiskMax, b.DiskMax) &&
		eq(a.NetIn, b.NetIn) && eq(a.NetOut, b.NetOut) && eq(a.LastNetIn, b.LastNetIn) && a.LastSample == b.LastSample &&
		a.Node == b.Node && a.VMID == b.VMID
}

// Batched upserts of many buckets in one call, twice: the row count stays the number of
// distinct buckets.
func TestUpsertBatchesAcrossStatements(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		for i := range 26 {
			seedServices(t, db, "svc-"+string(rune('a'+i)))
		}
		ctx := t.Context()
		var rows []models.UsageBucket
		for i := 0; i < models.UsageUpsertBatch+37; i++ {
			rows = append(rows, models.UsageBucket{ClientID: "whmcs", ServiceID: "svc-" + string(rune('a'+i%26)), BucketStart: t0.Unix() + int64(i/26)*300,
				VMID: 100 + i, UsageFigures: models.UsageFigures{Samples: 5, SwapSum: int64(i), SwapSamples: 5},
				LastSample: t0.Unix() + int64(i/26)*300 + 240})
		}
		for range 2 {
			if err := db.UpsertUsageBuckets(ctx, rows); err != nil {
				t.Fatal(err)
			}
		}
		if n := dbtest.Count(t, db, "SELECT COUNT(*) FROM usage_5m"); n != int64(len(rows)) {
			t.Fatalf("rows = %d, want %d", n, len(rows))
		}
		// Retention: buckets before the cut go, the rest stay.
		cut := t0.Unix() + 300*10
		gone, err := db.PurgeUsageBuckets(ctx, cut, 100)
		if err != nil || gone != 26*10 {
			t.Fatalf("purged %d, %v; want %d", gone, err, 26*10)
		}
	})
}

func TestBucketStart(t *testing.T) {
	for _, c := range []struct{ in, want time.Time }{
		{t0, t0},
		{t0.Add(4*time.Minute + 59*time.Second), t0},
		{t0.Add(5 * time.Minute), t0.Add(5 * time.Minute)},
		{t0.Add(-time.Second), t0.Add(-5 * time.Minute)},
	} {
		if got := usage.BucketStart(c.in); !got.Equal(c.want) {
			t.Errorf("BucketStart(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

// A service dropped from the managed set loses its in-memory state, but its unwritten bucket is
// still written.
func TestFoldRetain(t *testing.T) {
	db := dbtest.Open(t, models.SQLite)
	seedServices(t, db, "svc-keep", "svc-gone")
	f := usage.NewFolder(db)
	f.Add(sample("svc-keep", t0, 10, 1, 0.1, 1, 1, 1, 1))
	f.Add(sample("svc-gone", t0, 20, 1, 0.1, 1, 1, 1, 1))
	f.Retain(map[models.ServiceKey]bool{{ClientID: "whmcs", ServiceID: "svc-keep"}: true})
	if _, ok := f.SwapWindow(models.ServiceKey{ClientID: "whmcs", ServiceID: "svc-gone"}); ok {
		t.Fatal("state of a dropped service kept")
	}
	if _, ok := f.SwapWindow(models.ServiceKey{ClientID: "whmcs", ServiceID: "svc-keep"}); !ok {
		t.Fatal("state of a kept service dropped")
	}
	if n, err := f.Flush(t.Context()); err != nil || n != 2 {
		t.Fatalf("flush = %d, %v; want both buckets written", n, err)
	}
}
