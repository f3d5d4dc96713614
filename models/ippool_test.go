package models_test

import (
	"errors"
	"fmt"
	"testing"

	"gorm.io/gorm"

	"pvebill/models"
	"pvebill/models/dbtest"
)

func ipPoolRow(name string, first, last int64) models.IPPool {
	return models.IPPool{Name: name, Cluster: "default", Bridge: "vmbr0", CIDR: "10.0.0.0/24", Gateway: "10.0.0.1",
		FirstIP: first, LastIP: last, Nameservers: "[]"}
}

// The schema itself keeps an address to one service and a service to one address per pool, and
// refuses allocations in a pool that does not exist and the deletion of a pool in use: these
// hold whatever code writes the rows.
func TestIPAllocationKeys(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		if _, err := db.SaveIPPools(ctx, []models.IPPool{ipPoolRow("p", 10, 20)}, "api"); err != nil {
			t.Fatal(err)
		}
		insert := func(pool string, ip int64, svc string) error {
			return db.Gorm.Create(&models.IPAllocation{Pool: pool, IP: ip, ServiceID: svc, CreatedAt: models.Now()}).Error
		}
		if err := insert("p", 10, "a"); err != nil {
			t.Fatal(err)
		}
		if err := insert("p", 10, "b"); !errors.Is(err, models.ErrDuplicate) {
			t.Fatalf("second service on one address: %v", err)
		}
		if err := insert("p", 11, "a"); !errors.Is(err, models.ErrDuplicate) {
			t.Fatalf("second address for one service in one pool: %v", err)
		}
		if err := insert("missing", 10, "c"); err == nil {
			t.Fatal("allocation in a pool that does not exist was stored")
		}
		if err := db.Gorm.Exec("DELETE FROM ip_pools WHERE name = ?", "p").Error; err == nil {
			t.Fatal("a pool with allocations was deleted behind the code's back")
		}
	})
}

// A duplicate key at insert (a row written around the pool lock) makes AllocateIP pick again:
// the intruder keeps its address and the service gets the next free one. If the service's own
// slot was taken meanwhile, that allocation is returned. A duplicate on every attempt ends in an
// error, never in a shared address.
func TestAllocateIPPicksAgainAfterDuplicateKey(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		if _, err := db.SaveIPPools(ctx, []models.IPPool{ipPoolRow("p", 10, 20)}, "api"); err != nil {
			t.Fatal(err)
		}
		calls := 0
		restore := models.SetIPAllocationHook(func(tx *gorm.DB, pool string, ip int64) error {
			calls++
			if calls > 1 {
				return nil
			}
			return tx.Create(&models.IPAllocation{Pool: pool, IP: ip, ServiceID: "intruder", CreatedAt: models.Now()}).Error
		})
		a, _, err := db.AllocateIP(ctx, "p", models.ServiceKey{ClientID: "c", ServiceID: "svc-1"})
		restore()
		if err != nil || a.IP != 11 || calls != 2 {
			t.Fatalf("allocation %+v, %v after %d picks; want 11 after 2", a, err, calls)
		}
		var intruder models.IPAllocation
		if err := db.Gorm.Where("service_id = ?", "intruder").Take(&intruder).Error; err != nil || intruder.IP != 10 {
			t.Fatalf("intruder %+v %v", intruder, err)
		}

		restore = models.SetIPAllocationHook(func(tx *gorm.DB, pool string, _ int64) error {
			return tx.Create(&models.IPAllocation{Pool: pool, IP: 20, ClientID: "c", ServiceID: "svc-2", CreatedAt: models.Now()}).Error
		})
		a, _, err = db.AllocateIP(ctx, "p", models.ServiceKey{ClientID: "c", ServiceID: "svc-2"})
		restore()
		if err != nil || a.IP != 20 || a.ServiceID != "svc-2" {
			t.Fatalf("service slot taken meanwhile: %+v %v", a, err)
		}

		next := int64(100)
		restore = models.SetIPAllocationHook(func(tx *gorm.DB, pool string, ip int64) error {
			next++
			return tx.Create(&models.IPAllocation{Pool: pool, IP: ip, ServiceID: fmt.Sprintf("intruder-%d", next), CreatedAt: models.Now()}).Error
		})
		_, _, err = db.AllocateIP(ctx, "p", models.ServiceKey{ClientID: "c", ServiceID: "svc-3"})
		restore()
		if !errors.Is(err, models.ErrDuplicate) || next-100 != 4 {
			t.Fatalf("endless duplicates: %v after %d picks", err, next-100)
		}
		var n int64
		db.Gorm.Model(&models.IPAllocation{}).Where("service_id = ?", "svc-3").Count(&n)
		if n != 0 {
			t.Fatal("svc-3 holds an address after a failed allocation")
		}
	})
}
