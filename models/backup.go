package models

import (
	"context"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// ServiceBackups is what pvebill last saw of a service's backups (R42): the number of
// archives stamped for it and their bytes, keyed by the service's internal id.
type ServiceBackups struct {
	Svc     int64 `gorm:"column:svc;primaryKey;autoIncrement:false"`
	Backups int   `gorm:"column:backups"`
	Bytes   int64 `gorm:"column:bytes"`
	SeenAt  int64 `gorm:"column:seen_at"`
}

// TableName pins the table.
func (ServiceBackups) TableName() string { return "service_backups" }

// RecordServiceBackups records what a listing of the service's backups found, true at at (when
// the listing was read, or when the delete that changed it ended). A figure older than the one
// recorded is dropped: a listing read before a delete but written after it must not bring the
// deleted archive's bytes back (R42). seen_at holds Unix milliseconds; rows written before
// held seconds, which compare as older.
func RecordServiceBackups(ctx context.Context, db *gorm.DB, svc int64, backups int, bytes int64, at time.Time) error {
	row := ServiceBackups{Svc: svc, Backups: backups, Bytes: bytes, SeenAt: at.UnixMilli()}
	return retryDeadlock(ctx, func() error {
		res := db.WithContext(ctx).Model(&ServiceBackups{}).Where("svc = ? AND seen_at <= ?", svc, row.SeenAt).
			Updates(map[string]any{"backups": backups, "bytes": bytes, "seen_at": row.SeenAt})
		if res.Error != nil || res.RowsAffected > 0 {
			return res.Error
		}
		// No row, a newer one, or (MySQL counts changed rows) the same figures: insert unless a
		// row is there.
		return db.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&row).Error
	})
}

// ServiceBackupBytes reads the recorded backup bytes of the services with these keys
// (services.id: a service id alone may name services of several clients, R46), by key; a
// service never seen with backups is absent.
func ServiceBackupBytes(ctx context.Context, db *gorm.DB, svcs []int64) (map[int64]int64, error) {
	out := map[int64]int64{}
	if len(svcs) == 0 {
		return out, nil
	}
	var rows []ServiceBackups
	err := db.WithContext(ctx).Where("svc IN ?", svcs).Find(&rows).Error
	for _, r := range rows {
		out[r.Svc] = r.Bytes
	}
	return out, err
}

// BackupGauge is one service's recorded backups, with the labels of its gauge.
type BackupGauge struct {
	ClientID  string
	ServiceID string
	Cluster   string
	GuestType string
	Bytes     int64
}

// BackupGauges lists the recorded backups of every service that is not terminated, or is
// terminated with backups left, by service id.
func BackupGauges(ctx context.Context, db *gorm.DB) ([]BackupGauge, error) {
	var rows []BackupGauge
	err := db.WithContext(ctx).Table("service_backups b").
		Select("s.client_id AS client_id, s.service_id AS service_id, s.cluster AS cluster, s.guest_type AS guest_type, "+
			"b.bytes AS bytes").
		Joins("JOIN services s ON s.id = b.svc").Where("s.state <> ? OR b.backups > 0", ServiceTerminated).
		Order("s.service_id, s.client_id").Scan(&rows).Error
	return rows, err
}
