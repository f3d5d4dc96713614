package models_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"pvebill/models"
	"pvebill/models/dbtest"
	"pvebill/modules/stack/stacktest/poll"
)

// R37 on MariaDB with several replicas: a single-statement service update that InnoDB picks as
// a deadlock victim (it locks the service_id index entry, then the row, while a claim or a
// finish holds them in the other order) is retried, not turned into a failed operation with
// an internal error.
func TestUpdateServiceRetriesADeadlock(t *testing.T) {
	if len(dbtest.Dialects(t)) < 2 {
		t.Skip("a deadlock needs MariaDB (PVEBILL_TEST_MYSQL_DSN)")
	}
	db := dbtest.Open(t, models.MySQL)
	ctx := t.Context()
	svc := &models.Service{ServiceID: "dl-1", ClientID: "c", Plan: "p", GuestType: "container", Cluster: "default",
		State: models.ServiceActive}
	if err := models.InsertService(ctx, db.Gorm, svc); err != nil {
		t.Fatal(err)
	}
	row, err := models.GetService(ctx, db.Gorm, svc.Key())
	if err != nil {
		t.Fatal(err)
	}
	tx := db.Gorm.Begin()
	defer tx.Rollback()
	// The other transaction holds the row (by primary key)...
	if err := tx.Exec("UPDATE services SET hostname = 'other' WHERE id = ?", row.ID).Error; err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- models.UpdateService(ctx, db.Gorm, svc.Key(), map[string]any{"plan": "p2"}) }()
	// ...the update takes the index entry and waits for the row (InnoDB reports its wait for
	// a lock on the primary key of this test's services table)...
	var schema string
	if err := db.Gorm.Raw("SELECT DATABASE()").Scan(&schema).Error; err != nil {
		t.Fatal(err)
	}
	wait := fmt.Sprintf("index PRIMARY of table `%s`.`services`", schema)
	poll.Until(t, 10*time.Second, "the update to wait for the row lock", func() bool {
		var status struct{ Type, Name, Status string }
		if err := db.Gorm.Raw("SHOW ENGINE INNODB STATUS").Scan(&status).Error; err != nil {
			// InnoDB shows its lock waits only to a user with the PROCESS privilege.
			if strings.Contains(err.Error(), "1227") && os.Getenv("PVEBILL_TEST_REQUIRE_MYSQL") != "1" {
				t.Skipf("the test database user needs PROCESS to see InnoDB's lock waits: %v", err)
			}
			t.Fatal(err)
		}
		for _, line := range strings.Split(status.Status, "\n") {
			if strings.Contains(line, wait) && strings.Contains(line, "waiting") {
				return true
			}
		}
		return false
	})
	// ...and the other transaction now wants the index entry: a deadlock, and the update,
	// which changed nothing yet, is its victim.
	var ids []int64
	if err := tx.Raw("SELECT id FROM services WHERE service_id = ? FOR UPDATE", "dl-1").Scan(&ids).Error; err != nil {
		t.Fatalf("the other transaction lost the deadlock instead: %v", err)
	}
	if err := tx.Commit().Error; err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("update after a deadlock: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the update did not finish")
	}
	got, err := models.GetService(ctx, db.Gorm, svc.Key())
	if err != nil {
		t.Fatal(err)
	}
	if got.Plan != "p2" || got.Hostname != "other" {
		t.Fatalf("service after both: plan %s hostname %s", got.Plan, got.Hostname)
	}
}
