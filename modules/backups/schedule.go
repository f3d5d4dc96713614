package backups

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"pvebill/i18n"
	"pvebill/models"
	"pvebill/modules/operation"
	"pvebill/modules/plans"
)

// Scheduled backups (R42): the schedule job plans a plan's window by queueing one backup
// operation per service that is due; the operations are the manual backup's own (stages,
// verification, rotation), and every backup names its node's gate, so the executors of all
// replicas run at most one vzdump per node at a time, in the order the backups were queued.

// Results of a scheduled backup, the closed label set of pvebill_scheduled_backups_total.
const (
	ScheduledPlanned   = "planned"
	ScheduledSkipped   = "skipped"
	ScheduledMissed    = "missed"
	ScheduledSucceeded = "succeeded"
	ScheduledFailed    = "failed"
)

var scheduledResults = []string{ScheduledPlanned, ScheduledSkipped, ScheduledMissed, ScheduledSucceeded, ScheduledFailed}

// backupPayload is a backup operation's payload: Scheduled is the Unix time of the window a
// scheduled backup belongs to, 0 for a backup asked for now; Note the client's note.
type backupPayload struct {
	Scheduled int64  `json:"scheduled,omitempty"`
	Note      string `json:"note,omitempty"`
}

// backupGatePrefix starts the gate of a node's vzdumps.
const backupGatePrefix = "vzdump:"

// BackupGate is the gate every backup of a guest on this node holds while it runs: one vzdump
// per node at a time, queued by pvebill rather than by Proxmox's lockwait (docs/proxmox.md §15).
func BackupGate(cluster, node string) string { return backupGatePrefix + cluster + "/" + node }

