package provision_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"pvebill/i18n"
	"pvebill/models"
	"pvebill/models/dbtest"
	"pvebill/modules/backups"
	"pvebill/modules/plans"
	"pvebill/modules/pve/pvesim"
	"pvebill/modules/stack/stacktest"
)

// backupPlans adds ct-bk (a container plan keeping two backups on local, deleted on
// terminate) and vm-bk (a VM plan keeping two, kept on terminate, stop mode), saved through
// the plan service so that their backup storage is checked against the simulator.
func (e *env) backupPlans() {
	e.t.Helper()
	ctx := context.Background()
	specs := stacktest.Plans()
	ct, vm := specs[0], specs[2]
	ct.BackupStorage, ct.BackupsMax, ct.BackupSchedule = "local", new(2), "0 3 * * *"
	vm.BackupStorage, vm.BackupsMax, vm.BackupMode, vm.BackupsOnTerminate = "local", new(2), plans.BackupStop, plans.BackupsKeep
	for code, spec := range map[string]plans.Spec{"ct-bk": ct, "vm-bk": vm} {
		spec.Code = code
		if _, _, err := e.plans.Put(ctx, code, spec); err != nil {
			e.t.Fatalf("plan %s: %v", code, err)
		}
	}
}

// backup runs one backup to its end (the simulator's clock moved on by two seconds first, so
// that each archive has its own name) and returns the operation.
func (e *env) backup(serviceID string) *models.Operation {
	e.t.Helper()
	e.sim.Advance(2 * time.Second)
	op, err := e.Stack.Backups.Backup(context.Background(), "whmcs", serviceID, backups.BackupRequest{})
	if err != nil {
		e.t.Fatalf("backup: %v", err)
	}
	return e.wait(op)
}

func (e *env) backupIDs(serviceID string) []string {
	e.t.Helper()
	list, err := e.Stack.Backups.Backups(context.Background(), "whmcs", serviceID)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, b := range list {
		out = append(out, b.ID)
	}
	return out
}

// R42: a backup sends vzdump to the guest's node with remove=0, the plan's mode, zstd, the
// plan's storage and the service's stamp as notes; the new archive is verified and named in
// the result; at backups_max the oldest unprotected backup goes, and only after the new one
// was listed (the delete comes after the verifying listing in the simulator's log).
func TestBackupRotatesAfterVerify(t *testing.T) {
	for _, dialect := range dbtest.Dialects(t) {
		for _, kind := range []struct{ name, plan, subtype, mode string }{
			{"container", "ct-bk", "lxc", "snapshot"}, {"vm", "vm-bk", "qemu", "stop"}} {
			t.Run(dialect+"/"+kind.name, func(t *testing.T) {
				e := newEnv(t, dialect, nil, nil)
				e.backupPlans()
				req := ctReq("svc-bk")
				if kind.name == "vm" {
					req = vmReq("svc-bk", kind.plan)
				}
				req.Plan = kind.plan
				e.create(req)
				testBackupRotation(t, e, kind.subtype, kind.mode)
			})
		}
	}
}

