package reinstall_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"pvebill/i18n"
	"pvebill/models"
	"pvebill/models/dbtest"
	"pvebill/modules/backups"
	"pvebill/modules/kinds"
	"pvebill/modules/plans"
	"pvebill/modules/pve"
	"pvebill/modules/pve/pvesim"
	"pvebill/modules/pve/pvesim/simtest"
	"pvebill/modules/reinstall"
)

// addBackupPlan adds the container plan ct-b: 2 cores, 1024 MiB, 256 MiB swap, 8 GiB, backups
// on local.
func (e *env) addBackupPlan() {
	e.t.Helper()
	if _, err := e.plans.Import(context.Background(), []plans.Spec{{Code: "ct-b", Name: "ct-b",
		GuestTypes: []plans.GuestType{plans.Container}, Cluster: "default", Cores: new(2), MemoryMiB: new(1024),
		SwapMiB: new(256), DiskGiB: new(8), Storage: "local-lvm", Bridge: "vmbr0", BackupStorage: "local", BackupsMax: new(3),
		OS: plans.OSCatalog{Container: map[string]string{"debian-12": tmpl}}}}, plans.SourceFile); err != nil {
		e.t.Fatal(err)
	}
}

// backedUp seeds a running container of plan ct-b whose config says 4 cores, 4096 MiB memory
// and 1024 MiB swap (more than the plan pays for) and whose firewall is off, backs it up
// through the backup operation, and returns the backup's id. The guest's firewall is then put
// back on, so that only the archive carries the disabled one.
func (e *env) backedUp(id string, vmid int) string {
	e.t.Helper()
	e.addBackupPlan()
	e.seed(id, vmid, "ct-b", true, map[string]string{"cores": "4", "memory": "4096", "swap": "1024"})
	ctx := context.Background()
	fw := e.client.Node("pve1").LXC(vmid).Firewall()
	off, on := false, true
	if err := fw.SetOptions(ctx, pve.GuestFirewallOptionsUpdate{Enable: &off, IPFilter: &off}); err != nil {
		e.t.Fatal(err)
	}
	op, err := e.Stack.Backups.Backup(ctx, client, id, backups.BackupRequest{})
	if err != nil {
		e.t.Fatal(err)
	}
	if done := e.wait(op); done.State != models.OpSucceeded {
		e.t.Fatalf("backup %s %s", done.State, deref(done.ErrorCode))
	}
	if err := fw.SetOptions(ctx, pve.GuestFirewallOptionsUpdate{Enable: &on, IPFilter: &on}); err != nil {
		e.t.Fatal(err)
	}
	list, err := e.Stack.Backups.Backups(ctx, client, id)
	if err != nil || len(list) != 1 {
		e.t.Fatalf("backups %v %v", list, err)
	}
	return list[0].ID
}

