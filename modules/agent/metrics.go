package agent

import "github.com/prometheus/client_golang/prometheus"

// Metrics are pvebill's figures of its agents' tunnels. Every label takes its values from a
// closed set: configured cluster names, fixed reasons and directions (R49).
type Metrics struct {
	tunnels     *prometheus.GaugeVec
	connects    *prometheus.CounterVec
	disconnects *prometheus.CounterVec
	handshake   *prometheus.CounterVec
	streams     *prometheus.GaugeVec
	calls       *prometheus.CounterVec
	bytes       *prometheus.CounterVec
	refused     *prometheus.CounterVec
	forwarded   *prometheus.CounterVec
	peerRefused *prometheus.CounterVec
}

// NewMetrics registers the metrics on reg (nil: not registered, still counted).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		tunnels: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "pvebill_agent_tunnels",
			Help: "Agent tunnels connected to this replica, per cluster."}, []string{"cluster"}),
		connects: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pvebill_agent_connects_total",
			Help: "Agent tunnels established (a reconnect counts again), per cluster."}, []string{"cluster"}),
		disconnects: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pvebill_agent_disconnects_total",
			Help: "Agent tunnels that ended, per cluster."}, []string{"cluster"}),
		handshake: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pvebill_agent_handshake_failures_total",
			Help: "Agent handshakes refused, by reason (protocol, unknown_cluster, bad_signature, timeout, shutting_down)."},
			[]string{"reason"}),
		streams: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "pvebill_agent_streams_open",
			Help: "Streams open through agent tunnels, per cluster."}, []string{"cluster"}),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pvebill_agent_calls_total",
			Help: "Calls sent through agent tunnels, per cluster and outcome (answered, refused, failed, no_agent)."},
			[]string{"cluster", "outcome"}),
		bytes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pvebill_agent_bytes_total",
			Help: "Body bytes through agent tunnels, per cluster and direction (sent, received)."},
			[]string{"cluster", "direction"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pvebill_agent_refused_total",
			Help: "Calls an agent refused (not on its allow-list), per cluster."}, []string{"cluster"}),
		forwarded: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pvebill_agent_forwarded_total",
			Help: "Calls forwarded one hop between replicas for an agent cluster, per cluster and direction (sent: to a " +
				"replica holding a tunnel; served: from a replica without one)."}, []string{"cluster", "direction"}),
		peerRefused: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pvebill_agent_forward_refusals_total",
			Help: "Forwarded calls refused by this replica, by reason (unauthenticated, stale, replayed, unknown_cluster)."},
			[]string{"reason"}),
	}
	if reg != nil {
		reg.MustRegister(m.tunnels, m.connects, m.disconnects, m.handshake, m.streams, m.calls, m.bytes, m.refused,
			m.forwarded, m.peerRefused)
	}
	return m
}

// Outcomes of a call through a tunnel.
const (
	outcomeAnswered = "answered"
	outcomeRefused  = "refused"
	outcomeFailed   = "failed"
	outcomeNoAgent  = "no_agent"
)

// init creates the series of a configured cluster, so a cluster without an agent shows 0.
func (m *Metrics) init(cluster string) {
	m.tunnels.WithLabelValues(cluster)
	m.connects.WithLabelValues(cluster)
	m.streams.WithLabelValues(cluster)
	m.refused.WithLabelValues(cluster)
	m.forwarded.WithLabelValues(cluster, "sent")
	m.forwarded.WithLabelValues(cluster, "served")
}
