package models

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"
)

// AwaitingPassword is what a parked reinstall waits for: the root password, which is never
// stored (R26), sent again with the apply by the billing system (R58).
const AwaitingPassword = "password"

// RecordTask records the Proxmox task an operation just started and the stage that started it,
// before anything waits on it (R58): a worker taking the operation over reads how it ended.
func (db *DB) RecordTask(ctx context.Context, id, owner, stage, upid string) error {
	n, err := retryRows(ctx, func() *gorm.DB {
		return db.WithContext(ctx).Model(&Operation{}).Where("id = ? AND lease_owner = ? AND state = ?", id, owner, OpRunning).
			Updates(map[string]any{"task_upid": upid, "task_stage": stage, "updated_at": Now()})
	})
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrLeaseLost
	}
	return nil
}

// MarkResumed counts one resumed run of an operation owner holds and records why in the audit
// log, in one transaction (R58).
func (db *DB) MarkResumed(ctx context.Context, id, owner string, ev *AuditEvent) error {
	return retryDeadlock(ctx, func() error {
		return db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			res := tx.Model(&Operation{}).Where("id = ? AND lease_owner = ? AND state = ?", id, owner, OpRunning).
				Updates(map[string]any{"resumed": gorm.Expr("resumed + 1"), "updated_at": Now()})
			if res.Error != nil {
				return res.Error
			}
			if res.RowsAffected == 0 {
				return ErrLeaseLost
			}
			return InsertAudit(ctx, tx, ev)
		}, db.txOpts())
	})
}

// CountFailedResumes counts the runs of an operation resumed after a failure (R58), from the
// audit entries that say so: the bound on resumes that keep failing holds across takeovers.
func (db *DB) CountFailedResumes(ctx context.Context, id string) (int, error) {
	var n int64
	err := db.WithContext(ctx).Model(&AuditEvent{}).
		Where("operation_id = ? AND event = ? AND detail LIKE ?", id, "operation_resumed", `%"cause":"failed"%`).Count(&n).Error
	return int(n), err
}

// Park puts a running operation back in the queue waiting for what (AwaitingPassword): its
// stage and its service lock stay, no worker claims it until Wake.
func (db *DB) Park(ctx context.Context, id, owner, what string) error {
	n, err := retryRows(ctx, func() *gorm.DB {
		return db.WithContext(ctx).Model(&Operation{}).Where("id = ? AND lease_owner = ? AND state = ?", id, owner, OpRunning).
			Updates(map[string]any{"state": OpQueued, "awaiting": what, "lease_owner": nil, "lease_until": nil, "updated_at": Now()})
	})
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrLeaseLost
	}
	return nil
}

// ErrNotAwaiting is returned by Wake when the operation does not wait for that (any more).
var ErrNotAwaiting = errors.New("operation is not awaiting that")

// Wake makes a parked operation claimable again, pinned to owner until until (the replica that
// now holds the secret it waited for, see executor Secrets.Pin).
func (db *DB) Wake(ctx context.Context, id, what, owner string, until time.Time) error {
	n, err := retryRows(ctx, func() *gorm.DB {
		return db.WithContext(ctx).Model(&Operation{}).Where("id = ? AND state = ? AND awaiting = ?", id, OpQueued, what).
			Updates(map[string]any{"awaiting": nil, "lease_owner": owner, "lease_until": until, "updated_at": Now()})
	})
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrNotAwaiting
	}
	return nil
}

// OpenReconciliations lists the operations in needs_reconciliation whose service still waits
// for an operator (its lock is theirs), oldest first.
func OpenReconciliations(ctx context.Context, tx *gorm.DB, limit int) ([]Operation, error) {
	var out []Operation
	err := tx.WithContext(ctx).Where(openReconciliation, OpNeedsReconciliation).
		Order("finished_at, id").Limit(limit).Find(&out).Error
	return out, err
}

// openReconciliation is the condition of an open reconciliation: needs_reconciliation, and its
// service's lock still its own.
const openReconciliation = "state = ? AND EXISTS (SELECT 1 FROM services s WHERE s.client_id = operations.client_id AND s.service_id = operations.service_id AND s.lock_operation_id = operations.id)"

// OpenReconciliationStats counts what OpenReconciliations lists and gives when the oldest
// of them ended (zero when there is none).
func (db *DB) OpenReconciliationStats(ctx context.Context) (int64, time.Time, error) {
	var n int64
	if err := db.WithContext(ctx).Model(&Operation{}).Where(openReconciliation, OpNeedsReconciliation).Count(&n).Error; err != nil || n == 0 {
		return n, time.Time{}, err
	}
	list, err := OpenReconciliations(ctx, db.Gorm, 1)
	if err != nil || len(list) == 0 || list[0].FinishedAt == nil {
		return n, time.Time{}, err
	}
	return n, *list[0].FinishedAt, nil
}
