package lxc

import (
	"fmt"
	"strings"
	"testing"

	"pvebill/modules/pve/pveconf"
	"pvebill/modules/reinstall"
)

func ip(v int) *int { return &v }

// R19–R21: one label per mount, from the volume id the way each storage plugin parses it.
func TestClassifyEveryForm(t *testing.T) {
	const me = 5001
	cases := []struct {
		key, value string
		data       reinstall.DataLabel
		owner      *int
		volume     string
		path       string
	}{
		{"rootfs", "local-lvm:vm-5001-disk-0,size=8G", reinstall.Erased, ip(5001), "local-lvm:vm-5001-disk-0", "/"},
		{"mp0", "local:5001/vm-5001-disk-1.raw,mp=/data,backup=1,size=20G", reinstall.Erased, ip(5001), "local:5001/vm-5001-disk-1.raw", "/data"},
		// Directory storages: the leading directory number is the owner, not the file name.
		{"mp1", "local:5001/vm-9999-disk-0.raw,mp=/odd", reinstall.Erased, ip(5001), "local:5001/vm-9999-disk-0.raw", "/odd"},
		{"mp2", "local:6002/vm-5001-disk-0.raw,mp=/theirs", reinstall.Excluded, ip(6002), "local:6002/vm-5001-disk-0.raw", "/theirs"},
		{"mp3", "local-zfs:subvol-5001-disk-2,mp=/zfs,size=4G", reinstall.Erased, ip(5001), "local-zfs:subvol-5001-disk-2", "/zfs"},
		{"mp4", "local-lvm:vm-6002-disk-1,mp=/shared", reinstall.Excluded, ip(6002), "local-lvm:vm-6002-disk-1", "/shared"},
		// Linked clones: the clone is ours, the base belongs to the template.
		{"mp5", "local-zfs:base-100-disk-0/subvol-5001-disk-3,mp=/clone", reinstall.Erased, ip(5001), "local-zfs:base-100-disk-0/subvol-5001-disk-3", "/clone"},
		{"mp6", "nfs:100/base-100-disk-0.qcow2/5001/vm-5001-disk-4.qcow2,mp=/lc", reinstall.Erased, ip(5001), "nfs:100/base-100-disk-0.qcow2/5001/vm-5001-disk-4.qcow2", "/lc"},
		{"mp7", "local-zfs:base-100-disk-0,mp=/base", reinstall.Excluded, ip(100), "local-zfs:base-100-disk-0", "/base"},
		{"mp8", "rbd:vm-5001-disk-5,mp=/ceph", reinstall.Erased, ip(5001), "rbd:vm-5001-disk-5", "/ceph"},
		// Bind and device mounts: absolute host paths, nobody's volume.
		{"mp9", "/srv/shared,mp=/mnt/shared", reinstall.Untouched, nil, "/srv/shared", "/mnt/shared"},
		{"mp10", "/dev/sdb1,mp=/mnt/disk", reinstall.Untouched, nil, "/dev/sdb1", "/mnt/disk"},
		{"mp11", "volume=/srv/x,mp=/x", reinstall.Untouched, nil, "/srv/x", "/x"},
		// unusedN: detached volumes destroy still walks.
		{"unused0", "local-lvm:vm-5001-disk-6", reinstall.Erased, ip(5001), "local-lvm:vm-5001-disk-6", ""},
		{"unused1", "local-lvm:vm-7003-disk-0", reinstall.Excluded, ip(7003), "local-lvm:vm-7003-disk-0", ""},
		// An ISO or template has no owner: destroy skips it.
		{"unused2", "local:iso/debian.iso", reinstall.Excluded, nil, "local:iso/debian.iso", ""},
		// Unparseable: unknown (and mount_unclassifiable).
		{"mp12", "local-lvm:disk-without-owner,mp=/bad", reinstall.Unknown, nil, "local-lvm:disk-without-owner", ""},
		{"mp13", "local:vm-5001-disk-0.raw,mp=/nodir", reinstall.Unknown, nil, "local:vm-5001-disk-0.raw", ""},
		{"mp14", "local-lvm:vm-5001-disk-7", reinstall.Unknown, nil, "local-lvm:vm-5001-disk-7", ""}, // mpN without mp=
		{"mp15", "1bad:vm-5001-disk-0,mp=/x", reinstall.Unknown, nil, "1bad:vm-5001-disk-0", "/x"},
		{"rootfs", "local-lvm:vm-5001-disk-0,mp=/", reinstall.Unknown, nil, "local-lvm:vm-5001-disk-0", ""},
	}
	for _, c := range cases {
		t.Run(c.key+"="+c.value, func(t *testing.T) {
			m := classify(me, reinstall.Entry{Key: c.key, Value: c.value})
			if m.Data != c.data {
				t.Errorf("data %s, want %s", m.Data, c.data)
			}
			if fmt.Sprint(deref(m.OwnerVMID)) != fmt.Sprint(deref(c.owner)) {
				t.Errorf("owner %v, want %v", deref(m.OwnerVMID), deref(c.owner))
			}
			if m.Volume != c.volume {
				t.Errorf("volume %q, want %q", m.Volume, c.volume)
			}
			if c.data != reinstall.Unknown && m.Path != c.path {
				t.Errorf("path %q, want %q", m.Path, c.path)
			}
			want := reinstall.Removed
			if c.key == "rootfs" {
				want = reinstall.Recreated
			}
			if m.MountAfter != want {
				t.Errorf("mount_after %s, want %s", m.MountAfter, want)
			}
		})
	}
}

