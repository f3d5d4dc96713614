package provision_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"golang.org/x/tools/txtar"

	"pvebill/i18n"
	"pvebill/models"
	"pvebill/modules/backups"
	"pvebill/modules/plans"
	"pvebill/modules/power"
	"pvebill/modules/provision"
	"pvebill/modules/pve/pvesim"
	"pvebill/modules/stack/stacktest"
)

// The conformance suite a guest kind inherits (R1, R11, R39): for every kind the stack
// registered, a clean run of the lifecycle — create, suspend, unsuspend, change of plan,
// backup, a power action, terminate — is recorded; then each write that run sent to Proxmox
// fails once in a run of its own: answered with HTTP 500, and, for a write that starts a task,
// with the task failing. The action must end failed with a typed code (or
// succeed, where the write was not needed), never internal; sent again, it must succeed, and
// the service and its guest must end where the clean run left them. Where the fault leaves a
// guest pvebill cannot recognise as its own (needs_reconciliation), sending the action again
// must write nothing. The fault points come from
// the clean run's request log, so a kind that sends a new call is covered without a list here.
// The clean run's request sequences are golden files, testdata/flows/<kind>.txtar: a change of
// what an action sends shows in review (-update rewrites them).
// The suite names no kind: it takes each kind's plans from the test fixtures.

// conformanceStep is one action of the lifecycle and the actions it needs before it.
type conformanceStep struct {
	action string
	needs  []string
	run    func(e *env, c conformanceCase, id string) (*models.Operation, error)
}

// conformanceCase is one kind under test: its plan and the plan a change of plan moves to.
type conformanceCase struct {
	kind, plan, other string
}

var conformanceSteps = []conformanceStep{
	{action: provision.ActionCreate, run: func(e *env, c conformanceCase, id string) (*models.Operation, error) {
		op, _, err := e.svc.Create(context.Background(), "whmcs", vmReq(id, c.plan))
		return op, err
	}},
	{action: provision.ActionSuspend, needs: []string{provision.ActionCreate}, run: func(e *env, _ conformanceCase, id string) (*models.Operation, error) {
		return e.svc.Suspend(context.Background(), "whmcs", id, provision.SuspendRequest{Reason: "overdue"})
	}},
	{action: provision.ActionUnsuspend, needs: []string{provision.ActionCreate, provision.ActionSuspend}, run: func(e *env, _ conformanceCase, id string) (*models.Operation, error) {
		return e.svc.Unsuspend(context.Background(), "whmcs", id)
	}},
	{action: provision.ActionChangePlan, needs: []string{provision.ActionCreate}, run: func(e *env, c conformanceCase, id string) (*models.Operation, error) {
		return e.svc.ChangePlan(context.Background(), "whmcs", id, provision.ChangePlanRequest{Plan: c.other})
	}},
	{action: backups.ActionBackup, needs: []string{provision.ActionCreate}, run: func(e *env, _ conformanceCase, id string) (*models.Operation, error) {
		return e.Stack.Backups.Backup(context.Background(), "whmcs", id, backups.BackupRequest{})
	}},
	{action: power.ActionReboot, needs: []string{provision.ActionCreate}, run: func(e *env, _ conformanceCase, id string) (*models.Operation, error) {
		return e.Stack.Power.Reboot(context.Background(), "whmcs", id)
	}},
	{action: provision.ActionTerminate, needs: []string{provision.ActionCreate}, run: func(e *env, _ conformanceCase, id string) (*models.Operation, error) {
		return e.svc.Terminate(context.Background(), "whmcs", id)
	}},
}

// conformanceCases are the registered kinds, each with the first two fixture plans that offer
// it alone, copied with a backup storage so that backups run.
func conformanceCases(t *testing.T, e *env) []conformanceCase {
	t.Helper()
	var kindsOf []string
	for k := range e.kinds.Built() {
		kindsOf = append(kindsOf, string(k))
	}
	sort.Strings(kindsOf)
	var out []conformanceCase
	for _, k := range kindsOf {
		if len(kindPlans(k)) < 2 {
			t.Fatalf("the test fixtures need two plans that offer only %s", k)
		}
		out = append(out, conformanceCase{kind: k, plan: "conf-" + k + "-a", other: "conf-" + k + "-b"})
	}
	return out
}

// kindPlans are the fixture plans that offer only kind, without an address pool.
func kindPlans(kind string) []plans.Spec {
	var out []plans.Spec
	for _, s := range stacktest.Plans() {
		if len(s.GuestTypes) == 1 && string(s.GuestTypes[0]) == kind && s.IPPool == nil {
			out = append(out, s)
		}
	}
	return out
}

