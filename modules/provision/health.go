package provision

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the provisioning layer's Prometheus series.
type Metrics struct {
	firewall     *prometheus.GaugeVec
	enforcements *prometheus.CounterVec
	// scheduled counts scheduled backups by result (R42): planned, skipped, missed,
	// succeeded, failed.
	scheduled *prometheus.CounterVec
	// Placement (R52): refusals for want of a candidate node, and each node's memory fill and
	// headroom as the last placement or node view judged them.
	noCapacityTotal *prometheus.CounterVec
	nodeFill        *prometheus.GaugeVec
	nodeHeadroom    *prometheus.GaugeVec
	nodeMaintenance *prometheus.GaugeVec
}

// NewMetrics registers the provisioning metrics on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		firewall: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "pvebill_datacenter_firewall_enabled",
			Help: "1 when the cluster's datacenter firewall is enabled (guest anti-spoofing applies only then, R9), 0 when not."},
			[]string{"cluster"}),
		enforcements: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pvebill_enforcements_total",
			Help: "Guests stopped by limit enforcement or drift repair, by reason and guest type (R16)."},
			[]string{"reason", "guest_type"}),
		scheduled: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pvebill_scheduled_backups_total",
			Help: "Scheduled backups by result: planned (queued), skipped (the service's backup still open), missed (the window passed while no replica planned it), succeeded, failed (R42)."},
			[]string{"result"}),
		noCapacityTotal: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pvebill_placement_no_capacity_total",
			Help: "Creates refused as no_capacity: no node of the cluster was a candidate for the plan (R52)."},
			[]string{"cluster"}),
		nodeFill: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "pvebill_node_memory_fill_ratio",
			Help: "Memory committed to a node's guests and creates in flight over its memory × memory_overcommit (R52)."},
			[]string{"cluster", "node"}),
		nodeHeadroom: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "pvebill_node_memory_headroom_bytes",
			Help: "A node's memory × memory_overcommit less the memory of its guests and creates in flight (R52)."},
			[]string{"cluster", "node"}),
		nodeMaintenance: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "pvebill_node_maintenance",
			Help: "1 while an operator has the node in maintenance (placement sends it no new guest), 0 when not (R52)."},
			[]string{"cluster", "node"}),
	}
	for _, r := range scheduledResults {
		m.scheduled.WithLabelValues(r)
	}
	reg.MustRegister(m.firewall, m.enforcements, m.scheduled, m.noCapacityTotal, m.nodeFill, m.nodeHeadroom, m.nodeMaintenance)
	return m
}

// DefaultReadinessInterval is how often the background check asks each cluster (R50).
const DefaultReadinessInterval = 15 * time.Second

// maxCheckTime bounds one cluster's check, whatever the interval.
const maxCheckTime = 10 * time.Second

// clusterHealth is what the last background check of a cluster found.
type clusterHealth struct {
	proxmox   string // ok | unreachable
	firewall  string // enabled | disabled | unknown
	checkedAt time.Time
}

// WatchReadiness checks every cluster now and then every interval (DefaultReadinessInterval
// when not positive) until ctx ends (R50). A check that hangs ends within the interval (at most
// maxCheckTime); meanwhile Readiness keeps answering the last result, with its age.
func (s *Provisioner) WatchReadiness(ctx context.Context, every time.Duration) {
	if every <= 0 {
		every = DefaultReadinessInterval
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		cctx, cancel := context.WithTimeout(ctx, min(every, maxCheckTime))
		s.CheckClusters(cctx)
		cancel()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// CheckClusters asks every cluster, concurrently, whether Proxmox answers and whether the
// datacenter firewall is enabled, and stores what it found for Readiness. It is the only
// readiness code that calls Proxmox. A disabled firewall does not make pvebill unready, but it
// is said on /readyz, in the pvebill_datacenter_firewall_enabled gauge and in the log (once per
// change) (R9).
func (s *Provisioner) CheckClusters(ctx context.Context) {
	var wg sync.WaitGroup
	for _, name := range s.names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.store(name, s.checkCluster(ctx, name))
		}()
	}
	wg.Wait()
}

// checkCluster reads one cluster's datacenter firewall options.
func (s *Provisioner) checkCluster(ctx context.Context, name string) clusterHealth {
	cl := s.clusters[name]
	opts, err := cl.Client.Cluster().FirewallOptions(ctx)
	h := clusterHealth{proxmox: "unreachable", firewall: "unknown", checkedAt: s.now()}
	if err != nil {
		s.log.Warn("readiness: cluster unreachable", "cluster", name, "err", err)
		// Unknown is absent, not a value.
		s.metrics.firewall.DeleteLabelValues(name)
		return h
	}
	h.proxmox, h.firewall = "ok", "disabled"
	v := 0.0
	if opts.Enabled() {
		h.firewall, v = "enabled", 1
	}
	s.metrics.firewall.WithLabelValues(name).Set(v)
	return h
}

// store keeps a cluster's check result and logs a firewall that became disabled.
func (s *Provisioner) store(name string, h clusterHealth) {
	s.fwMu.Lock()
	defer s.fwMu.Unlock()
	if s.health == nil {
		s.health = map[string]clusterHealth{}
	}
	s.health[name] = h
	if prev := s.fwState[name]; prev != h.firewall {
		s.fwState[name] = h.firewall
		if h.firewall == "disabled" {
			s.log.Warn("datacenter firewall is disabled: guest anti-spoofing (firewall=1, ipfilter) has no effect until it is enabled",
				"cluster", name)
		}
	}
}

// Readiness reports, per cluster, what the last background check found: whether Proxmox
// answered, whether the datacenter firewall is enabled, when it was checked (checked_at) and
// how long ago (age_seconds). It never calls Proxmox, so it answers at once whatever Proxmox
// does (R50); before the first check a cluster's state is unknown and has no age.
func (s *Provisioner) Readiness(context.Context) map[string]any {
	now := s.now()
	s.fwMu.Lock()
	defer s.fwMu.Unlock()
	out := make(map[string]any, len(s.names))
	for _, name := range s.names {
		h, ok := s.health[name]
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
