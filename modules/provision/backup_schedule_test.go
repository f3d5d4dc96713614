package provision_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"pvebill/modules/backups"
	"pvebill/modules/stack/stacktest"
	"pvebill/modules/stack/stacktest/poll"

	"github.com/prometheus/client_golang/prometheus"

	"pvebill/jobs"
	"pvebill/models"
	"pvebill/models/dbtest"
	"pvebill/modules/provision"
	"pvebill/modules/pve/pvesim"
	"pvebill/modules/stack"
)

// replica is a second pvebill on the environment's database and simulator: its own plan
// service, provisioner, executor (started) and metrics.
func (e *env) replica(owner string) *stack.Stack {
	e.t.Helper()
	return e.Replica(stacktest.Executor(owner))
}

// scheduler is the backup schedule job of a provisioner, on a clock the test sets.
func scheduler(e *env, pl *backups.Service, st *stack.Stack, owner string, clock *time.Time) jobs.BackupSchedule {
	b := jobs.BackupSchedule{Backups: pl, DB: e.db, Owner: owner, Log: slog.New(slog.NewJSONHandler(io.MultiWriter(e.logs), nil)),
		Now: func() time.Time { return *clock }}
	if st != nil {
		b.Plans, b.Kick = st.Plans, st.Exec.Kick
	} else {
		b.Plans, b.Kick = e.plans, e.exec.Kick
	}
	return b
}

// backupOps lists the backup operations of the services, by service id.
func backupOps(t *testing.T, db *models.DB) map[string][]models.Operation {
	t.Helper()
	var ops []models.Operation
	dbtest.Scan(t, db, &ops, "SELECT * FROM operations WHERE action = ? ORDER BY created_at, id", backups.ActionBackup)
	out := map[string][]models.Operation{}
	for _, op := range ops {
		out[op.ServiceID] = append(out[op.ServiceID], op)
	}
	return out
}

// waitBackups waits until no backup operation is queued or running.
func waitBackups(t *testing.T, db *models.DB) {
	t.Helper()
	poll.Until(t, 20*time.Second, "no backup open", func() bool { return openBackups(t, db) == 0 })
}

