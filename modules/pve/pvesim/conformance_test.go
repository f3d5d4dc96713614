package pvesim

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// The simulator's answers are compared with the captured responses in
// testdata/fixtures: the same fields with the same JSON types.

func loadFixture(t *testing.T, name string) json.RawMessage {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "fixtures", name))
	if err != nil {
		t.Fatal(err)
	}
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(b, &env); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return env.Data
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "bool"
	case float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "?"
}

// sameShape checks that got has every field of want with the same JSON kind, and no field
// beyond want's except those listed in extra.
func sameShape(t *testing.T, what string, want, got map[string]any, extra ...string) {
	t.Helper()
	for k, wv := range want {
		gv, ok := got[k]
		if !ok {
			t.Errorf("%s: field %q missing", what, k)
			continue
		}
		if jsonKind(wv) != jsonKind(gv) {
			t.Errorf("%s: field %q is %s (%v), fixture has %s (%v)", what, k, jsonKind(gv), gv, jsonKind(wv), wv)
		}
	}
	allowed := map[string]bool{}
	for _, e := range extra {
		allowed[e] = true
	}
	var unexpected []string
	for k := range got {
		if _, ok := want[k]; !ok && !allowed[k] {
			unexpected = append(unexpected, k)
		}
	}
	sort.Strings(unexpected)
	if len(unexpected) > 0 {
		t.Errorf("%s: fields not in the fixture: %v", what, unexpected)
	}
}

func firstOfType(t *testing.T, list []map[string]any, typ string) map[string]any {
	t.Helper()
	for _, e := range list {
		if e["type"] == typ {
			return e
		}
	}
	t.Fatalf("no entry of type %s", typ)
	return nil
}

func TestConformanceClusterResources(t *testing.T) {
	var fixture []map[string]any
	if err := json.Unmarshal(loadFixture(t, "cluster-resources.json"), &fixture); err != nil {
		t.Fatal(err)
	}
	h := demoHarness(t)
	var got []map[string]any
	h.ok("GET", "/cluster/resources", nil, &got)
	fq := firstOfType(t, fixture, "qemu")
	delete(fq, "tags")
	// the fixture (PVE 7.3-8.0) predates memhost; the demo container carries tags
	sameShape(t, "qemu entry", fq, firstOfType(t, got, "qemu"), "memhost", "tags", "lock", "hastate")
	sameShape(t, "lxc entry", fq, firstOfType(t, got, "lxc"), "tags", "lock", "hastate")
	sameShape(t, "node entry", firstOfType(t, fixture, "node"), firstOfType(t, got, "node"), "host-arch")
	sameShape(t, "storage entry", firstOfType(t, fixture, "storage"), firstOfType(t, got, "storage"))
	for _, e := range got {
		if e["type"] == "lxc" || e["type"] == "qemu" {
			if _, ok := e["swap"]; ok {
				t.Errorf("%v carries swap", e["id"])
			}
			if _, ok := e["maxswap"]; ok {
				t.Errorf("%v carries maxswap", e["id"])
			}
		}
	}
	var vms []map[string]any
	h.ok("GET", "/cluster/resources", vals("type", "vm"), &vms)
	types := map[string]int{}
	for _, e := range vms {
		types[e["type"].(string)]++
	}
	if types["lxc"] == 0 || types["qemu"] == 0 || len(types) != 2 {
		t.Errorf("type=vm gives %v, want both lxc and qemu only", types)
	}
}

func TestConformanceNextID(t *testing.T) {
	var fixture any
	if err := json.Unmarshal(loadFixture(t, "cluster-nextid.json"), &fixture); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, Options{})
	r := h.do("GET", "/cluster/nextid", nil)
	var got any
	if err := json.Unmarshal(r.Data, &got); err != nil {
		t.Fatal(err)
	}
	if jsonKind(got) != jsonKind(fixture) || got != "100" {
		t.Errorf("nextid = %#v, fixture %#v", got, fixture)
	}
}

func TestConformanceLXCIndex(t *testing.T) {
	var fixture []map[string]any
	if err := json.Unmarshal(loadFixture(t, "node-lxc-index.json"), &fixture); err != nil {
		t.Fatal(err)
	}
	var running, template map[string]any
	for _, e := range fixture {
		if e["status"] == "running" && running == nil {
			running = e
		}
		if e["template"] != nil {
			template = e
		}
	}
	clk := &fixedClock{t: testEpoch}
	s := New(Options{Now: clk.Now, PVEMajor: 8})
	seedFixtureLike(t, s)
	h := startHarness(t, s)

	s.SetNodeOptions("pve1", NodeOptions{OldIndex: true})
	var old []map[string]any
	h.ok("GET", "/nodes/pve1/lxc", nil, &old)
	byID := func(list []map[string]any, id string) map[string]any {
		for _, e := range list {
			if v, ok := e["vmid"].(string); ok && v == id {
				return e
			}
			if v, ok := e["vmid"].(float64); ok && jsonNumberString(v) == id {
				return e
			}
		}
		t.Fatalf("vmid %s not in index %v", id, list)
		return nil
	}
	sameShape(t, "old index running", running, byID(old, "106"))
	sameShape(t, "old index template", template, byID(old, "101"), "tags")

	s.SetNodeOptions("pve1", NodeOptions{})
	var cur []map[string]any
	h.ok("GET", "/nodes/pve1/lxc", nil, &cur)
	e := byID(cur, "106")
	if _, ok := e["vmid"].(float64); !ok {
		t.Errorf("new index vmid is %T, want a number", e["vmid"])
	}
	s.SetNodeOptions("pve1", NodeOptions{NoSwapInIndex: true})
	var noSwap []map[string]any
	h.ok("GET", "/nodes/pve1/lxc", nil, &noSwap)
	if _, ok := byID(noSwap, "106")["swap"]; ok {
		t.Error("NoSwapInIndex still lists swap")
	}
}

