package ippool_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"pvebill/i18n"
	"pvebill/models"
	"pvebill/models/dbtest"
	"pvebill/modules/ippool"
)

var ctx = context.Background()

// replicas opens n handles on one fresh, migrated database: n pvebill processes sharing it.
func replicas(t *testing.T, dialect string, n int) []*models.DB {
	t.Helper()
	dsn := dbtest.DSN(t, dialect)
	out := make([]*models.DB, 0, n)
	for i := 0; i < n; i++ {
		db, err := models.Open(dialect, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		out = append(out, db)
	}
	if _, err := out[0].Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return out
}

func rangeSpec(name, first, last string) ippool.Spec {
	s := spec()
	s.Name, s.First, s.Last = name, first, last
	return s
}

func mustPut(t *testing.T, svc *ippool.Service, s ippool.Spec) ippool.Usage {
	t.Helper()
	u, _, err := svc.Put(ctx, s.Name, s)
	if err != nil {
		t.Fatalf("put %s: %v", s.Name, err)
	}
	return u
}

func mustAllocate(t *testing.T, svc *ippool.Service, pool, serviceID string) ippool.Address {
	t.Helper()
	a, err := svc.Allocate(ctx, pool, models.ServiceKey{ClientID: "c", ServiceID: serviceID})
	if err != nil {
		t.Fatalf("allocate %s for %s: %v", pool, serviceID, err)
	}
	return a
}

func ip(s string) netip.Addr { return netip.MustParseAddr(s) }

// 50 services allocate from one pool at the same time, through two replicas: 50 distinct
// addresses, and since nothing was released they are exactly the 50 lowest of the range.
func TestConcurrentAllocationsAreDistinct(t *testing.T) {
	for _, d := range dbtest.Dialects(t) {
		t.Run(d, func(t *testing.T) {
			dbs := replicas(t, d, 2)
			svcs := []*ippool.Service{ippool.NewService(dbs[0]), ippool.NewService(dbs[1])}
			mustPut(t, svcs[0], rangeSpec("pool-a", "203.0.113.10", "203.0.113.69"))
			const n = 50
			got := make([]ippool.Address, n)
			errs := make([]error, n)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := 0; i < n; i++ {
				wg.Add(1)
				go func(i int) {
					defer wg.Done()
					<-start
					got[i], errs[i] = svcs[i%2].Allocate(ctx, "pool-a", models.ServiceKey{ClientID: "c", ServiceID: fmt.Sprintf("svc-%02d", i)})
				}(i)
			}
			close(start)
			wg.Wait()
			seen := map[netip.Addr]string{}
			for i, a := range got {
				if errs[i] != nil {
					t.Fatalf("svc-%02d: %v", i, errs[i])
				}
				if other, dup := seen[a.IP]; dup {
					t.Fatalf("%s given to svc-%02d and %s", a.IP, i, other)
				}
				seen[a.IP] = fmt.Sprintf("svc-%02d", i)
			}
			for k := 0; k < n; k++ {
				want := ip(fmt.Sprintf("203.0.113.%d", 10+k))
				if _, ok := seen[want]; !ok {
					t.Errorf("%s not allocated: the lowest free address was skipped", want)
				}
			}
			// Each service finds its own address again, on either replica.
			for i := 0; i < n; i++ {
				addrs, err := svcs[(i+1)%2].Lookup(ctx, models.ServiceKey{ClientID: "c", ServiceID: fmt.Sprintf("svc-%02d", i)})
				if err != nil || len(addrs) != 1 || addrs[0].IP != got[i].IP {
					t.Fatalf("lookup svc-%02d: %v %+v, allocated %s", i, err, addrs, got[i].IP)
				}
			}
			u, err := svcs[0].Get(ctx, "pool-a")
			if err != nil || u.Used != n || u.Free() != 10 {
				t.Fatalf("usage: %v used %d free %d", err, u.Used, u.Free())
			}
		})
	}
}

// More services than addresses, at once: exactly as many succeed as there are addresses, the
// rest get ErrPoolExhausted (409, temporary), and no address is handed out twice.
func TestExhaustion(t *testing.T) {
	for _, d := range dbtest.Dialects(t) {
		t.Run(d, func(t *testing.T) {
			dbs := replicas(t, d, 2)
			svcs := []*ippool.Service{ippool.NewService(dbs[0]), ippool.NewService(dbs[1])}
			mustPut(t, svcs[0], rangeSpec("small", "203.0.113.10", "203.0.113.17"))
			const n = 20
			var mu sync.Mutex
			var ok []netip.Addr
			holders := map[string]netip.Addr{}
			exhausted := 0
			var wg sync.WaitGroup
			for i := 0; i < n; i++ {
				wg.Add(1)
				go func(i int) {
					defer wg.Done()
					a, err := svcs[i%2].Allocate(ctx, "small", models.ServiceKey{ClientID: "c", ServiceID: fmt.Sprintf("svc-%d", i)})
					mu.Lock()
					defer mu.Unlock()
					switch {
					case err == nil:
						ok = append(ok, a.IP)
						holders[fmt.Sprintf("svc-%d", i)] = a.IP
					case errors.Is(err, ippool.ErrPoolExhausted):
						exhausted++
					default:
						t.Errorf("svc-%d: %v", i, err)
					}
				}(i)
			}
			wg.Wait()
			slices.SortFunc(ok, func(a, b netip.Addr) int { return a.Compare(b) })
			if len(ok) != 8 || exhausted != 12 || len(slices.Compact(slices.Clone(ok))) != 8 {
				t.Fatalf("allocated %v, exhausted %d", ok, exhausted)
			}
			if ok[0] != ip("203.0.113.10") || ok[7] != ip("203.0.113.17") {
				t.Fatalf("allocated %v, want .10–.17", ok)
			}
			_, err := svcs[0].Allocate(ctx, "small", models.ServiceKey{ClientID: "c", ServiceID: "svc-late"})
			if !errors.Is(err, ippool.ErrPoolExhausted) {
				t.Fatalf("full pool: %v", err)
			}
			p := problemOf(t, err)
			if p.Status != 409 || p.Code != i18n.CodeIPPoolExhausted || p.Permanence != i18n.Temporary {
				t.Fatalf("problem %d %s %s", p.Status, p.Code, p.Permanence)
			}
			// A service that already holds an address still gets it from a full pool.
			for id, held := range holders {
				if a := mustAllocate(t, svcs[1], "small", id); a.IP != held {
					t.Fatalf("%s re-allocation gave %s, it holds %s", id, a.IP, held)
				}
			}
		})
	}
}

func TestAllocateIsIdempotentAndCarriesThePool(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		svc := ippool.NewService(db)
		mustPut(t, svc, spec())
		other := spec()
		other.Name, other.Bridge, other.CIDR, other.Gateway, other.First, other.Last, other.Nameservers =
			"pool-b", "vmbr1", "198.51.100.0/25", "198.51.100.126", "198.51.100.2", "198.51.100.100", []string{"198.51.100.53", "2001:db8::53"}
		mustPut(t, svc, other)

		a1 := mustAllocate(t, svc, "pool-a", "whmcs-1042")
		a2 := mustAllocate(t, svc, "pool-a", "whmcs-1042")
		if a1.IP != a2.IP || a1.IP != ip("203.0.113.10") {
			t.Fatalf("re-allocation: %s then %s", a1.IP, a2.IP)
		}
		want := ippool.Address{Pool: "pool-a", IP: ip("203.0.113.10"), PrefixLen: 24, Gateway: ip("203.0.113.1"),
			Nameservers: []string{"203.0.113.53"}, Bridge: "vmbr0"}
		if fmt.Sprint(a1) != fmt.Sprint(want) || a1.CIDR() != "203.0.113.10/24" {
			t.Fatalf("address %+v, want %+v", a1, want)
		}
		// One address per pool: the same service gets one in the other pool too.
		b := mustAllocate(t, svc, "pool-b", "whmcs-1042")
		if b.IP != ip("198.51.100.2") || b.CIDR() != "198.51.100.2/25" || b.Bridge != "vmbr1" || len(b.Nameservers) != 2 {
			t.Fatalf("pool-b address %+v", b)
		}
		got, err := svc.Lookup(ctx, models.ServiceKey{ClientID: "c", ServiceID: "whmcs-1042"})
		if err != nil || len(got) != 2 || got[0].Pool != "pool-a" || got[1].Pool != "pool-b" || got[0].IP != a1.IP || got[1].IP != b.IP {
			t.Fatalf("lookup %+v %v", got, err)
		}
		if u, _ := svc.Get(ctx, "pool-a"); u.Used != 1 {
			t.Fatalf("pool-a used %d after repeated allocation", u.Used)
		}
		none, err := svc.Lookup(ctx, models.ServiceKey{ClientID: "c", ServiceID: "nobody"})
		if err != nil || none == nil || len(none) != 0 {
			t.Fatalf("lookup of a service without addresses: %#v %v", none, err)
		}
		if _, err := svc.Allocate(ctx, "no-such-pool", models.ServiceKey{ClientID: "c", ServiceID: "whmcs-1042"}); !errors.Is(err, ippool.ErrNoSuchPool) {
			t.Fatalf("unknown pool: %v", err)
		}
		if p := problemOf(t, ippool.ErrNoSuchPool); p.Status != 404 || p.Code != i18n.CodeIPPoolNotFound {
			t.Fatalf("ErrNoSuchPool is %d %s", p.Status, p.Code)
		}
		if _, err := svc.Allocate(ctx, "pool-a", models.ServiceKey{ClientID: "c", ServiceID: ""}); err == nil {
			t.Fatal("empty service id allocated")
		}
	})
}

