package bench

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"pvebill/models"
	"pvebill/models/dbtest"
	"pvebill/modules/ippool"
)

// ipv6Pools is scenario 10 (R54): 10,000 /64 assignments from a /48 by 100 concurrent creates
// against 10,000 IPv4 addresses by the same 100 in the same run, on one database: no prefix
// twice, the IPv6 throughput at least 0.8 of the IPv4 one, and the database bytes an assignment
// costs (the allocation rows with their indexes; nothing is stored per possible prefix).
func ipv6Pools(t *testing.T, rep *Report) {
	n, workers := 1000, 100
	if *full {
		n = 10000
	}
	d := dialect(t)
	ctx := context.Background()
	db := openDB(t, d)
	svc := ippool.NewService(db)
	v4 := ippool.Spec{Name: "v4", Cluster: "default", Bridge: "vmbr0", CIDR: "10.0.0.0/16", Gateway: "10.0.0.1",
		First: "10.0.0.10", Last: "10.0.255.250"}
	v6 := ippool.Spec{Name: "v6", Cluster: "default", Bridge: "vmbr0", CIDR: "2001:db8::/48", Gateway: "fe80::1"}
	for _, s := range []ippool.Spec{v4, v6} {
		if _, _, err := svc.Put(ctx, s.Name, s); err != nil {
			t.Fatal(err)
		}
	}
	rate4, dup4 := allocateMany(t, svc, "v4", n, workers)
	rate6, dup6 := allocateMany(t, svc, "v6", n, workers)
	bytes := allocationBytes(t, db, d)
	rep.target("10 ipv6", "duplicate prefixes", float64(dup6), "", "==", 0, true, fmt.Sprintf("%d /64s of a /48, %d at once", n, workers))
	rep.target("10 ipv6", "duplicate v4 addresses", float64(dup4), "", "==", 0, true, "")
	rep.info("10 ipv6", "v6 assignments per second", rate6, "1/s", d)
	rep.info("10 ipv6", "v4 assignments per second", rate4, "1/s", d)
	rep.target("10 ipv6", "v6 throughput / v4 throughput", rate6/rate4, "", ">=", 0.8, false, "same run, same database")
	rep.info("10 ipv6", "database bytes per assignment", float64(bytes)/float64(2*n), "B",
		"ip_allocations with its indexes over its v4 and v6 rows (one row each, the same shape)")
}

// allocateMany allocates n services from pool with workers goroutines and returns the
// assignments per second and the count of addresses handed out twice.
func allocateMany(t *testing.T, svc *ippool.Service, pool string, n, workers int) (float64, int) {
	var next atomic.Int64
	var mu sync.Mutex
	seen := make(map[netip.Addr]bool, n)
	dups := 0
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1); i <= int64(n); i = next.Add(1) {
				a, err := svc.Allocate(context.Background(), pool, models.ServiceKey{ClientID: "bench", ServiceID: fmt.Sprintf("%s-%05d", pool, i)})
				if err != nil && !errors.Is(err, ippool.ErrPoolExhausted) {
					t.Errorf("%s %d: %v", pool, i, err)
					return
				}
				mu.Lock()
				if seen[a.IP] {
					dups++
				}
				seen[a.IP] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return float64(n) / time.Since(start).Seconds(), dups
}

// allocationBytes is the storage of ip_allocations with its indexes: data and index length
// after ANALYZE on MySQL (information_schema, which a user without rights on the mysql schema
// can read), the database file's used pages on SQLite.
func allocationBytes(t *testing.T, db *models.DB, d string) int64 {
	var size int64
	if d == models.MySQL {
		dbtest.Exec(t, db, "ANALYZE TABLE ip_allocations")
		dbtest.Scan(t, db, &size, `SELECT COALESCE(data_length + index_length, 0) FROM information_schema.TABLES
			WHERE table_schema = DATABASE() AND table_name = 'ip_allocations'`)
		return size
	}
	var pages, free, pageSize int64
	for q, v := range map[string]*int64{"PRAGMA page_count": &pages, "PRAGMA freelist_count": &free, "PRAGMA page_size": &pageSize} {
		dbtest.Scan(t, db, v, q)
	}
	return (pages - free) * pageSize
}
