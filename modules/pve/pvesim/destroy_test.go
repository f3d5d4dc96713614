package pvesim

import (
	"slices"
	"strings"
	"testing"
)

func seedDestroyScenario(t *testing.T, h *harness) {
	t.Helper()
	h.sim.AddStorage("tank", "zfspool", []string{"rootdir", "images"}, false)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(h.sim.SeedGuest(Guest{VMID: 5002, Type: "lxc", Node: "pve1", Config: map[string]string{
		"hostname": "other", "memory": "512", "rootfs": "local-lvm:vm-5002-disk-0,size=8G"}}))
	must(h.sim.SeedGuest(Guest{VMID: 5001, Type: "lxc", Node: "pve1", Config: map[string]string{
		"hostname": "victim", "memory": "512", "swap": "512",
		"rootfs":  "local-lvm:vm-5001-disk-0,size=8G",
		"mp0":     "local:5001/vm-5001-disk-1.raw,mp=/a,size=1G",
		"mp1":     "tank:subvol-5001-disk-0,mp=/b,size=2G",
		"mp2":     "local-lvm:vm-5002-disk-0,mp=/c,size=8G",
		"mp3":     "/srv/data,mp=/d",
		"mp4":     "/dev/sdb1,mp=/e",
		"mp6":     "local:5001/vm-9999-disk-0.raw,mp=/g,size=1G",
		"unused0": "local-lvm:vm-5001-disk-5",
	}, Pending: map[string]string{"mp5": "local-lvm:vm-5001-disk-6,mp=/f,size=1G"}}))
	// orphans named for 5001 that no config references
	h.sim.AddVolume("local-lvm", "vm-5001-disk-9", gib, "rootdir")
	h.sim.AddVolume("tank", "subvol-5001-disk-3", gib, "rootdir")
}

func TestLXCDestroyOwnership(t *testing.T) {
	h := demoHarness(t)
	seedDestroyScenario(t, h)
	upid := h.run("DELETE", "/nodes/pve1/lxc/5001", vals("purge", "1"), "OK")
	if !strings.Contains(upid, ":vzdestroy:5001:") {
		t.Errorf("UPID %s", upid)
	}
	if _, ok := h.sim.Guest(5001); ok {
		t.Fatal("guest still exists")
	}
	lvm, dir, tank := h.sim.Volumes("local-lvm"), h.sim.Volumes("local"), h.sim.Volumes("tank")
	for _, gone := range []string{"vm-5001-disk-0", "vm-5001-disk-5", "vm-5001-disk-6"} {
		if slices.Contains(lvm, gone) {
			t.Errorf("local-lvm:%s not freed", gone)
		}
	}
	for _, gone := range []string{"5001/vm-5001-disk-1.raw", "5001/vm-9999-disk-0.raw"} {
		if slices.Contains(dir, gone) {
			t.Errorf("local:%s not freed (dir owner is the directory)", gone)
		}
	}
	if slices.Contains(tank, "subvol-5001-disk-0") {
		t.Error("tank:subvol-5001-disk-0 not freed")
	}
	if !slices.Contains(lvm, "vm-5002-disk-0") {
		t.Error("another guest's volume was freed")
	}
	if !slices.Contains(lvm, "vm-5001-disk-9") || !slices.Contains(tank, "subvol-5001-disk-3") {
		t.Error("unreferenced volumes freed without destroy-unreferenced-disks")
	}
	log := strings.Join(h.sim.TaskLog(upid), "\n")
	if !strings.Contains(log, "ignore deletion of 'local-lvm:vm-5002-disk-0', CT 5001 isn't the owner!") {
		t.Errorf("task log lacks the ownership line:\n%s", log)
	}
	if strings.Contains(log, "/srv/data") || strings.Contains(log, "/dev/sdb1") {
		t.Errorf("bind/device mounts touched:\n%s", log)
	}
	h.noViolations()
}

func TestLXCDestroyUnreferencedDisks(t *testing.T) {
	h := demoHarness(t)
	seedDestroyScenario(t, h)
	h.run("DELETE", "/nodes/pve1/lxc/5001", vals("purge", "1", "destroy-unreferenced-disks", "1"), "OK")
	for _, v := range append(h.sim.Volumes("local-lvm"), h.sim.Volumes("tank")...) {
		if strings.Contains(v, "-5001-") {
			t.Errorf("volume %s named for 5001 survived", v)
		}
	}
	if !slices.Contains(h.sim.Volumes("local-lvm"), "vm-5002-disk-0") {
		t.Error("unreferenced-disks freed another guest's volume")
	}
}

