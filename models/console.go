package models

import (
	"context"
	"errors"
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
