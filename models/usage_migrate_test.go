package models_test

import (
	"testing"

	"pvebill/models"
	"pvebill/models/dbtest"
)

// The 5-minute buckets stored before the tiers are carried over into usage_5m with every figure
// and the folder's counters; a bucket whose service is gone is left behind.
// R45: the compact tier tables keep what the old table held.
func TestUsageTiersMigrationCarriesBucketsOver(t *testing.T) {
	t.Parallel()
	for _, d := range dbtest.Dialects(t) {
		t.Run(d, func(t *testing.T) {
			ctx := t.Context()
			db := dbtest.OpenEmpty(t, d)
			if _, err := db.AppliedVersions(ctx); err != nil { // creates schema_migrations
				t.Fatal(err)
			}
			ms, err := models.Migrations(d)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range ms {
				if m.Version >= 10 {
					break
				}
				for _, stmt := range models.SplitSQLForTest(m.SQL) {
					if err := db.Gorm.Exec(stmt).Error; err != nil {
						t.Fatalf("%s: %v", m.Name, err)
					}
				}
				if err := db.Gorm.Exec("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, CURRENT_TIMESTAMP)",
					m.Version, m.Name).Error; err != nil {
					t.Fatal(err)
				}
			}
			if err := db.Gorm.Exec(`INSERT INTO services (service_id, client_id, guest_type, cluster, node, vmid, state,
				created_at, updated_at) VALUES ('svc-1', 'whmcs', 'container', 'c1', 'pve1', 5001, 'active',
				CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)`).Error; err != nil {
				t.Fatal(err)
			}
			for _, row := range []string{
				`('svc-1', 1800000000, 'c1', 'pve2', 5001, 'container', 5, 4, 400, 150, 512, 5000, 1200, 1.25, 77, 10, NULL, 900, 80, 3600, 1800000240)`,
				`('svc-gone', 1800000000, 'c1', 'pve1', 5002, 'container', 5, 5, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1800000240)`,
			} {
				if err := db.Gorm.Exec(`INSERT INTO usage_buckets (service_id, bucket_start, cluster, node, vmid, guest_type,
					samples, swap_samples, swap_sum, swap_max, swap_limit, mem_sum, mem_max, cpu_sum, disk_max, netin_bytes,
					netout_bytes, last_netin, last_netout, last_uptime, last_sample_at) VALUES ` + row).Error; err != nil {
					t.Fatal(err)
				}
			}
			if _, err := db.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			rows, err := db.UsageBuckets(ctx, []string{"svc-1", "svc-gone"}, 0, 1<<40)
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != 1 {
				t.Fatalf("rows = %+v, want svc-1's only", rows)
			}
			b := rows[0]
			if b.ServiceID != "svc-1" || b.BucketStart != 1800000000 || b.Node != "pve2" || b.Cluster != "c1" || b.VMID != 5001 ||
				b.Samples != 5 || b.SwapSamples != 4 || b.SwapSum != 400 || *b.SwapMax != 150 || *b.SwapLimit != 512 ||
				b.MemSum != 5000 || *b.MemMax != 1200 || b.CPUSum != 1.25 || *b.DiskMax != 77 || *b.NetIn != 10 ||
				b.NetOut != nil || *b.LastNetIn != 900 || *b.LastNetOut != 80 || *b.LastUptime != 3600 || b.LastSample != 1800000240 {
				t.Fatalf("carried over: %+v", b)
			}
		})
	}
}
