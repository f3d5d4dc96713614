package rdns_test

import (
	"net/netip"
	"testing"
	"time"

	"pvebill/models"
	"pvebill/models/dbtest"
	"pvebill/modules/ippool"
	"pvebill/modules/rdns"
	"pvebill/modules/rdns/pdnstest"
)

// R55: an attempt that raced a newer change of the same address never marks it synced. The
// first attempt holds the claim at generation 1 while a PUT records generation 2; the first
// attempt's success then only drops its claim and leaves generation 2 due at once, and the next
// round writes generation 2's name. A second claim on a claimed row is refused.
func TestAttemptRacingANewerChange(t *testing.T) {
	for _, dialect := range dbtest.Dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			db := dbtest.Open(t, dialect)
			s := pdnstest.Start(t)
			s.CreateZone(t, "113.0.203.in-addr.arpa")
			pools := ippool.NewService(db)
			if _, _, err := pools.Put(ctx, "pool-a", ippool.Spec{Cluster: "default", Bridge: "vmbr0", CIDR: "203.0.113.0/24",
				Gateway: "203.0.113.1", First: "203.0.113.10", Last: "203.0.113.20", ReverseZone: "113.0.203.in-addr.arpa."}); err != nil {
				t.Fatal(err)
			}
			k := models.ServiceKey{ClientID: "whmcs", ServiceID: "race-1"}
			if _, err := pools.Allocate(ctx, "pool-a", k); err != nil {
				t.Fatal(err)
			}
			hold := func(_ []models.IPAllocation, p map[string]models.IPPool) (string, string, error) {
				return "pool-a", p["pool-a"].ReverseZone, nil
			}
			first, err := db.SetRDNS(ctx, k, "203.0.113.10", "old.example.com", 64, hold)
			if err != nil || first.Generation != 1 {
				t.Fatalf("%+v %v", first, err)
			}
			now := time.Now()
			if ok, err := models.ClaimRDNS(ctx, db.Gorm, first.Address, 1, now, now.Add(time.Minute)); !ok || err != nil {
				t.Fatalf("claim: %v %v", ok, err)
			}
			second, err := db.SetRDNS(ctx, k, "203.0.113.10", "new.example.com", 64, hold)
			if err != nil || second.Generation != 2 {
				t.Fatalf("%+v %v", second, err)
			}
			if ok, _ := models.ClaimRDNS(ctx, db.Gorm, first.Address, 2, now, now.Add(time.Minute)); ok {
				t.Fatal("a claimed row was claimed again")
			}
			if err := models.FinishRDNS(ctx, db.Gorm, first, models.RDNSOutcome{Status: models.RDNSSynced}); err != nil {
				t.Fatal(err)
			}
			var row models.RDNSRecord
			if err := db.Gorm.Where("address = ?", first.Address).Take(&row).Error; err != nil {
				t.Fatal(err)
			}
			if row.Status != models.RDNSPending || row.Generation != 2 || row.ClaimUntil != 0 || row.Hostname != "new.example.com" {
				t.Fatalf("after the stale success %+v", row)
			}
			svc := rdns.NewService(rdns.Options{DB: db, PowerDNS: &rdns.PowerDNS{URL: s.URL, APIKey: s.APIKey, ServerID: "localhost"}})
			if err := svc.SyncDue(ctx); err != nil {
				t.Fatal(err)
			}
			if got := s.PTR(t, "113.0.203.in-addr.arpa.", rdns.ReverseName(netip.MustParseAddr("203.0.113.10"))); got != "new.example.com." {
				t.Fatalf("PTR %q", got)
			}
			if err := db.Gorm.Where("address = ?", first.Address).Take(&row).Error; err != nil || row.Status != models.RDNSSynced {
				t.Fatalf("%+v %v", row, err)
			}
		})
	}
}
