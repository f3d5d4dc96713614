package pvesim

import (
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestQemuFullClone(t *testing.T) {
	h := demoHarness(t)
	upid := h.run("POST", "/nodes/pve1/qemu/9000/clone", vals("newid", "101", "name", "web-1", "full", "1", "storage", "local-lvm"), "OK")
	if !strings.Contains(upid, ":qmclone:9000:") {
		t.Errorf("clone UPID must carry the source id: %s", upid)
	}
	g, ok := h.sim.Guest(101)
	if !ok {
		t.Fatal("clone missing")
	}
	if g.Config["scsi0"] != "local-lvm:vm-101-disk-0,size=8G" {
		t.Errorf("scsi0 %q", g.Config["scsi0"])
	}
	if g.Config["ide2"] != "local-lvm:vm-101-cloudinit,media=cdrom" {
		t.Errorf("cloud-init drive %q", g.Config["ide2"])
	}
	if g.Config["name"] != "web-1" || g.Config["template"] != "" || g.Config["lock"] != "" {
		t.Errorf("config %v", g.Config)
	}
	src, _ := h.sim.Guest(9000)
	if g.Config["net0"] == src.Config["net0"] || g.Config["smbios1"] == src.Config["smbios1"] || g.Config["vmgenid"] == src.Config["vmgenid"] {
		t.Error("MAC, smbios uuid or vmgenid copied unchanged")
	}
	if !strings.HasPrefix(g.Config["net0"], "virtio=BC:24:11:") || !strings.HasSuffix(g.Config["net0"], ",bridge=vmbr0,firewall=1") {
		t.Errorf("net0 %q", g.Config["net0"])
	}
	vols := h.sim.Volumes("local-lvm")
	for _, v := range []string{"vm-101-disk-0", "vm-101-cloudinit", "base-9000-disk-0"} {
		if !slices.Contains(vols, v) {
			t.Errorf("volume %s missing: %v", v, vols)
		}
	}
	h.noViolations()
}

func TestQemuLinkedClone(t *testing.T) {
	h := demoHarness(t)
	h.fail("POST", "/nodes/pve1/qemu/9000/clone", vals("newid", "102", "full", "0", "storage", "local-lvm"), 500, "parameter 'storage' not allowed for linked clones")
	h.run("POST", "/nodes/pve1/qemu/9000/clone", vals("newid", "102", "full", "0"), "OK")
	g, _ := h.sim.Guest(102)
	if g.Config["scsi0"] != "local-lvm:vm-102-disk-0,size=8G" || g.Config["name"] != "Copy-of-VM-debian-12-cloud" {
		t.Errorf("linked clone config %v", g.Config)
	}
	// zfs linked clones are named below the base
	h.sim.AddStorage("zfs", "zfspool", []string{"images", "rootdir"}, false)
	if err := h.sim.SeedGuest(Guest{VMID: 9100, Type: "qemu", Node: "pve1", Template: true, Config: map[string]string{
		"name": "tmpl", "scsi0": "zfs:base-9100-disk-0,size=4G", "ide2": "zfs:vm-9100-cloudinit,media=cdrom"}}); err != nil {
		t.Fatal(err)
	}
	h.run("POST", "/nodes/pve1/qemu/9100/clone", vals("newid", "103"), "OK")
	g, _ = h.sim.Guest(103)
	if g.Config["scsi0"] != "zfs:base-9100-disk-0/vm-103-disk-0,size=4G" || g.Config["ide2"] != "zfs:vm-103-cloudinit,media=cdrom" {
		t.Errorf("zfs linked clone %v", g.Config)
	}
	// a linked clone keeps its base: freeing the base fails
	h.fail("POST", "/nodes/pve1/qemu/300/clone", vals("newid", "104", "full", "0"), 500, "Linked clone feature is not supported for drive 'scsi0'")
}

func TestQemuCloneLockAndFailure(t *testing.T) {
	h := demoHarness(t)
	h.sim.SetTaskDuration("qmclone", time.Hour)
	upid := h.upid("POST", "/nodes/pve1/qemu/9000/clone", vals("newid", "105", "full", "1"))
	var conf map[string]any
	h.ok("GET", "/nodes/pve1/qemu/105/config", nil, &conf)
	if conf["lock"] != "clone" {
		t.Errorf("placeholder lock %v", conf["lock"])
	}
	// qemu-server checks the lock inside the start worker
	h.run("POST", "/nodes/pve1/qemu/105/status/start", nil, "VM is locked (clone)")
	h.sim.Advance(time.Hour)
	if st := h.taskStatus(upid); st["exitstatus"] != "OK" {
		t.Errorf("clone %v", st)
	}
	h.sim.SetTaskDuration("qmclone", 0)
	h.sim.InjectFault(Fault{PathPattern: "/nodes/{node}/qemu/{vmid}/clone", TaskFail: "clone failed: out of space"})
	h.run("POST", "/nodes/pve1/qemu/9000/clone", vals("newid", "106", "full", "1"), "clone failed: out of space")
	if _, ok := h.sim.Guest(106); ok {
		t.Error("failed clone left the placeholder")
	}
	for _, v := range h.sim.Volumes("local-lvm") {
		if strings.Contains(v, "-106-") {
			t.Errorf("failed clone left %s", v)
		}
	}
}

func TestQemuCloudInitConfig(t *testing.T) {
	h := demoHarness(t)
	keys := strings.ReplaceAll(url.QueryEscape("ssh-ed25519 AAAAC3 user@host\n"), "+", "%20")
	h.ok("PUT", "/nodes/pve1/qemu/300/config", vals("ciuser", "admin", "cipassword", "s3cret!", "sshkeys", keys,
		"ipconfig0", "ip=192.0.2.30/24,gw=192.0.2.1", "nameserver", "192.0.2.53"), nil)
	var conf map[string]any
	h.ok("GET", "/nodes/pve1/qemu/300/config", nil, &conf)
	if conf["cipassword"] != "**********" || conf["sshkeys"] != keys || conf["ciuser"] != "admin" {
		t.Errorf("config %v", conf)
	}
	g, _ := h.sim.Guest(300)
	if !strings.HasPrefix(g.Config["cipassword"], "$5$") {
		t.Errorf("cipassword stored as %q, want a crypt hash", g.Config["cipassword"])
	}
	var ci []map[string]any
	h.ok("GET", "/nodes/pve1/qemu/300/cloudinit", nil, &ci)
	if len(ci) == 0 || ci[0]["pending"] == nil {
		t.Errorf("cloudinit pending %v", ci)
	}
	h.ok("PUT", "/nodes/pve1/qemu/300/cloudinit", nil, nil)
	var ci2 []map[string]any
	h.ok("GET", "/nodes/pve1/qemu/300/cloudinit", nil, &ci2)
	for _, e := range ci2 {
		if e["pending"] != nil {
			t.Errorf("still pending after regenerate: %v", e)
		}
	}
	upid := h.run("POST", "/nodes/pve1/qemu/300/config", vals("cores", "4"), "OK")
	if !strings.Contains(upid, ":qmconfig:300:") {
		t.Errorf("POST config UPID %s", upid)
	}
	var none any
	h.ok("POST", "/nodes/pve1/qemu/300/config", vals("memory", "4096", "background_delay", "5"), &none)
	if none != nil {
		t.Errorf("background_delay answer %v, want null", none)
	}
	h.noViolations()
}

func TestQemuResize(t *testing.T) {
	h := demoHarness(t)
	upid := h.run("PUT", "/nodes/pve1/qemu/300/resize", vals("disk", "scsi0", "size", "+4G"), "OK")
	if !strings.Contains(upid, ":resize:300:") {
		t.Errorf("UPID %s", upid)
	}
	g, _ := h.sim.Guest(300)
	if g.Config["scsi0"] != "local-lvm:vm-300-disk-0,size=20G" {
		t.Errorf("scsi0 %q", g.Config["scsi0"])
	}
	h.run("PUT", "/nodes/pve1/qemu/300/resize", vals("disk", "scsi0", "size", "20G"), "OK")
	h.run("PUT", "/nodes/pve1/qemu/300/resize", vals("disk", "scsi0", "size", "10G"), "shrinking disks is not supported")
}

func TestQemuPowerPauseAndAgent(t *testing.T) {
	h := demoHarness(t)
	h.fail("POST", "/nodes/pve1/qemu/300/agent/ping", nil, 500, "VM 300 is not running")
	h.fail("POST", "/nodes/pve1/qemu/300/status/reset", nil, 500, "VM 300 not running")
	h.fail("POST", "/nodes/pve1/qemu/300/status/reboot", nil, 500, "VM 300 not running")
	h.fail("POST", "/nodes/pve1/qemu/300/status/suspend", nil, 500, "VM 300 not running")
	h.run("POST", "/nodes/pve1/qemu/300/status/shutdown", nil, "OK") // nothing to do
	h.run("POST", "/nodes/pve1/qemu/999/status/start", nil, "Configuration file 'nodes/pve1/qemu-server/999.conf' does not exist")
	h.run("POST", "/nodes/pve1/qemu/300/status/start", nil, "OK")
	h.run("POST", "/nodes/pve1/qemu/300/status/start", nil, "VM 300 already running")
	var res map[string]any
	h.ok("POST", "/nodes/pve1/qemu/300/agent/ping", nil, &res)
	if _, ok := res["result"]; !ok {
		t.Errorf("agent ping %v", res)
	}
	if upid := h.run("POST", "/nodes/pve1/qemu/300/status/reboot", vals("timeout", "30"), "OK"); !strings.Contains(upid, ":qmreboot:300:") {
		t.Errorf("reboot UPID %s", upid)
	}
	upid := h.run("POST", "/nodes/pve1/qemu/300/status/suspend", nil, "OK")
	if !strings.Contains(upid, ":qmpause:300:") {
		t.Errorf("pause UPID %s", upid)
	}
	var st map[string]any
	h.ok("GET", "/nodes/pve1/qemu/300/status/current", nil, &st)
	if st["status"] != "running" || st["qmpstatus"] != "paused" {
		t.Errorf("paused VM: status %v qmpstatus %v", st["status"], st["qmpstatus"])
	}
	h.fail("POST", "/nodes/pve1/qemu/300/status/shutdown", nil, 500, "VM is paused - cannot shutdown")
	h.run("POST", "/nodes/pve1/qemu/300/status/resume", nil, "OK")
	var st2 map[string]any
	h.ok("GET", "/nodes/pve1/qemu/300/status/current", nil, &st2)
	if st2["qmpstatus"] != "running" {
		t.Errorf("after resume %v", st2["qmpstatus"])
	}
	h.fail("DELETE", "/nodes/pve1/qemu/300", nil, 500, "VM 300 is running - destroy failed")
	h.run("POST", "/nodes/pve1/qemu/300/status/stop", nil, "OK")
	// agent not configured
	h.ok("PUT", "/nodes/pve1/qemu/300/config", vals("delete", "agent"), nil)
	h.run("POST", "/nodes/pve1/qemu/300/status/start", nil, "OK")
	h.fail("GET", "/nodes/pve1/qemu/300/agent/get-osinfo", nil, 500, "No QEMU guest agent configured")
	// a container id under /qemu/ has no VM config
	h.fail("GET", "/nodes/pve1/qemu/200/agent/get-osinfo", nil, 500, "Configuration file 'nodes/pve1/qemu-server/200.conf' does not exist")
}

func TestQemuDestroy(t *testing.T) {
	h := demoHarness(t)
	h.sim.AddVolume("local-lvm", "vm-300-disk-7", gib, "images")
	h.run("DELETE", "/nodes/pve1/qemu/300", vals("purge", "1"), "OK")
	vols := h.sim.Volumes("local-lvm")
	if slices.Contains(vols, "vm-300-disk-0") || slices.Contains(vols, "vm-300-cloudinit") {
		t.Errorf("VM volumes left: %v", vols)
	}
	if !slices.Contains(vols, "vm-300-disk-7") {
		t.Error("unreferenced volume freed without destroy-unreferenced-disks")
	}
	h.run("POST", "/nodes/pve1/qemu/9000/clone", vals("newid", "300", "full", "1"), "OK")
	h.run("DELETE", "/nodes/pve1/qemu/300", vals("destroy-unreferenced-disks", "1", "purge", "1"), "OK")
	for _, v := range h.sim.Volumes("local-lvm") {
		if strings.Contains(v, "-300-") {
			t.Errorf("left %s", v)
		}
	}
	h.ok("PUT", "/nodes/pve1/qemu/9000/config", vals("protection", "1"), nil)
	h.fail("DELETE", "/nodes/pve1/qemu/9000", nil, 500, "can't remove VM 9000 - protection mode enabled")
}

func TestQemuSuspendToDisk(t *testing.T) {
	h := demoHarness(t)
	h.run("POST", "/nodes/pve1/qemu/300/status/start", nil, "OK")
	upid := h.run("POST", "/nodes/pve1/qemu/300/status/suspend", vals("todisk", "1"), "OK")
	if !strings.Contains(upid, ":qmsuspend:") {
		t.Errorf("UPID %s", upid)
	}
	g, _ := h.sim.Guest(300)
	if g.Status != "stopped" || g.Lock != "suspended" {
		t.Errorf("hibernated: %s lock %s", g.Status, g.Lock)
	}
	h.run("POST", "/nodes/pve1/qemu/300/status/resume", nil, "OK")
	g, _ = h.sim.Guest(300)
	if g.Status != "running" || g.Lock != "" {
		t.Errorf("resumed: %s lock %s", g.Status, g.Lock)
	}
}

func TestQemuCloudInitOnRunningVM(t *testing.T) {
	h := demoHarness(t)
	h.run("POST", "/nodes/pve1/qemu/300/status/start", nil, "OK")
	h.ok("PUT", "/nodes/pve1/qemu/300/config", vals("ciuser", "ops", "memory", "4096"), nil)
	var cur map[string]any
	h.ok("GET", "/nodes/pve1/qemu/300/config", vals("current", "1"), &cur)
	if cur["ciuser"] != "ops" {
		t.Errorf("cloud-init option not applied to the running VM's config: %v", cur["ciuser"])
	}
	// memory is a property string in the PVE 9 schema, so it is answered as a JSON string
	if cur["memory"] != "2048" {
		t.Errorf("memory applied live: %#v", cur["memory"])
	}
	var ci []map[string]any
	h.ok("GET", "/nodes/pve1/qemu/300/cloudinit", nil, &ci)
	pending := map[string]any{}
	for _, e := range ci {
		if e["pending"] != nil {
			pending[e["key"].(string)] = e["pending"]
		}
	}
	if pending["ciuser"] != "ops" || len(pending) != 1 {
		t.Errorf("cloud-init drive pending %v", pending)
	}
	var pend []map[string]any
	h.ok("GET", "/nodes/pve1/qemu/300/pending", nil, &pend)
	for _, e := range pend {
		if e["key"] == "memory" && e["pending"] != "4096" {
			t.Errorf("memory pending entry %v", e)
		}
	}
}
