package operation

import (
	"context"
	"errors"

	"pvebill/i18n"
	"pvebill/models"
	"pvebill/modules/executor"
	"pvebill/modules/pve"
)

// StagePrecheck is the first stage of every action on a service's guest: it only reads (the
// guest, its stamp and locks, R39), so a failure there changed nothing.
const StagePrecheck executor.Stage = "precheck"

// Reporter records the task warnings of an operation for its result.
type Reporter struct {
	Warnings []TaskNote `json:"warnings,omitempty"`
}

// TaskNote is one Proxmox task as an operation's result names it: a task that warned, or the
// task that failed.
type TaskNote struct {
	Stage      string   `json:"stage"`
	UPID       string   `json:"upid"`
	ExitStatus string   `json:"exit_status"`
	Warnings   int      `json:"warnings,omitempty"`
	LogTail    []string `json:"log_tail,omitempty"`
}

// Task records a task that ended with warnings.
func (r *Reporter) Task(stage string, res pve.TaskResult) {
	if res.Warnings > 0 {
		r.Warnings = append(r.Warnings, TaskNote{Stage: stage, UPID: res.UPID, ExitStatus: res.ExitStatus,
			Warnings: res.Warnings, LogTail: res.LogTail})
	}
}

// Result is what an operation on a service's guest records when it ends; a flow with more to
// say embeds it.
type Result struct {
	VMID     *int       `json:"vmid,omitempty"`
	Node     string     `json:"node,omitempty"`
	NoOp     bool       `json:"noop,omitempty"`
	Adopted  bool       `json:"adopted,omitempty"`
	Warnings []TaskNote `json:"warnings,omitempty"`
	Failed   *TaskNote  `json:"failed_task,omitempty"`
}

// Fail fills the failing task (exit status and log tail) from err.
func (r *Result) Fail(stage string, err error) {
	var te *pve.TaskError
	if errors.As(err, &te) {
		r.Failed = &TaskNote{Stage: stage, UPID: te.Result.UPID, ExitStatus: te.Result.ExitStatus, LogTail: te.Result.LogTail}
	}
}

// GuestRun is one run of an action on a service's guest: the run, the service, the result and
// task reporter, and the guest once a precheck found it. A flow's run state embeds it.
type GuestRun struct {
	R   *executor.Run
	Svc *models.Service
	Res *Result
	Rep *Reporter
	T   *Target
}

// Precheck reads the service's guest (R39) and refuses a locked one.
func (gr *GuestRun) Precheck(ctx context.Context, g *Guests) error {
	t, err := g.Inspect(ctx, gr.Svc)
	if err != nil {
		return err
	}
	if b := LockBlockers(t.In, ProtectionIgnored); len(b) > 0 {
		return Blocked(b...).Perm(i18n.Temporary)
	}
	gr.T = t
	return nil
}

// RunOnService is the frame of an action on a service's guest: it loads the service and the
// payload (into payload, when not nil), runs the steps over st (which embeds gr), records the
// result — gr.Res, or what record returns when it is not nil — and maps errors to problems in
// one place.
func RunOnService[T any](ctx context.Context, db *models.DB, r *executor.Run, gr *GuestRun, payload any,
	steps []executor.Step[T], st T, record func() any) (err error) {
	gr.R = r
	if gr.Res == nil {
		gr.Res = &Result{}
	}
	if gr.Rep == nil {
		gr.Rep = &Reporter{}
	}
	defer func() {
		gr.Res.Warnings = gr.Rep.Warnings
		if err != nil {
			gr.Res.Fail(r.Op.Stage, err)
			err = ProblemOf(err)
		}
		if record != nil {
			r.SetResult(record())
		} else {
			r.SetResult(gr.Res)
		}
	}()
	if gr.Svc, err = db.GetService(ctx, r.Op.Key()); err != nil {
		return err
	}
	gr.Res.VMID, gr.Res.Node = gr.Svc.VMID, gr.Svc.Node
	if payload != nil {
		if err := r.Payload(payload); err != nil {
			return err
		}
	}
	return executor.RunSteps(ctx, r, steps, st)
}
