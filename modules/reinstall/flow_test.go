package reinstall_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"pvebill/models"
	"pvebill/models/dbtest"
	"pvebill/modules/reinstall"
)

// everyForm is a container config with a mount of every form (R19–R21).
var everyForm = map[string]string{
	"rootfs":  "local-lvm:vm-5001-disk-0,size=8G",
	"mp0":     "/srv/shared,mp=/mnt/shared",
	"mp1":     "local-lvm:vm-6002-disk-1,mp=/data",
	"mp2":     "local:5001/vm-5001-disk-2.raw,mp=/dir,backup=1,size=2G",
	"mp3":     "local-zfs:subvol-5001-disk-3,mp=/zfs,size=1G",
	"mp4":     "/dev/sdb1,mp=/mnt/disk",
	"mp5":     "local-zfs:base-100-disk-0/subvol-5001-disk-5,mp=/clone,size=1G",
	"unused0": "local-lvm:vm-5001-disk-9",
	"unused1": "local-lvm:vm-7003-disk-0",
}

// R18–R21: the preview labels every form and sends nothing but GET requests.
func TestPreviewLabelsEveryFormAndOnlyReads(t *testing.T) {
	e := newEnv(t, "sqlite")
	e.seed("svc-forms", 5001, "ct-8", true, everyForm)
	if err := e.sim.SetConfig(5001, "mp6", "local-lvm:not-a-volume-name,mp=/junk"); err != nil {
		t.Fatal(err)
	}
	e.resetLog()
	in := e.preview("svc-forms")
	for _, r := range e.sim.Requests() {
		if r.Method != "GET" {
			t.Errorf("phase 1 sent %s %s", r.Method, r.Path)
		}
	}
	if in.State != models.IntentPreviewReady || in.Generation != 2 {
		t.Fatalf("intent %s gen %d", in.State, in.Generation)
	}
	v := e.view(in)
	var got []string
	for _, m := range v.Mounts {
		owner := "null"
		if m.OwnerVMID != nil {
			owner = fmt.Sprint(*m.OwnerVMID)
		}
		got = append(got, fmt.Sprintf("%s %s %s %s %s", m.Key, m.Volume, owner, m.Data, m.MountAfter))
	}
	want := []string{
		"rootfs local-lvm:vm-5001-disk-0 5001 erased recreated",
		"mp0 /srv/shared null untouched removed",
		"mp1 local-lvm:vm-6002-disk-1 6002 excluded removed",
		"mp2 local:5001/vm-5001-disk-2.raw 5001 erased removed",
		"mp3 local-zfs:subvol-5001-disk-3 5001 erased removed",
		"mp4 /dev/sdb1 null untouched removed",
		"mp5 local-zfs:base-100-disk-0/subvol-5001-disk-5 5001 erased removed",
		"mp6 local-lvm:not-a-volume-name null unknown removed",
		"unused0 local-lvm:vm-5001-disk-9 5001 erased removed",
		"unused1 local-lvm:vm-7003-disk-0 7003 excluded removed",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("mounts\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(v.Confirmations) != len(want) || v.Confirmations[1] != (reinstall.Confirmation{Key: "mp0", Volume: "/srv/shared"}) {
		t.Fatalf("confirmations %+v", v.Confirmations)
	}
	if len(v.Blockers) != 1 || v.Blockers[0].Code != reinstall.MountUnclassifiable || !strings.Contains(v.Blockers[0].Message, "mp6") {
		t.Fatalf("blockers %+v", v.Blockers)
	}
	if v.Rootfs == nil || v.Rootfs.CurrentBytes == nil || *v.Rootfs.CurrentBytes != 8<<30 || v.Rootfs.PlannedDisplay != "8 GiB" {
		t.Fatalf("rootfs %+v", v.Rootfs)
	}
	// The label is shown but never part of a confirmation.
	raw, _ := json.Marshal(v.Confirmations)
	if strings.Contains(string(raw), "erased") || strings.Contains(string(raw), "data") {
		t.Fatalf("confirmations carry labels: %s", raw)
	}
}

// R19: Proxmox's destroy walks the pending section too, so it is labelled and confirmed.
func TestPreviewLabelsPending(t *testing.T) {
	e := newEnv(t, "sqlite")
	e.seed("svc-pend", 5002, "ct-8", true, map[string]string{"mp0": "local-lvm:vm-5002-disk-1,mp=/a"},
		map[string]string{"mp0": "local-lvm:vm-6002-disk-4,mp=/a", "mp1": "local-lvm:vm-5002-disk-2,mp=/b"})
	v := e.view(e.preview("svc-pend"))
	var got []string
	for _, m := range v.Mounts {
		got = append(got, fmt.Sprintf("%s=%s:%s:%v", m.Key, m.Volume, m.Data, m.Pending))
	}
	want := "rootfs=local-lvm:vm-5002-disk-0:erased:false mp0=local-lvm:vm-5002-disk-1:erased:false " +
		"mp0=local-lvm:vm-6002-disk-4:excluded:true mp1=local-lvm:vm-5002-disk-2:erased:true"
	if strings.Join(got, " ") != want {
		t.Fatalf("got  %s\nwant %s", strings.Join(got, " "), want)
	}
}

// R6, R7, R17, R22, R26: apply stops, destroys without destroy-unreferenced-disks, re-creates
// with the plan (short body, swap explicit, rootfs in allocation form, stamp, firewall), starts;
// other guests' volumes stay; the password reaches Proxmox and nothing else.
func TestApplyReplaces(t *testing.T) {
	e := newEnv(t, "sqlite")
	e.seed("svc-apply", 5001, "ct-12", true, everyForm)
	in := e.preview("svc-apply")
	if v := e.view(in); len(v.Blockers) != 0 {
		t.Fatalf("blockers %+v", v.Blockers)
	}
	e.resetLog()
	op, err := e.apply("svc-apply", in)
	if err != nil {
		t.Fatal(err)
	}
	done := e.wait(op)
	if done.State != models.OpSucceeded {
		t.Fatalf("apply %s %s %s", done.State, deref(done.ErrorCode), deref(done.Result))
	}
	got := e.intent("svc-apply")
	if got.State != models.IntentCompleted || got.Generation != 4 {
		t.Fatalf("intent %s gen %d", got.State, got.Generation)
	}
	// The labels are stored beside the confirmations, on the operation and the intent.
	v := e.view(got)
	if v.Applied == nil || len(v.Applied.Mounts) != 9 || len(v.Applied.Confirmations) != 9 || v.Applied.Mounts[0].Data != reinstall.Erased {
		t.Fatalf("applied %+v", v.Applied)
	}
	if !strings.Contains(done.Payload, `"data":"excluded"`) || !strings.Contains(done.Payload, `"confirmations"`) {
		t.Fatalf("payload %s", done.Payload)
	}
	dels := e.requests("DELETE", "/lxc/5001")
	if len(dels) != 1 {
		t.Fatalf("%d destroys", len(dels))
	}
	if dels[0].Form.Has("destroy-unreferenced-disks") || dels[0].Form.Get("purge") == "1" {
		t.Fatalf("destroy sent %v", dels[0].Form)
	}
	creates := e.requests("POST", "/nodes/pve1/lxc")
	if len(creates) != 1 {
		t.Fatalf("%d creates", len(creates))
	}
	f := creates[0].Form
	for k, want := range map[string]string{"vmid": "5001", "rootfs": "local-lvm:12", "swap": "256", "memory": "2048",
		"cores": "2", "unprivileged": "1", "hostname": "web1.example.com", "ostemplate": "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst",
		"password": testPassword, "tags": "pvebill"} {
		if f.Get(k) != want {
			t.Errorf("create %s=%q, want %q", k, f.Get(k), want)
		}
	}
	for _, k := range []string{"arch", "features", "mp0", "mp1", "storage"} {
		if f.Has(k) {
			t.Errorf("create sent %s=%q", k, f.Get(k))
		}
	}
	if !strings.Contains(f.Get("net0"), "firewall=1") || !strings.Contains(f.Get("description"), "pvebill-service: whmcs/svc-apply") {
		t.Errorf("create net0 %q description %q", f.Get("net0"), f.Get("description"))
	}
	g, ok := e.sim.Guest(5001)
	if !ok || g.Status != "running" || g.Firewall["ipfilter"] != "1" || g.Firewall["enable"] != "1" {
		t.Fatalf("guest after %+v", g)
	}
	for k := range g.Config {
		if strings.HasPrefix(k, "mp") || strings.HasPrefix(k, "unused") {
			t.Errorf("new container has %s", k)
		}
	}
	// Another guest's volumes are kept; ours are gone.
	lvm := strings.Join(e.sim.Volumes("local-lvm"), " ")
	if !strings.Contains(lvm, "vm-6002-disk-1") || !strings.Contains(lvm, "vm-7003-disk-0") || strings.Contains(lvm, "vm-5001-disk-9") {
		t.Fatalf("local-lvm after: %s", lvm)
	}
	if s := e.service("svc-apply"); s.State != models.ServiceActive || s.LockOperationID != nil {
		t.Fatalf("service %s lock %v", s.State, s.LockOperationID)
	}
	assertNoSecret(t, e, testPassword)
}

// R26: the password is in no table, no log line.
func assertNoSecret(t *testing.T, e *env, secret string) {
	t.Helper()
	var tables []string
	q := "SELECT name FROM sqlite_master WHERE type = 'table'"
	if e.db.Dialect == models.MySQL {
		q = "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE()"
	}
	dbtest.Scan(t, e.db, &tables, q)
	if len(tables) < 5 {
		t.Fatalf("tables %v", tables)
	}
	for _, tbl := range tables {
		for _, row := range dbtest.TableRows(t, e.db, tbl) {
			for col, v := range row {
				if strings.Contains(fmt.Sprintf("%s", v), secret) {
					t.Errorf("table %s column %s holds the secret", tbl, col)
				}
			}
		}
	}
	if strings.Contains(e.logs.String(), secret) {
		t.Error("a log line holds the secret")
	}
}

// R39: a guest at the vmid without the service's stamp is never previewed, let alone touched.
func TestGuestNotOurs(t *testing.T) {
	e := newEnv(t, "sqlite")
	e.seed("svc-stamp", 5001, "ct-8", true, map[string]string{"description": "hand-made"})
	in, op, err := e.svc.Preview(t.Context(), client, "svc-stamp", reinstall.PreviewRequest{})
	if err != nil {
		t.Fatal(err)
	}
	done := e.wait(op)
	if done.State != models.OpFailed || deref(done.ErrorCode) != "guest_not_ours" {
		t.Fatalf("preview %s %s", done.State, deref(done.ErrorCode))
	}
	got, err := e.svc.Get(t.Context(), client, "svc-stamp", in.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != models.IntentFailed || deref(got.ErrorCode) != "guest_not_ours" {
		t.Fatalf("intent %s %s", got.State, deref(got.ErrorCode))
	}
	if v := e.view(got); v.Error == nil || v.Error.Detail == "" {
		t.Fatalf("view error %+v", v.Error)
	}
	if _, err := e.apply("svc-stamp", got); problemCode(err) != "preview_stale" {
		t.Fatalf("apply of a failed preview: %v", err)
	}
	for _, r := range e.sim.Requests() {
		if r.Method != "GET" {
			t.Errorf("sent %s %s", r.Method, r.Path)
		}
	}
}

// R22, R29: concurrent applies of one intent start one reinstall; the others are
// reinstall_in_progress. Another client cannot see or apply the intent.
func TestConcurrentApplies(t *testing.T) {
	e := newEnv(t, "sqlite")
	e.seed("svc-race", 5001, "ct-8", true, nil)
	in := e.preview("svc-race")
	e.hold("svc-race")
	if _, _, err := e.svc.Apply(t.Context(), "other", "svc-race", reinstall.ApplyRequest{IntentID: in.ID,
		Confirmations: e.view(in).Confirmations, RootPassword: testPassword}); problemCode(err) != "not_found" {
		t.Fatalf("other client: %v", err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, errs[i] = e.apply("svc-race", in)
		}(i)
	}
	wg.Wait()
	won := 0
	for i, err := range errs {
		switch {
		case err == nil:
			won++
		case problemCode(err) != "reinstall_in_progress":
			t.Errorf("apply %d: %v", i, err)
		}
	}
	if won != 1 {
		t.Fatalf("%d applies accepted", won)
	}
	var n int64
	if n = dbtest.Count(t, e.db, "SELECT COUNT(*) FROM operations WHERE service_id = ? AND action = ?", "svc-race", reinstall.ActionApply); n != 1 {
		t.Fatalf("%d apply operations", n)
	}
	e.release("svc-race")
}

// A reinstall may change the OS within the plan's catalog; the next preview defaults to the OS
// the guest now runs.
func TestReinstallAnotherOS(t *testing.T) {
	e := newEnv(t, "sqlite")
	e.seed("svc-os", 5001, "ct-8", false, nil)
	ctx := t.Context()
	if _, _, err := e.svc.Preview(ctx, client, "svc-os", reinstall.PreviewRequest{OS: "plan9"}); problemCode(err) != "os_not_offered" {
		t.Fatalf("unknown os: %v", err)
	}
	in, op, err := e.svc.Preview(ctx, client, "svc-os", reinstall.PreviewRequest{OS: "ubuntu-24"})
	if err != nil {
		t.Fatal(err)
	}
	e.wait(op)
	if in, err = e.svc.Get(ctx, client, "svc-os", in.ID); err != nil {
		t.Fatal(err)
	}
	aop, err := e.apply("svc-os", in)
	if err != nil {
		t.Fatal(err)
	}
	if done := e.wait(aop); done.State != models.OpSucceeded {
		t.Fatalf("apply %s %s", done.State, deref(done.ErrorCode))
	}
	creates := e.requests("POST", "/nodes/pve1/lxc")
	if len(creates) != 1 || creates[0].Form.Get("ostemplate") != ubuntuTmpl {
		t.Fatalf("creates %+v", creates)
	}
	if got := e.preview("svc-os"); got.OS != "ubuntu-24" {
		t.Fatalf("next preview os %q", got.OS)
	}
}
