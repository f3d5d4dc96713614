package bench

import (
	"context"
	"strconv"
	"testing"
	"time"

	"pvebill/models"
	"pvebill/models/dbtest"
)

// buckets builds n buckets of distinct services in one 5-minute bucket.
func buckets(n int, start int64, gen int64) []models.UsageBucket {
	out := make([]models.UsageBucket, n)
	for i := range out {
		swap, lim := int64(i)*1024+gen, int64(512<<20)
		out[i] = models.UsageBucket{ClientID: "whmcs", ServiceID: "svc-" + strconv.Itoa(100000+i), BucketStart: start, Cluster: "c1", Node: "node01",
			VMID: 100000 + i, GuestType: "container", UsageFigures: models.UsageFigures{Samples: 5, SwapSamples: 5,
				SwapSum: swap * 5, SwapMax: &swap, SwapLimit: &lim, MemSum: 5 << 30, MemMax: &lim, CPUSum: 0.5, DiskMax: &lim},
			LastSample: start + 240}
	}
	return out
}

// seedBucketServices adds the services buckets(n, …) belong to (usage is stored under the
// service's key).
func seedBucketServices(t *testing.T, db *models.DB, n int) {
	t.Helper()
	created := time.Now().UTC()
	svcs := make([]models.Service, n)
	for i := range svcs {
		vmid := 100000 + i
		svcs[i] = models.Service{ServiceID: "svc-" + strconv.Itoa(vmid), ClientID: "whmcs", Plan: "p", GuestType: "container",
			Cluster: "c1", Node: "node01", VMID: &vmid, State: models.ServiceActive, CreatedAt: created, UpdatedAt: created}
	}
	dbtest.Insert(t, db, svcs, 500)
}

// bucketFlush writes the same number of buckets once with the batched upsert the folder uses and
// once row by row (the same upsert, one bucket per statement), each into a fresh bucket start,
// on the same database, and reports the ratio of their times.
func bucketFlush(t *testing.T, rep *Report) {
	const sc = "6 flush"
	n := scale(10000, 300)
	ctx := context.Background()
	for _, d := range []string{dialect(t)} {
		db := openDB(t, d)
		seedBucketServices(t, db, n)
		start := time.Now().Truncate(5 * time.Minute).Unix()
		// warm the connection pool and the statement path
		if err := db.UpsertUsageBuckets(ctx, buckets(10, start-3600, 0)); err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		if err := db.UpsertUsageBuckets(ctx, buckets(n, start, 1)); err != nil {
			t.Fatal(err)
		}
		batched := time.Since(t0)
		rows := buckets(n, start+300, 2)
		t0 = time.Now()
		for i := range rows {
			if err := db.UpsertUsageBuckets(ctx, rows[i:i+1]); err != nil {
				t.Fatal(err)
			}
		}
		single := time.Since(t0)
		count := dbtest.Count(t, db, "SELECT COUNT(*) FROM usage_5m WHERE start IN ?", []int64{start, start + 300})
		rep.target(sc, "buckets written, "+d, float64(count), "", "==", float64(2*n), true, "")
		rep.info(sc, "batched upsert, "+d, batched.Seconds()*1000, "ms", strconv.Itoa(n)+" buckets, "+strconv.Itoa(models.UsageUpsertBatch)+" a statement")
		rep.info(sc, "row by row, "+d, single.Seconds()*1000, "ms", "")
		rep.target(sc, "row-by-row time / batched time, "+d, single.Seconds()/batched.Seconds(), "x", ">=", 10, false, "")
	}
}
