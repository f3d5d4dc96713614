package pvesim

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestFaultStatusNth(t *testing.T) {
	h := demoHarness(t)
	id := h.sim.InjectFault(Fault{Method: "GET", PathPattern: "/nodes/{node}/lxc/{vmid}/status/current", Nth: 2, Status: 503, Message: "service unavailable"})
	if id <= 0 {
		t.Fatalf("fault id %d", id)
	}
	path := "/nodes/pve1/lxc/200/status/current"
	if r := h.do("GET", path, nil); r.Status != 200 {
		t.Fatalf("1st: %d", r.Status)
	}
	r := h.do("GET", path, nil)
	if r.Status != 503 || r.Message != "service unavailable\n" {
		t.Fatalf("2nd: %d %q", r.Status, r.Message)
	}
	if r := h.do("GET", path, nil); r.Status != 200 {
		t.Fatalf("3rd: %d", r.Status)
	}
	// every matching request; a raw body; a concrete path and a regexp
	h.sim.ClearFaults()
	h.sim.InjectFault(Fault{PathPattern: "/nodes/pve1/lxc/200/config", Status: 500, Body: `{"data":null,"message":"CT is locked (backup)\n"}`})
	for i := 0; i < 3; i++ {
		if r := h.do("GET", "/nodes/pve1/lxc/200/config", nil); r.Status != 500 || r.Message != "CT is locked (backup)\n" {
			t.Fatalf("body fault: %d %q", r.Status, r.Message)
		}
	}
	h.sim.ClearFaults()
	h.sim.InjectFault(Fault{PathPattern: `/nodes/pve[12]/qemu/\d+/config`, Status: 596, Times: 2})
	for i, want := range []int{596, 596, 200} {
		if r := h.do("GET", "/nodes/pve1/qemu/300/config", nil); r.Status != want {
			t.Fatalf("regexp fault #%d: %d", i, r.Status)
		}
	}
}

func TestFaultAfterAppliesWork(t *testing.T) {
	h := demoHarness(t)
	h.sim.InjectFault(Fault{Method: "PUT", PathPattern: "/nodes/{node}/lxc/{vmid}/config", Status: 596, Message: "Connection timed out", After: true})
	r := h.do("PUT", "/nodes/pve1/lxc/200/config", vals("onboot", "1"))
	if r.Status != 596 {
		t.Fatalf("status %d", r.Status)
	}
	g, _ := h.sim.Guest(200)
	if g.Config["onboot"] != "1" {
		t.Error("an After fault must still apply the change")
	}
}

func rawDo(ctx context.Context, t *testing.T, h *harness, method, path string) (*http.Response, error) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, method, h.srv.URL+apiPrefix+path, nil)
	req.Header.Set("Authorization", "PVEAPIToken="+defaultTokenID+"="+defaultTokenSecret)
	return http.DefaultClient.Do(req)
}