// A released address is free again, and the lowest free address is reused first.
func TestReleaseAndReuse(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		svc := ippool.NewService(db)
		mustPut(t, svc, spec())
		mustPut(t, svc, rangeSpec("pool-b", "203.0.113.10", "203.0.113.20"))
		for _, s := range []string{"s1", "s2", "s3"} {
			mustAllocate(t, svc, "pool-a", s)
		}
		mustAllocate(t, svc, "pool-b", "s2")
		if err := svc.Release(ctx, models.ServiceKey{ClientID: "c", ServiceID: "s2"}); err != nil {
			t.Fatal(err)
		}
		if addrs, _ := svc.Lookup(ctx, models.ServiceKey{ClientID: "c", ServiceID: "s2"}); len(addrs) != 0 {
			t.Fatalf("s2 still holds %+v", addrs)
		}
		// Released everywhere: both pools give .11 / .10 to the next service.
		if a := mustAllocate(t, svc, "pool-a", "s4"); a.IP != ip("203.0.113.11") {
			t.Fatalf("s4 got %s, want the released 203.0.113.11", a.IP)
		}
		if a := mustAllocate(t, svc, "pool-a", "s5"); a.IP != ip("203.0.113.13") {
			t.Fatalf("s5 got %s, want 203.0.113.13", a.IP)
		}
		if a := mustAllocate(t, svc, "pool-b", "s4"); a.IP != ip("203.0.113.10") {
			t.Fatalf("pool-b gave %s, want the released 203.0.113.10", a.IP)
		}
		// Releasing again, or a service that never held anything, is not an error.
		if err := svc.Release(ctx, models.ServiceKey{ClientID: "c", ServiceID: "s2"}); err != nil {
			t.Fatal(err)
		}
		if err := svc.Release(ctx, models.ServiceKey{ClientID: "c", ServiceID: "never"}); err != nil {
			t.Fatal(err)
		}
		// The other services kept theirs.
		for s, want := range map[string]string{"s1": "203.0.113.10", "s3": "203.0.113.12"} {
			if addrs, _ := svc.Lookup(ctx, models.ServiceKey{ClientID: "c", ServiceID: s}); len(addrs) != 1 || addrs[0].IP != ip(want) {
				t.Fatalf("%s holds %+v, want %s", s, addrs, want)
			}
		}
	})
}

