package executor

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"pvebill/models"
)

// Why a run past its destructive point could not be resumed (R58): the reason of a
// needs_reconciliation, stable strings of the API (docs/api.md, reconciliation.reason).
const (
	// ReasonUnreachable: Proxmox did not answer the reads of the facts within the budget.
	ReasonUnreachable = "proxmox_unreachable"
	// ReasonTaskNotRecorded: a task may have been started whose UPID was never recorded, and
	// the guest does not tell how it went (it is locked by a task nobody knows).
	ReasonTaskNotRecorded = "task_not_recorded"
	// ReasonNotOurs: a guest sits on the vmid without this service's stamp (R39).
	ReasonNotOurs = "guest_not_ours"
	// ReasonResumeFailed: the facts were known but the resumed run kept failing.
	ReasonResumeFailed = "resume_failed"
)

// ErrUnsettled is what a resolver returns when the guest is locked by a task the operation never
// recorded: the lock may clear (the task ends), so the facts are read again with backoff, and
// past the budget they are unknowable (ReasonTaskNotRecorded).
var ErrUnsettled = errors.New("executor: the guest is locked by a task nobody recorded")

// Causes of a resume, as the audit log says them.
const (
	CauseTakenOver = "taken_over"
	CauseFailed    = "failed"
	CauseWoken     = "secret_received"
)

// Facts are what a resolver established about an operation's guest and its last task (R58).
// A nil pointer is a fact that was not established.
type Facts struct {
	VMID         int        `json:"vmid,omitempty"`
	Node         string     `json:"node,omitempty"`
	GuestPresent *bool      `json:"guest_present"`
	Stamped      *bool      `json:"stamped,omitempty"`
	Lock         string     `json:"lock,omitempty"`
	LastTask     *TaskFacts `json:"last_task,omitempty"`
	// Error is the read that could not be made (ReasonUnreachable).
	Error string `json:"error,omitempty"`
}

// TaskFacts are the last Proxmox task the operation recorded and how it ended.
type TaskFacts struct {
	UPID       string `json:"upid"`
	Stage      string `json:"stage"`
	Status     string `json:"status"`
	ExitStatus string `json:"exit_status,omitempty"`
}

// OK reports whether the task stopped with success ("OK" or "WARNINGS: n").
func (t *TaskFacts) OK() bool {
	return t != nil && t.Status == "stopped" && (t.ExitStatus == "OK" || len(t.ExitStatus) > 9 && t.ExitStatus[:9] == "WARNINGS:")
}

// Reconciliation is what a needs_reconciliation carries: the facts found and why they did not
// suffice.
type Reconciliation struct {
	Facts  Facts  `json:"facts"`
	Reason string `json:"reason"`
}

// Decision is a resolver's verdict: the stage to resume from, nothing left to do, a reason why
// a fact cannot be established, or a secret the run needs and does not hold.
type Decision struct {
	Facts  Facts
	Resume Stage
	Done   bool
	// Reason is set when a fact cannot be established (Reason* constants).
	Reason string
	// Await names what the run waits for (models.AwaitingPassword): the operation is parked.
	Await string
}

// Resolver establishes, for an operation past its action's destructive point that failed or
// was taken over, the facts from Proxmox and names the stage to resume from (R58). An error is
// a read that failed for now (Proxmox unreachable): the executor retries it with backoff.
type Resolver interface {
	Resolve(ctx context.Context, r *Run) (Decision, error)
}

// ResolverFunc adapts a function to Resolver.
type ResolverFunc func(ctx context.Context, r *Run) (Decision, error)

// Resolve calls f.
func (f ResolverFunc) Resolve(ctx context.Context, r *Run) (Decision, error) { return f(ctx, r) }

// ResumingAt reports the stage a resumed run starts at, if the executor resumes it from the
// facts (its action prepares what the skipped stages would have found).
func (r *Run) ResumingAt() (Stage, bool) {
	if r.from <= 0 {
		return "", false
	}
	return r.Action.Stages[r.from], true
}

// Skips reports whether a resumed run starts after stage.
func (r *Run) Skips(stage Stage) bool { return r.Action.StageIndex(stage) < r.from }

// Cause is why the run was resumed ("" for a first run).
func (r *Run) Cause() string { return r.cause }

// healEnd is how healing an operation ended: the last run's error (nil: succeeded), or the
// reconciliation an operator needs, or parked waiting for a secret.
// minFactReads is how many times the facts are read before they are judged unknowable.
const minFactReads = 3

type healEnd struct {
	err   error
	rec   *Reconciliation
	await string
}

