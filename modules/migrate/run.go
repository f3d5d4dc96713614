package migrate

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"pvebill/i18n"
	"pvebill/models"
	"pvebill/modules/executor"
	"pvebill/modules/kinds"
	"pvebill/modules/operation"
)

// move is one run of a migration: what its stages find, for the stages after.
type move struct {
	s        *Service
	r        *executor.Run
	p        payload
	svc      *models.Service
	mod      kinds.Module
	migrator kinds.Migrator
	g        kinds.Guest
	// wasRunning: the guest ran when this run moved it (read before the move).
	wasRunning bool
	res        result
}

// result is what the operation records: where the guest was and where it is.
type result struct {
	From  string `json:"from"`
	Node  string `json:"node,omitempty"`
	Power string `json:"power,omitempty"`
}

// steps is the one ordered list of the action's stages (R27).
var steps = []executor.Step[*move]{
	{Stage: StagePrecheck, Run: precheck},
	{Stage: StageMigrate, Run: migrateGuest},
	{Stage: StageRecordNode, Run: recordNode},
}

func (s *Service) run(ctx context.Context, r *executor.Run) error {
	m := &move{s: s, r: r}
	if err := r.Payload(&m.p); err != nil {
		return err
	}
	m.res.From = m.p.Source
	err := executor.RunSteps(ctx, r, steps, m)
	r.SetResult(m.res)
	return err
}

// precheck finds the guest (R39; a guest found on another node has its node recorded) and asks
// its kind what would keep it from moving.
func precheck(ctx context.Context, m *move) error {
	if err := m.find(ctx); err != nil {
		return err
	}
	var ok bool
	if m.migrator, ok = m.mod.(kinds.Migrator); !ok {
		return operation.NotAvailable()
	}
	if m.moved() {
		return nil
	}
	blockers, err := m.migrator.MigrationBlockers(ctx, m.g)
	if err != nil {
		return operation.ProblemOf(err)
	}
	if len(blockers) > 0 {
		return refused(strings.Join(blockers, ", "), nil)
	}
	return nil
}

// find reads the service and its guest, checked (R39).
func (m *move) find(ctx context.Context) error {
	svc, err := m.s.o.DB.GetService(ctx, m.r.Op.Key())
	if err != nil {
		return err
	}
	if err := stateRefusal(svc); err != nil {
		return err
	}
	mod, g, err := m.s.o.Guests.CheckedGuest(ctx, svc)
	if err != nil {
		return operation.ProblemOf(err)
	}
	m.svc, m.mod, m.g = svc, mod, g
	return nil
}

// moved reports whether the guest is where the migration was to take it: on the node asked
// for, or, when placement chooses, no longer on the node it was to leave (an earlier run of this
// operation moved it, or someone else did).
func (m *move) moved() bool {
	if m.p.TargetNode != "" {
		return m.g.Node == m.p.TargetNode
	}
	return m.g.Node != m.p.Source
}

// migrateGuest chooses the target and moves the guest there, unless it has left its source
// already. A failure whose outcome Proxmox did not tell (a lost answer, a task that could not be
// read) is settled by finding the guest again: gone from its source, the move happened.
func migrateGuest(ctx context.Context, m *move) error {
	if m.moved() {
		return nil
	}
	target, err := m.s.o.Placement.MigrationTarget(ctx, m.svc, m.g.Node, m.p.TargetNode)
	if err != nil {
		return err
	}
	st, err := m.mod.Status(ctx, m.g)
	if err != nil {
		return operation.ProblemOf(err)
	}
	m.wasRunning = st.Power == "running"
	m.s.o.Log.Info("migrating guest", "service_id", m.svc.ServiceID, "vmid", m.g.VMID, "from", m.g.Node, "to", target)
	err = m.migrator.Migrate(ctx, m.g, target)
	if err == nil {
		// The node is free for its next migration; what is left only reads.
		return m.r.ReleaseGate(ctx)
	}
	if errors.Is(err, kinds.ErrMigrationRefused) {
		return refused(proxmoxReason(err), err)
	}
	if ferr := m.find(ctx); ferr == nil && m.moved() {
		return nil
	}
	return operation.ProblemOf(err)
}

// recordNode records where the guest is now (CheckedGuest writes the node it finds) and, when
// this run moved a running guest, reads its power back there: it must run on the target.
func recordNode(ctx context.Context, m *move) error {
	if err := m.find(ctx); err != nil {
		return err
	}
	m.res.Node = m.g.Node
	if !m.wasRunning {
		return nil
	}
	st, err := m.mod.Status(ctx, m.g)
	if err != nil {
		return operation.ProblemOf(err)
	}
	m.res.Power = st.Power
	if st.Power != "running" {
		return i18n.NewProblem(http.StatusBadGateway, i18n.CodeProxmoxTaskFailed).Perm(i18n.Temporary).
			Wrap(fmt.Errorf("guest %d ran before its migration and is %s on %s", m.g.VMID, st.Power, m.g.Node))
	}
	return nil
}

// refused is migration_refused: permanent, with Proxmox's reason.
func refused(reason string, cause error) error {
	return i18n.NewProblem(http.StatusConflict, i18n.CodeMigrationRefused).Perm(i18n.Permanent).
		With(i18n.ParamReason, reason).Wrap(cause)
}

// proxmoxReason is Proxmox's account of why it refused the migration.
func proxmoxReason(err error) string {
	var r *kinds.MigrationRefusal
	if errors.As(err, &r) {
		return r.Reason
	}
	return err.Error()
}
