package provision

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the provisioning layer's Prometheus series.
type Metrics struct {
	enforcements *prometheus.CounterVec
	// scheduled counts scheduled backups by result (R42): planned, skipped, missed,
	// succeeded, failed.
	scheduled *prometheus.CounterVec
}

// NewMetrics registers the provisioning metrics on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		enforcements: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pvebill_enforcements_total",
			Help: "Guests stopped by limit enforcement or drift repair, by reason and guest type (R16)."},
			[]string{"reason", "guest_type"}),
		scheduled: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pvebill_scheduled_backups_total",
			Help: "Scheduled backups by result: planned (queued), skipped (the service's backup still open), missed (the window passed while no replica planned it), succeeded, failed (R42)."},
			[]string{"result"}),
	}
	for _, r := range scheduledResults {
		m.scheduled.WithLabelValues(r)
	}
	reg.MustRegister(m.enforcements, m.scheduled)
	return m
}