// scheduledCount is pvebill_scheduled_backups_total{result}.
func scheduledCount(t *testing.T, reg *prometheus.Registry, result string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "pvebill_scheduled_backups_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			if m.GetLabel()[0].GetValue() == result {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// R42: a plan's scheduled window is planned once even with two replicas on one database
// running the schedule job at the same moment; an active and a suspended service each get one
// backup operation (and one archive), a terminated one none; a later round of the same window
// plans nothing; a window both replicas were down through is reported missed (metric and log)
// and not run late, and the next window runs as usual.
func TestScheduledBackupsPlannedOnceAcrossReplicas(t *testing.T) {
	for _, dialect := range dbtest.Dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			e := newEnv(t, dialect, nil, nil)
			e.backupPlans()
			for _, id := range []string{"sch-active", "sch-suspended", "sch-gone"} {
				req := ctReq(id)
				req.Plan = "ct-bk"
				e.create(req)
			}
			e.mustSucceed(e.svc.Suspend(context.Background(), "whmcs", "sch-suspended", provision.SuspendRequest{}))
			e.mustSucceed(e.svc.Terminate(context.Background(), "whmcs", "sch-gone"))
			other := e.replica("test-2")
			clock := time.Date(2026, 3, 1, 1, 0, 0, 0, time.Local)
			a, b := scheduler(e, e.Stack.Backups, nil, "test", &clock), scheduler(e, other.Backups, other, "test-2", &clock)
			both := func() {
				var wg sync.WaitGroup
				for _, j := range []jobs.BackupSchedule{a, b} {
					wg.Add(1)
					go func() {
						defer wg.Done()
						if err := j.Run(context.Background()); err != nil {
							t.Error(err)
						}
					}()
				}
				wg.Wait()
			}
			both() // first sight of the plan: nothing planned
			if n := len(backupOps(t, e.db)); n != 0 {
				t.Fatalf("first round planned %d services", n)
			}
			clock = time.Date(2026, 3, 1, 3, 0, 30, 0, time.Local)
			both()
			both()
			waitBackups(t, e.db)
			ops := backupOps(t, e.db)
			if len(ops["sch-active"]) != 1 || len(ops["sch-suspended"]) != 1 || len(ops["sch-gone"]) != 0 || len(ops) != 2 {
				t.Fatalf("window planned %v", ops)
			}
			for id, list := range ops {
				if list[0].State != models.OpSucceeded || !strings.Contains(list[0].Payload, fmt.Sprint(clock.Add(-30*time.Second).Unix())) {
					t.Fatalf("%s: %s %s %s", id, list[0].State, deref(list[0].ErrorCode), list[0].Payload)
				}
				if got := e.backupIDs(id); len(got) != 1 {
					t.Fatalf("%s has backups %v", id, got)
				}
			}
			planned := scheduledCount(t, e.reg, "planned") + scheduledCount(t, other.Metrics, "planned")
			if planned != 2 {
				t.Fatalf("planned counted %v", planned)
			}
			// Both replicas down from 02:00 to 05:00 the next day: the 03:00 window is missed.
			clock = time.Date(2026, 3, 2, 5, 0, 0, 0, time.Local)
			both()
			if n := len(backupOps(t, e.db)["sch-active"]); n != 1 {
				t.Fatalf("a missed window ran late: %d backups", n)
			}
			missed := scheduledCount(t, e.reg, "missed") + scheduledCount(t, other.Metrics, "missed")
			if missed != 2 || !strings.Contains(e.logs.String(), "scheduled backup window missed") {
				t.Fatalf("missed counted %v", missed)
			}
			clock = time.Date(2026, 3, 3, 3, 0, 5, 0, time.Local)
			e.sim.Advance(2 * time.Second)
			both()
			waitBackups(t, e.db)
			if n := len(backupOps(t, e.db)["sch-active"]); n != 2 {
				t.Fatalf("next window: %d backups", n)
			}
			if ok := scheduledCount(t, e.reg, "succeeded") + scheduledCount(t, other.Metrics, "succeeded"); ok != 4 {
				t.Fatalf("succeeded counted %v", ok)
			}
		})
	}
}

// R42: backups queued at once on two replicas run one vzdump per node at a time: the
// simulator's vzdump log has no two tasks of one node overlapping, every guest is backed up;
// while the nodes' gates are held nothing starts and the queue gauge counts every backup.
func TestBackupsOneVzdumpPerNode(t *testing.T) {
	for _, dialect := range dbtest.Dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			e := newEnv(t, dialect, nil, nil)
			e.backupPlans()
			ids := []string{"gate-1", "gate-2", "gate-3", "gate-4", "gate-5", "gate-6"}
			for _, id := range ids {
				req := ctReq(id)
				req.Plan = "ct-bk"
				e.create(req)
			}
			other := e.replica("test-2")
			e.sim.SetTaskDuration("vzdump", 150*time.Millisecond)
			// The nodes' gates are held while the backups are queued (as by backups queued
			// earlier), so the queue gauge sees all of them; then they are let go at once.
			perNode := map[string]int{}
			for _, id := range ids {
				perNode[e.service(id).Node]++
			}
			for node := range perNode {
				dbtest.Exec(t, e.db, "INSERT INTO operation_gates (gate, operation_id, updated_at) VALUES (?, ?, ?)",
					backups.BackupGate("default", node), "held-by-test", time.Now())
			}
			for _, id := range ids {
				if _, err := e.Stack.Backups.Backup(t.Context(), "whmcs", id, backups.BackupRequest{}); err != nil {
					t.Fatal(err)
				}
			}
			// The workers of both replicas look for work: none may start one.
			claimRounds(t, e.exec)
			claimRounds(t, other.Exec)
			if n := dbtest.Count(t, e.db, "SELECT COUNT(*) FROM operations WHERE action = ? AND state <> ?", backups.ActionBackup, models.OpQueued); n != 0 {
				t.Fatalf("%d backups left the queue while their node's gate was held", n)
			}
			queued := queueGauge(t, e.reg)
			for node, n := range perNode {
				if queued[node] != n {
					t.Fatalf("queue gauge %v, want %v", queued, perNode)
				}
			}
			if len(e.sim.Vzdumps()) != 0 {
				t.Fatal("a backup ran while its node's gate was held")
			}
			dbtest.Exec(t, e.db, "UPDATE operation_gates SET operation_id = NULL WHERE operation_id = ?", "held-by-test")
			e.exec.Kick()
			waitBackups(t, e.db)
			runs := e.sim.Vzdumps()
			if len(runs) != len(ids) {
				t.Fatalf("%d vzdumps for %d guests", len(runs), len(ids))
			}
			if n := pvesim.VzdumpOverlaps(runs); n != 0 {
				t.Fatalf("%d overlapping vzdumps on one node: %+v", n, runs)
			}
			for id, list := range backupOps(t, e.db) {
				if list[0].State != models.OpSucceeded {
					t.Fatalf("%s: %s %s", id, list[0].State, deref(list[0].ErrorCode))
				}
			}
			holders, err := e.db.GateHolders(t.Context())
			if err != nil || len(holders) != 0 {
				t.Fatalf("gates still held: %v %v", holders, err)
			}
		})
	}
}

