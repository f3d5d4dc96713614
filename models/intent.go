package models

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// Reinstall intent states (docs/api.md Reinstall).
const (
	IntentPreviewPending = "preview_pending"
	IntentPreviewReady   = "preview_ready"
	IntentApplying       = "applying"
	// IntentAwaitingPassword: the apply was taken over after the destroy, without SSH keys;
	// the billing system sends the apply's password again (R26, R58).
	IntentAwaitingPassword    = "awaiting_password"
	IntentCompleted           = "completed"
	IntentFailed              = "failed"
	IntentNeedsReconciliation = "needs_reconciliation"
	IntentResolved            = "resolved"
)

// Intent kinds: a reinstall from the OS, or a restore from one of the service's backups (R43),
// which is the same replacement with another source.
const (
	IntentKindReinstall = "reinstall"
	IntentKindRestore   = "restore"
)

// Intent is the customer-facing state of one reinstall (R18–R29). No worker writes it: a read
// advances it from the operation it is attached to (OperationID: the preview's operation, then
// the apply's) with a compare-and-swap on Generation. Preview, Applied and Reconciliation are
// JSON documents; none ever holds a secret.
type Intent struct {
	ID        string `gorm:"primaryKey"`
	ServiceID string `gorm:"column:service_id"`
	ClientID  string
	// Kind is IntentKindReinstall or IntentKindRestore; BackupID names a restore's backup.
	Kind           string
	BackupID       *string `gorm:"column:backup_id"`
	State          string
	Generation     int64
	GuestType      string
	Cluster        string
	Node           string
	VMID           int `gorm:"column:vmid"`
	Plan           string
	OS             string `gorm:"column:os"`
	OperationID    string
	Preview        *string
	Applied        *string
	Reconciliation *string
	ErrorCode      *string
	// ErrorBlockers are the blockers of the failed operation, as Operation.ErrorBlockers.
	ErrorBlockers *string
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// TableName pins the table.
func (Intent) TableName() string { return "reinstall_intents" }

// ErrIntentChanged is returned when a compare-and-swap on an intent's generation lost: somebody
// else moved the row first.
var ErrIntentChanged = errors.New("reinstall intent changed concurrently")

// InsertIntentOperation writes a new intent (generation 1) and the operation it is attached to
// in one transaction.
func (db *DB) InsertIntentOperation(ctx context.Context, in *Intent, op *Operation) error {
	return retryDeadlock(ctx, func() error {
		return db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			if err := InsertOperation(ctx, tx, op); err != nil {
				return err
			}
			now := Now()
			if in.ID == "" {
				in.ID = NewID()
			}
			in.OperationID, in.Generation, in.CreatedAt, in.UpdatedAt = op.ID, 1, now, now
			if in.Kind == "" {
				in.Kind = IntentKindReinstall
			}
			return tx.Create(in).Error
		}, db.txOpts())
	})
}

// GetIntent reads one intent.
func GetIntent(ctx context.Context, tx *gorm.DB, id string) (*Intent, error) {
	var in Intent
	err := tx.WithContext(ctx).Where("id = ?", id).Take(&in).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, ErrNotFound
	}
	return &in, err
}

// GetServiceIntent reads one intent of a client's service (R46): an intent of another
// client's service, even one with the same service id, is ErrNotFound, as an unknown id is.
func GetServiceIntent(ctx context.Context, tx *gorm.DB, k ServiceKey, id string) (*Intent, error) {
	var in Intent
	err := tx.WithContext(ctx).Where(keyCond+" AND id = ?", k.ClientID, k.ServiceID, id).Take(&in).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, ErrNotFound
	}
	return &in, err
}

// LatestIntent reads a service's most recent intent.
func LatestIntent(ctx context.Context, tx *gorm.DB, k ServiceKey) (*Intent, error) {
	var in Intent
	err := tx.WithContext(ctx).Where(keyCond, k.ClientID, k.ServiceID).Order("created_at DESC, id DESC").Take(&in).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, ErrNotFound
	}
	return &in, err
}

// LatestIntentOfKind reads a service's most recent intent of kind.
func LatestIntentOfKind(ctx context.Context, tx *gorm.DB, k ServiceKey, kind string) (*Intent, error) {
	var in Intent
	err := tx.WithContext(ctx).Where(keyCond+" AND kind = ?", k.ClientID, k.ServiceID, kind).Order("created_at DESC, id DESC").
		Take(&in).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, ErrNotFound
	}
	return &in, err
}

// LatestIntentIn reads a service's most recent intent in one of states that names an OS (a
// reinstall's; a restore's names none).
func LatestIntentIn(ctx context.Context, tx *gorm.DB, k ServiceKey, states ...string) (*Intent, error) {
	var in Intent
	err := tx.WithContext(ctx).Where(keyCond+" AND state IN ? AND os <> ''", k.ClientID, k.ServiceID, states).
		Order("created_at DESC, id DESC").Take(&in).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, ErrNotFound
	}
	return &in, err
}

// swapIntent writes cols on the intent if its generation is still gen, and bumps the
// generation. It reports whether it won.
func swapIntent(tx *gorm.DB, id string, gen int64, cols map[string]any) (bool, error) {
	upd := make(map[string]any, len(cols)+2)
	for k, v := range cols {
		upd[k] = v
	}
	upd["generation"] = gen + 1
	upd["updated_at"] = Now()
	res := tx.Model(&Intent{}).Where("id = ? AND generation = ?", id, gen).Updates(upd)
	if res.Error != nil {
		return false, res.Error
	}
	return res.RowsAffected == 1, nil
}