// restorePreview runs a restore's phase 1 to its end and returns the intent read afterwards.
func (e *env) restorePreview(id, backupID string) *models.Intent {
	e.t.Helper()
	in, op, err := e.svc.RestorePreview(context.Background(), client, id, reinstall.RestorePreviewRequest{BackupID: backupID})
	if err != nil {
		e.t.Fatal(err)
	}
	if done := e.wait(op); done.State != models.OpSucceeded {
		e.t.Fatalf("restore preview ended %s %v", done.State, deref(done.ErrorCode))
	}
	got, err := e.svc.GetRestore(context.Background(), client, id, in.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	return got
}

func (e *env) applyRestore(id string, in *models.Intent) (*models.Operation, error) {
	op, _, err := e.svc.ApplyRestore(context.Background(), client, id, reinstall.RestoreApplyRequest{IntentID: in.ID,
		Confirmations: e.view(in).Confirmations})
	return op, err
}

// R43, R5, R9: a restore is previewed like a reinstall (labels, confirmations, blockers), and
// its apply stops the container and restores the archive over it in one create with restore=1,
// force=1 and the plan's cores, memory, swap and rootfs size — never the archive's, which said
// more — with the stamp, no separate destroy and no password; the archive's disabled firewall
// is switched on again with ipfilter after the restore; the container runs with the plan's
// resources. On SQLite and MariaDB.
func TestRestoreReplacesWithThePlansResources(t *testing.T) {
	for _, dialect := range dbtest.Dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			e := newEnv(t, dialect)
			backupID := e.backedUp("svc-r", 5001)
			e.resetLog()
			in := e.restorePreview("svc-r", backupID)
			v := e.view(in)
			if in.State != models.IntentPreviewReady || v.Kind != "restore" || v.BackupID != backupID || len(v.Blockers) != 0 {
				t.Fatalf("restore preview %s %+v", in.State, v)
			}
			if len(v.Mounts) != 1 || v.Mounts[0].Data != reinstall.Erased || v.Confirmations[0].Volume != "local-lvm:vm-5001-disk-0" {
				t.Fatalf("labels %+v confirmations %+v", v.Mounts, v.Confirmations)
			}
			for _, r := range e.sim.Requests() {
				if r.Method != "GET" {
					t.Fatalf("phase 1 sent %s %s", r.Method, r.Path)
				}
			}
			// A reinstall's latest intent is not the restore's.
			if _, err := e.svc.Get(t.Context(), client, "svc-r", in.ID); problemCode(err) != i18n.CodeNotFound {
				t.Fatalf("restore intent through the reinstall route: %v", err)
			}
			op, err := e.applyRestore("svc-r", in)
			if err != nil {
				t.Fatal(err)
			}
			if done := e.wait(op); done.State != models.OpSucceeded || done.Action != reinstall.ActionRestore {
				t.Fatalf("restore %s %s at %s: %s", done.Action, done.State, done.Stage, deref(done.ErrorCode))
			}
			creates := e.requests("POST", "/nodes/pve1/lxc")
			if len(creates) != 1 {
				t.Fatalf("%d creates", len(creates))
			}
			f := creates[0].Form
			want := map[string]string{"restore": "1", "force": "1", "ostemplate": "local:backup/" + backupID, "cores": "2",
				"memory": "1024", "swap": "256", "rootfs": "local-lvm:8", "unprivileged": "1", "tags": kinds.StampTag}
			for k, val := range want {
				if f.Get(k) != val {
					t.Errorf("create %s=%q, want %q", k, f.Get(k), val)
				}
			}
			if !kinds.HasStamp(f.Get("description"), kinds.Guest{ClientID: client, ServiceID: "svc-r"}) || f.Has("password") || f.Has("ssh-public-keys") {
				t.Errorf("create body %v", f)
			}
			if n := len(e.requests("DELETE", "/lxc/5001")); n != 0 {
				t.Fatalf("%d separate destroys", n)
			}
			checkFirewallAfter(t, e, "/nodes/pve1/lxc")
			ctx := t.Context()
			cfg, err := e.client.Node("pve1").LXC(5001).Config(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Cores.Int() != 2 || cfg.Memory.Int() != 1024 || cfg.Swap.Int() != 256 || !strings.Contains(cfg.RootFS, "size=8G") ||
				!kinds.HasStamp(cfg.Description, kinds.Guest{ClientID: client, ServiceID: "svc-r"}) {
				t.Fatalf("restored config cores %v memory %v swap %v rootfs %s", cfg.Cores, cfg.Memory, cfg.Swap, cfg.RootFS)
			}
			fw, err := e.client.Node("pve1").LXC(5001).Firewall().Options(ctx)
			if err != nil || fw.Enable == nil || !bool(*fw.Enable) || fw.IPFilter == nil || !bool(*fw.IPFilter) {
				t.Fatalf("firewall after restore %+v %v", fw, err)
			}
			if g, _ := e.sim.Guest(5001); g.Status != "running" {
				t.Fatal("restored container does not run")
			}
			if got := e.intentOf("svc-r"); got.State != models.IntentCompleted {
				t.Fatalf("intent %s", got.State)
			}
			if s := e.service("svc-r"); s.State != models.ServiceActive || s.LockOperationID != nil {
				t.Fatalf("service %s lock %v", s.State, s.LockOperationID)
			}
			simtest.Check(t, e.sim.Sim)
		})
	}
}

