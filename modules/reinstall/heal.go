package reinstall

import (
	"context"
	"encoding/json"
	"errors"

	"pvebill/i18n"
	"pvebill/models"
	"pvebill/modules/executor"
	"pvebill/modules/kinds"
	"pvebill/modules/operation"
)

// resolveApply establishes the facts of a reinstall or restore past its irreversible stage
// (R58) and names the stage to resume from: destroyed → create (a restore: restore again);
// created → configure, start, verify. A guest on the vmid without the service's stamp, or
// locked by a task the operation never recorded, is for an operator. A reinstall that must make
// its guest again without the password (never stored, R26) and without SSH keys waits for the
// password (awaiting_password).
func (s *Replacer) resolveApply(ctx context.Context, r *executor.Run) (executor.Decision, error) {
	var p applyPayload
	if err := r.Payload(&p); err != nil {
		return executor.Decision{}, err
	}
	in, err := s.db.GetIntent(ctx, p.IntentID)
	if err != nil {
		return executor.Decision{}, err
	}
	t, err := s.targetOf(ctx, in, r.Op.ID)
	if err != nil {
		return executor.Decision{}, err
	}
	g := kinds.Guest{Client: t.cl.Client, Cluster: t.cl.Name, Node: in.Node, VMID: in.VMID, ClientID: t.svc.ClientID,
		ServiceID: t.svc.ServiceID, LegacyStamp: t.legacy}
	f, _, err := operation.ReadFacts(ctx, s.mods, t.cl, g, r.Op)
	dec := executor.Decision{Facts: f}
	if err != nil {
		return dec, err
	}
	stage := executor.Stage(r.Op.Stage)
	switch {
	case *f.GuestPresent && !operation.Ours(f, StageDestroy):
		dec.Reason = executor.ReasonNotOurs
	case f.Lock != "" && !recordedIn(f, stage):
		return dec, executor.ErrUnsettled
	case in.Kind == models.IntentKindRestore:
		dec.Resume = resumeRestore(stage, f)
	default:
		dec.Resume = resumeReinstall(stage, f)
		if needsCredentials(stage, dec.Resume) && !hasCredentials(r, p) {
			dec.Await = models.AwaitingPassword
		}
	}
	return dec, nil
}

// resumeReinstall is the stage a reinstall resumes from, given the stage it stopped at and the
// facts: a destroy that never started resumes at the stop (the guest is as the preview saw
// it); one that ran, at the destroy; a missing guest is made; a made one is configured.
func resumeReinstall(stage executor.Stage, f executor.Facts) executor.Stage {
	present := *f.GuestPresent
	switch {
	case !present:
		return StageCreate
	case stage == StageDestroy && recordedIn(f, StageDestroy):
		return StageDestroy
	case stage == StageDestroy:
		return StageStop
	case stage == StageCreate:
		// Our stamp is on it and the destroy ended before: this run made it; the kind's
		// Configure finishes what the create did not (resumeConfigure).
		return StageConfigure
	}
	return stage
}

// resumeRestore is the stage a restore resumes from: the restore again unless its task is
// known to have ended OK with the guest there (Proxmox's restore over a guest replaces it in
// one task, so doing it again gives the same guest).
func resumeRestore(stage executor.Stage, f executor.Facts) executor.Stage {
	present := *f.GuestPresent
	switch {
	case !present:
		return StageRestore
	case stage == StageRestore && recordedIn(f, StageRestore) && f.LastTask.OK():
		return StageConfigure
	case stage == StageRestore:
		return StageRestore
	}
	return stage
}

// needsCredentials reports whether resuming at from makes or configures a new guest, which
// needs the root password or the SSH keys.
func needsCredentials(stage, from executor.Stage) bool {
	switch from {
	case StageStop, StageDestroy, StageCreate:
		return true
	case StageConfigure:
		return stage == StageCreate
	}
	return false
}