func testBackupRotation(t *testing.T, e *env, subtype, mode string) {
	svc := e.service("svc-bk")
	vmid := *svc.VMID
	var made []string
	for i := 0; i < 3; i++ {
		n := len(e.sim.Requests())
		op := e.backup("svc-bk")
		if op.State != models.OpSucceeded {
			t.Fatalf("backup %d: %s %s %s %s", i, op.State, deref(op.ErrorCode), deref(op.ErrorDetail), deref(op.Result))
		}
		res := resultOf(t, op)
		b, _ := res["backup"].(map[string]any)
		id, _ := b["id"].(string)
		if !strings.HasPrefix(id, fmt.Sprintf("vzdump-%s-%d-", subtype, vmid)) || b["size_bytes"].(float64) <= 0 {
			t.Fatalf("backup %d result %v", i, res)
		}
		made = append(made, id)
		log := e.sim.Requests()[n:]
		dumps := filterReq(log, "POST", "/vzdump")
		if len(dumps) != 1 {
			t.Fatalf("backup %d sent %d vzdumps", i, len(dumps))
		}
		f := dumps[0].Form
		want := map[string]string{"vmid": fmt.Sprint(vmid), "remove": "0", "mode": mode, "compress": "zstd",
			"storage": "local", "notes-template": `pvebill-service: whmcs/svc-bk\npvebill-backup: manual`}
		for k, v := range want {
			if f.Get(k) != v {
				t.Fatalf("vzdump %s=%q, want %q (form %v)", k, f.Get(k), v, f)
			}
		}
		if dumps[0].Path != "/nodes/"+svc.Node+"/vzdump" {
			t.Fatalf("vzdump sent to %s, guest on %s", dumps[0].Path, svc.Node)
		}
		deletes := filterReq(log, "DELETE", "")
		if i < 2 && len(deletes) != 0 {
			t.Fatalf("backup %d below the limit deleted %v", i, deletes)
		}
		if i == 2 {
			if len(deletes) != 1 || !strings.HasSuffix(deletes[0].Path, made[0]) {
				t.Fatalf("rotation deleted %v, want only %s", deletes, made[0])
			}
			// The delete comes after a listing that showed the new archive.
			lastList := lastIndex(log, func(r pvesim.Request) bool { return r.Method == "GET" && strings.HasSuffix(r.Path, "/content") })
			if del := slices.IndexFunc(log, func(r pvesim.Request) bool { return r.Method == "DELETE" }); del < lastList || lastList < 0 {
				t.Fatalf("the delete (%d) came before the verifying listing (%d)", del, lastList)
			}
		}
	}
	if got := e.backupIDs("svc-bk"); !slices.Equal(got, made[1:]) {
		t.Fatalf("kept %v, want %v", got, made[1:])
	}
	// backup_bytes and the gauge are the sum of the kept archives' sizes on the simulator.
	var want int64
	for _, id := range made[1:] {
		want += e.sim.VolumeSize("local", "backup/"+id)
	}
	key := e.service("svc-bk").ID
	got, err := e.db.ServiceBackupBytes(t.Context(), []int64{key})
	if err != nil || got[key] != want || want <= 0 {
		t.Fatalf("recorded backup bytes %v (%v), want %d", got, err, want)
	}
	if g, ok := backupGauge(t, e, "svc-bk"); !ok || g != float64(want) {
		t.Fatalf("gauge %v %v, want %d", g, ok, want)
	}
}

// backupGauge reads pvebill_service_backup_bytes{service_id}.
func backupGauge(t *testing.T, e *env, serviceID string) (float64, bool) {
	t.Helper()
	mfs, err := e.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "pvebill_service_backup_bytes" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "service_id" && l.GetValue() == serviceID {
					return m.GetGauge().GetValue(), true
				}
			}
		}
	}
	return 0, false
}

func filterReq(log []pvesim.Request, method, suffix string) []pvesim.Request {
	var out []pvesim.Request
	for _, r := range log {
		if r.Method == method && strings.HasSuffix(r.Path, suffix) {
			out = append(out, r)
		}
	}
	return out
}

func lastIndex(log []pvesim.Request, f func(pvesim.Request) bool) int {
	for i := len(log) - 1; i >= 0; i-- {
		if f(log[i]) {
			return i
		}
	}
	return -1
}

