package pvesim

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestBusyWorkersAndLog sends six concurrent status reads to one node with two workers and a
// fixed 30 ms service time: no more than two are served at once, the round takes three service
// times, all six arrived together, and the log carries each request's times.
func TestBusyWorkersAndLog(t *testing.T) {
	s := New(Options{Nodes: []string{"n1", "n2"}})
	if err := s.SeedGuest(Guest{VMID: 101, Type: "lxc", Node: "n1", Running: true, Config: map[string]string{"hostname": "a"}}); err != nil {
		t.Fatal(err)
	}
	b := s.Busy(ServiceModel{Workers: 2, Sigma: 1e-9, Median: func(_, _ string, _ int) time.Duration {
		return 30 * time.Millisecond
	}})
	srv := httptest.NewServer(b)
	defer srv.Close()
	get := func(path string) int {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+apiPrefix+path, nil)
		req.Header.Set("Authorization", "PVEAPIToken="+defaultTokenID+"="+defaultTokenSecret)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			return 0
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	start := time.Now()
	var wg sync.WaitGroup
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if st := get("/nodes/n1/lxc/101/status/current"); st != http.StatusOK {
				t.Errorf("status %d", st)
			}
		}()
	}
	wg.Wait()
	if d := time.Since(start); d < 90*time.Millisecond {
		t.Fatalf("six 30 ms requests on two workers took %v, want >= 90ms", d)
	}
	log := b.Served()
	if len(log) != 6 {
		t.Fatalf("log has %d entries", len(log))
	}
	for _, e := range log {
		if e.Node != "n1" || e.Status != http.StatusOK || e.Service() < 30*time.Millisecond || e.Started.Before(e.Arrived) {
			t.Fatalf("entry %+v", e)
		}
	}
	// at most two service intervals overlap at any instant
	for _, a := range log {
		overlap := 0
		for _, o := range log {
			if !o.Started.After(a.Started) && o.Ended.After(a.Started) {
				overlap++
			}
		}
		if overlap > 2 {
			t.Fatalf("%d requests served at once at %v", overlap, a.Started)
		}
	}
	if got := b.MaxArrivals("n1"); got != 6 {
		t.Fatalf("max arrivals on n1 = %d, want 6", got)
	}
	// a cluster-wide path is served by the entry node
	b.ResetLog()
	get("/cluster/resources")
	if l := b.Served(); len(l) != 1 || l[0].Node != "n1" {
		t.Fatalf("cluster path log %+v", l)
	}
}

// TestDefaultMedianGrowsWithContainers pins the default model's shape.
func TestDefaultMedianGrowsWithContainers(t *testing.T) {
	cases := []struct {
		method, path string
		n            int
		want         time.Duration
	}{
		{"GET", "/nodes/n1/lxc", 0, 20 * time.Millisecond},
		{"GET", "/nodes/n1/lxc", 500, 1020 * time.Millisecond},
		{"GET", "/nodes/n1/lxc/101/status/current", 500, 40 * time.Millisecond},
		{"GET", "/nodes/n1/tasks/UPID:n1:1:2:3:vzcreate:101:x@pve:/status", 0, 10 * time.Millisecond},
		{"POST", "/nodes/n1/lxc", 500, 60 * time.Millisecond},
		{"GET", "/cluster/resources", 0, 25 * time.Millisecond},
	}
	for _, c := range cases {
		if got := DefaultMedian(c.method, c.path, c.n); got != c.want {
			t.Errorf("%s %s (%d containers) = %v, want %v", c.method, c.path, c.n, got, c.want)
		}
	}
}

// TestBusyIndexTimeFollowsContainers checks the index of a node with more containers is
// served slower, through the count the front reads from the simulator.
func TestBusyIndexTimeFollowsContainers(t *testing.T) {
	s := New(Options{Nodes: []string{"n1", "n2"}})
	for i := range 40 {
		if err := s.SeedGuest(Guest{VMID: 200 + i, Type: "lxc", Node: "n1", Config: map[string]string{"hostname": fmt.Sprintf("c%d", i)}}); err != nil {
			t.Fatal(err)
		}
	}
	b := s.Busy(ServiceModel{Sigma: 1e-9, Median: func(_, _ string, n int) time.Duration {
		return time.Duration(n) * time.Millisecond
	}})
	srv := httptest.NewServer(b)
	defer srv.Close()
	for _, n := range []string{"n1", "n2"} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+apiPrefix+"/nodes/"+n+"/lxc", nil)
		req.Header.Set("Authorization", "PVEAPIToken="+defaultTokenID+"="+defaultTokenSecret)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
	}
	log := b.Served()
	if len(log) != 2 || log[0].Service() < 40*time.Millisecond || log[1].Service() >= 40*time.Millisecond {
		t.Fatalf("index service times %v (n1, 40 containers) and %v (n2, none)", log[0].Service(), log[1].Service())
	}
}

// TestBusyHandlesAtOnceAndHoldsTheAnswer: the drawn time is the whole service time. The
// simulator handles a request as soon as a worker takes it (the change is visible at once), and
// the answer is held until the drawn time has passed, so the simulator's own work is not added
// on top of the draw.
func TestBusyHandlesAtOnceAndHoldsTheAnswer(t *testing.T) {
	s := New(Options{Nodes: []string{"n1"}})
	if err := s.SeedGuest(Guest{VMID: 101, Type: "lxc", Node: "n1", Config: map[string]string{"hostname": "a", "memory": "512"}}); err != nil {
		t.Fatal(err)
	}
	const draw = 300 * time.Millisecond
	b := s.Busy(ServiceModel{Workers: 1, Sigma: 1e-9, Median: func(_, _ string, _ int) time.Duration { return draw }})
	srv := httptest.NewServer(b)
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodPut, srv.URL+apiPrefix+"/nodes/n1/lxc/101/config", strings.NewReader("memory=1024"))
	req.Header.Set("Authorization", "PVEAPIToken="+defaultTokenID+"="+defaultTokenSecret)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	answered := make(chan time.Time, 1)
	start := time.Now()
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
		} else {
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("status %d", resp.StatusCode)
			}
		}
		answered <- time.Now()
	}()
	deadline := start.Add(draw / 2)
	for {
		if g, _ := s.Guest(101); g.Config["memory"] == "1024" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the change was not applied within half the drawn time")
		}
		time.Sleep(2 * time.Millisecond)
	}
	select {
	case at := <-answered:
		t.Fatalf("answered after %v, before the drawn %v", at.Sub(start), draw)
	default:
	}
	if at := <-answered; at.Sub(start) < draw {
		t.Fatalf("answered after %v", at.Sub(start))
	}
	if l := b.Served(); len(l) != 1 || l[0].Service() < draw || l[0].Status != http.StatusOK {
		t.Fatalf("log %+v", l)
	}
}