// hasCredentials reports whether the run holds the password (this process kept it) or the
// request had SSH keys (public keys are kept on the payload for this).
func hasCredentials(r *executor.Run, p applyPayload) bool {
	if pw, ok := r.Secret(secretPassword); ok && pw != "" {
		return true
	}
	return len(p.SSHKeys) > 0
}

func recordedIn(f executor.Facts, stage executor.Stage) bool {
	return f.LastTask != nil && f.LastTask.Stage == string(stage)
}

// prepareResume rebuilds, for a run resumed from the facts, what the stages it skips would have
// found: the target, the guest where it is now (or where it was), whether HA manages it, the
// spec with the credentials, and a restore's archive.
func (a *apply) prepareResume(ctx context.Context) (err error) {
	from, ok := a.r.ResumingAt()
	if !ok {
		return nil
	}
	if a.t, err = a.s.targetOf(ctx, a.in, a.r.Op.ID); err != nil {
		return err
	}
	a.spec = kinds.CreateSpec{OS: a.in.OS, Plan: a.t.plan, Hostname: a.t.hostname, SSHKeys: a.p.SSHKeys}
	a.spec.Password, _ = a.r.Secret(secretPassword)
	at, err := a.s.mods.Locate(ctx, a.t.cl, a.in.VMID)
	if err != nil {
		return err
	}
	node := a.in.Node
	if at.Found {
		node = at.Node
	}
	a.g = kinds.Guest{Client: a.t.cl.Client, Cluster: a.t.cl.Name, Node: node, VMID: a.in.VMID,
		ClientID: a.t.svc.ClientID, ServiceID: a.t.svc.ServiceID, LegacyStamp: a.t.legacy}
	a.located, a.res.Node = true, node
	if at.Found {
		ins, err := a.t.k.mod.Inspect(ctx, a.g)
		if err != nil {
			return err
		}
		a.ha = ins.HAManaged
	}
	a.adopt = from == StageConfigure && executor.Stage(a.r.Op.Stage) == StageCreate
	if from == StageRestore {
		if a.s.backups == nil {
			return operation.NotAvailable()
		}
		a.archive, err = a.s.backups.OwnBackup(ctx, a.in.Key(), node, a.t.backupID)
	}
	return err
}

// sendPassword hands the password of an apply sent again to its parked operation (R58): in
// memory only, as the first time (R26); the operation is woken pinned to this replica, and the
// intent moves back to applying. An apply without the password is refused as the first one
// without credentials would be.
func (s *Replacer) sendPassword(ctx context.Context, in *models.Intent, x applyArgs) (*models.Operation, *models.Intent, error) {
	pw := x.secrets[secretPassword]
	if pw == "" {
		return nil, nil, i18n.Validation(i18n.FieldError{Field: "root_password", Code: i18n.FieldRequired})
	}
	op, err := s.db.GetOperation(ctx, in.OperationID)
	if err != nil {
		return nil, nil, err
	}
	owner, until, ok := s.secrets.PinNow()
	if !ok {
		owner, until = "", models.Now()
	}
	s.secrets.Put(op.ID, map[string]string{secretPassword: pw})
	if err := s.db.Wake(ctx, op.ID, models.AwaitingPassword, owner, until); err != nil {
		s.secrets.Drop(op.ID)
		if errors.Is(err, models.ErrNotAwaiting) {
			return nil, nil, inProgress()
		}
		return nil, nil, err
	}
	detail, _ := json.Marshal(map[string]string{"intent_id": in.ID})
	d := string(detail)
	ev := &models.AuditEvent{Actor: x.clientID, ClientID: x.clientID, ServiceID: x.serviceID, OperationID: op.ID,
		Event: "password_received", Detail: &d}
	if err := s.db.InsertAudit(ctx, ev); err != nil {
		s.log.Warn("audit password_received", "err", err)
	}
	if in, err = s.Advance(ctx, in.ID); err != nil {
		return nil, nil, err
	}
	if op, err = s.db.GetOperation(ctx, op.ID); err != nil {
		return nil, nil, err
	}
	return op, in, nil
}
