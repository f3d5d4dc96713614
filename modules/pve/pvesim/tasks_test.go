package pvesim

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

var reUPID = regexp.MustCompile(`^UPID:([a-zA-Z0-9-]+):([0-9A-F]{8}):([0-9A-F]{8,9}):([0-9A-F]{8}):([a-z]+):([^:]*):([^:]+):$`)

func TestTaskUPIDAndStatus(t *testing.T) {
	h := demoHarness(t)
	h.sim.SetTaskDuration("vzstart", time.Minute)
	h.run("POST", "/nodes/pve1/lxc/200/status/stop", nil, "OK")
	upid := h.upid("POST", "/nodes/pve1/lxc/200/status/start", nil)
	m := reUPID.FindStringSubmatch(upid)
	if m == nil {
		t.Fatalf("UPID %q does not match Proxmox's format", upid)
	}
	if m[1] != "pve1" || m[5] != "vzstart" || m[6] != "200" || m[7] != "pvebill@pve!provision" {
		t.Errorf("UPID parts %v", m[1:])
	}
	start, _ := strconv.ParseInt(m[4], 16, 64)
	if start != testEpoch.Unix() {
		t.Errorf("starttime %d, want %d", start, testEpoch.Unix())
	}
	st := h.taskStatus(upid)
	if st["status"] != "running" {
		t.Fatalf("status %v", st)
	}
	if _, ok := st["exitstatus"]; ok {
		t.Error("exitstatus present while running")
	}
	if _, ok := st["endtime"]; ok {
		t.Error("task status carries endtime")
	}
	if st["user"] != "pvebill@pve" || st["tokenid"] != "provision" || st["type"] != "vzstart" || st["id"] != "200" || st["node"] != "pve1" || st["upid"] != upid {
		t.Errorf("status fields %v", st)
	}
	for _, k := range []string{"pid", "pstart", "starttime"} {
		if _, ok := st[k].(float64); !ok {
			t.Errorf("%s is %T", k, st[k])
		}
	}
	// asking another node
	r := h.fail("GET", "/nodes/pve2/tasks/"+url.PathEscape(upid)+"/status", nil, 400, "Parameter verification failed.")
	if r.Errors["upid"] != "no such task" {
		t.Errorf("wrong node errors %v", r.Errors)
	}
	h.sim.Advance(time.Minute)
	st = h.taskStatus(upid)
	if st["status"] != "stopped" || st["exitstatus"] != "OK" {
		t.Errorf("after a minute: %v", st)
	}
}

func TestTaskLogAndList(t *testing.T) {
	h := demoHarness(t)
	h.sim.InjectFault(Fault{Method: "POST", PathPattern: "/nodes/{node}/lxc", TaskWarnings: 2})
	upid := h.run("POST", "/nodes/pve1/lxc", vals("vmid", "5001", "ostemplate", debianTmpl, "rootfs", "local-lvm:1"), "WARNINGS: 2")
	r := h.do("GET", "/nodes/pve1/tasks/"+url.PathEscape(upid)+"/log", vals("start", "0", "limit", "2"))
	if r.Status != 200 || r.Total == nil {
		t.Fatalf("log: %d %s", r.Status, r.Raw)
	}
	lines := h.sim.TaskLog(upid)
	if *r.Total != len(lines) || !strings.HasPrefix(lines[len(lines)-1], "TASK WARNINGS: 2") {
		t.Errorf("total %d, lines %q", *r.Total, lines)
	}
	var page []map[string]any
	h.ok("GET", "/nodes/pve1/tasks/"+url.PathEscape(upid)+"/log", vals("start", "1", "limit", "1"), &page)
	if len(page) != 1 || page[0]["n"] != float64(2) || page[0]["t"] != lines[1] {
		t.Errorf("page %v", page)
	}
	h.run("POST", "/nodes/pve1/lxc/5001/status/start", nil, "OK")
	var list []map[string]any
	h.ok("GET", "/nodes/pve1/tasks", vals("vmid", "5001"), &list)
	if len(list) != 2 {
		t.Fatalf("task list %v", list)
	}
	h.ok("GET", "/nodes/pve1/tasks", vals("typefilter", "vzcreate"), &list)
	if len(list) != 1 || list[0]["upid"] != upid || list[0]["status"] != "WARNINGS: 2" {
		t.Errorf("typefilter list %v", list)
	}
	h.ok("GET", "/nodes/pve2/tasks", nil, &list)
	if len(list) != 0 {
		t.Errorf("pve2 lists pve1's tasks: %v", list)
	}
	h.noViolations()
}

