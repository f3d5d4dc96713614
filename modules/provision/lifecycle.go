package provision

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"pvebill/i18n"
	"pvebill/models"
	"pvebill/modules/executor"
	"pvebill/modules/kinds"
	"pvebill/modules/operation"
	"pvebill/modules/plans"
)

// SuspendRequest is the body of POST /v1/services/{id}/suspend.
type SuspendRequest struct {
	Reason string `json:"reason" validate:"omitempty,max=255"`
}

// ChangePlanRequest is the body of POST /v1/services/{id}/change-plan.
type ChangePlanRequest struct {
	Plan string `json:"plan" validate:"required,max=64"`
}

type suspendPayload struct {
	Reason string `json:"reason,omitempty"`
	// Enforce is set by limit enforcement: "bandwidth" leaves the service limited, "drift"
	// stops a suspended or limited guest found running again (R16).
	Enforce string `json:"enforce,omitempty"`
}

type changePlanPayload struct {
	Plan string `json:"plan"`
}

// Suspend queues a suspend: a container is stopped, a VM follows its plan's mode (R15).
// Suspending a suspended service succeeds as a no-op (R36).
func (s *Provisioner) Suspend(ctx context.Context, clientID, serviceID string, req SuspendRequest) (*models.Operation, error) {
	return s.guests.Enqueue(ctx, clientID, serviceID, ActionSuspend, suspendPayload{Reason: req.Reason})
}

// Unsuspend queues an unsuspend.
func (s *Provisioner) Unsuspend(ctx context.Context, clientID, serviceID string) (*models.Operation, error) {
	return s.guests.Enqueue(ctx, clientID, serviceID, ActionUnsuspend, struct{}{})
}

// Terminate queues a terminate. Terminating a terminated service succeeds as a no-op (R36).
func (s *Provisioner) Terminate(ctx context.Context, clientID, serviceID string) (*models.Operation, error) {
	return s.guests.Enqueue(ctx, clientID, serviceID, ActionTerminate, struct{}{})
}

// ChangePlan checks the new plan against the service — same cluster, offers the service's guest
// type (a change of type is refused as permanent), a disk no smaller than the current plan's
// (R23) — and queues the change.
func (s *Provisioner) ChangePlan(ctx context.Context, clientID, serviceID string, req ChangePlanRequest) (*models.Operation, error) {
	svc, err := s.guests.Service(ctx, clientID, serviceID)
	if err != nil {
		return nil, err
	}
	np, err := s.plans.Get(ctx, req.Plan)
	if err != nil {
		var p *i18n.Problem
		if errors.As(err, &p) && p.Code == i18n.CodeNotFound {
			return nil, i18n.Validation(i18n.FieldError{Field: "plan", Code: i18n.FieldInvalid})
		}
		return nil, err
	}
	if !np.Offers(plans.GuestType(svc.GuestType)) {
		return nil, i18n.NewProblem(http.StatusUnprocessableEntity, i18n.CodeGuestTypeNotOffered).
			With("guest_type", svc.GuestType).Perm(i18n.Permanent)
	}
	if np.Cluster != svc.Cluster {
		return nil, i18n.Validation(i18n.FieldError{Field: "plan", Code: i18n.FieldOneOf, Param: "a plan of cluster " + svc.Cluster})
	}
	if old, err := s.plans.Get(ctx, svc.Plan); err == nil && np.DiskGiB < old.DiskGiB {
		return nil, shrinkBlocker(int64(old.DiskGiB)*kinds.GiB, int64(np.DiskGiB)*kinds.GiB)
	}
	return s.guests.EnqueueFor(ctx, svc, ActionChangePlan, changePlanPayload(req))
}

func shrinkBlocker(cur, planned int64) *i18n.Problem {
	p := blocked(operation.RootfsWouldShrink.Blocker(map[string]string{
		"current": fmt.Sprintf("%d GiB", (cur+kinds.GiB-1)/kinds.GiB), "planned": fmt.Sprintf("%d GiB", planned/kinds.GiB)}))
	return p.Perm(i18n.Permanent)
}

// lifecycle is one run of suspend, unsuspend, terminate or change-plan: what its precheck
// found, for the stage after it.
type lifecycle struct {
	*operation.GuestRun
	s   *Provisioner
	res *result
	// suspend: the payload, the mode and the state the service takes.
	suspend suspendPayload
	mode    plans.SuspendMode
	next    string
	// changePlan: the payload and the new plan.
	changePlan changePlanPayload
	plan       plans.Plan
	// gone is set by terminate's precheck when the guest is gone already.
	gone bool
}

// The step lists of the lifecycle's actions (R27): a precheck that only reads, then the change.
var (
	suspendSteps    = []executor.Step[*lifecycle]{{Stage: StagePrecheck, Run: precheckSuspend}, {Stage: StageSuspend, Run: suspendGuest}}
	unsuspendSteps  = []executor.Step[*lifecycle]{{Stage: StagePrecheck, Run: precheckGuest}, {Stage: StageUnsuspend, Run: unsuspendGuest}}
	terminateSteps  = []executor.Step[*lifecycle]{{Stage: StagePrecheck, Run: precheckTerminate}, {Stage: StageDestroy, Run: destroyGuest}, {Stage: StageRelease, Run: releaseService}, {Stage: StageDeleteBackups, Run: deleteBackupsOnTerminate}}
	changePlanSteps = []executor.Step[*lifecycle]{{Stage: StagePrecheck, Run: precheckChangePlan}, {Stage: StageApply, Run: applyPlan},
		{Stage: StageAllocate, Run: readdress}}
)

