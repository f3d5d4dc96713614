package pve

import (
	"context"
	"errors"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"pvebill/modules/pve/pvesim"
	"pvebill/modules/stack/stacktest/poll"
)

// newSim starts the demo cluster (templates, VM template 9000, running
// container 200, stopped VM 300) behind a real HTTP server and returns a
// client for it. The test fails if any request of the test was one real
// Proxmox would refuse by its schema.
func newSim(t *testing.T) (*pvesim.Sim, *Client) {
	t.Helper()
	return newSimWith(t, nil)
}

// testContext bounds a test's calls, so a wait that never ends fails the
// test instead of hanging it.
func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func newSimWith(t *testing.T, m *Metrics) (*pvesim.Sim, *Client) {
	t.Helper()
	sim := pvesim.Demo(pvesim.Options{TokenID: testTokenID, TokenSecret: testSecret})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	t.Cleanup(func() {
		for _, v := range sim.SchemaViolations() {
			t.Errorf("schema violation: %s", v)
		}
	})
	return sim, newTestClient(t, testConfig(srv.URL), m)
}

// call is one request as the simulator logged it.
type call struct {
	Method, Path string
	Form         url.Values
}

// apiCalls returns the logged requests since the last ResetLog, leaving out
// task status and log polls (asserted separately), and resets the log.
func apiCalls(sim *pvesim.Sim) []call {
	var out []call
	for _, r := range sim.Requests() {
		if strings.Contains(r.Path, "/tasks/") {
			continue
		}
		f := r.Form
		if len(f) == 0 {
			f = nil
		}
		out = append(out, call{r.Method, r.Path, f})
	}
	sim.ResetLog()
	return out
}

