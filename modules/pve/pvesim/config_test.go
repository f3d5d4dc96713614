package pvesim

import (
	"slices"
	"testing"
)

func TestLXCConfigPendingModel(t *testing.T) {
	h := demoHarness(t) // CT 200 runs
	h.ok("PUT", "/nodes/pve1/lxc/200/config", vals("cores", "2", "cmode", "console", "swap", "1024"), nil)
	var merged, current map[string]any
	h.ok("GET", "/nodes/pve1/lxc/200/config", nil, &merged)
	h.ok("GET", "/nodes/pve1/lxc/200/config", vals("current", "1"), &current)
	if merged["cores"] != float64(2) || current["cores"] != float64(2) {
		t.Errorf("hotplug cores: merged %v current %v", merged["cores"], current["cores"])
	}
	if merged["swap"] != float64(1024) || current["swap"] != float64(1024) {
		t.Errorf("hotplug swap: merged %v current %v", merged["swap"], current["swap"])
	}
	if merged["cmode"] != "console" {
		t.Errorf("merged cmode %v", merged["cmode"])
	}
	if _, ok := current["cmode"]; ok {
		t.Errorf("cmode applied live to a running CT: %v", current["cmode"])
	}
	var pending []map[string]any
	h.ok("GET", "/nodes/pve1/lxc/200/pending", nil, &pending)
	found := false
	for _, e := range pending {
		if e["key"] == "cmode" {
			found = e["pending"] == "console" && e["value"] == nil
		}
		if e["key"] == "hostname" && (e["value"] != "demo-ct" || e["pending"] != nil) {
			t.Errorf("pending entry for unchanged key: %v", e)
		}
	}
	if !found {
		t.Errorf("pending lacks cmode: %v", pending)
	}
	// pending delete and revert
	h.ok("PUT", "/nodes/pve1/lxc/200/config", vals("delete", "arch"), nil)
	var withDelete []map[string]any
	h.ok("GET", "/nodes/pve1/lxc/200/pending", nil, &withDelete)
	for _, e := range withDelete {
		if e["key"] == "arch" && e["delete"] != float64(1) {
			t.Errorf("arch pending delete: %v", e)
		}
	}
	h.ok("PUT", "/nodes/pve1/lxc/200/config", vals("revert", "arch"), nil)
	// a reboot applies pending changes
	h.run("POST", "/nodes/pve1/lxc/200/status/reboot", nil, "OK")
	h.ok("GET", "/nodes/pve1/lxc/200/config", vals("current", "1"), &current)
	if current["cmode"] != "console" || current["arch"] != "amd64" {
		t.Errorf("after reboot: cmode %v arch %v", current["cmode"], current["arch"])
	}
	var after []map[string]any
	h.ok("GET", "/nodes/pve1/lxc/200/pending", nil, &after)
	for _, e := range after {
		if e["pending"] != nil || e["delete"] != nil {
			t.Errorf("pending left after reboot: %v", e)
		}
	}
	h.noViolations()
}

func TestLXCConfigDigestAndLocks(t *testing.T) {
	h := demoHarness(t)
	var conf map[string]any
	h.ok("GET", "/nodes/pve1/lxc/200/config", nil, &conf)
	digest := conf["digest"].(string)
	h.ok("PUT", "/nodes/pve1/lxc/200/config", vals("description", "first", "digest", digest), nil)
	h.fail("PUT", "/nodes/pve1/lxc/200/config", vals("description", "second", "digest", digest), 500,
		"detected modified configuration - file changed by other user? Try again.")
	h.fail("PUT", "/nodes/pve1/lxc/200/config", vals("delete", "memory"), 500, "unable to delete required option 'memory'")
	h.fail("PUT", "/nodes/pve1/lxc/200/config", vals("unprivileged", "0"), 500, "unable to modify read-only option: 'unprivileged'")
	h.fail("PUT", "/nodes/pve1/lxc/200/config", vals("mp0", "/srv,mp=/srv"), 403, "mount point type bind")
	if err := h.sim.SetConfig(200, "lock", "backup"); err != nil {
		t.Fatal(err)
	}
	h.fail("PUT", "/nodes/pve1/lxc/200/config", vals("onboot", "0"), 500, "CT is locked (backup)")
	// power actions check the lock inside their task (pve-container API2/LXC/Status.pm)
	h.run("POST", "/nodes/pve1/lxc/200/status/stop", nil, "CT is locked (backup)")
	h.run("POST", "/nodes/pve1/lxc/200/status/shutdown", nil, "CT is locked (backup)")
	h.fail("DELETE", "/nodes/pve1/lxc/200", vals("force", "1"), 500, "CT is locked (backup)")
	h.fail("PUT", "/nodes/pve1/lxc/200/resize", vals("disk", "rootfs", "size", "+1G"), 500, "CT is locked (backup)")
}