// heal resumes an operation past its destructive point from the facts its action's resolver
// establishes (R58): at most Config.HealAttempts runs resumed after a failure (counted across
// takeovers, from the audit log), within Config.HealWindow of this replica's first, with
// backoff between them; needs_reconciliation only for a fact that cannot be established or a
// resume that keeps failing.
func (e *Executor) heal(ctx context.Context, run *Run, log *slog.Logger, cause string, err error) healEnd {
	began := e.cfg.Now()
	failed, cerr := e.db.CountFailedResumes(ctx, run.Op.ID)
	if cerr != nil {
		return healEnd{err: cerr}
	}
	for attempt := 1; ; attempt++ {
		dec, ferr := e.establish(ctx, run)
		switch {
		case ferr != nil:
			return healEnd{err: ferr}
		case dec.Reason != "":
			log.Warn("facts cannot be established; needs reconciliation", "reason", dec.Reason, "stage", run.Op.Stage)
			return healEnd{err: err, rec: &Reconciliation{Facts: dec.Facts, Reason: dec.Reason}}
		case dec.Await != "":
			return healEnd{err: err, await: dec.Await}
		case dec.Done:
			// The facts show the work done (a task that ended OK): recorded as a resume that
			// had nothing left to run.
			if merr := e.markResumed(ctx, run, dec, cause, err); merr != nil {
				return healEnd{err: merr}
			}
			return healEnd{}
		case cause == CauseFailed && (failed >= e.cfg.HealAttempts || e.cfg.Now().Sub(began) > e.cfg.HealWindow):
			log.Warn("resume keeps failing; needs reconciliation", "stage", run.Op.Stage, "failed_resumes", failed)
			return healEnd{err: err, rec: &Reconciliation{Facts: dec.Facts, Reason: ReasonResumeFailed}}
		}
		if attempt > 1 && !sleepCtx(ctx, e.cfg.HealBackoff<<(attempt-2)) {
			return healEnd{err: ctx.Err()}
		}
		if merr := e.markResumed(ctx, run, dec, cause, err); merr != nil {
			return healEnd{err: merr}
		}
		if cause == CauseFailed {
			failed++
		}
		log.Info("operation resumed from the facts", "cause", cause, "from", dec.Resume, "after_stage", run.Op.Stage)
		run.from, run.cause, run.result, run.Resumed = run.Action.StageIndex(dec.Resume), cause, nil, true
		err = safeRun(ctx, run.Action, run)
		if err == nil || errors.Is(err, models.ErrLeaseLost) || ctx.Err() != nil || !run.Action.Destructive(run.Op.StageIndex) {
			return healEnd{err: err}
		}
		cause = CauseFailed
	}
}

// establish asks the resolver, retrying a failed read with backoff within Config.FactsBudget;
// past it the facts are unknowable (ReasonUnreachable). The budget never ends the reading
// before minFactReads attempts: one read that hung on a connection lost (an agent's tunnel cut
// without a FIN is noticed after 15 s) must not spend the whole budget alone.
func (e *Executor) establish(ctx context.Context, run *Run) (Decision, error) {
	deadline := e.cfg.Now().Add(e.cfg.FactsBudget)
	wait := e.cfg.HealBackoff
	for reads := 1; ; reads++ {
		dec, err := run.Action.Resolver.Resolve(ctx, run)
		if err == nil {
			if dec.Resume != "" && run.Action.StageIndex(dec.Resume) < 0 {
				dec.Reason = ReasonResumeFailed
			}
			return dec, nil
		}
		if ctx.Err() != nil || errors.Is(err, models.ErrLeaseLost) {
			return dec, err
		}
		if reads >= minFactReads && e.cfg.Now().Add(wait).After(deadline) {
			if errors.Is(err, ErrUnsettled) {
				dec.Reason = ReasonTaskNotRecorded
				return dec, nil
			}
			dec.Reason, dec.Facts.Error = ReasonUnreachable, err.Error()
			return dec, nil
		}
		if !sleepCtx(ctx, wait) {
			return dec, ctx.Err()
		}
		wait *= 2
	}
}

// markResumed counts the resume on the row, writes the audit entry saying why, and the metric.
func (e *Executor) markResumed(ctx context.Context, run *Run, dec Decision, cause string, err error) error {
	detail := map[string]any{"cause": cause, "stage": run.Op.Stage, "resume_from": dec.Resume, "facts": dec.Facts}
	if dec.Done {
		detail["done"] = true
	}
	if err != nil {
		detail["error_code"] = string(problemOf(err).Code)
	}
	raw, _ := json.Marshal(detail)
	d := string(raw)
	ev := &models.AuditEvent{Actor: "pvebill", ClientID: run.Op.ClientID, ServiceID: run.Op.ServiceID, OperationID: run.Op.ID,
		Event: "operation_resumed", Detail: &d}
	if err := e.db.MarkResumed(ctx, run.Op.ID, e.cfg.Owner, ev); err != nil {
		return err
	}
	run.Op.Resumed++
	stage := string(dec.Resume)
	if dec.Done {
		stage = "done"
	}
	e.metrics.resumed.WithLabelValues(run.Action.Name, stage).Inc()
	return nil
}

// observeTasks is the run's context under which every Proxmox task it starts is recorded on
// the row, with the stage that started it, before anything waits on it (R58).
func (e *Executor) observeTasks(ctx context.Context, run *Run, log *slog.Logger) context.Context {
	if e.cfg.TaskObserver == nil {
		return ctx
	}
	return e.cfg.TaskObserver(ctx, func(upid string) {
		if err := e.db.RecordTask(context.WithoutCancel(ctx), run.Op.ID, e.cfg.Owner, run.Op.Stage, upid); err != nil {
			log.Warn("record task", "upid", upid, "err", err)
			return
		}
		u, s := upid, run.Op.Stage
		run.Op.TaskUPID, run.Op.TaskStage = &u, &s
	})
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
