package usage

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"pvebill/models"
)

// GuestLabels identify a guest's series. A service id is unique per client only (R46): the
// client is a label too, its values the configured clients (a closed set, R49).
type GuestLabels struct {
	Cluster   string
	Node      string
	VMID      int
	ServiceID string
	GuestType string
	ClientID  string
}

func (l GuestLabels) values() []string {
	return []string{l.Cluster, l.Node, strconv.Itoa(l.VMID), l.ServiceID, l.GuestType, l.ClientID}
}

func (l GuestLabels) service() models.ServiceKey {
	return models.ServiceKey{ClientID: l.ClientID, ServiceID: l.ServiceID}
}

// GuestMetrics are the per-guest swap series (R33): at most four per guest, each absent when
// its value is unknown (R14), all removed when the guest goes away or stops being sampled.
//
//	pvebill_guest_swap_bytes{cluster,node,vmid,service_id,guest_type,client_id}
//	pvebill_guest_swap_limit_bytes{…}
//	pvebill_guest_swap_5m_avg_bytes{…}
//	pvebill_guest_swap_5m_max_bytes{…}
//
// It is one collector that emits the series in the order the Prometheus registry sorts them
// into (by label value, labels by name): the registry's sort then runs over sorted input in
// linear time, so a scrape's cost grows with the number of guests, not faster (R33). The order
// is kept between scrapes and rebuilt only when guests come, go or move.
type GuestMetrics struct {
	descs [guestFamilies]*prometheus.Desc

	mu     sync.Mutex
	series map[models.ServiceKey]*guestSeries
	order  []*guestSeries // sorted as the registry sorts; nil when it must be rebuilt
}

const guestFamilies = 4 // swap, limit, 5m avg, 5m max

type guestSeries struct {
	labels GuestLabels
	values [guestFamilies]float64
	known  [guestFamilies]bool
	key    [6]string // label values in the order of the label names sorted
	vals   []string  // label values in GuestLabelNames order
}

// GuestLabelNames are the labels of every per-guest series.
var GuestLabelNames = []string{"cluster", "node", "vmid", "service_id", "guest_type", "client_id"}

// NewGuestMetrics creates the per-guest series and registers them on reg.
func NewGuestMetrics(reg prometheus.Registerer) *GuestMetrics {
	d := func(name, help string) *prometheus.Desc { return prometheus.NewDesc(name, help, GuestLabelNames, nil) }
	m := &GuestMetrics{
		descs: [guestFamilies]*prometheus.Desc{
			d("pvebill_guest_swap_bytes", "Swap used by the guest at its latest sample."),
			d("pvebill_guest_swap_limit_bytes", "Swap the guest may use (its configured swap)."),
			d("pvebill_guest_swap_5m_avg_bytes", "Average swap used over the last five minutes of samples."),
			d("pvebill_guest_swap_5m_max_bytes", "Maximum swap used over the last five minutes of samples."),
		},
		series: map[models.ServiceKey]*guestSeries{},
	}
	reg.MustRegister(m)
	return m
}

// Describe sends the four families' descriptions.
func (m *GuestMetrics) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range m.descs {
		ch <- d
	}
}

// Collect sends every known value, family by family, each family in the registry's order.
func (m *GuestMetrics) Collect(ch chan<- prometheus.Metric) {
	m.mu.Lock()
	if m.order == nil {
		m.order = make([]*guestSeries, 0, len(m.series))
		for _, g := range m.series {
			m.order = append(m.order, g)
		}
		slices.SortFunc(m.order, func(a, b *guestSeries) int { return slices.Compare(a.key[:], b.key[:]) })
	}
	var out []prometheus.Metric
	for f, d := range m.descs {
		for _, g := range m.order {
			if g.known[f] {
				out = append(out, prometheus.MustNewConstMetric(d, prometheus.GaugeValue, g.values[f], g.vals...))
			}
		}
	}
	m.mu.Unlock()
	// Sent outside the lock: the registry reads the channel as it goes.
	for _, x := range out {
		ch <- x
	}
}

