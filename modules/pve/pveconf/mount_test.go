package pveconf

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func boolPtr(b bool) *bool { return &b }

func TestParseMountPoint(t *testing.T) {
	tests := []struct {
		key, value string
		want       MountPoint
	}{
		{"rootfs", "local-lvm:vm-5001-disk-0,size=8G", MountPoint{Volume: "local-lvm:vm-5001-disk-0", Path: "/",
			Size: "8G", SizeBytes: 8 * GiB, SizeKnown: true}},
		{"rootfs", "vmstore:subvol-101-disk-0,size=30G", MountPoint{Volume: "vmstore:subvol-101-disk-0", Path: "/",
			Size: "30G", SizeBytes: 30 * GiB, SizeKnown: true}},
		{"rootfs", "local:5001/subvol-5001-disk-0.subvol,size=0T", MountPoint{Volume: "local:5001/subvol-5001-disk-0.subvol",
			Path: "/", Size: "0T", SizeKnown: true}},
		{"rootfs", "local-lvm:vm-5001-disk-0,size=8704M", MountPoint{Volume: "local-lvm:vm-5001-disk-0", Path: "/",
			Size: "8704M", SizeBytes: 9126805504, SizeKnown: true}},
		{"rootfs", "volume=local-lvm:vm-5001-disk-0,size=8G", MountPoint{Volume: "local-lvm:vm-5001-disk-0", Path: "/",
			Size: "8G", SizeBytes: 8 * GiB, SizeKnown: true}},
		{"rootfs", "size=8G,local-lvm:vm-5001-disk-0", MountPoint{Volume: "local-lvm:vm-5001-disk-0", Path: "/",
			Size: "8G", SizeBytes: 8 * GiB, SizeKnown: true}},
		// A bare KiB-aligned size was not written by Proxmox: not known.
		{"rootfs", "local-lvm:vm-5001-disk-0,size=8388608", MountPoint{Volume: "local-lvm:vm-5001-disk-0", Path: "/",
			Size: "8388608", SizeBytes: 8388608}},
		// An unparseable size is kept as text and not known; the mount
		// itself is still classifiable.
		{"rootfs", "local-lvm:vm-5001-disk-0,size=8 GB", MountPoint{Volume: "local-lvm:vm-5001-disk-0", Path: "/",
			Size: "8 GB"}},
		{"rootfs", "local-lvm:vm-5001-disk-0", MountPoint{Volume: "local-lvm:vm-5001-disk-0", Path: "/"}},
		{"rootfs", "local-lvm:8", MountPoint{Volume: "local-lvm:8", Path: "/"}},
		{"rootfs", "local-lvm:vm-5001-disk-0,,size=8G, ", MountPoint{Volume: "local-lvm:vm-5001-disk-0", Path: "/",
			Size: "8G", SizeBytes: 8 * GiB, SizeKnown: true}},
		{"rootfs", "local-lvm:vm-5001-disk-0,ro=1,mountoptions=noatime;nodev,acl=0", MountPoint{
			Volume: "local-lvm:vm-5001-disk-0", Path: "/", ReadOnly: true,
			Options: []Option{{"mountoptions", "noatime;nodev"}, {"acl", "0"}}}},
		{"mp0", "local-lvm:vm-5001-disk-1,mp=/data,backup=1,size=20G", MountPoint{Volume: "local-lvm:vm-5001-disk-1",
			Path: "/data", Backup: boolPtr(true), Size: "20G", SizeBytes: 20 * GiB, SizeKnown: true}},
		{"mp0", "/mnt/foo/bar,mp=/storage", MountPoint{Volume: "/mnt/foo/bar", Path: "/storage"}},
		{"mp1", "volume=/dev/sdb1,mp=/mnt/disk,ro=true,backup=no", MountPoint{Volume: "/dev/sdb1", Path: "/mnt/disk",
			ReadOnly: true, Backup: boolPtr(false)}},
		{"mp2", "volume=/srv/a=b,mp=/x", MountPoint{Volume: "/srv/a=b", Path: "/x"}},
		{"mp255", "local:5001/vm-5001-disk-2.raw,mp=/x,acl=1,quota=1,replicate=0,shared=0,keepattrs=1,future-key=v",
			MountPoint{Volume: "local:5001/vm-5001-disk-2.raw", Path: "/x", Options: []Option{
				{"acl", "1"}, {"quota", "1"}, {"replicate", "0"}, {"shared", "0"}, {"keepattrs", "1"}, {"future-key", "v"}}}},
		{"unused0", "local-lvm:vm-5001-disk-1", MountPoint{Volume: "local-lvm:vm-5001-disk-1"}},
		{"unused255", "volume=local-lvm:vm-5001-disk-1", MountPoint{Volume: "local-lvm:vm-5001-disk-1"}},
	}
	for _, tt := range tests {
		got, err := ParseMountPoint(tt.key, tt.value)
		if err != nil {
			t.Errorf("ParseMountPoint(%q, %q): %v", tt.key, tt.value, err)
			continue
		}
		want := tt.want
		want.Key = tt.key
		if !reflect.DeepEqual(got, want) {
			t.Errorf("ParseMountPoint(%q, %q)\n got %+v\nwant %+v", tt.key, tt.value, got, want)
		}
	}
}

