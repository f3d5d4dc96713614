package reinstall_test

import (
	"fmt"
	"strings"
	"testing"

	"pvebill/models"
	"pvebill/modules/pve/pvesim"
	"pvebill/modules/reinstall"
)

// R30: a VM reinstall is a re-clone with the same two phases: the preview labels the VM's disks
// (its own erased, another guest's excluded, an ISO kept, the template's drives recreated) and
// only reads; apply stops, destroys without destroy-unreferenced-disks, clones the template
// onto the same vmid, sets cloud-init with the new password and starts.
func TestVMReinstall(t *testing.T) {
	e := newEnv(t, "sqlite")
	e.sim.AddVolume("local", "iso/debian-12.7.0-amd64-netinst.iso", 631<<20, "iso")
	e.seedVM("svc-vm", 300, true, map[string]string{
		"scsi1":   "local-lvm:vm-6002-disk-1,size=4G",
		"ide0":    "local:iso/debian-12.7.0-amd64-netinst.iso,media=cdrom",
		"ide1":    "none,media=cdrom",
		"unused0": "local-lvm:vm-300-disk-5",
	})
	e.resetLog()
	in := e.preview("svc-vm")
	for _, r := range e.sim.Requests() {
		if r.Method != "GET" {
			t.Errorf("phase 1 sent %s %s", r.Method, r.Path)
		}
	}
	v := e.view(in)
	var got []string
	for _, d := range v.Disks {
		got = append(got, fmt.Sprintf("%s %s %s %s", d.Key, d.Volume, d.Data, d.MountAfter))
	}
	want := []string{
		"scsi0 local-lvm:vm-300-disk-0 erased recreated",
		"scsi1 local-lvm:vm-6002-disk-1 excluded removed",
		"ide0 local:iso/debian-12.7.0-amd64-netinst.iso excluded removed",
		"ide2 local-lvm:vm-300-cloudinit erased recreated",
		"unused0 local-lvm:vm-300-disk-5 erased removed",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("disks\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if v.Rootfs != nil || len(v.Mounts) != 0 || v.BootDisk == nil || v.BootDisk.CurrentDisplay != "10 GiB" || len(v.Blockers) != 0 {
		t.Fatalf("view rootfs %+v mounts %v boot %+v blockers %+v", v.Rootfs, v.Mounts, v.BootDisk, v.Blockers)
	}
	e.resetLog()
	op, err := e.apply("svc-vm", in)
	if err != nil {
		t.Fatal(err)
	}
	done := e.wait(op)
	if done.State != models.OpSucceeded {
		t.Fatalf("apply %s %s %s", done.State, deref(done.ErrorCode), deref(done.Result))
	}
	dels := e.requests("DELETE", "/qemu/300")
	if len(dels) != 1 || dels[0].Form.Has("destroy-unreferenced-disks") || dels[0].Form.Get("purge") == "1" {
		t.Fatalf("destroys %+v", dels)
	}
	clones := e.requests("POST", "/qemu/9000/clone")
	if len(clones) != 1 || clones[0].Form.Get("newid") != "300" {
		t.Fatalf("clones %+v", clones)
	}
	sent := false
	for _, r := range e.sim.Requests() {
		sent = sent || r.Form.Get("cipassword") == testPassword
	}
	if !sent {
		t.Fatal("the new password never reached cloud-init")
	}
	g, ok := e.sim.Guest(300)
	if !ok || g.Status != "running" || !strings.Contains(g.Config["description"], "pvebill-service: whmcs/svc-vm") {
		t.Fatalf("guest after %+v", g)
	}
	if _, ok := g.Config["scsi1"]; ok {
		t.Fatal("the other guest's disk is still attached")
	}
	if !strings.Contains(strings.Join(e.sim.Volumes("local-lvm"), " "), "vm-6002-disk-1") {
		t.Fatal("another guest's volume was destroyed")
	}
	if got := e.intent("svc-vm"); got.State != models.IntentCompleted {
		t.Fatalf("intent %s", got.State)
	}
	assertNoSecret(t, e, testPassword)
}

// R28 for a VM: the clone fails after destroy; the service needs reconciliation and the guest is
// known to be gone.
func TestVMReinstallCloneFails(t *testing.T) {
	e := newEnv(t, "sqlite")
	e.seedVM("svc-vmf", 301, false, nil)
	in := e.preview("svc-vmf")
	e.sim.InjectFault(pvesim.Fault{Method: "POST", PathPattern: "/nodes/{node}/qemu/{vmid}/clone", Status: 500, Message: "storage full"})
	op, err := e.apply("svc-vmf", in)
	if err != nil {
		t.Fatal(err)
	}
	done := e.wait(op)
	if done.State != models.OpNeedsReconciliation || done.Stage != "create" {
		t.Fatalf("apply %s at %s", done.State, done.Stage)
	}
	v := reinstall.ViewOf(e.intent("svc-vmf"), "en")
	if v.Reconciliation == nil || v.Reconciliation.GuestExisted == nil || *v.Reconciliation.GuestExisted {
		t.Fatalf("reconciliation %+v", v.Reconciliation)
	}
	if s := e.service("svc-vmf"); s.State != models.ServiceNeedsReconciliation || s.LockOperationID == nil {
		t.Fatalf("service %s lock %v", s.State, s.LockOperationID)
	}
}

// R23 for a VM: a boot disk larger than the plan blocks.
func TestVMReinstallGrowOnly(t *testing.T) {
	e := newEnv(t, "sqlite")
	e.seedVM("svc-vmg", 302, false, map[string]string{"scsi0": "local-lvm:vm-302-disk-0,size=16G"})
	v := e.view(e.preview("svc-vmg"))
	if len(v.Blockers) != 1 || v.Blockers[0].Code != reinstall.RootfsWouldShrink || v.BootDisk.CurrentDisplay != "16 GiB" {
		t.Fatalf("blockers %+v boot %+v", v.Blockers, v.BootDisk)
	}
}
