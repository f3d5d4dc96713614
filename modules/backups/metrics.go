package backups

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"pvebill/models"
)

// BackupMetrics is the per-service gauge of backup bytes (R42),
//
//	pvebill_service_backup_bytes{cluster,service_id,guest_type,client_id}
//
// read from the recorded figures (service_backups) at each scrape, so that every replica
// exposes the same value whichever one ran the backup. Its labels are those of the
// per-guest series (R49): a service id and its client (service ids are per client, R46), never
// a value a request can invent. A terminated
// service's series goes once it has no backups left.
type BackupMetrics struct {
	db   *models.DB
	log  *slog.Logger
	desc *prometheus.Desc
}

// backupScrapeTimeout bounds the database read of one scrape.
const backupScrapeTimeout = 5 * time.Second

// NewBackupMetrics registers the gauge on reg.
func NewBackupMetrics(reg prometheus.Registerer, db *models.DB, log *slog.Logger) *BackupMetrics {
	m := &BackupMetrics{db: db, log: log, desc: prometheus.NewDesc("pvebill_service_backup_bytes",
		"Bytes of the service's backups when pvebill last listed them (R42).",
		[]string{"cluster", "service_id", "guest_type", "client_id"}, nil)}
	reg.MustRegister(m)
	return m
}

// Describe sends the gauge's description.
func (m *BackupMetrics) Describe(ch chan<- *prometheus.Desc) { ch <- m.desc }

// Collect reads the recorded figures; a failed read leaves the gauge out of this scrape.
func (m *BackupMetrics) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), backupScrapeTimeout)
	defer cancel()
	rows, err := m.db.BackupGauges(ctx)
	if err != nil {
		m.log.Warn("read backup bytes for metrics", "err", err)
		return
	}
	for _, r := range rows {
		ch <- prometheus.MustNewConstMetric(m.desc, prometheus.GaugeValue, float64(r.Bytes), r.Cluster, r.ServiceID, r.GuestType,
			r.ClientID)
	}
}

// Metrics are the backup flow's own series: scheduled backups by result (R42): planned,
// skipped, missed, succeeded, failed.
type Metrics struct {
	scheduled *prometheus.CounterVec
}

// NewMetrics registers the backup flow's metrics on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{scheduled: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pvebill_scheduled_backups_total",
		Help: "Scheduled backups by result: planned (queued), skipped (the service's backup still open), missed (the window passed while no replica planned it), succeeded, failed (R42)."},
		[]string{"result"})}
	for _, r := range scheduledResults {
		m.scheduled.WithLabelValues(r)
	}
	reg.MustRegister(m.scheduled)
	return m
}