// lifecycleRun runs one of suspend, unsuspend, terminate and change-plan in the flows' run
// frame (operation.RunOnService), its payload read into what payload returns, when not nil.
func (s *Provisioner) lifecycleRun(ctx context.Context, r *executor.Run, steps []executor.Step[*lifecycle],
	payload func(*lifecycle) any) error {
	l := &lifecycle{s: s, res: &result{}}
	l.GuestRun = &operation.GuestRun{Res: &l.res.Result}
	var p any
	if payload != nil {
		p = payload(l)
	}
	return operation.RunOnService(ctx, s.db, r, l.GuestRun, p, steps, l, func() any { return l.res })
}

func (s *Provisioner) runSuspend(ctx context.Context, r *executor.Run) error {
	return s.lifecycleRun(ctx, r, suspendSteps, func(l *lifecycle) any { return &l.suspend })
}

func (s *Provisioner) runUnsuspend(ctx context.Context, r *executor.Run) error {
	return s.lifecycleRun(ctx, r, unsuspendSteps, nil)
}

// runTerminate checks the stamp (R39), protection and locks, then stops and destroys the guest
// (R17), releases its addresses and keeps the row as terminated. A guest that is already gone
// is not an error: the rest still runs.
func (s *Provisioner) runTerminate(ctx context.Context, r *executor.Run) error {
	return s.lifecycleRun(ctx, r, terminateSteps, nil)
}

func (s *Provisioner) runChangePlan(ctx context.Context, r *executor.Run) error {
	return s.lifecycleRun(ctx, r, changePlanSteps, func(l *lifecycle) any { return &l.changePlan })
}

// precheckGuest reads the service's guest (R39) and refuses a locked one.
func precheckGuest(ctx context.Context, l *lifecycle) error { return l.Precheck(ctx, l.s.guests) }

// precheckSuspend decides what the suspend does: nothing when the service is already where it
// would take it; otherwise the guest is read and the mode chosen (the kind's, R15).
func precheckSuspend(ctx context.Context, l *lifecycle) error {
	l.next = models.ServiceSuspended
	switch {
	case l.suspend.Enforce == ReasonDrift:
		if l.Svc.State != models.ServiceSuspended && l.Svc.State != models.ServiceLimited {
			l.res.NoOp = true // unsuspended meanwhile: nothing to repair
			return executor.ErrDone
		}
		l.next = l.Svc.State
	case l.suspend.Enforce == ReasonBandwidth:
		if l.Svc.State != models.ServiceActive {
			l.res.NoOp = true
			return executor.ErrDone
		}
		l.next = models.ServiceLimited
	case l.Svc.State == models.ServiceSuspended:
		l.res.NoOp = true
		return executor.ErrDone
	}
	if err := precheckGuest(ctx, l); err != nil {
		return err
	}
	plan, err := l.s.plans.Get(ctx, l.Svc.Plan)
	if err != nil {
		return err
	}
	l.mode = plans.SuspendStop
	if sm, ok := l.T.Mod.(kinds.SuspendModer); ok {
		l.mode = sm.SuspendMode(plan)
	}
	return nil
}

func suspendGuest(ctx context.Context, l *lifecycle) error {
	mode := l.mode
	if l.suspend.Enforce != "" {
		// Limits and drift repair only ever stop: never a pause, for any kind (R16).
		mode = plans.SuspendStop
	}
	if err := l.T.Mod.Suspend(ctx, l.T.Guest, mode, l.Rep); err != nil {
		return err
	}
	if l.suspend.Enforce != "" {
		l.s.metrics.enforcements.WithLabelValues(l.suspend.Enforce, l.Svc.GuestType).Inc()
	}
	return l.s.db.UpdateService(ctx, l.Svc.Key(), map[string]any{"state": l.next})
}

func unsuspendGuest(ctx context.Context, l *lifecycle) error {
	if err := l.T.Mod.Unsuspend(ctx, l.T.Guest, l.Rep); err != nil {
		return err
	}
	return l.s.db.UpdateService(ctx, l.Svc.Key(), map[string]any{"state": models.ServiceActive})
}

// precheckTerminate reads the guest (a gone guest is no refusal) and refuses a protected or
// locked one.
func precheckTerminate(ctx context.Context, l *lifecycle) error {
	if l.Svc.State == models.ServiceTerminated {
		l.res.NoOp = true
		return executor.ErrDone
	}
	t, err := l.s.guests.Inspect(ctx, l.Svc)
	l.gone = operation.IsMissing(err)
	if err != nil && !l.gone {
		return err
	}
	if !l.gone {
		if b := operation.LockBlockers(t.In, operation.ProtectionBlocks); len(b) > 0 {
			return blocked(b...).Perm(i18n.Temporary)
		}
	}
	l.T = t
	return nil
}