// enqueueBackup queues a backup of svc behind its node's gate.
func (s *Service) enqueueBackup(ctx context.Context, svc *models.Service, p backupPayload) (*models.Operation, error) {
	if svc.State == models.ServiceNeedsReconciliation {
		return nil, i18n.NewProblem(http.StatusConflict, i18n.CodeServiceLocked).Perm(i18n.Temporary)
	}
	if svc.State == models.ServiceTerminated || svc.State == models.ServiceFailed || svc.VMID == nil {
		return nil, operation.Missing()
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	gate := BackupGate(svc.Cluster, svc.Node)
	op := &models.Operation{ServiceID: svc.ServiceID, ClientID: svc.ClientID, Action: ActionBackup, Payload: string(raw), Gate: &gate}
	if err := s.db.InsertOperation(ctx, op); err != nil {
		return nil, fmt.Errorf("write backup operation: %w", err)
	}
	return op, nil
}

// Window is what planning one window of a plan's backup schedule did.
type Window struct {
	Planned int
	Skipped int
}

// PlanBackups queues the scheduled backups of a plan's window at: one backup operation for
// each service on the plan that holds a guest and is not terminated (a suspended or limited
// service is backed up too); a service whose previous backup is still queued or running is
// skipped, so a window that overruns the next never doubles a backup. The caller, which has
// read the plan, makes sure a window is planned once (jobs.BackupSchedule).
func (s *Service) PlanBackups(ctx context.Context, p plans.Plan, at time.Time) (Window, error) {
	if !p.HasBackups() {
		return Window{}, nil
	}
	svcs, err := s.db.BackupCandidates(ctx, p.Code)
	if err != nil {
		return Window{}, err
	}
	open, err := s.db.OpenActions(ctx, ActionBackup)
	if err != nil {
		return Window{}, err
	}
	var w Window
	for i := range svcs {
		if open[svcs[i].Key()] {
			w.Skipped++
			continue
		}
		if _, err := s.enqueueBackup(ctx, &svcs[i], backupPayload{Scheduled: at.Unix()}); err != nil {
			return w, err
		}
		w.Planned++
	}
	s.metrics.scheduled.WithLabelValues(ScheduledPlanned).Add(float64(w.Planned))
	s.metrics.scheduled.WithLabelValues(ScheduledSkipped).Add(float64(w.Skipped))
	return w, nil
}

// AuditBackupWindowMissed is the audit event of a scheduled backup window that no replica
// planned in time; it names no service, and its detail is a MissedWindow.
const AuditBackupWindowMissed = "backup_window_missed"

// auditActorSchedule is the actor of the schedule's audit events.
const auditActorSchedule = "backup_schedule"

// MissedWindow is the detail of a backup_window_missed audit event: the plan, the window's
// time and how many services the window would have backed up (the plan's services that hold a
// guest when the miss is found).
type MissedWindow struct {
	Plan     string    `json:"plan"`
	Window   time.Time `json:"window"`
	Services int       `json:"services"`
}

// MissedBackups reports the windows of the plan that no replica planned in time (pvebill was
// down through them): the services they would have backed up are counted as missed and logged,
// and each window is one audit event. The windows are not run late, so the next one does not
// back a service up twice. The caller reports a window once across replicas
// (jobs.BackupSchedule claims it first).
func (s *Service) MissedBackups(ctx context.Context, plan string, windows []time.Time) (int, error) {
	if len(windows) == 0 {
		return 0, nil
	}
	svcs, err := s.db.BackupCandidates(ctx, plan)
	if err != nil {
		return 0, err
	}
	n := len(svcs) * len(windows)
	s.metrics.scheduled.WithLabelValues(ScheduledMissed).Add(float64(n))
	s.log.Warn("scheduled backup window missed", "plan", plan, "window", windows[0].UTC().Format(time.RFC3339),
		"windows", len(windows), "backups", n)
	evs := make([]models.AuditEvent, len(windows))
	for i, w := range windows {
		raw, err := json.Marshal(MissedWindow{Plan: plan, Window: w.UTC(), Services: len(svcs)})
		if err != nil {
			return n, err
		}
		d := string(raw)
		evs[i] = models.AuditEvent{At: models.Now(), Actor: auditActorSchedule, Event: AuditBackupWindowMissed, Detail: &d}
	}
	if err := s.db.InsertAudits(ctx, evs); err != nil {
		return n, fmt.Errorf("audit missed backup windows: %w", err)
	}
	return n, nil
}

// countScheduled counts a scheduled backup's end.
func (s *Service) countScheduled(err error) {
	if err != nil {
		s.metrics.scheduled.WithLabelValues(ScheduledFailed).Inc()
		return
	}
	s.metrics.scheduled.WithLabelValues(ScheduledSucceeded).Inc()
}

// BackupQueueMetrics is the gauge of backups waiting for their node's gate,
//
//	pvebill_backup_queue_length{cluster,node}
//
// read from the operations table at each scrape, so every replica shows the fleet's queue. A
// node appears when it is configured (0 until backups queue there) or once a backup was queued
// on it: labels from a closed set, the clusters' nodes (R49).
type BackupQueueMetrics struct {
	db    *models.DB
	log   *slog.Logger
	desc  *prometheus.Desc
	nodes map[string]bool // gates of the configured nodes
}

// NewBackupQueueMetrics registers the gauge on reg; nodes are the configured nodes by cluster.
func NewBackupQueueMetrics(reg prometheus.Registerer, db *models.DB, log *slog.Logger, nodes map[string][]string) *BackupQueueMetrics {
	m := &BackupQueueMetrics{db: db, log: log, desc: prometheus.NewDesc("pvebill_backup_queue_length",
		"Backups queued behind their node's one-vzdump-at-a-time gate (R42).", []string{"cluster", "node"}, nil),
		nodes: map[string]bool{}}
	for cluster, ns := range nodes {
		for _, n := range ns {
			m.nodes[BackupGate(cluster, n)] = true
		}
	}
	reg.MustRegister(m)
	return m
}

// Describe sends the gauge's description.
func (m *BackupQueueMetrics) Describe(ch chan<- *prometheus.Desc) { ch <- m.desc }

// Collect reads the queue lengths; a failed read leaves the gauge out of this scrape.
func (m *BackupQueueMetrics) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), backupScrapeTimeout)
	defer cancel()
	rows, err := m.db.GateQueues(ctx)
	if err != nil {
		m.log.Warn("read backup queues for metrics", "err", err)
		return
	}
	queued := make(map[string]int, len(m.nodes)+len(rows))
	for g := range m.nodes {
		queued[g] = 0
	}
	for _, r := range rows {
		queued[r.Gate] = r.Queued
	}
	for g, n := range queued {
		rest, ok := strings.CutPrefix(g, backupGatePrefix)
		cluster, node, ok2 := strings.Cut(rest, "/")
		if !ok || !ok2 {
			continue
		}
		ch <- prometheus.MustNewConstMetric(m.desc, prometheus.GaugeValue, float64(n), cluster, node)
	}
}
