package reinstall_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"pvebill/i18n"
	"pvebill/models"
	"pvebill/models/dbtest"
	"pvebill/modules/executor"
	"pvebill/modules/kinds"
	"pvebill/modules/plans"
	"pvebill/modules/provision"
	"pvebill/modules/pve"
	"pvebill/modules/pve/pvesim"
	"pvebill/modules/pve/pvesim/simtest"
	"pvebill/modules/reinstall"
	"pvebill/modules/stack/stacktest"
)

const (
	testPassword = "Re1nstall-Secret-pw"
	client       = stacktest.Client // the harness's Service reads this client's services
	tmpl         = "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst"
	ubuntuTmpl   = "local:vztmpl/ubuntu-24.04-standard_24.04-2_amd64.tar.zst"
)

type env struct {
	*stacktest.Env
	t      *testing.T
	db     *models.DB
	sim    *simtest.Server
	svc    *reinstall.Replacer
	client *pve.Client
	plans  *plans.Service
	exec   *executor.Executor
	prov   *provision.Provisioner
	logs   *stacktest.LogBuffer
}

func newEnv(t *testing.T, dialect string) *env {
	t.Helper()
	sim := pvesim.New(pvesim.Options{TokenID: simtest.TokenID, TokenSecret: simtest.TokenSecret})
	sim.AddStorage("local-zfs", "zfspool", []string{"images", "rootdir"}, false)
	sim.AddVolume("local", "vztmpl/debian-12-standard_12.7-1_amd64.tar.zst", 126<<20, "vztmpl")
	sim.AddVolume("local", "vztmpl/ubuntu-24.04-standard_24.04-2_amd64.tar.zst", 141<<20, "vztmpl")
	cat := plans.OSCatalog{Container: map[string]string{"debian-12": tmpl, "ubuntu-24": ubuntuTmpl}}
	cfg := fastHeal("test")
	se := stacktest.New(t, stacktest.Options{Dialect: dialect, Sim: sim, Executor: &cfg, Plans: []plans.Spec{
		{Code: "ct-8", Name: "Container 8", GuestTypes: []plans.GuestType{plans.Container}, Cluster: "default",
			Cores: new(1), MemoryMiB: new(512), DiskGiB: new(8), Storage: "local-lvm", Bridge: "vmbr0", OS: cat},
		{Code: "ct-12", Name: "Container 12", GuestTypes: []plans.GuestType{plans.Container}, Cluster: "default",
			Cores: new(2), MemoryMiB: new(2048), SwapMiB: new(256), DiskGiB: new(12), Storage: "local-lvm", Bridge: "vmbr0", OS: cat},
		{Code: "vm-10", Name: "VM 10", GuestTypes: []plans.GuestType{plans.VM}, Cluster: "default",
			Cores: new(2), MemoryMiB: new(2048), DiskGiB: new(10), Storage: "local-lvm", Bridge: "vmbr0",
			OS: plans.OSCatalog{VM: map[string]plans.VMTemplate{"debian-12": {VMID: stacktest.VMTemplate}}}},
	}})
	st := se.Stack
	return &env{Env: se, t: t, db: se.DB, sim: se.Sim, client: se.Client, logs: se.Logs, plans: st.Plans,
		exec: st.Exec, svc: st.Replacer, prov: st.Provisioner}
}