func deref(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

// R20: only rootfs is recreated; every other mount is removed whatever happens to its bytes.
func TestFates(t *testing.T) {
	if fateOf("rootfs") != reinstall.Recreated {
		t.Error("rootfs not recreated")
	}
	for _, k := range []string{"mp0", "mp255", "unused0", "unused9"} {
		if fateOf(k) != reinstall.Removed {
			t.Errorf("%s not removed", k)
		}
	}
}

// R19: classify produces only the labels on offer, never preserved (reinstall's vocabulary test
// covers the list itself).
func TestPreservedNeverReturned(t *testing.T) {
	offered := map[reinstall.DataLabel]bool{reinstall.Erased: true, reinstall.Excluded: true, reinstall.Untouched: true,
		reinstall.Unknown: true}
	vols := []string{"local-lvm:vm-5001-disk-0", "local:5001/vm-5001-disk-0.raw", "local-zfs:subvol-5001-disk-0",
		"local-lvm:vm-6002-disk-0", "/srv/a", "/dev/sda", "x", "", "local:iso/a.iso", "pbs:backup/ct/5001/2025-01-01T00:00:00Z",
		"local-zfs:base-100-disk-0/vm-5001-disk-1", "local:backup/vzdump-lxc-5001-2025_01_31-02_00_05.tar.zst", "a:b:c"}
	opts := []string{"", ",size=8G", ",mp=/m", ",mp=/m,backup=1", ",mp=/m,size=12", ",ro=1,mp=/r", ",bogus", ",mp="}
	for _, key := range []string{"rootfs", "mp0", "unused0", "mp300", "net0"} {
		for _, v := range vols {
			for _, o := range opts {
				for _, vmid := range []int{100, 5001, 6002} {
					m := classify(vmid, reinstall.Entry{Key: key, Value: v + o})
					if !offered[m.Data] {
						t.Fatalf("classify(%d, %s=%s) = %s", vmid, key, v+o, m.Data)
					}
				}
			}
		}
	}
}

// R19: Proxmox's destroy walks the pending section too, so pending mounts are labelled.
func TestClassifiedWithPending(t *testing.T) {
	entries := []reinstall.Entry{
		{Key: "unused0", Value: "local-lvm:vm-5001-disk-9"},
		{Key: "mp1", Value: "local-lvm:vm-5001-disk-1,mp=/b"},
		{Key: "rootfs", Value: "local-lvm:vm-5001-disk-0,size=8G"},
		{Key: "mp1", Value: "local-lvm:vm-5001-disk-1,mp=/b"}, // duplicate: listed once
		{Key: "mp10", Value: "local-lvm:vm-5001-disk-10,mp=/j", Pending: true},
		{Key: "mp2", Value: "local-lvm:vm-6002-disk-3,mp=/c", Pending: true},
		{Key: "memory", Value: "512"},
		{Key: "net0", Value: "name=eth0,bridge=vmbr0"},
	}
	got := classified(5001, entries)
	var keys []string
	for _, m := range got {
		keys = append(keys, fmt.Sprintf("%s:%s:%v", m.Key, m.Data, m.Pending))
	}
	want := "rootfs:erased:false mp1:erased:false mp2:excluded:true mp10:erased:true unused0:erased:false"
	if strings.Join(keys, " ") != want {
		t.Fatalf("got %s\nwant %s", strings.Join(keys, " "), want)
	}
}

// R24: sizes in the right unit; a bare KiB multiple is ambiguous and never zero.
func TestRootfsSizes(t *testing.T) {
	const gib = pveconf.GiB
	cases := []struct {
		size    string
		known   bool
		bytes   int64
		display string
	}{
		{"8G", true, 8 * gib, "8 GiB"},
		{"8704M", true, 8*gib + gib/2, "9 GiB"},
		{"16G", true, 16 * gib, "16 GiB"},
		{"8GiB", true, 8 * gib, "8 GiB"},
		{"8.5G", true, 8*gib + gib/2, "9 GiB"},
		{"8388608K", true, 8 * gib, "8 GiB"},
		// A bare number is bytes; Proxmox writes one only when it is not a KiB multiple.
		{"8589935000", true, 8589935000, "9 GiB"},
		{"1000", true, 1000, "1 GiB"},
		// 8388608 read as bytes would be 8 MiB and approve every shrink; as a KiB multiple
		// Proxmox would never have written it bare: unknown.
		{"8388608", false, 0, "unknown"},
		{"8589934592", false, 0, "unknown"},
		{"", false, 0, "unknown"},
		{"8g", false, 0, "unknown"},
		{"8 G", false, 0, "unknown"},
	}
	for _, c := range cases {
		v := "local-lvm:vm-5001-disk-0"
		if c.size != "" {
			v += ",size=" + c.size
		}
		mounts := classified(5001, []reinstall.Entry{{Key: "rootfs", Value: v}})
		sz := reinstall.SizesOf(mounts, rootKey, 8*gib)
		if (sz.CurrentBytes != nil) != c.known {
			t.Errorf("%q: known %v, want %v", c.size, sz.CurrentBytes != nil, c.known)
			continue
		}
		if c.known && *sz.CurrentBytes != c.bytes {
			t.Errorf("%q: %d bytes, want %d", c.size, *sz.CurrentBytes, c.bytes)
		}
		if sz.CurrentDisplay != c.display {
			t.Errorf("%q: display %q, want %q", c.size, sz.CurrentDisplay, c.display)
		}
	}
}
