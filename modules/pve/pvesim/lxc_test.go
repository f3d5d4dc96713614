package pvesim

import (
	"net/http"
	"strings"
	"testing"
)

const debianTmpl = "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst"

func TestLXCCreateDefaults(t *testing.T) {
	h := demoHarness(t)
	h.run("POST", "/nodes/pve1/lxc", vals("vmid", "5001", "ostemplate", debianTmpl), "OK")
	var conf map[string]any
	h.ok("GET", "/nodes/pve1/lxc/5001/config", nil, &conf)
	want := map[string]any{"swap": float64(512), "memory": float64(512), "hostname": "CT5001", "arch": "amd64",
		"unprivileged": float64(1), "ostype": "debian", "rootfs": "local:5001/vm-5001-disk-0.raw,size=4G"}
	for k, v := range want {
		if conf[k] != v {
			t.Errorf("config %s = %#v, want %#v", k, conf[k], v)
		}
	}
	for _, k := range []string{"net0", "onboot", "lock", "features"} {
		if _, ok := conf[k]; ok {
			t.Errorf("config has %s = %v, want absent", k, conf[k])
		}
	}
	if d, _ := conf["digest"].(string); len(d) != 40 {
		t.Errorf("digest %q is not a sha1 hex", d)
	}
	h.noViolations()
}

func TestLXCCreateKeepsExplicitZeroSwapAndPVE8Privileged(t *testing.T) {
	clk := &fixedClock{t: testEpoch}
	s := Demo(Options{Now: clk.Now, PVEMajor: 8})
	h := startHarness(t, s)
	h.run("POST", "/nodes/pve1/lxc", vals("vmid", "5002", "ostemplate", debianTmpl, "swap", "0", "rootfs", "local-lvm:8"), "OK")
	g, _ := s.Guest(5002)
	if g.Config["swap"] != "0" {
		t.Errorf("swap = %q, want 0", g.Config["swap"])
	}
	if _, ok := g.Config["unprivileged"]; ok {
		t.Errorf("PVE 8 default must be privileged (no unprivileged key), got %q", g.Config["unprivileged"])
	}
	if g.Config["rootfs"] != "local-lvm:vm-5002-disk-0,size=8G" {
		t.Errorf("rootfs = %q", g.Config["rootfs"])
	}
}

func TestLXCCreateAllocationNaming(t *testing.T) {
	h := demoHarness(t)
	h.sim.AddStorage("tank", "zfspool", []string{"rootdir", "images"}, false)
	// a leftover volume of an earlier owner of 5003 takes disk-0 on local-lvm
	h.sim.AddVolume("local-lvm", "vm-5003-disk-0", 2*gib, "rootdir")
	cases := []struct{ vmid, rootfs, want string }{
		{"5003", "local-lvm:8", "local-lvm:vm-5003-disk-1,size=8G"},
		{"5004", "local:2.5", "local:5004/vm-5004-disk-0.raw,size=2560M"},
		{"5005", "tank:16,mountoptions=noatime", "tank:subvol-5005-disk-0,mountoptions=noatime,size=16G"},
	}
	for _, c := range cases {
		h.run("POST", "/nodes/pve1/lxc", vals("vmid", c.vmid, "ostemplate", debianTmpl, "rootfs", c.rootfs), "OK")
		var conf map[string]any
		h.ok("GET", "/nodes/pve1/lxc/"+c.vmid+"/config", nil, &conf)
		if conf["rootfs"] != c.want {
			t.Errorf("rootfs %s -> %v, want %s", c.rootfs, conf["rootfs"], c.want)
		}
	}
	h.noViolations()
}

func TestLXCCreateAdoptsExistingVolume(t *testing.T) {
	h := demoHarness(t)
	h.sim.AddVolume("local-lvm", "vm-5010-disk-3", 6*gib, "rootdir")
	before := len(h.sim.Volumes("local-lvm"))
	h.run("POST", "/nodes/pve1/lxc", vals("vmid", "5010", "ostemplate", debianTmpl, "rootfs", "local-lvm:vm-5010-disk-3"), "OK")
	g, _ := h.sim.Guest(5010)
	if g.Config["rootfs"] != "local-lvm:vm-5010-disk-3,size=6G" {
		t.Errorf("rootfs = %q", g.Config["rootfs"])
	}
	if after := len(h.sim.Volumes("local-lvm")); after != before {
		t.Errorf("adoption allocated a volume: %d -> %d", before, after)
	}
}

