package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/collectors"

	"pvebill/modules/pve/pvesim"
	"pvebill/modules/stack/stacktest"
	"pvebill/server"
	"pvebill/server/config"
)

// scrapeTarget samples guests once through the real sampler and serves the server's /metrics.
type scrapeTarget struct {
	e     *samplerEnv
	url   string
	times []float64
	body  []byte
}

func newScrapeTarget(t *testing.T, nodes, perNode int) *scrapeTarget {
	t.Helper()
	instant := pvesim.ServiceModel{Workers: 3, Median: func(string, string, int) time.Duration { return 0 }}
	e := newSamplerEnv(t, openDB(t, dialect(t)), nodes, perNode, instant, direct)
	e.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if err := e.sampler.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	srv := server.New(stacktest.WithServices(server.Options{Config: config.Defaults(), DB: e.db, Registry: e.reg,
		Logger: slog.New(slog.DiscardHandler)}))
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return &scrapeTarget{e: e, url: hs.URL + "/metrics"}
}

// scrape fetches /metrics once as Prometheus does (gzip accepted) and records the time.
func (s *scrapeTarget) scrape(t *testing.T) {
	t.Helper()
	start := time.Now()
	resp, err := http.Get(s.url)
	if err != nil {
		t.Fatal(err)
	}
	s.body, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape: %d %v", resp.StatusCode, err)
	}
	s.times = append(s.times, time.Since(start).Seconds())
}

// perGuest counts the series that carry a vmid, per guest, in the last scrape.
func (s *scrapeTarget) perGuest() float64 {
	series := 0
	sc := bufio.NewScanner(bytes.NewReader(s.body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "#") && strings.Contains(line, `vmid="`) {
			series++
		}
	}
	return float64(series) / float64(s.e.guests)
}

// metricsExposition scrapes a small and a large cluster's pvebill in turns, so that whatever
// else the machine does weighs on both alike.
func metricsExposition(t *testing.T, rep *Report) {
	const sc = "5 metrics"
	scrapes := scale(25, 3)
	small := newScrapeTarget(t, scale(10, 2), scale(100, 10))
	big := newScrapeTarget(t, scale(20, 4), scale(500, 50))
	before := len(small.e.sim.Requests()) + len(big.e.sim.Requests())
	small.scrape(t) // warm both
	big.scrape(t)
	small.times, big.times = nil, nil
	for range scrapes {
		small.scrape(t)
		big.scrape(t)
	}
	calls := len(small.e.sim.Requests()) + len(big.e.sim.Requests()) - before
	n1, n2 := small.e.guests, big.e.guests
	r1, r2 := median(small.times), median(big.times)
	rep.info(sc, "render time, "+strconv.Itoa(n1)+" guests", r1*1000, "ms", "median of "+strconv.Itoa(scrapes)+" scrapes, gzip")
	rep.info(sc, "render time, "+strconv.Itoa(n2)+" guests", r2*1000, "ms", fmt.Sprintf("%d KiB of text", len(big.body)/1024))
	rep.target(sc, "series per guest", max(small.perGuest(), big.perGuest()), "", "<=", 5, true, "")
	rep.target(sc, "render time ratio "+strconv.Itoa(n2)+"/"+strconv.Itoa(n1), r2/r1, "x", "<=", 12, false, "guests x"+strconv.Itoa(n2/n1))
	rep.target(sc, "Proxmox calls per scrape", float64(calls)/float64(2*(scrapes+1)), "", "==", 0, true, "")
}
