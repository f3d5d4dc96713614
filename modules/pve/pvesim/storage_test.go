package pvesim

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestStorageContent(t *testing.T) {
	h := demoHarness(t)
	h.sim.AddVolume("local", "backup/vzdump-lxc-200-2025_01_31-02_00_05.tar.zst", 300*mib, "backup")
	h.sim.AddVolume("local", "backup/vzdump-qemu-300-2025_02_01-02_00_05.vma.zst", 900*mib, "backup")
	h.sim.SetVolumeProtected("local", "backup/vzdump-lxc-200-2025_01_31-02_00_05.tar.zst", true, "before upgrade\nsecond line")

	var list []map[string]any
	h.ok("GET", "/nodes/pve1/storage", nil, &list)
	if len(list) != 3 || list[0]["storage"] != "local" || list[1]["type"] != "lvmthin" || list[2]["type"] != "zfspool" {
		t.Errorf("storages %v", list)
	}
	var backups []map[string]any
	h.ok("GET", "/nodes/pve1/storage/local/content", vals("content", "backup", "vmid", "200"), &backups)
	if len(backups) != 1 {
		t.Fatalf("backups %v", backups)
	}
	b := backups[0]
	want := map[string]any{"volid": "local:backup/vzdump-lxc-200-2025_01_31-02_00_05.tar.zst", "content": "backup",
		"format": "tar.zst", "vmid": float64(200), "subtype": "lxc", "notes": "before upgrade", "protected": float64(1),
		"size": float64(300 * mib), "ctime": float64(1738288805)}
	for k, v := range want {
		if b[k] != v {
			t.Errorf("backup %s = %#v, want %#v", k, b[k], v)
		}
	}
	var tmpls []map[string]any
	h.ok("GET", "/nodes/pve1/storage/local/content", vals("content", "vztmpl"), &tmpls)
	if len(tmpls) != 2 || tmpls[0]["format"] != "tzst" {
		t.Errorf("templates %v", tmpls)
	}
	if _, ok := tmpls[0]["vmid"]; ok {
		t.Error("template carries a vmid")
	}
	var all []map[string]any
	h.ok("GET", "/nodes/pve1/storage/local/content", nil, &all)
	for i := 1; i < len(all); i++ {
		if all[i-1]["volid"].(string) > all[i]["volid"].(string) {
			t.Errorf("content not sorted by volid: %v before %v", all[i-1]["volid"], all[i]["volid"])
		}
	}
	var lvm []map[string]any
	h.ok("GET", "/nodes/pve1/storage/local-lvm/content", vals("vmid", "200"), &lvm)
	if len(lvm) != 1 || lvm[0]["volid"] != "local-lvm:vm-200-disk-0" || lvm[0]["content"] != "rootdir" {
		t.Errorf("lvm content %v", lvm)
	}
	h.fail("DELETE", "/nodes/pve1/storage/local/content/backup%2Fvzdump-lxc-200-2025_01_31-02_00_05.tar.zst", nil, 500, "is protected")
	h.fail("GET", "/nodes/pve1/storage/nope/content", nil, 500, "storage 'nope' does not exist")
	h.noViolations()
}

