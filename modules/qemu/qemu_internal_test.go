package qemu

import (
	"testing"

	"pvebill/modules/plans"
	"pvebill/modules/pve"
)

func TestVMNet0(t *testing.T) {
	rate := 12.5
	p := plans.Plan{Bridge: "vmbr1", RateMbps: &rate}
	cases := map[string]string{
		"virtio=BC:24:11:00:90:00,bridge=vmbr0,firewall=1":         "model=virtio,macaddr=BC:24:11:00:90:00,bridge=vmbr1,firewall=1,rate=12.5",
		"model=e1000,macaddr=BC:24:11:00:90:01,bridge=vmbr0,tag=7": "model=e1000,macaddr=BC:24:11:00:90:01,bridge=vmbr1,firewall=1,tag=7,rate=12.5",
		"virtio=BC:24:11:00:90:02,bridge=vmbr0,queues=4":           "model=virtio,macaddr=BC:24:11:00:90:02,bridge=vmbr1,firewall=1,rate=12.5,queues=4",
	}
	for in, want := range cases {
		got, err := vmNet0(in, p)
		if err != nil || got != want {
			t.Errorf("vmNet0(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := vmNet0("", p); err == nil {
		t.Error("an empty net0 was accepted")
	}
}

func TestBootDisk(t *testing.T) {
	cfg := pve.QEMUConfig{Boot: "order=ide2;virtio0;net0", Disks: map[string]string{
		"ide2": "local-lvm:vm-100-cloudinit,media=cdrom", "virtio0": "local-lvm:vm-100-disk-0,size=8G", "scsi0": "local-lvm:vm-100-disk-1,size=2G"}}
	if got := bootDisk(cfg); got != "virtio0" {
		t.Errorf("boot disk %q, want virtio0", got)
	}
	cfg.Boot = ""
	if got := bootDisk(cfg); got != "scsi0" {
		t.Errorf("boot disk %q, want scsi0", got)
	}
}
