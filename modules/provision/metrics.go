package provision

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the provisioning layer's Prometheus series.
type Metrics struct {
	enforcements *prometheus.CounterVec
}

// NewMetrics registers the provisioning metrics on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		enforcements: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pvebill_enforcements_total",
			Help: "Guests stopped by limit enforcement or drift repair, by reason and guest type (R16)."},
			[]string{"reason", "guest_type"}),
	}
	reg.MustRegister(m.enforcements)
	return m
}
