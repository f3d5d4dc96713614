package provision

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"pvebill/models"
	"pvebill/modules/kinds"
	"pvebill/modules/plans"
)

// Enforcement reasons (pvebill_enforcements_total{reason}).
const (
	ReasonBandwidth = "bandwidth"
	ReasonDrift     = "drift"
)

// PeriodStart is the start of the billing period holding t: the calendar month, UTC.
func PeriodStart(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
}

// LimitRound is what one enforcement round did.
type LimitRound struct {
	Checked  int
	Enforced map[string]int // reason → operations queued
}

// EnforceLimits is one round of limit enforcement and drift repair (R16), one
// /cluster/resources call per cluster: it adds each service's network counters to its
// bandwidth in the billing period (a counter below the last one seen means the guest
// restarted: the new counter is all new traffic), queues a stop (state limited, reason
// recorded) for an active service over its plan's allowance, and queues a stop again for a
// suspended or limited guest found running. A container is never paused: the stop follows
// R15. Services with an operation queued or running are left for the next round.
func (s *Provisioner) EnforceLimits(ctx context.Context) (LimitRound, error) {
	round := LimitRound{Enforced: map[string]int{}}
	now := s.now()
	var errs []error
	for _, name := range s.names {
		byID, err := s.guestsSeen(ctx, name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		svcs, err := s.db.EnforceableServices(ctx, name)
		if err != nil {
			return round, err
		}
		for i := range svcs {
			svc := &svcs[i]
			g, ok := byID[*svc.VMID]
			if !ok || string(g.kind) != svc.GuestType {
				continue // gone or replaced: the lifecycle calls refuse it when they come
			}
			round.Checked++
			if err := s.enforce(ctx, svc, g, now, &round); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return round, errors.Join(errs...)
}

// seenGuest is what one cluster listing tells of a guest.
type seenGuest struct {
	kind    plans.GuestType
	status  string
	counter int64
}

// guestsSeen lists a cluster's guests by vmid in one read.
func (s *Provisioner) guestsSeen(ctx context.Context, name string) (map[int]seenGuest, error) {
	rows, err := s.clusters[name].Resources(ctx, "vm")
	if err != nil {
		return nil, fmt.Errorf("list guests of %s: %w", name, err)
	}
	byID := make(map[int]seenGuest, len(rows))
	for _, r := range rows {
		if k := s.mods.KindOf(r.Type); k != "" {
			byID[r.VMID.Int()] = seenGuest{kind: k, status: r.Status, counter: int64(r.NetIn) + int64(r.NetOut)}
		}
	}
	return byID, nil
}

// enforce queues the stop of one service over a limit, unless another operation is open on it.
func (s *Provisioner) enforce(ctx context.Context, svc *models.Service, g seenGuest, now time.Time, round *LimitRound) error {
	reason, err := s.checkService(ctx, svc, g.status, g.counter, now)
	if err != nil || reason == "" {
		return err
	}
	open, err := s.db.HasOpenOperation(ctx, svc.Key())
	if err != nil || open {
		return err
	}
	raw, _ := json.Marshal(suspendPayload{Reason: reason, Enforce: reason})
	op := &models.Operation{ServiceID: svc.ServiceID, ClientID: svc.ClientID, Action: ActionSuspend, Payload: string(raw)}
	if err := s.db.InsertOperation(ctx, op); err != nil {
		return err
	}
	round.Enforced[reason]++
	s.log.Warn("limit enforcement queued a stop", "service_id", svc.ServiceID, "reason", reason,
		"guest_type", svc.GuestType, "operation_id", op.ID)
	return nil
}

// checkService updates a service's bandwidth and says why it must be stopped ("" when not).
func (s *Provisioner) checkService(ctx context.Context, svc *models.Service, status string, counter int64, now time.Time) (string, error) {
	running := status == "running"
	if svc.State == models.ServiceSuspended || svc.State == models.ServiceLimited {
		if running {
			return ReasonDrift, nil
		}
		return "", nil
	}
	plan, err := s.plans.Get(ctx, svc.Plan)
	if err != nil {
		return "", fmt.Errorf("plan of %s: %w", svc.ServiceID, err)
	}
	u, err := s.db.GetBandwidthUsage(ctx, svc.Key())
	if errors.Is(err, models.ErrNotFound) {
		u, err = &models.BandwidthUsage{ClientID: svc.ClientID, ServiceID: svc.ServiceID, PeriodStart: PeriodStart(now)}, nil
	}
	if err != nil {
		return "", err
	}
	if period := PeriodStart(now); !u.PeriodStart.Equal(period) {
		u.PeriodStart, u.Bytes = period, 0
	}
	switch {
	case u.LastCounter == nil:
		// First sight: the counter since the guest started counts (it runs in this period).
		u.Bytes += counter
	case counter >= *u.LastCounter:
		u.Bytes += counter - *u.LastCounter
	default:
		u.Bytes += counter // the counter was reset (a restart)
	}
	u.LastCounter = &counter
	if err := s.db.SaveBandwidthUsage(ctx, u); err != nil {
		return "", fmt.Errorf("save bandwidth of %s: %w", svc.ServiceID, err)
	}
	if plan.BandwidthGiB != nil && u.Bytes > *plan.BandwidthGiB*kinds.GiB {
		return ReasonBandwidth, nil
	}
	return "", nil
}
