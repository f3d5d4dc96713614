package pvesim

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestControlAnswers pins every control endpoint's status and body, in the order a test
// suite drives them: the chaos suite and other packages' tests depend on these exact answers.
func TestControlAnswers(t *testing.T) {
	h := newHarness(t, Options{})
	steps := []struct {
		method, path, body string
		status             int
		want               string
	}{
		{"POST", "/_sim/reset", "", 200, `{"ok":true}`},
		{"POST", "/_sim/storages", `{"id":"tank","type":"zfspool","content":["images","rootdir"]}`, 200, `{"ok":true}`},
		{"POST", "/_sim/pools", `{"id":"p1"}`, 200, `{"ok":true}`},
		{"POST", "/_sim/guests", `{"vmid":150,"type":"lxc","node":"pve1","config":{"rootfs":"tank:subvol-150-disk-0,size=8G"}}`, 200, `{"ok":true}`},
		{"POST", "/_sim/guests", `{"vmid":150,"type":"lxc","node":"pve1"}`, 409, `{"error":"CT 150 already exists on node 'pve1'"}`},
		{"POST", "/_sim/guests", `{"vmid":`, 400, `{"error":"decode body: unexpected EOF"}`},
		{"POST", "/_sim/config", `{"vmid":150,"key":"hostname","value":"ct150"}`, 200, `{"ok":true}`},
		{"POST", "/_sim/config", `{"vmid":151,"key":"hostname","value":"x"}`, 404, `{"error":"guest 151 does not exist"}`},
		{"GET", "/_sim/guests/150", "", 200, `"hostname":"ct150"`},
		{"GET", "/_sim/guests/151", "", 404, `{"error":"guest 151 does not exist"}`},
		{"GET", "/_sim/guests/abc", "", 400, `{"error":"strconv.Atoi: parsing \"abc\": invalid syntax"}`},
		{"POST", "/_sim/volumes", `{"storage":"local","volname":"dump/vzdump-lxc-150-2025_01_02-03_04_05.tar.zst","size":1024,"content":"backup","protected":true,"notes":"n"}`, 200, `{"ok":true}`},
		{"GET", "/_sim/volumes?storage=tank", "", 200, `["subvol-150-disk-0"]`},
		{"GET", "/_sim/volumes?storage=nope", "", 200, `null`},
		{"POST", "/_sim/faults", `{"method":"GET","path_pattern":"/version","status":500,"delay":"1ms"}`, 200, `{"id":1}`},
		{"POST", "/_sim/faults", `{"delay":true}`, 400, `{"error":"decode body: duration must be a string like \"2s\" or nanoseconds"}`},
		{"DELETE", "/_sim/faults", "", 200, `{"ok":true}`},
		{"POST", "/_sim/nodes/pve1/options", `{"max_concurrent":2,"latency":1000,"memory_bytes":8589934592}`, 200, `{"ok":true}`},
		{"POST", "/_sim/nodes/pve2/online", `{"up":false}`, 200, `{"ok":true}`},
		{"GET", "/_sim/nodes/pve1/maxinflight", "", 200, `{"max":0}`},
		{"GET", "/_sim/nodes/pve1/other", "", 404, `{"error":"unknown control path GET /_sim/nodes/pve1/other"}`},
		{"POST", "/_sim/task-duration", `{"type":"vzstart","duration":"2s"}`, 200, `{"ok":true}`},
		{"POST", "/_sim/advance", `{"duration":"10s"}`, 200, `{"now":1740830410}`},
		{"GET", "/_sim/requests", "", 200, `[]`},
		{"GET", "/_sim/violations", "", 200, `[]`},
		{"GET", "/_sim/tasks", "", 200, `[]`},
		{"DELETE", "/_sim/requests", "", 200, `{"ok":true}`},
		{"GET", "/_sim/reset", "", 404, `{"error":"unknown control path GET /_sim/reset"}`},
		{"PUT", "/_sim/faults", "", 404, `{"error":"unknown control path PUT /_sim/faults"}`},
		{"GET", "/_sim/nope", "", 404, `{"error":"unknown control path GET /_sim/nope"}`},
		{"GET", "/_sim", "", 404, `{"error":"unknown control path GET /_sim"}`},
		{"GET", "/_sim/tasks/", "", 200, `[]`},
	}
	for _, st := range steps {
		req, err := http.NewRequest(st.method, h.srv.URL+st.path, strings.NewReader(st.body))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		got := strings.TrimSpace(string(b))
		if resp.StatusCode != st.status || !strings.Contains(got, st.want) {
			t.Errorf("%s %s: %d %s, want %d %s", st.method, st.path, resp.StatusCode, got, st.status, st.want)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "application/json;charset=UTF-8" {
			t.Errorf("%s %s: content type %q", st.method, st.path, ct)
		}
	}
	if g, ok := h.sim.Guest(150); !ok || g.Config["hostname"] != "ct150" {
		t.Errorf("guest 150 after control calls: %+v", g)
	}
	if h.sim.nodes["pve2"].online || h.sim.nodes["pve1"].opts.MaxConcurrent != 2 {
		t.Errorf("node options not applied")
	}
	h.sim.mu.RLock()
	maxmem := h.sim.nodeStats("pve1")["maxmem"]
	h.sim.mu.RUnlock()
	if maxmem != int64(8<<30) {
		t.Errorf("node memory_bytes not applied: maxmem %v", maxmem)
	}
}
