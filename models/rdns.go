package models

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Actions and statuses of a reverse DNS record (R55).
const (
	// RDNSSet: the address's PTR record should name Hostname.
	RDNSSet = "set"
	// RDNSDelete: the service let the address go; its PTR record should be removed.
	RDNSDelete = "delete"
	// RDNSPending: the wanted state has not reached PowerDNS yet (not tried, or PowerDNS was
	// not reachable); retried with backoff.
	RDNSPending = "pending"
	// RDNSSynced: PowerDNS has the wanted state.
	RDNSSynced = "synced"
	// RDNSFailed: PowerDNS refused the change (a 4xx answer: no such zone, a wrong key); retried
	// with backoff as well, since the refusal is the operator's to fix.
	RDNSFailed = "failed"
)

// MaxRDNSErrorLen is the width of rdns_records.last_error.
const MaxRDNSErrorLen = 255

// RDNSRecord is the PTR record pvebill wants for one address and whether PowerDNS has it
// (rdns_records). Generation counts the changes of the wanted state; ClaimUntil (Unix
// milliseconds, 0 = none) marks the replica talking to PowerDNS about the address.
type RDNSRecord struct {
	Address       string `gorm:"primaryKey"`
	ClientID      string
	ServiceID     string `gorm:"column:service_id"`
	Pool          string
	Zone          string
	Hostname      string
	Action        string
	Status        string
	Generation    int64
	Attempts      int
	LastError     string
	ChangedAt     time.Time
	NextAttemptAt time.Time
	SyncedAt      *time.Time
	ClaimUntil    int64
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// TableName pins the table.
func (RDNSRecord) TableName() string { return "rdns_records" }

// Key is the key of the record's service.
func (r RDNSRecord) Key() ServiceKey { return ServiceKey{ClientID: r.ClientID, ServiceID: r.ServiceID} }

// HeldPrefix is what an allocation gives its service: an IPv4 address as a /32, or an IPv6
// pool's assigned prefix (R54).
func HeldPrefix(a IPAllocation, p IPPool) (netip.Prefix, error) {
	if p.AssignPrefix == 0 {
		return netip.PrefixFrom(IPv4(a.IP), 32), nil
	}
	cidr, err := netip.ParsePrefix(p.CIDR)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("ip pool %s: cidr: %w", p.Name, err)
	}
	return IPv6Prefix(cidr, p.AssignPrefix, a.IP), nil
}

// RDNSHolder decides, from the allocations a service holds and their pools, which pool holds an
// address and the reverse zone of its record, or refuses.
type RDNSHolder func(allocs []IPAllocation, pools map[string]IPPool) (pool, zone string, err error)

// ErrRDNSLimit refuses a record for one more address of a service that has records for the most
// addresses allowed.
var ErrRDNSLimit = errors.New("the service has reverse DNS records for the most addresses allowed")

// SetRDNS records hostname as the wanted PTR record of address for the service k and returns
// the row written (status pending, a new generation). One transaction first reads the service's
// allocations, locked (FOR UPDATE on MySQL; SQLite has one writer), and lets hold check the
// address against them: a release that runs at the same time either comes first (the address
// is no longer held) or waits and then marks this record for removal. The row of a removal
// still under way for the address's previous owner is taken over. A service holds records for at
// most maxRecords addresses: one more is ErrRDNSLimit (a replacement always passes).
func (db *DB) SetRDNS(ctx context.Context, k ServiceKey, address, hostname string, maxRecords int,
	hold RDNSHolder) (RDNSRecord, error) {
	var out RDNSRecord
	err := retryDeadlock(ctx, func() error {
		return db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			q := tx.Where(keyCond, k.ClientID, k.ServiceID).Order("pool")
			if db.Dialect == MySQL {
				q = q.Clauses(clause.Locking{Strength: "UPDATE"})
			}
			var allocs []IPAllocation
			if err := q.Find(&allocs).Error; err != nil {
				return err
			}
			pools, err := poolsOf(tx, allocs)
			if err != nil {
				return err
			}
			pool, zone, err := hold(allocs, pools)
			if err != nil {
				return err
			}
			var others int64
			if err := tx.Model(&RDNSRecord{}).Where(keyCond+" AND action = ? AND address <> ?", k.ClientID, k.ServiceID,
				RDNSSet, address).Count(&others).Error; err != nil {
				return err
			}
			if others >= int64(maxRecords) {
				return ErrRDNSLimit
			}
			out, err = db.writeRDNS(tx, RDNSRecord{Address: address, ClientID: k.ClientID, ServiceID: k.ServiceID,
				Pool: pool, Zone: zone, Hostname: hostname})
			return err
		}, db.txOpts())
	})
	return out, err
}