func TestFirewall(t *testing.T) {
	h := demoHarness(t)
	var opts map[string]any
	h.ok("GET", "/cluster/firewall/options", nil, &opts)
	if _, ok := opts["enable"]; ok {
		t.Errorf("datacenter firewall enabled by default: %v", opts)
	}
	h.ok("PUT", "/cluster/firewall/options", vals("enable", "1"), nil)
	h.ok("GET", "/cluster/firewall/options", nil, &opts)
	if opts["enable"] != float64(1) {
		t.Errorf("cluster options %v", opts)
	}
	for _, typ := range []string{"lxc/200", "qemu/300"} {
		base := "/nodes/pve1/" + typ + "/firewall"
		h.ok("PUT", base+"/options", vals("enable", "1", "ipfilter", "1", "policy_in", "ACCEPT"), nil)
		var fo map[string]any
		h.ok("GET", base+"/options", nil, &fo)
		if fo["enable"] != float64(1) || fo["ipfilter"] != float64(1) || fo["policy_in"] != "ACCEPT" {
			t.Errorf("%s options %v", typ, fo)
		}
		h.ok("PUT", base+"/options", vals("delete", "policy_in"), nil)
		h.ok("POST", base+"/ipset", vals("name", "ipfilter-net0", "comment", "pvebill"), nil)
		h.fail("POST", base+"/ipset", vals("name", "ipfilter-net0"), 500, "already exists")
		h.ok("POST", base+"/ipset/ipfilter-net0", vals("cidr", "192.0.2.30"), nil)
		h.ok("POST", base+"/ipset/ipfilter-net0", vals("cidr", "2001:db8::/64"), nil)
		var sets []map[string]any
		h.ok("GET", base+"/ipset", nil, &sets)
		if len(sets) != 1 || sets[0]["name"] != "ipfilter-net0" {
			t.Errorf("ipsets %v", sets)
		}
		var entries []map[string]any
		h.ok("GET", base+"/ipset/ipfilter-net0", nil, &entries)
		if len(entries) != 2 {
			t.Errorf("entries %v", entries)
		}
		h.ok("DELETE", base+"/ipset/ipfilter-net0/192.0.2.30", nil, nil)
		h.fail("DELETE", base+"/ipset/ipfilter-net0", nil, 500, "is not empty")
	}
	g, _ := h.sim.Guest(200)
	if g.Firewall["ipfilter"] != "1" || len(g.IPSets["ipfilter-net0"]) != 1 {
		t.Errorf("snapshot firewall %v ipsets %v", g.Firewall, g.IPSets)
	}
	h.noViolations()
}

func TestHAResources(t *testing.T) {
	h := demoHarness(t)
	h.ok("POST", "/cluster/ha/resources", vals("sid", "ct:200", "state", "started"), nil)
	var st map[string]any
	h.ok("GET", "/nodes/pve1/lxc/200/status/current", nil, &st)
	if ha, _ := st["ha"].(map[string]any); ha["managed"] != float64(1) {
		t.Errorf("ha %v", st["ha"])
	}
	upid := h.run("POST", "/nodes/pve1/lxc/200/status/stop", nil, "OK")
	if !regexpMatch(`:hastop:200:`, upid) {
		t.Errorf("HA stop UPID %s", upid)
	}
	g, _ := h.sim.Guest(200)
	if g.HAState != "stopped" || g.Status != "stopped" {
		t.Errorf("after hastop: %s %s", g.HAState, g.Status)
	}
	h.ok("PUT", "/cluster/ha/resources/ct:200", vals("state", "ignored"), nil)
	h.ok("DELETE", "/cluster/ha/resources/ct:200", nil, nil)
	h.noViolations()
}