// R42: rotation skips protected backups; when as many backups as backups_max are protected
// the backup is backup_limit_reached at once: no operation is written, the request's one
// Proxmox read is the service's list and no vzdump is sent. A protected backup cannot be
// deleted (backup_protected), and a backup id naming a foreign or unstamped archive is not
// found, with nothing deleted.
func TestBackupLimitAndProtected(t *testing.T) {
	for _, dialect := range dbtest.Dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			e := newEnv(t, dialect, nil, nil)
			e.backupPlans()
			req := ctReq("svc-bp")
			req.Plan = "ct-bk"
			e.create(req)
			vmid := *e.service("svc-bp").VMID
			first := e.backup("svc-bp")
			second := e.backup("svc-bp")
			ids := e.backupIDs("svc-bp")
			if first.State != models.OpSucceeded || second.State != models.OpSucceeded || len(ids) != 2 {
				t.Fatalf("backups %s %s, listed %v", first.State, second.State, ids)
			}
			for _, id := range ids {
				e.sim.SetVolumeProtected("local", "backup/"+id, true, "pvebill-service: whmcs/svc-bp")
			}
			n := len(e.sim.Requests())
			ops := e.operationCount()
			op, err := e.Stack.Backups.Backup(t.Context(), "whmcs", "svc-bp", backups.BackupRequest{})
			if op != nil || !isCode(err, i18n.CodeBackupLimitReached, http.StatusConflict) {
				t.Fatalf("backup at the limit: %v %v", op, err)
			}
			if got := e.sim.Requests()[n:]; len(got) != 1 || got[0].Method != "GET" || !strings.HasSuffix(got[0].Path, "/storage/local/content") {
				t.Fatalf("a backup at the limit sent %v, want one read of the list", got)
			}
			if e.operationCount() != ops {
				t.Fatal("a backup at the limit wrote an operation")
			}
			op, err = e.Stack.Backups.DeleteBackup(t.Context(), "whmcs", "svc-bp", ids[0])
			if op != nil || !isCode(err, i18n.CodeBackupProtected, http.StatusConflict) {
				t.Fatalf("delete of a protected backup: %v", err)
			}
			// Foreign (another service's stamp, the same vmid) and unstamped archives.
			foreign := fmt.Sprintf("vzdump-lxc-%d-2020_01_01-00_00_00.tar.zst", vmid)
			bare := fmt.Sprintf("vzdump-lxc-%d-2020_01_02-00_00_00.tar.zst", vmid)
			e.sim.AddVolume("local", "backup/"+foreign, 1<<20, "backup")
			e.sim.SetVolumeProtected("local", "backup/"+foreign, false, "pvebill-service: other/svc-bp")
			e.sim.AddVolume("local", "backup/"+bare, 1<<20, "backup")
			for _, id := range []string{foreign, bare, "../../images/x", "local:backup/" + bare} {
				_, err := e.Stack.Backups.DeleteBackup(t.Context(), "whmcs", "svc-bp", id)
				if !isCode(err, i18n.CodeNotFound, http.StatusNotFound) {
					t.Fatalf("delete %s: %v", id, err)
				}
			}
			if got := filterReq(e.sim.Requests()[n:], "DELETE", ""); len(got) != 0 {
				t.Fatalf("deletes sent: %v", got)
			}
			if got := e.backupIDs("svc-bp"); !slices.Equal(got, ids) {
				t.Fatalf("listed %v, want only the service's %v", got, ids)
			}
		})
	}
}

func isCode(err error, code i18n.Code, status int) bool { return stacktest.IsCode(err, code, status) }

// R42: a plan without a backup storage refuses a backup (capability_refused) before an
// operation is written.
func TestBackupRefusedWithoutBackupStorage(t *testing.T) {
	e := newEnv(t, "sqlite", nil, nil)
	e.create(ctReq("svc-nb"))
	_, err := e.Stack.Backups.Backup(t.Context(), "whmcs", "svc-nb", backups.BackupRequest{})
	if !isCode(err, i18n.CodeCapabilityRefused, http.StatusConflict) {
		t.Fatalf("backup on a plan without backups: %v", err)
	}
	if _, err := e.Stack.Backups.Backups(t.Context(), "whmcs", "svc-nb"); !isCode(err, i18n.CodeCapabilityRefused, http.StatusConflict) {
		t.Fatalf("list on a plan without backups: %v", err)
	}
}