// checkFirewallAfter fails unless the firewall was switched on with ipfilter after the request
// to path (the archive's firewall file replaced the guest's in it).
func checkFirewallAfter(t *testing.T, e *env, path string) {
	t.Helper()
	seen := false
	for _, r := range e.sim.Requests() {
		if r.Method == "POST" && r.Path == path {
			seen = true
		}
		if seen && r.Method == "PUT" && strings.HasSuffix(r.Path, "/firewall/options") &&
			r.Form.Get("enable") == "1" && r.Form.Get("ipfilter") == "1" {
			return
		}
	}
	t.Fatal("the firewall was not switched on again after the restore")
}

func (e *env) intentOf(id string) *models.Intent {
	e.t.Helper()
	in, err := e.svc.GetRestore(context.Background(), client, id, "")
	if err != nil {
		e.t.Fatal(err)
	}
	return in
}

// R42, R43: only the service's own backups restore: a backup id naming another service's
// archive of the same vmid, an unstamped one, a name of the wrong shape or a volume id is 404
// before anything is written; a suspended service is service_suspended; a plan without backups
// is capability_refused.
func TestRestoreRefusesForeignBackups(t *testing.T) {
	e := newEnv(t, "sqlite")
	e.backedUp("svc-r", 5001)
	foreign := "vzdump-lxc-5001-2020_01_01-00_00_00.tar.zst"
	bare := "vzdump-lxc-5001-2020_01_02-00_00_00.tar.zst"
	e.sim.AddVolume("local", "backup/"+foreign, 1<<20, "backup")
	e.sim.SetVolumeProtected("local", "backup/"+foreign, false, kinds.StampDescription(kinds.Guest{ClientID: client, ServiceID: "svc-other"}))
	e.sim.AddVolume("local", "backup/"+bare, 1<<20, "backup")
	ctx := t.Context()
	var err error
	for _, id := range []string{foreign, bare, "local:backup/" + bare, "../" + bare} {
		_, _, err = e.svc.RestorePreview(ctx, client, "svc-r", reinstall.RestorePreviewRequest{BackupID: id})
		if problemCode(err) != i18n.CodeNotFound {
			t.Fatalf("%s: %v", id, err)
		}
	}
	e.seed("svc-plain", 5002, "ct-8", true, nil)
	_, _, err = e.svc.RestorePreview(ctx, client, "svc-plain", reinstall.RestorePreviewRequest{BackupID: bare})
	if problemCode(err) != i18n.CodeCapabilityRefused {
		t.Fatalf("plan without backups: %v", err)
	}
	// A suspended service is not restored: the restored guest would start (R16, R40).
	dbtest.Exec(t, e.db, "UPDATE services SET state = ? WHERE service_id = ?", models.ServiceSuspended, "svc-r")
	list, err := e.Stack.Backups.Backups(ctx, client, "svc-r")
	if err != nil || len(list) != 1 {
		t.Fatalf("backups %v %v", list, err)
	}
	_, _, err = e.svc.RestorePreview(ctx, client, "svc-r", reinstall.RestorePreviewRequest{BackupID: list[0].ID})
	if problemCode(err) != i18n.CodeServiceSuspended {
		t.Fatalf("restore of a suspended service: %v", err)
	}
	if n := dbtest.Count(t, e.db, "SELECT COUNT(*) FROM reinstall_intents"); n != 0 {
		t.Fatalf("%d intents written", n)
	}
}