// writeRDNS inserts or replaces the row of r.Address as a pending set, one generation on.
func (db *DB) writeRDNS(tx *gorm.DB, r RDNSRecord) (RDNSRecord, error) {
	q := tx.Where("address = ?", r.Address)
	if db.Dialect == MySQL {
		q = q.Clauses(clause.Locking{Strength: "UPDATE"})
	}
	var cur RDNSRecord
	err := q.Take(&cur).Error
	now := Now()
	r.Action, r.Status, r.ChangedAt, r.NextAttemptAt, r.UpdatedAt = RDNSSet, RDNSPending, now, now, now
	if errors.Is(err, gorm.ErrRecordNotFound) {
		r.Generation, r.CreatedAt = 1, now
		return r, tx.Create(&r).Error
	}
	if err != nil {
		return r, err
	}
	r.Generation, r.CreatedAt, r.ClaimUntil, r.SyncedAt = cur.Generation+1, cur.CreatedAt, cur.ClaimUntil, cur.SyncedAt
	return r, tx.Model(&RDNSRecord{}).Where("address = ?", r.Address).Updates(map[string]any{
		"client_id": r.ClientID, "service_id": r.ServiceID, "pool": r.Pool, "zone": r.Zone, "hostname": r.Hostname,
		"action": r.Action, "status": r.Status, "generation": r.Generation, "attempts": 0, "last_error": "",
		"changed_at": now, "next_attempt_at": now, "updated_at": now,
	}).Error
}

// markRDNSReleased turns the service's records into pending removals, except those of the
// pools in keep (a change of plan keeps the addresses of the pools both plans name). It runs in
// the transaction that releases the addresses (R55: a record only for an address held).
func markRDNSReleased(tx *gorm.DB, k ServiceKey, keep []string) error {
	now := Now()
	q := tx.Model(&RDNSRecord{}).Where(keyCond+" AND action = ?", k.ClientID, k.ServiceID, RDNSSet)
	if len(keep) > 0 {
		q = q.Where("pool NOT IN ?", keep)
	}
	return q.Updates(map[string]any{"action": RDNSDelete, "status": RDNSPending,
		"generation": gorm.Expr("generation + 1"), "attempts": 0, "last_error": "", "changed_at": now,
		"next_attempt_at": now, "updated_at": now}).Error
}

// ServiceRDNS lists the records a service holds (action set), ordered by address text.
func ServiceRDNS(ctx context.Context, tx *gorm.DB, k ServiceKey) ([]RDNSRecord, error) {
	var out []RDNSRecord
	err := tx.WithContext(ctx).Where(keyCond+" AND action = ?", k.ClientID, k.ServiceID, RDNSSet).
		Order("address").Find(&out).Error
	return out, err
}

// DueRDNS lists up to limit records not synced whose next attempt is due at now, the longest
// waiting first.
func DueRDNS(ctx context.Context, tx *gorm.DB, now time.Time, limit int) ([]RDNSRecord, error) {
	var out []RDNSRecord
	err := tx.WithContext(ctx).Where("status IN ? AND next_attempt_at <= ?", []string{RDNSPending, RDNSFailed}, now).
		Order("next_attempt_at, address").Limit(limit).Find(&out).Error
	return out, err
}