func TestLXCDestroyRefusalsAndTransientLock(t *testing.T) {
	h := demoHarness(t)
	h.fail("DELETE", "/nodes/pve1/lxc/200", nil, 500, "unable to destroy CT 200 - container is running")
	h.ok("PUT", "/nodes/pve1/lxc/200/config", vals("protection", "1"), nil)
	h.fail("DELETE", "/nodes/pve1/lxc/200", vals("force", "1"), 500, "can't remove CT 200 - protection mode enabled")
	h.ok("PUT", "/nodes/pve1/lxc/200/config", vals("delete", "protection"), nil)
	h.fail("DELETE", "/nodes/pve2/lxc/200", nil, 500, "Configuration file 'nodes/pve2/lxc/200.conf' does not exist")

	h.sim.SetTaskDuration("vzdestroy", 1<<40)
	upid := h.upid("DELETE", "/nodes/pve1/lxc/200", vals("force", "1"))
	var conf map[string]any
	h.ok("GET", "/nodes/pve1/lxc/200/config", nil, &conf)
	if conf["lock"] != "destroyed" {
		t.Errorf("lock during destroy = %v", conf["lock"])
	}
	h.run("POST", "/nodes/pve1/lxc/200/status/start", nil, "CT is locked (destroyed)")
	if st := h.taskStatus(upid); st["status"] != "running" {
		t.Errorf("destroy task %v", st)
	}
	h.sim.Advance(1 << 40)
	h.fail("GET", "/nodes/pve1/lxc/200/config", nil, 500, "Configuration file 'nodes/pve1/lxc/200.conf' does not exist")
}

func TestLXCDestroyHAManaged(t *testing.T) {
	h := demoHarness(t)
	if err := h.sim.SeedGuest(Guest{VMID: 5050, Type: "lxc", Node: "pve1", HAState: "started", Config: map[string]string{"memory": "512", "rootfs": "local-lvm:vm-5050-disk-0,size=1G"}}); err != nil {
		t.Fatal(err)
	}
	h.fail("DELETE", "/nodes/pve1/lxc/5050", nil, 500, "used in HA resources and purge parameter not set")
	h.run("DELETE", "/nodes/pve1/lxc/5050", vals("purge", "1"), "OK")
	var res []map[string]any
	h.ok("GET", "/cluster/ha/resources", nil, &res)
	if len(res) != 0 {
		t.Errorf("HA resources after purge: %v", res)
	}
}

func TestLXCDestroyThenCreateFails(t *testing.T) {
	h := demoHarness(t)
	// destroy succeeds, the following create's task fails: the id is free again
	h.sim.InjectFault(Fault{Method: "POST", PathPattern: "/nodes/{node}/lxc", Nth: 1, TaskFail: "unable to create CT 200 - no space left on device"})
	// forcing the destroy of a running container is a warning in the task
	up := h.run("DELETE", "/nodes/pve1/lxc/200", vals("force", "1", "purge", "1", "destroy-unreferenced-disks", "1"), "WARNINGS: 1")
	if log := h.sim.TaskLog(up); log[0] != "WARN: forced to stop CT 200 before destroying!" {
		t.Errorf("log %q", log)
	}
	h.run("POST", "/nodes/pve1/lxc", vals("vmid", "200", "ostemplate", debianTmpl, "rootfs", "local-lvm:8"), "unable to create CT 200 - no space left on device")
	if _, ok := h.sim.Guest(200); ok {
		t.Error("guest exists after failed create")
	}
	var id string
	h.ok("GET", "/cluster/nextid", vals("vmid", "200"), &id)
	if id != "200" {
		t.Errorf("nextid vmid=200 -> %q", id)
	}
	// the fault fired once: the retry succeeds
	h.run("POST", "/nodes/pve1/lxc", vals("vmid", "200", "ostemplate", debianTmpl, "rootfs", "local-lvm:8"), "OK")
}

func TestLXCDestroyAbortsPartway(t *testing.T) {
	h := demoHarness(t)
	if err := h.sim.SeedGuest(Guest{VMID: 5060, Type: "lxc", Node: "pve1", Config: map[string]string{
		"memory": "512", "rootfs": "local-lvm:vm-5060-disk-0,size=1G",
		"mp0": "gone:vm-5060-disk-1,mp=/data,size=1G", "mp1": "local-lvm:vm-5060-disk-2,mp=/more,size=1G"}}); err != nil {
		t.Fatal(err)
	}
	// a volume on a storage that no longer exists makes vdisk_free fail: the LXC destroy
	// stops there, after rootfs is gone and before mp1, and the config stays
	h.run("DELETE", "/nodes/pve1/lxc/5060", nil, "storage 'gone' does not exist")
	vols := h.sim.Volumes("local-lvm")
	if slices.Contains(vols, "vm-5060-disk-0") {
		t.Error("rootfs survived")
	}
	if !slices.Contains(vols, "vm-5060-disk-2") {
		t.Error("mp1 freed although the destroy stopped at mp0")
	}
	g, ok := h.sim.Guest(5060)
	if !ok || g.Lock != "" {
		t.Errorf("config after an aborted destroy: %v %+v", ok, g)
	}
}