// queueGauge reads pvebill_backup_queue_length by node.
func queueGauge(t *testing.T, reg *prometheus.Registry) map[string]int {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, mf := range mfs {
		if mf.GetName() != "pvebill_backup_queue_length" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "node" {
					out[l.GetValue()] = int(m.GetGauge().GetValue())
				}
			}
		}
	}
	return out
}

// R42: windows both replicas were down through are each one audit event
// (backup_window_missed, naming no service) with the plan, the window's time and the services
// it would have backed up, written once even though both replicas run the job at the same
// moment and again a round later; nothing is backed up late.
func TestMissedBackupWindowsAuditedOnce(t *testing.T) {
	for _, dialect := range dbtest.Dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			e := newEnv(t, dialect, nil, nil)
			e.backupPlans()
			for _, id := range []string{"miss-1", "miss-2", "miss-gone"} {
				req := ctReq(id)
				req.Plan = "ct-bk"
				e.create(req)
			}
			e.mustSucceed(e.svc.Terminate(context.Background(), "whmcs", "miss-gone"))
			other := e.replica("test-2")
			clock := time.Date(2026, 3, 1, 1, 0, 0, 0, time.Local)
			a, b := scheduler(e, e.Stack.Backups, nil, "test", &clock), scheduler(e, other.Backups, other, "test-2", &clock)
			both := func() {
				var wg sync.WaitGroup
				for _, j := range []jobs.BackupSchedule{a, b} {
					wg.Add(1)
					go func() {
						defer wg.Done()
						if err := j.Run(context.Background()); err != nil {
							t.Error(err)
						}
					}()
				}
				wg.Wait()
			}
			both() // first sight of the plan
			// Down from 02:00 on the 1st to 05:00 on the 4th: the four 03:00 windows are missed.
			clock = time.Date(2026, 3, 4, 5, 0, 0, 0, time.Local)
			both()
			both()
			var evs []models.AuditEvent
			dbtest.Scan(t, e.db, &evs, "SELECT * FROM audit_events WHERE event = ? ORDER BY id", backups.AuditBackupWindowMissed)
			var got []string
			for _, ev := range evs {
				if ev.Actor != "backup_schedule" || ev.ServiceID != "" || ev.ClientID != "" || ev.Detail == nil {
					t.Fatalf("event %+v", ev)
				}
				got = append(got, *ev.Detail)
			}
			var want []string
			for day := 1; day <= 4; day++ {
				w := time.Date(2026, 3, day, 3, 0, 0, 0, time.Local).UTC().Format(time.RFC3339)
				want = append(want, `{"plan":"ct-bk","window":"`+w+`","services":2}`)
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("audit events\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if n := len(backupOps(t, e.db)); n != 0 {
				t.Fatalf("missed windows ran late: %d services backed up", n)
			}
		})
	}
}
