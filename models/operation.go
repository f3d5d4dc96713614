package models

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"time"

	"pvebill/i18n"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Operation states (docs/api.md operation.state).
const (
	OpQueued              = "queued"
	OpRunning             = "running"
	OpSucceeded           = "succeeded"
	OpFailed              = "failed"
	OpNeedsReconciliation = "needs_reconciliation"
)

// IsTerminal reports whether an operation state is final for the executor.
func IsTerminal(state string) bool {
	return state == OpSucceeded || state == OpFailed || state == OpNeedsReconciliation
}

// Operation is one asynchronous piece of work on a service. Payload never holds a secret.
type Operation struct {
	ID          string `gorm:"primaryKey"`
	ServiceID   string `gorm:"column:service_id"`
	ClientID    string
	Action      string
	State       string
	Stage       string
	StageIndex  int
	Payload     string
	Result      *string
	ErrorCode   *string
	ErrorDetail *string
	// Gate names what the operation must hold alone while it runs (models/gate.go), nil
	// for none.
	Gate *string
	// ErrorBlockers is the JSON array of the blockers behind ErrorCode (see Blockers).
	ErrorBlockers *string
	// ErrorPermanence says whether asking again can help ("permanent", "temporary"; nil when
	// the error did not say).
	ErrorPermanence *string
	// ErrorReason is why, where the error has a reason that is not in the catalog (the
	// blockers Proxmox names when it refuses a migration).
	ErrorReason *string
	// TaskUPID is the last Proxmox task the operation started, recorded before the wait, and
	// TaskStage the stage that started it (R58).
	TaskUPID  *string `gorm:"column:task_upid"`
	TaskStage *string
	// Resumed counts the runs resumed from the facts after a failure or a takeover past the
	// destructive point (R58); Reconciliation is the JSON {facts, reason} of a
	// needs_reconciliation (nil otherwise).
	Resumed        int
	Reconciliation *string
	// Awaiting names what a parked operation waits for (AwaitingPassword): it is not claimed
	// until that arrives.
	Awaiting   *string
	Attempts   int
	LeaseOwner *string
	LeaseUntil *time.Time
	CreatedAt  time.Time
	UpdatedAt  time.Time
	StartedAt  *time.Time
	FinishedAt *time.Time
}

// TableName pins the table.
func (Operation) TableName() string { return "operations" }

// NewID returns a random 128-bit id in UUID text form (version 4).
func NewID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("crypto/rand: %v", err))
	}
	b[6] = (b[6] & 0x0f) | 0x40
	b[8] = (b[8] & 0x3f) | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// InsertOperation writes a queued operation.
func InsertOperation(ctx context.Context, tx *gorm.DB, op *Operation) error {
	now := Now()
	if op.ID == "" {
		op.ID = NewID()
	}
	if op.State == "" {
		op.State = OpQueued
	}
	op.StageIndex = -1
	op.CreatedAt, op.UpdatedAt = now, now
	if op.Gate != nil {
		if err := ensureGate(ctx, tx, *op.Gate); err != nil {
			return fmt.Errorf("gate row: %w", err)
		}
	}
	return tx.WithContext(ctx).Create(op).Error
}

// GetOperation reads one operation.
func GetOperation(ctx context.Context, tx *gorm.DB, id string) (*Operation, error) {
	var op Operation
	err := pooled(ctx, tx).Where("id = ?", id).Take(&op).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, ErrNotFound
	}
	return &op, err
}

// ErrLeaseLost is returned when a worker writes to an operation whose lease it no longer holds.
var ErrLeaseLost = errors.New("operation lease lost")

// Claim is what a worker got from ClaimNext: the operation and whether its lease was taken over
// from a worker that stopped renewing it (a crash or a partition).
type Claim struct {
	Op       *Operation
	TakeOver bool
}

// ClaimNext claims the oldest runnable operation for owner: a queued one, or a running one whose
// lease expired, whose service is not locked by another operation. On MySQL the candidate rows
// are read with FOR UPDATE SKIP LOCKED so concurrent workers never wait on each other; SQLite has
// one writer at a time. The service lock is taken in the same transaction. Operations whose
// action is one of skip are left for later (a replica at its cap on long actions). Returns nil
// when nothing is runnable.
func (db *DB) ClaimNext(ctx context.Context, owner string, lease time.Duration, skip ...string) (*Claim, error) {
	var claim *Claim
	err := retryDeadlock(ctx, func() error {
		claim = nil
		return db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			var err error
			claim, err = db.claimTx(tx, owner, lease, skip)
			return err
		}, db.txOpts())
	})
	return claim, err
}