func jsonNumberString(f float64) string {
	b, _ := json.Marshal(f)
	return string(b)
}

// seedFixtureLike seeds containers like those of node-lxc-index.json on pve1.
func seedFixtureLike(t *testing.T, s *Sim) {
	t.Helper()
	s.AddStorage("vmstore", "zfspool", []string{"rootdir", "images"}, false)
	for _, g := range []Guest{
		{VMID: 106, Type: "lxc", Node: "pve1", Running: true, Config: map[string]string{"hostname": "test", "memory": "512", "swap": "512", "cores": "1", "rootfs": "local-lvm:vm-106-disk-0,size=8G"}},
		{VMID: 105, Type: "lxc", Node: "pve1", Running: true, Config: map[string]string{"hostname": "zort", "memory": "512", "swap": "512", "cores": "1", "rootfs": "local-lvm:vm-105-disk-0,size=8G"}},
		{VMID: 101, Type: "lxc", Node: "pve1", Template: true, Config: map[string]string{"hostname": "test-container", "memory": "512", "swap": "512", "cores": "1", "rootfs": "local-lvm:base-101-disk-0,size=8G", "tags": "tag1;tag2"}},
	} {
		if err := s.SeedGuest(g); err != nil {
			t.Fatal(err)
		}
	}
}

func TestConformanceLXCStatusCurrent(t *testing.T) {
	var fixture map[string]any
	if err := json.Unmarshal(loadFixture(t, "lxc-status-current.json"), &fixture); err != nil {
		t.Fatal(err)
	}
	clk := &fixedClock{t: testEpoch}
	s := New(Options{Now: clk.Now, PVEMajor: 8})
	seedFixtureLike(t, s)
	h := startHarness(t, s)
	var got map[string]any
	h.ok("GET", "/nodes/pve1/lxc/101/status/current", nil, &got)
	sameShape(t, "lxc status/current (stopped template)", fixture, got)
	if got["maxdisk"] != fixture["maxdisk"] || got["maxmem"] != fixture["maxmem"] || got["maxswap"] != fixture["maxswap"] {
		t.Errorf("sizes differ: %v/%v/%v vs %v/%v/%v", got["maxdisk"], got["maxmem"], got["maxswap"], fixture["maxdisk"], fixture["maxmem"], fixture["maxswap"])
	}
}

func TestConformanceLXCConfigBindMount(t *testing.T) {
	var fixture map[string]any
	if err := json.Unmarshal(loadFixture(t, "lxc-config-bindmount.json"), &fixture); err != nil {
		t.Fatal(err)
	}
	clk := &fixedClock{t: testEpoch}
	s := New(Options{Now: clk.Now})
	s.AddStorage("vmstore", "zfspool", []string{"rootdir", "images"}, false)
	conf := map[string]string{}
	var raw [][2]string
	for k, v := range fixture {
		switch k {
		case "digest":
		case "lxc":
			for _, kv := range v.([]any) {
				p := kv.([]any)
				raw = append(raw, [2]string{p[0].(string), p[1].(string)})
			}
		default:
			switch x := v.(type) {
			case string:
				conf[k] = x
			case float64:
				conf[k] = jsonNumberString(x)
			}
		}
	}
	if err := s.SeedGuest(Guest{VMID: 101, Type: "lxc", Node: "pve1", Config: conf, LXC: raw}); err != nil {
		t.Fatal(err)
	}
	h := startHarness(t, s)
	var got map[string]any
	h.ok("GET", "/nodes/pve1/lxc/101/config", nil, &got)
	sameShape(t, "lxc config", fixture, got)
	for k, v := range fixture {
		if k == "digest" || k == "lxc" {
			continue
		}
		if got[k] != v {
			t.Errorf("config %s = %#v, fixture %#v", k, got[k], v)
		}
	}
	gl, _ := json.Marshal(got["lxc"])
	fl, _ := json.Marshal(fixture["lxc"])
	if string(gl) != string(fl) {
		t.Errorf("lxc raw keys %s, fixture %s", gl, fl)
	}
}

func TestConformanceQemuStatusCurrent(t *testing.T) {
	var fixture map[string]any
	if err := json.Unmarshal(loadFixture(t, "qemu-status-current.json"), &fixture); err != nil {
		t.Fatal(err)
	}
	clk := &fixedClock{t: testEpoch}
	s := New(Options{Now: clk.Now, PVEMajor: 8})
	if err := s.SeedGuest(Guest{VMID: 101, Type: "qemu", Node: "pve1", Running: true, Config: map[string]string{
		"name": "matt", "memory": "2000", "cores": "8", "agent": "1", "vga": "qxl",
		"scsi0": "local-lvm:vm-101-disk-0,size=18467520512", "ide2": "none,media=cdrom"}}); err != nil {
		t.Fatal(err)
	}
	h := startHarness(t, s)
	var got map[string]any
	h.ok("GET", "/nodes/pve1/qemu/101/status/current", nil, &got)
	sameShape(t, "qemu status/current (running)", fixture, got)
	if got["status"] != "running" || got["qmpstatus"] != "running" {
		t.Errorf("status %v qmpstatus %v", got["status"], got["qmpstatus"])
	}
}
