package models_test

import (
	"errors"
	"net/netip"
	"slices"
	"sync/atomic"
	"testing"

	"gorm.io/gorm"

	"pvebill/models"
	"pvebill/models/dbtest"
)

// The service view reads the service and the addresses it holds in one statement, and shows
// another client's service to nobody but its owner — even when both clients use the same
// service id, whose addresses stay apart (R46).
func TestGetClientServiceWithIPsIsOneStatement(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		g := db.Gorm.WithContext(ctx)
		for _, p := range []models.IPPool{
			{Name: "a", Cluster: "c", Bridge: "vmbr0", CIDR: "198.51.100.0/24", FirstIP: 0xC6336410, LastIP: 0xC6336420, Nameservers: "[]", Source: "api"},
			{Name: "b", Cluster: "c", Bridge: "vmbr0", CIDR: "203.0.113.0/24", FirstIP: 0xCB007110, LastIP: 0xCB007120, Nameservers: "[]", Source: "api"},
		} {
			p.CreatedAt, p.UpdatedAt = models.Now(), models.Now()
			if err := g.Create(&p).Error; err != nil {
				t.Fatal(err)
			}
		}
		for _, s := range []*models.Service{
			{ServiceID: "with-ips", ClientID: "alice", Plan: "p", GuestType: "container", Cluster: "c", State: "active"},
			{ServiceID: "no-ips", ClientID: "alice", Plan: "p", GuestType: "container", Cluster: "c", State: "active"},
			{ServiceID: "bobs", ClientID: "bob", Plan: "p", GuestType: "container", Cluster: "c", State: "active"},
			{ServiceID: "with-ips", ClientID: "bob", Plan: "p", GuestType: "container", Cluster: "c", State: "active"},
		} {
			if err := models.InsertService(ctx, g, s); err != nil {
				t.Fatal(err)
			}
		}
		for _, a := range []models.IPAllocation{
			{Pool: "b", IP: 0xCB007111, ClientID: "alice", ServiceID: "with-ips"},
			{Pool: "a", IP: 0xC6336412, ClientID: "alice", ServiceID: "with-ips"},
			{Pool: "a", IP: 0xC6336413, ClientID: "bob", ServiceID: "bobs"},
			{Pool: "a", IP: 0xC6336414, ClientID: "bob", ServiceID: "with-ips"},
		} {
			a.CreatedAt = models.Now()
			if err := g.Create(&a).Error; err != nil {
				t.Fatal(err)
			}
		}
		var stmts atomic.Int64
		count := func(*gorm.DB) { stmts.Add(1) }
		if err := db.Gorm.Callback().Query().After("gorm:query").Register("test:count", count); err != nil {
			t.Fatal(err)
		}
		if err := db.Gorm.Callback().Row().After("gorm:row").Register("test:count", count); err != nil {
			t.Fatal(err)
		}

		svc, held, err := models.GetClientServiceWithIPs(ctx, db.Gorm, "alice", "with-ips")
		ips := addrsOf(held)
		if err != nil {
			t.Fatal(err)
		}
		want := []netip.Addr{netip.MustParseAddr("198.51.100.18"), netip.MustParseAddr("203.0.113.17")}
		if svc.ServiceID != "with-ips" || svc.ClientID != "alice" || !slices.Equal(ips, want) {
			t.Fatalf("got %s/%s %v, want with-ips/alice %v", svc.ClientID, svc.ServiceID, ips, want)
		}
		if n := stmts.Load(); n != 1 {
			t.Fatalf("%d statements for one service view, want 1", n)
		}
		if _, ips, err := models.GetClientServiceWithIPs(ctx, db.Gorm, "alice", "no-ips"); err != nil || len(ips) != 0 {
			t.Fatalf("service without addresses: %v %v", ips, err)
		}
		bobs, held, err := models.GetClientServiceWithIPs(ctx, db.Gorm, "bob", "with-ips")
		if err != nil || bobs.ClientID != "bob" || bobs.ID == svc.ID || !slices.Equal(addrsOf(held), []netip.Addr{netip.MustParseAddr("198.51.100.20")}) {
			t.Fatalf("bob's with-ips: %+v %v %v", bobs, ips, err)
		}
		for _, tc := range [][2]string{{"alice", "bobs"}, {"carol", "with-ips"}, {"alice", "missing"}} {
			if _, _, err := models.GetClientServiceWithIPs(ctx, db.Gorm, tc[0], tc[1]); !errors.Is(err, models.ErrNotFound) {
				t.Fatalf("%s reading %s: err = %v, want ErrNotFound", tc[0], tc[1], err)
			}
		}
	})
}

func addrsOf(held []models.HeldIP) []netip.Addr {
	out := make([]netip.Addr, 0, len(held))
	for _, h := range held {
		out = append(out, h.Addr)
	}
	return out
}
