package migrate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"pvebill/i18n"
	"pvebill/models"
	"pvebill/modules/executor"
	"pvebill/modules/kinds"
	"pvebill/modules/operation"
)

// ActionMigrate is the operation's action, as stored in operations.action.
const ActionMigrate = "migrate"

// The stages of a migration, in order (R27).
const (
	StagePrecheck                  = operation.StagePrecheck
	StageMigrate    executor.Stage = "migrate"
	StageRecordNode executor.Stage = "record_node"
)

// gatePrefix starts the gate a migration holds on its source node.
const gatePrefix = "migrate:"

// Gate is the gate of a node's migrations: one guest leaves a node at a time.
func Gate(cluster, node string) string { return gatePrefix + cluster + "/" + node }

// Request is the body of POST /v1/admin/services/{service_id}/migrate: the node to move to, or
// none for placement's choice.
type Request struct {
	TargetNode string `json:"target_node" validate:"omitempty,max=64,hostname_rfc1123"`
}

// MaintenanceRequest is the body of PUT /v1/admin/clusters/{cluster}/nodes/{node}/maintenance.
type MaintenanceRequest struct {
	Enabled *bool `json:"enabled" validate:"required"`
	Drain   bool  `json:"drain"`
}

// payload is what a migrate operation carries: the node the guest left and the one asked for.
type payload struct {
	Source     string `json:"source"`
	TargetNode string `json:"target_node,omitempty"`
}

// Guests finds the service's guest, checked to be its own (R39, its node recorded where it is
// found).
type Guests interface {
	CheckedGuest(ctx context.Context, svc *models.Service) (kinds.Module, kinds.Guest, error)
}

// Placement is what the package needs of placement: the node a guest moves to (R52).
type Placement interface {
	MigrationTarget(ctx context.Context, svc *models.Service, from, want string) (string, error)
	HasNode(ctx context.Context, cluster, node string) (bool, error)
}

// Options are what a Service is built from; every field is required.
type Options struct {
	DB        *models.DB
	Guests    Guests
	Placement Placement
	Log       *slog.Logger
}

// Service queues and runs migrations and sets nodes' maintenance.
type Service struct{ o Options }

// New returns the service.
func New(o Options) *Service { return &Service{o: o} }

// Actions are the executor actions of the package. A migration holds its worker for minutes.
func (s *Service) Actions() []executor.Action {
	return []executor.Action{{Name: ActionMigrate, Stages: executor.StagesOf(steps), Run: s.run, Long: true}}
}

// Migrate queues the move of a service's guest. The service must hold a guest, found where it
// is and checked to be its own; a target node must be another node of the cluster and a
// candidate for the service's plan, checked now and again when the operation runs.
func (s *Service) Migrate(ctx context.Context, k models.ServiceKey, req Request) (*models.Operation, error) {
	svc, err := s.o.DB.GetService(ctx, k)
	if errors.Is(err, models.ErrNotFound) {
		return nil, i18n.NewProblem(http.StatusNotFound, i18n.CodeNotFound)
	}
	if err != nil {
		return nil, err
	}
	if err := stateRefusal(svc); err != nil {
		return nil, err
	}
	// The guest is found where it is (R53) and checked to be the service's (R39) before a target
	// is judged against its node.
	_, g, err := s.o.Guests.CheckedGuest(ctx, svc)
	if err != nil {
		return nil, operation.ProblemOf(err)
	}
	svc.Node = g.Node
	if req.TargetNode != "" {
		if err := s.checkTarget(ctx, svc, req.TargetNode); err != nil {
			return nil, err
		}
	}
	if op, err := s.o.DB.OpenOperationOf(ctx, k, ActionMigrate); err != nil || op != nil {
		return op, err
	}
	return s.enqueue(ctx, svc, req.TargetNode)
}