func TestLXCCreateRefusals(t *testing.T) {
	h := demoHarness(t)
	h.fail("POST", "/nodes/pve1/lxc", vals("vmid", "200", "ostemplate", debianTmpl), 500, "CT 200 already exists on node 'pve1'")
	h.fail("POST", "/nodes/pve2/lxc", vals("vmid", "9000", "ostemplate", debianTmpl), 500, "VM 9000 already exists on node 'pve1'")
	h.fail("POST", "/nodes/pve1/lxc", vals("vmid", "5020", "ostemplate", debianTmpl, "rootfs", "8"), 500, "Only root can pass arbitrary filesystem paths.")
	h.fail("POST", "/nodes/pve1/lxc", vals("vmid", "5020", "ostemplate", debianTmpl, "rootfs", "local-lvm:8", "mp0", "/srv/data,mp=/data"), 403, "mount point type bind is only allowed for root@pam")
	h.fail("POST", "/nodes/pve1/lxc", vals("vmid", "5020", "ostemplate", debianTmpl, "rootfs", "local-lvm:8", "mp0", "/dev/sdb1,mp=/mnt"), 403, "mount point type device")
	h.fail("POST", "/nodes/pve1/lxc", vals("vmid", "5020", "ostemplate", "/var/lib/vz/template/cache/x.tar.zst"), 500, "Only root can pass arbitrary filesystem paths.")
	h.fail("POST", "/nodes/pve1/lxc", vals("vmid", "5020", "ostemplate", "local:iso/debian-12.7.0-amd64-netinst.iso"), 500,
		"unable to use volume local:iso/debian-12.7.0-amd64-netinst.iso - content type needs to be 'vztmpl'")
	h.fail("POST", "/nodes/pve1/lxc", vals("vmid", "5020", "ostemplate", debianTmpl, "features", "keyctl=1"), 403, "feature flags")
	h.fail("POST", "/nodes/pve1/lxc", vals("vmid", "5020", "ostemplate", debianTmpl, "mp0", "local-lvm:1,mp=/x"), 500, "mount points configured, but 'rootfs' not set - aborting")
	r := h.fail("POST", "/nodes/pve1/lxc", vals("vmid", "5020", "ostemplate", debianTmpl, "rootfs", "tmplonly:8"), 500, "storage 'tmplonly' does not exist")
	_ = r
	h.sim.AddStorage("isos", "dir", []string{"iso", "vztmpl"}, false)
	r = h.fail("POST", "/nodes/pve1/lxc", vals("vmid", "5020", "ostemplate", debianTmpl, "rootfs", "isos:8"), 400, "Parameter verification failed.")
	if r.Errors["storage"] != "storage 'isos' does not support container directories" {
		t.Errorf("errors %v", r.Errors)
	}
	if _, ok := h.sim.Guest(5020); ok {
		t.Error("a refused create left a guest behind")
	}
	// a template that does not exist fails in the task, which then cleans up
	h.run("POST", "/nodes/pve1/lxc", vals("vmid", "5020", "ostemplate", "local:vztmpl/nope.tar.zst", "rootfs", "local-lvm:1"), "unable to create CT 5020 - volume 'local:vztmpl/nope.tar.zst' does not exist")
	if _, ok := h.sim.Guest(5020); ok {
		t.Error("a failed create left a guest behind")
	}
	for _, v := range h.sim.Volumes("local-lvm") {
		if strings.Contains(v, "5020") {
			t.Errorf("failed create left %s", v)
		}
	}
}

func TestLXCCreateLockAndFailureRollback(t *testing.T) {
	h := demoHarness(t)
	h.sim.SetTaskDuration("vzcreate", 1<<40)
	upid := h.upid("POST", "/nodes/pve1/lxc", vals("vmid", "5030", "ostemplate", debianTmpl, "rootfs", "local-lvm:8"))
	var conf map[string]any
	h.ok("GET", "/nodes/pve1/lxc/5030/config", nil, &conf)
	if conf["lock"] != "create" {
		t.Fatalf("lock during create = %v", conf["lock"])
	}
	h.run("POST", "/nodes/pve1/lxc/5030/status/start", nil, "CT is locked (create)")
	h.fail("POST", "/nodes/pve1/lxc", vals("vmid", "5030", "ostemplate", debianTmpl), 500, "CT 5030 already exists")
	if st := h.taskStatus(upid); st["status"] != "running" || st["exitstatus"] != nil {
		t.Fatalf("task status while running: %v", st)
	}
	h.sim.Advance(1 << 40)
	if st := h.taskStatus(upid); st["exitstatus"] != "OK" {
		t.Fatalf("after advance: %v", st)
	}

	// an injected task failure frees the volumes and removes the config
	h.sim.InjectFault(Fault{Method: "POST", PathPattern: "/nodes/{node}/lxc", TaskFail: "unable to create CT 5031 - unpack failed"})
	h.sim.SetTaskDuration("vzcreate", 0)
	h.run("POST", "/nodes/pve1/lxc", vals("vmid", "5031", "ostemplate", debianTmpl, "rootfs", "local-lvm:8"), "unable to create CT 5031 - unpack failed")
	if _, ok := h.sim.Guest(5031); ok {
		t.Error("failed create left the guest")
	}
	for _, v := range h.sim.Volumes("local-lvm") {
		if strings.Contains(v, "5031") {
			t.Errorf("failed create left volume %s", v)
		}
	}
}

