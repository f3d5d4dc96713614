package models

import (
	"context"
	"time"

	"gorm.io/gorm"
)

// AuditEvent is one recorded fact about who did what to which service; an event of the
// fleet (a missed backup window) names no service.
type AuditEvent struct {
	ID          int64 `gorm:"primaryKey"`
	At          time.Time
	Actor       string
	ClientID    string // the service's client (the actor may be an admin)
	ServiceID   string `gorm:"column:service_id"`
	OperationID string
	Event       string
	Detail      *string
}

// TableName pins the table.
func (AuditEvent) TableName() string { return "audit_events" }

// InsertAudit records an event.
func InsertAudit(ctx context.Context, tx *gorm.DB, ev *AuditEvent) error {
	if ev.At.IsZero() {
		ev.At = Now()
	}
	return tx.WithContext(ctx).Create(ev).Error
}

// InsertAudits records events in one transaction, in batches (a round may report many
// missed windows at once).
func InsertAudits(ctx context.Context, tx *gorm.DB, evs []AuditEvent) error {
	if len(evs) == 0 {
		return nil
	}
	for i := range evs {
		if evs[i].At.IsZero() {
			evs[i].At = Now()
		}
	}
	return tx.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		return tx.CreateInBatches(evs, auditBatch).Error
	})
}

// auditBatch is how many audit rows one INSERT writes.
const auditBatch = 500

// ListAudit returns a service's events, oldest first.
func ListAudit(ctx context.Context, tx *gorm.DB, k ServiceKey) ([]AuditEvent, error) {
	var out []AuditEvent
	err := tx.WithContext(ctx).Where(keyCond, k.ClientID, k.ServiceID).Order("at, id").Find(&out).Error
	return out, err
}