// checkTarget refuses a target that is the guest's own node or no node of the cluster
// (validation_failed on target_node), and one that cannot take the guest (no_capacity).
func (s *Service) checkTarget(ctx context.Context, svc *models.Service, target string) error {
	if target == svc.Node {
		return i18n.Validation(i18n.FieldError{Field: "target_node", Code: i18n.FieldInvalid})
	}
	ok, err := s.o.Placement.HasNode(ctx, svc.Cluster, target)
	if err != nil {
		return err
	}
	if !ok {
		return i18n.Validation(i18n.FieldError{Field: "target_node", Code: i18n.FieldOneOf, Param: "the cluster's nodes"})
	}
	_, err = s.o.Placement.MigrationTarget(ctx, svc, svc.Node, target)
	return err
}

// enqueue writes the migrate operation behind the source node's gate.
func (s *Service) enqueue(ctx context.Context, svc *models.Service, target string) (*models.Operation, error) {
	raw, err := json.Marshal(payload{Source: svc.Node, TargetNode: target})
	if err != nil {
		return nil, err
	}
	gate := Gate(svc.Cluster, svc.Node)
	op := &models.Operation{ServiceID: svc.ServiceID, ClientID: svc.ClientID, Action: ActionMigrate,
		Payload: string(raw), Gate: &gate}
	if err := s.o.DB.InsertOperation(ctx, op); err != nil {
		return nil, fmt.Errorf("write migrate operation: %w", err)
	}
	return op, nil
}

// stateRefusal refuses a service awaiting reconciliation (R28) and one without a guest.
func stateRefusal(svc *models.Service) error {
	switch {
	case svc.State == models.ServiceNeedsReconciliation:
		return i18n.NewProblem(http.StatusConflict, i18n.CodeServiceLocked).Perm(i18n.Temporary)
	case svc.State == models.ServiceTerminated, svc.State == models.ServiceFailed, svc.VMID == nil:
		return operation.Missing()
	}
	return nil
}

// SetMaintenance puts a node of a cluster into maintenance or takes it out (R52): placement
// leaves it out from the moment this returns, on every replica. With drain, every service on the
// node gets a migrate operation (one already queued is listed instead of a second); a service
// that cannot be moved now (awaiting reconciliation) is left and logged. An unknown cluster or
// node is not_found.
func (s *Service) SetMaintenance(ctx context.Context, cluster, node string, req MaintenanceRequest) ([]*models.Operation, error) {
	if req.Drain && !*req.Enabled {
		return nil, i18n.Validation(i18n.FieldError{Field: "drain", Code: i18n.FieldNotApplicable})
	}
	known, err := s.o.Placement.HasNode(ctx, cluster, node)
	if err != nil {
		return nil, err
	}
	if !known {
		return nil, i18n.NewProblem(http.StatusNotFound, i18n.CodeNotFound)
	}
	if *req.Enabled {
		err = s.o.DB.SetNodeMaintenance(ctx, models.NodeMaintenance{Cluster: cluster, Node: node, Drain: req.Drain})
	} else {
		err = s.o.DB.EndNodeMaintenance(ctx, cluster, node)
	}
	if err != nil {
		return nil, err
	}
	s.o.Log.Info("node maintenance set", "cluster", cluster, "node", node, "enabled", *req.Enabled, "drain", req.Drain)
	ops := []*models.Operation{}
	if !req.Drain {
		return ops, nil
	}
	return s.drain(ctx, cluster, node, ops)
}

// drain queues a migrate operation for every service recorded on the node.
func (s *Service) drain(ctx context.Context, cluster, node string, ops []*models.Operation) ([]*models.Operation, error) {
	svcs, err := s.o.DB.ServicesOnNode(ctx, cluster, node)
	if err != nil {
		return nil, err
	}
	for i := range svcs {
		svc := &svcs[i]
		op, err := s.o.DB.OpenOperationOf(ctx, svc.Key(), ActionMigrate)
		if err == nil && op == nil {
			op, err = s.enqueue(ctx, svc, "")
		}
		if err != nil {
			return nil, err
		}
		ops = append(ops, op)
	}
	return ops, nil
}
