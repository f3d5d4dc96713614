package provision_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"

	"pvebill/i18n"
	"pvebill/models"
	"pvebill/models/dbtest"
	"pvebill/modules/kinds"
	"pvebill/modules/provision"
	"pvebill/modules/pve/pvesim"
)

// R2: an id with leftover volumes, an id our database holds, and an id Proxmox reports taken
// at create are each skipped for the next one.
func TestVMIDCollisions(t *testing.T) {
	e := newEnv(t, "sqlite", nil, nil)
	ctx := t.Context()
	// 100: leftover volume named for it.
	e.sim.AddVolume("local-lvm", "vm-100-disk-0", 1<<30, "images")
	// 101: held by another service in our database.
	other := &models.Service{ServiceID: "held", ClientID: "whmcs", Cluster: "default", VMID: new(101), State: models.ServiceActive}
	if err := e.db.InsertService(ctx, other); err != nil {
		t.Fatal(err)
	}
	// 102: somebody creates it between our check and our create.
	e.sim.InjectFault(pvesim.Fault{Method: "POST", PathPattern: "/nodes/{node}/lxc", Nth: 1, Status: 500,
		Message: "CT 102 already exists on node 'pve2'"})
	op := e.create(ctReq("svc-collide"))
	svc := e.service("svc-collide")
	if svc.VMID == nil || *svc.VMID != 103 {
		t.Fatalf("vmid %v, want 103", svc.VMID)
	}
	creates := e.requests("POST", "/lxc")
	if len(creates) != 2 || creates[0].Form.Get("vmid") != "102" || creates[1].Form.Get("vmid") != "103" {
		var ids []string
		for _, c := range creates {
			ids = append(ids, c.Form.Get("vmid"))
		}
		t.Fatalf("creates for %v, want [102 103]", ids)
	}
	if got := resultOf(t, op)["vmid"]; got != float64(103) {
		t.Errorf("result vmid %v", got)
	}
	// The leftover volume is untouched.
	found := false
	for _, v := range e.sim.Volumes("local-lvm") {
		found = found || strings.Contains(v, "vm-100-disk-0")
	}
	if !found {
		t.Error("the leftover volume of 100 was touched")
	}
}

// R36: 20 concurrent identical creates make one guest; a different body is service_exists.
func TestConcurrentIdenticalCreates(t *testing.T) {
	for _, dialect := range dbtest.Dialects(t) {
		t.Run(dialect, func(t *testing.T) { testConcurrentIdenticalCreates(t, dialect) })
	}
}

func testConcurrentIdenticalCreates(t *testing.T, dialect string) {
	e := newEnv(t, dialect, nil, nil)
	var wg sync.WaitGroup
	ops := make([]*models.Operation, 20)
	errs := make([]error, 20)
	for i := range ops {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			ops[i], _, errs[i] = e.svc.Create(context.Background(), "whmcs", ctReq("svc-twenty"))
		}(i)
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("create %d: %v", i, err)
		}
		if ops[i].ID != ops[0].ID {
			t.Fatalf("create %d got operation %s, want %s", i, ops[i].ID, ops[0].ID)
		}
	}
	e.mustSucceed(ops[0], nil)
	if n := len(e.requests("POST", "/lxc")); n != 1 {
		t.Fatalf("%d Proxmox creates, want 1", n)
	}
	again, created, err := e.svc.Create(t.Context(), "whmcs", ctReq("svc-twenty"))
	if err != nil || created || again.ID != ops[0].ID {
		t.Fatalf("repeat: %v %v %v", again, created, err)
	}
	diff := ctReq("svc-twenty")
	diff.Hostname = "other.example.com"
	_, _, err = e.svc.Create(t.Context(), "whmcs", diff)
	if p := problem(t, err); p.Code != i18n.CodeServiceExists || p.Status != 409 {
		t.Fatalf("different body: %v", err)
	}
}

// R2: concurrent creates of different services never claim one vmid; each gets its own guest.
func TestConcurrentDistinctCreates(t *testing.T) {
	for _, dialect := range dbtest.Dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			e := newEnv(t, dialect, nil, nil)
			const n = 8
			var wg sync.WaitGroup
			ops := make([]*models.Operation, n)
			for i := 0; i < n; i++ {
				wg.Add(1)
				go func(i int) {
					defer wg.Done()
					op, _, err := e.svc.Create(context.Background(), "whmcs", ctReq("svc-d"+strconv.Itoa(i)))
					if err != nil {
						t.Error(err)
						return
					}
					ops[i] = op
				}(i)
			}
			wg.Wait()
			seen := map[int]string{}
			for i, op := range ops {
				e.mustSucceed(op, nil)
				s := e.service("svc-d" + strconv.Itoa(i))
				if other, dup := seen[*s.VMID]; dup {
					t.Fatalf("%s and %s share vmid %d", other, s.ServiceID, *s.VMID)
				}
				seen[*s.VMID] = s.ServiceID
				if g, ok := e.sim.Guest(*s.VMID); !ok || !strings.Contains(g.Config["description"], "pvebill-service: "+s.ClientID+"/"+s.ServiceID) {
					t.Fatalf("guest %d is not %s's", *s.VMID, s.ServiceID)
				}
			}
		})
	}
}

