package models

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"
)

// Idempotency record states.
const (
	IdemPending = "pending"
	IdemDone    = "done"
)

// IdempotencyKey remembers the first answer to a request carrying an Idempotency-Key, per client.
type IdempotencyKey struct {
	ClientID     string `gorm:"primaryKey"`
	IdemKey      string `gorm:"primaryKey"`
	RequestHash  string
	State        string
	StatusCode   int
	ContentType  string
	Location     string
	ResponseBody *string
	CreatedAt    time.Time
	ExpiresAt    time.Time
}

// TableName pins the table.
func (IdempotencyKey) TableName() string { return "idempotency_keys" }

// IdempotencyPendingTTL bounds how long a pending reservation holds its key: longer than any
// request runs (a long-poll waits at most a minute), short enough that a billing system's
// retry is served again soon after the replica that reserved the key died mid-request (R36,
// R38). A completed record keeps the full TTL.
const IdempotencyPendingTTL = 2 * time.Minute

// ReserveIdempotencyKey inserts a pending record. It returns (nil, nil) when this caller reserved
// the key, or the existing record when another request holds it. An expired record is replaced;
// a pending record expires after IdempotencyPendingTTL (or ttl, if shorter).
func (db *DB) ReserveIdempotencyKey(ctx context.Context, clientID, key, hash string, ttl time.Duration) (*IdempotencyKey, error) {
	now := Now()
	rec := &IdempotencyKey{ClientID: clientID, IdemKey: key, RequestHash: hash, State: IdemPending,
		CreatedAt: now, ExpiresAt: now.Add(min(ttl, IdempotencyPendingTTL))}
	for attempt := 0; attempt < 2; attempt++ {
		// The primary key (client_id, idem_key) is the claim: on Galera two nodes that insert
		// the same key both succeed locally and the loser fails at commit (1213); run again,
		// its insert meets the winner's row as a duplicate (R51).
		_, err := retryRows(ctx, func() *gorm.DB { return pooled(ctx, db.Gorm).Create(rec) })
		if err == nil {
			return nil, nil
		}
		if !errors.Is(err, gorm.ErrDuplicatedKey) {
			return nil, err
		}
		existing, err := db.GetIdempotencyKey(ctx, clientID, key)
		if errors.Is(err, ErrNotFound) {
			continue // released between our insert and read
		}
		if err != nil {
			return nil, err
		}
		if existing.ExpiresAt.After(now) {
			return existing, nil
		}
		if _, err := retryRows(ctx, func() *gorm.DB {
			return db.WithContext(ctx).Where("client_id = ? AND idem_key = ? AND expires_at <= ?", clientID, key, now).
				Delete(&IdempotencyKey{})
		}); err != nil {
			return nil, err
		}
	}
	return db.GetIdempotencyKey(ctx, clientID, key)
}

// GetIdempotencyKey reads a record.
func (db *DB) GetIdempotencyKey(ctx context.Context, clientID, key string) (*IdempotencyKey, error) {
	var rec IdempotencyKey
	err := pooled(ctx, db.Gorm).Where("client_id = ? AND idem_key = ?", clientID, key).Take(&rec).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, ErrNotFound
	}
	return &rec, err
}

// CompleteIdempotencyKey stores the response of the request that reserved the key, replayed
// for ttl from now.
func (db *DB) CompleteIdempotencyKey(ctx context.Context, clientID, key string, status int, contentType, location string, body []byte, ttl time.Duration) error {
	b := string(body)
	_, err := retryRows(ctx, func() *gorm.DB {
		return pooled(ctx, db.Gorm).Model(&IdempotencyKey{}).Where("client_id = ? AND idem_key = ? AND state = ?", clientID, key, IdemPending).
			Updates(map[string]any{"state": IdemDone, "status_code": status, "content_type": contentType,
				"location": location, "response_body": &b, "expires_at": Now().Add(ttl)})
	})
	return err
}

// ReleaseIdempotencyKey drops a pending reservation (the request failed in a way a retry may fix).
func (db *DB) ReleaseIdempotencyKey(ctx context.Context, clientID, key string) error {
	_, err := retryRows(ctx, func() *gorm.DB {
		return pooled(ctx, db.Gorm).Where("client_id = ? AND idem_key = ? AND state = ?", clientID, key, IdemPending).
			Delete(&IdempotencyKey{})
	})
	return err
}

// PurgeExpiredIdempotencyKeys deletes records past their 24 h window.
func (db *DB) PurgeExpiredIdempotencyKeys(ctx context.Context) (int64, error) {
	res := db.WithContext(ctx).Where("expires_at <= ?", Now()).Delete(&IdempotencyKey{})
	return res.RowsAffected, res.Error
}