func TestPutGetListRoundTrip(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		svc := ippool.NewService(db).WithClusters([]string{"default"})
		u, created, err := svc.Put(ctx, "pool-a", spec())
		if err != nil || !created {
			t.Fatalf("first put: created %v, %v", created, err)
		}
		if u.Source != ippool.SourceAPI || u.Used != 0 || u.Free() != 191 || u.CreatedAt.IsZero() {
			t.Fatalf("usage %+v", u)
		}
		s := spec()
		s.Name = "" // the path's name is taken
		s.Nameservers = []string{"192.0.2.53", "2001:db8::53"}
		u, created, err = svc.Put(ctx, "pool-a", s)
		if err != nil || created {
			t.Fatalf("second put: created %v, %v", created, err)
		}
		if !slices.Equal(u.Nameservers, []string{"192.0.2.53", "2001:db8::53"}) {
			t.Fatalf("nameservers %v", u.Nameservers)
		}
		// The body may not name another pool than the path.
		_, _, err = svc.Put(ctx, "pool-a", rangeSpec("pool-b", "203.0.113.10", "203.0.113.20"))
		if p := problemOf(t, err); p.Code != i18n.CodeValidationFailed || p.Fields[0].Field != "name" {
			t.Fatalf("name mismatch: %v", err)
		}
		// A cluster that is not configured is refused and nothing is written.
		bad := spec()
		bad.Name, bad.Cluster = "pool-x", "elsewhere"
		if _, _, err := svc.Put(ctx, "pool-x", bad); err == nil {
			t.Fatal("unknown cluster accepted")
		}
		if _, err := svc.Get(ctx, "pool-x"); !errors.Is(err, ippool.ErrNoSuchPool) {
			t.Fatalf("refused pool stored: %v", err)
		}
		mustPut(t, svc, rangeSpec("pool-0", "203.0.113.2", "203.0.113.3"))
		mustAllocate(t, svc, "pool-0", "svc-1")
		list, err := svc.List(ctx)
		if err != nil || len(list) != 2 || list[0].Name != "pool-0" || list[1].Name != "pool-a" {
			t.Fatalf("list %+v %v", list, err)
		}
		if list[0].Used != 1 || list[0].Free() != 1 || list[1].Used != 0 {
			t.Fatalf("usage %d/%d, %d", list[0].Used, list[0].Free(), list[1].Used)
		}
		if _, err := svc.Get(ctx, "nope"); !errors.Is(err, ippool.ErrNoSuchPool) {
			t.Fatalf("get unknown: %v", err)
		}
	})
}