func problem(t *testing.T, err error) *i18n.Problem {
	t.Helper()
	var p *i18n.Problem
	ok := errors.As(err, &p)
	if !ok {
		t.Fatalf("error %v (%T) is not a problem", err, err)
	}
	return p
}

// R4 checkout refusals and the one-of password/keys rule happen before anything is written.
func TestCreateRefusals(t *testing.T) {
	e := newEnv(t, "sqlite", nil, nil)
	cases := []struct {
		mod  func(*provision.CreateRequest)
		code i18n.Code
	}{
		{func(r *provision.CreateRequest) { r.Plan = "flex" }, i18n.CodeGuestTypeRequired},
		{func(r *provision.CreateRequest) { r.GuestType = "vm" }, i18n.CodeGuestTypeNotOffered},
		{func(r *provision.CreateRequest) { r.OS = "plan9" }, i18n.CodeOSNotOffered},
		{func(r *provision.CreateRequest) { r.RootPassword, r.SSHKeys = "", nil }, i18n.CodeValidationFailed},
		{func(r *provision.CreateRequest) { r.Plan = "nope" }, i18n.CodeValidationFailed},
	}
	for _, c := range cases {
		req := ctReq("svc-refused")
		c.mod(&req)
		_, _, err := e.svc.Create(t.Context(), "whmcs", req)
		if p := problem(t, err); p.Code != c.code {
			t.Errorf("%+v: %s, want %s", req, p.Code, c.code)
		}
	}
	if _, err := e.db.GetService(t.Context(), models.ServiceKey{ClientID: "whmcs", ServiceID: "svc-refused"}); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("a refused create wrote a service: %v", err)
	}
	if len(e.sim.Requests()) != 0 {
		t.Fatalf("a refused create reached Proxmox")
	}
}

// R11: a task ending "WARNINGS: n" is a success with the warnings recorded; any other exit
// status fails the operation with proxmox_task_failed and the log tail.
func TestTaskWarningsAndFailure(t *testing.T) {
	e := newEnv(t, "sqlite", nil, nil)
	e.sim.InjectFault(pvesim.Fault{Method: "POST", PathPattern: "/nodes/{node}/lxc/{vmid}/status/start", Nth: 1, TaskWarnings: 2})
	op := e.create(ctReq("svc-warn"))
	w, _ := resultOf(t, op)["warnings"].([]any)
	if len(w) != 1 || !strings.Contains(w[0].(map[string]any)["exit_status"].(string), "WARNINGS: 2") {
		t.Fatalf("warnings %v", resultOf(t, op))
	}

	e.sim.InjectFault(pvesim.Fault{Method: "POST", PathPattern: "/nodes/{node}/lxc/{vmid}/status/start", Nth: 1,
		TaskFail: "startup for container '101' failed"})
	op, _, err := e.svc.Create(t.Context(), "whmcs", ctReq("svc-fail"))
	if err != nil {
		t.Fatal(err)
	}
	got := e.wait(op)
	if got.State != models.OpFailed || deref(got.ErrorCode) != string(i18n.CodeProxmoxTaskFailed) {
		t.Fatalf("operation %s %s", got.State, deref(got.ErrorCode))
	}
	ft, _ := resultOf(t, got)["failed_task"].(map[string]any)
	if ft == nil || !strings.Contains(ft["exit_status"].(string), "startup for container") || ft["log_tail"] == nil {
		t.Fatalf("failed task %v", resultOf(t, got))
	}
	if s := e.service("svc-fail"); s.State != models.ServiceFailed {
		t.Fatalf("service state %s", s.State)
	}
	// A retry with the same body adopts the guest the failed attempt made.
	retry, created, err := e.svc.Create(t.Context(), "whmcs", ctReq("svc-fail"))
	if err != nil || !created {
		t.Fatalf("retry: %v %v", created, err)
	}
	done := e.mustSucceed(retry, nil)
	if resultOf(t, done)["adopted"] != true {
		t.Fatalf("retry did not adopt: %v", resultOf(t, done))
	}
	creates := 0
	for _, r := range e.requests("POST", "/lxc") {
		if r.Form.Get("hostname") != "" {
			creates++
		}
	}
	if creates != 2 { // svc-warn and svc-fail, once each
		t.Fatalf("%d creates, want 2", creates)
	}
	if s := e.service("svc-fail"); s.State != models.ServiceActive {
		t.Fatalf("service state %s", s.State)
	}
}

