package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"pvebill/jobs"
	"pvebill/models"
	"pvebill/models/dbtest"
	"pvebill/modules/executor"
	"pvebill/modules/kinds"
	"pvebill/modules/plans"
	"pvebill/modules/pve"
	"pvebill/modules/pve/pvesim"
	wiring "pvebill/modules/stack"
)

// backupPlan is a container plan whose services keep two backups on local, backed up daily.
func backupPlan() plans.Spec {
	p := benchPlans()[0]
	p.Code, p.BackupStorage, p.BackupsMax, p.BackupSchedule = "ct-bk", "local", new(2), "0 3 * * *"
	return p
}

// replica is one pvebill replica over db and pc with specs imported, its executor (owner,
// workers, claim poll) started until the test ends.
func replica(t *testing.T, db *models.DB, pc *pve.Client, owner string, workers int, poll time.Duration,
	specs []plans.Spec) *wiring.Stack {
	t.Helper()
	st := wiring.New(wiring.Options{DB: db, Log: slog.New(slog.NewJSONHandler(io.Discard, nil)), Metrics: prometheus.NewRegistry(),
		Kinds: wiring.Kinds(), Clusters: []kinds.Cluster{{Name: "default", Client: pc}},
		Executor: executor.Config{Owner: owner, Workers: workers, Lease: 30 * time.Second, PollInterval: poll}})
	if _, err := st.Plans.Import(context.Background(), specs, plans.SourceFile); err != nil {
		t.Fatal(err)
	}
	st.Exec.Start(context.Background())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		st.Exec.Stop(ctx)
	})
	return st
}

// backupReplica is one pvebill replica of the backup scenario: its stack with workers started.
func backupReplica(t *testing.T, db *models.DB, pc *pve.Client, owner string, workers int) *wiring.Stack {
	t.Helper()
	return replica(t, db, pc, owner, workers, 200*time.Millisecond, []plans.Spec{benchPlans()[0], backupPlan()})
}

// seedBackupGuests puts n stamped running containers on the nodes in turn, each with two older
// stamped backups and, for the first of each node, an unstamped archive of its vmid, and writes
// their service rows. It returns the guests per node.
func seedBackupGuests(t *testing.T, sim *pvesim.Sim, db *models.DB, nodes []string, n int) map[string]int {
	t.Helper()
	perNode := map[string]int{}
	rows := make([]models.Service, 0, n)
	for i := range n {
		vmid, id, node := 1000+i, fmt.Sprintf("bk-%05d", i), nodes[i%len(nodes)]
		stamp := kinds.Guest{ClientID: billingID, ServiceID: id}
		if err := sim.SeedGuest(pvesim.Guest{VMID: vmid, Type: "lxc", Node: node, Running: true, Config: map[string]string{
			"hostname": "web-" + id, "description": kinds.StampDescription(stamp), "memory": "512", "cores": "1", "ostype": "debian",
			"rootfs": fmt.Sprintf("local-lvm:vm-%d-disk-0,size=8G", vmid)}}); err != nil {
			t.Fatal(err)
		}
		for _, day := range []string{"2026_01_01", "2026_01_02"} {
			name := fmt.Sprintf("backup/vzdump-lxc-%d-%s-02_00_00.tar.zst", vmid, day)
			sim.AddVolumeOn(node, "local", name, 200<<20, "backup")
			sim.SetVolumeProtected("local", name, false, kinds.StampLine(stamp))
		}
		if perNode[node] == 0 {
			sim.AddVolumeOn(node, "local", fmt.Sprintf("backup/vzdump-lxc-%d-2025_12_31-02_00_00.tar.zst", vmid), 100<<20, "backup")
		}
		perNode[node]++
		v := vmid
		rows = append(rows, models.Service{ServiceID: id, ClientID: billingID, Plan: "ct-bk", GuestType: string(plans.Container), Cluster: "default",
			Node: node, VMID: &v, Hostname: "web-" + id, State: models.ServiceActive, CreatedAt: time.Now(), UpdatedAt: time.Now()})
	}
	dbtest.Insert(t, db, &rows, 200)
	return perNode
}