func TestLXCConfigMountPoints(t *testing.T) {
	h := demoHarness(t)
	h.ok("PUT", "/nodes/pve1/lxc/200/config", vals("mp0", "local-lvm:2,mp=/data,backup=1"), nil)
	g, _ := h.sim.Guest(200)
	if g.Config["mp0"] != "local-lvm:vm-200-disk-1,mp=/data,backup=1,size=2G" {
		t.Errorf("mp0 = %q", g.Config["mp0"])
	}
	// removing a volume mount point of a running CT is pending; applied, the volume stays as unusedN
	h.ok("PUT", "/nodes/pve1/lxc/200/config", vals("delete", "mp0"), nil)
	g, _ = h.sim.Guest(200)
	if !slices.Contains(g.PendingDelete, "mp0") {
		t.Fatalf("mp0 delete not pending on a running CT: %v", g.PendingDelete)
	}
	h.run("POST", "/nodes/pve1/lxc/200/status/stop", nil, "OK")
	h.run("POST", "/nodes/pve1/lxc/200/status/start", nil, "OK")
	g, _ = h.sim.Guest(200)
	if g.Config["unused0"] != "local-lvm:vm-200-disk-1" {
		t.Fatalf("unused0 = %q (config %v)", g.Config["unused0"], g.Config)
	}
	if !slices.Contains(h.sim.Volumes("local-lvm"), "vm-200-disk-1") {
		t.Fatal("volume freed on mp delete")
	}
	// deleting unusedN destroys the volume
	h.ok("PUT", "/nodes/pve1/lxc/200/config", vals("delete", "unused0"), nil)
	if slices.Contains(h.sim.Volumes("local-lvm"), "vm-200-disk-1") {
		t.Error("unused volume not freed")
	}
	// protection blocks mount changes
	h.ok("PUT", "/nodes/pve1/lxc/200/config", vals("protection", "1"), nil)
	h.fail("PUT", "/nodes/pve1/lxc/200/config", vals("rootfs", "local-lvm:vm-200-disk-0,size=9G"), 500, "protection mode enabled")
}

func TestLXCResize(t *testing.T) {
	h := demoHarness(t)
	h.fail("PUT", "/nodes/pve1/lxc/200/resize", vals("disk", "rootfs", "size", "4G"), 500, "unable to shrink disk size")
	h.fail("PUT", "/nodes/pve1/lxc/200/resize", vals("disk", "rootfs", "size", "8G"), 500, "disk is already at specified size")
	h.run("PUT", "/nodes/pve1/lxc/200/resize", vals("disk", "rootfs", "size", "+2G"), "OK")
	g, _ := h.sim.Guest(200)
	if g.Config["rootfs"] != "local-lvm:vm-200-disk-0,size=10G" {
		t.Errorf("rootfs after resize: %q", g.Config["rootfs"])
	}
	h.run("PUT", "/nodes/pve1/lxc/200/resize", vals("disk", "rootfs", "size", "11274289152"), "OK")
	g, _ = h.sim.Guest(200)
	if g.Config["rootfs"] != "local-lvm:vm-200-disk-0,size=10752M" {
		t.Errorf("rootfs after byte resize: %q", g.Config["rootfs"])
	}
	h.fail("PUT", "/nodes/pve1/lxc/200/resize", vals("disk", "mp3", "size", "+1G"), 500, "disk 'mp3' does not exist")
}