// R39: a guest at the service's vmid without its stamp is never stopped or destroyed.
func TestTerminateRefusesGuestNotOurs(t *testing.T) {
	e := newEnv(t, "sqlite", nil, nil)
	e.create(ctReq("svc-mine"))
	vmid := *e.service("svc-mine").VMID
	if err := e.sim.SetConfig(vmid, "description", "hand-edited by an operator"); err != nil {
		t.Fatal(err)
	}
	op, err := e.svc.Terminate(t.Context(), "whmcs", "svc-mine")
	if err != nil {
		t.Fatal(err)
	}
	got := e.wait(op)
	if got.State != models.OpFailed || deref(got.ErrorCode) != string(i18n.CodeGuestNotOurs) {
		t.Fatalf("terminate %s %s", got.State, deref(got.ErrorCode))
	}
	for _, r := range e.sim.Requests() {
		if r.Method == "DELETE" || strings.HasSuffix(r.Path, "/status/stop") || strings.HasSuffix(r.Path, "/status/shutdown") {
			t.Fatalf("%s %s sent to a guest that is not ours", r.Method, r.Path)
		}
	}
	if g, _ := e.sim.Guest(vmid); g.Status != "running" {
		t.Fatalf("guest %s", g.Status)
	}
}

// Terminate refuses protection and Proxmox locks with blockers, and otherwise destroys with
// purge and destroy-unreferenced-disks and keeps the row; a second terminate is a no-op.
func TestTerminate(t *testing.T) {
	e := newEnv(t, "sqlite", nil, nil)
	e.create(ctReq("svc-term"))
	vmid := *e.service("svc-term").VMID
	if err := e.sim.SetConfig(vmid, "protection", "1"); err != nil {
		t.Fatal(err)
	}
	op, _ := e.svc.Terminate(t.Context(), "whmcs", "svc-term")
	if got := e.wait(op); deref(got.ErrorCode) != string(i18n.CodeBlocked) {
		t.Fatalf("protected: %s %s", got.State, deref(got.ErrorCode))
	}
	if err := e.sim.SetConfig(vmid, "protection", "0"); err != nil {
		t.Fatal(err)
	}
	if err := e.sim.SetConfig(vmid, "lock", "backup"); err != nil {
		t.Fatal(err)
	}
	op, _ = e.svc.Terminate(t.Context(), "whmcs", "svc-term")
	if got := e.wait(op); deref(got.ErrorCode) != string(i18n.CodeBlocked) {
		t.Fatalf("locked: %s %s", got.State, deref(got.ErrorCode))
	}
	if len(e.requests("DELETE", "")) != 0 || len(e.requests("POST", "/status/stop")) != 0 {
		t.Fatal("stop or destroy sent for a protected or locked guest")
	}
	if err := e.sim.SetConfig(vmid, "lock", ""); err != nil {
		t.Fatal(err)
	}
	e.mustSucceed(e.svc.Terminate(t.Context(), "whmcs", "svc-term"))
	dels := e.requests("DELETE", "/lxc/"+strconv.Itoa(vmid))
	if len(dels) != 1 || dels[0].Form.Get("purge") != "1" || dels[0].Form.Get("destroy-unreferenced-disks") != "1" {
		t.Fatalf("destroy %+v", dels)
	}
	if _, ok := e.sim.Guest(vmid); ok {
		t.Fatal("guest still there")
	}
	if s := e.service("svc-term"); s.State != models.ServiceTerminated {
		t.Fatalf("state %s", s.State)
	}
	n := len(e.sim.Requests())
	again := e.mustSucceed(e.svc.Terminate(t.Context(), "whmcs", "svc-term"))
	if resultOf(t, again)["noop"] != true || len(e.sim.Requests()) != n {
		t.Fatalf("second terminate was not a no-op: %v", resultOf(t, again))
	}
}