// backupsLeft counts, over the guests, those whose archives after the window are not exactly
// the new one and the newer of the two older ones (a backup lost, or one too many kept), and
// the unstamped archives gone.
func backupsLeft(sim *pvesim.Sim, n int) (wrong, unstampedGone, newOnes int) {
	byVMID := map[int][]string{}
	for _, v := range sim.Volumes("local") {
		var vmid int
		if _, err := fmt.Sscanf(v, "backup/vzdump-lxc-%d-", &vmid); err == nil {
			byVMID[vmid] = append(byVMID[vmid], v)
		}
	}
	unstamped := 0
	for i := range n {
		vmid := 1000 + i
		var kept, fresh int
		for _, v := range byVMID[vmid] {
			switch {
			case strings.Contains(v, "-2025_12_31-"):
				unstamped++
			case strings.Contains(v, "-2026_01_02-"):
				kept++
			case !strings.Contains(v, "-2026_01_01-"):
				fresh++
			default:
				kept += 10 // the oldest should have been rotated out
			}
		}
		newOnes += fresh
		if kept != 1 || fresh != 1 {
			wrong++
		}
	}
	return wrong, 4 - unstamped, newOnes
}

// scheduledBackups is scenario 9 (R42): the scheduled backups of guests spread over four
// nodes, planned by the schedule job of one of two replicas on one database, run by both
// replicas' executors: every guest backed up once, never two vzdumps on one node at once (the
// simulator's vzdump log), the window's end against the bound (each node's backups back to
// back: the guests on the busiest node times the vzdump time), and no backup lost by rotation.
func scheduledBackups(t *testing.T, rep *Report) {
	const sc = "9 backups"
	guests := scale(1000, 40)
	per := scale(time.Second, 20*time.Millisecond)
	sim := provSim(t, 4, 0)
	sim.SetTaskDuration("vzdump", per)
	hs := httptest.NewServer(sim)
	t.Cleanup(hs.Close)
	pc, err := pve.New(pve.Config{Cluster: "default", URL: hs.URL, TokenID: tokenID, TokenSecret: tokenSecret}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pc.Close)
	db := openDB(t, dialect(t))
	a, b := backupReplica(t, db, pc, "bench-a", 8), backupReplica(t, db, pc, "bench-b", 8)
	_ = b
	perNode := seedBackupGuests(t, sim, db, []string{"node01", "node02", "node03", "node04"}, guests)
	clock := time.Date(2026, 3, 1, 2, 0, 0, 0, time.Local)
	job := jobs.BackupSchedule{Plans: a.Plans, Backups: a.Backups, DB: db, Owner: "bench-a", Kick: a.Exec.Kick,
		Log: slog.New(slog.NewJSONHandler(io.Discard, nil)), Now: func() time.Time { return clock }}
	if err := job.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	clock = time.Date(2026, 3, 1, 3, 0, 1, 0, time.Local)
	start := time.Now()
	if err := job.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	b.Exec.Kick()
	ok, failed := waitBackupOps(t, db, guests)
	elapsed := time.Since(start)
	busiest := 0
	for _, n := range perNode {
		busiest = max(busiest, n)
	}
	bound := time.Duration(busiest) * per
	runs := sim.Vzdumps()
	wrong, unstampedGone, fresh := backupsLeft(sim, guests)
	rep.info(sc, "guests", float64(guests), "", fmt.Sprintf("4 nodes, vzdump %v a guest, two replicas of 8 workers", per))
	rep.target(sc, "backups succeeded", float64(ok), "", "==", float64(guests), true, fmt.Sprintf("%d failed", failed))
	rep.target(sc, "vzdump tasks", float64(len(runs)), "", "==", float64(guests), true, "one per guest per window")
	rep.target(sc, "new archives", float64(fresh), "", "==", float64(guests), true, "every guest once")
	rep.target(sc, "overlapping vzdumps on one node", float64(pvesim.VzdumpOverlaps(runs)), "", "==", 0, true, "simulator's vzdump log")
	rep.target(sc, "backups lost or kept wrongly by rotation", float64(wrong+unstampedGone), "", "==", 0, true,
		"backups_max 2: the new one and the newer old one kept, unstamped archives untouched")
	rep.info(sc, "window", elapsed.Seconds(), "s", fmt.Sprintf("bound %.1f s: %d guests on the busiest node", bound.Seconds(), busiest))
	rep.target(sc, "window / bound", elapsed.Seconds()/bound.Seconds(), "x", "<=", 1.2, false, "")
}

// waitBackupOps waits for n backup operations to end and counts how they ended.
func waitBackupOps(t *testing.T, db *models.DB, n int) (ok, failed int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Minute)
	for time.Now().Before(deadline) {
		var rows []struct {
			State string
			N     int
		}
		dbtest.Scan(t, db, &rows, "SELECT state, COUNT(*) AS n FROM operations WHERE action = ? GROUP BY state", "backup")
		ok, failed = 0, 0
		for _, r := range rows {
			switch r.State {
			case models.OpSucceeded:
				ok = r.N
			case models.OpFailed, models.OpNeedsReconciliation:
				failed += r.N
			}
		}
		if ok+failed >= n {
			return ok, failed
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("scheduled backups did not end")
	return 0, 0
}