func expectCalls(t *testing.T, sim *pvesim.Sim, want ...call) {
	t.Helper()
	got := apiCalls(sim)
	for i := range want {
		if len(want[i].Form) == 0 {
			want[i].Form = nil
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("requests\n got %+v\nwant %+v", got, want)
	}
}

// taskPolls counts the task status reads since the last ResetLog.
func taskPolls(sim *pvesim.Sim) int {
	n := 0
	for _, r := range sim.Requests() {
		if strings.HasSuffix(r.Path, "/status") && strings.Contains(r.Path, "/tasks/") {
			n++
		}
	}
	return n
}

func form(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return v
}

// must(f())(t) returns f's value and stops the test on f's error.
func must[T any](v T, err error) func(*testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func noErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// mustOK(f())(t) checks that f's task ended "OK".
func mustOK(res TaskResult, err error) func(*testing.T) TaskResult {
	return func(t *testing.T) TaskResult {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if !res.OK || res.ExitStatus != "OK" || res.UPID == "" || res.Node == "" {
			t.Fatalf("task result %+v", res)
		}
		return res
	}
}

func TestSimClusterReads(t *testing.T) {
	sim, c := newSim(t)
	ctx := testContext(t)

	vms := must(c.Cluster().Resources(ctx, ResourceVM))(t)
	kinds := map[string]bool{}
	for _, r := range vms {
		kinds[r.Type] = true
		if r.Type == "lxc" && r.VMID == 200 && (r.ID != "lxc/200" || r.Node != "pve1") {
			t.Errorf("container row %+v", r)
		}
	}
	if !kinds["lxc"] || !kinds["qemu"] || len(kinds) != 2 {
		t.Errorf("vm resource types %v", kinds)
	}
	all := must(c.Cluster().Resources(ctx, ""))(t)
	if len(all) <= len(vms) {
		t.Errorf("unfiltered resources %d, vm rows %d", len(all), len(vms))
	}
	expectCalls(t, sim,
		call{"GET", "/cluster/resources", form("type", "vm")},
		call{"GET", "/cluster/resources", nil})

	id := must(c.Cluster().NextID(ctx, nil))(t)
	if id < MinVMID || id == 200 || id == 300 || id == 9000 {
		t.Errorf("next id %d", id)
	}
	want := 5001
	if got := must(c.Cluster().NextID(ctx, &want))(t); got != 5001 {
		t.Errorf("next id for 5001: %d", got)
	}
	taken := 200
	_, err := c.Cluster().NextID(ctx, &taken)
	if !isKind(err, ErrAlreadyExists) || !isKind(err, ErrInvalidParam) {
		t.Errorf("taken id: %v", err)
	}
	expectCalls(t, sim,
		call{"GET", "/cluster/nextid", nil},
		call{"GET", "/cluster/nextid", form("vmid", "5001")},
		call{"GET", "/cluster/nextid", form("vmid", "200")})

	nodes := must(c.Nodes(ctx))(t)
	if len(nodes) != 2 || nodes[0].Node == "" || nodes[0].Status != "online" {
		t.Errorf("nodes %+v", nodes)
	}
	st := must(c.Node("pve1").Status(ctx))(t)
	if st.Memory.Total == 0 || st.PVEVersion == "" {
		t.Errorf("node status %+v", st)
	}
	fw := must(c.Cluster().FirewallOptions(ctx))(t)
	if fw.Enabled() {
		t.Errorf("datacenter firewall reported on: %+v", fw)
	}
	expectCalls(t, sim,
		call{"GET", "/nodes", nil},
		call{"GET", "/nodes/pve1/status", nil},
		call{"GET", "/cluster/firewall/options", nil})
}

func isKind(err, kind error) bool {
	return err != nil && errors.Is(err, kind)
}

func TestSimLXCLifecycle(t *testing.T) {
	sim, c := newSim(t)
	ctx := testContext(t)
	ct := c.Node("pve1").LXC(5001)
	sim.ResetLog()

	req := LXCCreateRequest{
		OSTemplate:   "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst",
		Hostname:     "ct5001",
		Password:     "root-pass-1",
		Unprivileged: Ptr(true),
		Cores:        Ptr(2),
		Memory:       Ptr(1024),
		Swap:         Ptr(0),
		RootFS:       "local-lvm:8",
		Net:          map[int]string{0: "name=eth0,bridge=vmbr0,ip=192.0.2.51/24,gw=192.0.2.1,firewall=1"},
		OnBoot:       Ptr(true),
		Tags:         "pvebill",
	}
	res := mustOK(ct.Create(ctx, req))(t)
	if res.Type != "vzcreate" || res.Node != "pve1" {
		t.Errorf("create result %+v", res)
	}
	expectCalls(t, sim, call{"POST", "/nodes/pve1/lxc", form(
		"vmid", "5001", "ostemplate", "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst", "hostname", "ct5001",
		"password", "root-pass-1", "unprivileged", "1", "cores", "2", "memory", "1024", "swap", "0",
		"rootfs", "local-lvm:8", "net0", "name=eth0,bridge=vmbr0,ip=192.0.2.51/24,gw=192.0.2.1,firewall=1",
		"onboot", "1", "tags", "pvebill")})

	cfg := must(ct.Config(ctx))(t)
	if cfg.Swap == nil || *cfg.Swap != 0 || cfg.Memory == nil || *cfg.Memory != 1024 || cfg.Hostname != "ct5001" ||
		!strings.HasPrefix(cfg.RootFS, "local-lvm:vm-5001-disk-0") || cfg.Digest == "" || !bool(cfg.OnBoot) || cfg.Lock != "" {
		t.Errorf("config after create %+v", cfg)
	}

	noErr(t, ct.UpdateConfig(ctx, LXCConfigUpdate{OnBoot: Ptr(false), Swap: Ptr(256), Digest: cfg.Digest}))
	expectCalls(t, sim,
		call{"GET", "/nodes/pve1/lxc/5001/config", nil},
		call{"PUT", "/nodes/pve1/lxc/5001/config", form("onboot", "0", "swap", "256", "digest", cfg.Digest)})
	err := ct.UpdateConfig(ctx, LXCConfigUpdate{Memory: Ptr(2048), Digest: cfg.Digest})
	if !isKind(err, ErrConflict) {
		t.Errorf("stale digest: %v", err)
	}
	sim.ResetLog()

	mustOK(ct.Start(ctx))(t)
	_, err = ct.Start(ctx)
	if !isKind(err, ErrAlreadyRunning) {
		t.Errorf("second start: %v", err)
	}
	st := must(ct.Status(ctx))(t)
	if !st.Running() || st.VMID != 5001 || st.MaxSwap == nil || *st.MaxSwap != 256<<20 || st.HA == nil {
		t.Errorf("status %+v", st)
	}
	ifs := must(ct.Interfaces(ctx))(t)
	if len(ifs) == 0 {
		t.Errorf("no interfaces")
	}
	expectCalls(t, sim,
		call{"POST", "/nodes/pve1/lxc/5001/status/start", nil},
		call{"POST", "/nodes/pve1/lxc/5001/status/start", nil},
		call{"GET", "/nodes/pve1/lxc/5001/status/current", nil},
		call{"GET", "/nodes/pve1/lxc/5001/interfaces", nil})

	// A change that cannot apply live stays pending on a running container.
	noErr(t, ct.UpdateConfig(ctx, LXCConfigUpdate{Features: "nesting=1"}))
	pending := must(ct.Pending(ctx))(t)
	var sawFeatures bool
	for _, p := range pending {
		if p.Key == "features" {
			sawFeatures = p.Pending == "nesting=1"
		}
	}
	if !sawFeatures {
		t.Errorf("pending %+v", pending)
	}
	cur := must(ct.ConfigCurrent(ctx))(t)
	merged := must(ct.Config(ctx))(t)
	if cur.Features == "nesting=1" || merged.Features != "nesting=1" {
		t.Errorf("current %q, merged %q", cur.Features, merged.Features)
	}
	expectCalls(t, sim,
		call{"PUT", "/nodes/pve1/lxc/5001/config", form("features", "nesting=1")},
		call{"GET", "/nodes/pve1/lxc/5001/pending", nil},
		call{"GET", "/nodes/pve1/lxc/5001/config", form("current", "1")},
		call{"GET", "/nodes/pve1/lxc/5001/config", nil})

	mustOK(ct.Shutdown(ctx, 30, true))(t)
	_, err = ct.Stop(ctx)
	if !isKind(err, ErrNotRunning) {
		t.Errorf("stop of a stopped container: %v", err)
	}
	upid := must(ct.StartAsync(ctx))(t)
	if u, _ := parseUPID(upid); u.Node != "pve1" || u.Type != "vzstart" {
		t.Errorf("start upid %q", upid)
	}
	mustOK(c.Wait(ctx, upid))(t)
	mustOK(ct.Reboot(ctx, 20))(t)
	mustOK(ct.Shutdown(ctx, 0, false))(t)
	if _, err := ct.Reboot(ctx, 0); !isKind(err, ErrNotRunning) {
		t.Errorf("reboot of a stopped container: %v", err)
	}
	mustOK(ct.Start(ctx))(t)
	mustOK(ct.Stop(ctx))(t)
	expectCalls(t, sim,
		call{"POST", "/nodes/pve1/lxc/5001/status/shutdown", form("timeout", "30", "forceStop", "1")},
		call{"POST", "/nodes/pve1/lxc/5001/status/stop", nil},
		call{"POST", "/nodes/pve1/lxc/5001/status/start", nil},
		call{"POST", "/nodes/pve1/lxc/5001/status/reboot", form("timeout", "20")},
		call{"POST", "/nodes/pve1/lxc/5001/status/shutdown", form("forceStop", "0")},
		call{"POST", "/nodes/pve1/lxc/5001/status/reboot", nil},
		call{"POST", "/nodes/pve1/lxc/5001/status/start", nil},
		call{"POST", "/nodes/pve1/lxc/5001/status/stop", nil})

	mustOK(ct.Resize(ctx, ResizeRequest{Disk: "rootfs", Size: "+2G"}))(t)
	if cfg := must(ct.Config(ctx))(t); !strings.Contains(cfg.RootFS, "size=10G") {
		t.Errorf("rootfs after resize %q", cfg.RootFS)
	}
	_, err = ct.Resize(ctx, ResizeRequest{Disk: "rootfs", Size: "10G"})
	if !isKind(err, ErrTaskFailed) && !isKind(err, ErrServer) {
		t.Errorf("resize to the same size: %v", err)
	}
	expectCalls(t, sim,
		call{"PUT", "/nodes/pve1/lxc/5001/resize", form("disk", "rootfs", "size", "+2G")},
		call{"GET", "/nodes/pve1/lxc/5001/config", nil},
		call{"PUT", "/nodes/pve1/lxc/5001/resize", form("disk", "rootfs", "size", "10G")})

	noErr(t, ct.UpdateConfig(ctx, LXCConfigUpdate{Protection: Ptr(true)}))
	_, err = ct.Delete(ctx, LXCDeleteOptions{Purge: true, DestroyUnreferencedDisks: true})
	if !isKind(err, ErrProtected) {
		t.Errorf("delete of a protected container: %v", err)
	}
	noErr(t, ct.UpdateConfig(ctx, LXCConfigUpdate{Delete: []string{"protection"}}))
	res = mustOK(ct.Delete(ctx, LXCDeleteOptions{Purge: true, DestroyUnreferencedDisks: true}))(t)
	if res.Type != "vzdestroy" {
		t.Errorf("delete result %+v", res)
	}
	_, err = ct.Config(ctx)
	if !isKind(err, ErrNotFound) {
		t.Errorf("config of a destroyed container: %v", err)
	}
	expectCalls(t, sim,
		call{"PUT", "/nodes/pve1/lxc/5001/config", form("protection", "1")},
		call{"DELETE", "/nodes/pve1/lxc/5001", form("purge", "1", "destroy-unreferenced-disks", "1")},
		call{"PUT", "/nodes/pve1/lxc/5001/config", form("delete", "protection")},
		call{"DELETE", "/nodes/pve1/lxc/5001", form("purge", "1", "destroy-unreferenced-disks", "1")},
		call{"GET", "/nodes/pve1/lxc/5001/config", nil})

	if n := sim.LXCSuspendCalls(); n != 0 {
		t.Errorf("%d container suspend calls", n)
	}
}

func TestSimLXCCreateRefusals(t *testing.T) {
	sim, c := newSim(t)
	ctx := testContext(t)
	_, err := c.Node("pve1").LXC(200).CreateAsync(ctx, LXCCreateRequest{
		OSTemplate: "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst", RootFS: "local-lvm:8", Unprivileged: Ptr(true)})
	if !isKind(err, ErrAlreadyExists) {
		t.Errorf("create over an existing id: %v", err)
	}
	_, err = c.Node("pve1").LXC(5002).CreateAsync(ctx, LXCCreateRequest{
		OSTemplate: "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst", RootFS: "/srv/data", Unprivileged: Ptr(true)})
	if err == nil || isKind(err, ErrTransient) {
		t.Errorf("bind-mount rootfs: %v", err)
	}
	sim.ResetLog()
	_, err = c.Node("pve1").LXC(5003).Config(ctx)
	if !isKind(err, ErrNotFound) {
		t.Errorf("missing container: %v", err)
	}
	// Identity is checked before anything is sent.
	for _, bad := range []*LXCClient{c.Node("").LXC(5001), c.Node("pve1/../x").LXC(5001), c.Node("pve1").LXC(42)} {
		if _, err := bad.Status(ctx); err == nil {
			t.Errorf("bad identity %s/%d accepted", bad.Node(), bad.VMID())
		}
	}
	expectCalls(t, sim, call{"GET", "/nodes/pve1/lxc/5003/config", nil})
}

func TestSimNodeIndex(t *testing.T) {
	sim, c := newSim(t)
	ctx := testContext(t)
	rows := must(c.Node("pve1").ListLXC(ctx))(t)
	if len(rows) != 1 || rows[0].VMID != 200 || !rows[0].Running() || rows[0].MaxSwap == nil || *rows[0].MaxSwap != 512<<20 || rows[0].Swap == nil {
		t.Fatalf("index %+v", rows)
	}

	// Before PVE 8.2 the index sent vmid as a string; some setups lack swap.
	sim.SetNodeOptions("pve1", pvesim.NodeOptions{OldIndex: true, NoSwapInIndex: true})
	rows = must(c.Node("pve1").ListLXC(ctx))(t)
	if len(rows) != 1 || rows[0].VMID != 200 || rows[0].Swap != nil || rows[0].MaxSwap != nil {
		t.Fatalf("old index %+v", rows)
	}
	expectCalls(t, sim, call{"GET", "/nodes/pve1/lxc", nil}, call{"GET", "/nodes/pve1/lxc", nil})
}

func TestSimQEMU(t *testing.T) {
	sim, c := newSim(t)
	ctx := testContext(t)
	tmpl := c.Node("pve1").QEMU(9000)
	vm := c.Node("pve1").QEMU(5010)
	sim.ResetLog()

	res := mustOK(tmpl.Clone(ctx, QEMUCloneRequest{NewID: 5010, Name: "vm5010", Full: Ptr(true), Storage: "local-lvm"}))(t)
	if res.Type != "qmclone" || !strings.Contains(res.UPID, ":qmclone:9000:") {
		t.Errorf("clone result %+v (the UPID names the source)", res)
	}
	expectCalls(t, sim, call{"POST", "/nodes/pve1/qemu/9000/clone",
		form("newid", "5010", "name", "vm5010", "full", "1", "storage", "local-lvm")})

	keys := []string{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB7x user@example", "ssh-rsa AAAAB3NzaC1yc2E+/= other@example"}
	noErr(t, vm.UpdateConfig(ctx, QEMUConfigUpdate{
		CIUser: "debian", CIPassword: "vm-pass-1", SSHKeys: keys,
		IPConfig: map[int]string{0: "ip=192.0.2.60/24,gw=192.0.2.1"}, Nameserver: "192.0.2.53",
		Memory: Ptr(4096), OnBoot: Ptr(true),
	}))
	got := apiCalls(sim)
	if len(got) != 1 || got[0].Method != "PUT" || got[0].Path != "/nodes/pve1/qemu/5010/config" {
		t.Fatalf("requests %+v", got)
	}
	wantForm := form("ciuser", "debian", "cipassword", "vm-pass-1",
		"sshkeys", "ssh-ed25519%20AAAAC3NzaC1lZDI1NTE5AAAAIB7x%20user%40example%0Assh-rsa%20AAAAB3NzaC1yc2E%2B%2F%3D%20other%40example",
		"ipconfig0", "ip=192.0.2.60/24,gw=192.0.2.1", "nameserver", "192.0.2.53", "memory", "4096", "onboot", "1")
	if !reflect.DeepEqual(got[0].Form, wantForm) {
		t.Errorf("cloud-init form\n got %v\nwant %v", got[0].Form, wantForm)
	}

	cfg := must(vm.Config(ctx))(t)
	back, err := DecodeSSHKeys(cfg.SSHKeys)
	if err != nil || !reflect.DeepEqual(back, keys) {
		t.Errorf("sshkeys read back %q, %v", back, err)
	}
	if cfg.CIUser != "debian" || cfg.IPConfig[0] != "ip=192.0.2.60/24,gw=192.0.2.1" || cfg.Disks["scsi0"] == "" || cfg.Name != "vm5010" {
		t.Errorf("config %+v", cfg)
	}
	if cfg.CIPassword == "vm-pass-1" {
		t.Errorf("cloud-init password returned in clear")
	}

	upid := must(vm.UpdateConfigAsync(ctx, QEMUConfigUpdate{Description: "pvebill service 42"}))(t)
	mustOK(c.Wait(ctx, upid))(t)
	if must(vm.ConfigCurrent(ctx))(t).Description != "pvebill service 42" {
		t.Errorf("async config not applied")
	}
	mustOK(vm.Resize(ctx, ResizeRequest{Disk: "scsi0", Size: "+8G"}))(t)
	expectCalls(t, sim,
		call{"GET", "/nodes/pve1/qemu/5010/config", nil},
		call{"POST", "/nodes/pve1/qemu/5010/config", form("description", "pvebill service 42")},
		call{"GET", "/nodes/pve1/qemu/5010/config", form("current", "1")},
		call{"PUT", "/nodes/pve1/qemu/5010/resize", form("disk", "scsi0", "size", "+8G")})

	mustOK(vm.Start(ctx))(t)
	mustOK(vm.Suspend(ctx))(t)
	if st := must(vm.Status(ctx))(t); !st.Paused() {
		t.Errorf("status after suspend %+v", st)
	}
	mustOK(vm.Resume(ctx))(t)
	if st := must(vm.Status(ctx))(t); !st.Running() || st.Paused() {
		t.Errorf("status after resume %+v", st)
	}
	mustOK(vm.Reboot(ctx, 0))(t)
	mustOK(vm.Shutdown(ctx, 0, true))(t)
	if st := must(vm.Status(ctx))(t); st.Running() {
		t.Errorf("status after shutdown %+v", st)
	}
	upid = must(vm.StartAsync(ctx))(t)
	mustOK(c.Wait(ctx, upid))(t)
	if res := mustOK(vm.Stop(ctx))(t); res.Type != "qmstop" {
		t.Errorf("stop result %+v", res)
	}
	mustOK(vm.Delete(ctx, QEMUDeleteOptions{Purge: true, DestroyUnreferencedDisks: true}))(t)
	expectCalls(t, sim,
		call{"POST", "/nodes/pve1/qemu/5010/status/start", nil},
		call{"POST", "/nodes/pve1/qemu/5010/status/suspend", nil},
		call{"GET", "/nodes/pve1/qemu/5010/status/current", nil},
		call{"POST", "/nodes/pve1/qemu/5010/status/resume", nil},
		call{"GET", "/nodes/pve1/qemu/5010/status/current", nil},
		call{"POST", "/nodes/pve1/qemu/5010/status/reboot", nil},
		call{"POST", "/nodes/pve1/qemu/5010/status/shutdown", form("forceStop", "1")},
		call{"GET", "/nodes/pve1/qemu/5010/status/current", nil},
		call{"POST", "/nodes/pve1/qemu/5010/status/start", nil},
		call{"POST", "/nodes/pve1/qemu/5010/status/stop", nil},
		call{"DELETE", "/nodes/pve1/qemu/5010", form("purge", "1", "destroy-unreferenced-disks", "1")})

	_, err = tmpl.CloneAsync(ctx, QEMUCloneRequest{NewID: 300})
	if !isKind(err, ErrAlreadyExists) {
		t.Errorf("clone onto a taken id: %v", err)
	}
	if _, err := tmpl.CloneAsync(ctx, QEMUCloneRequest{}); err == nil {
		t.Errorf("clone without newid accepted")
	}
}

func TestSimFirewall(t *testing.T) {
	sim, c := newSim(t)
	ctx := testContext(t)
	for _, fw := range []struct {
		kind string
		f    *FirewallClient
	}{
		{"lxc/200", c.Node("pve1").LXC(200).Firewall()},
		{"qemu/300", c.Node("pve1").QEMU(300).Firewall()},
	} {
		base := "/nodes/pve1/" + fw.kind + "/firewall"
		sim.ResetLog()
		noErr(t, fw.f.SetOptions(ctx, GuestFirewallOptionsUpdate{Enable: Ptr(true), IPFilter: Ptr(true), MACFilter: Ptr(true)}))
		opts := must(fw.f.Options(ctx))(t)
		if opts.Enable == nil || !bool(*opts.Enable) || opts.IPFilter == nil || !bool(*opts.IPFilter) {
			t.Errorf("%s options %+v", fw.kind, opts)
		}
		noErr(t, fw.f.CreateIPSet(ctx, "ipfilter-net0", "pvebill"))
		noErr(t, fw.f.AddIPSetEntry(ctx, "ipfilter-net0", IPSetEntryRequest{CIDR: "192.0.2.60/32"}))
		sets := must(fw.f.IPSets(ctx))(t)
		if len(sets) != 1 || sets[0].Name != "ipfilter-net0" || sets[0].Comment != "pvebill" {
			t.Errorf("%s ipsets %+v", fw.kind, sets)
		}
		entries := must(fw.f.IPSetEntries(ctx, "ipfilter-net0"))(t)
		if len(entries) != 1 || entries[0].CIDR != "192.0.2.60/32" {
			t.Errorf("%s entries %+v", fw.kind, entries)
		}
		expectCalls(t, sim,
			call{"PUT", base + "/options", form("enable", "1", "ipfilter", "1", "macfilter", "1")},
			call{"GET", base + "/options", nil},
			call{"POST", base + "/ipset", form("name", "ipfilter-net0", "comment", "pvebill")},
			call{"POST", base + "/ipset/ipfilter-net0", form("cidr", "192.0.2.60/32")},
			call{"GET", base + "/ipset", nil},
			call{"GET", base + "/ipset/ipfilter-net0", nil})
	}
	if err := c.Node("pve1").LXC(200).Firewall().CreateIPSet(ctx, "bad/name", ""); err == nil {
		t.Error("ipset name with a slash accepted")
	}
}

func TestSimStorage(t *testing.T) {
	sim, c := newSim(t)
	ctx := testContext(t)
	sim.AddVolume("local", "backup/vzdump-lxc-200-2025_01_31-02_00_05.tar.zst", 300<<20, "backup")
	sim.AddVolume("local", "backup/vzdump-lxc-201-2025_01_31-03_00_05.tar.zst", 200<<20, "backup")
	sim.SetVolumeProtected("local", "backup/vzdump-lxc-200-2025_01_31-02_00_05.tar.zst", true, "before upgrade")
	sim.ResetLog()

	sts := must(c.Node("pve1").Storages(ctx, "rootdir"))(t)
	names := map[string]bool{}
	for _, s := range sts {
		names[s.Storage] = true
	}
	if !names["local"] || !names["local-lvm"] {
		t.Errorf("rootdir storages %+v", sts)
	}
	all := must(c.Node("pve1").Storages(ctx, ""))(t)
	if len(all) < len(sts) {
		t.Errorf("all storages %d < rootdir storages %d", len(all), len(sts))
	}
	backups := must(c.Node("pve1").Storage("local").Content(ctx, ContentFilter{Content: "backup", VMID: 200}))(t)
	if len(backups) != 1 {
		t.Fatalf("backups %+v", backups)
	}
	b := backups[0]
	if b.VolID != "local:backup/vzdump-lxc-200-2025_01_31-02_00_05.tar.zst" || !bool(b.Protected) || b.VMID != 200 ||
		b.Size != 300<<20 || b.Format != "tar.zst" || b.Notes != "before upgrade" || b.Content != "backup" {
		t.Errorf("backup %+v", b)
	}
	every := must(c.Node("pve1").Storage("local").Content(ctx, ContentFilter{}))(t)
	if len(every) < 4 {
		t.Errorf("content %+v", every)
	}
	expectCalls(t, sim,
		call{"GET", "/nodes/pve1/storage", form("content", "rootdir")},
		call{"GET", "/nodes/pve1/storage", nil},
		call{"GET", "/nodes/pve1/storage/local/content", form("content", "backup", "vmid", "200")},
		call{"GET", "/nodes/pve1/storage/local/content", nil})
}

func TestSimTaskOutcomes(t *testing.T) {
	sim, c := newSim(t)
	ctx := testContext(t)
	ct := c.Node("pve1").LXC(200)

	t.Run("warnings are a recorded success", func(t *testing.T) {
		sim.InjectFault(pvesim.Fault{Method: "POST", PathPattern: "/nodes/{node}/lxc/{vmid}/status/stop", Nth: 1, TaskWarnings: 2})
		res, err := ct.Stop(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !res.OK || res.Warnings != 2 || res.ExitStatus != "WARNINGS: 2" || len(res.LogTail) == 0 ||
			res.LogTail[len(res.LogTail)-1] != "TASK WARNINGS: 2" {
			t.Errorf("result %+v", res)
		}
	})
	t.Run("failure carries the log tail", func(t *testing.T) {
		sim.InjectFault(pvesim.Fault{Method: "POST", PathPattern: "/nodes/{node}/lxc/{vmid}/status/start", Nth: 1,
			TaskFail: "startup for container '200' failed"})
		res, err := ct.Start(ctx)
		var te *TaskError
		if !errors.As(err, &te) || !isKind(err, ErrTaskFailed) {
			t.Fatalf("error %v", err)
		}
		if res.OK || te.Result.ExitStatus != "startup for container '200' failed" ||
			te.Result.LogTail[len(te.Result.LogTail)-1] != "TASK ERROR: startup for container '200' failed" ||
			te.Result.Type != "vzstart" || te.Result.Node != "pve1" {
			t.Errorf("result %+v", te.Result)
		}
		if !strings.Contains(err.Error(), "startup for container '200' failed") {
			t.Errorf("error text %q", err)
		}
		lines, total, err := c.TaskLog(ctx, te.Result.UPID, 0, 1)
		if err != nil || len(lines) != 1 || lines[0].N != 1 || total != len(te.Result.LogTail) {
			t.Errorf("task log: %+v, total %d, %v", lines, total, err)
		}
		st, err := c.TaskStatus(ctx, te.Result.UPID)
		if err != nil || st.Running() || st.ExitStatus != te.Result.ExitStatus || st.Type != "vzstart" || st.User != "svc@pve" || st.TokenID != "provision" {
			t.Errorf("task status %+v, %v", st, err)
		}
	})
	t.Run("failure kind is read from the exit status", func(t *testing.T) {
		sim.InjectFault(pvesim.Fault{Method: "POST", PathPattern: "/nodes/{node}/lxc/{vmid}/status/start", Nth: 1,
			TaskFail: "CT is locked (backup)"})
		_, err := ct.Start(ctx)
		if !isKind(err, ErrTaskFailed) || !isKind(err, ErrLocked) || isKind(err, ErrNotFound) {
			t.Errorf("error %v", err)
		}
	})
	t.Run("long log: the tail is the last lines", func(t *testing.T) {
		// The container is stopped since the first subtest.
		sim.InjectFault(pvesim.Fault{Method: "POST", PathPattern: "/nodes/{node}/lxc/{vmid}/status/start", Nth: 1, TaskWarnings: 70})
		res, err := ct.Start(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.LogTail) != LogTailLines || res.LogTail[LogTailLines-1] != "TASK WARNINGS: 70" || res.Warnings != 70 {
			t.Errorf("tail %d lines, last %q", len(res.LogTail), res.LogTail[len(res.LogTail)-1])
		}
	})
}

func TestSimWaitPolling(t *testing.T) {
	sim, c := newSim(t)
	ctx := testContext(t)
	// Production shape scaled down 100×: first poll after 1 ms, ×2, at
	// most 20 ms; a "10 s" task lasts 100 ms.
	sim.SetTaskDuration("vzstop", 100*time.Millisecond)
	sim.ResetLog()
	start := time.Now()
	mustOK(c.Node("pve1").LXC(200).Stop(ctx))(t)
	if d := time.Since(start); d < 100*time.Millisecond {
		t.Errorf("task seen finished after %v", d)
	}
	polls := taskPolls(sim)
	if polls > 10 || polls < 2 {
		t.Errorf("%d status polls for a task lasting 5 max intervals, want 2..10", polls)
	}
	for _, r := range sim.Requests() {
		if strings.Contains(r.Path, "/tasks/") && r.Node != "pve1" {
			t.Errorf("task read on node %q: %s", r.Node, r.Path)
		}
	}

	t.Run("context cancellation ends the wait", func(t *testing.T) {
		sim.SetTaskDuration("vzstart", time.Hour)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		defer cancel()
		upid, err := c.Node("pve1").LXC(200).StartAsync(ctx)
		if err != nil {
			t.Fatal(err)
		}
		begin := time.Now()
		res, err := c.Wait(ctx, upid)
		if !errors.Is(err, context.DeadlineExceeded) || res.UPID != upid || res.OK {
			t.Errorf("wait: %+v, %v", res, err)
		}
		if time.Since(begin) > 2*time.Second {
			t.Errorf("wait outlived its context")
		}
	})
	t.Run("a task on another node is read there", func(t *testing.T) {
		sim.SetTaskDuration("vzstart", 0)
		noErr(t, sim.SeedGuest(pvesim.Guest{VMID: 7001, Type: "lxc", Node: "pve2", Config: map[string]string{
			"hostname": "other", "rootfs": "local-lvm:vm-7001-disk-0,size=4G", "memory": "512"}}))
		sim.ResetLog()
		res := mustOK(c.Node("pve2").LXC(7001).Start(ctx))(t)
		if res.Node != "pve2" {
			t.Errorf("result node %q", res.Node)
		}
		// Only this task's reads count: a poll cancelled in the previous subtest may still reach
		// the simulator after ResetLog.
		reads := 0
		for _, r := range sim.Requests() {
			if !strings.Contains(r.Path, "/tasks/"+res.UPID+"/") {
				continue
			}
			reads++
			if !strings.HasPrefix(r.Path, "/nodes/pve2/tasks/") {
				t.Errorf("task read at %s", r.Path)
			}
		}
		if reads == 0 {
			t.Errorf("the task of %s was never read", res.UPID)
		}
	})
	t.Run("not a UPID", func(t *testing.T) {
		if _, err := c.Wait(ctx, "OK"); err == nil {
			t.Error("Wait accepted a non-UPID")
		}
	})
}

// TestSimRetries injects transient faults into the simulator and counts the
// requests that reach it.
func TestSimRetries(t *testing.T) {
	t.Parallel()
	sim, c := newSim(t)
	ctx := testContext(t)
	ct := c.Node("pve1").LXC(200)

	sim.ResetLog()
	sim.InjectFault(pvesim.Fault{Method: "GET", PathPattern: "/nodes/{node}/lxc/{vmid}/config", Nth: 1, Status: 503, Message: "Service Unavailable"})
	must(ct.Config(ctx))(t)
	expectCalls(t, sim, call{"GET", "/nodes/pve1/lxc/200/config", nil}, call{"GET", "/nodes/pve1/lxc/200/config", nil})

	sim.InjectFault(pvesim.Fault{Method: "PUT", PathPattern: "/nodes/{node}/lxc/{vmid}/config", Nth: 1, Status: 400,
		Body: `{"data":null,"message":"Parameter verification failed.\n","errors":{"memory":"value must have a minimum value of 16"}}`})
	err := ct.UpdateConfig(ctx, LXCConfigUpdate{Memory: Ptr(8)})
	if !isKind(err, ErrInvalidParam) {
		t.Errorf("400: %v", err)
	}
	expectCalls(t, sim, call{"PUT", "/nodes/pve1/lxc/200/config", form("memory", "8")})

	// The work is done, but the hop in front times out: not retried, and
	// the caller reads back.
	sim.InjectFault(pvesim.Fault{Method: "POST", PathPattern: "/nodes/{node}/lxc/{vmid}/status/stop", Nth: 1, Status: 596, After: true})
	_, err = ct.StopAsync(ctx)
	if !isKind(err, ErrTransient) || !isKind(err, ErrMaybeApplied) {
		t.Errorf("596 on POST: %v", err)
	}
	expectCalls(t, sim, call{"POST", "/nodes/pve1/lxc/200/status/stop", nil})
	poll.Until(t, 2*time.Second, "the stop behind the 596 to take effect", func() bool { return !must(ct.Status(ctx))(t).Running() })
	sim.ResetLog()

	sim.InjectFault(pvesim.Fault{Method: "POST", PathPattern: "/nodes/{node}/lxc/{vmid}/status/start", Nth: 1, DropConn: true})
	_, err = ct.StartAsync(ctx)
	if !isKind(err, ErrTransient) || !isKind(err, ErrMaybeApplied) {
		t.Errorf("dropped POST: %v", err)
	}
	expectCalls(t, sim, call{"POST", "/nodes/pve1/lxc/200/status/start", nil})

	sim.InjectFault(pvesim.Fault{Method: "GET", PathPattern: "/nodes/{node}/lxc/{vmid}/status/current", Nth: 1, DropConn: true})
	must(ct.Status(ctx))(t)
	expectCalls(t, sim, call{"GET", "/nodes/pve1/lxc/200/status/current", nil}, call{"GET", "/nodes/pve1/lxc/200/status/current", nil})

	sim.InjectFault(pvesim.Fault{Method: "POST", PathPattern: "/nodes/{node}/lxc/{vmid}/status/start", Nth: 1, Status: 500, Message: "CT is locked (backup)"})
	_, err = ct.StartAsync(ctx)
	if !isKind(err, ErrLocked) {
		t.Errorf("locked: %v", err)
	}
	expectCalls(t, sim, call{"POST", "/nodes/pve1/lxc/200/status/start", nil})
}

// TestLXCClientHasNoSuspend: the container client must not be able to send
// status/suspend (R13, R15); the pause belongs to VMs only.
func TestLXCClientHasNoSuspend(t *testing.T) {
	typ := reflect.TypeOf(&LXCClient{})
	for i := 0; i < typ.NumMethod(); i++ {
		name := strings.ToLower(typ.Method(i).Name)
		if strings.Contains(name, "suspend") || strings.Contains(name, "pause") || strings.Contains(name, "resume") {
			t.Errorf("LXCClient has method %s", typ.Method(i).Name)
		}
	}
	if _, ok := reflect.TypeOf(&QEMUClient{}).MethodByName("Suspend"); !ok {
		t.Error("QEMUClient lost Suspend")
	}
}

// R43: ExtractConfig reads a VM archive's config with one GET and keeps only its drive keys.
func TestSimExtractConfig(t *testing.T) {
	sim, c := newSim(t)
	ctx := testContext(t)
	n := c.Node("pve1")
	upid := must(n.Vzdump(ctx, VzdumpParams{VMID: 300, Storage: "local"}))(t)
	if _, err := c.Wait(ctx, upid); err != nil {
		t.Fatal(err)
	}
	list := must(n.Storage("local").Content(ctx, ContentFilter{Content: "backup", VMID: 300}))(t)
	if len(list) != 1 {
		t.Fatalf("backups %+v", list)
	}
	sim.ResetLog()
	got := must(n.ExtractConfig(ctx, list[0].VolID))(t)
	want := map[string]string{"scsi0": "local-lvm:vm-300-disk-0,size=16G", "ide2": "local-lvm:vm-300-cloudinit,media=cdrom"}
	if !reflect.DeepEqual(got.Disks, want) || len(got.Mounts) != 0 {
		t.Errorf("archive config %+v", got)
	}
	expectCalls(t, sim, call{"GET", "/nodes/pve1/vzdump/extractconfig", form("volume", list[0].VolID)})
	if _, err := n.ExtractConfig(ctx, "local:backup/vzdump-qemu-300-2020_01_01-00_00_00.vma.zst"); err == nil ||
		!strings.Contains(err.Error(), "can't find file") {
		t.Errorf("missing archive: %v", err)
	}
	if _, err := n.ExtractConfig(ctx, "/etc/passwd"); err == nil {
		t.Error("a path was sent as a volume id")
	}
}
