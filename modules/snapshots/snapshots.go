// Package snapshots lists, takes, deletes and rolls back a service's snapshots (R44) through the
// kinds that have them (kinds.Snapshotter), within the plan's snapshots_max. A rollback erases
// the guest's current state: past its start, the facts decide what is left to do (R58).
package snapshots

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"pvebill/i18n"
	"pvebill/models"
	"pvebill/modules/executor"
	"pvebill/modules/kinds"
	"pvebill/modules/operation"
	"pvebill/modules/plans"
	"pvebill/modules/pve/pveconf"
)

// The snapshot actions (R44), as stored in operations.action.
const (
	ActionSnapshotCreate   = "snapshot_create"
	ActionSnapshotDelete   = "snapshot_delete"
	ActionSnapshotRollback = "snapshot_rollback"
)

// StageSnapshot is the stage that sends the snapshot call, after operation.StagePrecheck.
const StageSnapshot executor.Stage = "snapshot"

// SnapshotRequest is the body of POST /v1/services/{id}/snapshots. The name follows Proxmox's
// rules (pveconf.ValidSnapshotName), checked before anything is sent.
type SnapshotRequest struct {
	Name        string  `json:"name" validate:"required,max=40"`
	Description *string `json:"description" validate:"omitempty,max=255"`
}

// RollbackRequest is the body of POST /v1/services/{id}/snapshots/{name}/rollback: the
// snapshot's name again, as the confirmation of a destructive action.
type RollbackRequest struct {
	Confirm string `json:"confirm" validate:"required,max=64"`
}

// SnapshotView is one snapshot as the API answers it.
type SnapshotView struct {
	Name        string    `json:"name"`
	Description string    `json:"description"`
	CreatedAt   time.Time `json:"created_at"`
	Parent      *string   `json:"parent"`
}

// SnapshotList is the answer of GET /v1/services/{id}/snapshots: the snapshots oldest first,
// and the plan's limit.
type SnapshotList struct {
	Snapshots    []SnapshotView `json:"snapshots"`
	SnapshotsMax int            `json:"snapshots_max"`
}

type snapshotPayload struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// The step lists of the snapshot actions: a precheck that reads the guest (R39) and its
// snapshots, then the call.
var (
	snapshotCreateSteps   = []executor.Step[*run]{{Stage: operation.StagePrecheck, Run: precheckSnapshot}, {Stage: StageSnapshot, Run: createSnapshot}}
	snapshotDeleteSteps   = []executor.Step[*run]{{Stage: operation.StagePrecheck, Run: precheckSnapshot}, {Stage: StageSnapshot, Run: deleteSnapshot}}
	snapshotRollbackSteps = []executor.Step[*run]{{Stage: operation.StagePrecheck, Run: precheckSnapshot}, {Stage: StageSnapshot, Run: rollbackSnapshot}}
)

// Options configure a Service; every field is required.
type Options struct {
	DB     *models.DB
	Plans  *plans.Service
	Guests *operation.Guests
}

// Service queues and runs the snapshot actions.
type Service struct {
	db     *models.DB
	plans  *plans.Service
	guests *operation.Guests
}

// New builds the service.
func New(o Options) *Service { return &Service{db: o.DB, plans: o.Plans, guests: o.Guests} }

// run is one run of a snapshot action.
type run struct {
	*operation.GuestRun
	s    *Service
	snap snapshotPayload
}

// Actions are the executor actions of the snapshot flow.
func (s *Service) Actions() []executor.Action {
	return []executor.Action{
		{Name: ActionSnapshotCreate, Stages: executor.StagesOf(snapshotCreateSteps), Run: s.runSnapshot(snapshotCreateSteps)},
		{Name: ActionSnapshotDelete, Stages: executor.StagesOf(snapshotDeleteSteps), Run: s.runSnapshot(snapshotDeleteSteps)},
		// A rollback erases the guest's current state: past its start the facts decide (R58).
		{Name: ActionSnapshotRollback, Stages: executor.StagesOf(snapshotRollbackSteps), Irreversible: StageSnapshot,
			Run: s.runSnapshot(snapshotRollbackSteps), Resolver: executor.ResolverFunc(s.resolveRollback)},
	}
}

func (s *Service) runSnapshot(steps []executor.Step[*run]) func(context.Context, *executor.Run) error {
	return func(ctx context.Context, r *executor.Run) error {
		x := &run{GuestRun: &operation.GuestRun{}, s: s}
		return operation.RunOnService(ctx, s.db, r, x.GuestRun, &x.snap, steps, x, nil)
	}
}

