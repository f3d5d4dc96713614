package pvesim

// Demo returns a seeded cluster: container templates for Debian 12 and Ubuntu 24.04 on
// local, the VM template 9000 on pve1 (scsi0 on local-lvm, ide2 cloud-init), a ZFS
// storage local-zfs, a running container 200 and a stopped VM 300.
func Demo(opts Options) *Sim {
	s := New(opts)
	s.AddStorage("local-zfs", "zfspool", []string{"images", "rootdir"}, false)
	s.AddVolume("local", "vztmpl/debian-12-standard_12.7-1_amd64.tar.zst", 126*mib, "vztmpl")
	s.AddVolume("local", "vztmpl/ubuntu-24.04-standard_24.04-2_amd64.tar.zst", 141*mib, "vztmpl")
	s.AddVolume("local", "iso/debian-12.7.0-amd64-netinst.iso", 631*mib, "iso")
	n1 := s.nodeOrder[0]
	must := func(err error) {
		if err != nil {
			panic("pvesim: demo: " + err.Error())
		}
	}
	must(s.SeedGuest(Guest{VMID: 9000, Type: "qemu", Node: n1, Template: true, Config: map[string]string{
		"name": "debian-12-cloud", "memory": "2048", "cores": "2", "sockets": "1", "ostype": "l26",
		"scsihw": "virtio-scsi-single", "scsi0": "local-lvm:base-9000-disk-0,size=8G",
		"ide2": "local-lvm:vm-9000-cloudinit,media=cdrom", "boot": "order=scsi0", "agent": "1",
		"net0": "virtio=BC:24:11:00:90:00,bridge=vmbr0,firewall=1", "serial0": "socket", "vga": "serial0",
		"smbios1": "uuid=6f1d2c3b-9000-4a5b-8c7d-000000009000", "vmgenid": "00000000-0000-4000-8000-000000009000",
	}}))
	must(s.SeedGuest(Guest{VMID: 200, Type: "lxc", Node: n1, Running: true, Config: map[string]string{
		"arch": "amd64", "hostname": "demo-ct", "memory": "1024", "swap": "512", "cores": "1",
		"ostype": "debian", "rootfs": "local-lvm:vm-200-disk-0,size=8G", "unprivileged": "1",
		"net0": "name=eth0,bridge=vmbr0,firewall=1,gw=192.0.2.1,hwaddr=BC:24:11:00:02:00,ip=192.0.2.200/24,type=veth",
		"tags": "demo",
	}}))
	must(s.SeedGuest(Guest{VMID: 300, Type: "qemu", Node: n1, Config: map[string]string{
		"name": "demo-vm", "memory": "2048", "cores": "2", "ostype": "l26", "scsihw": "virtio-scsi-single",
		"scsi0": "local-lvm:vm-300-disk-0,size=16G", "ide2": "local-lvm:vm-300-cloudinit,media=cdrom",
		"net0": "virtio=BC:24:11:00:03:00,bridge=vmbr0,firewall=1", "boot": "order=scsi0", "agent": "1",
	}}))
	return s
}
