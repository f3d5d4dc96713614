package models

import (
	"context"
	"errors"
	"slices"
	"time"

	"gorm.io/gorm"
)

// ConsoleClaim records that a console token was opened (R41): the token's random nonce, the
// internal id of its service, the client it was issued to, and the token's expiry. The token
// itself, being MACed, is never stored; the nonce alone opens nothing. The claim is also the
// session it opened, counted as open while OpenUntil is in the future.
type ConsoleClaim struct {
	Nonce      []byte `gorm:"primaryKey"`
	ServiceRef int64
	ClientID   string
	// ExpiresAt and OpenUntil are in Unix seconds: integers compare the same on both dialects.
	ExpiresAt int64
	// OpenUntil is when the session lapses unless its relay renews it; 0 once it ended.
	OpenUntil int64
}

// TableName pins the table.
func (ConsoleClaim) TableName() string { return "console_claims" }

// ConsoleOpen is the claim of a console token being opened: its nonce, its service and client,
// the token's expiry, and until when the session counts as open unless renewed.
type ConsoleOpen struct {
	Nonce      []byte
	ServiceRef int64
	ClientID   string
	Expires    time.Time
	OpenUntil  time.Time
}

// ClaimConsole records a console token's nonce as used, and its session as open. It returns
// true when this call is the token's first open, false when it was opened before. The insert is
// the claim: the primary key decides between concurrent opens on any replica.
func (db *DB) ClaimConsole(ctx context.Context, o ConsoleOpen) (bool, error) {
	rec := &ConsoleClaim{Nonce: o.Nonce, ServiceRef: o.ServiceRef, ClientID: o.ClientID, ExpiresAt: o.Expires.Unix(),
		OpenUntil: o.OpenUntil.Unix()}
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

// OpenConsoleSessions counts a client's console sessions open at now, on every replica, and
// among them those of one service (by its internal id), in one statement. A session claimed
// and counted by two replicas at once is seen by at least one of them: each counts after its
// own insert, so a limit checked this way is never passed, at worst both are refused.
func (db *DB) OpenConsoleSessions(ctx context.Context, clientID string, serviceRef int64, now time.Time) (service, client int64, err error) {
	var row struct{ Service, Client int64 }
	err = pooled(ctx, db.Gorm).Model(&ConsoleClaim{}).
		Select("COALESCE(SUM(CASE WHEN service_ref = ? THEN 1 ELSE 0 END), 0) AS service, COUNT(*) AS client", serviceRef).
		Where("client_id = ? AND open_until > ?", clientID, now.Unix()).Scan(&row).Error
	return row.Service, row.Client, err
}

// RenewConsoleSessions keeps these sessions open until until (their relay still runs), in one
// statement per ConsoleWatchChunk nonces.
func (db *DB) RenewConsoleSessions(ctx context.Context, nonces [][]byte, until time.Time) error {
	for chunk := range slices.Chunk(nonces, ConsoleWatchChunk) {
		args := make([]any, len(chunk)) // each nonce one value, not a list of bytes
		for i, n := range chunk {
			args[i] = n
		}
		err := retryDeadlock(ctx, func() error {
			return db.WithContext(ctx).Model(&ConsoleClaim{}).Where("nonce IN ? AND open_until > 0", args).
				Update("open_until", until.Unix()).Error
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// EndConsoleSession records that a token's session ended (or never started): it no longer
// counts as open, and the token stays used.
func (db *DB) EndConsoleSession(ctx context.Context, nonce []byte) error {
	return retryDeadlock(ctx, func() error {
		return db.WithContext(ctx).Model(&ConsoleClaim{}).Where("nonce = ?", nonce).Update("open_until", 0).Error
	})
}

// ReleaseConsoleClaim deletes a token's claim: an open refused before anything was opened
// (too many sessions) leaves the token usable within its 60 s.
func (db *DB) ReleaseConsoleClaim(ctx context.Context, nonce []byte) error {
	return retryDeadlock(ctx, func() error {
		return db.WithContext(ctx).Where("nonce = ?", nonce).Delete(&ConsoleClaim{}).Error
	})
}

// PurgeConsoleClaims deletes the claims of tokens that expired before before and whose
// sessions are no longer open: such a token is refused as expired whether or not it was opened.
func (db *DB) PurgeConsoleClaims(ctx context.Context, before time.Time) (int64, error) {
	res := db.WithContext(ctx).Where("expires_at < ? AND open_until < ?", before.Unix(), before.Unix()).Delete(&ConsoleClaim{})
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
