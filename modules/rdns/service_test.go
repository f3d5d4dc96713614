package rdns_test

import (
	"fmt"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

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
			if ok, err := db.ClaimRDNS(ctx, first.Address, 1, now, now.Add(time.Minute)); !ok || err != nil {
				t.Fatalf("claim: %v %v", ok, err)
			}
			second, err := db.SetRDNS(ctx, k, "203.0.113.10", "new.example.com", 64, hold)
			if err != nil || second.Generation != 2 {
				t.Fatalf("%+v %v", second, err)
			}
			if ok, _ := db.ClaimRDNS(ctx, first.Address, 2, now, now.Add(time.Minute)); ok {
				t.Fatal("a claimed row was claimed again")
			}
			if err := db.FinishRDNS(ctx, first, models.RDNSOutcome{Status: models.RDNSSynced}); err != nil {
				t.Fatal(err)
			}
			var row models.RDNSRecord
			dbtest.Scan(t, db, &row, "SELECT * FROM rdns_records WHERE address = ?", first.Address)
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
			if err := dbtest.Query(db, &row, "SELECT * FROM rdns_records WHERE address = ?", first.Address); err != nil || row.Status != models.RDNSSynced {
				t.Fatalf("%+v %v", row, err)
			}
		})
	}
}

// R55 across replicas: two replicas' sync rounds over the same twenty due records at once send
// each record to PowerDNS exactly once (the claim: neither a record another round holds nor one
// it finished is sent again), and every name is published, a refused write by the next round.
func TestConcurrentRoundsSendEachRecordOnce(t *testing.T) {
	for _, dialect := range dbtest.Dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			db := dbtest.Open(t, dialect)
			s := pdnstest.Start(t)
			s.CreateZone(t, "113.0.203.in-addr.arpa")
			k := models.ServiceKey{ClientID: "whmcs", ServiceID: "many-1"}
			hold := func(_ []models.IPAllocation, _ map[string]models.IPPool) (string, string, error) {
				return "pool-a", "113.0.203.in-addr.arpa.", nil
			}
			for i := 0; i < 20; i++ {
				if _, err := db.SetRDNS(ctx, k, fmt.Sprintf("203.0.113.%d", 10+i), fmt.Sprintf("h%d.example.com", i), 64, hold); err != nil {
					t.Fatal(err)
				}
			}
			client := &rdns.PowerDNS{URL: s.URL, APIKey: s.APIKey, ServerID: "localhost"}
			regs := []*prometheus.Registry{prometheus.NewRegistry(), prometheus.NewRegistry()}
			var wg sync.WaitGroup
			for _, reg := range regs {
				svc := rdns.NewService(rdns.Options{DB: db, PowerDNS: client, Metrics: rdns.NewMetrics(reg, db, nil)})
				wg.Add(1)
				go func() {
					defer wg.Done()
					if err := svc.SyncDue(ctx); err != nil {
						t.Error(err)
					}
				}()
			}
			wg.Wait()
			sent := 0.0
			for _, reg := range regs {
				mfs, _ := reg.Gather()
				for _, mf := range mfs {
					if mf.GetName() == "pvebill_rdns_attempts_total" {
						for _, m := range mf.GetMetric() {
							sent += m.GetCounter().GetValue()
						}
					}
				}
			}
			if sent != 20 {
				t.Fatalf("%v attempts for 20 records", sent)
			}
			// PowerDNS's sqlite backend answers some of the concurrent writes to one zone with a 500:
			// those records are pending, and the next round past their backoff publishes them.
			later := rdns.NewService(rdns.Options{DB: db, PowerDNS: client, Now: func() time.Time { return time.Now().Add(time.Hour) }})
			if err := later.SyncDue(ctx); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 20; i++ {
				a := netip.MustParseAddr(fmt.Sprintf("203.0.113.%d", 10+i))
				if got := s.PTR(t, "113.0.203.in-addr.arpa.", rdns.ReverseName(a)); got != fmt.Sprintf("h%d.example.com.", i) {
					t.Fatalf("PTR of %s: %q", a, got)
				}
			}
		})
	}
}
