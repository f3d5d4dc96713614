package provision

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the provisioning layer's Prometheus series.
type Metrics struct {
	firewall     *prometheus.GaugeVec
	enforcements *prometheus.CounterVec
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
	}
	reg.MustRegister(m.firewall, m.enforcements)
	return m
}

// Readiness reports, per cluster, whether Proxmox answers and whether the datacenter firewall
// is enabled. A disabled firewall does not make pvebill unready, but it is said here, in the
// pvebill_datacenter_firewall_enabled gauge and in the log (once per change) (R9).
func (s *Provisioner) Readiness(ctx context.Context) map[string]any {
	out := map[string]any{}
	for _, name := range s.names {
		cl := s.clusters[name]
		detail := map[string]any{}
		opts, err := cl.Client.Cluster().FirewallOptions(ctx)
		state := "unknown"
		if err != nil {
			detail["proxmox"] = "unreachable"
			s.log.Warn("readiness: cluster unreachable", "cluster", name, "err", err)
			// Unknown is absent, not a value.
			s.metrics.firewall.DeleteLabelValues(name)
		} else {
			detail["proxmox"] = "ok"
			state = "disabled"
			if opts.Enabled() {
				state = "enabled"
			}
			v := 0.0
			if opts.Enabled() {
				v = 1
			}
			s.metrics.firewall.WithLabelValues(name).Set(v)
		}
		detail["datacenter_firewall"] = state
		s.fwMu.Lock()
		if prev := s.fwState[name]; prev != state {
			s.fwState[name] = state
			if state == "disabled" {
				s.log.Warn("datacenter firewall is disabled: guest anti-spoofing (firewall=1, ipfilter) has no effect until it is enabled",
					"cluster", name)
			}
		}
		s.fwMu.Unlock()
		out[name] = detail
	}
	return out
}
