package provision_test

import (
	"context"
	"testing"
	"time"

	"pvebill/models"
	"pvebill/models/dbtest"
	"pvebill/modules/backups"
	"pvebill/modules/executor"
	"pvebill/modules/pve/pvesim"
	"pvebill/modules/pve/pvesim/simtest"
	"pvebill/modules/stack/stacktest/poll"
)

// R42: a backup window leaves workers for customers. A replica with two workers and
// backup_workers 1 has backups queued for guests on two nodes (so the node gates would let two
// run at once) and then a create: the create succeeds while the first vzdump is still running,
// and the simulator's task log shows no two vzdumps running at once on any node, nor did the
// operations table ever show two backups running.
func TestBackupWorkersLeaveAWorkerForCustomers(t *testing.T) {
	for _, dialect := range dbtest.Dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			e := newEnv(t, dialect, nil, nil)
			e.backupPlans()
			// Created at once, the guests are spread over the nodes (creates in flight count).
			ids := []string{"bw-1", "bw-2", "bw-3", "bw-4"}
			var creates []*models.Operation
			for _, id := range ids {
				req := ctReq(id)
				req.Plan = "ct-bk"
				op, _, err := e.svc.Create(t.Context(), "whmcs", req)
				if err != nil {
					t.Fatal(err)
				}
				creates = append(creates, op)
			}
			byNode := map[string][]string{}
			for i, op := range creates {
				e.mustSucceed(op, nil)
				node := e.service(ids[i]).Node
				byNode[node] = append(byNode[node], ids[i])
			}
			order := backupOrder(t, byNode)
			stopCtx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			e.exec.Stop(stopCtx)
			cancel()
			st := e.Replica(executor.Config{Owner: "capped", Workers: 2, LongWorkers: 1, Lease: 5 * time.Second,
				PollInterval: 20 * time.Millisecond})
			// A vzdump runs until the simulator's clock is moved past it (watchBackups does): the
			// create below runs while the first one still does, however long the create takes.
			e.sim.SetTaskDuration("vzdump", time.Hour)
			for _, id := range order {
				if _, err := st.Backups.Backup(t.Context(), "whmcs", id, backups.BackupRequest{}); err != nil {
					t.Fatal(err)
				}
			}
			st.Exec.Kick()
			waitVzdumpStarted(t, e.sim)
			claimRounds(t, st.Exec) // the other worker looks for work: it would take the second node's backup now
			req := ctReq("bw-customer")
			op, _, err := st.Provisioner.Create(t.Context(), "whmcs", req)
			if err != nil {
				t.Fatal(err)
			}
			st.Exec.Kick()
			ctx, cancelWait := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancelWait()
			got, err := executor.WaitTerminal(ctx, e.db, st.Exec.Broker(), op.ID, 20*time.Millisecond)
			if err != nil || got.State != models.OpSucceeded {
				t.Fatalf("create: %v %+v", err, got)
			}
			for _, r := range e.sim.Vzdumps() {
				if !r.End.IsZero() {
					t.Fatalf("the create waited for a vzdump to end: %+v", e.sim.Vzdumps())
				}
			}
			most := watchBackups(t, e.db, e.sim)
			if most != 1 {
				t.Fatalf("%d backups ran at once on the replica, cap 1", most)
			}
			runs := e.sim.Vzdumps()
			if len(runs) != len(order) || anyOverlap(runs) {
				t.Fatalf("vzdumps ran at once or went missing: %+v", runs)
			}
			for id, list := range backupOps(t, e.db) {
				if list[0].State != models.OpSucceeded {
					t.Fatalf("%s: %s %s", id, list[0].State, deref(list[0].ErrorCode))
				}
			}
		})
	}
}

// backupOrder puts a guest of each of two nodes first, then the rest.
func backupOrder(t *testing.T, byNode map[string][]string) []string {
	t.Helper()
	var first, rest []string
	for _, ids := range byNode {
		first, rest = append(first, ids[0]), append(rest, ids[1:]...)
	}
	if len(first) < 2 {
		t.Fatalf("the guests share one node: %v", byNode)
	}
	return append(first, rest...)
}

func waitVzdumpStarted(t *testing.T, sim *simtest.Server) {
	t.Helper()
	poll.Until(t, 10*time.Second, "a vzdump started", func() bool { return len(sim.Vzdumps()) > 0 })
}

// watchBackups waits for the backups to end, sampling how many run at once, and returns the
// most it saw. Each vzdump it finds running it ends by moving the simulator's clock an hour on.
func watchBackups(t *testing.T, db *models.DB, sim *simtest.Server) int64 {
	t.Helper()
	var most int64
	poll.Until(t, 30*time.Second, "the backups to end", func() bool {
		running := dbtest.Count(t, db, "SELECT COUNT(*) FROM operations WHERE action = ? AND state = ?", backups.ActionBackup, models.OpRunning)
		most = max(most, running)
		for _, r := range sim.Vzdumps() {
			if r.End.IsZero() {
				sim.Advance(time.Hour)
				break
			}
		}
		return openBackups(t, db) == 0
	})
	return most
}

// claimRounds waits until x's workers have looked for work again, at least once after this call
// (executor.FreshRound): whatever they could have taken by now, they have taken.
func claimRounds(t *testing.T, x *executor.Executor) {
	t.Helper()
	until := x.FreshRound()
	poll.Until(t, 10*time.Second, "the workers to look for work again", func() bool { return x.ClaimRounds() >= until })
}

// anyOverlap reports whether two vzdumps, on any nodes, ran at the same time.
func anyOverlap(runs []pvesim.VzdumpRun) bool {
	for i, a := range runs {
		for _, b := range runs[i+1:] {
			if b.Start.Before(a.End) && a.Start.Before(b.End) {
				return true
			}
		}
	}
	return false
}

// openBackups counts the backup operations queued or running.
func openBackups(t *testing.T, db *models.DB) int64 {
	t.Helper()
	return dbtest.Count(t, db, "SELECT COUNT(*) FROM operations WHERE action = ? AND state IN (?, ?)", backups.ActionBackup,
		models.OpQueued, models.OpRunning)
}