func TestParseMountPointErrors(t *testing.T) {
	tests := []struct{ key, value string }{
		{"mp256", "local-lvm:vm-1-disk-0,mp=/x"},
		{"mp01", "local-lvm:vm-1-disk-0,mp=/x"},
		{"net0", "name=eth0"},
		{"rootfs", ""},
		{"rootfs", "size=8G"},
		{"rootfs", "a:b,c:d"},
		{"rootfs", "a:b,volume=c:d"},
		{"rootfs", "local-lvm:vm-1-disk-0,mp=/"},
		{"rootfs", "local-lvm:vm-1-disk-0,backup=1"},
		{"rootfs", "local-lvm:vm-1-disk-0,ro=2"},
		{"rootfs", "local-lvm:vm-1-disk-0,size=8G,size=9G"},
		{"rootfs", "local-lvm:vm-1-disk-0,=x"},
		{"rootfs", "local-lvm:vm-1-disk-0,size="},
		{"rootfs", "local-lvm:vm-1-disk-0, size=8G"},
		{"rootfs", "local-lvm:vm-1-disk-0,foo bar=1"},
		{"rootfs", "local-lvm:vm-1-disk-0\n,size=8G"},
		{"mp0", "local-lvm:vm-1-disk-0"},
		{"mp0", "local-lvm:vm-1-disk-0,mp=/x,backup=maybe"},
		{"mp0", "local-lvm:vm-1-disk-0,mp=/x,mp=/y"},
		{"unused0", "local-lvm:vm-1-disk-0,size=8G"},
		{"unused0", "size=8G"},
	}
	for _, tt := range tests {
		got, err := ParseMountPoint(tt.key, tt.value)
		if !errors.Is(err, ErrSyntax) {
			t.Errorf("ParseMountPoint(%q, %q) = %+v, %v; want a syntax error", tt.key, tt.value, got, err)
		}
	}
}

func TestMountPointParseVolume(t *testing.T) {
	mp, err := ParseMountPoint("mp0", "/mnt/foo/bar,mp=/storage")
	if err != nil {
		t.Fatal(err)
	}
	v, err := mp.ParseVolume()
	if err != nil || v.Kind != VolumeBind {
		t.Errorf("bind mount volume = %+v, %v", v, err)
	}
}

func TestIsMountKey(t *testing.T) {
	for _, k := range []string{"rootfs", "mp0", "mp9", "mp10", "mp255", "unused0", "unused17", "unused255"} {
		if !IsMountKey(k) {
			t.Errorf("IsMountKey(%q) = false", k)
		}
	}
	for _, k := range []string{"", "root", "rootfs0", "mp", "mp256", "mp01", "mp-1", "mp+1", "mp1000", "mpa",
		"unused", "unused256", "unused00", "MP0", "net0", "dev0", "scsi0"} {
		if IsMountKey(k) {
			t.Errorf("IsMountKey(%q) = true", k)
		}
	}
}

func TestRootfsAlloc(t *testing.T) {
	tests := []struct {
		storage string
		gib     int
		want    string
	}{
		{"local-lvm", 8, "local-lvm:8"},
		{"local-zfs", 32, "local-zfs:32"},
		{"local", 0, "local:0"},
	}
	for _, tt := range tests {
		got, err := RootfsAlloc(tt.storage, tt.gib)
		if err != nil || got != tt.want {
			t.Errorf("RootfsAlloc(%q, %d) = %q, %v; want %q", tt.storage, tt.gib, got, err, tt.want)
		}
		if got := FormatRootfsAlloc(tt.storage, tt.gib); got != tt.want {
			t.Errorf("FormatRootfsAlloc(%q, %d) = %q; want %q", tt.storage, tt.gib, got, tt.want)
		}
		// It never reads as an existing volume.
		if _, err := ParseVolume(tt.want); err == nil {
			t.Errorf("ParseVolume(%q) accepted an allocation as a volume", tt.want)
		}
	}
	for _, tt := range []struct {
		storage string
		gib     int
		err     error
	}{
		{"local-lvm", -1, ErrRange},
		{"", 8, ErrSyntax},
		{"local-lvm:vm-5001-disk-0", 8, ErrSyntax},
		{"local-lvm,size=8G", 8, ErrSyntax},
	} {
		if got, err := RootfsAlloc(tt.storage, tt.gib); !errors.Is(err, tt.err) {
			t.Errorf("RootfsAlloc(%q, %d) = %q, %v; want error %v", tt.storage, tt.gib, got, err, tt.err)
		}
	}
}

func TestFormatRootfsAllocPanicsOnInvalid(t *testing.T) {
	defer func() {
		r := recover()
		if r == nil || !strings.Contains(r.(string), "FormatRootfsAlloc") {
			t.Errorf("recover() = %v; want a FormatRootfsAlloc panic", r)
		}
	}()
	FormatRootfsAlloc("local-lvm:vm-5001-disk-0", 8)
}
