package models_test

import (
	"slices"
	"sync/atomic"
	"testing"

	"gorm.io/gorm"

	"pvebill/models"
	"pvebill/models/dbtest"
)

// The console's watcher reads every open session's service in one statement per
// ConsoleWatchChunk ids (R41): state, client and the action of the operation holding the lock;
// a service that is gone is absent.
func TestWatchConsoleServicesChunks(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		g := db.Gorm.WithContext(ctx)
		lock := "op-suspend-1"
		if err := models.InsertOperation(ctx, g, &models.Operation{ID: lock, ServiceID: "locked", ClientID: "alice",
			Action: "suspend", State: models.OpRunning, Payload: "{}"}); err != nil {
			t.Fatal(err)
		}
		var refs []int64
		for _, s := range []*models.Service{
			{ServiceID: "free", ClientID: "alice", Plan: "p", GuestType: "container", Cluster: "c", State: "active"},
			{ServiceID: "locked", ClientID: "alice", Plan: "p", GuestType: "container", Cluster: "c", State: "active", LockOperationID: &lock},
			{ServiceID: "limited", ClientID: "bob", Plan: "p", GuestType: "container", Cluster: "c", State: "limited"},
		} {
			if err := models.InsertService(ctx, g, s); err != nil {
				t.Fatal(err)
			}
			refs = append(refs, s.ID)
		}
		gone := refs[2] + 1000
		ids := append(slices.Clone(refs), gone)
		for len(ids) < 2*models.ConsoleWatchChunk+1 {
			ids = append(ids, gone+int64(len(ids))) // services that do not exist
		}
		var stmts atomic.Int64
		count := func(*gorm.DB) { stmts.Add(1) }
		if err := db.Gorm.Callback().Query().After("gorm:query").Register("test:watch", count); err != nil {
			t.Fatal(err)
		}
		if err := db.Gorm.Callback().Row().After("gorm:row").Register("test:watch", count); err != nil {
			t.Fatal(err)
		}
		got, err := models.WatchConsoleServices(ctx, db.Gorm, ids)
		if err != nil {
			t.Fatal(err)
		}
		if n := stmts.Load(); n != 3 {
			t.Errorf("%d statements for %d ids, want 3", n, len(ids))
		}
		slices.SortFunc(got, func(a, b models.ConsoleWatch) int { return int(a.ID - b.ID) })
		want := []models.ConsoleWatch{{ID: refs[0], ClientID: "alice", State: "active"},
			{ID: refs[1], ClientID: "alice", State: "active", LockAction: "suspend"},
			{ID: refs[2], ClientID: "bob", State: "limited"}}
		if !slices.Equal(got, want) {
			t.Fatalf("got %+v, want %+v", got, want)
		}
		stmts.Store(0)
		if got, err := models.WatchConsoleServices(ctx, db.Gorm, refs); err != nil || len(got) != 3 || stmts.Load() != 1 {
			t.Fatalf("3 services: %d rows in %d statements, %v", len(got), stmts.Load(), err)
		}
	})
}