// Snapshots lists the service's snapshots, oldest first, without Proxmox's "current" entry.
// Listing needs the kind to have snapshots, not the plan to offer them: snapshots taken under an
// earlier plan stay visible (and deletable).
func (s *Service) Snapshots(ctx context.Context, clientID, serviceID string) (SnapshotList, error) {
	svc, err := s.snapshotService(ctx, clientID, serviceID)
	if err != nil {
		return SnapshotList{}, err
	}
	plan, err := s.plans.Get(ctx, svc.Plan)
	if err != nil {
		return SnapshotList{}, err
	}
	list, err := s.guestSnapshots(ctx, svc)
	if err != nil {
		return SnapshotList{}, err
	}
	out := SnapshotList{Snapshots: make([]SnapshotView, 0, len(list)), SnapshotsMax: plan.SnapshotsMax}
	for _, sn := range list {
		v := SnapshotView{Name: sn.Name, Description: sn.Description, CreatedAt: sn.Time}
		if sn.Parent != "" {
			p := sn.Parent
			v.Parent = &p
		}
		out.Snapshots = append(out.Snapshots, v)
	}
	return out, nil
}

// CreateSnapshot queues a snapshot. The name is checked against Proxmox's rules, the plan's
// capability, the guest's real snapshot count against snapshots_max and the names it has, all
// before an operation is written; nothing is sent to Proxmox on a refusal (R44).
func (s *Service) CreateSnapshot(ctx context.Context, clientID, serviceID string, req SnapshotRequest) (*models.Operation, error) {
	if !pveconf.ValidSnapshotName(req.Name) {
		return nil, i18n.Validation(i18n.FieldError{Field: "name", Code: i18n.FieldPattern})
	}
	svc, err := s.snapshotService(ctx, clientID, serviceID)
	if err != nil {
		return nil, err
	}
	plan, err := s.snapshotAllowed(ctx, svc)
	if err != nil {
		return nil, err
	}
	list, err := s.guestSnapshots(ctx, svc)
	if err != nil {
		return nil, err
	}
	if err := createRefusal(list, req.Name, plan.SnapshotsMax); err != nil {
		return nil, err
	}
	p := snapshotPayload{Name: req.Name}
	if req.Description != nil {
		p.Description = *req.Description
	}
	return s.guests.EnqueueFor(ctx, svc, ActionSnapshotCreate, p)
}

// DeleteSnapshot queues the delete of an existing snapshot (404 not_found otherwise).
func (s *Service) DeleteSnapshot(ctx context.Context, clientID, serviceID, name string) (*models.Operation, error) {
	svc, err := s.snapshotService(ctx, clientID, serviceID)
	if err != nil {
		return nil, err
	}
	if err := s.snapshotExists(ctx, svc, name); err != nil {
		return nil, err
	}
	return s.guests.EnqueueFor(ctx, svc, ActionSnapshotDelete, snapshotPayload{Name: name})
}

// RollbackSnapshot queues a rollback, which is destructive: the confirmation must repeat the
// name (422 otherwise, checked first, so a wrong one reaches nothing), the plan must offer
// snapshots and the snapshot must exist.
func (s *Service) RollbackSnapshot(ctx context.Context, clientID, serviceID, name string, req RollbackRequest) (*models.Operation, error) {
	if req.Confirm != name {
		return nil, i18n.Validation(i18n.FieldError{Field: "confirm", Code: i18n.FieldOneOf, Param: name})
	}
	svc, err := s.snapshotService(ctx, clientID, serviceID)
	if err != nil {
		return nil, err
	}
	if _, err := s.snapshotAllowed(ctx, svc); err != nil {
		return nil, err
	}
	if err := s.snapshotExists(ctx, svc, name); err != nil {
		return nil, err
	}
	return s.guests.EnqueueFor(ctx, svc, ActionSnapshotRollback, snapshotPayload{Name: name})
}

// snapshotService reads a service the client may see that has a guest whose kind can snapshot.
func (s *Service) snapshotService(ctx context.Context, clientID, serviceID string) (*models.Service, error) {
	svc, err := s.guests.Service(ctx, clientID, serviceID)
	if err != nil {
		return nil, err
	}
	if svc.State == models.ServiceTerminated || svc.State == models.ServiceFailed {
		return nil, operation.Missing()
	}
	mod, err := s.guests.Module(svc.GuestType)
	if err != nil {
		return nil, err
	}
	if _, ok := mod.(kinds.Snapshotter); !ok {
		return nil, plans.Refused(plans.CapSnapshot, plans.State{Refusal: i18n.Temporary, Reason: plans.ReasonNotYetAvailable})
	}
	return svc, nil
}

