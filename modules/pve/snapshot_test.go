package pve

import (
	"strings"
	"testing"
	"time"

	"pvebill/modules/pve/pvesim"
)

// R44: TestSimSnapshots drives the snapshot calls against the simulator: the locks held while the
// tasks run, the list without "current", the parent chain, a rollback that stops the guest, the
// reserved names, a storage that cannot snapshot, and a destroy that takes the snapshots along
// (docs/proxmox.md §15).
func TestSimSnapshots(t *testing.T) {
	sim, c := newSim(t)
	ctx := testContext(t)
	ct := c.Node("pve1").LXC(200)
	snaps := ct.Snapshots()

	sim.SetTaskDuration("vzsnapshot", time.Hour)
	upid, err := snaps.CreateAsync(ctx, SnapshotCreateRequest{SnapName: "b_first", Description: "before"})
	if err != nil {
		t.Fatal(err)
	}
	if _, lock, _ := sim.Snapshots(200); lock != "snapshot" {
		t.Errorf("lock while the create runs: %q", lock)
	}
	sim.Advance(time.Hour)
	if _, err := c.Wait(ctx, upid); err != nil {
		t.Fatal(err)
	}
	sim.SetTaskDuration("vzsnapshot", 0)
	sim.Advance(time.Second)
	mustOK(snaps.Create(ctx, SnapshotCreateRequest{SnapName: "a_second"}))(t)

	list := must(snaps.List(ctx))(t).Snapshots
	if len(list) != 2 || list[0].Name != "a_second" || list[0].Parent != "b_first" || list[1].Name != "b_first" ||
		list[1].Parent != "" || list[1].Description != "before" || list[0].SnapTime <= list[1].SnapTime {
		t.Fatalf("list %+v", list)
	}
	if names, lock, _ := sim.Snapshots(200); lock != "" || len(names) != 2 {
		t.Errorf("after create: %v lock %q", names, lock)
	}

	if _, err := snaps.Create(ctx, SnapshotCreateRequest{SnapName: "current"}); err == nil ||
		!strings.Contains(err.Error(), "reserved name") {
		t.Errorf("current: %v", err)
	}

	// A rollback stops the running container and, with start=1, starts it again.
	sim.SetTaskDuration("vzrollback", time.Hour)
	upid, err = snaps.RollbackAsync(ctx, "b_first", SnapshotRollbackRequest{Start: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, lock, _ := sim.Snapshots(200); lock != "rollback" {
		t.Errorf("lock while the rollback runs: %q", lock)
	}
	sim.Advance(time.Hour)
	mustOK(c.Wait(ctx, upid))(t)
	g, _ := sim.Guest(200)
	if g.Status != "running" || g.Config["parent"] != "b_first" || g.Lock != "" {
		t.Errorf("after rollback: %s parent %q lock %q", g.Status, g.Config["parent"], g.Lock)
	}

	mustOK(snaps.Delete(ctx, "b_first"))(t)
	list = must(snaps.List(ctx))(t).Snapshots
	if len(list) != 1 || list[0].Name != "a_second" || list[0].Parent != "" {
		t.Errorf("after delete: %+v", list)
	}
	if g, _ := sim.Guest(200); g.Config["parent"] != "" {
		t.Errorf("current parent after deleting it: %q", g.Config["parent"])
	}

	// Snapshots do not block a destroy: the guest goes with them.
	mustOK(ct.Stop(ctx))(t)
	mustOK(ct.Delete(ctx, LXCDeleteOptions{}))(t)
	if _, _, ok := sim.Snapshots(200); ok {
		t.Error("container 200 still there after destroy")
	}
}

// R44: TestSimSnapshotStorages: a raw container volume on a directory storage cannot snapshot (the
// task fails and leaves no section or lock); a VM on LVM-thin can, its cloud-init drive aside.
func TestSimSnapshotStorages(t *testing.T) {
	sim, c := newSim(t)
	ctx := testContext(t)
	if err := sim.SeedGuest(pvesim.Guest{VMID: 210, Type: "lxc", Node: "pve1", Config: map[string]string{
		"hostname": "dir", "ostype": "debian", "rootfs": "local:210/vm-210-disk-0.raw,size=8G", "memory": "512",
	}}); err != nil {
		t.Fatal(err)
	}
	_, err := c.Node("pve1").LXC(210).Snapshots().Create(ctx, SnapshotCreateRequest{SnapName: "s1"})
	if !isKind(err, ErrTaskFailed) || !strings.Contains(err.Error(), "snapshot feature is not available") {
		t.Errorf("dir raw: %v", err)
	}
	if names, lock, _ := sim.Snapshots(210); len(names) != 0 || lock != "" {
		t.Errorf("after a failed create: %v lock %q", names, lock)
	}
	vm := c.Node("pve1").QEMU(300).Snapshots()
	res := mustOK(vm.Create(ctx, SnapshotCreateRequest{SnapName: "s1"}))(t)
	if res.Type != "qmsnapshot" {
		t.Errorf("task type %q", res.Type)
	}
	if list := must(vm.List(ctx))(t).Snapshots; len(list) != 1 || list[0].Name != "s1" {
		t.Errorf("vm list %+v", list)
	}
	var lvm StorageConfig
	for _, st := range must(c.StorageConfigs(ctx))(t) {
		if st.Storage == "local-lvm" {
			lvm = st
		}
	}
	if lvm.Type != "lvmthin" {
		t.Errorf("storage %+v", lvm)
	}
}
