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

// Storage is one storage of a cluster as a plan save reads it: its id, its Proxmox type
// (lvmthin, dir …, from which the snapshot capability follows, R44) and whether it is
// configured to hold backups (R42).
type Storage struct {
	ID      string
	Type    string
	Backups bool
}

// Storages reads a cluster's storage configuration, once per plan save; an error is a cluster
// that could not be asked.
type Storages func(ctx context.Context, cluster string) ([]Storage, error)

// backups checks the plan's backup fields as written: a storage name of Proxmox's form, a
// schedule that parses, and no backup setting without a backup storage. backups_max 0 is the
// plan without backups (docs/api.md): valid without a backup storage, too small with one (a
// plan that names a backup storage keeps at least one backup).
func (v *fieldErrors) backups(s Spec) {
	if s.BackupStorage == "" {
		for field, set := range map[string]bool{"backups_max": s.BackupsMax != nil && *s.BackupsMax != 0, "backup_schedule": s.BackupSchedule != "",
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
	switch {
	case v.Has("backups_max"):
	case s.BackupsMax == nil:
		v.Add("backups_max", i18n.FieldRequired, "")
	case *s.BackupsMax == 0:
		v.Add("backups_max", i18n.FieldTooSmall, "1")
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
// hold backups; the field error lists the storages that do. A cluster that could not be asked
// (readErr) is proxmox_unavailable.
func checkBackupStorage(p Plan, stores []Storage, readErr error) error {
	if !p.HasBackups() {
		return nil
	}
	if readErr != nil {
		return i18n.NewProblem(http.StatusServiceUnavailable, i18n.CodeProxmoxUnavailable).Perm(i18n.Temporary).Wrap(readErr)
	}
	ids := []string{}
	for _, st := range stores {
		if !st.Backups {
			continue
		}
		if st.ID == p.BackupStorage {
			return nil
		}
		ids = append(ids, st.ID)
	}
	return i18n.Validation(i18n.FieldError{Field: "backup_storage", Code: i18n.FieldOneOf, Param: strings.Join(ids, ", ")})
}

// storageType is the Proxmox type of the plan's storage among stores, "" when it cannot be
// known now (the snapshot capability is then refused as temporary).
func storageType(p Plan, stores []Storage) string {
	for _, st := range stores {
		if st.ID == p.Storage {
			return st.Type
		}
	}
	return ""
}

func isUnavailable(err error) bool {
	var p *i18n.Problem
	return errors.As(err, &p) && p.Code == i18n.CodeProxmoxUnavailable
}