func TestVzdumpAndRestore(t *testing.T) {
	h := demoHarness(t)
	var ok string
	h.ok("POST", "/nodes/pve2/vzdump", vals("vmid", "200", "storage", "local"), &ok)
	if ok != "OK" {
		t.Errorf("vzdump on a node without the guest = %q, want OK", ok)
	}
	h.sim.SetTaskDuration("vzdump", time.Hour)
	upid := h.upid("POST", "/nodes/pve1/vzdump", vals("vmid", "200", "storage", "local", "mode", "snapshot", "compress", "zstd",
		"notes-template", "{{guestname}} ({{vmid}})", "protected", "1"))
	if !strings.Contains(upid, ":vzdump:200:") {
		t.Errorf("UPID %s", upid)
	}
	h.run("POST", "/nodes/pve1/lxc/200/status/stop", nil, "CT is locked (backup)")
	h.sim.Advance(time.Hour)
	var backups []map[string]any
	h.ok("GET", "/nodes/pve1/storage/local/content", vals("content", "backup", "vmid", "200"), &backups)
	if len(backups) != 1 || backups[0]["notes"] != "demo-ct (200)" || backups[0]["protected"] != float64(1) || backups[0]["format"] != "tar.zst" {
		t.Fatalf("backups %v", backups)
	}
	volid := backups[0]["volid"].(string)
	// restore over the existing container needs force and a stopped container
	h.fail("POST", "/nodes/pve1/lxc", vals("vmid", "200", "ostemplate", volid, "restore", "1"), 500, "CT 200 already exists")
	h.fail("POST", "/nodes/pve1/lxc", vals("vmid", "200", "ostemplate", volid, "restore", "1", "force", "1"), 500, "can't overwrite running container")
	h.run("POST", "/nodes/pve1/lxc/200/status/stop", nil, "OK")
	up := h.run("POST", "/nodes/pve1/lxc", vals("vmid", "200", "ostemplate", volid, "restore", "1", "force", "1", "storage", "local-lvm", "rootfs", "local-lvm:8"), "OK")
	if !strings.Contains(up, ":vzrestore:200:") {
		t.Errorf("restore UPID %s", up)
	}
	// new volumes are allocated before the old ones are destroyed: the new one is disk-1
	g, _ := h.sim.Guest(200)
	if g.Config["rootfs"] != "local-lvm:vm-200-disk-1,size=8G" {
		t.Errorf("restored rootfs %q (volumes %v)", g.Config["rootfs"], h.sim.Volumes("local-lvm"))
	}
	if slices.Contains(h.sim.Volumes("local-lvm"), "vm-200-disk-0") {
		t.Error("the old rootfs survived a forced restore")
	}
	// a template is not a backup
	h.fail("POST", "/nodes/pve1/lxc", vals("vmid", "5001", "ostemplate", debianTmpl, "restore", "1"), 500, "content type needs to be 'backup'")
	h.noViolations()
}

func TestRestoreTakesBackedUpConfig(t *testing.T) {
	h := demoHarness(t)
	h.ok("PUT", "/nodes/pve1/lxc/200/config", vals("mp0", "local-lvm:2,mp=/data,backup=1"), nil)
	h.run("POST", "/nodes/pve1/vzdump", vals("vmid", "200", "storage", "local", "compress", "zstd"), "OK")
	var backups []map[string]any
	h.ok("GET", "/nodes/pve1/storage/local/content", vals("content", "backup"), &backups)
	volid := backups[0]["volid"].(string)
	// the archive is on pve1's local storage: restoring on pve2 cannot read it
	h.run("POST", "/nodes/pve2/lxc", vals("vmid", "5001", "ostemplate", volid, "restore", "1", "storage", "local-lvm"), "unable to restore CT 5001 - volume '"+volid+"' does not exist")
	h.run("POST", "/nodes/pve1/lxc", vals("vmid", "5001", "ostemplate", volid, "restore", "1", "storage", "local-lvm", "memory", "2048"), "OK")
	g, _ := h.sim.Guest(5001)
	want := map[string]string{"memory": "2048", "swap": "512", "hostname": "demo-ct", "unprivileged": "1",
		"rootfs": "local-lvm:vm-5001-disk-0,size=8G", "mp0": "local-lvm:vm-5001-disk-1,mp=/data,backup=1,size=2G"}
	for k, v := range want {
		if g.Config[k] != v {
			t.Errorf("restored %s = %q, want %q", k, g.Config[k], v)
		}
	}
	src, _ := h.sim.Guest(200)
	if g.Config["net0"] != src.Config["net0"] {
		t.Errorf("restore without unique changed net0: %q vs %q", g.Config["net0"], src.Config["net0"])
	}
	h.run("POST", "/nodes/pve1/lxc", vals("vmid", "5002", "ostemplate", volid, "restore", "1", "unique", "1", "storage", "local-lvm"), "OK")
	u, _ := h.sim.Guest(5002)
	if strings.Contains(u.Config["net0"], "hwaddr=BC:24:11:00:02:00") || !strings.Contains(u.Config["net0"], "hwaddr=BC:24:11:") {
		t.Errorf("unique restore net0 %q", u.Config["net0"])
	}
	h.noViolations()
}

