package pvesim

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// seedScale fills nodes × perNode guests (every fifth one a VM, two thirds running).
func seedScale(tb testing.TB, nodes, perNode int) *Sim {
	tb.Helper()
	names := make([]string, nodes)
	for i := range names {
		names[i] = fmt.Sprintf("node%02d", i+1)
	}
	clk := &fixedClock{t: testEpoch}
	s := New(Options{Nodes: names, Now: clk.Now, Seed: 42})
	id := 1000
	for _, n := range names {
		for i := 0; i < perNode; i++ {
			id++
			g := Guest{VMID: id, Node: n, Running: i%3 != 0}
			if i%5 == 4 {
				g.Type = "qemu"
				g.Config = map[string]string{"name": fmt.Sprintf("vm%d", id), "memory": "2048", "cores": "2",
					"scsi0": fmt.Sprintf("local-lvm:vm-%d-disk-0,size=32G", id)}
			} else {
				g.Type = "lxc"
				g.Config = map[string]string{"hostname": fmt.Sprintf("ct%d", id), "memory": "1024", "swap": "512", "cores": "1",
					"rootfs": fmt.Sprintf("local-lvm:vm-%d-disk-0,size=8G", id), "tags": "pvebill"}
			}
			if err := s.SeedGuest(g); err != nil {
				tb.Fatal(err)
			}
		}
	}
	return s
}

func authedRequest(method, path string) *http.Request {
	r := httptest.NewRequest(method, apiPrefix+path, nil)
	r.Header.Set("Authorization", "PVEAPIToken="+defaultTokenID+"="+defaultTokenSecret)
	return r
}

func TestScaleTenThousandGuests(t *testing.T) {
	if testing.Short() {
		t.Skip("scale test")
	}
	start := time.Now()
	s := seedScale(t, 20, 500)
	t.Logf("seeded 10000 guests in %v", time.Since(start))
	for _, p := range []string{"/cluster/resources?type=vm", "/nodes/node07/lxc", "/nodes/node20/lxc/10999/status/current", "/cluster/nextid"} {
		w := httptest.NewRecorder()
		s.ServeHTTP(w, authedRequest("GET", p))
		if w.Code != 200 {
			t.Errorf("%s: %d %s", p, w.Code, w.Body.String())
		}
	}
	w := httptest.NewRecorder()
	s.ServeHTTP(w, authedRequest("GET", "/cluster/nextid"))
	if w.Body.String() != `{"data":"100"}` {
		t.Errorf("nextid %s", w.Body.String())
	}
}

func BenchmarkStatusCurrent(b *testing.B) {
	s := seedScale(b, 20, 500)
	s.opts.Now = time.Now // figures move during the benchmark
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			i++
			id := 1001 + (i*7919)%10000
			if (id-1000)%5 == 0 {
				id-- // a container, not a VM
			}
			node := fmt.Sprintf("node%02d", (id-1001)/500+1)
			w := httptest.NewRecorder()
			s.ServeHTTP(w, authedRequest("GET", fmt.Sprintf("/nodes/%s/lxc/%d/status/current", node, id)))
			if w.Code != 200 {
				b.Fatalf("%d %s", w.Code, w.Body.String())
			}
		}
	})
	b.StopTimer()
	s.ResetLog()
}

func BenchmarkNodeIndex500(b *testing.B) {
	s := seedScale(b, 20, 500)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			w := httptest.NewRecorder()
			s.ServeHTTP(w, authedRequest("GET", "/nodes/node03/lxc"))
			if w.Code != 200 {
				b.Fatalf("%d", w.Code)
			}
		}
	})
	b.StopTimer()
	s.ResetLog()
}

func BenchmarkClusterResources(b *testing.B) {
	s := seedScale(b, 20, 500)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w := httptest.NewRecorder()
		s.ServeHTTP(w, authedRequest("GET", "/cluster/resources?type=vm"))
		if w.Code != 200 {
			b.Fatalf("%d", w.Code)
		}
	}
}
