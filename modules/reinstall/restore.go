package reinstall

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"pvebill/i18n"

	"pvebill/models"
	"pvebill/modules/executor"
	"pvebill/modules/kinds"
	"pvebill/modules/operation"
	"pvebill/modules/plans"
)

// A restore is a replacement too (R43): the same intent, two phases, labels, confirmations,
// blockers, compare-and-swap and needs_reconciliation as a reinstall (R18–R29), with another
// source for the new guest: one of the service's own backups instead of the OS. Proxmox's
// restore over an existing guest destroys and unpacks in one task (docs/proxmox.md §9.3), so
// the restore's irreversible stage is that call; there is no separate destroy.

// ActionRestorePreview is a restore's phase 1: an operation that only reads (R18).
const ActionRestorePreview = "restore_preview"

// StageRestore is the create with restore=1 and force=1: Proxmox destroys the old guest's
// volumes in it, so it is the restore's irreversible stage (R27).
const StageRestore executor.Stage = "restore"

// restoreSteps is a restore's phase 2: precheck (the third check, and the backup looked up
// again among the service's own), stop with a last re-read, restore (the plan's resources and
// the stamp sent explicitly, R5), configure (anti-spoofing and onboot again, R9, and the plan's
// resources read back), start, verify. A failure from the restore stage on is
// needs_reconciliation.
var restoreSteps = []executor.Step[*apply]{
	{Stage: StagePrecheck, Run: precheckRestore},
	{Stage: StageStop, Run: stopGuest},
	{Stage: StageRestore, Run: restoreGuest},
	{Stage: StageConfigure, Run: configureRestored},
	{Stage: StageStart, Run: startGuest},
	{Stage: StageVerify, Run: verifyGuest},
}

// Backups finds a backup among a service's own (stamped for it, of its vmid and kind, on its
// plan's backup storage, R42), as listed on node: its volume id, or 404 not_found when it is
// not one of them (a foreign or unstamped archive is never named), or capability_refused when
// the plan has no backups.
type Backups interface {
	OwnBackup(ctx context.Context, k models.ServiceKey, node, backupID string) (string, error)
}

// RestorePreviewRequest is the body of POST /v1/services/{id}/restore/preview.
type RestorePreviewRequest struct {
	BackupID string `json:"backup_id" validate:"required,max=128"`
}

// RestoreApplyRequest is the body of POST /v1/services/{id}/restore: the archive brings its own
// passwords and keys, so there is no secret.
type RestoreApplyRequest struct {
	IntentID      string         `json:"intent_id" validate:"required,max=36"`
	Confirmations []Confirmation `json:"confirmations" validate:"required,max=600,dive"`
}

// RestorePreview starts a restore's phase 1: the plan must offer restores for the guest's kind
// and the backup must be one of the service's own; then an intent of kind restore is written in
// preview_pending with the read-only operation that fills it.
func (s *Replacer) RestorePreview(ctx context.Context, clientID, serviceID string, req RestorePreviewRequest) (*models.Intent, *models.Operation, error) {
	svc, err := s.service(ctx, clientID, serviceID)
	if err != nil {
		return nil, nil, err
	}
	if err := refuseSuspended(svc); err != nil {
		return nil, nil, err
	}
	if own, err := s.ownFacts(ctx, svc.Key(), ""); err != nil {
		return nil, nil, err
	} else if own.ReinstallInProgress {
		return nil, nil, inProgress()
	}
	plan, err := s.plans.Get(ctx, svc.Plan)
	if err != nil {
		return nil, nil, err
	}
	gt := plans.GuestType(svc.GuestType)
	if err := plans.Refused(plans.CapRestore, s.plans.Capabilities(plan)[gt][plans.CapRestore]); err != nil {
		return nil, nil, err
	}
	if k, ok := s.kind(gt); !ok || k.res == nil || s.backups == nil {
		return nil, nil, operation.NotAvailable()
	}
	if _, err := s.backups.OwnBackup(ctx, svc.Key(), svc.Node, req.BackupID); err != nil {
		return nil, nil, err
	}
	id := req.BackupID
	in := &models.Intent{ID: models.NewID(), ServiceID: serviceID, ClientID: svc.ClientID, State: models.IntentPreviewPending,
		Kind: models.IntentKindRestore, BackupID: &id, GuestType: svc.GuestType, Cluster: svc.Cluster, Node: svc.Node,
		VMID: *svc.VMID, Plan: plan.Code}
	raw, _ := json.Marshal(previewPayload{IntentID: in.ID})
	op := &models.Operation{ServiceID: serviceID, ClientID: svc.ClientID, Action: ActionRestorePreview, Payload: string(raw)}
	if err := s.db.InsertIntentOperation(ctx, in, op); err != nil {
		return nil, nil, fmt.Errorf("write restore intent: %w", err)
	}
	return in, op, nil
}

// refuseSuspended refuses a restore of a suspended or limited service: the restored guest is
// started and the service made active, and a suspension belongs to the billing system (R16,
// R40).
func refuseSuspended(svc *models.Service) error {
	if svc.State != models.ServiceSuspended && svc.State != models.ServiceLimited {
		return nil
	}
	return i18n.NewProblem(http.StatusConflict, i18n.CodeServiceSuspended).Perm(i18n.Temporary).With("state", svc.State)
}

// GetRestore reads a restore intent of the client's service ("" for the latest) and advances
// it (R29).
func (s *Replacer) GetRestore(ctx context.Context, clientID, serviceID, intentID string) (*models.Intent, error) {
	return s.getOfKind(ctx, models.IntentKindRestore, clientID, serviceID, intentID)
}

// ApplyRestore starts a restore's phase 2, exactly as a reinstall's (R22) but without secrets.
func (s *Replacer) ApplyRestore(ctx context.Context, clientID, serviceID string, req RestoreApplyRequest) (*models.Operation, *models.Intent, error) {
	return s.applyIntent(ctx, applyArgs{kind: models.IntentKindRestore, action: ActionRestore, event: "restore_applied",
		clientID: clientID, serviceID: serviceID, intentID: req.IntentID, confirmations: req.Confirmations,
		refuse: refuseSuspended})
}

// precheckRestore is the restore's precheck: the third check against the config this run
// reads, and the backup looked up again among the service's own on the guest's node, now.
func precheckRestore(ctx context.Context, a *apply) error {
	if err := a.locate(ctx, kinds.CreateSpec{}); err != nil {
		return err
	}
	if a.archive != "" {
		// The kind's read looked the backup up already, in this very check.
		return nil
	}
	if a.s.backups == nil {
		return operation.NotAvailable()
	}
	var err error
	a.archive, err = a.s.backups.OwnBackup(ctx, a.in.Key(), a.g.Node, a.t.backupID)
	return err
}

// restoreGuest is the create with restore=1 and force=1 over the stopped guest. The address of
// a plan with an ip_pool is the service's again (the allocation is idempotent per service).
func restoreGuest(ctx context.Context, a *apply) error {
	if err := a.allocateAddress(ctx); err != nil {
		return err
	}
	g, err := a.t.k.res.RestoreOver(ctx, a.g, a.spec, a.archive)
	a.g = g
	return err
}

func configureRestored(ctx context.Context, a *apply) error {
	return a.t.k.res.ConfigureRestored(ctx, a.g, a.spec)
}