// A container suspend shuts down, stops, clears onboot, never calls status/suspend; a second
// suspend is a no-op; unsuspend starts and restores onboot; change-plan applies resources
// online and grows the disk, refusing a shrink.
func TestContainerSuspendChangePlan(t *testing.T) {
	e := newEnv(t, "sqlite", nil, nil)
	ctx := t.Context()
	e.create(ctReq("svc-sus"))
	vmid := *e.service("svc-sus").VMID
	e.mustSucceed(e.svc.Suspend(ctx, "whmcs", "svc-sus", provision.SuspendRequest{Reason: "unpaid"}))
	g, _ := e.sim.Guest(vmid)
	if g.Status != "stopped" || g.Config["onboot"] != "0" {
		t.Fatalf("suspended guest %s onboot=%q", g.Status, g.Config["onboot"])
	}
	if len(e.requests("POST", "/status/shutdown")) != 1 {
		t.Fatal("no graceful shutdown")
	}
	n := len(e.sim.Requests())
	again := e.mustSucceed(e.svc.Suspend(ctx, "whmcs", "svc-sus", provision.SuspendRequest{}))
	if resultOf(t, again)["noop"] != true || len(e.sim.Requests()) != n {
		t.Fatal("second suspend was not a no-op")
	}
	e.mustSucceed(e.svc.Unsuspend(ctx, "whmcs", "svc-sus"))
	g, _ = e.sim.Guest(vmid)
	if g.Status != "running" || g.Config["onboot"] != "1" {
		t.Fatalf("unsuspended guest %s onboot=%q", g.Status, g.Config["onboot"])
	}
	// A guest that does not shut down in time is stopped.
	e.sim.InjectFault(pvesim.Fault{Method: "POST", PathPattern: "/nodes/{node}/lxc/{vmid}/status/shutdown", Nth: 1,
		TaskFail: "command 'lxc-stop -n " + strconv.Itoa(vmid) + " --nokill --timeout 1' failed: exit code 1"})
	e.mustSucceed(e.svc.Suspend(ctx, "whmcs", "svc-sus", provision.SuspendRequest{}))
	if g, _ = e.sim.Guest(vmid); g.Status != "stopped" || len(e.requests("POST", "/status/stop")) != 1 {
		t.Fatalf("after a failed shutdown: %s, %d stops", g.Status, len(e.requests("POST", "/status/stop")))
	}
	e.mustSucceed(e.svc.Unsuspend(ctx, "whmcs", "svc-sus"))
	g, _ = e.sim.Guest(vmid)
	if g.Status != "running" || g.Config["onboot"] != "1" {
		t.Fatalf("unsuspended guest %s onboot=%q", g.Status, g.Config["onboot"])
	}
	e.mustSucceed(e.svc.ChangePlan(ctx, "whmcs", "svc-sus", provision.ChangePlanRequest{Plan: "ct-big"}))
	g, _ = e.sim.Guest(vmid)
	if g.Config["cores"] != "2" || g.Config["memory"] != "2048" || g.Config["swap"] != "256" ||
		kinds.RootDiskSize("rootfs", g.Config["rootfs"]) != 12*kinds.GiB {
		t.Fatalf("after change-plan: %v", g.Config)
	}
	_, err := e.svc.ChangePlan(ctx, "whmcs", "svc-sus", provision.ChangePlanRequest{Plan: "ct-small"})
	if p := problem(t, err); p.Code != i18n.CodeBlocked || p.Blockers[0].Code != provision.BlockerShrink {
		t.Fatalf("shrink: %v", err)
	}
	_, err = e.svc.ChangePlan(ctx, "whmcs", "svc-sus", provision.ChangePlanRequest{Plan: "vm-small"})
	if p := problem(t, err); p.Code != i18n.CodeGuestTypeNotOffered || p.Permanence != i18n.Permanent {
		t.Fatalf("type change: %v", err)
	}
	if _, err := e.svc.Suspend(ctx, "other", "svc-sus", provision.SuspendRequest{}); problem(t, err).Code != i18n.CodeNotFound {
		t.Fatalf("another client's service: %v", err)
	}
}

// R15: an HA-managed container's HA state follows suspend and unsuspend, so HA neither
// restarts a suspended guest nor keeps an unsuspended one down.
func TestSuspendHAManaged(t *testing.T) {
	e := newEnv(t, "sqlite", nil, nil)
	ctx := t.Context()
	e.create(ctReq("svc-ha"))
	vmid := *e.service("svc-ha").VMID
	if err := e.sim.SetHAManaged(vmid, "started"); err != nil {
		t.Fatal(err)
	}
	e.mustSucceed(e.svc.Suspend(ctx, "whmcs", "svc-ha", provision.SuspendRequest{}))
	if g, _ := e.sim.Guest(vmid); g.Status != "stopped" || g.HAState != "stopped" {
		t.Fatalf("suspended: %s, HA %q", g.Status, g.HAState)
	}
	e.mustSucceed(e.svc.Unsuspend(ctx, "whmcs", "svc-ha"))
	if g, _ := e.sim.Guest(vmid); g.Status != "running" || g.HAState != "started" {
		t.Fatalf("unsuspended: %s, HA %q", g.Status, g.HAState)
	}
	puts := e.requests("PUT", "/cluster/ha/resources/ct:"+strconv.Itoa(vmid))
	if len(puts) != 2 || puts[0].Form.Get("state") != "stopped" || puts[1].Form.Get("state") != "started" {
		t.Fatalf("HA updates %+v", puts)
	}
}
