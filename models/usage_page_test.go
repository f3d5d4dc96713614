package models_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"pvebill/models"
	"pvebill/models/dbtest"
)

// R46: an admin's usage page, ordered by (service_id, client_id) from a two-part cursor, is read
// from ix_services_service_client in index order: the plan names that index and sorts nothing
// (no filesort on MariaDB, no temporary B-tree on SQLite), so a page costs its own rows rather
// than every service after the cursor. The clients of one id are listed from the same index.
func TestUsagePageReadsInIndexOrder(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		now := time.Now().UTC()
		svcs := make([]models.Service, 0, 3000)
		for i := range 3000 {
			vmid := 10000 + i
			svcs = append(svcs, models.Service{ServiceID: fmt.Sprintf("s%04d", i/3), ClientID: []string{"alpha", "other", "whmcs"}[i%3],
				Plan: "p", GuestType: "container", Cluster: "default", Node: "pve1", VMID: &vmid, State: models.ServiceActive,
				CreatedAt: now.Add(-time.Hour), UpdatedAt: now.Add(-time.Hour)})
		}
		if err := db.Gorm.CreateInBatches(svcs, 500).Error; err != nil {
			t.Fatal(err)
		}
		analyze := "ANALYZE"
		if db.Dialect == models.MySQL {
			analyze = "ANALYZE TABLE services"
		}
		if err := db.Gorm.Exec(analyze).Error; err != nil {
			t.Fatal(err)
		}
		page := models.UsageServicesSQLForTest(db, models.UsageServicesQuery{AfterServiceID: "s0100", AfterClientID: "other",
			Limit: 101, From: now.Add(-24 * time.Hour), To: now})
		owners := db.Gorm.ToSQL(func(tx *gorm.DB) *gorm.DB {
			var ids []string
			return tx.Model(&models.Service{}).Where("service_id = ?", "s0100").Order("client_id").Pluck("client_id", &ids)
		})
		for _, q := range []string{page, owners} {
			plan := explain(t, db, q)
			if !strings.Contains(plan, "ix_services_service_client") || strings.Contains(plan, "filesort") || strings.Contains(plan, "TEMP B-TREE") {
				t.Errorf("%s\nplan: %s", q, plan)
			}
		}
		got, err := db.UsageServices(ctx, models.UsageServicesQuery{AfterServiceID: "s0100", AfterClientID: "other",
			Limit: 4, From: now.Add(-24 * time.Hour), To: now})
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, s := range got {
			keys = append(keys, s.ServiceID+"/"+s.ClientID)
		}
		if want := "s0100/whmcs s0101/alpha s0101/other s0101/whmcs"; strings.Join(keys, " ") != want {
			t.Fatalf("page after s0100/other: %v, want %s", keys, want)
		}
	})
}

// explain returns the query plan of q as one line per row.
func explain(t *testing.T, db *models.DB, q string) string {
	t.Helper()
	prefix := "EXPLAIN "
	if db.Dialect != models.MySQL {
		prefix = "EXPLAIN QUERY PLAN "
	}
	rows, err := db.Gorm.Raw(prefix + q).Rows()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rows.Close() }()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		line := make([]string, len(vals))
		for i, v := range vals {
			if b, ok := v.([]byte); ok {
				v = string(b)
			}
			line[i] = fmt.Sprint(v)
		}
		out = append(out, strings.Join(line, " "))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(out, "\n")
}
