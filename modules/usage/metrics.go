package usage

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// GuestLabels identify a guest's series.
type GuestLabels struct {
	Cluster   string
	Node      string
	VMID      int
	ServiceID string
	GuestType string
}

func (l GuestLabels) values() []string {
	return []string{l.Cluster, l.Node, strconv.Itoa(l.VMID), l.ServiceID, l.GuestType}
}

// GuestMetrics are the per-guest swap series (R33): at most four per guest, each absent when
// its value is unknown (R14), all removed when the guest goes away or stops being sampled.
//
//	pvebill_guest_swap_bytes{cluster,node,vmid,service_id,guest_type}
//	pvebill_guest_swap_limit_bytes{…}
//	pvebill_guest_swap_5m_avg_bytes{…}
//	pvebill_guest_swap_5m_max_bytes{…}
type GuestMetrics struct {
	swap, limit, avg, max *prometheus.GaugeVec

	mu     sync.Mutex
	series map[string]GuestLabels // by service_id
}

// GuestLabelNames are the labels of every per-guest series.
var GuestLabelNames = []string{"cluster", "node", "vmid", "service_id", "guest_type"}

// NewGuestMetrics creates the per-guest series and registers them on reg.
func NewGuestMetrics(reg prometheus.Registerer) *GuestMetrics {
	g := func(name, help string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, GuestLabelNames)
	}
	m := &GuestMetrics{
		swap:   g("pvebill_guest_swap_bytes", "Swap used by the guest at its latest sample."),
		limit:  g("pvebill_guest_swap_limit_bytes", "Swap the guest may use (its configured swap)."),
		avg:    g("pvebill_guest_swap_5m_avg_bytes", "Average swap used over the last five minutes of samples."),
		max:    g("pvebill_guest_swap_5m_max_bytes", "Maximum swap used over the last five minutes of samples."),
		series: map[string]GuestLabels{},
	}
	reg.MustRegister(m.swap, m.limit, m.avg, m.max)
	return m
}

func (m *GuestMetrics) vecs() []*prometheus.GaugeVec {
	return []*prometheus.GaugeVec{m.swap, m.limit, m.avg, m.max}
}

// Set publishes a guest's latest sample. A nil value removes that series rather than showing 0.
// A guest whose labels changed (it moved to another node) loses its old series.
func (m *GuestMetrics) Set(l GuestLabels, swap, limit *int64, w *Window) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.series[l.ServiceID]; ok && old != l {
		m.deleteLocked(old)
	}
	m.series[l.ServiceID] = l
	vals := l.values()
	set := func(v *prometheus.GaugeVec, x *int64) {
		if x == nil {
			v.DeleteLabelValues(vals...)
			return
		}
		v.WithLabelValues(vals...).Set(float64(*x))
	}
	set(m.swap, swap)
	set(m.limit, limit)
	if w != nil {
		set(m.avg, &w.Avg)
		set(m.max, &w.Max)
	} else {
		set(m.avg, nil)
		set(m.max, nil)
	}
}

func (m *GuestMetrics) deleteLocked(l GuestLabels) {
	for _, v := range m.vecs() {
		v.DeleteLabelValues(l.values()...)
	}
	delete(m.series, l.ServiceID)
}

// RetainNode removes the series of the node's guests whose service is not in keep (stopped,
// gone, moved away, no longer managed). A nil keep removes every series of the node.
func (m *GuestMetrics) RetainNode(cluster, node string, keep map[string]bool) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var gone []string
	for id, l := range m.series {
		if l.Cluster == cluster && l.Node == node && !keep[id] {
			m.deleteLocked(l)
			gone = append(gone, id)
		}
	}
	return gone
}

// RetainNodes removes the series of a cluster's guests on nodes not in nodes (a node that left
// the cluster).
func (m *GuestMetrics) RetainNodes(cluster string, nodes map[string]bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, l := range m.series {
		if l.Cluster == cluster && !nodes[l.Node] {
			m.deleteLocked(l)
		}
	}
}

// Len is the number of guests with series.
func (m *GuestMetrics) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.series)
}

// StateCounter counts services in a state (models.DB).
type StateCounter interface {
	CountServicesInState(ctx context.Context, state string) (int64, error)
}

// reconciliationCollector reads the number of services needing reconciliation at scrape time,
// from the database only (a scrape never calls Proxmox). When the database does not answer the
// series is absent, not 0.
type reconciliationCollector struct {
	db   StateCounter
	desc *prometheus.Desc
}

// NewReconciliationGauge registers pvebill_services_needs_reconciliation on reg: the services
// whose operation failed at or after an irreversible stage and wait for an operator (R28).
func NewReconciliationGauge(reg prometheus.Registerer, db StateCounter) {
	reg.MustRegister(&reconciliationCollector{db: db, desc: prometheus.NewDesc("pvebill_services_needs_reconciliation",
		"Services in needs_reconciliation: an operator must resolve them through the admin API.", nil, nil)})
}

func (c *reconciliationCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *reconciliationCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	n, err := c.db.CountServicesInState(ctx, "needs_reconciliation")
	if err != nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n))
}
