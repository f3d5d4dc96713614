// Package power runs the customer's power actions (R40): start, stop, a graceful shutdown
// bounded by a time-out, and reboot, through the kinds that control power
// (kinds.PowerController). Start and reboot of a suspended or limited service are refused: a
// suspension belongs to the billing system (R40, R16).
package power

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
)

// The customer's power actions (R40), as stored in operations.action.
const (
	ActionStart    = "start"
	ActionStop     = "stop"
	ActionShutdown = "shutdown"
	ActionReboot   = "reboot"
)

// StagePower is the stage that sends the power action, after operation.StagePrecheck.
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
var powerSteps = []executor.Step[*run]{{Stage: operation.StagePrecheck, Run: precheckPower}, {Stage: StagePower, Run: powerGuest}}

// Options configure a Service; every field is required.
type Options struct {
	DB     *models.DB
	Guests *operation.Guests
}

// Service queues and runs the power actions.
type Service struct {
	db     *models.DB
	guests *operation.Guests
}

// New builds the service.
func New(o Options) *Service { return &Service{db: o.DB, guests: o.Guests} }

// Actions are the executor actions of the power flow.
func (s *Service) Actions() []executor.Action {
	var out []executor.Action
	for _, name := range []string{ActionStart, ActionStop, ActionShutdown, ActionReboot} {
		out = append(out, executor.Action{Name: name, Stages: executor.StagesOf(powerSteps), Run: s.runPower})
	}
	return out
}

// run is one run of a power action.
type run struct {
	*operation.GuestRun
	s       *Service
	payload powerPayload
}

// Start queues a start; a suspended or limited service refuses it (R40).
func (s *Service) Start(ctx context.Context, clientID, serviceID string) (*models.Operation, error) {
	return s.enqueuePower(ctx, clientID, serviceID, ActionStart, powerPayload{})
}

// Stop queues a hard stop.
func (s *Service) Stop(ctx context.Context, clientID, serviceID string) (*models.Operation, error) {
	return s.enqueuePower(ctx, clientID, serviceID, ActionStop, powerPayload{})
}

// Shutdown queues a graceful shutdown bounded by the request's time-out (DefaultShutdownSeconds
// when absent); it never turns into a stop.
func (s *Service) Shutdown(ctx context.Context, clientID, serviceID string, req ShutdownRequest) (*models.Operation, error) {
	p := powerPayload{TimeoutSeconds: DefaultShutdownSeconds}
	if req.TimeoutSeconds != nil {
		p.TimeoutSeconds = *req.TimeoutSeconds
	}
	return s.enqueuePower(ctx, clientID, serviceID, ActionShutdown, p)
}

// Reboot queues a reboot; a suspended or limited service refuses it (R40).
func (s *Service) Reboot(ctx context.Context, clientID, serviceID string) (*models.Operation, error) {
	return s.enqueuePower(ctx, clientID, serviceID, ActionReboot, powerPayload{})
}

// enqueuePower refuses start and reboot of a suspended or limited service before an operation
// is written (the run checks again: a suspend may come in between).
func (s *Service) enqueuePower(ctx context.Context, clientID, serviceID, action string, p powerPayload) (*models.Operation, error) {
	svc, err := s.guests.Service(ctx, clientID, serviceID)
	if err != nil {
		return nil, err
	}
	if err := refuseSuspended(svc, action); err != nil {
		return nil, err
	}
	if action == ActionReboot && s.seenStopped(ctx, svc) {
		return nil, operation.NotRunning()
	}
	return s.guests.EnqueueFor(ctx, svc, action, p)
}

// seenStopped reports whether the cluster's guest listing, the request's one Proxmox read,
// shows the service's guest stopped: a reboot of it is refused before an operation is written
// (R40). A guest not found or a failed read is the run's to judge.
func (s *Service) seenStopped(ctx context.Context, svc *models.Service) bool {
	t, err := s.guests.Locate(ctx, svc)
	return err == nil && !t.Listed.Running
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

func (s *Service) runPower(ctx context.Context, r *executor.Run) error {
	x := &run{GuestRun: &operation.GuestRun{}, s: s}
	return operation.RunOnService(ctx, s.db, r, x.GuestRun, &x.payload, powerSteps, x, nil)
}

// precheckPower refuses what the service's state forbids, checks the guest's stamp and locks
// (R39), and ends as a no-op when the guest is already where the action would take it.
func precheckPower(ctx context.Context, l *run) error {
	action := l.R.Op.Action
	if err := refuseSuspended(l.Svc, action); err != nil {
		return err
	}
	if err := l.Precheck(ctx, l.s.guests); err != nil {
		return err
	}
	if _, ok := l.T.Mod.(kinds.PowerController); !ok {
		return operation.NotAvailable()
	}
	running := l.T.In.Running
	switch {
	case action == ActionReboot && !running:
		return operation.NotRunning()
	case action == ActionStart && running, (action == ActionStop || action == ActionShutdown) && !running:
		l.Res.NoOp = true
		return executor.ErrDone
	}
	return nil
}

// powerGuest sends the action through the kind's module, which waits for the task and reads
// the power state back (R11).
func powerGuest(ctx context.Context, l *run) error {
	pc, _ := l.T.Mod.(kinds.PowerController)
	var err error
	switch l.R.Op.Action {
	case ActionStart:
		err = l.T.Mod.Start(ctx, l.T.Guest, l.Rep)
	case ActionStop:
		err = pc.Stop(ctx, l.T.Guest, l.Rep)
	case ActionShutdown:
		err = pc.Shutdown(ctx, l.T.Guest, shutdownTimeout(l.payload.TimeoutSeconds), l.Rep)
	case ActionReboot:
		err = pc.Reboot(ctx, l.T.Guest, l.Rep)
	default:
		err = fmt.Errorf("unknown power action %q", l.R.Op.Action)
	}
	switch {
	case errors.Is(err, kinds.ErrShutdownTimeout):
		return i18n.NewProblem(http.StatusConflict, i18n.CodeShutdownTimeout).Perm(i18n.Temporary).
			With("timeout", fmt.Sprint(int(shutdownTimeout(l.payload.TimeoutSeconds).Seconds()))).Wrap(err)
	case errors.Is(err, kinds.ErrGuestNotRunning):
		return operation.NotRunning().Wrap(err)
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
