package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"pvebill/models"
	"pvebill/models/dbtest"
	"pvebill/modules/pve"
)

// otherNode is the demo cluster's node that is not n.
func otherNode(n string) string {
	if n == "pve1" {
		return "pve2"
	}
	return "pve1"
}

// migrateOutside moves a service's guest to the other node through Proxmox's API, as an
// operator in Proxmox's own interface (or HA) would, and returns the new node.
func migrateOutside(t *testing.T, h *svcHarness, kind, node string, vmid int) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	c := h.sim.Client(t, nil)
	to := otherNode(node)
	var upid string
	var err error
	yes := true
	if kind == "container" {
		upid, err = c.Node(node).LXC(vmid).MigrateAsync(ctx, pve.LXCMigrateRequest{Target: to, Restart: &yes})
	} else {
		upid, err = c.Node(node).QEMU(vmid).MigrateAsync(ctx, pve.QEMUMigrateRequest{Target: to, Online: &yes,
			WithLocalDisks: &yes})
	}
	if err == nil {
		_, err = c.Wait(ctx, upid)
	}
	if err != nil {
		t.Fatalf("migrate %d to %s: %v", vmid, to, err)
	}
	return to
}

// R53: a guest moved outside pvebill is found by its vmid for every operation, and the
// service's node follows it: the view (live power from the new node), suspend, unsuspend, a
// backup (the container's) and terminate all address the guest where it is now, and no write
// goes to the node it left.
func TestGuestMovedOutsidePvebill(t *testing.T) {
	for _, dialect := range dbtest.Dialects(t) {
		for _, k := range []struct{ kind, plan string }{{"container", "ct-bk"}, {"vm", "vm-2g"}} {
			t.Run(dialect+"/"+k.kind, func(t *testing.T) {
				h := newServicesHarness(t, dialect)
				if r := h.signed("PUT", "/v1/admin/plans/ct-bk", "ops", adminSecret, backupPlanBody("local", nil)); r.Status != 201 {
					t.Fatalf("plan with backups: %d %s", r.Status, r.Body)
				}
				id := "moved-" + k.kind
				succeeded(t, h.billing("POST", "/v1/services?wait=20", createBody(id, k.plan)))
				svc := h.service(id)
				from, vmid := svc["node"].(string), int(svc["vmid"].(float64))
				to := migrateOutside(t, h, k.kind, from, vmid)
				h.sim.ResetLog()

				if s := h.service(id); s["node"] != to || s["power"] != "running" {
					t.Fatalf("view after the move: node %v power %v, want %s running", s["node"], s["power"], to)
				}
				row, err := h.db.GetService(t.Context(), models.ServiceKey{ClientID: "whmcs", ServiceID: id})
				if err != nil || row.Node != to {
					t.Fatalf("stored node %q (%v), want %s", row.Node, err, to)
				}
				succeeded(t, h.billing("POST", "/v1/services/"+id+"/suspend?wait=20", []byte(`{"reason":"unpaid"}`)))
				succeeded(t, h.billing("POST", "/v1/services/"+id+"/unsuspend?wait=20", nil))
				if s := h.service(id); s["state"] != "active" || s["power"] != "running" || s["node"] != to {
					t.Fatalf("after suspend and unsuspend: %v", s)
				}
				if k.kind == "container" {
					succeeded(t, h.billing("POST", "/v1/services/"+id+"/backups?wait=20", nil))
					dumps := 0
					for _, r := range h.sim.Requests() {
						if r.Method == "POST" && r.Path == "/nodes/"+to+"/vzdump" {
							dumps++
						}
					}
					if dumps != 1 {
						t.Errorf("%d vzdump calls on the guest's new node %s, want 1", dumps, to)
					}
				}
				// Moved back by hand while stopped: the terminate still finds it.
				back := migrateOutside(t, h, k.kind, to, vmid)
				h.sim.ResetLog()
				succeeded(t, h.billing("POST", "/v1/services/"+id+"/terminate?wait=20", nil))
				if _, ok := h.sim.Guest(vmid); ok {
					t.Fatal("guest still exists after terminate")
				}
				for _, r := range h.sim.Requests() {
					if r.Method != "GET" && strings.HasPrefix(r.Path, "/nodes/"+to+"/") {
						t.Errorf("a write went to the node the guest had left: %s %s", r.Method, r.Path)
					}
				}
				if back != from {
					t.Fatalf("moved back to %s, want %s", back, from)
				}
			})
		}
	}
}
