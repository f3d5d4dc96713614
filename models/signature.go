package models

import (
	"context"
	"crypto/sha256"
	"errors"
	"time"

	"gorm.io/gorm"
)

// SeenSignature records that a signed mutating request was accepted (R47): the client and a
// SHA-256 of the signature, until the signature's timestamp leaves the acceptance window.
type SeenSignature struct {
	ClientID string `gorm:"primaryKey"`
	SigHash  []byte `gorm:"primaryKey"`
	// ExpiresAt is in Unix seconds: integers compare the same on both dialects.
	ExpiresAt int64
}

// TableName pins the table.
func (SeenSignature) TableName() string { return "seen_signatures" }

// ClaimSignature records a signature of clientID as used until expires. It returns true when
// this call is its first use, false when the signature was seen already (a replay). The insert
// is the claim: the primary key decides between concurrent uses on any replica, and a Galera
// certification failure is retried as a deadlock, after which the key conflict answers.
func (db *DB) ClaimSignature(ctx context.Context, clientID, signature string, expires time.Time) (bool, error) {
	sum := sha256.Sum256([]byte(signature))
	rec := &SeenSignature{ClientID: clientID, SigHash: sum[:], ExpiresAt: expires.Unix()}
	err := retryDeadlock(ctx, func() error { return pooled(ctx, db.Gorm).Create(rec).Error })
	if errors.Is(err, gorm.ErrDuplicatedKey) {
		return false, nil
	}
	return err == nil, err
}

// PurgeSeenSignatures deletes the records whose signatures expired before before.
func (db *DB) PurgeSeenSignatures(ctx context.Context, before time.Time) (int64, error) {
	res := db.WithContext(ctx).Where("expires_at < ?", before.Unix()).Delete(&SeenSignature{})
	return res.RowsAffected, res.Error
}