// R42: terminate deletes the service's stamped backups after the destroy when the plan says
// delete, and keeps them when it says keep; a foreign and an unstamped archive of the same
// vmid are never touched (the simulator's log holds no request naming them).
func TestTerminateBackups(t *testing.T) {
	for _, dialect := range dbtest.Dialects(t) {
		for _, kind := range []struct {
			name, plan string
			deleted    bool
		}{{"delete", "ct-bk", true}, {"keep", "vm-bk", false}} {
			t.Run(dialect+"/"+kind.name, func(t *testing.T) {
				e := newEnv(t, dialect, nil, nil)
				e.backupPlans()
				req := ctReq("svc-tb")
				if kind.plan == "vm-bk" {
					req = vmReq("svc-tb", kind.plan)
				}
				req.Plan = kind.plan
				e.create(req)
				testTerminateBackups(t, e, kind.deleted)
			})
		}
	}
}

func testTerminateBackups(t *testing.T, e *env, deleted bool) {
	vmid := *e.service("svc-tb").VMID
	sub := "lxc"
	if e.service("svc-tb").GuestType == "vm" {
		sub = "qemu"
	}
	e.backup("svc-tb")
	e.backup("svc-tb")
	ours := e.backupIDs("svc-tb")
	foreign := fmt.Sprintf("backup/vzdump-%s-%d-2020_01_01-00_00_00.tar.zst", sub, vmid)
	bare := fmt.Sprintf("backup/vzdump-%s-%d-2020_01_02-00_00_00.tar.zst", sub, vmid)
	e.sim.AddVolume("local", foreign, 1<<20, "backup")
	e.sim.SetVolumeProtected("local", foreign, false, "pvebill-service: someone-else")
	e.sim.AddVolume("local", bare, 1<<20, "backup")
	n := len(e.sim.Requests())
	op, err := e.svc.Terminate(t.Context(), "whmcs", "svc-tb")
	e.mustSucceed(op, err)
	log := e.sim.Requests()[n:]
	destroyAt := slices.IndexFunc(log, func(r pvesim.Request) bool {
		return r.Method == "DELETE" && strings.HasSuffix(r.Path, "/"+fmt.Sprint(vmid))
	})
	var volDeletes []string
	for i, r := range log {
		if r.Method == "DELETE" && strings.Contains(r.Path, "/content/") {
			if i < destroyAt {
				t.Fatalf("a backup was deleted before the destroy: %s", r.Path)
			}
			volDeletes = append(volDeletes, r.Path[strings.LastIndex(r.Path, "/")+1:])
		}
		if strings.Contains(r.Path, "2020_01_0") {
			t.Fatalf("a foreign or unstamped archive was touched: %s %s", r.Method, r.Path)
		}
	}
	slices.Sort(volDeletes)
	left := e.sim.Volumes("local")
	if deleted {
		if !slices.Equal(volDeletes, ours) {
			t.Fatalf("terminate deleted %v, want %v", volDeletes, ours)
		}
	} else if len(volDeletes) != 0 {
		t.Fatalf("keep deleted %v", volDeletes)
	}
	for _, id := range ours {
		if slices.Contains(left, "backup/"+id) == deleted {
			t.Fatalf("backup %s present=%v after terminate (plan deletes=%v)", id, !deleted, deleted)
		}
	}
	if !slices.Contains(left, foreign) || !slices.Contains(left, bare) {
		t.Fatalf("foreign or unstamped archive gone: %v", left)
	}
	// The gauge of a terminated service stays while it has backups kept, and goes with them.
	if _, ok := backupGauge(t, e, "svc-tb"); ok == deleted {
		t.Fatalf("gauge present=%v after terminate (plan deletes=%v)", ok, deleted)
	}
}

// operationCount is how many operations the database holds.
func (e *env) operationCount() int64 { return e.Operations() }

