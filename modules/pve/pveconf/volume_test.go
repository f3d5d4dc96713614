package pveconf

import (
	"errors"
	"testing"
)

func TestParseVolume(t *testing.T) {
	tests := []struct {
		in   string
		want Volume
	}{
		// Bind and device mounts (classify_mountpoint).
		{"/mnt/foo/bar", Volume{Kind: VolumeBind, Name: "/mnt/foo/bar"}},
		{"/srv/data", Volume{Kind: VolumeBind, Name: "/srv/data"}},
		{"/dev/sdb1", Volume{Kind: VolumeDevice, Name: "/dev/sdb1"}},
		{"/dev/disk/by-id/x", Volume{Kind: VolumeDevice, Name: "/dev/disk/by-id/x"}},
		{"/dev", Volume{Kind: VolumeBind, Name: "/dev"}},
		{"/", Volume{Kind: VolumeBind, Name: "/"}},
		// Directory-style images: the owner is the directory.
		{"local:5001/vm-5001-disk-0.raw", Volume{Storage: "local", VolName: "5001/vm-5001-disk-0.raw",
			Name: "vm-5001-disk-0.raw", VType: VTypeImages, Format: "raw", Owner: 5001, HasOwner: true}},
		{"local:5001/vm-9999-disk-0.raw", Volume{Storage: "local", VolName: "5001/vm-9999-disk-0.raw",
			Name: "vm-9999-disk-0.raw", VType: VTypeImages, Format: "raw", Owner: 5001, HasOwner: true}},
		{"nfs-store:5001/anything.qcow2", Volume{Storage: "nfs-store", VolName: "5001/anything.qcow2",
			Name: "anything.qcow2", VType: VTypeImages, Format: "qcow2", Owner: 5001, HasOwner: true}},
		{"local:5001/subvol-5001-disk-0.subvol", Volume{Storage: "local", VolName: "5001/subvol-5001-disk-0.subvol",
			Name: "subvol-5001-disk-0.subvol", VType: VTypeImages, Format: "subvol", Owner: 5001, HasOwner: true}},
		{"btrfs-pool:5001/vm-5001-disk-0.raw", Volume{Storage: "btrfs-pool", VolName: "5001/vm-5001-disk-0.raw",
			Name: "vm-5001-disk-0.raw", VType: VTypeImages, Format: "raw", Owner: 5001, HasOwner: true}},
		{"local:100/base-100-disk-0.vmdk", Volume{Storage: "local", VolName: "100/base-100-disk-0.vmdk",
			Name: "base-100-disk-0.vmdk", VType: VTypeImages, Format: "vmdk", Owner: 100, HasOwner: true, IsBase: true}},
		{"local:100/base-100-disk-0.raw/5001/vm-5001-disk-1.qcow2", Volume{Storage: "local",
			VolName: "100/base-100-disk-0.raw/5001/vm-5001-disk-1.qcow2", Name: "vm-5001-disk-1.qcow2",
			VType: VTypeImages, Format: "qcow2", Owner: 5001, HasOwner: true, BaseName: "base-100-disk-0.raw", BaseVMID: 100}},
		{"local:05001/vm-5001-disk-0.raw", Volume{Storage: "local", VolName: "05001/vm-5001-disk-0.raw",
			Name: "vm-5001-disk-0.raw", VType: VTypeImages, Format: "raw", Owner: 5001, HasOwner: true}},
		{"local:rootdir/5001", Volume{Storage: "local", VolName: "rootdir/5001", Name: "5001",
			VType: VTypeRootdir, Owner: 5001, HasOwner: true}},
		// LVM, LVM-thin, RBD, ZFS.
		{"local-lvm:vm-5001-disk-0", Volume{Storage: "local-lvm", VolName: "vm-5001-disk-0", Name: "vm-5001-disk-0",
			VType: VTypeImages, Format: "raw", Owner: 5001, HasOwner: true}},
		{"local-lvm:vm-5001-disk-0.qcow2", Volume{Storage: "local-lvm", VolName: "vm-5001-disk-0.qcow2",
			Name: "vm-5001-disk-0.qcow2", VType: VTypeImages, Format: "qcow2", Owner: 5001, HasOwner: true}},
		{"local-lvm:base-100-disk-0", Volume{Storage: "local-lvm", VolName: "base-100-disk-0", Name: "base-100-disk-0",
			VType: VTypeImages, Format: "raw", Owner: 100, HasOwner: true, IsBase: true}},
		{"local-lvm:vm-5001-cloudinit", Volume{Storage: "local-lvm", VolName: "vm-5001-cloudinit", Name: "vm-5001-cloudinit",
			VType: VTypeImages, Format: "raw", Owner: 5001, HasOwner: true}},
		{"local-zfs:subvol-5001-disk-0", Volume{Storage: "local-zfs", VolName: "subvol-5001-disk-0", Name: "subvol-5001-disk-0",
			VType: VTypeImages, Format: "subvol", Owner: 5001, HasOwner: true}},
		{"vmstore:subvol-101-disk-0", Volume{Storage: "vmstore", VolName: "subvol-101-disk-0", Name: "subvol-101-disk-0",
			VType: VTypeImages, Format: "subvol", Owner: 101, HasOwner: true}},
		{"local-zfs:base-100-disk-0/vm-5001-disk-1", Volume{Storage: "local-zfs", VolName: "base-100-disk-0/vm-5001-disk-1",
			Name: "vm-5001-disk-1", VType: VTypeImages, Format: "raw", Owner: 5001, HasOwner: true,
			BaseName: "base-100-disk-0", BaseVMID: 100}},
		{"local-zfs:basevol-100-disk-0/subvol-5001-disk-0", Volume{Storage: "local-zfs",
			VolName: "basevol-100-disk-0/subvol-5001-disk-0", Name: "subvol-5001-disk-0", VType: VTypeImages,
			Format: "subvol", Owner: 5001, HasOwner: true, BaseName: "basevol-100-disk-0", BaseVMID: 100}},
		{"ceph:vm-5001-disk-0", Volume{Storage: "ceph", VolName: "vm-5001-disk-0", Name: "vm-5001-disk-0",
			VType: VTypeImages, Format: "raw", Owner: 5001, HasOwner: true}},
		{"ceph:base-100-disk-0/vm-5001-disk-1", Volume{Storage: "ceph", VolName: "base-100-disk-0/vm-5001-disk-1",
			Name: "vm-5001-disk-1", VType: VTypeImages, Format: "raw", Owner: 5001, HasOwner: true,
			BaseName: "base-100-disk-0", BaseVMID: 100}},
		{"CEPH.pool_1:vm-5001-disk-0", Volume{Storage: "CEPH.pool_1", VolName: "vm-5001-disk-0", Name: "vm-5001-disk-0",
			VType: VTypeImages, Format: "raw", Owner: 5001, HasOwner: true}},
		// Backups, templates, ISOs, snippets, imports.
		{"local:backup/vzdump-lxc-5001-2025_01_31-02_00_05.tar.zst", Volume{Storage: "local",
			VolName: "backup/vzdump-lxc-5001-2025_01_31-02_00_05.tar.zst", Name: "vzdump-lxc-5001-2025_01_31-02_00_05.tar.zst",
			VType: VTypeBackup, Format: "raw", Owner: 5001, HasOwner: true}},
		{"local:backup/vzdump-qemu-100-2025_01_31-02_00_05.vma.zst", Volume{Storage: "local",
			VolName: "backup/vzdump-qemu-100-2025_01_31-02_00_05.vma.zst", Name: "vzdump-qemu-100-2025_01_31-02_00_05.vma.zst",
			VType: VTypeBackup, Format: "raw", Owner: 100, HasOwner: true}},
		{"local:backup/manual-copy.tgz", Volume{Storage: "local", VolName: "backup/manual-copy.tgz",
			Name: "manual-copy.tgz", VType: VTypeBackup, Format: "raw"}},
		{"pbs:backup/ct/5001/2025-01-31T02:00:05Z", Volume{Storage: "pbs", VolName: "backup/ct/5001/2025-01-31T02:00:05Z",
			Name: "ct/5001/2025-01-31T02:00:05Z", VType: VTypeBackup, Format: "pbs-ct", Owner: 5001, HasOwner: true}},
		{"pbs:backup/host/web1/2025-01-31T02:00:05Z", Volume{Storage: "pbs", VolName: "backup/host/web1/2025-01-31T02:00:05Z",
			Name: "host/web1/2025-01-31T02:00:05Z", VType: VTypeBackup, Format: "pbs-host"}},
		{"local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst", Volume{Storage: "local",
			VolName: "vztmpl/debian-12-standard_12.7-1_amd64.tar.zst", Name: "debian-12-standard_12.7-1_amd64.tar.zst",
			VType: VTypeVZTmpl, Format: "raw"}},
		{"local:iso/debian-12.ISO", Volume{Storage: "local", VolName: "iso/debian-12.ISO", Name: "debian-12.ISO",
			VType: VTypeISO, Format: "raw"}},
		{"local:iso/efi.img", Volume{Storage: "local", VolName: "iso/efi.img", Name: "efi.img", VType: VTypeISO, Format: "raw"}},
		{"local:snippets/user.yaml", Volume{Storage: "local", VolName: "snippets/user.yaml", Name: "user.yaml",
			VType: VTypeSnippets, Format: "raw"}},
		{"local:import/appliance.ova/disk 1.vmdk", Volume{Storage: "local", VolName: "import/appliance.ova/disk 1.vmdk",
			Name: "appliance.ova/disk 1.vmdk", VType: VTypeImport, Format: "ova+vmdk"}},
		{"local:import/disk.qcow2", Volume{Storage: "local", VolName: "import/disk.qcow2", Name: "disk.qcow2",
			VType: VTypeImport, Format: "qcow2"}},
	}
	for _, tt := range tests {
		got, err := ParseVolume(tt.in)
		if err != nil {
			t.Errorf("ParseVolume(%q): %v", tt.in, err)
			continue
		}
		want := tt.want
		want.ID = tt.in
		if want.Kind == 0 {
			want.Kind = VolumeStorage
		}
		if got != want {
			t.Errorf("ParseVolume(%q)\n got %+v\nwant %+v", tt.in, got, want)
		}
	}
}

