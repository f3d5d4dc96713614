package reinstall

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"pvebill/i18n"
	"pvebill/models"
	"pvebill/modules/backups"
	"pvebill/modules/executor"
	"pvebill/modules/kinds"
	"pvebill/modules/operation"
	"pvebill/modules/plans"
)

// The contract of the reinstall flow.
const (
	// ActionPreview is phase 1: an operation that only reads (R18).
	ActionPreview = "reinstall_preview"
	// ActionApply is phase 2: stop, destroy, create, start (R22, R26–R28).
	ActionApply = "reinstall"
	// ActionBackup and ActionRestore are our own backup and restore operations; while one of a
	// service is queued or running, its reinstall is blocked (backup_or_restore_running).
	ActionBackup  = backups.ActionBackup
	ActionRestore = "restore"
	// IrreversibleStage is the first stage whose start means data may be gone.
	IrreversibleStage = StageDestroy
)

// Stages of the two phases, in the order of their step lists (previewSteps, applySteps).
// Whether a failure is destructive is derived from a stage's position by
// executor.Action.Destructive, and nowhere else (R27).
const (
	StageRead      executor.Stage = "read"
	StagePrecheck                 = operation.StagePrecheck
	StageStop      executor.Stage = "stop"
	StageDestroy   executor.Stage = "destroy"
	StageCreate    executor.Stage = "create"
	StageConfigure executor.Stage = "configure"
	StageStart     executor.Stage = "start"
	StageVerify    executor.Stage = "verify"
)

// Secret names of an apply operation (executor.Secrets): transient, never stored (R26).
const (
	secretPassword = "root_password"
	secretSSHKeys  = "ssh_keys"
)

// Addresses gives a service its static address again (idempotent per service: the address it
// already holds), for plans with an ip_pool.
type Addresses interface {
	Allocate(ctx context.Context, pool string, k models.ServiceKey) (kinds.Address, error)
}

// Options configure a Replacer. Every field but Addresses is required; a nil Addresses means
// no address pools are configured (a plan naming one then fails its reinstall).
type Options struct {
	DB        *models.DB
	Plans     *plans.Service
	Modules   *kinds.Registry
	Clusters  []kinds.Cluster
	Addresses Addresses
	Secrets   *executor.Secrets
	Log       *slog.Logger
	// Backups finds a restore's backup among the service's own (R42, R43); nil: no restores.
	Backups Backups
}

// Replacer runs reinstalls (the replacement of a service's guest in place): it writes intents
// and operations, advances intents on read, and provides the executor actions of both phases.
type Replacer struct {
	db       *models.DB
	plans    *plans.Service
	mods     *kinds.Registry
	clusters operation.Clusters
	addrs    Addresses
	secrets  *executor.Secrets
	log      *slog.Logger
	backups  Backups
}

// New builds the replacer.
func New(o Options) *Replacer {
	return &Replacer{db: o.DB, plans: o.Plans, mods: o.Modules, clusters: operation.NewClusters(o.Clusters),
		addrs: o.Addresses, secrets: o.Secrets, log: o.Log, backups: o.Backups}
}

// Actions are the executor actions of both phases.
func (s *Replacer) Actions() []executor.Action {
	return []executor.Action{
		{Name: ActionPreview, Stages: executor.StagesOf(previewSteps), Run: s.runPreview},
		{Name: ActionApply, Stages: executor.StagesOf(applySteps), Irreversible: IrreversibleStage, Run: s.runApply,
			Resolver: executor.ResolverFunc(s.resolveApply)},
		{Name: ActionRestorePreview, Stages: executor.StagesOf(previewSteps), Run: s.runPreview},
		{Name: ActionRestore, Stages: executor.StagesOf(restoreSteps), Irreversible: StageRestore, Run: s.runApply,
			Resolver: executor.ResolverFunc(s.resolveApply)},
	}
}

// PreviewRequest is the body of POST /v1/services/{id}/reinstall/preview.
type PreviewRequest struct {
	OS string `json:"os" validate:"omitempty,max=64"`
}

