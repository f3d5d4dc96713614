package models

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// A gate admits one running operation at a time across every replica: an operation that names
// a gate (operations.gate) is claimed only when it can take the gate's row in
// operation_gates, in the claim's own transaction, exactly as the service lock is taken; the
// row is given back when the operation ends or is released. The database is the one place
// every replica sees, so no replica can start a second holder (R42: one vzdump per node).

// OperationGate is one row of operation_gates.
type OperationGate struct {
	Gate        string  `gorm:"primaryKey"`
	OperationID *string `gorm:"column:operation_id"`
	UpdatedAt   time.Time
}

// TableName pins the table.
func (OperationGate) TableName() string { return "operation_gates" }

// ensureGate creates the gate's row, free, when it does not exist yet.
func ensureGate(ctx context.Context, tx *gorm.DB, gate string) error {
	return tx.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).
		Create(&OperationGate{Gate: gate, UpdatedAt: Now()}).Error
}

// gateFree is the claim's filter: the operation names no gate, or its gate is free or already
// its own (a run taken over from a dead worker keeps the gate it held). It only hints; the
// conditional update in takeGate decides.
const gateFree = "(gate IS NULL OR NOT EXISTS (SELECT 1 FROM operation_gates g WHERE g.gate = operations.gate " +
	"AND g.operation_id IS NOT NULL AND g.operation_id <> operations.id))"

// takeGate takes gate for operation id inside the claim's transaction; held reports that the
// operation held it already. ok is false when another operation holds it.
func takeGate(tx *gorm.DB, gate, id string) (ok, held bool, err error) {
	var row OperationGate
	if err := tx.Where("gate = ?", gate).Take(&row).Error; err != nil {
		return false, false, fmt.Errorf("read gate: %w", err)
	}
	if row.OperationID != nil && *row.OperationID == id {
		return true, true, nil
	}
	res := tx.Exec("UPDATE operation_gates SET operation_id = ?, updated_at = ? WHERE gate = ? AND operation_id IS NULL",
		id, Now(), gate)
	if res.Error != nil {
		return false, false, fmt.Errorf("take gate: %w", res.Error)
	}
	return res.RowsAffected == 1, false, nil
}

// releaseGate gives back the gate operation id holds, if any.
func releaseGate(tx *gorm.DB, id string) error {
	return tx.Exec("UPDATE operation_gates SET operation_id = NULL, updated_at = ? WHERE operation_id = ?", Now(), id).Error
}

// GateQueue is the number of queued operations waiting for one gate.
type GateQueue struct {
	Gate   string
	Queued int
}

// GateQueues counts the queued operations of every gate that ever had one (0 when none waits).
func GateQueues(ctx context.Context, db *gorm.DB) ([]GateQueue, error) {
	var rows []GateQueue
	err := db.WithContext(ctx).Table("operation_gates g").
		Select("g.gate AS gate, (SELECT COUNT(*) FROM operations o WHERE o.gate = g.gate AND o.state = ?) AS queued", OpQueued).
		Order("g.gate").Scan(&rows).Error
	return rows, err
}

// GateHolders lists the operation holding each gate that is held (tests and the admin view).
func GateHolders(ctx context.Context, db *gorm.DB) (map[string]string, error) {
	var rows []OperationGate
	if err := db.WithContext(ctx).Where("operation_id IS NOT NULL").Find(&rows).Error; err != nil {
		return nil, err
	}
	out := make(map[string]string, len(rows))
	for _, r := range rows {
		out[r.Gate] = *r.OperationID
	}
	return out, nil
}

// ReleaseGate gives back the gate operation id holds while owner still runs it: the part of
// the run that needed the gate alone is over, and the next operation behind the gate may start.
func (db *DB) ReleaseGate(ctx context.Context, id, owner string) error {
	_, err := retryRows(ctx, func() *gorm.DB {
		return db.WithContext(ctx).Exec("UPDATE operation_gates SET operation_id = NULL, updated_at = ? WHERE operation_id = ? "+
			"AND EXISTS (SELECT 1 FROM operations o WHERE o.id = ? AND o.lease_owner = ? AND o.state = ?)", Now(), id, id, owner, OpRunning)
	})
	return err
}