func TestParseVolumeErrors(t *testing.T) {
	tests := []struct {
		in  string
		err error
	}{
		{"", ErrSyntax},
		{"local", ErrSyntax},
		{"local:", ErrSyntax},
		{":vm-5001-disk-0", ErrSyntax},
		{"l:vm-5001-disk-0", ErrSyntax},      // storage ids have two characters at least
		{"1local:vm-5001-disk-0", ErrSyntax}, // and start with a letter
		{"local-:vm-5001-disk-0", ErrSyntax},
		{"lo cal:vm-5001-disk-0", ErrSyntax},
		{"local:5001/vm-5001-disk-0", ErrSyntax}, // a dir-style name needs an extension
		{"local:5001/vm-5001-disk-0.txt", ErrSyntax},
		{"local:5001/", ErrSyntax},
		{"local:5001/sub/vm-5001-disk-0.raw", ErrSyntax},
		{"local:100/base-100-disk-0/5001/vm-5001-disk-1.qcow2", ErrSyntax}, // base without extension
		{"local:iso/notes.txt", ErrSyntax},
		{"local:iso/sub/x.iso", ErrSyntax},
		{"local:vztmpl/debian.tar", ErrSyntax},
		{"local:backup/notes.txt", ErrSyntax},
		{"local:snippets/", ErrSyntax},
		{"local:import/x.exe", ErrSyntax},
		{"local:rootdir/abc", ErrSyntax},
		{"pbs:backup/ct/5001/2025-01-31", ErrSyntax},
		{"local-lvm:foo", ErrSyntax},
		{"local-lvm:8", ErrSyntax}, // an allocation, not a volume
		{"local-lvm:vm-x-disk-0", ErrSyntax},
		{"local-lvm:vm-5001", ErrSyntax},
		{"local-lvm:vm-5001-", ErrSyntax},
		{"local-lvm:disk-5001-0", ErrSyntax},
		{"local-lvm:vm-5001-disk-0.raw", ErrSyntax}, // block plugins never write extensions
		{"local-lvm:vm-5001-disk-0.subvol", ErrSyntax},
		{"local-lvm:vm-5001-disk 0", ErrSyntax},
		{"local-lvm:vm-5001-disk\t0", ErrSyntax},
		{"local-lvm:vm-5001-disk\u00a00", ErrSyntax},
		{"local-lvm:vm-5001-disk\u20030", ErrSyntax},
		{"local-lvm:vm-5001-disk-0\n", ErrSyntax},
		{"iscsi:0.0.1.scsi-36001405", ErrSyntax},
		{"local-lvm:vm-99999999999999999999-disk-0", ErrRange},
		{"local:99999999999999999999/vm-1-disk-0.raw", ErrRange},
	}
	for _, tt := range tests {
		got, err := ParseVolume(tt.in)
		if !errors.Is(err, tt.err) {
			t.Errorf("ParseVolume(%q) = %+v, %v; want error %v", tt.in, got, err, tt.err)
		}
	}
}