// R43: the backup is looked up again when the restore runs: one deleted since the preview
// fails the run at its precheck, and nothing is sent that changes the guest.
func TestRestoreBackupReverifiedAtApply(t *testing.T) {
	e := newEnv(t, "sqlite")
	backupID := e.backedUp("svc-r", 5001)
	in := e.restorePreview("svc-r", backupID)
	del, err := e.Stack.Backups.DeleteBackup(t.Context(), client, "svc-r", backupID)
	if err != nil {
		t.Fatal(err)
	}
	if del = e.wait(del); del.State != models.OpSucceeded {
		t.Fatalf("backup_delete %s", del.State)
	}
	e.resetLog()
	op, err := e.applyRestore("svc-r", in)
	if err != nil {
		t.Fatal(err)
	}
	done := e.wait(op)
	if done.State != models.OpFailed || done.Stage != string(reinstall.StagePrecheck) || deref(done.ErrorCode) != string(i18n.CodeNotFound) {
		t.Fatalf("restore of a deleted backup %s at %s: %s", done.State, done.Stage, deref(done.ErrorCode))
	}
	for _, r := range e.sim.Requests() {
		if r.Method != "GET" {
			t.Fatalf("sent %s %s", r.Method, r.Path)
		}
	}
	if s := e.service("svc-r"); s.State != models.ServiceActive || s.LockOperationID != nil {
		t.Fatalf("service %s lock %v", s.State, s.LockOperationID)
	}
}

// R28, R43: a restore that fails after Proxmox destroyed the old volumes and before it unpacked
// the archive leaves no container; the run is needs_reconciliation at the restore stage with
// guest_existed false, the service locked. A fault before the restore call (the stop) fails
// and releases the lock with the container untouched.
func TestRestoreFaultBetweenDestroyAndUnpack(t *testing.T) {
	for _, dialect := range dbtest.Dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			e := newEnv(t, dialect)
			backupID := e.backedUp("svc-r", 5001)
			in := e.restorePreview("svc-r", backupID)
			e.sim.InjectFault(pvesim.Fault{Method: "POST", PathPattern: "/nodes/{node}/lxc", UnpackFail: "tar: short read"})
			op, err := e.applyRestore("svc-r", in)
			if err != nil {
				t.Fatal(err)
			}
			done := e.wait(op)
			if done.State != models.OpNeedsReconciliation || done.Stage != string(reinstall.StageRestore) {
				t.Fatalf("restore %s at %s: %s", done.State, done.Stage, deref(done.Result))
			}
			if _, ok := e.sim.Guest(5001); ok {
				t.Fatal("the container survived a restore that failed after destroying")
			}
			got := e.intentOf("svc-r")
			v := reinstall.ViewOf(got, "en")
			if got.State != models.IntentNeedsReconciliation || v.Reconciliation == nil || v.Reconciliation.FailedStage != "restore" ||
				v.Reconciliation.GuestExisted == nil || *v.Reconciliation.GuestExisted {
				t.Fatalf("intent %s %+v", got.State, v.Reconciliation)
			}
			s := e.service("svc-r")
			if s.State != models.ServiceNeedsReconciliation || s.LockOperationID == nil || *s.LockOperationID != op.ID {
				t.Fatalf("service %s lock %v", s.State, s.LockOperationID)
			}
			if _, _, err := e.svc.RestorePreview(t.Context(), client, "svc-r",
				reinstall.RestorePreviewRequest{BackupID: backupID}); problemCode(err) != i18n.CodeServiceLocked {
				t.Fatalf("restore while awaiting reconciliation: %v", err)
			}
		})
	}
	t.Run("stop", func(t *testing.T) {
		e := newEnv(t, "sqlite")
		backupID := e.backedUp("svc-r", 5001)
		in := e.restorePreview("svc-r", backupID)
		e.sim.InjectFault(pvesim.Fault{Method: "POST", PathPattern: "/nodes/{node}/lxc/{vmid}/status/stop", TaskFail: "lxc-stop failed"})
		op, err := e.applyRestore("svc-r", in)
		if err != nil {
			t.Fatal(err)
		}
		done := e.wait(op)
		if done.State != models.OpFailed || done.Stage != string(reinstall.StageStop) {
			t.Fatalf("restore %s at %s", done.State, done.Stage)
		}
		if s := e.service("svc-r"); s.State != models.ServiceActive || s.LockOperationID != nil {
			t.Fatalf("service %s lock %v", s.State, s.LockOperationID)
		}
		if n := len(e.requests("POST", "/nodes/pve1/lxc")); n != 0 {
			t.Fatalf("%d restore calls", n)
		}
	})
}

