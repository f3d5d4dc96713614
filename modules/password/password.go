package password

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"pvebill/i18n"
	"pvebill/models"
	"pvebill/modules/executor"
	"pvebill/modules/kinds"
	"pvebill/modules/operation"
	"pvebill/modules/plans"
)

// ActionPassword is the operation's action, as stored in operations.action.
const ActionPassword = "password"

// The stages of a password change, in order (R27).
const (
	StagePrecheck                   = operation.StagePrecheck
	StageSetPassword executor.Stage = "set_password"
)

// secretPassword names the password in the executor's in-memory secrets.
const secretPassword = "root_password"

// Request is the body of POST /v1/services/{service_id}/password. Proxmox takes 5 to 1024
// characters; pvebill the create's 5 to 128.
type Request struct {
	RootPassword string `json:"root_password" validate:"required,min=5,max=128"`
}

// Guests finds a service's guest, checked to be the service's (R39): the provisioner.
type Guests interface {
	CheckedGuest(ctx context.Context, svc *models.Service) (kinds.Module, kinds.Guest, error)
}

// Options are what a Service is built from; every field is required.
type Options struct {
	DB      *models.DB
	Plans   *plans.Service
	Guests  Guests
	Secrets *executor.Secrets
	Log     *slog.Logger
}

// Service accepts password changes and runs them.
type Service struct{ o Options }

// New returns the service.
func New(o Options) *Service { return &Service{o: o} }

// Actions are the executor actions of the package.
func (s *Service) Actions() []executor.Action {
	return []executor.Action{{Name: ActionPassword, Stages: executor.StagesOf(steps), Run: s.run}}
}

// Change queues a password change of the client's service. Everything that can refuse it is
// checked first, and nothing but the agent's ping reaches Proxmox on a refusal: the service's
// state, the plan's capability for its guest type (a container's is a permanent refusal), the
// guest's stamp (R39) and its agent. The password goes into this replica's memory only, and the
// operation is pinned to this replica (R26).
func (s *Service) Change(ctx context.Context, clientID, serviceID string, req Request) (*models.Operation, error) {
	svc, err := s.o.DB.GetClientService(ctx, clientID, serviceID)
	if errors.Is(err, models.ErrNotFound) {
		return nil, i18n.NewProblem(http.StatusNotFound, i18n.CodeNotFound)
	}
	if err != nil {
		return nil, err
	}
	if err := stateRefusal(svc); err != nil {
		return nil, err
	}
	if err := s.offered(ctx, svc); err != nil {
		return nil, err
	}
	if _, _, err := s.ready(ctx, svc); err != nil {
		return nil, err
	}
	op := &models.Operation{ID: models.NewID(), ServiceID: serviceID, ClientID: clientID, Action: ActionPassword, Payload: "{}"}
	// The secret is in place before the row exists: a worker may claim it at once.
	s.o.Secrets.Put(op.ID, map[string]string{secretPassword: req.RootPassword})
	s.o.Secrets.Pin(op)
	if err := s.o.DB.InsertOperation(ctx, op); err != nil {
		s.o.Secrets.Drop(op.ID)
		return nil, fmt.Errorf("write password operation: %w", err)
	}
	return op, nil
}

// stateRefusal refuses a service awaiting reconciliation (R28), one without a guest and a
// suspended one (its guest does not run).
func stateRefusal(svc *models.Service) error {
	switch svc.State {
	case models.ServiceNeedsReconciliation:
		return i18n.NewProblem(http.StatusConflict, i18n.CodeServiceLocked).Perm(i18n.Temporary)
	case models.ServiceTerminated, models.ServiceFailed:
		return operation.Missing()
	case models.ServiceSuspended, models.ServiceLimited:
		return i18n.NewProblem(http.StatusConflict, i18n.CodeServiceSuspended).Perm(i18n.Temporary).
			With("state", svc.State)
	}
	return nil
}

// offered is the plan's password capability for the service's guest type (R10, R56).
func (s *Service) offered(ctx context.Context, svc *models.Service) error {
	p, err := s.o.Plans.Get(ctx, svc.Plan)
	if err != nil {
		return err
	}
	p.Cluster = svc.Cluster
	set, ok := s.o.Plans.Capabilities(p)[plans.GuestType(svc.GuestType)]
	if !ok {
		return nil // the plan no longer offers the guest's type: the kind decides (ready)
	}
	return plans.Refused(plans.CapPassword, set[plans.CapPassword])
}

// ready finds the service's guest (R39) and pings its agent: the kind's PasswordSetter and the
// guest, or the refusal.
func (s *Service) ready(ctx context.Context, svc *models.Service) (kinds.PasswordSetter, kinds.Guest, error) {
	mod, g, err := s.o.Guests.CheckedGuest(ctx, svc)
	if err != nil {
		return nil, g, operation.ProblemOf(err)
	}
	setter, ok := mod.(kinds.PasswordSetter)
	if !ok {
		return nil, g, operation.NotAvailable()
	}
	if err := setter.AgentReady(ctx, g); err != nil {
		return nil, g, agentProblem(err)
	}
	return setter, g, nil
}

// agentProblem is a guest agent call's failure as the API answers it: an agent that does not
// answer is capability_refused, temporary, with the reason (R56).
func agentProblem(err error) error {
	if !errors.Is(err, kinds.ErrAgentNotRunning) {
		return operation.ProblemOf(err)
	}
	refusal := plans.Refused(plans.CapPassword, plans.State{Refusal: i18n.Temporary, Reason: plans.ReasonGuestAgentNotRunning})
	var p *i18n.Problem
	if errors.As(refusal, &p) {
		return p.Wrap(err) // the cause is logged, never shown
	}
	return refusal
}