func TestTaskDurationRealTime(t *testing.T) {
	s := New(Options{TaskDuration: 30 * time.Millisecond})
	s.AddVolume("local", "vztmpl/debian-12-standard_12.7-1_amd64.tar.zst", mib, "vztmpl")
	h := startHarness(t, s)
	upid := h.upid("POST", "/nodes/pve1/lxc", vals("vmid", "100", "ostemplate", debianTmpl, "rootfs", "local-lvm:1"))
	if st := h.taskStatus(upid); st["status"] != "running" {
		t.Fatalf("immediately: %v", st)
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if st := h.taskStatus(upid); st["status"] == "stopped" {
			if st["exitstatus"] != "OK" {
				t.Fatalf("exit %v", st["exitstatus"])
			}
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("task never finished in real time")
}

func TestNextID(t *testing.T) {
	h := demoHarness(t)
	var id string
	h.ok("GET", "/cluster/nextid", nil, &id)
	if id != "100" {
		t.Errorf("nextid %q", id)
	}
	r := h.fail("GET", "/cluster/nextid", vals("vmid", "9000"), 400, "Parameter verification failed.")
	if r.Errors["vmid"] != "VM 9000 already exists" {
		t.Errorf("errors %v", r.Errors)
	}
	r = h.fail("GET", "/cluster/nextid", vals("vmid", "200"), 400, "")
	if r.Errors["vmid"] != "VM 200 already exists" {
		t.Errorf("container id: errors %v", r.Errors)
	}
	h.sim.NextIDRange(200, 202)
	h.ok("GET", "/cluster/nextid", nil, &id)
	if id != "201" {
		t.Errorf("nextid in [200,202) = %q", id)
	}
	// nextid reserves nothing
	h.ok("GET", "/cluster/nextid", nil, &id)
	if id != "201" {
		t.Errorf("second nextid = %q", id)
	}
	h.run("POST", "/nodes/pve2/lxc", vals("vmid", "201", "ostemplate", debianTmpl, "rootfs", "local-lvm:1"), "OK")
	h.fail("GET", "/cluster/nextid", nil, 500, "unable to get any free VMID in range [200, 201]")
	// one id space across types and nodes
	h.fail("POST", "/nodes/pve1/lxc", vals("vmid", "201", "ostemplate", debianTmpl), 500, "CT 201 already exists on node 'pve2'")
	h.fail("POST", "/nodes/pve1/qemu/9000/clone", vals("newid", "201"), 500, "CT 201 already exists on node 'pve2'")
}

func TestNodesAndOffline(t *testing.T) {
	h := demoHarness(t)
	var nodes []map[string]any
	h.ok("GET", "/nodes", nil, &nodes)
	if len(nodes) != 2 || nodes[0]["status"] != "online" {
		t.Fatalf("nodes %v", nodes)
	}
	fp, _ := nodes[0]["ssl_fingerprint"].(string)
	if !regexp.MustCompile(`^([0-9A-F]{2}:){31}[0-9A-F]{2}$`).MatchString(fp) {
		t.Errorf("fingerprint %q", fp)
	}
	for _, k := range []string{"mem", "maxmem", "cpu", "maxcpu", "uptime"} {
		if _, ok := nodes[0][k].(float64); !ok {
			t.Errorf("node %s is %T", k, nodes[0][k])
		}
	}
	var st map[string]any
	h.ok("GET", "/nodes/pve1/status", nil, &st)
	if _, ok := st["memory"].(map[string]any); !ok {
		t.Errorf("node status %v", st)
	}
	h.sim.SetNodeOnline("pve2", false)
	h.ok("GET", "/nodes", nil, &nodes)
	if nodes[1]["status"] != "offline" {
		t.Errorf("pve2 %v", nodes[1])
	}
	if r := h.do("GET", "/nodes/pve2/lxc", nil); r.Status != 595 {
		t.Errorf("offline node answered %d", r.Status)
	}
	h.fail("GET", "/nodes/pve9/lxc", nil, 500, "hostname lookup 'pve9' failed")
}