// ApplyRequest is the body of POST /v1/services/{id}/reinstall. The root password and the keys
// are transient (R26).
type ApplyRequest struct {
	IntentID      string         `json:"intent_id" validate:"required,max=36"`
	Confirmations []Confirmation `json:"confirmations" validate:"required,max=600,dive"`
	RootPassword  string         `json:"root_password" validate:"omitempty,min=5,max=128"`
	SSHKeys       []string       `json:"ssh_keys" validate:"omitempty,max=32,dive,required,max=8192"`
}

// ReconcileRequest is the body of POST /v1/admin/services/{id}/reconcile.
type ReconcileRequest struct {
	Resolution string `json:"resolution" validate:"required,oneof=recreated restored abandoned"`
	Note       string `json:"note" validate:"omitempty,max=1000"`
}

type previewPayload struct {
	IntentID string `json:"intent_id"`
}

// applyPayload is what an apply operation stores: the confirmations and labels, no secret.
type applyPayload struct {
	IntentID string `json:"intent_id"`
	Applied
	// SSHKeys are the request's public keys: not secret, kept so that a run taken over after
	// the destroy finishes with them (R58); the password never is (R26).
	SSHKeys []string `json:"ssh_keys,omitempty"`
}

func notFound() *i18n.Problem { return i18n.NewProblem(http.StatusNotFound, i18n.CodeNotFound) }

func inProgress() *i18n.Problem {
	return i18n.NewProblem(http.StatusConflict, i18n.CodeReinstallInProgress).Perm(i18n.Temporary)
}

func stale() *i18n.Problem {
	return i18n.NewProblem(http.StatusConflict, i18n.CodePreviewStale).Perm(i18n.Temporary)
}

// service reads a service the client may see and refuses the states no reinstall may start in:
// awaiting reconciliation (the lock stays closed, R28), or without a guest.
func (s *Replacer) service(ctx context.Context, clientID, serviceID string) (*models.Service, error) {
	svc, err := s.db.GetClientService(ctx, clientID, serviceID)
	if errors.Is(err, models.ErrNotFound) {
		return nil, notFound()
	}
	if err != nil {
		return nil, err
	}
	if svc.State == models.ServiceNeedsReconciliation {
		return nil, i18n.NewProblem(http.StatusConflict, i18n.CodeServiceLocked).Perm(i18n.Temporary)
	}
	if svc.LockOperationID != nil {
		op, err := s.db.GetOperation(ctx, *svc.LockOperationID)
		if err == nil && op.State == models.OpNeedsReconciliation {
			return nil, i18n.NewProblem(http.StatusConflict, i18n.CodeServiceLocked).Perm(i18n.Temporary)
		}
	}
	if svc.VMID == nil || svc.State == models.ServiceTerminated || svc.State == models.ServiceFailed ||
		svc.State == models.ServiceProvisioning {
		return nil, Blocked([]Blocker{{Code: GuestMissing}}).Perm(i18n.Permanent)
	}
	return svc, nil
}

// Preview starts phase 1: it writes an intent in preview_pending and the read-only operation
// that fills it. The OS defaults to the one the service was created with.
func (s *Replacer) Preview(ctx context.Context, clientID, serviceID string, req PreviewRequest) (*models.Intent, *models.Operation, error) {
	svc, err := s.service(ctx, clientID, serviceID)
	if err != nil {
		return nil, nil, err
	}
	// A reinstall applying holds the service lock, so a preview queued now would only run after
	// it: say so at once instead.
	if own, err := s.ownFacts(ctx, svc.Key(), ""); err != nil {
		return nil, nil, err
	} else if own.ReinstallInProgress {
		return nil, nil, inProgress()
	}
	k, ok := s.kind(plans.GuestType(svc.GuestType))
	if !ok {
		return nil, nil, operation.NotAvailable()
	}
	plan, err := s.plans.Get(ctx, svc.Plan)
	if err != nil {
		return nil, nil, err
	}
	osName := req.OS
	if osName == "" {
		if osName, err = s.createdOS(ctx, svc.Key()); err != nil {
			return nil, nil, err
		}
	}
	if err := k.mod.CheckOS(plan, osName); err != nil {
		return nil, nil, err
	}
	in := &models.Intent{ID: models.NewID(), ServiceID: serviceID, ClientID: svc.ClientID, State: models.IntentPreviewPending,
		Kind: models.IntentKindReinstall, GuestType: svc.GuestType, Cluster: svc.Cluster, Node: svc.Node, VMID: *svc.VMID, Plan: plan.Code, OS: osName}
	raw, _ := json.Marshal(previewPayload{IntentID: in.ID})
	op := &models.Operation{ServiceID: serviceID, ClientID: svc.ClientID, Action: ActionPreview, Payload: string(raw)}
	if err := s.db.InsertIntentOperation(ctx, in, op); err != nil {
		return nil, nil, fmt.Errorf("write reinstall intent: %w", err)
	}
	return in, op, nil
}

