package models

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// CreateServiceOperation inserts a new service and its first operation in one transaction. A
// client's service_id that exists already returns ErrDuplicate and writes nothing.
func (db *DB) CreateServiceOperation(ctx context.Context, s *Service, op *Operation) error {
	// A Galera certification failure (two replicas creating the same service_id) is run again;
	// the second run meets the winner's row as a duplicate (R51).
	return retryDeadlock(ctx, func() error {
		s.ID = 0 // a fresh id on each run: the last one rolled back
		return pooled(ctx, db.Gorm).Transaction(func(tx *gorm.DB) error {
			if err := InsertService(ctx, tx, s); err != nil {
				return err
			}
			return InsertOperation(ctx, tx, op)
		}, db.txOpts())
	})
}

// UpdateService writes the named columns of a service (explicit columns: a zero value such as
// a NULL vmid is written, never skipped).
func UpdateService(ctx context.Context, tx *gorm.DB, k ServiceKey, cols map[string]any) error {
	cols["updated_at"] = Now()
	update := func() error {
		res := tx.WithContext(ctx).Model(&Service{}).Where(keyCond, k.ClientID, k.ServiceID).Updates(cols)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return ErrNotFound
		}
		return nil
	}
	if inTransaction(tx) {
		return update() // the caller's transaction is the unit to retry
	}
	// On its own the statement locks the (client_id, service_id) index entry, then the row: MariaDB may
	// pick it as a deadlock victim against a claim or a finish, and it is simply run again.
	return retryDeadlock(ctx, update)
}

// ReserveVMID records vmid on the service in cluster. The unique key (cluster, vmid) makes the
// reservation exclusive across replicas (R1, R2): a vmid another service holds returns
// ErrDuplicate.
func ReserveVMID(ctx context.Context, tx *gorm.DB, k ServiceKey, cluster string, vmid int) error {
	return UpdateService(ctx, tx, k, map[string]any{"cluster": cluster, "vmid": vmid})
}

// ReleaseVMID clears the service's vmid reservation.
func ReleaseVMID(ctx context.Context, tx *gorm.DB, k ServiceKey) error {
	return UpdateService(ctx, tx, k, map[string]any{"vmid": nil})
}

// ReservedVMIDs returns the vmids services hold in cluster from from on, ascending, at most
// limit of them.
func ReservedVMIDs(ctx context.Context, tx *gorm.DB, cluster string, from, limit int) ([]int, error) {
	var ids []int
	err := tx.WithContext(ctx).Model(&Service{}).Where("cluster = ? AND vmid >= ?", cluster, from).
		Order("vmid").Limit(limit).Pluck("vmid", &ids).Error
	return ids, err
}

// ServiceVMIDs maps each vmid of cluster held by a service that is not terminated to its
// service's key.
func ServiceVMIDs(ctx context.Context, tx *gorm.DB, cluster string) (map[int]ServiceKey, error) {
	var rows []Service
	err := tx.WithContext(ctx).Select("client_id", "service_id", "vmid").
		Where("cluster = ? AND vmid IS NOT NULL AND state <> ?", cluster, ServiceTerminated).Find(&rows).Error
	if err != nil {
		return nil, err
	}
	out := make(map[int]ServiceKey, len(rows))
	for _, r := range rows {
		out[*r.VMID] = r.Key()
	}
	return out, nil
}

// LatestOperation returns the service's most recent operation of action ("" for any).
func LatestOperation(ctx context.Context, tx *gorm.DB, k ServiceKey, action string) (*Operation, error) {
	q := tx.WithContext(ctx).Where(keyCond, k.ClientID, k.ServiceID)
	if action != "" {
		q = q.Where("action = ?", action)
	}
	var op Operation
	err := q.Order("created_at DESC, id DESC").Take(&op).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("latest %s operation of %s: %w", action, k.ServiceID, err)
	}
	return &op, nil
}

// BandwidthUsage is a service's traffic in its current billing period.
type BandwidthUsage struct {
	ClientID    string `gorm:"primaryKey;column:client_id"`
	ServiceID   string `gorm:"primaryKey;column:service_id"`
	PeriodStart time.Time
	Bytes       int64
	LastCounter *int64
	UpdatedAt   time.Time
}

// TableName pins the table.
func (BandwidthUsage) TableName() string { return "bandwidth_usage" }

