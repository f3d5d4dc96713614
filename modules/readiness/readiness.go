// Package readiness checks in the background whether each cluster's Proxmox answers and
// whether its datacenter firewall is enabled (R9, R50), and answers /readyz from the last check
// without calling Proxmox.
package readiness

import (
	"context"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"pvebill/modules/kinds"
	"pvebill/modules/operation"
)

// DefaultInterval is how often the background check asks each cluster (R50).
const DefaultInterval = 15 * time.Second

// maxCheckTime bounds one cluster's check, whatever the interval.
const maxCheckTime = 10 * time.Second

// Options configure a Checker.
type Options struct {
	Clusters []kinds.Cluster
	Log      *slog.Logger
	// Metrics registers the firewall gauge; nil: not registered.
	Metrics prometheus.Registerer
	// Now is the clock (time.Now but in tests).
	Now func() time.Time
}

// Checker keeps what the last check of each cluster found.
type Checker struct {
	clusters operation.Clusters
	names    []string
	log      *slog.Logger
	now      func() time.Time
	firewall *prometheus.GaugeVec
	mu       sync.Mutex
	health   map[string]clusterHealth
}

// clusterHealth is what the last background check of a cluster found.
type clusterHealth struct {
	proxmox   string // ok | unreachable
	firewall  string // enabled | disabled | unknown
	checkedAt time.Time
}

// New returns a checker of the clusters; nothing is checked before Check or Watch.
func New(o Options) *Checker {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	c := &Checker{clusters: operation.NewClusters(o.Clusters), log: o.Log, now: o.Now,
		health: map[string]clusterHealth{},
		firewall: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "pvebill_datacenter_firewall_enabled",
			Help: "1 when the cluster's datacenter firewall is enabled (guest anti-spoofing applies only then, R9), 0 when not."},
			[]string{"cluster"})}
	c.names = c.clusters.Names()
	if o.Metrics != nil {
		o.Metrics.MustRegister(c.firewall)
	}
	return c
}

// Watch checks every cluster now and then every interval (DefaultInterval when not positive)
// until ctx ends (R50). A check that hangs ends within the interval (at most maxCheckTime);
// meanwhile Readiness keeps answering the last result, with its age.
func (c *Checker) Watch(ctx context.Context, every time.Duration) {
	if every <= 0 {
		every = DefaultInterval
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		cctx, cancel := context.WithTimeout(ctx, min(every, maxCheckTime))
		c.Check(cctx)
		cancel()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Check asks every cluster, concurrently, whether Proxmox answers and whether the datacenter
// firewall is enabled, and stores what it found for Readiness. It is the only readiness code
// that calls Proxmox. A disabled firewall does not make pvebill unready, but it is said on
// /readyz, in the pvebill_datacenter_firewall_enabled gauge and in the log (once per change)
// (R9).
func (c *Checker) Check(ctx context.Context) {
	var wg sync.WaitGroup
	for _, name := range c.names {
		wg.Go(func() { c.store(name, c.checkCluster(ctx, name)) })
	}
	wg.Wait()
}

// checkCluster reads one cluster's datacenter firewall options.
func (c *Checker) checkCluster(ctx context.Context, name string) clusterHealth {
	h := clusterHealth{proxmox: "unreachable", firewall: "unknown", checkedAt: c.now()}
	cl, err := c.clusters.Get(name)
	if err != nil {
		return h
	}
	enabled, err := cl.FirewallEnabled(ctx)
	if err != nil {
		c.log.Warn("readiness: cluster unreachable", "cluster", name, "err", err)
		// Unknown is absent, not a value.
		c.firewall.DeleteLabelValues(name)
		return h
	}
	h.proxmox, h.firewall = "ok", "disabled"
	v := 0.0
	if enabled {
		h.firewall, v = "enabled", 1
	}
	c.firewall.WithLabelValues(name).Set(v)
	return h
}

// store keeps a cluster's check result and logs a firewall that became disabled (once per
// change: the previous result says what it was).
func (c *Checker) store(name string, h clusterHealth) {
	c.mu.Lock()
	defer c.mu.Unlock()
	prev := c.health[name]
	c.health[name] = h
	if h.firewall == "disabled" && prev.firewall != "disabled" {
		c.log.Warn("datacenter firewall is disabled: guest anti-spoofing (firewall=1, ipfilter) has no effect until it is enabled",
			"cluster", name)
	}
}

// Readiness reports, per cluster, what the last background check found: whether Proxmox
// answered, whether the datacenter firewall is enabled, when it was checked (checked_at) and
// how long ago (age_seconds). It never calls Proxmox, so it answers at once whatever Proxmox
// does (R50); before the first check a cluster's state is unknown and has no age.
func (c *Checker) Readiness(context.Context) map[string]any {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]any, len(c.names))
	for _, name := range c.names {
		h, ok := c.health[name]
		if !ok {
			out[name] = map[string]any{"proxmox": "unknown", "datacenter_firewall": "unknown"}
			continue
		}
		age := math.Round(now.Sub(h.checkedAt).Seconds()*1000) / 1000
		out[name] = map[string]any{"proxmox": h.proxmox, "datacenter_firewall": h.firewall,
			"checked_at": h.checkedAt.UTC().Format(time.RFC3339Nano), "age_seconds": max(age, 0)}
	}
	return out
}