func TestVolumeOwnedBy(t *testing.T) {
	tests := []struct {
		volid string
		vmid  int
		owned bool
	}{
		{"local-lvm:vm-5001-disk-0", 5001, true},
		{"local-lvm:vm-5001-disk-0", 5002, false},
		{"local:5001/vm-5001-disk-0.raw", 5001, true},
		{"local:5001/vm-9999-disk-0.raw", 5001, true},
		{"local:5001/vm-9999-disk-0.raw", 9999, false},
		{"local-zfs:subvol-5001-disk-0", 5001, true},
		{"local-zfs:base-100-disk-0/vm-5001-disk-1", 5001, true},
		{"local-zfs:base-100-disk-0/vm-5001-disk-1", 100, false},
		{"local:100/base-100-disk-0.raw/5001/vm-5001-disk-1.qcow2", 5001, true},
		{"local:100/base-100-disk-0.raw/5001/vm-5001-disk-1.qcow2", 100, false},
		{"local:backup/vzdump-lxc-5001-2025_01_31-02_00_05.tar.zst", 5001, true},
		{"pbs:backup/ct/5001/2025-01-31T02:00:05Z", 5001, true},
		{"local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst", 5001, false},
		{"local:iso/debian-12.iso", 5001, false},
		{"/srv/5001", 5001, false},
		{"/dev/sdb1", 5001, false},
	}
	for _, tt := range tests {
		owned, err := VolumeOwnedBy(tt.volid, tt.vmid)
		if err != nil || owned != tt.owned {
			t.Errorf("VolumeOwnedBy(%q, %d) = %v, %v; want %v", tt.volid, tt.vmid, owned, err, tt.owned)
		}
	}
	if owned, err := VolumeOwnedBy("local-lvm:foo", 5001); owned || !errors.Is(err, ErrSyntax) {
		t.Errorf("VolumeOwnedBy(unparseable) = %v, %v; want false and a syntax error", owned, err)
	}
}

func TestVolumeKindString(t *testing.T) {
	for k, want := range map[VolumeKind]string{VolumeStorage: "storage", VolumeBind: "bind", VolumeDevice: "device", 0: "VolumeKind(0)"} {
		if got := k.String(); got != want {
			t.Errorf("VolumeKind(%d).String() = %q; want %q", int(k), got, want)
		}
	}
}

func TestValidStorageID(t *testing.T) {
	for id, want := range map[string]bool{
		"local": true, "local-lvm": true, "local-zfs": true, "ceph.pool_1": true, "Ceph": true, "ab": true, "a1": true,
		"": false, "a": false, "1local": false, "-local": false, "local-": false, "local.": false, "lo cal": false,
		"lo:cal": false, "lo/cal": false, "ünï": false,
	} {
		if got := ValidStorageID(id); got != want {
			t.Errorf("ValidStorageID(%q) = %v; want %v", id, got, want)
		}
	}
}