// Import (the config file's ip_pools) is all or nothing and names the refused entry.
func TestImport(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		svc := ippool.NewService(db)
		bad := rangeSpec("pool-c", "203.0.113.10", "203.0.113.20")
		bad.Gateway = "203.0.113.15"
		_, err := svc.Import(ctx, []ippool.Spec{spec(), bad}, ippool.SourceFile)
		if err == nil || !strings.Contains(err.Error(), "ip_pools[1] (pool-c)") || !strings.Contains(err.Error(), "gateway:inside_range") {
			t.Fatalf("import error %v", err)
		}
		if list, _ := svc.List(ctx); len(list) != 0 {
			t.Fatalf("a refused import stored %d pools", len(list))
		}
		_, err = svc.Import(ctx, []ippool.Spec{spec(), spec()}, ippool.SourceFile)
		if err == nil || !strings.Contains(err.Error(), "the same name as ip_pools[0]") {
			t.Fatalf("duplicate names: %v", err)
		}
		pools, err := svc.Import(ctx, []ippool.Spec{spec(), rangeSpec("pool-b", "203.0.113.201", "203.0.113.254")}, ippool.SourceFile)
		if err != nil || len(pools) != 2 {
			t.Fatal(err)
		}
		u, _ := svc.Get(ctx, "pool-b")
		if u.Source != ippool.SourceFile {
			t.Fatalf("source %s", u.Source)
		}
		// A restart imports the same file again: an upsert, allocations untouched.
		a := mustAllocate(t, svc, "pool-b", "svc-1")
		if _, err := svc.Import(ctx, []ippool.Spec{spec(), rangeSpec("pool-b", "203.0.113.201", "203.0.113.254")}, ippool.SourceFile); err != nil {
			t.Fatal(err)
		}
		if got, _ := svc.Lookup(ctx, models.ServiceKey{ClientID: "c", ServiceID: "svc-1"}); len(got) != 1 || got[0].IP != a.IP {
			t.Fatalf("after re-import: %+v", got)
		}
		// A file that shrinks a pool below its allocations is refused like the API's PUT.
		_, err = svc.Import(ctx, []ippool.Spec{rangeSpec("pool-b", "203.0.113.202", "203.0.113.254")}, ippool.SourceFile)
		if p := problemOf(t, err); p.Code != i18n.CodeIPPoolInUse {
			t.Fatalf("shrinking import: %v", err)
		}
	})
}