func destroyGuest(ctx context.Context, l *lifecycle) error {
	if l.T == nil && !l.gone {
		// Resumed from the facts (R58): the precheck did not run in this run; read the guest.
		t, err := l.s.guests.Inspect(ctx, l.Svc)
		if l.gone = operation.IsMissing(err); err != nil && !l.gone {
			return err
		}
		l.T = t
	}
	if l.gone {
		return nil
	}
	if err := l.T.Mod.Destroy(ctx, l.T.Guest, l.Rep); err != nil {
		operation.SetState(l.s.db, l.s.log, l.Svc.Key(), models.ServiceNeedsReconciliation)
		return err
	}
	return nil
}

// releaseService frees the service's addresses, which turns its PTR records into pending
// removals in the same transaction (R55), and marks it terminated. The removals are tried once
// here, bounded by rdnsInlineTimeout; PowerDNS being down never fails the terminate, the sync
// job retries them.
func releaseService(ctx context.Context, l *lifecycle) error {
	if l.s.addrs != nil {
		if err := l.s.addrs.Release(ctx, l.Svc.Key()); err != nil {
			return fmt.Errorf("release addresses: %w", err)
		}
	}
	if err := l.s.db.UpdateService(ctx, l.Svc.Key(), map[string]any{"state": models.ServiceTerminated}); err != nil {
		return err
	}
	if l.s.rdns != nil {
		rctx, cancel := context.WithTimeout(ctx, rdnsInlineTimeout)
		l.s.rdns.SyncService(rctx, l.Svc.Key())
		cancel()
	}
	return nil
}

// rdnsInlineTimeout bounds terminate's own attempt at removing the service's PTR records.
const rdnsInlineTimeout = 5 * time.Second

// precheckChangePlan checks the new plan against the guest: the service's kind offered, a disk
// no smaller than the guest's (R23), no lock.
func precheckChangePlan(ctx context.Context, l *lifecycle) error {
	np, err := l.s.plans.Get(ctx, l.changePlan.Plan)
	if err != nil {
		return err
	}
	if !np.Offers(plans.GuestType(l.Svc.GuestType)) {
		return i18n.NewProblem(http.StatusUnprocessableEntity, i18n.CodeGuestTypeNotOffered).
			With("guest_type", l.Svc.GuestType).Perm(i18n.Permanent)
	}
	t, err := l.s.guests.Inspect(ctx, l.Svc)
	if err != nil {
		return err
	}
	if want := int64(np.DiskGiB) * kinds.GiB; t.In.DiskBytes > want {
		return shrinkBlocker(t.In.DiskBytes, want)
	}
	if b := operation.LockBlockers(t.In, operation.ProtectionIgnored); len(b) > 0 {
		return blocked(b...).Perm(i18n.Temporary)
	}
	l.T, l.plan = t, np
	return nil
}

// readdress gives the service the addresses of the new plan's pools (idempotent per pool),
// releases those of pools it no longer names, and writes them onto the guest (R54). Nothing
// happens when neither plan names a pool.
func readdress(ctx context.Context, l *lifecycle) error {
	np := l.plan
	old, err := l.s.plans.Get(ctx, l.Svc.Plan)
	named := func(p plans.Plan) bool { return p.IPPool != nil || p.IP6Pool != nil }
	if err == nil && !named(old) && !named(np) {
		return nil
	}
	rd, ok := l.T.Mod.(kinds.Readdresser)
	if !ok || l.s.addrs == nil {
		return nil
	}
	a, err := kinds.PlanAddress(ctx, np, func(ctx context.Context, pool string) (kinds.Address, error) {
		return l.s.addrs.Allocate(ctx, pool, l.Svc.Key())
	})
	if err != nil {
		return fmt.Errorf("allocate address: %w", err)
	}
	var keep []string
	for _, p := range []*string{np.IPPool, np.IP6Pool} {
		if p != nil {
			keep = append(keep, *p)
		}
	}
	if _, err := l.s.db.ReleaseIPsExcept(ctx, l.Svc.Key(), keep); err != nil {
		return err
	}
	return rd.Readdress(ctx, l.T.Guest, np, a)
}

func applyPlan(ctx context.Context, l *lifecycle) error {
	if err := l.T.Mod.ChangePlan(ctx, l.T.Guest, l.plan, l.Rep); err != nil {
		return err
	}
	return l.s.db.UpdateService(ctx, l.Svc.Key(), map[string]any{"plan": l.plan.Code})
}

// deleteBackupsOnTerminate deletes the service's backups after its guest is destroyed when the
// plan says delete (R42), on the node the guest was found on; the protected ones stay and are
// named in the result.
func deleteBackupsOnTerminate(ctx context.Context, l *lifecycle) error {
	node := ""
	if l.T != nil {
		node = l.T.Guest.Node
	}
	kept, err := l.s.backups.DeleteOnTerminate(ctx, l.Svc, node, l.Rep)
	l.res.BackupsKept = kept
	return err
}