// seed puts a stamped container of service id at vmid into the simulator and the service row
// (with the create operation that names its OS) into the database. extra overrides or adds
// config keys ("" deletes one).
func (e *env) seed(id string, vmid int, plan string, running bool, extra map[string]string, pending ...map[string]string) {
	e.t.Helper()
	cfg := map[string]string{
		"arch": "amd64", "hostname": "web1.example.com", "memory": "512", "swap": "512", "cores": "1",
		"ostype": "debian", "rootfs": "local-lvm:vm-" + strconv.Itoa(vmid) + "-disk-0,size=8G", "unprivileged": "1",
		"net0":        "name=eth0,bridge=vmbr0,firewall=1,hwaddr=BC:24:11:00:50:01,ip=dhcp,type=veth",
		"description": kinds.StampDescription(kinds.Guest{ClientID: client, ServiceID: id}), "tags": kinds.StampTag, "onboot": "1",
	}
	for k, v := range extra {
		if v == "" {
			delete(cfg, k)
		} else {
			cfg[k] = v
		}
	}
	g := pvesim.Guest{VMID: vmid, Type: "lxc", Node: "pve1", Running: running, Config: cfg}
	if len(pending) > 0 {
		g.Pending = pending[0]
	}
	if err := e.sim.SeedGuest(g); err != nil {
		e.t.Fatal(err)
	}
	ctx := context.Background()
	if err := e.db.InsertService(ctx, &models.Service{ServiceID: id, ClientID: client, Plan: plan,
		GuestType: "container", Cluster: "default", Node: "pve1", VMID: &vmid, Hostname: "web1.example.com",
		State: models.ServiceActive}); err != nil {
		e.t.Fatal(err)
	}
	op := &models.Operation{ServiceID: id, ClientID: client, Action: "create", State: models.OpSucceeded,
		Payload: `{"plan":"` + plan + `","guest_type":"container","os":"debian-12","hostname":"web1.example.com"}`}
	if err := e.db.InsertOperation(ctx, op); err != nil {
		e.t.Fatal(err)
	}
}

// seedVM puts the template 9000 and a stamped VM of service id at vmid into the simulator and
// the service row into the database. extra overrides or adds config keys.
func (e *env) seedVM(id string, vmid int, running bool, extra map[string]string) {
	e.t.Helper()
	if _, ok := e.sim.Guest(9000); !ok {
		if err := e.sim.SeedGuest(pvesim.Guest{VMID: 9000, Type: "qemu", Node: "pve1", Template: true, Config: map[string]string{
			"name": "debian-12-cloud", "memory": "2048", "cores": "2", "sockets": "1", "ostype": "l26",
			"scsihw": "virtio-scsi-single", "scsi0": "local-lvm:base-9000-disk-0,size=8G",
			"ide2": "local-lvm:vm-9000-cloudinit,media=cdrom", "boot": "order=scsi0", "agent": "1",
			"net0": "virtio=BC:24:11:00:90:00,bridge=vmbr0,firewall=1",
		}}); err != nil {
			e.t.Fatal(err)
		}
	}
	v := strconv.Itoa(vmid)
	cfg := map[string]string{
		"name": "web1", "memory": "2048", "cores": "2", "ostype": "l26", "scsihw": "virtio-scsi-single",
		"scsi0": "local-lvm:vm-" + v + "-disk-0,size=10G", "ide2": "local-lvm:vm-" + v + "-cloudinit,media=cdrom",
		"net0": "virtio=BC:24:11:00:03:00,bridge=vmbr0,firewall=1", "boot": "order=scsi0", "agent": "1",
		"description": kinds.StampDescription(kinds.Guest{ClientID: client, ServiceID: id}), "tags": kinds.StampTag, "onboot": "1", "ciuser": "root",
	}
	for k, val := range extra {
		if val == "" {
			delete(cfg, k)
		} else {
			cfg[k] = val
		}
	}
	if err := e.sim.SeedGuest(pvesim.Guest{VMID: vmid, Type: "qemu", Node: "pve1", Running: running, Config: cfg}); err != nil {
		e.t.Fatal(err)
	}
	ctx := context.Background()
	if err := e.db.InsertService(ctx, &models.Service{ServiceID: id, ClientID: client, Plan: "vm-10",
		GuestType: "vm", Cluster: "default", Node: "pve1", VMID: &vmid, Hostname: "web1.example.com",
		State: models.ServiceActive}); err != nil {
		e.t.Fatal(err)
	}
	op := &models.Operation{ServiceID: id, ClientID: client, Action: "create", State: models.OpSucceeded,
		Payload: `{"plan":"vm-10","guest_type":"vm","os":"debian-12","hostname":"web1.example.com"}`}
	if err := e.db.InsertOperation(ctx, op); err != nil {
		e.t.Fatal(err)
	}
}