// ClaimRDNS claims the record of address at generation gen until until: it succeeds (true) when
// the record is still at that generation, not synced, due at now, and nobody else holds an
// unexpired claim on it. Only the claimant talks to PowerDNS about the address, and a round that
// read the record before another finished it (synced, or failed and waiting) does not send it
// again.
func ClaimRDNS(ctx context.Context, tx *gorm.DB, address string, gen int64, now, until time.Time) (bool, error) {
	res := tx.WithContext(ctx).Model(&RDNSRecord{}).
		Where("address = ? AND generation = ? AND status <> ? AND next_attempt_at <= ? AND claim_until < ?",
			address, gen, RDNSSynced, now, now.UnixMilli()).
		Update("claim_until", until.UnixMilli())
	return res.RowsAffected == 1, res.Error
}

// RDNSOutcome is what an attempt at PowerDNS found.
type RDNSOutcome struct {
	// Status is RDNSSynced, RDNSPending (not reached) or RDNSFailed (refused).
	Status string
	// Error is the attempt's error, without secrets, cut to MaxRDNSErrorLen ("" on success).
	Error string
	// Next is when a failed attempt is tried again.
	Next time.Time
}

// FinishRDNS records the outcome of the claimed attempt at r (its address and generation) and
// drops the claim. A removal that reached PowerDNS deletes the row. When the wanted state
// changed during the attempt, only the claim is dropped and the newer generation is due now.
func FinishRDNS(ctx context.Context, tx *gorm.DB, r RDNSRecord, o RDNSOutcome) error {
	now := Now()
	at := tx.WithContext(ctx).Where("address = ? AND generation = ?", r.Address, r.Generation)
	var res *gorm.DB
	switch {
	case o.Status == RDNSSynced && r.Action == RDNSDelete:
		res = at.Delete(&RDNSRecord{})
	case o.Status == RDNSSynced:
		res = at.Model(&RDNSRecord{}).Updates(map[string]any{"status": RDNSSynced, "last_error": "",
			"synced_at": now, "claim_until": 0, "updated_at": now})
	default:
		res = at.Model(&RDNSRecord{}).Updates(map[string]any{"status": o.Status, "attempts": gorm.Expr("attempts + 1"),
			"last_error": o.Error, "next_attempt_at": o.Next, "claim_until": 0, "updated_at": now})
	}
	if res.Error != nil || res.RowsAffected == 1 {
		return res.Error
	}
	return tx.WithContext(ctx).Model(&RDNSRecord{}).Where("address = ?", r.Address).
		Updates(map[string]any{"claim_until": 0, "next_attempt_at": now}).Error
}

// RDNSCounts are the records by status and the time the oldest change not yet synced was
// recorded (zero when every record is synced).
type RDNSCounts struct {
	ByStatus       map[string]int64
	OldestUnsynced time.Time
}

// CountRDNS counts the records by status and finds the oldest unsynced change (the metrics).
func CountRDNS(ctx context.Context, tx *gorm.DB) (RDNSCounts, error) {
	var rows []struct {
		Status string
		N      int64
	}
	out := RDNSCounts{ByStatus: map[string]int64{RDNSPending: 0, RDNSSynced: 0, RDNSFailed: 0}}
	if err := tx.WithContext(ctx).Model(&RDNSRecord{}).Select("status, COUNT(*) AS n").Group("status").Scan(&rows).Error; err != nil {
		return out, err
	}
	for _, r := range rows {
		out.ByStatus[r.Status] = r.N
	}
	var oldest RDNSRecord
	err := tx.WithContext(ctx).Where("status <> ?", RDNSSynced).Order("changed_at").Limit(1).Find(&oldest).Error
	if err == nil && oldest.Address != "" {
		out.OldestUnsynced = oldest.ChangedAt
	}
	return out, err
}

// UnsyncedRDNS lists the service's records that PowerDNS does not have yet, removals included.
func UnsyncedRDNS(ctx context.Context, tx *gorm.DB, k ServiceKey) ([]RDNSRecord, error) {
	var out []RDNSRecord
	err := tx.WithContext(ctx).Where(keyCond+" AND status <> ?", k.ClientID, k.ServiceID, RDNSSynced).
		Order("address").Find(&out).Error
	return out, err
}
