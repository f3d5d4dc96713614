package main

import (
	"io"
	"path/filepath"
	"strings"
	"testing"

	"pvebill/modules/stack"

	"pvebill/models"
	"pvebill/modules/ippool"
	"pvebill/server/config"
)

// The config file's ip_pools are upserted at start (source file); a refused entry stops the
// start and names itself.
func TestConfigIPPoolsUpsertedAtStart(t *testing.T) {
	ctx := t.Context()
	cfg := config.Defaults()
	cfg.Database.DSN = filepath.Join(t.TempDir(), "p.db")
	cfg.IPPools = []config.IPPool{{Name: "pool-a", Cluster: "default", Bridge: "vmbr0", CIDR: "203.0.113.0/24",
		Gateway: "203.0.113.1", First: "203.0.113.10", Last: "203.0.113.200", Nameservers: []string{"203.0.113.53"}}}
	log := newLogger("text", "error", io.Discard)

	start := func() *app {
		t.Helper()
		a, err := buildApp(ctx, cfg, log, stack.MigrateSchema)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	a := start()
	svc := ippool.NewService(a.db)
	addr, err := svc.Allocate(ctx, "pool-a", models.ServiceKey{ClientID: "c", ServiceID: "svc-1"})
	if err != nil {
		t.Fatal(err)
	}
	a.db.Close()

	// A restart with a grown range keeps the allocation and updates the pool.
	cfg.IPPools[0].Last = "203.0.113.250"
	a = start()
	svc = ippool.NewService(a.db)
	list, err := svc.List(ctx)
	if err != nil || len(list) != 1 || list[0].Source != ippool.SourceFile || list[0].Last.String() != "203.0.113.250" || list[0].Used != 1 {
		t.Fatalf("after restart: %+v %v", list, err)
	}
	if got, _ := svc.Lookup(ctx, models.ServiceKey{ClientID: "c", ServiceID: "svc-1"}); len(got) != 1 || got[0].IP != addr.IP {
		t.Fatalf("allocation after restart: %+v", got)
	}
	a.db.Close()

	// An invalid pool refuses the start, naming the entry and the field.
	cfg.IPPools[0].Gateway = "203.0.113.20"
	_, err = buildApp(ctx, cfg, log, stack.MigrateSchema)
	if err == nil || !strings.Contains(err.Error(), "ip_pools[0] (pool-a)") || !strings.Contains(err.Error(), "gateway") {
		t.Fatalf("invalid pool at start: %v", err)
	}
}

// R54: an IPv6 pool declared in the config file, with its assign_prefix, is upserted at start and
// hands out prefixes of that length.
func TestConfigIPv6PoolUpsertedAtStart(t *testing.T) {
	ctx := t.Context()
	cfg := config.Defaults()
	cfg.Database.DSN = filepath.Join(t.TempDir(), "p.db")
	bits := 80
	cfg.IPPools = []config.IPPool{{Name: "pool-6", Cluster: "default", Bridge: "vmbr0", CIDR: "2001:db8::/48",
		Gateway: "fe80::1", AssignPrefix: &bits}}
	a, err := buildApp(ctx, cfg, newLogger("text", "error", io.Discard), stack.MigrateSchema)
	if err != nil {
		t.Fatal(err)
	}
	defer a.db.Close()
	addr, err := ippool.NewService(a.db).Allocate(ctx, "pool-6", models.ServiceKey{ClientID: "c", ServiceID: "svc-1"})
	if err != nil || addr.Assigned.String() != "2001:db8::/80" || addr.CIDR() != "2001:db8::1/80" {
		t.Fatalf("allocation %+v %v", addr, err)
	}
}