// R42: a backup delete is an operation backup_delete (precheck, delete, record); the request
// reads the list once and sends nothing else. Once it has succeeded, backup_bytes is the
// remaining backup's size to the byte, even when a listing read before the delete is recorded
// after it.
func TestBackupDeleteOperation(t *testing.T) {
	for _, dialect := range dbtest.Dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			e := newEnv(t, dialect, nil, nil)
			e.backupPlans()
			req := ctReq("svc-bd")
			req.Plan = "ct-bk"
			e.create(req)
			svc := e.service("svc-bd")
			older := fmt.Sprintf("vzdump-lxc-%d-2026_01_01-00_00_00.tar.zst", *svc.VMID)
			newer := fmt.Sprintf("vzdump-lxc-%d-2026_01_02-00_00_00.tar.zst", *svc.VMID)
			for id, size := range map[string]int64{older: 169623552, newer: 162754560} {
				e.sim.AddVolume("local", "backup/"+id, size, "backup")
				e.sim.SetVolumeProtected("local", "backup/"+id, false, "pvebill-service: whmcs/svc-bd")
			}
			ctx := t.Context()
			if got := e.backupIDs("svc-bd"); !slices.Equal(got, []string{older, newer}) {
				t.Fatalf("listed %v", got)
			}
			if b := backupBytes(t, e, svc.ID); b != 332378112 {
				t.Fatalf("backup_bytes before the delete: %d", b)
			}
			readBefore := time.Now()
			n := len(e.sim.Requests())
			op, err := e.Stack.Backups.DeleteBackup(ctx, "whmcs", "svc-bd", older)
			if err != nil || op.Action != "backup_delete" {
				t.Fatalf("delete: %v %v", op, err)
			}
			if got := e.sim.Requests()[n:]; len(got) != 1 || got[0].Method != "GET" {
				t.Fatalf("the delete request sent %v, want one read of the list", got)
			}
			op = e.wait(op)
			if op.State != models.OpSucceeded || op.Stage != "record_backups" {
				t.Fatalf("backup_delete %s at %s: %s %s %s", op.State, op.Stage, deref(op.ErrorCode), deref(op.ErrorDetail), e.logs.String())
			}
			if dels := filterReq(e.sim.Requests()[n:], "DELETE", ""); len(dels) != 1 || !strings.Contains(dels[0].Path, older) {
				t.Fatalf("deletes sent: %v", dels)
			}
			if b := backupBytes(t, e, svc.ID); b != 162754560 {
				t.Fatalf("backup_bytes after the delete: %d, want 162754560", b)
			}
			// A listing read before the delete and written after it leaves the figure alone.
			if err := e.db.RecordServiceBackups(ctx, svc.ID, 2, 332378112, readBefore); err != nil {
				t.Fatal(err)
			}
			if b := backupBytes(t, e, svc.ID); b != 162754560 {
				t.Fatalf("a stale listing brought backup_bytes back to %d", b)
			}
			// A delete whose answer is lost after Proxmox did the work (a proxy's 596): the
			// archive is gone from the list, so the delete is done and its size is gone too.
			again := fmt.Sprintf("vzdump-lxc-%d-2026_01_03-00_00_00.tar.zst", *svc.VMID)
			e.sim.AddVolume("local", "backup/"+again, 169623552, "backup")
			e.sim.SetVolumeProtected("local", "backup/"+again, false, "pvebill-service: whmcs/svc-bd")
			if got := e.backupIDs("svc-bd"); !slices.Equal(got, []string{newer, again}) {
				t.Fatalf("listed %v", got)
			}
			if b := backupBytes(t, e, svc.ID); b != 332378112 {
				t.Fatalf("backup_bytes with two again: %d", b)
			}
			e.sim.InjectFault(pvesim.Fault{Method: "DELETE", PathPattern: `/nodes/[^/]+/storage/local/content/.+`, Nth: 1, After: true,
				Status: 596, Message: "Connection timed out"})
			op, err = e.Stack.Backups.DeleteBackup(ctx, "whmcs", "svc-bd", again)
			if err != nil {
				t.Fatal(err)
			}
			if op = e.wait(op); op.State != models.OpSucceeded {
				t.Fatalf("a delete whose answer was lost: %s at %s: %s", op.State, op.Stage, deref(op.ErrorCode))
			}
			if b := backupBytes(t, e, svc.ID); b != 162754560 {
				t.Fatalf("backup_bytes after a delete whose answer was lost: %d, want 162754560", b)
			}
		})
	}
}

