package models

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// Callback delivery states.
const (
	CallbackPending   = "pending"   // waiting for its next attempt
	CallbackDelivered = "delivered" // the receiver answered 2xx
	CallbackExpired   = "expired"   // retried until the window closed without a 2xx
)

// CallbackDelivery is one completion event owed to a client's callback URL: written once per
// operation end (unique on operation and its terminal state), it is the queue itself, so a
// restart loses nothing. ID is the event id the receiver deduplicates on; Body is the exact
// JSON sent on every attempt.
type CallbackDelivery struct {
	ID             string `gorm:"primaryKey"`
	ClientID       string
	OperationID    string
	OperationState string
	ServiceID      string `gorm:"column:service_id"`
	Body           string
	State          string
	Attempts       int
	NextAttemptAt  time.Time
	LeaseOwner     *string
	LeaseUntil     *time.Time
	LastStatus     *int
	LastError      *string
	CreatedAt      time.Time
	UpdatedAt      time.Time
	DeliveredAt    *time.Time

	// AttemptLog is filled by ListCallbackDeliveries (oldest first); it is no column.
	AttemptLog []CallbackAttempt `gorm:"-"`
}

// TableName pins the table.
func (CallbackDelivery) TableName() string { return "callback_deliveries" }

// CallbackAttempt is one POST of a delivery: what answered (Status, nil without a response) or
// why it failed.
type CallbackAttempt struct {
	ID         int64 `gorm:"primaryKey"`
	DeliveryID string
	Attempt    int
	At         time.Time
	URL        string `gorm:"column:url"`
	Status     *int
	Error      *string
	DurationMS int64 `gorm:"column:duration_ms"`
}

// TableName pins the table.
func (CallbackAttempt) TableName() string { return "callback_attempts" }

// OperationsAwaitingCallback returns terminal operations of the given clients that finished at
// or after since and have no delivery row for their state yet, oldest first.
func (db *DB) OperationsAwaitingCallback(ctx context.Context, clientIDs []string, since time.Time, limit int) ([]Operation, error) {
	if len(clientIDs) == 0 {
		return nil, nil
	}
	var ops []Operation
	err := db.WithContext(ctx).Model(&Operation{}).
		Where("finished_at >= ? AND client_id IN ? AND state IN ?", since, clientIDs,
			[]string{OpSucceeded, OpFailed, OpNeedsReconciliation}).
		Where("NOT EXISTS (SELECT 1 FROM callback_deliveries d WHERE d.operation_id = operations.id AND d.operation_state = operations.state)").
		Order("finished_at, id").Limit(limit).Find(&ops).Error
	if err != nil {
		return nil, fmt.Errorf("operations awaiting callback: %w", err)
	}
	return ops, nil
}

// InsertCallbackDelivery writes a pending delivery due now. It reports false, without error,
// when the operation's end already has one (another replica or an earlier sweep wrote it).
func (db *DB) InsertCallbackDelivery(ctx context.Context, d *CallbackDelivery) (bool, error) {
	now := Now()
	if d.ID == "" {
		d.ID = NewID()
	}
	d.State, d.Attempts = CallbackPending, 0
	d.CreatedAt, d.UpdatedAt, d.NextAttemptAt = now, now, now
	// The unique key on the operation's end is the claim; a Galera certification failure (1213)
	// is run again and then meets the winner's row as a duplicate (R51).
	_, err := retryRows(ctx, func() *gorm.DB { return db.WithContext(ctx).Create(d) })
	if errors.Is(err, gorm.ErrDuplicatedKey) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("insert callback delivery: %w", err)
	}
	return true, nil
}

// ClaimCallbackDeliveries leases up to limit pending deliveries that are due to owner. A row is
// claimed by a conditional update, so concurrent dispatchers (replicas) never share one while
// its lease holds.
func (db *DB) ClaimCallbackDeliveries(ctx context.Context, owner string, lease time.Duration, limit int) ([]CallbackDelivery, error) {
	now := Now()
	var cands []CallbackDelivery
	err := db.WithContext(ctx).Where("state = ? AND next_attempt_at <= ? AND (lease_until IS NULL OR lease_until < ?)",
		CallbackPending, now, now).Order("next_attempt_at, id").Limit(limit).Find(&cands).Error
	if err != nil {
		return nil, fmt.Errorf("select due callbacks: %w", err)
	}
	out := cands[:0]
	for _, c := range cands {
		until := now.Add(lease)
		var res *gorm.DB
		err := retryDeadlock(ctx, func() error {
			res = db.WithContext(ctx).Model(&CallbackDelivery{}).
				Where("id = ? AND state = ? AND (lease_until IS NULL OR lease_until < ?)", c.ID, CallbackPending, now).
				Updates(map[string]any{"lease_owner": owner, "lease_until": until, "updated_at": now})
			return res.Error
		})
		if err != nil {
			return out, fmt.Errorf("claim callback: %w", err)
		}
		if res.RowsAffected == 1 {
			c.LeaseOwner, c.LeaseUntil = &owner, &until
			out = append(out, c)
		}
	}
	return out, nil
}

