package backups

import (
	"context"
	"net/http"

	"pvebill/i18n"
	"pvebill/models"
	"pvebill/modules/executor"
	"pvebill/modules/operation"
)

// ActionBackupDelete deletes one of the service's backups (R42), as stored in operations.action.
const ActionBackupDelete = "backup_delete"

// The stages of a backup delete: a precheck that only reads (the backup is still the
// service's and unprotected), the delete and its task, then the list read again and recorded.
const (
	StageDeleteBackup  executor.Stage = "delete_backup"
	StageRecordBackups executor.Stage = "record_backups"
)

// backupDeletePayload names the backup a backup_delete removes, by its id.
type backupDeletePayload struct {
	BackupID string `json:"backup_id"`
}

// backupDeleteRun is what a backup delete's stages share.
type backupDeleteRun struct {
	payload backupDeletePayload
	lister  backupLister
	target  Backup
}

var backupDeleteSteps = []executor.Step[*run]{
	{Stage: operation.StagePrecheck, Run: precheckBackupDelete},
	{Stage: StageDeleteBackup, Run: deleteOneBackup},
	{Stage: StageRecordBackups, Run: recordBackupsAfterDelete},
}

func (s *Service) runBackupDelete(ctx context.Context, r *executor.Run) error {
	return s.runOn(ctx, r, backupDeleteSteps, func(l *run) any { return &l.backupDelete.payload })
}

// DeleteBackup queues the delete of one of the service's backups, found by its id in the
// service's own list (a foreign or unstamped archive is not found). The one Proxmox read of the
// request is that list: a protected backup is backup_protected before anything is sent.
func (s *Service) DeleteBackup(ctx context.Context, clientID, serviceID, backupID string) (*models.Operation, error) {
	svc, err := s.guests.Service(ctx, clientID, serviceID)
	if err != nil {
		return nil, err
	}
	_, list, i, err := s.findBackup(ctx, svc, "", backupID)
	if err != nil {
		return nil, err
	}
	if list[i].Protected {
		return nil, backupProtected()
	}
	return s.guests.EnqueueFor(ctx, svc, ActionBackupDelete, backupDeletePayload{BackupID: backupID})
}

func backupProtected() error {
	return i18n.NewProblem(http.StatusConflict, i18n.CodeBackupProtected).Perm(i18n.Temporary)
}

// precheckBackupDelete finds the backup again (it may have gone or been protected since the
// request) on the service's node.
func precheckBackupDelete(ctx context.Context, l *run) error {
	d := &l.backupDelete
	b, list, i, err := l.s.findBackup(ctx, l.Svc, "", d.payload.BackupID)
	if err != nil {
		return err
	}
	if list[i].Protected {
		return backupProtected()
	}
	d.lister, d.target = b, list[i]
	return nil
}

// deleteOneBackup deletes the archive and waits for Proxmox's task. When the answer is lost
// after Proxmox may have done the work (a proxy's 596, a dropped connection), the list says
// whether the archive is gone: if it is, the delete is done (record_backups records what is
// left); if it is still there, the failure stands, with what the storage holds recorded.
func deleteOneBackup(ctx context.Context, l *run) error {
	d := &l.backupDelete
	err := d.lister.remove(ctx, d.target, StageDeleteBackup, l.Rep)
	if err == nil {
		return nil
	}
	at := l.s.now()
	list, lerr := d.lister.list(ctx)
	if lerr != nil {
		return err
	}
	l.s.recordBackups(ctx, l.Svc, list, at)
	for _, b := range list {
		if b.ID == d.target.ID {
			return err
		}
	}
	return nil
}

// recordBackupsAfterDelete reads the service's list once the delete's task has ended and
// records it, so that backup_bytes is what the storage holds now (R42).
func recordBackupsAfterDelete(ctx context.Context, l *run) error {
	at := l.s.now()
	list, err := l.backupDelete.lister.list(ctx)
	if err != nil {
		return err
	}
	l.s.recordBackups(ctx, l.Svc, list, at)
	return nil
}