// createdOS is the OS the guest runs: that of the last completed reinstall, else that of the
// service's create operation.
func (s *Replacer) createdOS(ctx context.Context, k models.ServiceKey) (string, error) {
	// Only the latest intent can still be moving: bring it up to date first.
	if latest, err := s.db.LatestIntent(ctx, k); err == nil {
		if _, err := s.Advance(ctx, latest.ID); err != nil {
			return "", err
		}
	} else if !errors.Is(err, models.ErrNotFound) {
		return "", err
	}
	if in, err := s.db.LatestIntentIn(ctx, k, models.IntentCompleted); err == nil && in.OS != "" {
		return in.OS, nil
	} else if err != nil && !errors.Is(err, models.ErrNotFound) {
		return "", err
	}
	op, err := s.db.LatestOperation(ctx, k, "create")
	if err != nil {
		return "", i18n.Validation(i18n.FieldError{Field: "os", Code: i18n.FieldRequired})
	}
	var p struct {
		OS string `json:"os"`
	}
	if json.Unmarshal([]byte(op.Payload), &p) != nil || p.OS == "" {
		return "", i18n.Validation(i18n.FieldError{Field: "os", Code: i18n.FieldRequired})
	}
	return p.OS, nil
}

// Get reads a reinstall intent of the client's service ("" for the latest) and advances it
// (R29).
func (s *Replacer) Get(ctx context.Context, clientID, serviceID, intentID string) (*models.Intent, error) {
	return s.getOfKind(ctx, models.IntentKindReinstall, clientID, serviceID, intentID)
}

// getOfKind reads an intent of kind of the client's service ("" for the latest of that kind)
// and advances it (R29); an intent of another kind, or of another client's service of the same
// id (R46), is not found.
func (s *Replacer) getOfKind(ctx context.Context, kind, clientID, serviceID, intentID string) (*models.Intent, error) {
	svc, err := s.db.GetClientService(ctx, clientID, serviceID)
	if errors.Is(err, models.ErrNotFound) {
		return nil, notFound()
	}
	if err != nil {
		return nil, err
	}
	var in *models.Intent
	if intentID == "" {
		in, err = s.db.LatestIntentOfKind(ctx, svc.Key(), kind)
	} else {
		in, err = s.db.GetServiceIntent(ctx, svc.Key(), intentID)
		if err == nil && in.Kind != kind {
			err = models.ErrNotFound
		}
	}
	if errors.Is(err, models.ErrNotFound) {
		return nil, notFound()
	}
	if err != nil {
		return nil, err
	}
	return s.Advance(ctx, in.ID)
}

// Advance reads an intent and moves it forward from its operation, if that has ended, with a
// compare-and-swap on the generation. No worker writes intents: this read is what moves them.
// It always starts from a fresh select (a copy read earlier may be stale), and losing the swap
// means another reader just made exactly this transition, so the loser re-reads and returns the
// winner's row — never its own stale copy (R29).
func (s *Replacer) Advance(ctx context.Context, id string) (*models.Intent, error) {
	for {
		in, err := s.db.GetIntent(ctx, id)
		if err != nil {
			return nil, err
		}
		op, err := s.db.GetOperation(ctx, in.OperationID)
		if err != nil && !errors.Is(err, models.ErrNotFound) {
			return nil, err
		}
		tr, ok := next(in, op)
		if !ok {
			return in, nil
		}
		err = s.db.AdvanceIntent(ctx, in.ID, in.Generation, tr.cols, in.Key(), tr.serviceState)
		if err != nil && !errors.Is(err, models.ErrIntentChanged) {
			return nil, err
		}
		// Won or lost, the row now holds the transition: the next select reads it (the loser
		// gets the winner's) and sees whether it can move further.
	}
}