// claimBatch bounds how many candidate rows one claim looks at (and locks on MySQL).
const claimBatch = 16

func (db *DB) claimTx(tx *gorm.DB, owner string, lease time.Duration, skip []string) (*Claim, error) {
	now := Now()
	// Services locked by another operation are filtered here without locking them; the
	// conditional UPDATE below is what actually decides.
	q := tx.Model(&Operation{}).
		// A queued row may be pinned to the replica that holds its secrets (executor
		// Secrets.Pin) until its lease_until.
		Where("((state = ? AND (lease_owner IS NULL OR lease_owner = ? OR lease_until < ?)) OR (state = ? AND lease_until < ?))",
			OpQueued, owner, now, OpRunning, now).
		Where(gateFree).
		Where("awaiting IS NULL").
		Where("NOT EXISTS (SELECT 1 FROM services s WHERE s.client_id = operations.client_id AND s.service_id = operations.service_id AND s.lock_operation_id IS NOT NULL AND s.lock_operation_id <> operations.id AND s.lock_operation_id NOT IN (SELECT o2.id FROM operations o2 WHERE o2.state = ? AND o2.lease_until < ?))", OpRunning, now).
		Order("created_at, id").Limit(claimBatch)
	if len(skip) > 0 {
		q = q.Where("action NOT IN ?", skip)
	}
	if db.Dialect == MySQL {
		q = q.Clauses(clause.Locking{Strength: "UPDATE", Options: "SKIP LOCKED"})
	}
	var cands []Operation
	if err := q.Find(&cands).Error; err != nil {
		return nil, fmt.Errorf("select runnable operations: %w", err)
	}
	for i := range cands {
		c := &cands[i]
		ok, err := lockFor(tx, c)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue // locked by another operation meanwhile
		}
		until := now.Add(lease)
		takeOver := c.State == OpRunning
		upd := tx.Model(&Operation{}).Where("id = ? AND state = ? AND attempts = ?", c.ID, c.State, c.Attempts).
			Updates(map[string]any{"state": OpRunning, "lease_owner": owner, "lease_until": until,
				"attempts": gorm.Expr("attempts + 1"), "updated_at": now,
				"started_at": gorm.Expr("COALESCE(started_at, ?)", now)})
		if upd.Error != nil {
			return nil, fmt.Errorf("claim operation: %w", upd.Error)
		}
		if upd.RowsAffected == 0 {
			continue
		}
		c.State, c.LeaseOwner, c.LeaseUntil, c.Attempts, c.UpdatedAt = OpRunning, &owner, &until, c.Attempts+1, now
		if c.StartedAt == nil {
			c.StartedAt = &now
		}
		return &Claim{Op: c, TakeOver: takeOver}, nil
	}
	return nil, nil
}

// lockFor takes what candidate c needs alone: its gate, if it names one, then its service's
// lock. When the service is locked by another operation, a gate taken for it is given back in
// the same transaction.
func lockFor(tx *gorm.DB, c *Operation) (bool, error) {
	held := true
	if c.Gate != nil {
		ok, already, err := takeGate(tx, *c.Gate, c.ID)
		if err != nil || !ok {
			return false, err
		}
		held = already
	}
	// Take the service lock (a service without a row has nothing to lock).
	res := tx.Exec("UPDATE services SET lock_operation_id = ? WHERE client_id = ? AND service_id = ? AND (lock_operation_id IS NULL OR lock_operation_id = ?)",
		c.ID, c.ClientID, c.ServiceID, c.ID)
	if res.Error != nil {
		return false, fmt.Errorf("lock service: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		var n int64
		if err := tx.Model(&Service{}).Where(keyCond, c.ClientID, c.ServiceID).Count(&n).Error; err != nil {
			return false, err
		}
		if n > 0 {
			if !held {
				return false, releaseGate(tx, c.ID)
			}
			return false, nil
		}
	}
	return true, nil
}

// RenewLease extends owner's lease on an operation; ErrLeaseLost if it is no longer owner's.
func (db *DB) RenewLease(ctx context.Context, id, owner string, lease time.Duration) error {
	n, err := retryRows(ctx, func() *gorm.DB {
		now := Now()
		return db.WithContext(ctx).Model(&Operation{}).Where("id = ? AND lease_owner = ? AND state = ?", id, owner, OpRunning).
			Updates(map[string]any{"lease_until": now.Add(lease), "updated_at": now})
	})
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrLeaseLost
	}
	return nil
}