// Changes that would take addresses away from services are refused; the pool stays as it was.
func TestShrinkAndDeleteRefusedWhileInUse(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		svc := ippool.NewService(db)
		mustPut(t, svc, spec())
		for _, s := range []string{"s1", "s2", "s3"} { // .10 .11 .12
			mustAllocate(t, svc, "pool-a", s)
		}
		refused := []ippool.Spec{
			rangeSpec("pool-a", "203.0.113.10", "203.0.113.11"),  // drops .12
			rangeSpec("pool-a", "203.0.113.11", "203.0.113.200"), // drops .10
			rangeSpec("pool-a", "203.0.113.100", "203.0.113.200"),
		}
		moved := spec() // another network altogether
		moved.CIDR, moved.Gateway, moved.First, moved.Last = "198.51.100.0/24", "198.51.100.1", "198.51.100.10", "198.51.100.200"
		refused = append(refused, moved)
		for _, s := range refused {
			_, _, err := svc.Put(ctx, "pool-a", s)
			p := problemOf(t, err)
			if p.Status != 409 || p.Code != i18n.CodeIPPoolInUse || p.Permanence != i18n.Temporary || p.Params["pool"] != "pool-a" {
				t.Fatalf("%s–%s: %v", s.First, s.Last, err)
			}
			if !strings.Contains(p.Detail("en"), "pool-a") {
				t.Fatalf("detail %q", p.Detail("en"))
			}
		}
		_, _, err := svc.Put(ctx, "pool-a", rangeSpec("pool-a", "203.0.113.11", "203.0.113.12"))
		if p := problemOf(t, err); p.Params["count"] != "1" {
			t.Fatalf("count %q, want 1 (only .10 falls outside)", p.Params["count"])
		}
		u, _ := svc.Get(ctx, "pool-a")
		if u.First != ip("203.0.113.10") || u.Last != ip("203.0.113.200") || u.Prefix.String() != "203.0.113.0/24" {
			t.Fatalf("a refused change was written: %+v", u.Pool)
		}
		// Shrinking down to exactly the allocated addresses, growing, and changing the gateway
		// and nameservers are fine; the services see the new gateway.
		mustPut(t, svc, rangeSpec("pool-a", "203.0.113.10", "203.0.113.12"))
		s := rangeSpec("pool-a", "203.0.113.5", "203.0.113.250")
		s.Gateway, s.Nameservers = "203.0.113.254", []string{"192.0.2.53"}
		mustPut(t, svc, s)
		if got, _ := svc.Lookup(ctx, models.ServiceKey{ClientID: "c", ServiceID: "s1"}); got[0].Gateway != ip("203.0.113.254") || got[0].Nameservers[0] != "192.0.2.53" {
			t.Fatalf("lookup after change %+v", got[0])
		}
		if a := mustAllocate(t, svc, "pool-a", "s4"); a.IP != ip("203.0.113.5") {
			t.Fatalf("grown pool gave %s, want its new first 203.0.113.5", a.IP)
		}

		err = svc.Delete(ctx, "pool-a")
		p := problemOf(t, err)
		if p.Status != 409 || p.Code != i18n.CodeIPPoolInUse || p.Params["count"] != "4" {
			t.Fatalf("delete in use: %v", err)
		}
		for _, s := range []string{"s1", "s2", "s3", "s4"} {
			if err := svc.Release(ctx, models.ServiceKey{ClientID: "c", ServiceID: s}); err != nil {
				t.Fatal(err)
			}
		}
		if err := svc.Delete(ctx, "pool-a"); err != nil {
			t.Fatalf("delete after release: %v", err)
		}
		if err := svc.Delete(ctx, "pool-a"); !errors.Is(err, ippool.ErrNoSuchPool) {
			t.Fatalf("second delete: %v", err)
		}
	})
}

