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

// The customer's power actions (R40), as stored in operations.action.
const (
	ActionStart    = "start"
	ActionStop     = "stop"
	ActionShutdown = "shutdown"
	ActionReboot   = "reboot"
)

// StagePower is the stage that sends the power action.
const StagePower executor.Stage = "power"

// The bounds of a shutdown's time-out (docs/api.md, Power).
const (
	DefaultShutdownSeconds = 120
	MinShutdownSeconds     = 10
	MaxShutdownSeconds     = 600
)

// ShutdownRequest is the body of POST /v1/services/{id}/shutdown.
type ShutdownRequest struct {
	TimeoutSeconds *int `json:"timeout_seconds" validate:"omitempty,min=10,max=600"`
}

type powerPayload struct {
	TimeoutSeconds int `json:"timeout_seconds,omitempty"`
}

// powerSteps is the step list of every power action: a precheck that only reads (R39), then
// the action itself.
var powerSteps = []executor.Step[*lifecycle]{{Stage: StagePrecheck, Run: precheckPower}, {Stage: StagePower, Run: powerGuest}}

// Start queues a start; a suspended or limited service refuses it (R40).
func (s *Provisioner) Start(ctx context.Context, clientID, serviceID string) (*models.Operation, error) {
	return s.enqueuePower(ctx, clientID, serviceID, ActionStart, powerPayload{})
}

// Stop queues a hard stop.
func (s *Provisioner) Stop(ctx context.Context, clientID, serviceID string) (*models.Operation, error) {
	return s.enqueuePower(ctx, clientID, serviceID, ActionStop, powerPayload{})
}

// Shutdown queues a graceful shutdown bounded by the request's time-out (DefaultShutdownSeconds
// when absent); it never turns into a stop.
func (s *Provisioner) Shutdown(ctx context.Context, clientID, serviceID string, req ShutdownRequest) (*models.Operation, error) {
	p := powerPayload{TimeoutSeconds: DefaultShutdownSeconds}
	if req.TimeoutSeconds != nil {
		p.TimeoutSeconds = *req.TimeoutSeconds
	}
	return s.enqueuePower(ctx, clientID, serviceID, ActionShutdown, p)
}

// Reboot queues a reboot; a suspended or limited service refuses it (R40).
func (s *Provisioner) Reboot(ctx context.Context, clientID, serviceID string) (*models.Operation, error) {
	return s.enqueuePower(ctx, clientID, serviceID, ActionReboot, powerPayload{})
}

// enqueuePower refuses start and reboot of a suspended or limited service before an operation
// is written (the run checks again: a suspend may come in between).
func (s *Provisioner) enqueuePower(ctx context.Context, clientID, serviceID, action string, p powerPayload) (*models.Operation, error) {
	svc, err := s.guests.Service(ctx, clientID, serviceID)
	if err != nil {
		return nil, err
	}
	if err := refuseSuspended(svc, action); err != nil {
		return nil, err
	}
	if action == ActionReboot && s.seenStopped(ctx, svc) {
		return nil, notRunning()
	}
	return s.guests.Enqueue(ctx, clientID, serviceID, action, p)
}

// seenStopped reports whether the cluster's guest listing, the request's one Proxmox read,
// shows the service's guest stopped: a reboot of it is refused before an operation is written
// (R40). A guest not found or a failed read is the run's to judge.
func (s *Provisioner) seenStopped(ctx context.Context, svc *models.Service) bool {
	if svc.VMID == nil {
		return false
	}
	cl, err := s.clusters.Get(svc.Cluster)
	if err != nil {
		return false
	}
	at, err := s.mods.Locate(ctx, cl, *svc.VMID)
	return err == nil && at.Found && at.Kind == plans.GuestType(svc.GuestType) && !at.Running
}

// refuseSuspended is the refusal of a start or reboot while the service is suspended or
// limited: a suspension belongs to the billing system (R40, R16).
func refuseSuspended(svc *models.Service, action string) error {
	if action != ActionStart && action != ActionReboot {
		return nil
	}
	if svc.State != models.ServiceSuspended && svc.State != models.ServiceLimited {
		return nil
	}
	return i18n.NewProblem(http.StatusConflict, i18n.CodeServiceSuspended).Perm(i18n.Temporary).
		With("state", svc.State)
}

func (s *Provisioner) runPower(ctx context.Context, r *executor.Run) error {
	return s.lifecycleRun(ctx, r, powerSteps, func(l *lifecycle) any { return &l.power })
}

// precheckPower refuses what the service's state forbids, checks the guest's stamp and locks
// (R39), and ends as a no-op when the guest is already where the action would take it.
func precheckPower(ctx context.Context, l *lifecycle) error {
	action := l.r.Op.Action
	if err := refuseSuspended(l.svc, action); err != nil {
		return err
	}
	if err := precheckGuest(ctx, l); err != nil {
		return err
	}
	if _, ok := l.t.Mod.(kinds.PowerController); !ok {
		return operation.NotAvailable()
	}
	running := l.t.In.Running
	switch {
	case action == ActionReboot && !running:
		return notRunning()
	case action == ActionStart && running, (action == ActionStop || action == ActionShutdown) && !running:
		l.res.NoOp = true
		return executor.ErrDone
	}
	return nil
}

// powerGuest sends the action through the kind's module, which waits for the task and reads
// the power state back (R11).
func powerGuest(ctx context.Context, l *lifecycle) error {
	pc, _ := l.t.Mod.(kinds.PowerController)
	var err error
	switch l.r.Op.Action {
	case ActionStart:
		err = l.t.Mod.Start(ctx, l.t.Guest, l.rep)
	case ActionStop:
		err = pc.Stop(ctx, l.t.Guest, l.rep)
	case ActionShutdown:
		err = pc.Shutdown(ctx, l.t.Guest, shutdownTimeout(l.power.TimeoutSeconds), l.rep)
	case ActionReboot:
		err = pc.Reboot(ctx, l.t.Guest, l.rep)
	default:
		err = fmt.Errorf("unknown power action %q", l.r.Op.Action)
	}
	switch {
	case errors.Is(err, kinds.ErrShutdownTimeout):
		return i18n.NewProblem(http.StatusConflict, i18n.CodeShutdownTimeout).Perm(i18n.Temporary).
			With("timeout", fmt.Sprint(int(shutdownTimeout(l.power.TimeoutSeconds).Seconds()))).Wrap(err)
	case errors.Is(err, kinds.ErrGuestNotRunning):
		return notRunning().Wrap(err)
	}
	return err
}

// shutdownTimeout is a payload's time-out, bounded (a stored payload is trusted no further
// than a request).
func shutdownTimeout(sec int) time.Duration {
	switch {
	case sec == 0:
		sec = DefaultShutdownSeconds
	case sec < MinShutdownSeconds:
		sec = MinShutdownSeconds
	case sec > MaxShutdownSeconds:
		sec = MaxShutdownSeconds
	}
	return time.Duration(sec) * time.Second
}

func notRunning() *i18n.Problem {
	return i18n.NewProblem(http.StatusConflict, i18n.CodeGuestNotRunning).Perm(i18n.Temporary)
}