// SetStage records the stage an operation is about to run, before it runs, so "had an
// irreversible stage started?" is always answerable from the row.
func (db *DB) SetStage(ctx context.Context, id, owner, stage string, index int) error {
	n, err := retryRows(ctx, func() *gorm.DB {
		return db.WithContext(ctx).Model(&Operation{}).Where("id = ? AND lease_owner = ? AND state = ?", id, owner, OpRunning).
			Updates(map[string]any{"stage": stage, "stage_index": index, "updated_at": Now()})
	})
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrLeaseLost
	}
	return nil
}

// Finish moves an operation owned by owner to a terminal state. The service lock is released
// unless the state is needs_reconciliation, which keeps it closed and sets the service's state
// to needs_reconciliation (R28).
func (db *DB) Finish(ctx context.Context, id, owner, state string, result, errCode, errDetail *string) error {
	return db.finish(ctx, id, owner, state, map[string]any{"result": result, "error_code": errCode, "error_detail": errDetail})
}

// finish moves the operation to state with cols (its result and error columns) set.
func (db *DB) finish(ctx context.Context, id, owner, state string, cols map[string]any) error {
	if !IsTerminal(state) {
		return fmt.Errorf("finish with non-terminal state %q", state)
	}
	return retryDeadlock(ctx, func() error { return db.finishTx(ctx, id, owner, state, cols) })
}

func (db *DB) finishTx(ctx context.Context, id, owner, state string, cols map[string]any) error {
	return db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		now := Now()
		var op Operation
		if err := tx.Where("id = ?", id).Take(&op).Error; err != nil {
			return err
		}
		upd := map[string]any{"state": state, "lease_owner": nil, "lease_until": nil, "updated_at": now, "finished_at": now}
		for k, v := range cols {
			upd[k] = v
		}
		res := tx.Model(&Operation{}).Where("id = ? AND lease_owner = ? AND state = ?", id, owner, OpRunning).
			Updates(upd)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return ErrLeaseLost
		}
		// A gate is given back whatever the end: the run that held it is over.
		if err := releaseGate(tx, id); err != nil {
			return err
		}
		if state == OpNeedsReconciliation {
			// R28: the lock stays closed and the service says why, in the same transaction, so
			// no request sees an open service behind a closed lock.
			if err := tx.Exec("UPDATE services SET state = ?, updated_at = ? WHERE client_id = ? AND service_id = ?",
				ServiceNeedsReconciliation, now, op.ClientID, op.ServiceID).Error; err != nil {
				return err
			}
			return failQueuedBehind(tx, op.Key(), now)
		}
		return tx.Exec("UPDATE services SET lock_operation_id = NULL WHERE client_id = ? AND service_id = ? AND lock_operation_id = ?", op.ClientID, op.ServiceID, id).Error
	}, db.txOpts())
}

// failQueuedBehind ends the operations still queued for a service that now awaits an
// operator's reconciliation (R28): behind its closed lock they would wait until the operator
// acts and then run on a guest nobody has looked at. They fail as a new request for that
// service is refused, service_locked, and their clients hear of it like any other end.
func failQueuedBehind(tx *gorm.DB, k ServiceKey, now time.Time) error {
	p := i18n.NewProblem(http.StatusConflict, i18n.CodeServiceLocked)
	code, detail := string(p.Code), p.Detail("en")
	return tx.Model(&Operation{}).Where(keyCond+" AND state = ?", k.ClientID, k.ServiceID, OpQueued).
		Updates(map[string]any{"state": OpFailed, "error_code": code, "error_detail": detail,
			"lease_owner": nil, "lease_until": nil, "updated_at": now, "finished_at": now}).Error
}

// Release gives a claimed operation back to the queue (graceful shutdown before any
// irreversible stage): another worker or replica resumes it.
func (db *DB) Release(ctx context.Context, id, owner string) error {
	return retryDeadlock(ctx, func() error { return db.releaseTx(ctx, id, owner) })
}

func (db *DB) releaseTx(ctx context.Context, id, owner string) error {
	return db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var op Operation
		if err := tx.Where("id = ?", id).Take(&op).Error; err != nil {
			return err
		}
		res := tx.Model(&Operation{}).Where("id = ? AND lease_owner = ? AND state = ?", id, owner, OpRunning).
			Updates(map[string]any{"state": OpQueued, "lease_owner": nil, "lease_until": nil, "updated_at": Now()})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return ErrLeaseLost
		}
		if err := releaseGate(tx, id); err != nil {
			return err
		}
		return tx.Exec("UPDATE services SET lock_operation_id = NULL WHERE client_id = ? AND service_id = ? AND lock_operation_id = ?", op.ClientID, op.ServiceID, id).Error
	}, db.txOpts())
}
