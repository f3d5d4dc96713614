package models

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// RegisterMetrics registers the database layer's metrics with reg: the transaction retries
// (shared by the process) and, per configured database node, whether it is the one in use and
// whether it was ready at the last probe (R51).
func (db *DB) RegisterMetrics(reg prometheus.Registerer) {
	// Every retryable error number is exported from the start (at 0), so that the first give-up
	// is an increase an alert sees rather than a new series.
	for _, code := range []string{strconv.Itoa(errDeadlock), strconv.Itoa(errLockWaitTimeout), strconv.Itoa(errWsrepNotReady)} {
		txRetries.WithLabelValues(code)
		txRetriesExhausted.WithLabelValues(code)
	}
	reg.MustRegister(txRetries, txRetriesExhausted, &nodeCollector{db: db,
		inUse: prometheus.NewDesc("pvebill_database_node_in_use",
			"1 for the database node this replica's new connections go to, 0 for the other configured nodes.", []string{"node"}, nil),
		ready: prometheus.NewDesc("pvebill_database_node_ready",
			"1 when the database node was reachable, wsrep_ready=ON and Synced (or without Galera) at the last probe.", []string{"node"}, nil),
	})
}

type nodeCollector struct {
	db           *DB
	inUse, ready *prometheus.Desc
}

// Describe implements prometheus.Collector.
func (c *nodeCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.inUse; ch <- c.ready }

// Collect implements prometheus.Collector.
func (c *nodeCollector) Collect(ch chan<- prometheus.Metric) {
	for _, n := range c.db.Nodes() {
		ch <- prometheus.MustNewConstMetric(c.inUse, prometheus.GaugeValue, b2f(n.InUse), n.Addr)
		ch <- prometheus.MustNewConstMetric(c.ready, prometheus.GaugeValue, b2f(n.Ready), n.Addr)
	}
}

func b2f(b bool) float64 { //nolint:revive // a conversion for a gauge, not a control flag
	if b {
		return 1
	}
	return 0
}
