package plans

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/robfig/cron/v3"

	"pvebill/i18n"
	"pvebill/modules/pve/pveconf"
)

// BackupStorages tells what a cluster's storages may hold, so that a plan's backup_storage is
// checked against the cluster when the plan is saved (R42): it answers the ids of the
// storages configured to hold backups, or an error when the cluster could not be asked.
type BackupStorages func(ctx context.Context, cluster string) ([]string, error)

// backups checks the plan's backup fields as written: a storage name of Proxmox's form, a
// schedule that parses, and no backup setting without a backup storage.
func (v *fieldErrors) backups(s Spec) {
	if s.BackupStorage == "" {
		for field, set := range map[string]bool{"backups_max": s.BackupsMax != nil, "backup_schedule": s.BackupSchedule != "",
			"backup_mode": s.BackupMode != "", "backups_on_terminate": s.BackupsOnTerminate != ""} {
			if set && !v.Has(field) {
				v.Add(field, i18n.FieldNotApplicable, "backup_storage")
			}
		}
		return
	}
	if !v.Has("backup_storage") && !pveconf.ValidStorageID(s.BackupStorage) {
		v.Add("backup_storage", i18n.FieldPattern, "")
	}
	if s.BackupsMax == nil && !v.Has("backups_max") {
		v.Add("backups_max", i18n.FieldRequired, "")
	}
	if s.BackupSchedule != "" && !v.Has("backup_schedule") {
		if _, err := cron.ParseStandard(s.BackupSchedule); err != nil {
			v.Add("backup_schedule", i18n.FieldPattern, "")
		}
	}
}

// normalizeBackups fills the backup defaults of a valid Spec: snapshot mode, and a terminate
// that deletes the service's backups.
func normalizeBackups(s Spec, p *Plan) {
	if s.BackupStorage == "" {
		return
	}
	p.BackupStorage, p.BackupsMax, p.BackupSchedule = s.BackupStorage, *s.BackupsMax, s.BackupSchedule
	p.BackupMode, p.BackupsOnTerminate = s.BackupMode, s.BackupsOnTerminate
	if p.BackupMode == "" {
		p.BackupMode = BackupSnapshot
	}
	if p.BackupsOnTerminate == "" {
		p.BackupsOnTerminate = BackupsDelete
	}
}

// checkBackupStorage refuses a plan whose backup storage is not configured on its cluster to
// hold backups; the field error lists the storages that do. A cluster that cannot be asked is
// proxmox_unavailable.
func (s *Service) checkBackupStorage(ctx context.Context, p Plan) error {
	if !p.HasBackups() || s.opts.BackupStorages == nil {
		return nil
	}
	ids, err := s.opts.BackupStorages(ctx, p.Cluster)
	if err != nil {
		return i18n.NewProblem(http.StatusServiceUnavailable, i18n.CodeProxmoxUnavailable).Perm(i18n.Temporary).Wrap(err)
	}
	for _, id := range ids {
		if id == p.BackupStorage {
			return nil
		}
	}
	return i18n.Validation(i18n.FieldError{Field: "backup_storage", Code: i18n.FieldOneOf, Param: strings.Join(ids, ", ")})
}

func isUnavailable(err error) bool {
	var p *i18n.Problem
	return errors.As(err, &p) && p.Code == i18n.CodeProxmoxUnavailable
}
