package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/robfig/cron/v3"

	"pvebill/models"
	"pvebill/modules/backups"
	"pvebill/modules/plans"
)

// BackupSchedule plans the scheduled backups of every plan with a backup_schedule (R42). Each
// round looks, per plan, for the schedule's activations since the last window it planned; the
// latest is claimed in the leases table (one claim per window across every replica, a
// compare-and-swap like every tick lease) and planned by the replica that won the claim: one
// backup operation per due service, each behind its node's gate. Activations older than that,
// or a latest one found more than Grace after its time, are windows no replica planned while
// pvebill was down: they are reported (metric, log and one audit event a window, written by the
// replica that won the claim) and never run late, so no service is
// backed up twice for one window. A plan first seen starts from now: its past activations are
// neither run nor reported.
type BackupSchedule struct {
	Plans   *plans.Service
	Backups *backups.Service
	DB      *models.DB
	Owner   string
	Log     *slog.Logger
	// Kick wakes the executor once backups are queued.
	Kick func()
	// Grace is how late after its time a window is still planned; default DefaultBackupGrace.
	Grace time.Duration
	// Now is the clock (tests); default time.Now.
	Now func() time.Time
}

// DefaultBackupGrace is how late a backup window is still planned: a replica restarted within
// it plans the window it was down through; later the window is reported missed.
const DefaultBackupGrace = 10 * time.Minute

// maxWindows bounds how many past activations one round counts for a plan.
const maxWindows = 10000

// Name implements Job.
func (BackupSchedule) Name() string { return "backup_schedule" }

// Run implements Job.
func (b BackupSchedule) Run(ctx context.Context) error {
	ps, err := b.Plans.List(ctx)
	if err != nil {
		return fmt.Errorf("list plans: %w", err)
	}
	var first error
	for _, p := range ps {
		if !p.HasBackups() || p.BackupSchedule == "" {
			continue
		}
		if err := b.plan(ctx, p); err != nil {
			b.Log.Error("plan scheduled backups", "plan", p.Code, "err", err)
			if first == nil {
				first = err
			}
		}
	}
	return first
}

func (b BackupSchedule) now() time.Time {
	if b.Now != nil {
		return b.Now()
	}
	return time.Now()
}

// markName is the lease that records the last window of a plan that was planned.
func markName(plan string) string { return "backup_schedule/" + plan }

// plan plans (or reports missed) the windows of one plan since its mark.
func (b BackupSchedule) plan(ctx context.Context, p plans.Plan) error {
	sched, err := cron.ParseStandard(p.BackupSchedule)
	if err != nil {
		return fmt.Errorf("schedule %q: %w", p.BackupSchedule, err)
	}
	now := b.now()
	last, seen, err := b.DB.TickMark(ctx, markName(p.Code))
	if err != nil {
		return err
	}
	if !seen {
		_, _, err := b.DB.ClaimTick(ctx, markName(p.Code), b.Owner, now.Unix(), models.Now(), 0)
		return err
	}
	var due []time.Time
	for a := sched.Next(time.Unix(last, 0)); !a.After(now) && len(due) < maxWindows; a = sched.Next(a) {
		due = append(due, a)
	}
	if len(due) == 0 {
		return nil
	}
	latest := due[len(due)-1]
	epoch, ok, err := b.DB.ClaimTick(ctx, markName(p.Code), b.Owner, latest.Unix(), models.Now(), time.Minute)
	if err != nil || !ok {
		return err // another replica planned this window
	}
	defer func() {
		if err := b.DB.EndTick(context.WithoutCancel(ctx), markName(p.Code), b.Owner, epoch); err != nil {
			b.Log.Warn("end backup window claim", "plan", p.Code, "err", err)
		}
	}()
	grace := b.Grace
	if grace <= 0 {
		grace = DefaultBackupGrace
	}
	missed := due[:len(due)-1]
	if now.Sub(latest) > grace {
		missed = due
	}
	if len(missed) > 0 {
		if _, err := b.Backups.MissedBackups(ctx, p.Code, missed); err != nil {
			return err
		}
	}
	if len(missed) == len(due) {
		return nil
	}
	w, err := b.Backups.PlanBackups(ctx, p, latest)
	b.Log.Info("scheduled backups planned", "plan", p.Code, "window", latest.UTC().Format(time.RFC3339),
		"planned", w.Planned, "skipped", w.Skipped)
	if w.Planned > 0 && b.Kick != nil {
		b.Kick()
	}
	return err
}