// R29, R43: of concurrent applies of one restore intent exactly one writes an operation; the
// others are refused. A restore preview made stale by a later reinstall preview
// is preview_stale, and a snapshot taken after the preview makes the apply stale too (R44).
func TestRestoreConcurrentAppliesAndStale(t *testing.T) {
	e := newEnv(t, "sqlite")
	backupID := e.backedUp("svc-r", 5001)
	in := e.restorePreview("svc-r", backupID)
	e.hold("svc-r")
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins, losers := 0, map[i18n.Code]int{}
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := e.applyRestore("svc-r", in)
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				wins++
			} else {
				losers[problemCode(err)]++
			}
		}()
	}
	wg.Wait()
	// A loser either lost the swap (reinstall_in_progress) or already saw the winner's queued
	// restore (blocked: backup_or_restore_running).
	if wins != 1 || losers[i18n.CodeReinstallInProgress]+losers[i18n.CodeBlocked] != 7 {
		t.Fatalf("wins %d losers %v", wins, losers)
	}
	if ops := dbtest.Count(t, e.db, "SELECT COUNT(*) FROM operations WHERE action = ?", reinstall.ActionRestore); ops != 1 {
		t.Fatalf("%d restore operations", ops)
	}

	e2 := newEnv(t, "sqlite")
	backupID = e2.backedUp("svc-s", 5003)
	old := e2.restorePreview("svc-s", backupID)
	e2.preview("svc-s")
	if _, err := e2.applyRestore("svc-s", old); problemCode(err) != i18n.CodePreviewStale {
		t.Fatalf("restore after a newer reinstall preview: %v", err)
	}
	fresh := e2.restorePreview("svc-s", backupID)
	if _, err := e2.client.Node("pve1").LXC(5003).Snapshots().Create(t.Context(),
		pve.SnapshotCreateRequest{SnapName: "before-upgrade"}); err != nil {
		t.Fatal(err)
	}
	op, err := e2.applyRestore("svc-s", fresh)
	if err != nil {
		t.Fatal(err)
	}
	if done := e2.wait(op); done.State != models.OpFailed || deref(done.ErrorCode) != string(i18n.CodePreviewStale) {
		t.Fatalf("restore after a new snapshot %s %s", done.State, deref(done.ErrorCode))
	}
	if n := len(e2.requests("POST", "/nodes/pve1/lxc")); n != 0 {
		t.Fatalf("%d restore calls", n)
	}
}

