package agent_test

import (
	"context"
	"net/http"
	"os"
	"runtime"
	"sort"
	"sync"
	"testing"
	"time"

	"pvebill/modules/agent"
	"pvebill/modules/pve"
	"pvebill/modules/pve/pvesim/simtest"
)

// percentiles returns the p50 and p99 of ds.
func percentiles(ds []time.Duration) (time.Duration, time.Duration) {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)/2], ds[len(ds)*99/100]
}

func timeCalls(t *testing.T, c *pve.Client, n int) []time.Duration {
	t.Helper()
	out := make([]time.Duration, 0, n)
	for range n {
		start := time.Now()
		if _, err := c.Cluster().NextID(t.Context(), nil); err != nil {
			t.Fatal(err)
		}
		out = append(out, time.Since(start))
	}
	return out
}

// The figures of a Proxmox call through the agent against the same call sent directly, on
// loopback, measured in the same run (set PVEBILL_AGENT_FIGURES=1): latency added at p50 and p99,
// and the memory an open stream costs pvebill.
func TestAgentOverheadFigures(t *testing.T) {
	if os.Getenv("PVEBILL_AGENT_FIGURES") == "" {
		t.Skip("figures on request: PVEBILL_AGENT_FIGURES=1")
	}
	s := newStand(t, agent.HubOptions{})
	s.startAgent(t, agent.Options{})
	direct, err := pve.New(pve.Config{Cluster: "c1", URL: s.sim.URL, TokenID: simtest.TokenID, TokenSecret: simtest.TokenSecret}, nil)
	if err != nil {
		t.Fatal(err)
	}
	timeCalls(t, direct, 200)
	timeCalls(t, s.client, 200)
	const n = 3000
	var d, a []time.Duration
	for range 3 { // interleaved rounds, so both see the same machine
		d = append(d, timeCalls(t, direct, n/3)...)
		a = append(a, timeCalls(t, s.client, n/3)...)
	}
	d50, d99 := percentiles(d)
	a50, a99 := percentiles(a)
	t.Logf("call latency: direct p50 %s p99 %s; through the agent p50 %s p99 %s; added p50 %s p99 %s",
		d50, d99, a50, a99, a50-d50, a99-d99)

	// Memory per open stream: hold 200 streams open (answers whose bodies are not read yet)
	// and compare the heap once all of them are open.
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const streams = 200
	var open, done sync.WaitGroup
	release := make(chan struct{})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	open.Add(streams)
	for range streams {
		done.Go(func() {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://proxmox.agent.invalid/api2/json/nodes", nil)
			resp, err := s.hub.Transport("c1").RoundTrip(req)
			open.Done()
			if err == nil {
				<-release
				_ = resp.Body.Close()
			}
		})
	}
	open.Wait()
	runtime.ReadMemStats(&after)
	close(release)
	done.Wait()
	t.Logf("heap while %d streams were open: %d bytes more, %d bytes per stream (both ends in this process)",
		streams, int64(after.HeapAlloc)-int64(before.HeapAlloc), (int64(after.HeapAlloc)-int64(before.HeapAlloc))/streams)
}