func TestLXCStatusAndPower(t *testing.T) {
	h := demoHarness(t)
	h.run("POST", "/nodes/pve1/lxc", vals("vmid", "5040", "ostemplate", debianTmpl, "rootfs", "local-lvm:8", "swap", "256"), "OK")
	var st map[string]any
	h.ok("GET", "/nodes/pve1/lxc/5040/status/current", nil, &st)
	if st["status"] != "stopped" || st["swap"] != float64(0) || st["mem"] != float64(0) || st["maxswap"] != float64(256*mib) {
		t.Errorf("stopped status: %v", st)
	}
	h.fail("POST", "/nodes/pve1/lxc/5040/status/stop", nil, 500, "CT 5040 not running")
	up := h.run("POST", "/nodes/pve1/lxc/5040/status/start", nil, "OK")
	if !strings.Contains(up, ":vzstart:5040:pvebill@pve!provision:") {
		t.Errorf("start UPID %s", up)
	}
	h.fail("POST", "/nodes/pve1/lxc/5040/status/start", nil, 500, "CT 5040 already running")
	h.ok("GET", "/nodes/pve1/lxc/5040/status/current", nil, &st)
	if st["status"] != "running" || st["pid"] == nil {
		t.Errorf("running status: %v", st)
	}
	h.run("POST", "/nodes/pve1/lxc/5040/status/shutdown", vals("timeout", "30"), "OK")
	h.ok("GET", "/nodes/pve1/lxc/5040/status/current", nil, &st)
	if st["status"] != "stopped" {
		t.Errorf("after shutdown: %v", st["status"])
	}
	h.noViolations()
}

func TestLXCSuspendIsRecordedAndFails(t *testing.T) {
	h := demoHarness(t)
	upid := h.run("POST", "/nodes/pve1/lxc/200/status/suspend", nil, "command 'lxc-checkpoint -n 200 -s -D /var/lib/vz/dump' failed: exit code 1")
	if !strings.Contains(upid, ":vzsuspend:200:") {
		t.Errorf("UPID %s", upid)
	}
	if n := h.sim.LXCSuspendCalls(); n != 1 {
		t.Errorf("LXCSuspendCalls = %d", n)
	}
	g, _ := h.sim.Guest(200)
	if g.Status != "running" {
		t.Errorf("container status after failed checkpoint = %s", g.Status)
	}
	if r := h.do("GET", "/nodes/pve1/lxc/200/agent/ping", nil); r.Status != http.StatusNotImplemented {
		t.Errorf("container agent path: %d", r.Status)
	}
}

func TestLXCPowerPreconditions(t *testing.T) {
	h := demoHarness(t)
	// check_running reads no config: a missing container is "not running"
	h.fail("POST", "/nodes/pve1/lxc/5999/status/stop", nil, 500, "CT 5999 not running")
	h.run("POST", "/nodes/pve1/lxc/5999/status/start", nil, "Configuration file 'nodes/pve1/lxc/5999.conf' does not exist")
	h.fail("POST", "/nodes/pve1/lxc/200/status/resume", nil, 500, "CT 200 already running")
	r := h.fail("POST", "/nodes/pve1/lxc/200/status/start", vals("skiplock", "1"), 400, "Parameter verification failed.")
	if r.Errors["skiplock"] != "Only root may use this option." {
		t.Errorf("skiplock errors %v", r.Errors)
	}
	h.run("POST", "/nodes/pve1/lxc/200/status/stop", vals("skiplock", "0"), "OK")
	h.fail("POST", "/nodes/pve1/lxc/200/status/reboot", nil, 500, "VM 200 not running")
	if err := h.sim.SetConfig(200, "template", "1"); err != nil {
		t.Fatal(err)
	}
	h.run("POST", "/nodes/pve1/lxc/200/status/start", nil, "you can't start a CT if it's a template")
}