// addPlan adds a container plan of gib GiB.
func (e *env) addPlan(code string, gib int) {
	e.t.Helper()
	if _, err := e.plans.Import(context.Background(), []plans.Spec{{Code: code, Name: code,
		GuestTypes: []plans.GuestType{plans.Container}, Cluster: "default", Cores: new(1), MemoryMiB: new(512),
		DiskGiB: new(gib), Storage: "local-lvm", Bridge: "vmbr0",
		OS: plans.OSCatalog{Container: map[string]string{"debian-12": tmpl}}}}, plans.SourceFile); err != nil {
		e.t.Fatal(err)
	}
}

// hold keeps the executor from claiming the service's operations (its lock is held by an
// operation of another process) until release.
func (e *env) hold(id string) {
	e.t.Helper()
	dbtest.Exec(e.t, e.db, "UPDATE services SET lock_operation_id = ? WHERE service_id = ?", "held-elsewhere", id)
}

func (e *env) release(id string) {
	e.t.Helper()
	dbtest.Exec(e.t, e.db, "UPDATE services SET lock_operation_id = NULL WHERE service_id = ?", id)
	e.exec.Kick()
}

// resetLog empties the simulator's request log after checking what it holds so far for schema
// violations and R13 breaches.
func (e *env) resetLog() {
	e.t.Helper()
	simtest.Check(e.t, e.sim.Sim)
	e.sim.ResetLog()
}

// start starts the executor once.
func (e *env) start() { e.Start() }

// wait runs the executor until op ends.
func (e *env) wait(op *models.Operation) *models.Operation {
	e.t.Helper()
	return e.Wait(op)
}

// preview runs phase 1 to its end and returns the intent read afterwards.
func (e *env) preview(id string) *models.Intent {
	e.t.Helper()
	in, op, err := e.svc.Preview(context.Background(), client, id, reinstall.PreviewRequest{})
	if err != nil {
		e.t.Fatal(err)
	}
	if in.State != models.IntentPreviewPending {
		e.t.Fatalf("new intent %s", in.State)
	}
	done := e.wait(op)
	if done.State != models.OpSucceeded {
		e.t.Fatalf("preview ended %s %v", done.State, deref(done.ErrorCode))
	}
	got, err := e.svc.Get(context.Background(), client, id, in.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	return got
}

func (e *env) view(in *models.Intent) reinstall.View { return reinstall.ViewOf(in, "en") }

// apply sends phase 2 with the preview's confirmations and the password.
func (e *env) apply(id string, in *models.Intent) (*models.Operation, error) {
	op, _, err := e.svc.Apply(context.Background(), client, id, reinstall.ApplyRequest{IntentID: in.ID,
		Confirmations: e.view(in).Confirmations, RootPassword: testPassword})
	return op, err
}

func (e *env) service(id string) *models.Service {
	e.t.Helper()
	return e.Service(id)
}

func (e *env) intent(id string) *models.Intent {
	e.t.Helper()
	in, err := e.svc.Get(context.Background(), client, id, "")
	if err != nil {
		e.t.Fatal(err)
	}
	return in
}

func (e *env) requests(method, pathSuffix string) []pvesim.Request {
	return e.Requests(method, pathSuffix)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func problemCode(err error) i18n.Code {
	var p *i18n.Problem
	if errors.As(err, &p) {
		return p.Code
	}
	return ""
}

func blockerCodes(err error) []string {
	var p *i18n.Problem
	var out []string
	if errors.As(err, &p) {
		for _, b := range p.Blockers {
			out = append(out, b.Code)
		}
	}
	return out
}

// fastHeal is the tests' executor with two workers that resume quickly and give facts 300 ms.
func fastHeal(owner string) executor.Config {
	c := stacktest.Executor(owner)
	c.Workers, c.PollInterval, c.HealBackoff, c.FactsBudget = 2, 10*time.Millisecond, 20*time.Millisecond, 300*time.Millisecond
	return c
}