// R43, R5, R9 for a VM: the restore is qmrestore's API — the create with archive=, force=1, the
// plan's storage, cores and memory and the stamp, no drive — over the stopped VM; the archive
// said 4 cores and 8192 MiB, the VM reads back the plan's 2 and 2048 with a boot disk of the
// plan's size, its firewall (off in the archive) on again after the restore, running. On
// SQLite and MariaDB.
func TestVMRestore(t *testing.T) {
	for _, dialect := range dbtest.Dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			e := newEnv(t, dialect)
			if _, err := e.plans.Import(t.Context(), []plans.Spec{{Code: "vm-b", Name: "vm-b",
				GuestTypes: []plans.GuestType{plans.VM}, Cluster: "default", Cores: new(2), MemoryMiB: new(2048), DiskGiB: new(10),
				Storage: "local-lvm", Bridge: "vmbr0", BackupStorage: "local", BackupsMax: new(3),
				OS: plans.OSCatalog{VM: map[string]plans.VMTemplate{"debian-12": {VMID: 9000}}}}}, plans.SourceFile); err != nil {
				t.Fatal(err)
			}
			e.seedVM("svc-vm", 6001, true, map[string]string{"cores": "4", "memory": "8192"})
			dbtest.Exec(t, e.db, "UPDATE services SET plan = ? WHERE service_id = ?", "vm-b", "svc-vm")
			ctx := t.Context()
			off := false
			if err := e.client.Node("pve1").QEMU(6001).Firewall().SetOptions(ctx, pve.GuestFirewallOptionsUpdate{Enable: &off}); err != nil {
				t.Fatal(err)
			}
			op, err := e.Stack.Backups.Backup(ctx, client, "svc-vm", backups.BackupRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if done := e.wait(op); done.State != models.OpSucceeded {
				t.Fatalf("backup %s %s", done.State, deref(done.ErrorCode))
			}
			list, err := e.Stack.Backups.Backups(ctx, client, "svc-vm")
			if err != nil || len(list) != 1 {
				t.Fatalf("backups %v %v", list, err)
			}
			e.resetLog()
			in := e.restorePreview("svc-vm", list[0].ID)
			v := e.view(in)
			if v.Kind != "restore" || len(v.Blockers) != 0 || len(v.Disks) == 0 || v.Disks[0].Key != "scsi0" ||
				v.Disks[0].Data != reinstall.Erased || v.Disks[0].MountAfter != reinstall.Recreated {
				t.Fatalf("VM restore preview %+v", v)
			}
			op, err = e.applyRestore("svc-vm", in)
			if err != nil {
				t.Fatal(err)
			}
			if done := e.wait(op); done.State != models.OpSucceeded {
				t.Fatalf("VM restore %s at %s: %s %s", done.State, done.Stage, deref(done.ErrorCode), deref(done.Result))
			}
			creates := e.requests("POST", "/nodes/pve1/qemu")
			if len(creates) != 1 {
				t.Fatalf("%d restore calls", len(creates))
			}
			f := creates[0].Form
			for k, val := range map[string]string{"archive": "local:backup/" + list[0].ID, "force": "1", "storage": "local-lvm",
				"cores": "2", "memory": "2048", "tags": kinds.StampTag} {
				if f.Get(k) != val {
					t.Errorf("restore %s=%q, want %q", k, f.Get(k), val)
				}
			}
			if !kinds.HasStamp(f.Get("description"), kinds.Guest{ClientID: client, ServiceID: "svc-vm"}) || f.Has("scsi0") {
				t.Errorf("restore body %v", f)
			}
			if n := len(e.requests("DELETE", "/qemu/6001")); n != 0 {
				t.Fatalf("%d separate destroys", n)
			}
			checkFirewallOnAfter(t, e, "/nodes/pve1/qemu")
			cfg, err := e.client.Node("pve1").QEMU(6001).Config(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Cores.Int() != 2 || string(cfg.Memory) != "2048" || !strings.Contains(cfg.Disks["scsi0"], "size=10G") ||
				!kinds.HasStamp(cfg.Description, kinds.Guest{ClientID: client, ServiceID: "svc-vm"}) {
				t.Fatalf("restored VM cores %v memory %v scsi0 %s", cfg.Cores, cfg.Memory, cfg.Disks["scsi0"])
			}
			if g, _ := e.sim.Guest(6001); g.Status != "running" {
				t.Fatal("restored VM does not run")
			}
			simtest.Check(t, e.sim.Sim)
		})
	}
}

// checkFirewallOnAfter fails unless the firewall was switched on after the request to path.
func checkFirewallOnAfter(t *testing.T, e *env, path string) {
	t.Helper()
	seen := false
	for _, r := range e.sim.Requests() {
		if r.Method == "POST" && r.Path == path {
			seen = true
		}
		if seen && r.Method == "PUT" && strings.HasSuffix(r.Path, "/firewall/options") && r.Form.Get("enable") == "1" {
			return
		}
	}
	t.Fatal("the firewall was not switched on again after the restore")
}

