package ippool_test

import (
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"testing"

	"pvebill/i18n"
	"pvebill/models"
	"pvebill/models/dbtest"
	"pvebill/modules/ippool"
)

func spec6(name, cidr string, bits *int) ippool.Spec {
	return ippool.Spec{Name: name, Cluster: "default", Bridge: "vmbr0", CIDR: cidr, Gateway: "fe80::1",
		Nameservers: []string{"2001:db8::53"}, AssignPrefix: bits}
}

func intp(v int) *int { return &v }

// R54: a v6 cidr makes an IPv6 pool of /64s by default, family from the cidr, with a link-local
// gateway; first/last do not apply, assign_prefix must be 64–128 and fit the index column.
func TestValidateIPv6Pool(t *testing.T) {
	p, err := ippool.Validate(spec6("v6", "2001:db8::/48", nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.Family() != "ipv6" || p.AssignPrefix != 64 || p.Size() != 65536 || p.FirstIndex != 0 || p.Gateway != ip("fe80::1") {
		t.Fatalf("pool %+v family %s size %d", p, p.Family(), p.Size())
	}
	if p4, _ := ippool.Validate(spec(), nil); p4.Family() != "ipv4" {
		t.Fatalf("v4 family %s", p4.Family())
	}
	// A /124 of /128s: 16 addresses, index 0 (the Subnet-Router anycast address) is not handed out.
	small, err := ippool.Validate(spec6("small", "2001:db8::/124", intp(128)), nil)
	if err != nil || small.Size() != 15 || small.FirstIndex != 1 {
		t.Fatalf("/124 of /128: %+v %v", small, err)
	}
	bad := func(s ippool.Spec, field string, code i18n.FieldCode) {
		t.Helper()
		_, err := ippool.Validate(s, nil)
		p := problemOf(t, err)
		if p.Status != 422 {
			t.Fatalf("%+v: status %d", s, p.Status)
		}
		for _, f := range p.Fields {
			if f.Field == field && f.Code == code {
				return
			}
		}
		t.Fatalf("%+v: fields %+v, want %s %s", s, p.Fields, field, code)
	}
	withRange := spec6("v6", "2001:db8::/48", nil)
	withRange.First, withRange.Last = "2001:db8::10", "2001:db8::20"
	bad(withRange, "first", i18n.FieldNotForFamily)
	bad(withRange, "last", i18n.FieldNotForFamily)
	bad(spec6("v6", "2001:db8::/48", intp(56)), "assign_prefix", i18n.FieldTooSmall)
	bad(spec6("v6", "2001:db8::/48", intp(129)), "assign_prefix", i18n.FieldTooLarge)
	bad(spec6("v6", "2001:db8::/64", intp(128)), "assign_prefix", i18n.FieldTooLarge)
	bad(spec6("v6", "2001:db8::1/48", nil), "cidr", i18n.FieldNotCanonical)
	inside := spec6("v6", "2001:db8::/48", nil)
	inside.Gateway = "2001:db8::1"
	bad(inside, "gateway", i18n.FieldInsideRange)
	v4gw := spec6("v6", "2001:db8::/48", nil)
	v4gw.Gateway = "192.0.2.1"
	bad(v4gw, "gateway", i18n.FieldPattern)
	v4 := spec()
	v4.AssignPrefix = intp(64)
	bad(v4, "assign_prefix", i18n.FieldNotForFamily)
}

// R54: services get consecutive /64s of a /48, the guest address is ::1 of the prefix, the
// allocation row holds the prefix's index, and a released prefix is handed out again.
func TestIPv6AllocationAndRelease(t *testing.T) {
	for _, d := range dbtest.Dialects(t) {
		t.Run(d, func(t *testing.T) {
			db := replicas(t, d, 1)[0]
			svc := ippool.NewService(db)
			u := mustPut(t, svc, spec6("v6", "2001:db8::/48", nil))
			if u.Family() != "ipv6" || u.Size() != 65536 {
				t.Fatalf("pool %+v", u)
			}
			a := mustAllocate(t, svc, "v6", "s0")
			b := mustAllocate(t, svc, "v6", "s1")
			if a.Assigned.String() != "2001:db8::/64" || a.IP != ip("2001:db8::1") || a.CIDR() != "2001:db8::1/64" {
				t.Fatalf("first: %+v %s", a, a.CIDR())
			}
			if b.Assigned.String() != "2001:db8:0:1::/64" || b.IP != ip("2001:db8:0:1::1") {
				t.Fatalf("second: %+v", b)
			}
			var rows []models.IPAllocation
			if err := dbtest.Query(db, &rows, "SELECT * FROM ip_allocations ORDER BY ip"); err != nil || len(rows) != 2 || rows[0].IP != 0 || rows[1].IP != 1 {
				t.Fatalf("rows %+v %v", rows, err)
			}
			if err := svc.Release(ctx, models.ServiceKey{ClientID: "c", ServiceID: "s0"}); err != nil {
				t.Fatal(err)
			}
			if c := mustAllocate(t, svc, "v6", "s2"); c.Assigned != a.Assigned {
				t.Fatalf("released prefix not reused: %s", c.Assigned)
			}
			// Changing the cidr or assign_prefix of a pool with assignments moves them: refused.
			_, _, err := svc.Put(ctx, "v6", spec6("v6", "2001:db8::/48", intp(80)))
			if p := problemOf(t, err); p.Code != i18n.CodeIPPoolInUse {
				t.Fatalf("change assign_prefix in use: %v", err)
			}
		})
	}
}

// R54: a /124 of /128s holds 15 usable addresses (::0 is not handed out); 40 services at once
// through two replicas get 15 distinct addresses and 25 ip_pool_exhausted (409).
func TestIPv6SmallPoolExhaustion(t *testing.T) {
	for _, d := range dbtest.Dialects(t) {
		t.Run(d, func(t *testing.T) {
			dbs := replicas(t, d, 2)
			svcs := []*ippool.Service{ippool.NewService(dbs[0]), ippool.NewService(dbs[1])}
			mustPut(t, svcs[0], spec6("small6", "2001:db8::/124", intp(128)))
			got, exhausted := allocateAll(t, svcs, "small6", 40)
			if len(got) != 15 || exhausted != 25 {
				t.Fatalf("%d allocated, %d exhausted", len(got), exhausted)
			}
			for i := 1; i <= 15; i++ {
				want := ip(fmt.Sprintf("2001:db8::%x", i))
				if _, ok := got[want]; !ok {
					t.Fatalf("%s not allocated; got %v", want, got)
				}
			}
			_, err := svcs[1].Allocate(ctx, "small6", models.ServiceKey{ClientID: "c", ServiceID: "late"})
			if p := problemOf(t, err); p.Status != 409 || p.Code != i18n.CodeIPPoolExhausted {
				t.Fatalf("full pool: %v", err)
			}
		})
	}
}

// R54, R51: 200 concurrent creates through two replicas on one database get 200 distinct /64s
// of a /48, the 200 lowest.
func TestIPv6ConcurrentAllocationsAreDistinct(t *testing.T) {
	for _, d := range dbtest.Dialects(t) {
		t.Run(d, func(t *testing.T) {
			dbs := replicas(t, d, 2)
			svcs := []*ippool.Service{ippool.NewService(dbs[0]), ippool.NewService(dbs[1])}
			mustPut(t, svcs[0], spec6("v6", "2001:db8::/48", nil))
			got, exhausted := allocateAll(t, svcs, "v6", 200)
			if len(got) != 200 || exhausted != 0 {
				t.Fatalf("%d distinct, %d exhausted", len(got), exhausted)
			}
			for i := 0; i < 200; i++ {
				if _, ok := got[ip(fmt.Sprintf("2001:db8:0:%x::1", i))]; !ok {
					t.Fatalf("prefix %d skipped", i)
				}
			}
		})
	}
}

// allocateAll allocates n services at once, alternating replicas, and returns the distinct
// addresses with their holders (a duplicate fails the test) and the count of exhausted answers.
func allocateAll(t *testing.T, svcs []*ippool.Service, pool string, n int) (map[netip.Addr]string, int) {
	t.Helper()
	var mu sync.Mutex
	var wg sync.WaitGroup
	got := map[netip.Addr]string{}
	exhausted := 0
	start := make(chan struct{})
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			<-start
			id := fmt.Sprintf("svc-%03d", i)
			a, err := svcs[i%len(svcs)].Allocate(ctx, pool, models.ServiceKey{ClientID: "c", ServiceID: id})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				if other, dup := got[a.IP]; dup {
					t.Errorf("%s given to %s and %s", a.IP, id, other)
				}
				got[a.IP] = id
			case errors.Is(err, ippool.ErrPoolExhausted):
				exhausted++
			default:
				t.Errorf("%s: %v", id, err)
			}
		}(i)
	}
	close(start)
	wg.Wait()
	return got, exhausted
}