// snapshotAllowed is the plan's snapshot capability for the service's guest type:
// capability_refused, with its permanence and reason, when the plan refuses it.
func (s *Service) snapshotAllowed(ctx context.Context, svc *models.Service) (plans.Plan, error) {
	plan, err := s.plans.Get(ctx, svc.Plan)
	if err != nil {
		return plans.Plan{}, err
	}
	st := s.plans.Capabilities(plan)[plans.GuestType(svc.GuestType)][plans.CapSnapshot]
	return plan, plans.Refused(plans.CapSnapshot, st)
}

// guestSnapshots checks the guest (R39) and lists its snapshots.
func (s *Service) guestSnapshots(ctx context.Context, svc *models.Service) ([]kinds.Snapshot, error) {
	t, err := s.guests.Inspect(ctx, svc)
	if err != nil {
		return nil, err
	}
	sn, _ := t.Mod.(kinds.Snapshotter)
	return sn.Snapshots(ctx, t.Guest)
}

func (s *Service) snapshotExists(ctx context.Context, svc *models.Service, name string) error {
	list, err := s.guestSnapshots(ctx, svc)
	if err != nil {
		return err
	}
	if !hasSnapshot(list, name) {
		return i18n.NewProblem(http.StatusNotFound, i18n.CodeNotFound)
	}
	return nil
}

func hasSnapshot(list []kinds.Snapshot, name string) bool {
	for _, sn := range list {
		if sn.Name == name {
			return true
		}
	}
	return false
}

// createRefusal refuses a create whose name is taken, or that would go past limit.
func createRefusal(list []kinds.Snapshot, name string, limit int) error {
	if hasSnapshot(list, name) {
		return i18n.NewProblem(http.StatusConflict, i18n.CodeSnapshotExists).Perm(i18n.Permanent).With("name", name)
	}
	if len(list) >= limit {
		return i18n.NewProblem(http.StatusConflict, i18n.CodeSnapshotLimitReached).Perm(i18n.Temporary).
			With("max", strconv.Itoa(limit))
	}
	return nil
}

// precheckSnapshot checks the guest's stamp and locks (R39), the plan again for a create or a
// rollback (it may have changed since the request), and the snapshot list: a create re-counts
// against snapshots_max, a delete or rollback needs the snapshot.
func precheckSnapshot(ctx context.Context, l *run) error {
	if err := l.Precheck(ctx, l.s.guests); err != nil {
		return err
	}
	action := l.R.Op.Action
	var plan plans.Plan
	if action != ActionSnapshotDelete {
		var err error
		if plan, err = l.s.snapshotAllowed(ctx, l.Svc); err != nil {
			return err
		}
	}
	sn, ok := l.T.Mod.(kinds.Snapshotter)
	if !ok {
		return operation.NotAvailable()
	}
	list, err := sn.Snapshots(ctx, l.T.Guest)
	if err != nil {
		return err
	}
	has := hasSnapshot(list, l.snap.Name)
	// A run taken over from a worker that died may find its own change made already (the
	// request refused a taken name, and the service runs one operation at a time).
	if l.R.Resumed && (action == ActionSnapshotCreate && has || action == ActionSnapshotDelete && !has) {
		l.Res.NoOp = true
		return executor.ErrDone
	}
	if action == ActionSnapshotCreate {
		return createRefusal(list, l.snap.Name, plan.SnapshotsMax)
	}
	if !has {
		return i18n.NewProblem(http.StatusNotFound, i18n.CodeNotFound)
	}
	return nil
}

func createSnapshot(ctx context.Context, l *run) error {
	sn, _ := l.T.Mod.(kinds.Snapshotter)
	return sn.CreateSnapshot(ctx, l.T.Guest, l.snap.Name, l.snap.Description, l.Rep)
}

func deleteSnapshot(ctx context.Context, l *run) error {
	sn, _ := l.T.Mod.(kinds.Snapshotter)
	return sn.DeleteSnapshot(ctx, l.T.Guest, l.snap.Name, l.Rep)
}

func rollbackSnapshot(ctx context.Context, l *run) error {
	if l.T == nil {
		// Resumed from the facts (R58): the precheck did not run in this run.
		t, err := l.s.guests.Inspect(ctx, l.Svc)
		if err != nil {
			return err
		}
		l.T = t
	}
	sn, ok := l.T.Mod.(kinds.Snapshotter)
	if !ok {
		return operation.NotAvailable()
	}
	return sn.RollbackSnapshot(ctx, l.T.Guest, l.snap.Name, l.Rep)
}