// CallbackOutcome is what one attempt decided: the delivery's next state and, while pending,
// when to try again.
type CallbackOutcome struct {
	State         string
	NextAttemptAt time.Time
}

// RecordCallbackAttempt logs an attempt and moves the delivery on, both in one transaction, as
// long as owner still holds the lease (ErrLeaseLost otherwise: another dispatcher took over).
func (db *DB) RecordCallbackAttempt(ctx context.Context, id, owner string, a CallbackAttempt, o CallbackOutcome) error {
	return retryDeadlock(ctx, func() error {
		return db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			now := Now()
			var d CallbackDelivery
			if err := tx.Select("id", "attempts").Where("id = ?", id).Take(&d).Error; err != nil {
				return err
			}
			upd := map[string]any{"state": o.State, "attempts": gorm.Expr("attempts + 1"), "last_status": a.Status,
				"last_error": a.Error, "lease_owner": nil, "lease_until": nil, "updated_at": now}
			switch o.State {
			case CallbackPending:
				upd["next_attempt_at"] = o.NextAttemptAt.UTC()
			case CallbackDelivered:
				upd["delivered_at"] = now
			}
			res := tx.Model(&CallbackDelivery{}).Where("id = ? AND lease_owner = ? AND state = ?", id, owner, CallbackPending).Updates(upd)
			if res.Error != nil {
				return res.Error
			}
			if res.RowsAffected == 0 {
				return ErrLeaseLost
			}
			a.ID, a.DeliveryID, a.Attempt = 0, id, d.Attempts+1
			a.At = a.At.UTC().Truncate(time.Microsecond)
			return tx.Create(&a).Error
		}, db.txOpts())
	})
}

// CallbackFilter narrows ListCallbackDeliveries; zero fields match everything.
type CallbackFilter struct {
	ClientID    string
	State       string
	ServiceID   string
	OperationID string
	Limit       int // default 100, at most 500
}

// ListCallbackDeliveries returns deliveries newest first, each with its attempt log.
func (db *DB) ListCallbackDeliveries(ctx context.Context, f CallbackFilter) ([]CallbackDelivery, error) {
	if f.Limit <= 0 || f.Limit > 500 {
		f.Limit = 100
	}
	q := db.WithContext(ctx).Model(&CallbackDelivery{})
	for col, v := range map[string]string{"client_id": f.ClientID, "state": f.State, "service_id": f.ServiceID, "operation_id": f.OperationID} {
		if v != "" {
			q = q.Where(col+" = ?", v)
		}
	}
	var out []CallbackDelivery
	if err := q.Order("created_at DESC, id").Limit(f.Limit).Find(&out).Error; err != nil {
		return nil, fmt.Errorf("list callbacks: %w", err)
	}
	if len(out) == 0 {
		return out, nil
	}
	ids := make([]string, len(out))
	idx := make(map[string]int, len(out))
	for i, d := range out {
		ids[i], idx[d.ID] = d.ID, i
	}
	var attempts []CallbackAttempt
	if err := db.WithContext(ctx).Where("delivery_id IN ?", ids).Order("delivery_id, attempt").Find(&attempts).Error; err != nil {
		return nil, fmt.Errorf("list callback attempts: %w", err)
	}
	for _, a := range attempts {
		i := idx[a.DeliveryID]
		out[i].AttemptLog = append(out[i].AttemptLog, a)
	}
	return out, nil
}

// PurgeCallbackDeliveries deletes delivered and expired deliveries last changed before cutoff,
// with their attempts; pending ones are never purged.
func (db *DB) PurgeCallbackDeliveries(ctx context.Context, cutoff time.Time) (int64, error) {
	var n int64
	err := db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		old := tx.Model(&CallbackDelivery{}).Select("id").Where("state <> ? AND updated_at < ?", CallbackPending, cutoff)
		if err := tx.Where("delivery_id IN (?)", old).Delete(&CallbackAttempt{}).Error; err != nil {
			return err
		}
		res := tx.Where("state <> ? AND updated_at < ?", CallbackPending, cutoff).Delete(&CallbackDelivery{})
		n = res.RowsAffected
		return res.Error
	}, db.txOpts())
	return n, err
}