// AdvanceIntent is the compare-and-swap of an advance on read: cols are written when the intent
// is still at generation gen; serviceState, when not empty, is written on the service in the
// same transaction (a reinstall that needs reconciliation marks its service). It returns
// ErrIntentChanged when another reader won; that reader made exactly this transition, so the
// loser re-reads (R29).
func (db *DB) AdvanceIntent(ctx context.Context, id string, gen int64, cols map[string]any, svc ServiceKey, serviceState string) error {
	return retryDeadlock(ctx, func() error {
		return db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			won, err := swapIntent(tx, id, gen, cols)
			if err != nil {
				return fmt.Errorf("advance intent %s: %w", id, err)
			}
			if !won {
				return ErrIntentChanged
			}
			if serviceState != "" {
				return UpdateService(ctx, tx, svc, map[string]any{"state": serviceState})
			}
			return nil
		}, db.txOpts())
	})
}

// ApplyIntent attaches an apply operation to an intent that is still at generation gen in
// state preview_ready: the operation is written, the intent moves to applying with applied (the
// confirmations and labels the customer sent back), and ev is recorded, in one transaction.
// ErrIntentChanged when the intent moved meanwhile (another apply won).
func (db *DB) ApplyIntent(ctx context.Context, id string, gen int64, op *Operation, applied string, ev *AuditEvent) error {
	// The generation is the compare-and-swap; on Galera the loser fails at commit (1213) and,
	// run again, gets ErrIntentChanged (R51).
	return retryDeadlock(ctx, func() error {
		return db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			if err := InsertOperation(ctx, tx, op); err != nil {
				return err
			}
			res := tx.Model(&Intent{}).Where("id = ? AND generation = ? AND state = ?", id, gen, IntentPreviewReady).
				Updates(map[string]any{"state": IntentApplying, "operation_id": op.ID, "applied": applied,
					"generation": gen + 1, "updated_at": Now()})
			if res.Error != nil {
				return res.Error
			}
			if res.RowsAffected != 1 {
				return ErrIntentChanged
			}
			ev.ID, ev.OperationID = 0, op.ID // a fresh id on each run: the last one rolled back
			return InsertAudit(ctx, tx, ev)
		}, db.txOpts())
	})
}

// CountActiveOperations counts a service's queued or running operations of the given actions,
// leaving out the operation except ("" for none).
func CountActiveOperations(ctx context.Context, tx *gorm.DB, k ServiceKey, except string, actions ...string) (int64, error) {
	var n int64
	err := tx.WithContext(ctx).Model(&Operation{}).
		Where(keyCond+" AND action IN ? AND state IN ? AND id <> ?", k.ClientID, k.ServiceID, actions, []string{OpQueued, OpRunning}, except).
		Count(&n).Error
	return n, err
}

// ErrNothingToReconcile is returned by Reconcile for a service that does not await
// reconciliation.
var ErrNothingToReconcile = errors.New("service does not await reconciliation")

// awaitingReconciliation is nil when the service awaits reconciliation, else
// ErrNothingToReconcile; the operation that holds its lock is named in ev.
func awaitingReconciliation(ctx context.Context, tx *gorm.DB, k ServiceKey, ev *AuditEvent) error {
	svc, err := GetService(ctx, tx, k)
	if err != nil {
		return err
	}
	awaiting := svc.State == ServiceNeedsReconciliation
	if svc.LockOperationID != nil {
		op, err := GetOperation(ctx, tx, *svc.LockOperationID)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return err
		}
		if op != nil {
			if op.State != OpNeedsReconciliation {
				return ErrNothingToReconcile
			}
			awaiting = true
			ev.OperationID = op.ID
		}
	}
	if !awaiting {
		return ErrNothingToReconcile
	}
	return nil
}

// Reconcile closes a service's needs_reconciliation (R28): the service moves to state and its
// lock is released, every intent of it awaiting reconciliation becomes resolved, and ev is
// recorded, in one transaction. The operation keeps its needs_reconciliation state as history.
// A service awaits reconciliation when its state says so or when the operation holding its lock
// ended needs_reconciliation (a run taken over after a crash, R38).
func (db *DB) Reconcile(ctx context.Context, k ServiceKey, state string, ev *AuditEvent) (*Service, error) {
	var out *Service
	err := retryDeadlock(ctx, func() error {
		return db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			if err := awaitingReconciliation(ctx, tx, k, ev); err != nil {
				return err
			}
			if err := UpdateService(ctx, tx, k, map[string]any{"state": state, "lock_operation_id": nil}); err != nil {
				return err
			}
			if err := tx.Model(&Intent{}).Where(keyCond+" AND (state = ? OR (state = ? AND operation_id = ?))", k.ClientID, k.ServiceID,
				IntentNeedsReconciliation, IntentApplying, ev.OperationID).
				Updates(map[string]any{"state": IntentResolved, "generation": gorm.Expr("generation + 1"), "updated_at": Now()}).Error; err != nil {
				return err
			}
			if err := InsertAudit(ctx, tx, ev); err != nil {
				return err
			}
			var err error
			out, err = GetService(ctx, tx, k)
			return err
		}, db.txOpts())
	})
	return out, err
}
