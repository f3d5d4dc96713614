package models

import (
	"context"
	"errors"
	"slices"
	"time"

	"gorm.io/gorm"
)

// ConsoleClaim records that a console token was opened (R41): the token's random nonce, the
// internal id of its service, and the token's expiry. The token itself, being MACed, is never
// stored; the nonce alone opens nothing.
type ConsoleClaim struct {
	Nonce      []byte `gorm:"primaryKey"`
	ServiceRef int64
	// ExpiresAt is in Unix seconds: integers compare the same on both dialects.
	ExpiresAt int64
}

// TableName pins the table.
func (ConsoleClaim) TableName() string { return "console_claims" }

// ClaimConsole records a console token's nonce as used. It returns true when this call is the
// token's first open, false when it was opened before. The insert is the claim: the primary key
// decides between concurrent opens on any replica.
func (db *DB) ClaimConsole(ctx context.Context, nonce []byte, serviceRef int64, expires time.Time) (bool, error) {
	rec := &ConsoleClaim{Nonce: nonce, ServiceRef: serviceRef, ExpiresAt: expires.Unix()}
	err := retryDeadlock(ctx, func() error { return pooled(ctx, db.Gorm).Create(rec).Error })
	if errors.Is(err, gorm.ErrDuplicatedKey) {
		return false, nil
	}
	return err == nil, err
}

// ConsoleClaimed reports whether a console token's nonce was claimed already.
func (db *DB) ConsoleClaimed(ctx context.Context, nonce []byte) (bool, error) {
	var n int64
	err := pooled(ctx, db.Gorm).Model(&ConsoleClaim{}).Where("nonce = ?", nonce).Count(&n).Error
	return n > 0, err
}

// PurgeConsoleClaims deletes the claims of tokens that expired before before: such a token is
// refused as expired whether or not it was opened.
func (db *DB) PurgeConsoleClaims(ctx context.Context, before time.Time) (int64, error) {
	res := db.WithContext(ctx).Where("expires_at < ?", before.Unix()).Delete(&ConsoleClaim{})
	return res.RowsAffected, res.Error
}

// GetServiceByRef finds a service by its internal id (services.id).
func GetServiceByRef(ctx context.Context, tx *gorm.DB, ref int64) (*Service, error) {
	var s Service
	err := pooled(ctx, tx).Where("id = ?", ref).Take(&s).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, ErrNotFound
	}
	return &s, err
}

// ConsoleWatch is what the console's watcher reads of a service with open sessions (R41): its
// client, its state, and the action of the operation holding its lock ("" when none does).
type ConsoleWatch struct {
	ID         int64
	ClientID   string
	State      string
	LockAction string
}

// ConsoleWatchChunk is the most service ids one statement of WatchConsoleServices names.
const ConsoleWatchChunk = 500

// WatchConsoleServices reads the services with these internal ids and the actions of the
// operations that hold them, in one statement per ConsoleWatchChunk ids; a service that is gone
// is absent from the answer. The statements bypass the statement pool: their number of
// placeholders follows the open sessions, and each count would take a place of the pool.
func WatchConsoleServices(ctx context.Context, tx *gorm.DB, refs []int64) ([]ConsoleWatch, error) {
	out := make([]ConsoleWatch, 0, len(refs))
	for chunk := range slices.Chunk(refs, ConsoleWatchChunk) {
		var rows []ConsoleWatch
		err := tx.WithContext(ctx).Table("services").
			Select("services.id, services.client_id, services.state, COALESCE(operations.action, '') AS lock_action").
			Joins("LEFT JOIN operations ON operations.id = services.lock_operation_id").
			Where("services.id IN ?", chunk).Scan(&rows).Error
		if err != nil {
			return nil, err
		}
		out = append(out, rows...)
	}
	return out, nil
}