func backupBytes(t *testing.T, e *env, svc int64) int64 {
	t.Helper()
	m, err := e.db.ServiceBackupBytes(t.Context(), []int64{svc})
	if err != nil {
		t.Fatal(err)
	}
	return m[svc]
}

// R42, docs/api.md Backups: a backup's note is kept in the archive's notes after the stamp
// line and the line naming its kind, sent as vzdump's one-line notes-template (a backslash
// doubled, newlines as \n); the list reads both back (manual for a backup asked for, scheduled
// for one the schedule queued; an archive from before kinds is manual without a note). A note
// of two lines or over 200 characters is 422 on the field note, with no operation written.
func TestBackupNoteAndKind(t *testing.T) {
	e := newEnv(t, "sqlite", nil, nil)
	e.backupPlans()
	req := ctReq("svc-nk")
	req.Plan = "ct-bk"
	e.create(req)
	ctx := t.Context()
	vmid := *e.service("svc-nk").VMID
	old := fmt.Sprintf("vzdump-lxc-%d-2020_01_01-00_00_00.tar.zst", vmid)
	e.sim.AddVolume("local", "backup/"+old, 1<<20, "backup")
	e.sim.SetVolumeProtected("local", "backup/"+old, false, "pvebill-service: whmcs/svc-nk")

	ops := e.operationCount()
	for _, bad := range []string{"two\nlines", "tab\there", strings.Repeat("é", 201)} {
		if op, err := e.Stack.Backups.Backup(ctx, "whmcs", "svc-nk", backups.BackupRequest{Note: &bad}); op != nil ||
			!isCode(err, i18n.CodeValidationFailed, http.StatusUnprocessableEntity) || !strings.Contains(err.Error(), "note") {
			t.Fatalf("note %q: %v %v", bad, op, err)
		}
	}
	if e.operationCount() != ops {
		t.Fatal("a refused note wrote an operation")
	}
	note := `before the upgrade \n is not a newline; "quoted" ` + strings.Repeat("ü", 150)
	n := len(e.sim.Requests())
	e.sim.Advance(2 * time.Second)
	op, err := e.Stack.Backups.Backup(ctx, "whmcs", "svc-nk", backups.BackupRequest{Note: &note})
	if err != nil {
		t.Fatal(err)
	}
	e.wait(op)
	dumps := filterReq(e.sim.Requests()[n:], "POST", "/vzdump")
	want := `pvebill-service: whmcs/svc-nk\npvebill-backup: manual\nbefore the upgrade \\n is not a newline; "quoted" ` + strings.Repeat("ü", 150)
	if len(dumps) != 1 || dumps[0].Form.Get("notes-template") != want {
		t.Fatalf("vzdump notes-template %q, want %q", dumps[0].Form.Get("notes-template"), want)
	}
	kindsAndNotes := func(want [][2]string) {
		t.Helper()
		list, err := e.Stack.Backups.Backups(ctx, "whmcs", "svc-nk")
		if err != nil {
			t.Fatal(err)
		}
		got := [][2]string{}
		for _, b := range list {
			got = append(got, [2]string{b.Kind, b.Note})
		}
		if !slices.Equal(got, want) {
			t.Fatalf("kinds and notes %q, want %q", got, want)
		}
	}
	kindsAndNotes([][2]string{{"manual", ""}, {"manual", note}})
	p, err := e.plans.Get(ctx, "ct-bk")
	if err != nil {
		t.Fatal(err)
	}
	e.sim.Advance(2 * time.Second)
	if w, err := e.Stack.Backups.PlanBackups(ctx, p, time.Now()); err != nil || w.Planned != 1 {
		t.Fatalf("window: %+v %v", w, err)
	}
	e.waitLatest("svc-nk", backups.ActionBackup)
	// The old archive was rotated out at backups_max 2.
	kindsAndNotes([][2]string{{"manual", note}, {"scheduled", ""}})
}