// Apply starts phase 2 (R22). The intent must be the service's latest, with its preview ready;
// the confirmations must be the preview's, pair for pair; the blockers are checked again on our
// side. The root password and keys are handed to the executor in memory only (R26).
func (s *Replacer) Apply(ctx context.Context, clientID, serviceID string, req ApplyRequest) (*models.Operation, *models.Intent, error) {
	if req.RootPassword == "" && len(req.SSHKeys) == 0 {
		return nil, nil, i18n.Validation(i18n.FieldError{Field: "root_password", Code: i18n.FieldRequiredOne, Param: "root_password, ssh_keys"})
	}
	secrets := map[string]string{}
	if req.RootPassword != "" {
		secrets[secretPassword] = req.RootPassword
	}
	if len(req.SSHKeys) > 0 {
		secrets[secretSSHKeys] = strings.Join(req.SSHKeys, "\n")
	}
	return s.applyIntent(ctx, applyArgs{kind: models.IntentKindReinstall, action: ActionApply, event: "reinstall_applied",
		clientID: clientID, serviceID: serviceID, intentID: req.IntentID, confirmations: req.Confirmations, secrets: secrets,
		keys: req.SSHKeys})
}

// applyArgs is what starts phase 2 of an intent of kind: the operation's action, the audit
// event, what the client sent back, and the transient secrets (R26).
type applyArgs struct {
	kind, action, event           string
	clientID, serviceID, intentID string
	confirmations                 []Confirmation
	secrets                       map[string]string
	// keys are the request's public SSH keys, kept on the payload (R58).
	keys []string
	// refuse refuses the service before anything else is read (nil: no such check).
	refuse func(*models.Service) error
}

// applyIntent is phase 2 of either kind: the intent must be the service's latest of any kind
// (a newer preview of the other kind makes it stale), with its preview ready; the confirmations
// must be the preview's, pair for pair; the blockers are checked again on our side. The secrets
// are handed to the executor in memory only.
func (s *Replacer) applyIntent(ctx context.Context, x applyArgs) (*models.Operation, *models.Intent, error) {
	if in, err := s.getOfKind(ctx, x.kind, x.clientID, x.serviceID, x.intentID); err == nil && in.State == models.IntentAwaitingPassword {
		// The apply sent again for a run that waits for its password (R58): the service's
		// lock is that run's.
		return s.sendPassword(ctx, in, x)
	}
	svc, err := s.service(ctx, x.clientID, x.serviceID)
	if err != nil {
		return nil, nil, err
	}
	if x.refuse != nil {
		if err := x.refuse(svc); err != nil {
			return nil, nil, err
		}
	}
	in, err := s.getOfKind(ctx, x.kind, x.clientID, x.serviceID, x.intentID)
	if err != nil {
		return nil, nil, err
	}
	switch in.State {
	case models.IntentPreviewReady:
	case models.IntentApplying:
		return nil, nil, inProgress()
	default:
		return nil, nil, stale()
	}
	latest, err := s.db.LatestIntent(ctx, svc.Key())
	if err != nil {
		return nil, nil, err
	}
	if latest.ID != in.ID {
		return nil, nil, stale()
	}
	var pv Preview
	if in.Preview == nil || json.Unmarshal([]byte(*in.Preview), &pv) != nil {
		return nil, nil, stale()
	}
	if !SameConfirmations(x.confirmations, pv.Confirmations) {
		return nil, nil, i18n.NewProblem(http.StatusConflict, i18n.CodeConfirmationsMismatch).Perm(i18n.Permanent)
	}
	if err := s.checkAgain(ctx, in, pv); err != nil {
		return nil, nil, err
	}
	applied := Applied{Confirmations: x.confirmations, Mounts: pv.Mounts, Disks: pv.Disks}
	payload, _ := json.Marshal(applyPayload{IntentID: in.ID, Applied: applied, SSHKeys: x.keys})
	appliedRaw, _ := json.Marshal(applied)
	op := &models.Operation{ID: models.NewID(), ServiceID: x.serviceID, ClientID: svc.ClientID, Action: x.action, Payload: string(payload)}
	detail, _ := json.Marshal(map[string]any{"intent_id": in.ID, "confirmations": applied.Confirmations, "mounts": pv.labelled()})
	d := string(detail)
	ev := &models.AuditEvent{Actor: x.clientID, ClientID: x.clientID, ServiceID: x.serviceID, Event: x.event, Detail: &d}
	// The secrets are in memory before the operation can be claimed; a refused apply drops them.
	if len(x.secrets) > 0 {
		s.secrets.Put(op.ID, x.secrets)
		s.secrets.Pin(op)
	}
	if err := s.db.ApplyIntent(ctx, in.ID, in.Generation, op, string(appliedRaw), ev); err != nil {
		s.secrets.Drop(op.ID)
		if errors.Is(err, models.ErrIntentChanged) {
			return nil, nil, inProgress()
		}
		return nil, nil, fmt.Errorf("write %s operation: %w", x.action, err)
	}
	in, err = s.db.GetIntent(ctx, in.ID)
	if err != nil {
		return nil, nil, err
	}
	return op, in, nil
}