// GetBandwidthUsage reads a service's row; ErrNotFound when it has none yet.
func GetBandwidthUsage(ctx context.Context, tx *gorm.DB, k ServiceKey) (*BandwidthUsage, error) {
	var u BandwidthUsage
	err := tx.WithContext(ctx).Where(keyCond, k.ClientID, k.ServiceID).Take(&u).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, ErrNotFound
	}
	return &u, err
}

// SaveBandwidthUsage writes a service's row, every column explicitly.
func SaveBandwidthUsage(ctx context.Context, tx *gorm.DB, u *BandwidthUsage) error {
	u.UpdatedAt = Now()
	res := tx.WithContext(ctx).Model(&BandwidthUsage{}).Where(keyCond, u.ClientID, u.ServiceID).
		Updates(map[string]any{"period_start": u.PeriodStart, "bytes": u.Bytes, "last_counter": u.LastCounter, "updated_at": u.UpdatedAt})
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected > 0 {
		return nil
	}
	err := tx.WithContext(ctx).Create(u).Error
	if errors.Is(err, ErrDuplicate) {
		return tx.WithContext(ctx).Model(&BandwidthUsage{}).Where(keyCond, u.ClientID, u.ServiceID).
			Updates(map[string]any{"period_start": u.PeriodStart, "bytes": u.Bytes, "last_counter": u.LastCounter, "updated_at": u.UpdatedAt}).Error
	}
	return err
}

// EnforceableServices lists the services of cluster that have a guest and may need a limit or
// drift repair: active, suspended or limited, with a vmid.
func EnforceableServices(ctx context.Context, tx *gorm.DB, cluster string) ([]Service, error) {
	var out []Service
	err := tx.WithContext(ctx).Where("cluster = ? AND vmid IS NOT NULL AND state IN ?", cluster,
		[]string{ServiceActive, ServiceSuspended, ServiceLimited}).Order("service_id, client_id").Find(&out).Error
	return out, err
}

// HasOpenOperation reports whether a service has a queued or running operation.
func HasOpenOperation(ctx context.Context, tx *gorm.DB, k ServiceKey) (bool, error) {
	var n int64
	err := tx.WithContext(ctx).Model(&Operation{}).Where(keyCond+" AND state IN ?", k.ClientID, k.ServiceID,
		[]string{OpQueued, OpRunning}).Count(&n).Error
	return n > 0, err
}

// InFlightCreate is a service placed on a node whose create has not ended (State
// provisioning) or ended recently. VMID is the id it reserved, if any.
type InFlightCreate struct {
	Node  string
	Plan  string
	State string
	VMID  *int `gorm:"column:vmid"`
}

// CreatesInFlight lists the services of cluster placed on a node that are still provisioning or
// changed since since (a create that ended after a read of the cluster's figures), leaving out
// terminated ones and the service except (the zero key leaves out none), by node.
func CreatesInFlight(ctx context.Context, tx *gorm.DB, cluster string, except ServiceKey, since time.Time) ([]InFlightCreate, error) {
	var out []InFlightCreate
	err := tx.WithContext(ctx).Model(&Service{}).Select("node, plan, state, vmid").
		Where("cluster = ? AND node <> '' AND NOT ("+keyCond+")", cluster, except.ClientID, except.ServiceID).
		Where("state = ? OR (state <> ? AND updated_at >= ?)", ServiceProvisioning, ServiceTerminated, since).
		Order("node, client_id, service_id").Scan(&out).Error
	return out, err
}

// BackupCandidates lists the services on plan a scheduled backup covers: holding a guest and
// active, suspended or limited (R42), by client and service id.
func BackupCandidates(ctx context.Context, tx *gorm.DB, plan string) ([]Service, error) {
	var out []Service
	err := tx.WithContext(ctx).Where("plan = ? AND vmid IS NOT NULL AND state IN ?", plan,
		[]string{ServiceActive, ServiceSuspended, ServiceLimited}).Order("client_id, service_id").Find(&out).Error
	return out, err
}

// OpenActions lists the services with a queued or running operation of action.
func OpenActions(ctx context.Context, tx *gorm.DB, action string) (map[ServiceKey]bool, error) {
	var keys []ServiceKey
	err := tx.WithContext(ctx).Model(&Operation{}).Distinct("client_id", "service_id").
		Where("action = ? AND state IN ?", action, []string{OpQueued, OpRunning}).Scan(&keys).Error
	out := make(map[ServiceKey]bool, len(keys))
	for _, k := range keys {
		out[k] = true
	}
	return out, err
}
