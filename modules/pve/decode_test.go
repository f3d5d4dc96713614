package pve

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestLenientNumbers(t *testing.T) {
	ints := map[string]Int{`5001`: 5001, `"106"`: 106, `" 42 "`: 42, `""`: 0, `null`: 0, `7.0`: 7, `-3`: -3}
	for in, want := range ints {
		var got Int
		if err := json.Unmarshal([]byte(in), &got); err != nil || got != want {
			t.Errorf("Int from %s = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{`"abc"`, `1.5`, `{}`, `[1]`, `true`} {
		var got Int
		if err := json.Unmarshal([]byte(in), &got); err == nil {
			t.Errorf("Int from %s accepted as %d", in, got)
		}
	}
	floats := map[string]Float{`0.25`: 0.25, `"0.25"`: 0.25, `1`: 1, `""`: 0, `null`: 0}
	for in, want := range floats {
		var got Float
		if err := json.Unmarshal([]byte(in), &got); err != nil || got != want {
			t.Errorf("Float from %s = %v, %v; want %v", in, got, err, want)
		}
	}
	var f Float
	if err := json.Unmarshal([]byte(`"x"`), &f); err == nil {
		t.Error("Float from \"x\" accepted")
	}
	bools := map[string]Bool{`1`: true, `0`: false, `true`: true, `false`: false, `"1"`: true, `"0"`: false,
		`"yes"`: true, `"off"`: false, `null`: false, `""`: false}
	for in, want := range bools {
		var got Bool
		if err := json.Unmarshal([]byte(in), &got); err != nil || got != want {
			t.Errorf("Bool from %s = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{`2`, `"maybe"`, `[]`} {
		var got Bool
		if err := json.Unmarshal([]byte(in), &got); err == nil {
			t.Errorf("Bool from %s accepted", in)
		}
	}
	texts := map[string]Text{`"a b "`: "a b ", `512`: "512", `1`: "1", `null`: "", `true`: "true"}
	for in, want := range texts {
		var got Text
		if err := json.Unmarshal([]byte(in), &got); err != nil || got != want {
			t.Errorf("Text from %s = %q, %v; want %q", in, got, err, want)
		}
	}
}

// fixture reads a captured Proxmox answer (the simulator's testdata, docs/proxmox.md §13) and
// returns its data member.
func fixture(t *testing.T, name string) json.RawMessage {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("pvesim", "testdata", "fixtures", name))
	if err != nil {
		t.Fatalf("fixture %s: %v", name, err)
	}
	var env envelope
	if err := json.Unmarshal(b, &env); err != nil {
		t.Fatalf("fixture %s: %v", name, err)
	}
	return env.Data
}

func TestDecodeFixtures(t *testing.T) {
	var id Int
	if err := json.Unmarshal(fixture(t, "cluster-nextid.json"), &id); err != nil || id != 100 {
		t.Errorf("nextid %d, %v", id, err)
	}

	var res []ClusterResource
	if err := json.Unmarshal(fixture(t, "cluster-resources.json"), &res); err != nil {
		t.Fatal(err)
	}
	types := map[string]int{}
	for _, r := range res {
		types[r.Type]++
	}
	if types["qemu"] != 4 || types["node"] != 4 || types["storage"] != 12 {
		t.Errorf("resource types %v", types)
	}
	if res[0].VMID != 100 || res[0].ID != "qemu/100" || res[0].Status != "running" || res[0].MaxMem != 1073741824 {
		t.Errorf("first resource %+v", res[0])
	}

	var idx []LXCStatus
	if err := json.Unmarshal(fixture(t, "node-lxc-index.json"), &idx); err != nil {
		t.Fatal(err)
	}
	if len(idx) != 3 || idx[0].VMID != 106 || idx[2].VMID != 101 || !bool(idx[2].Template) {
		t.Errorf("index %+v", idx)
	}
	if idx[0].MaxSwap == nil || *idx[0].MaxSwap != 536870912 || idx[0].Swap == nil || *idx[0].Swap != 0 {
		t.Errorf("swap figures %v %v", idx[0].Swap, idx[0].MaxSwap)
	}
	if idx[0].HA != nil || idx[0].CPUSome != nil {
		t.Errorf("absent fields decoded as present")
	}

	var st LXCStatus
	if err := json.Unmarshal(fixture(t, "lxc-status-current.json"), &st); err != nil {
		t.Fatal(err)
	}
	if st.VMID != 101 || st.Running() || st.HA == nil || bool(st.HA.Managed) || st.Tags != "tag1;tag2" {
		t.Errorf("status %+v", st)
	}

	var cfg LXCConfig
	if err := json.Unmarshal(fixture(t, "lxc-config-bindmount.json"), &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Digest != "5911baea29f4c0073fb063fd9ab29e75892832bf" || cfg.Hostname != "test-container" ||
		cfg.Memory == nil || *cfg.Memory != 4096 || cfg.Swap == nil || *cfg.Swap != 512 || !bool(cfg.OnBoot) {
		t.Errorf("config %+v", cfg)
	}
	if cfg.MountPoints[0] != "/mnt/foo/bar,mp=/storage" || cfg.RootFS != "vmstore:subvol-101-disk-0,size=30G" ||
		!strings.HasPrefix(cfg.Net[0], "name=eth0,") || len(cfg.LXC) != 5 || cfg.LXC[0][0] != "lxc.cgroup2.devices.allow" {
		t.Errorf("config volumes %v %v %v", cfg.MountPoints, cfg.Net, cfg.LXC)
	}
	if cfg.CPULimit != nil || cfg.Unused != nil {
		t.Errorf("absent keys decoded as present")
	}
	if _, ok := cfg.Raw["features"]; !ok {
		t.Errorf("raw keys missing")
	}

	var qs QEMUStatus
	if err := json.Unmarshal(fixture(t, "qemu-status-current.json"), &qs); err != nil {
		t.Fatal(err)
	}
	if !qs.Running() || qs.Paused() || !bool(qs.Agent) || qs.CPUs != 8 {
		t.Errorf("qemu status %+v", qs)
	}
}

func TestQEMUConfigDecode(t *testing.T) {
	raw := `{"digest":"abc","name":"vm1","memory":"2048","cores":2,"scsi0":"local-lvm:vm-100-disk-0,size=32G",
		"ide2":"local-lvm:vm-100-cloudinit,media=cdrom","efidisk0":"local-lvm:vm-100-disk-1,size=4M",
		"net0":"virtio=BC:24:11:00:00:01,bridge=vmbr0,firewall=1","ipconfig0":"ip=203.0.113.5/24,gw=203.0.113.1",
		"unused0":"local-lvm:vm-100-disk-9","sshkeys":"ssh-ed25519%20AAAA%20a%40b%0Assh-rsa%20BBBB","agent":1,"scsihw":"virtio-scsi-single"}`
	var c QEMUConfig
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		t.Fatal(err)
	}
	wantDisks := map[string]string{"scsi0": "local-lvm:vm-100-disk-0,size=32G", "ide2": "local-lvm:vm-100-cloudinit,media=cdrom",
		"efidisk0": "local-lvm:vm-100-disk-1,size=4M"}
	if !reflect.DeepEqual(c.Disks, wantDisks) {
		t.Errorf("disks %v", c.Disks)
	}
	if c.Memory != "2048" || c.Cores == nil || *c.Cores != 2 || c.Agent != "1" || c.IPConfig[0] != "ip=203.0.113.5/24,gw=203.0.113.1" ||
		c.Unused[0] != "local-lvm:vm-100-disk-9" || !strings.HasPrefix(c.Net[0], "virtio=") {
		t.Errorf("config %+v", c)
	}
	keys, err := DecodeSSHKeys(c.SSHKeys)
	if err != nil || !reflect.DeepEqual(keys, []string{"ssh-ed25519 AAAA a@b", "ssh-rsa BBBB"}) {
		t.Errorf("keys %q, %v", keys, err)
	}
}

func TestSSHKeysEncoding(t *testing.T) {
	keys := []string{"ssh-ed25519 AAAAC3Nza+/= user@host", " ssh-rsa AAAAB3 other ", ""}
	enc := EncodeSSHKeys(keys)
	want := "ssh-ed25519%20AAAAC3Nza%2B%2F%3D%20user%40host%0Assh-rsa%20AAAAB3%20other"
	if enc != want {
		t.Errorf("encoded %q\nwant    %q", enc, want)
	}
	for _, r := range enc {
		if !strings.ContainsRune("-%_.!~*'()", r) && (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (r < '0' || r > '9') {
			t.Errorf("character %q outside Proxmox's urlencoded pattern", r)
		}
	}
	if strings.Contains(enc, "+") {
		t.Errorf("space encoded as +")
	}
	back, err := DecodeSSHKeys(enc)
	if err != nil || !reflect.DeepEqual(back, []string{"ssh-ed25519 AAAAC3Nza+/= user@host", "ssh-rsa AAAAB3 other"}) {
		t.Errorf("round trip %q, %v", back, err)
	}
	// On the wire the form encoding escapes the percent signs once more.
	form, err := QEMUConfigUpdate{SSHKeys: keys[:1]}.form()
	if err != nil {
		t.Fatal(err)
	}
	if got := form.Encode(); got != "sshkeys=ssh-ed25519%2520AAAAC3Nza%252B%252F%253D%2520user%2540host" {
		t.Errorf("wire form %q", got)
	}
}

func TestEncodeForm(t *testing.T) {
	req := LXCCreateRequest{
		OSTemplate:   "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst",
		Hostname:     "ct5001",
		Password:     "s3cret-root",
		Unprivileged: Ptr(true),
		Memory:       Ptr(1024),
		Swap:         Ptr(0),
		CPULimit:     Ptr(1.5),
		RootFS:       "local-lvm:8",
		Net:          map[int]string{0: "name=eth0,bridge=vmbr0,ip=dhcp,firewall=1", 2: "name=eth2,bridge=vmbr1"},
		MountPoints:  map[int]string{1: "local-lvm:20,mp=/data,backup=1"},
		OnBoot:       Ptr(false),
		Start:        false,
	}
	got, err := encodeForm(req)
	if err != nil {
		t.Fatal(err)
	}
	want := url.Values{
		"ostemplate":   {"local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst"},
		"hostname":     {"ct5001"},
		"password":     {"s3cret-root"},
		"unprivileged": {"1"},
		"memory":       {"1024"},
		"swap":         {"0"},
		"cpulimit":     {"1.5"},
		"rootfs":       {"local-lvm:8"},
		"net0":         {"name=eth0,bridge=vmbr0,ip=dhcp,firewall=1"},
		"net2":         {"name=eth2,bridge=vmbr1"},
		"mp1":          {"local-lvm:20,mp=/data,backup=1"},
		"onboot":       {"0"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("form\n got %v\nwant %v", got, want)
	}
	if s := fmt.Sprintf("%v %+v %#v", req, req, req); strings.Contains(s, "s3cret-root") {
		t.Errorf("password printed: %s", s)
	}
	if b, _ := json.Marshal(req); strings.Contains(string(b), "s3cret-root") {
		t.Errorf("password in JSON: %s", b)
	}

	upd, err := encodeForm(LXCConfigUpdate{Delete: []string{"mp0", "unused1"}, Digest: "abc", Swap: Ptr(256)})
	if err != nil {
		t.Fatal(err)
	}
	if upd.Encode() != "delete=mp0%2Cunused1&digest=abc&swap=256" {
		t.Errorf("update form %q", upd.Encode())
	}
	del, _ := encodeForm(LXCDeleteOptions{Purge: true, DestroyUnreferencedDisks: true})
	if del.Encode() != "destroy-unreferenced-disks=1&purge=1" {
		t.Errorf("delete form %q", del.Encode())
	}
	none, _ := encodeForm(LXCDeleteOptions{})
	if len(none) != 0 {
		t.Errorf("zero options send %v", none)
	}

	type bad struct {
		X []int `pve:"x,list"`
	}
	if _, err := encodeForm(bad{X: []int{1}}); err == nil {
		t.Error("[]int list accepted")
	}
	type badOpt struct {
		X string `pve:"x,sometimes"`
	}
	if _, err := encodeForm(badOpt{X: "1"}); err == nil {
		t.Error("unknown option accepted")
	}
	if _, err := encodeForm(42); err == nil {
		t.Error("non-struct accepted")
	}
}

func TestEndpointTemplate(t *testing.T) {
	cases := []struct{ path, endpoint, node string }{
		{"/cluster/resources", "/cluster/resources", ""},
		{"/cluster/nextid", "/cluster/nextid", ""},
		{"/nodes", "/nodes", ""},
		{"/nodes/pve1/status", "/nodes/{node}/status", "pve1"},
		{"/nodes/pve1/lxc", "/nodes/{node}/lxc", "pve1"},
		{"/nodes/pve1/lxc/5001/status/current", "/nodes/{node}/lxc/{vmid}/status/current", "pve1"},
		{"/nodes/pve-2/qemu/100/firewall/ipset/ipfilter-net0", "/nodes/{node}/qemu/{vmid}/firewall/ipset/{name}", "pve-2"},
		{"/nodes/pve1/tasks/UPID:pve1:0012ABCD:0A1B2C3D:6650F00D:vzcreate:5001:svc@pve!provision:/status",
			"/nodes/{node}/tasks/{upid}/status", "pve1"},
		{"/nodes/pve1/storage/local-lvm/content", "/nodes/{node}/storage/{storage}/content", "pve1"},
		{"/nodes/pve1/storage/local/content/local:iso", "/nodes/{node}/storage/{storage}/content/{volume}", "pve1"},
		{"/nodes/pve1/lxc/5001/snapshot/before-upgrade/config", "/nodes/{node}/lxc/{vmid}/snapshot/{snapname}/config", "pve1"},
		{"/version2/x9", "/{param}/{param}", ""},
		{"/pools/Customer42", "/pools/{poolid}", ""},
		{"/access/users/root@pam", "/access/users/{param}", ""},
	}
	for _, tc := range cases {
		e, n := endpointTemplate(tc.path)
		if e != tc.endpoint || n != tc.node {
			t.Errorf("%s: got %s %q, want %s %q", tc.path, e, n, tc.endpoint, tc.node)
		}
	}
}

func TestParseUPIDNode(t *testing.T) {
	good := map[string]string{
		"UPID:pve1:0012ABCD:0A1B2C3D:6650F00D:vzcreate:5001:svc@pve!provision:": "pve1",
		"UPID:node-2:00001234:123456789:6650F00D:vzdump::root@pam:":             "node-2",
		"UPID:pve1:0012ABCD:0A1B2C3D:6650F00D:qmclone:9000:svc@pve!provision:":  "pve1",
	}
	for upid, node := range good {
		got, err := parseUPIDNode(upid)
		if err != nil || got != node {
			t.Errorf("%s: %q, %v", upid, got, err)
		}
	}
	for _, upid := range []string{
		"", "OK", "UPID:pve1:0012ABCD:0A1B2C3D:6650F00D:vzcreate:5001:svc@pve!provision",
		"UPID::0012ABCD:0A1B2C3D:6650F00D:vzcreate:5001:svc@pve!provision:",
		"UPID:pve1:12:0A1B2C3D:6650F00D:vzcreate:5001:svc@pve!provision:",
		"UPID:pve/x:0012ABCD:0A1B2C3D:6650F00D:vzcreate:5001:svc@pve!provision:",
		"UPID:pve1:0012ABCD:0A1B2C3D:6650F00D:vzcreate:5001:a/../b:",
	} {
		if _, err := parseUPIDNode(upid); err == nil {
			t.Errorf("%q accepted", upid)
		}
	}
}

func TestConfigString(t *testing.T) {
	cfg := Config{Cluster: "c1", URL: "https://pve:8006", TokenID: testTokenID, TokenSecret: testSecret}
	for _, s := range []string{cfg.String(), fmt.Sprintf("%v", cfg), fmt.Sprintf("%+v", cfg), fmt.Sprintf("%#v", cfg), fmt.Sprint(&cfg)} {
		if strings.Contains(s, testSecret) {
			t.Errorf("secret printed: %s", s)
		}
		if !strings.Contains(s, testTokenID) {
			t.Errorf("token id missing: %s", s)
		}
	}
	if b, _ := json.Marshal(cfg); strings.Contains(string(b), testSecret) {
		t.Errorf("secret in JSON: %s", b)
	}
	if s := cfg.LogValue().String(); strings.Contains(s, testSecret) {
		t.Errorf("secret in log value: %s", s)
	}
}