// conformancePlans saves the case's two plans, with backups, in e.
func conformancePlans(t *testing.T, e *env, c conformanceCase) {
	t.Helper()
	specs := kindPlans(c.kind)
	for i, code := range []string{c.plan, c.other} {
		s := specs[i]
		s.Code, s.BackupStorage, s.BackupsMax = code, "local", new(2)
		if _, _, err := e.plans.Put(t.Context(), code, s); err != nil {
			t.Fatalf("plan %s: %v", code, err)
		}
	}
}

// conformanceEnd is where a run left the service and its guest.
type conformanceEnd struct {
	State   string
	Guest   string // the guest's status at Proxmox, "gone" when there is none
	Guests  int    // guests carrying the service's stamp
	Backups int
}

func conformanceEndOf(t *testing.T, e *env, id string) conformanceEnd {
	t.Helper()
	svc := e.service(id)
	end := conformanceEnd{State: svc.State, Guest: "gone"}
	if svc.VMID != nil {
		if g, ok := e.sim.Guest(*svc.VMID); ok {
			end.Guest = g.Status
			if g.Paused {
				end.Guest += "/paused"
			}
		}
	}
	for vmid := 100; vmid < 1000; vmid++ {
		if g, ok := e.sim.Guest(vmid); ok && strings.Contains(g.Config["description"], "pvebill-service: whmcs/"+id) {
			end.Guests++
		}
	}
	if svc.State != models.ServiceTerminated {
		list, err := e.Stack.Backups.Backups(t.Context(), "whmcs", id)
		if err != nil {
			t.Fatal(err)
		}
		end.Backups = len(list)
	}
	return end
}

// conformanceRun brings a new service to where step starts, runs the step (with fault
// injected just before it, when set) and returns the operation and the requests it sent.
func conformanceRun(t *testing.T, e *env, c conformanceCase, step conformanceStep, id string, fault *pvesim.Fault) (*models.Operation, []pvesim.Request) {
	t.Helper()
	for _, need := range step.needs {
		for _, s := range conformanceSteps {
			if s.action == need {
				e.mustSucceed(s.run(e, c, id))
			}
		}
	}
	e.sim.Advance(2 * time.Second)     // a backup's archive is named by the second
	e.Clock.Advance(2 * sharedReadTTL) // the step reads the cluster itself, not a read shared before it
	n := len(e.sim.Requests())
	if fault != nil {
		e.sim.InjectFault(*fault)
		defer e.sim.ClearFaults()
	}
	op, err := step.run(e, c, id)
	if err != nil {
		t.Fatalf("%s: %v", step.action, err)
	}
	return e.wait(op), e.sim.Requests()[n:]
}

// writesOf are the requests that change something.
func writesOf(reqs []pvesim.Request) []pvesim.Request {
	var out []pvesim.Request
	for _, r := range reqs {
		if r.Method != "GET" {
			out = append(out, r)
		}
	}
	return out
}

// conformanceUntouched sends step again for a service whose operation needs reconciliation:
// it is refused, or it ends without success, and no write reaches Proxmox.
func conformanceUntouched(t *testing.T, e *env, c conformanceCase, step conformanceStep, id string) {
	t.Helper()
	n := len(e.sim.Requests())
	if op, err := step.run(e, c, id); err == nil {
		if op = e.wait(op); op.State == models.OpSucceeded {
			t.Fatalf("sent again, %s succeeded over a guest that needs reconciliation", step.action)
		}
	}
	for _, r := range e.sim.Requests()[n:] {
		if r.Method != "GET" {
			t.Fatalf("sent again, %s wrote %s %s", step.action, r.Method, r.Path)
		}
	}
}

// schemaPath is a request's path in the API schema (/nodes/{node}/lxc/{vmid}), or its path
// where the schema has none.
func schemaPath(r pvesim.Request) string {
	if r.Template != "" {
		return r.Template
	}
	return r.Path
}

// faultPoints are the distinct writes of a clean run, as faults on their schema paths.
func faultPoints(writes []pvesim.Request) []pvesim.Fault {
	seen := map[string]bool{}
	var out []pvesim.Fault
	for _, w := range writes {
		pattern := schemaPath(w)
		if seen[w.Method+" "+pattern] {
			continue
		}
		seen[w.Method+" "+pattern] = true
		out = append(out, pvesim.Fault{Method: w.Method, PathPattern: pattern, Nth: 1, Status: 500,
			Message: "conformance: injected failure"})
		if w.Task { // and the task it starts fails
			out = append(out, pvesim.Fault{Method: w.Method, PathPattern: pattern, Nth: 1,
				TaskFail: "conformance: injected task failure"})
		}
	}
	return out
}

// failedAt reports whether writes hold the faulted call, answered with the fault's status.
func failedAt(writes []pvesim.Request, f pvesim.Fault) bool {
	for _, w := range writes {
		if w.Method == f.Method && (w.Template == f.PathPattern || w.Path == f.PathPattern) &&
			(w.Status == f.Status || f.TaskFail != "" && w.Task) {
			return true
		}
	}
	return false
}

