package pveconf

import "testing"

var (
	benchSizes   = []string{"8G", "8704M", "9126805504", "8.5G", "512KiB", "1." + "999999999999" + "T"}
	benchVolumes = []string{
		"local-lvm:vm-5001-disk-0",
		"local:5001/vm-5001-disk-0.raw",
		"local-zfs:base-100-disk-0/vm-5001-disk-1",
		"local:100/base-100-disk-0.raw/5001/vm-5001-disk-1.qcow2",
		"local:backup/vzdump-lxc-5001-2025_01_31-02_00_05.tar.zst",
		"/mnt/foo/bar",
	}
	benchMounts = [][2]string{
		{"rootfs", "local-lvm:vm-5001-disk-0,size=8G"},
		{"mp0", "local-lvm:vm-5001-disk-1,mp=/data,backup=1,size=20G"},
		{"mp1", "/mnt/foo/bar,mp=/storage,ro=1,mountoptions=noatime;nodev"},
		{"unused0", "local-lvm:vm-5001-disk-2"},
	}
)

func BenchmarkParseSize(b *testing.B) {
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := ParseSize(benchSizes[i%len(benchSizes)]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseVolume(b *testing.B) {
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := ParseVolume(benchVolumes[i%len(benchVolumes)]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseMountPoint(b *testing.B) {
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		m := benchMounts[i%len(benchMounts)]
		if _, err := ParseMountPoint(m[0], m[1]); err != nil {
			b.Fatal(err)
		}
	}
}