// checkAgain is the second check, on our side: the facts the preview read, with our own state
// read again.
func (s *Replacer) checkAgain(ctx context.Context, in *models.Intent, pv Preview) error {
	facts, err := s.ownFacts(ctx, in.Key(), "")
	if err != nil {
		return err
	}
	plan, err := s.plans.Get(ctx, in.Plan)
	if err != nil {
		return err
	}
	facts.Exists = !hasBlocker(pv.Blockers, GuestMissing)
	facts.Protected = hasBlocker(pv.Blockers, ProtectionEnabled)
	facts.Lock = blockerParam(pv.Blockers, ProxmoxLock, "lock")
	facts.ProtectedBackup = hasBlocker(pv.Blockers, ProtectedBackupExists)
	facts.Mounts, facts.RootKey, facts.NoRoot = pv.labelled(), pv.RootKey, pv.NoRoot
	facts.PlannedBytes = int64(plan.DiskGiB) * kinds.GiB
	if bs := Check(facts); len(bs) > 0 {
		if len(bs) == 1 && bs[0].Code == ReinstallInProgress {
			return inProgress()
		}
		return Blocked(bs)
	}
	return nil
}

func hasBlocker(bs []Blocker, code BlockerCode) bool {
	for _, b := range bs {
		if b.Code == code {
			return true
		}
	}
	return false
}

func blockerParam(bs []Blocker, code BlockerCode, key string) string {
	for _, b := range bs {
		if b.Code == code {
			if v := b.Params[key]; v != "" {
				return v
			}
			return "unknown"
		}
	}
	return ""
}

// ownFacts are the facts our own database holds: a backup or restore of ours queued or running,
// another reinstall applying (except the operation except).
func (s *Replacer) ownFacts(ctx context.Context, k models.ServiceKey, except string) (Facts, error) {
	var f Facts
	n, err := s.db.CountActiveOperations(ctx, k, except, ActionBackup, ActionRestore)
	if err != nil {
		return f, err
	}
	f.OwnBackupOrRestore = n > 0
	if n, err = s.db.CountActiveOperations(ctx, k, except, ActionApply); err != nil {
		return f, err
	}
	f.ReinstallInProgress = n > 0
	return f, nil
}

// Reconcile closes a service's needs_reconciliation (R28) with an operator's resolution,
// releases its lock and records it in the audit log: the service becomes active after recreated
// or restored and failed after abandoned.
func (s *Replacer) Reconcile(ctx context.Context, actor string, k models.ServiceKey, req ReconcileRequest) (*models.Service, error) {
	state := models.ServiceActive
	if req.Resolution == "abandoned" {
		state = models.ServiceFailed
	}
	detail, _ := json.Marshal(map[string]string{"resolution": req.Resolution, "note": req.Note})
	d := string(detail)
	ev := &models.AuditEvent{Actor: actor, ClientID: k.ClientID, ServiceID: k.ServiceID, Event: "reconciled", Detail: &d}
	svc, err := s.db.Reconcile(ctx, k, state, ev)
	switch {
	case errors.Is(err, models.ErrNotFound):
		return nil, notFound()
	case errors.Is(err, models.ErrNothingToReconcile):
		return nil, i18n.NewProblem(http.StatusConflict, i18n.CodeNothingToReconcile).Perm(i18n.Permanent)
	case err != nil:
		return nil, err
	}
	s.log.Info("service reconciled", "client_id", k.ClientID, "service_id", k.ServiceID, "resolution", req.Resolution, "actor", actor)
	return svc, nil
}