func TestFaultDropHangDelay(t *testing.T) {
	h := demoHarness(t)
	h.sim.InjectFault(Fault{PathPattern: "/nodes", DropConn: true, Nth: 1})
	if resp, err := rawDo(t.Context(), t, h, "GET", "/nodes"); err == nil {
		_ = resp.Body.Close()
		t.Fatal("dropped connection answered")
	}
	h.sim.ClearFaults()

	h.sim.InjectFault(Fault{PathPattern: "/cluster/resources", Hang: true})
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	resp, err := rawDo(ctx, t, h, "GET", "/cluster/resources")
	if err == nil {
		_ = resp.Body.Close()
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("hang: %v", err)
	}
	// ClearFaults releases hanging requests
	done := make(chan error, 1)
	go func() {
		resp, err := rawDo(context.Background(), t, h, "GET", "/cluster/resources")
		if err == nil {
			_ = resp.Body.Close()
		}
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	h.sim.ClearFaults()
	select {
	case err := <-done:
		_ = err // released: an answer or a closed connection both do
	case <-time.After(5 * time.Second):
		t.Fatal("hanging request not released")
	}

	h.sim.InjectFault(Fault{PathPattern: "/version", Delay: 30 * time.Millisecond})
	start := time.Now()
	if r := h.do("GET", "/version", nil); r.Status != 200 {
		t.Fatalf("delay: %d", r.Status)
	}
	if time.Since(start) < 30*time.Millisecond {
		t.Error("delay fault did not delay")
	}
}

func TestRequestLog(t *testing.T) {
	h := demoHarness(t)
	h.sim.ResetLog()
	h.run("POST", "/nodes/pve1/lxc", vals("vmid", "5001", "ostemplate", debianTmpl, "swap", "0", "rootfs", "local-lvm:2"), "OK")
	h.do("GET", "/cluster/resources", vals("type", "vm"))
	reqs := h.sim.Requests()
	if len(reqs) != 3 {
		t.Fatalf("log %v", reqs)
	}
	c := reqs[0]
	if c.Method != "POST" || c.Path != "/nodes/pve1/lxc" || c.Node != "pve1" || c.Status != 200 || c.Form.Get("swap") != "0" || c.Form.Get("vmid") != "5001" {
		t.Errorf("create entry %+v", c)
	}
	if !strings.HasPrefix(reqs[1].Path, "/nodes/pve1/tasks/UPID:pve1:") || !strings.HasSuffix(reqs[1].Path, "/status") {
		t.Errorf("task status entry %+v", reqs[1])
	}
	if reqs[2].Node != "" || reqs[2].Form.Get("type") != "vm" {
		t.Errorf("resources entry %+v", reqs[2])
	}
	h.sim.ResetLog()
	if len(h.sim.Requests()) != 0 {
		t.Error("ResetLog kept entries")
	}
}

func TestMaxConcurrentPerNode(t *testing.T) {
	h := demoHarness(t)
	h.sim.SetNodeOptions("pve1", NodeOptions{MaxConcurrent: 2, Latency: 40 * time.Millisecond})
	var wg sync.WaitGroup
	start := time.Now()
	for i := 0; i < 6; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := rawDo(context.Background(), t, h, "GET", "/nodes/pve1/lxc")
			if err != nil {
				t.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
		}()
	}
	wg.Wait()
	if m := h.sim.MaxInFlight("pve1"); m != 2 {
		t.Errorf("max in flight %d, want 2", m)
	}
	if el := time.Since(start); el < 120*time.Millisecond {
		t.Errorf("6 requests with 2 workers and 40ms latency took %v", el)
	}
}

func TestDeterministicStats(t *testing.T) {
	read := func(seed int64, advance time.Duration) map[string]any {
		clk := &fixedClock{t: testEpoch}
		s := Demo(Options{Now: clk.Now, Seed: seed})
		for i := 0; i < 30; i++ {
			if err := s.SeedGuest(Guest{VMID: 1000 + i, Type: "lxc", Node: "pve2", Running: true, Config: map[string]string{
				"memory": "1024", "swap": "512", "rootfs": "local-lvm:vm-" + strconv.Itoa(1000+i) + "-disk-0,size=8G"}}); err != nil {
				t.Fatal(err)
			}
		}
		s.Advance(advance)
		h := startHarness(t, s)
		var idx []map[string]any
		h.ok("GET", "/nodes/pve2/lxc", nil, &idx)
		out := map[string]any{}
		swapping := 0
		for _, e := range idx {
			id := strconv.Itoa(int(e["vmid"].(float64)))
			out[id+"/swap"] = e["swap"]
			out[id+"/mem"] = e["mem"]
			out[id+"/netin"] = e["netin"]
			sw, msw := e["swap"].(float64), e["maxswap"].(float64)
			if sw > msw {
				t.Errorf("%s: swap %v > maxswap %v", id, sw, msw)
			}
			if sw > 0 {
				swapping++
			}
		}
		if swapping == 0 {
			t.Error("no container swaps")
		}
		return out
	}
	a, b := read(7, 0), read(7, 0)
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if !bytes.Equal(ja, jb) {
		t.Error("same seed and clock gave different figures")
	}
	c := read(8, 0)
	jc, _ := json.Marshal(c)
	if bytes.Equal(ja, jc) {
		t.Error("another seed gave identical figures")
	}
	d := read(7, time.Minute)
	jd, _ := json.Marshal(d)
	if bytes.Equal(ja, jd) {
		t.Error("figures do not move over time")
	}
	for k, v := range d {
		if strings.HasSuffix(k, "/netin") && v.(float64) < a[k].(float64) {
			t.Errorf("%s went backwards", k)
		}
	}
	// stopped containers report zero swap and memory
	h := demoHarness(t)
	h.run("POST", "/nodes/pve1/lxc/200/status/stop", nil, "OK")
	var st map[string]any
	h.ok("GET", "/nodes/pve1/lxc/200/status/current", nil, &st)
	if st["swap"] != float64(0) || st["mem"] != float64(0) || st["maxswap"] != float64(512*mib) {
		t.Errorf("stopped: %v", st)
	}
}

