package placement

import "github.com/prometheus/client_golang/prometheus"

// Metrics are placement's series (R52): refusals for want of a candidate node, and each node's
// memory fill and headroom as the last placement or node view judged them.
type Metrics struct {
	noCapacityTotal *prometheus.CounterVec
	nodeFill        *prometheus.GaugeVec
	nodeHeadroom    *prometheus.GaugeVec
	nodeMaintenance *prometheus.GaugeVec
}

// NewMetrics registers the placement metrics on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
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
	reg.MustRegister(m.noCapacityTotal, m.nodeFill, m.nodeHeadroom, m.nodeMaintenance)
	return m
}