// The pool row lock serialises allocations: while another transaction holds the pool row (FOR
// UPDATE on MySQL; a write transaction on SQLite), an allocation on another replica waits, and
// it goes on once that transaction ends.
func TestAllocationWaitsForThePoolLock(t *testing.T) {
	for _, d := range dbtest.Dialects(t) {
		t.Run(d, func(t *testing.T) {
			dbs := replicas(t, d, 2)
			mustPut(t, ippool.NewService(dbs[0]), spec())
			locked := make(chan struct{})
			release := make(chan struct{})
			holder := make(chan error, 1)
			go func() {
				holder <- dbtest.Transaction(dbs[0], func(tx *gorm.DB) error {
					var p models.IPPool
					q := tx.Where("name = ?", "pool-a")
					if d == models.MySQL {
						q = q.Clauses(clause.Locking{Strength: "UPDATE"})
					} else if err := tx.Exec("UPDATE ip_pools SET bridge = bridge WHERE name = ?", "pool-a").Error; err != nil {
						return err
					}
					if err := q.Take(&p).Error; err != nil {
						return err
					}
					close(locked)
					<-release
					return tx.Create(&models.IPAllocation{Pool: "pool-a", IP: int64(203<<24 | 113<<8 | 10), ServiceID: "holder", CreatedAt: models.Now()}).Error
				})
			}()
			<-locked
			done := make(chan ippool.Address, 1)
			failed := make(chan error, 1)
			go func() {
				a, err := ippool.NewService(dbs[1]).Allocate(ctx, "pool-a", models.ServiceKey{ClientID: "c", ServiceID: "waiter"})
				if err != nil {
					failed <- err
					return
				}
				done <- a
			}()
			select {
			case a := <-done:
				t.Fatalf("allocation went past the held pool lock: %s", a.IP)
			case err := <-failed:
				t.Fatalf("allocation failed while waiting: %v", err)
			case <-time.After(300 * time.Millisecond):
			}
			close(release)
			if err := <-holder; err != nil {
				t.Fatal(err)
			}
			select {
			case a := <-done:
				// The holder's row (written under the lock) is seen: the waiter gets the next one.
				if a.IP != ip("203.0.113.11") {
					t.Fatalf("waiter got %s, want 203.0.113.11 (the holder took .10)", a.IP)
				}
			case err := <-failed:
				t.Fatal(err)
			case <-time.After(15 * time.Second):
				t.Fatal("allocation still blocked after the lock was released")
			}
		})
	}
}

// A seeded random walk of allocations, repeats and releases against a model of the pool: every
// new allocation is the lowest address nobody holds, a repeat returns the held address, and the
// pool is full exactly when the model says so.
func TestAllocationFollowsTheModel(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		svc := ippool.NewService(db)
		mustPut(t, svc, rangeSpec("pool-a", "203.0.113.10", "203.0.113.29")) // 20 addresses
		held := map[string]int{}                                             // service → host number
		taken := map[int]string{}
		full, freed, reused := 0, 0, 0
		seed := uint64(42)
		rnd := func(n int) int { // a fixed linear congruential sequence: the same walk every run
			seed = seed*6364136223846793005 + 1442695040888963407
			return int((seed >> 33) % uint64(n))
		}
		for step := 0; step < 300; step++ {
			id := fmt.Sprintf("svc-%d", rnd(30))
			if rnd(3) == 0 {
				if err := svc.Release(ctx, models.ServiceKey{ClientID: "c", ServiceID: id}); err != nil {
					t.Fatal(err)
				}
				if h, ok := held[id]; ok {
					delete(taken, h)
					delete(held, id)
					freed++
				}
				continue
			}
			a, err := svc.Allocate(ctx, "pool-a", models.ServiceKey{ClientID: "c", ServiceID: id})
			want, had := held[id]
			if !had {
				want = -1
				for h := 10; h <= 29; h++ {
					if _, ok := taken[h]; !ok {
						want = h
						break
					}
				}
			}
			if want < 0 {
				if !errors.Is(err, ippool.ErrPoolExhausted) {
					t.Fatalf("step %d: %s on a full pool: %v %s", step, id, err, a.IP)
				}
				full++
				continue
			}
			if err != nil || a.IP != ip(fmt.Sprintf("203.0.113.%d", want)) {
				t.Fatalf("step %d: %s got %s (%v), want 203.0.113.%d", step, id, a.IP, err, want)
			}
			if had {
				reused++
			}
			held[id], taken[want] = want, id
		}
		if full == 0 || freed == 0 || reused == 0 {
			t.Fatalf("the walk missed a case: %d full, %d freed, %d repeats", full, freed, reused)
		}
		u, err := svc.Get(ctx, "pool-a")
		if err != nil || u.Used != int64(len(held)) {
			t.Fatalf("used %d, model holds %d (%v)", u.Used, len(held), err)
		}
	})
}
