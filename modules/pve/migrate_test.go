package pve

import (
	"errors"
	"strings"
	"testing"

	"pvebill/modules/pve/pvesim"
)

// R53: TestSimMigrate moves guests between nodes the way Proxmox does (reference §17): the
// refusals before the task, a task on the source node, the guest addressed under the target
// afterwards (the old node's path answers not found), and its local disks moved with it.
func TestSimMigrate(t *testing.T) {
	sim, c := newSim(t)
	ctx := testContext(t)

	// A running container moves only in restart mode.
	ct := c.Node("pve1").LXC(200)
	if _, err := ct.MigrateAsync(ctx, LXCMigrateRequest{Target: "pve2"}); err == nil ||
		!strings.Contains(err.Error(), "without --online or --restart") {
		t.Fatalf("running container without restart: %v", err)
	}
	if _, err := ct.MigrateAsync(ctx, LXCMigrateRequest{Target: "pve1", Restart: Ptr(true)}); err == nil {
		t.Fatal("a migration to the guest's own node was accepted")
	}
	upid, err := ct.MigrateAsync(ctx, LXCMigrateRequest{Target: "pve2", Restart: Ptr(true), Timeout: Ptr(60)})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(upid, "UPID:pve1:") || !strings.Contains(upid, ":vzmigrate:200:") {
		t.Errorf("upid %s: the task runs on the source node", upid)
	}
	mustOK(c.Wait(ctx, upid))(t)
	g, _ := sim.Guest(200)
	if g.Node != "pve2" || g.Status != "running" || g.Lock != "" {
		t.Errorf("after the migration: node %s status %s lock %q", g.Node, g.Status, g.Lock)
	}
	if _, err := ct.Status(ctx); !errors.Is(err, ErrNotFound) {
		t.Errorf("status under the old node: %v, want not found", err)
	}
	if st, err := c.Node("pve2").LXC(200).Status(ctx); err != nil || st.Status != "running" {
		t.Errorf("status under the new node: %+v %v", st, err)
	}

	// A stopped VM moves offline; its local disks and cloud-init drive go along.
	vm := c.Node("pve1").QEMU(300)
	pre := must(vm.MigratePrecondition(ctx))(t)
	if bool(pre.Running) || len(pre.LocalDisks) != 2 || len(pre.LocalResources) != 0 ||
		len(pre.AllowedNodes) != 1 || pre.AllowedNodes[0] != "pve2" {
		t.Errorf("precondition %+v", pre)
	}
	mustOK(vm.Start(ctx))(t)
	if _, err := vm.MigrateAsync(ctx, QEMUMigrateRequest{Target: "pve2"}); err == nil ||
		!strings.Contains(err.Error(), "without --online") {
		t.Fatalf("running VM without online: %v", err)
	}
	// Online without with-local-disks fails in the task and leaves the VM where it was.
	if _, err := c.Wait(ctx, must(vm.MigrateAsync(ctx, QEMUMigrateRequest{Target: "pve2", Online: Ptr(true)}))(t)); err == nil ||
		!strings.Contains(err.Error(), "with-local-disks") {
		t.Fatalf("online with local disks: %v", err)
	}
	if g, _ := sim.Guest(300); g.Node != "pve1" || g.Lock != "" || g.Status != "running" {
		t.Errorf("after the failed migration: %+v", g)
	}
	mustOK(c.Wait(ctx, must(vm.MigrateAsync(ctx, QEMUMigrateRequest{Target: "pve2", Online: Ptr(true), WithLocalDisks: Ptr(true)}))(t)))(t)
	if g, _ := sim.Guest(300); g.Node != "pve2" || g.Status != "running" {
		t.Errorf("after the live migration: node %s status %s", g.Node, g.Status)
	}
	if _, err := c.Node("pve2").QEMU(300).Config(ctx); err != nil {
		t.Errorf("config under the new node: %v", err)
	}

	// A VM with a local device cannot move.
	noErr(t, sim.SeedGuest(pvesim.Guest{VMID: 301, Type: "qemu", Node: "pve1", Config: map[string]string{
		"name": "usb-vm", "memory": "512", "usb0": "host=1234:5678"}}))
	if _, err := c.Wait(ctx, must(c.Node("pve1").QEMU(301).MigrateAsync(ctx, QEMUMigrateRequest{Target: "pve2"}))(t)); err == nil ||
		!strings.Contains(err.Error(), "local devices: usb0") {
		t.Errorf("local device: %v", err)
	}
	if pre := must(c.Node("pve1").QEMU(301).MigratePrecondition(ctx))(t); len(pre.LocalResources) != 1 || pre.LocalResources[0] != "usb0" {
		t.Errorf("precondition of a VM with a USB device: %+v", pre)
	}
}
