package rdns

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"pvebill/models"
)

// Metrics are reverse DNS's series (R55): the attempts at PowerDNS by action and outcome, and,
// read from the database at each scrape, the records by status and the age of the oldest change
// PowerDNS does not have yet (an alert fires when it passes an hour).
type Metrics struct {
	attempts *prometheus.CounterVec
}

// NewMetrics registers the series on reg; db feeds the gauges (none while it does not answer).
func NewMetrics(reg prometheus.Registerer, db *models.DB, now func() time.Time) *Metrics {
	if now == nil {
		now = time.Now
	}
	m := &Metrics{attempts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pvebill_rdns_attempts_total",
		Help: "Attempts to write a PTR record change to PowerDNS, by action (set, delete) and result (synced, pending: not reached, failed: refused)."},
		[]string{"action", "result"})}
	reg.MustRegister(m.attempts, &recordsCollector{db: db, now: now,
		records: prometheus.NewDesc("pvebill_rdns_records",
			"Reverse DNS records by status: pending (not yet in PowerDNS), synced, failed (refused by PowerDNS).", []string{"status"}, nil),
		oldest: prometheus.NewDesc("pvebill_rdns_oldest_unsynced_seconds",
			"Age of the oldest reverse DNS change PowerDNS does not have yet (pending or failed); 0 when none.", nil, nil)})
	return m
}

func (m *Metrics) attempted(action, result string) {
	if m != nil {
		m.attempts.WithLabelValues(action, result).Inc()
	}
}

type recordsCollector struct {
	db              *models.DB
	now             func() time.Time
	records, oldest *prometheus.Desc
}

func (c *recordsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.records; ch <- c.oldest }

func (c *recordsCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	counts, err := c.db.CountRDNS(ctx)
	if err != nil {
		return
	}
	for _, st := range []string{models.RDNSPending, models.RDNSSynced, models.RDNSFailed} {
		ch <- prometheus.MustNewConstMetric(c.records, prometheus.GaugeValue, float64(counts.ByStatus[st]), st)
	}
	age := 0.0
	if !counts.OldestUnsynced.IsZero() {
		age = max(0, c.now().Sub(counts.OldestUnsynced).Seconds())
	}
	ch <- prometheus.MustNewConstMetric(c.oldest, prometheus.GaugeValue, age)
}
