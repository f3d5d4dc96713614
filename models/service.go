package models

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"
)

// Service states (API.md service.state).
const (
	ServiceProvisioning        = "provisioning"
	ServiceActive              = "active"
	ServiceSuspended           = "suspended"
	ServiceLimited             = "limited"
	ServiceTerminated          = "terminated"
	ServiceNeedsReconciliation = "needs_reconciliation"
	ServiceFailed              = "failed"
)

// Service is one customer guest managed by pvebill. It is unique on ServiceID and on
// (Cluster, VMID) — never including the guest type (R1).
type Service struct {
	ID              int64  `gorm:"primaryKey"`
	ServiceID       string `gorm:"column:service_id"`
	ClientID        string
	Plan            string
	GuestType       string
	Cluster         string
	Node            string
	VMID            *int `gorm:"column:vmid"`
	Hostname        string
	State           string
	ParamsHash      string
	LockOperationID *string
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

// TableName pins the table.
func (Service) TableName() string { return "services" }

// InsertService writes a new service row; a duplicate service_id or (cluster, vmid) returns
// ErrDuplicate.
func InsertService(ctx context.Context, tx *gorm.DB, s *Service) error {
	now := Now()
	s.CreatedAt, s.UpdatedAt = now, now
	return tx.WithContext(ctx).Create(s).Error
}

// GetService finds a service by its id.
func GetService(ctx context.Context, tx *gorm.DB, serviceID string) (*Service, error) {
	var s Service
	err := pooled(ctx, tx).Where("service_id = ?", serviceID).Take(&s).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, ErrNotFound
	}
	return &s, err
}

// GetClientService finds a service that belongs to a client; another client's service is
// reported as not found.
func GetClientService(ctx context.Context, tx *gorm.DB, clientID, serviceID string) (*Service, error) {
	s, err := GetService(ctx, tx, serviceID)
	if err != nil {
		return nil, err
	}
	if s.ClientID != clientID {
		return nil, ErrNotFound
	}
	return s, nil
}