func TestLXCInterfaces(t *testing.T) {
	h := demoHarness(t)
	var ifs []map[string]any
	h.ok("GET", "/nodes/pve1/lxc/200/interfaces", nil, &ifs)
	if len(ifs) != 2 || ifs[1]["name"] != "eth0" || ifs[1]["inet"] != "192.0.2.200/24" || ifs[1]["hwaddr"] != "bc:24:11:00:02:00" {
		t.Errorf("interfaces %v", ifs)
	}
}

func TestFormatSizeAndParse(t *testing.T) {
	cases := map[int64]string{8 * gib: "8G", 8704 * mib: "8704M", 1536: "1536", 1023: "1023", 2 * tib: "2T", 1024 * 1023: "1023K"}
	for n, want := range cases {
		if got := formatSize(n); got != want {
			t.Errorf("formatSize(%d) = %s, want %s", n, got, want)
		}
		if back, ok := parseSize(want); !ok || back != n {
			t.Errorf("parseSize(%s) = %d,%v", want, back, ok)
		}
	}
	if n, _ := parseSize("1.5G"); n != 1536*mib {
		t.Errorf("1.5G = %d", n)
	}
	if _, ok := parseSize("8GiB"); ok {
		t.Error("8GiB accepted by parse_size")
	}
}

func TestVolumeOwnership(t *testing.T) {
	cases := []struct {
		typ, name string
		owner     int
		fails     bool
	}{
		{"lvmthin", "vm-5001-disk-0", 5001, false},
		{"lvmthin", "base-9000-disk-0", 9000, false},
		{"lvmthin", "foo", 0, true},
		{"lvm", "base-9000-disk-0", 0, true},
		{"dir", "5001/vm-5001-disk-0.raw", 5001, false},
		{"dir", "5001/vm-9999-disk-0.raw", 5001, false},
		{"dir", "9000/base-9000-disk-0.raw/5001/vm-5001-disk-0.qcow2", 5001, false},
		{"dir", "5001/vm-5001-disk-0", 0, true},
		{"dir", "backup/vzdump-lxc-5001-2025_01_31-02_00_05.tar.zst", 5001, false},
		{"dir", "vztmpl/debian-12-standard_12.7-1_amd64.tar.zst", 0, false},
		{"zfspool", "subvol-5001-disk-0", 5001, false},
		{"zfspool", "base-100-disk-0/vm-5001-disk-1", 5001, false},
		{"rbd", "vm-5001-disk-0", 5001, false},
	}
	for _, c := range cases {
		info, err := parseVolname(c.typ, c.name)
		if (err != nil) != c.fails {
			t.Errorf("%s %s: err %v", c.typ, c.name, err)
			continue
		}
		if err == nil && info.owner != c.owner {
			t.Errorf("%s %s: owner %d, want %d", c.typ, c.name, info.owner, c.owner)
		}
	}
}

func TestTagsNormalised(t *testing.T) {
	h := demoHarness(t)
	h.run("POST", "/nodes/pve1/lxc", vals("vmid", "5001", "ostemplate", debianTmpl, "rootfs", "local-lvm:1", "tags", "Svc-42,pvebill pvebill;alpha"), "OK")
	g, _ := h.sim.Guest(5001)
	if g.Config["tags"] != "alpha;pvebill;svc-42" {
		t.Errorf("tags %q", g.Config["tags"])
	}
	h.ok("PUT", "/nodes/pve1/qemu/300/config", vals("tags", "B;a"), nil)
	g, _ = h.sim.Guest(300)
	if g.Config["tags"] != "a;b" {
		t.Errorf("vm tags %q", g.Config["tags"])
	}
}