func TestControlAPI(t *testing.T) {
	h := newHarness(t, Options{})
	post := func(path, body string) map[string]any {
		t.Helper()
		resp, err := http.Post(h.srv.URL+"/_sim"+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatalf("POST %s: %v", path, err)
		}
		if resp.StatusCode != 200 {
			t.Fatalf("POST %s: %d %v", path, resp.StatusCode, out)
		}
		return out
	}
	get := func(path string, out any) {
		t.Helper()
		resp, err := http.Get(h.srv.URL + "/_sim" + path)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d", path, resp.StatusCode)
		}
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
	}
	post("/volumes", `{"storage":"local","volname":"vztmpl/debian-12-standard_12.7-1_amd64.tar.zst","size":1048576,"content":"vztmpl"}`)
	post("/guests", `{"vmid":5001,"type":"lxc","node":"pve2","running":true,"config":{"memory":"512","rootfs":"local-lvm:vm-5001-disk-0,size=2G"}}`)
	post("/config", `{"vmid":5001,"key":"mp0","value":"local-lvm:vm-5001-disk-1,mp=/data,size=1G"}`)
	var snap GuestSnapshot
	get("/guests/5001", &snap)
	if snap.Node != "pve2" || snap.Status != "running" || snap.Config["mp0"] == "" {
		t.Errorf("snapshot %+v", snap)
	}
	var vols []string
	get("/volumes?storage=local-lvm", &vols)
	if len(vols) != 2 {
		t.Errorf("volumes %v", vols)
	}
	f := post("/faults", `{"method":"GET","path_pattern":"/cluster/resources","status":500,"message":"boom","delay":"1ms"}`)
	if f["id"] == nil {
		t.Errorf("fault id %v", f)
	}
	if r := h.do("GET", "/cluster/resources", nil); r.Status != 500 || r.Message != "boom\n" {
		t.Errorf("fault via control API: %d %q", r.Status, r.Message)
	}
	req, _ := http.NewRequest("DELETE", h.srv.URL+"/_sim/faults", nil)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		_ = resp.Body.Close()
	}
	post("/nodes/pve1/options", `{"max_concurrent":1,"latency":"1ms","old_index":true}`)
	post("/task-duration", `{"type":"vzstart","duration":"1h"}`)
	h.do("GET", "/nodes/pve1/lxc/abc/config", nil)
	var reqs []Request
	get("/requests", &reqs)
	if len(reqs) != 2 {
		t.Errorf("requests %v", reqs)
	}
	var viol []Violation
	get("/violations", &viol)
	if len(viol) != 1 || viol[0].Errors["vmid"] == "" {
		t.Errorf("violations %v", viol)
	}
	var mx map[string]any
	get("/nodes/pve1/maxinflight", &mx)
	if mx["max"] != float64(1) {
		t.Errorf("maxinflight %v", mx)
	}
	post("/reset", `{}`)
	if _, ok := h.sim.Guest(5001); ok {
		t.Error("reset kept guests")
	}
}

func TestConcurrentCreatesClaimAnIDOnce(t *testing.T) {
	h := demoHarness(t)
	const n = 8
	var wg sync.WaitGroup
	statuses := make(chan int, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("POST", h.srv.URL+apiPrefix+"/nodes/pve2/lxc",
				strings.NewReader(vals("vmid", "7777", "ostemplate", debianTmpl, "rootfs", "local-lvm:1").Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Authorization", "PVEAPIToken="+defaultTokenID+"="+defaultTokenSecret)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			statuses <- resp.StatusCode
		}()
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := rawDo(context.Background(), t, h, "GET", "/nodes/pve2/lxc")
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
			}
		}()
	}
	wg.Wait()
	close(statuses)
	ok, refused := 0, 0
	for st := range statuses {
		switch st {
		case 200:
			ok++
		case 500:
			refused++
		}
	}
	if ok != 1 || refused != n-1 {
		t.Errorf("%d creates accepted, %d refused; want 1 and %d", ok, refused, n-1)
	}
	if got := len(h.sim.Volumes("local-lvm")); got != 6 {
		// the demo's five volumes plus one rootfs for 7777
		t.Errorf("local-lvm holds %d volumes: %v", got, h.sim.Volumes("local-lvm"))
	}
}