// R43: a VM's restore preview labels as coming back exactly the drives the archive's config has
// (read with extractconfig, sending nothing else than GETs): a disk added after the backup is
// removed, and the restore then indeed leaves it out.
func TestVMRestorePreviewReadsTheArchive(t *testing.T) {
	for _, dialect := range dbtest.Dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			e := newEnv(t, dialect)
			if _, err := e.plans.Import(t.Context(), []plans.Spec{{Code: "vm-b", Name: "vm-b",
				GuestTypes: []plans.GuestType{plans.VM}, Cluster: "default", Cores: new(2), MemoryMiB: new(2048), DiskGiB: new(10),
				Storage: "local-lvm", Bridge: "vmbr0", BackupStorage: "local", BackupsMax: new(3),
				OS: plans.OSCatalog{VM: map[string]plans.VMTemplate{"debian-12": {VMID: 9000}}}}}, plans.SourceFile); err != nil {
				t.Fatal(err)
			}
			e.seedVM("svc-vm", 6001, false, nil)
			dbtest.Exec(t, e.db, "UPDATE services SET plan = ? WHERE service_id = ?", "vm-b", "svc-vm")
			ctx := t.Context()
			op, err := e.Stack.Backups.Backup(ctx, client, "svc-vm", backups.BackupRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if done := e.wait(op); done.State != models.OpSucceeded {
				t.Fatalf("backup %s %s", done.State, deref(done.ErrorCode))
			}
			list, err := e.Stack.Backups.Backups(ctx, client, "svc-vm")
			if err != nil || len(list) != 1 {
				t.Fatalf("backups %v %v", list, err)
			}
			q := e.client.Node("pve1").QEMU(6001)
			if err := q.UpdateConfig(ctx, pve.QEMUConfigUpdate{Disks: map[string]string{"scsi1": "local-lvm:1"}}); err != nil {
				t.Fatal(err)
			}
			e.resetLog()
			in := e.restorePreview("svc-vm", list[0].ID)
			after := map[string]reinstall.Mount{}
			for _, d := range e.view(in).Disks {
				after[d.Key] = d
			}
			if d := after["scsi0"]; d.Data != reinstall.Erased || d.MountAfter != reinstall.Recreated {
				t.Errorf("scsi0 %+v, want erased and coming back", d)
			}
			if d := after["scsi1"]; d.Key != "scsi1" || d.Data != reinstall.Erased || d.MountAfter != reinstall.Removed {
				t.Errorf("scsi1 %+v, want erased and removed", d)
			}
			checkOnlyReads(t, e, "/nodes/pve1/vzdump/extractconfig", "local:backup/"+list[0].ID)
			op, err = e.applyRestore("svc-vm", in)
			if err != nil {
				t.Fatal(err)
			}
			if done := e.wait(op); done.State != models.OpSucceeded {
				t.Fatalf("VM restore %s at %s: %s", done.State, done.Stage, deref(done.ErrorCode))
			}
			cfg, err := q.Config(ctx)
			if err != nil || cfg.Disks["scsi0"] == "" || cfg.Disks["scsi1"] != "" {
				t.Fatalf("restored VM drives %v %v", cfg.Disks, err)
			}
		})
	}
}

// checkOnlyReads fails unless the simulator's log since its reset holds one GET of path with
// volume=volid and nothing but GETs.
func checkOnlyReads(t *testing.T, e *env, path, volid string) {
	t.Helper()
	n := 0
	for _, r := range e.sim.Requests() {
		if r.Method != "GET" {
			t.Errorf("preview sent %s %s", r.Method, r.Path)
		}
		if r.Path == path {
			n++
			if r.Form.Get("volume") != volid {
				t.Errorf("extractconfig volume=%q, want %q", r.Form.Get("volume"), volid)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d GET %s, want 1", n, path)
	}
}