func TestKindConformance(t *testing.T) {
	for _, c := range conformanceCases(t, newEnv(t, "sqlite", nil, nil)) {
		t.Run(c.kind, func(t *testing.T) {
			t.Parallel()
			// One environment per kind, a service per run (ids of one width: none is a prefix
			// of another in the stamps).
			e := newEnv(t, "sqlite", nil, nil)
			conformancePlans(t, e, c)
			runs := 0
			id := func() string { runs++; return fmt.Sprintf("conf-%03d", runs) }
			flows := &txtar.Archive{Comment: []byte(flowsComment)}
			defer func() {
				if !t.Failed() {
					goldenFlows(t, filepath.Join("testdata", "flows", c.kind+".txtar"), flows)
				}
			}()
			for _, step := range conformanceSteps {
				cleanID := id()
				op, reqs := conformanceRun(t, e, c, step, cleanID, nil)
				if op.State != models.OpSucceeded {
					t.Fatalf("%s clean run: %s %s %s", step.action, op.State, deref(op.ErrorCode), deref(op.ErrorDetail))
				}
				flows.Files = append(flows.Files, txtar.File{Name: step.action, Data: flowOf(reqs)})
				writes := writesOf(reqs)
				clean := conformanceEndOf(t, e, cleanID)
				points := faultPoints(writes)
				if len(points) == 0 {
					t.Fatalf("%s: the clean run sent no write", step.action)
				}
				for _, f := range points {
					name := fmt.Sprintf("%s/%s %s", step.action, f.Method, f.PathPattern)
					if f.TaskFail != "" {
						name += " task"
					}
					t.Run(name, func(t *testing.T) {
						sid := id()
						op, reqs := conformanceRun(t, e, c, step, sid, &f)
						writes := writesOf(reqs)
						if !failedAt(writes, f) {
							t.Fatalf("the write %s %s was not sent, or did not fail", f.Method, f.PathPattern)
						}
						switch {
						case op.State == models.OpSucceeded:
						case op.State == models.OpFailed && deref(op.ErrorCode) != "" && deref(op.ErrorCode) != string(i18n.CodeInternal):
							e.mustSucceed(step.run(e, c, sid))
						case op.State == models.OpNeedsReconciliation && deref(op.ErrorCode) != "":
							// The fault left what only a person can judge (R39): sent again, the
							// action touches nothing at Proxmox.
							conformanceUntouched(t, e, c, step, sid)
							return
						default:
							t.Fatalf("with the write failing: %s %s %s", op.State, deref(op.ErrorCode), deref(op.ErrorDetail))
						}
						if got := conformanceEndOf(t, e, sid); got != clean {
							t.Fatalf("ended %+v, the clean run %+v", got, clean)
						}
					})
				}
			}
		})
	}
}

// updateFlows rewrites the golden request sequences from this run: go test ./modules/provision
// -run TestKindConformance -update.
var updateFlows = flag.Bool("update", false, "rewrite testdata/flows from this run")

const flowsComment = `The requests each action of the lifecycle sends to Proxmox in a clean run, one kind a file
(TestKindConformance; -update rewrites it). A line is the method and the schema path; a call
repeated at once (a task's status while it runs) is one line.
`

// flowOf is a clean run's request sequence: a line a request, its method and schema path, a
// call repeated at once folded into one line (how often a task's status is polled depends on
// timing, not on the flow).
func flowOf(reqs []pvesim.Request) []byte {
	var b strings.Builder
	last := ""
	for _, r := range reqs {
		line := r.Method + " " + schemaPath(r)
		if line != last {
			b.WriteString(line + "\n")
		}
		last = line
	}
	return []byte(b.String())
}

// goldenFlows compares the run's sequences with the golden file, or rewrites it with -update.
// A change of a kind's calls shows in review as a change of this file.
func goldenFlows(t *testing.T, path string, got *txtar.Archive) {
	t.Helper()
	data := txtar.Format(got)
	if *updateFlows {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -run TestKindConformance -update writes it)", err)
	}
	wa := txtar.Parse(want)
	for i, f := range got.Files {
		if i >= len(wa.Files) || wa.Files[i].Name != f.Name {
			t.Errorf("%s: %s is not where the golden file has it (-update rewrites the file)", path, f.Name)
			continue
		}
		if string(wa.Files[i].Data) != string(f.Data) {
			t.Errorf("%s: %s sends\n%s\nthe golden file has\n%s(-update rewrites the file)", path, f.Name, f.Data, wa.Files[i].Data)
		}
	}
	if len(wa.Files) != len(got.Files) {
		t.Errorf("%s has %d actions, the run %d", path, len(wa.Files), len(got.Files))
	}
}
