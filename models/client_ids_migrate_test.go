package models_test

import (
	"errors"
	"testing"

	"pvebill/models"
	"pvebill/models/dbtest"
)

// migrateBelow applies the migrations before version, as an older binary would have.
func migrateBelow(t *testing.T, db *models.DB, dialect string, version int) {
	t.Helper()
	if _, err := db.AppliedVersions(t.Context()); err != nil { // creates schema_migrations
		t.Fatal(err)
	}
	ms, err := models.Migrations(dialect)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.Version >= version {
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
}

// R46: the rows written while service ids were one global namespace are carried over to the
// per-client key — the service, its operations, intent, address, bandwidth and audit rows all
// read back under (client, service id) — and the services that existed are marked as owning
// guests with the one-part stamp. Afterwards another client can create the same id, and
// neither sees the other's rows.
func TestClientServiceIDsMigrationCarriesRowsOver(t *testing.T) {
	t.Parallel()
	for _, d := range dbtest.Dialects(t) {
		t.Run(d, func(t *testing.T) {
			ctx := t.Context()
			db := dbtest.OpenEmpty(t, d)
			migrateBelow(t, db, d, 13)
			for _, stmt := range []string{
				`INSERT INTO services (service_id, client_id, guest_type, cluster, node, vmid, state, created_at, updated_at)
				 VALUES ('1042', 'alice', 'container', 'c1', 'pve1', 5001, 'active', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)`,
				`INSERT INTO operations (id, service_id, client_id, action, state, payload, created_at, updated_at)
				 VALUES ('00000000-0000-4000-8000-000000000001', '1042', 'alice', 'create', 'succeeded', '{}', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)`,
				`INSERT INTO reinstall_intents (id, service_id, client_id, state, generation, guest_type, vmid, operation_id, created_at, updated_at)
				 VALUES ('00000000-0000-4000-8000-000000000002', '1042', 'alice', 'completed', 3, 'container', 5001,
				 '00000000-0000-4000-8000-000000000001', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)`,
				`INSERT INTO ip_pools (name, cluster, bridge, cidr, gateway, first_ip, last_ip, nameservers, source, created_at, updated_at)
				 VALUES ('a', 'c1', 'vmbr0', '198.51.100.0/24', '198.51.100.1', 3325256720, 3325256736, '[]', 'api', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)`,
				`INSERT INTO ip_allocations (pool, ip, service_id, created_at) VALUES ('a', 3325256722, '1042', CURRENT_TIMESTAMP)`,
				`INSERT INTO bandwidth_usage (service_id, period_start, bytes, last_counter, updated_at)
				 VALUES ('1042', CURRENT_TIMESTAMP, 123456, 99, CURRENT_TIMESTAMP)`,
				`INSERT INTO bandwidth_usage (service_id, period_start, bytes, updated_at) VALUES ('gone', CURRENT_TIMESTAMP, 1, CURRENT_TIMESTAMP)`,
				`INSERT INTO audit_events (at, actor, service_id, operation_id, event) VALUES (CURRENT_TIMESTAMP, 'admin', '1042', '', 'reconciled')`,
			} {
				if err := db.Gorm.Exec(stmt).Error; err != nil {
					t.Fatal(err)
				}
			}
			if _, err := db.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			alice := models.ServiceKey{ClientID: "alice", ServiceID: "1042"}
			bob := models.ServiceKey{ClientID: "bob", ServiceID: "1042"}
			svc, err := models.GetService(ctx, db.Gorm, alice)
			if err != nil || !svc.LegacyStamp || svc.VMID == nil || *svc.VMID != 5001 {
				t.Fatalf("alice's service after the migration: %+v %v", svc, err)
			}
			if op, err := models.LatestOperation(ctx, db.Gorm, alice, "create"); err != nil || op.State != models.OpSucceeded {
				t.Fatalf("alice's create: %+v %v", op, err)
			}
			if in, err := models.LatestIntent(ctx, db.Gorm, alice); err != nil || in.Generation != 3 {
				t.Fatalf("alice's intent: %+v %v", in, err)
			}
			if allocs, _, err := models.ServiceIPAllocations(ctx, db.Gorm, alice); err != nil || len(allocs) != 1 || allocs[0].ClientID != "alice" {
				t.Fatalf("alice's addresses: %+v %v", allocs, err)
			}
			if bw, err := models.GetBandwidthUsage(ctx, db.Gorm, alice); err != nil || bw.Bytes != 123456 || *bw.LastCounter != 99 {
				t.Fatalf("alice's bandwidth: %+v %v", bw, err)
			}
			var left int64
			db.Gorm.Model(&models.BandwidthUsage{}).Count(&left)
			if left != 1 {
				t.Fatalf("%d bandwidth rows, want alice's only (the gone service has no client)", left)
			}
			if evs, err := models.ListAudit(ctx, db.Gorm, alice); err != nil || len(evs) != 1 || evs[0].ClientID != "alice" {
				t.Fatalf("alice's audit: %+v %v", evs, err)
			}

			// Bob takes the same id: a new service, not marked for the one-part stamp.
			if err := models.InsertService(ctx, db.Gorm, &models.Service{ServiceID: "1042", ClientID: "bob", State: models.ServiceActive}); err != nil {
				t.Fatalf("bob's 1042: %v", err)
			}
			err = models.InsertService(ctx, db.Gorm, &models.Service{ServiceID: "1042", ClientID: "alice", State: models.ServiceActive})
			if !errors.Is(err, models.ErrDuplicate) {
				t.Fatalf("alice's second 1042: %v, want ErrDuplicate", err)
			}
			bobs, err := models.GetService(ctx, db.Gorm, bob)
			if err != nil || bobs.LegacyStamp || bobs.ID == svc.ID {
				t.Fatalf("bob's service: %+v %v", bobs, err)
			}
			if _, err := models.LatestOperation(ctx, db.Gorm, bob, ""); !errors.Is(err, models.ErrNotFound) {
				t.Fatalf("bob sees an operation: %v", err)
			}
			if _, err := models.GetBandwidthUsage(ctx, db.Gorm, bob); !errors.Is(err, models.ErrNotFound) {
				t.Fatalf("bob sees bandwidth: %v", err)
			}
			if allocs, _, err := models.ServiceIPAllocations(ctx, db.Gorm, bob); err != nil || len(allocs) != 0 {
				t.Fatalf("bob sees addresses: %+v %v", allocs, err)
			}
			if owners, err := models.ServiceOwners(ctx, db.Gorm, "1042"); err != nil || len(owners) != 2 || owners[0] != "alice" || owners[1] != "bob" {
				t.Fatalf("owners of 1042: %v %v", owners, err)
			}
		})
	}
}