// Set publishes a guest's latest sample. A nil value removes that series rather than showing 0.
// A guest whose labels changed (it moved to another node) loses its old series.
func (m *GuestMetrics) Set(l GuestLabels, swap, limit *int64, w *Window) {
	m.mu.Lock()
	defer m.mu.Unlock()
	g, ok := m.series[l.service()]
	if !ok || g.labels != l {
		vals := l.values()
		// Label names sorted: client_id, cluster, guest_type, node, service_id, vmid.
		g = &guestSeries{labels: l, vals: vals, key: [6]string{vals[5], vals[0], vals[4], vals[1], vals[3], vals[2]}}
		m.series[l.service()] = g
		m.order = nil
	}
	set := func(f int, x *int64) {
		g.known[f] = x != nil
		if x != nil {
			g.values[f] = float64(*x)
		}
	}
	set(0, swap)
	set(1, limit)
	if w != nil {
		set(2, &w.Avg)
		set(3, &w.Max)
	} else {
		set(2, nil)
		set(3, nil)
	}
}

func (m *GuestMetrics) deleteLocked(k models.ServiceKey) {
	delete(m.series, k)
	m.order = nil
}

// RetainNode removes the series of the node's guests whose service is not in keep (stopped,
// gone, moved away, no longer managed). A nil keep removes every series of the node.
func (m *GuestMetrics) RetainNode(cluster, node string, keep map[models.ServiceKey]bool) []models.ServiceKey {
	m.mu.Lock()
	defer m.mu.Unlock()
	var gone []models.ServiceKey
	for id, g := range m.series {
		if g.labels.Cluster == cluster && g.labels.Node == node && !keep[id] {
			m.deleteLocked(id)
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
	for id, g := range m.series {
		if g.labels.Cluster == cluster && !nodes[g.labels.Node] {
			m.deleteLocked(id)
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
	// OpenReconciliationStats counts the operations an operator must look at (R58) and when
	// the oldest of them ended.
	OpenReconciliationStats(ctx context.Context) (int64, time.Time, error)
}

// reconciliationCollector reads the number of services needing reconciliation at scrape time,
// from the database only (a scrape never calls Proxmox). When the database does not answer the
// series is absent, not 0.
type reconciliationCollector struct {
	db   StateCounter
	desc *prometheus.Desc
	// open and oldest are the open reconciliations and the age of the oldest (R58).
	open, oldest *prometheus.Desc
}

// NewReconciliationGauge registers pvebill_services_needs_reconciliation on reg: the services
// whose operation failed at or after an irreversible stage and wait for an operator (R28).
func NewReconciliationGauge(reg prometheus.Registerer, db StateCounter) {
	reg.MustRegister(&reconciliationCollector{db: db, desc: prometheus.NewDesc("pvebill_services_needs_reconciliation",
		"Services in needs_reconciliation: an operator must resolve them through the admin API.", nil, nil),
		open: prometheus.NewDesc("pvebill_reconciliations_open",
			"Operations in needs_reconciliation whose service still waits for an operator (GET /v1/admin/reconciliations).", nil, nil),
		oldest: prometheus.NewDesc("pvebill_reconciliations_open_oldest_seconds",
			"Age of the oldest open reconciliation (0 when there is none).", nil, nil)})
}

func (c *reconciliationCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.desc
	ch <- c.open
	ch <- c.oldest
}

func (c *reconciliationCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	n, err := c.db.CountServicesInState(ctx, "needs_reconciliation")
	if err != nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n))
	open, oldest, err := c.db.OpenReconciliationStats(ctx)
	if err != nil {
		return
	}
	age := 0.0
	if !oldest.IsZero() {
		age = max(time.Since(oldest).Seconds(), 0)
	}
	ch <- prometheus.MustNewConstMetric(c.open, prometheus.GaugeValue, float64(open))
	ch <- prometheus.MustNewConstMetric(c.oldest, prometheus.GaugeValue, age)
}