func TestPools(t *testing.T) {
	h := demoHarness(t)
	h.fail("POST", "/nodes/pve1/lxc", vals("vmid", "5001", "ostemplate", debianTmpl, "rootfs", "local-lvm:1", "pool", "customers"), 403,
		"Permission check failed (pool 'customers' does not exist)")
	h.sim.AddPool("customers")
	h.run("POST", "/nodes/pve1/lxc", vals("vmid", "5001", "ostemplate", debianTmpl, "rootfs", "local-lvm:1", "pool", "customers"), "OK")
	h.run("POST", "/nodes/pve1/qemu/9000/clone", vals("newid", "5002", "pool", "customers"), "OK")
	var pools []map[string]any
	h.ok("GET", "/pools", nil, &pools)
	if len(pools) != 1 || len(pools[0]["members"].([]any)) != 2 {
		t.Fatalf("pools %v", pools)
	}
	var res []map[string]any
	h.ok("GET", "/cluster/resources", vals("type", "vm"), &res)
	for _, e := range res {
		if id := e["vmid"].(float64); (id == 5001 || id == 5002) != (e["pool"] == "customers") {
			t.Errorf("resource %v pool %v", id, e["pool"])
		}
	}
	h.fail("DELETE", "/pools/customers", nil, 500, "is not empty")
	h.run("DELETE", "/nodes/pve1/lxc/5001", vals("purge", "1"), "OK")
	h.run("DELETE", "/nodes/pve1/qemu/5002", vals("purge", "1"), "OK")
	h.ok("DELETE", "/pools/customers", nil, nil)
	h.noViolations()
}

func TestStorageConfig(t *testing.T) {
	h := demoHarness(t)
	var list []map[string]any
	h.ok("GET", "/storage", nil, &list)
	if len(list) != 3 || list[1]["storage"] != "local-lvm" || list[1]["type"] != "lvmthin" || list[1]["content"] != "images,rootdir" {
		t.Errorf("storage.cfg %v", list)
	}
	var one map[string]any
	h.ok("GET", "/storage/local", nil, &one)
	if one["path"] != "/var/lib/vz" {
		t.Errorf("local %v", one)
	}
	h.fail("GET", "/storage/nope", nil, 500, "storage 'nope' does not exist")
}

// vzdump prunes by the storage's prune-backups unless remove=0 (docs/proxmox.md §15): the
// guest's oldest unprotected backups go beyond keep-last, protected ones are neither counted
// nor removed, and other guests' backups are not touched. remove=0 prunes nothing; a call's
// own prune-backups overrides the storage's; an archive name already taken fails the task.
func TestVzdumpPrunesUnlessRemoveZero(t *testing.T) {
	h := demoHarness(t)
	h.sim.SetPruneBackups("local", "keep-last=2")
	h.sim.AddVolume("local", "backup/vzdump-lxc-200-2020_01_01-00_00_00.tar.zst", mib, "backup")
	h.sim.AddVolume("local", "backup/vzdump-lxc-200-2020_01_02-00_00_00.tar.zst", mib, "backup")
	h.sim.AddVolume("local", "backup/vzdump-lxc-200-2020_01_03-00_00_00.tar.zst", mib, "backup")
	h.sim.SetVolumeProtected("local", "backup/vzdump-lxc-200-2020_01_01-00_00_00.tar.zst", true, "")
	h.sim.AddVolume("local", "backup/vzdump-qemu-300-2020_01_01-00_00_00.vma.zst", mib, "backup")
	count := func() int { return len(h.sim.Volumes("local")) }
	before := count()
	h.run("POST", "/nodes/pve1/vzdump", vals("vmid", "200", "storage", "local", "remove", "0"), "OK")
	if count() != before+1 {
		t.Fatalf("remove=0 pruned: %v", h.sim.Volumes("local"))
	}
	h.sim.Advance(2 * time.Second)
	h.run("POST", "/nodes/pve1/vzdump", vals("vmid", "200", "storage", "local"), "OK")
	left := h.sim.Volumes("local")
	for _, gone := range []string{"backup/vzdump-lxc-200-2020_01_02-00_00_00.tar.zst", "backup/vzdump-lxc-200-2020_01_03-00_00_00.tar.zst"} {
		if slices.Contains(left, gone) {
			t.Errorf("%s survived keep-last=2", gone)
		}
	}
	for _, kept := range []string{"backup/vzdump-lxc-200-2020_01_01-00_00_00.tar.zst", "backup/vzdump-qemu-300-2020_01_01-00_00_00.vma.zst"} {
		if !slices.Contains(left, kept) {
			t.Errorf("%s (protected or another guest's) was pruned", kept)
		}
	}
	h.sim.Advance(2 * time.Second)
	h.run("POST", "/nodes/pve1/vzdump", vals("vmid", "200", "storage", "local", "prune-backups", "keep-last=1"), "OK")
	var backups []map[string]any
	h.ok("GET", "/nodes/pve1/storage/local/content", vals("content", "backup", "vmid", "200"), &backups)
	if len(backups) != 2 { // the protected one and the newest
		t.Fatalf("after keep-last=1: %v", backups)
	}
	// The same second again: the archive's name is taken.
	upid := h.upid("POST", "/nodes/pve1/vzdump", vals("vmid", "200", "storage", "local", "remove", "0"))
	if st := h.taskStatus(upid); !strings.HasSuffix(fmt.Sprint(st["exitstatus"]), "file already exists") {
		t.Fatalf("a second archive in the same second: %v", st)
	}
	h.noViolations()
}

// R43: extractconfig answers the config a VM had when vzdump archived it, as text, and refuses a
// volume that is not a backup or that the node cannot find.
func TestVzdumpExtractConfig(t *testing.T) {
	h := demoHarness(t)
	h.ok("PUT", "/nodes/pve1/qemu/300/config", vals("description", "first\nsecond"), nil)
	h.run("POST", "/nodes/pve1/vzdump", vals("vmid", "300", "storage", "local"), "OK")
	var backups []map[string]any
	h.ok("GET", "/nodes/pve1/storage/local/content", vals("content", "backup", "vmid", "300"), &backups)
	if len(backups) != 1 {
		t.Fatalf("backups %v", backups)
	}
	volid := backups[0]["volid"].(string)
	h.ok("POST", "/nodes/pve1/qemu/300/config", vals("scsi1", "local-lvm:1"), nil)
	var text string
	h.ok("GET", "/nodes/pve1/vzdump/extractconfig", vals("volume", volid), &text)
	if !strings.HasPrefix(text, "#first\n#second\n") || !strings.Contains(text, "\nscsi0: local-lvm:vm-300-disk-0,size=16G\n") ||
		strings.Contains(text, "scsi1") || strings.Contains(text, "lock") || strings.Contains(text, "description") {
		t.Errorf("extractconfig answered %q", text)
	}
	// local is not shared: pve2 does not see pve1's archive
	h.fail("GET", "/nodes/pve2/vzdump/extractconfig", vals("volume", volid), 500, "can't find file '"+volid+"'")
	h.fail("GET", "/nodes/pve1/vzdump/extractconfig", vals("volume", "local:backup/vzdump-qemu-300-2020_01_01-00_00_00.vma.zst"),
		500, "can't find file")
	h.fail("GET", "/nodes/pve1/vzdump/extractconfig", vals("volume", debianTmpl), 500, "content type needs to be 'backup'")
	h.fail("GET", "/nodes/pve1/vzdump/extractconfig", vals("volume", "nosuch:backup/x.vma"), 500, "storage 'nosuch' does not exist")
	h.noViolations()
}
