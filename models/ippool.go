package models

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// IPPool is one pool row. In an IPv4 pool addresses are stored as their 32-bit value (FirstIP,
// LastIP and IPAllocation.IP) so that ranges are integer comparisons. In an IPv6 pool
// (AssignPrefix > 0, R54) IPAllocation.IP is the index of an assigned prefix of AssignPrefix bits
// inside CIDR and [FirstIP, LastIP] the usable indexes, so only what is assigned is stored and
// the same keys and queries serve both. CIDR and Gateway keep their text form; Nameservers is a
// JSON array. modules/ippool owns the meaning and the validation.
type IPPool struct {
	Name    string `gorm:"primaryKey"`
	Cluster string
	Bridge  string
	CIDR    string `gorm:"column:cidr"`
	Gateway string
	FirstIP int64 `gorm:"column:first_ip"`
	LastIP  int64 `gorm:"column:last_ip"`
	// AssignPrefix is the length of the prefix an IPv6 pool assigns; 0 in an IPv4 pool.
	AssignPrefix int `gorm:"column:assign_prefix"`
	Nameservers  string
	// ReverseZone is the reverse DNS zone of the pool's PTR records ("" = none, R55).
	ReverseZone string
	Source      string
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// TableName pins the table.
func (IPPool) TableName() string { return "ip_pools" }

// IPAllocation is one address of a pool held by a service. The table is keyed on (pool, ip) and
// unique on (pool, client_id, service_id).
type IPAllocation struct {
	Pool      string `gorm:"primaryKey"`
	IP        int64  `gorm:"primaryKey;column:ip"`
	ClientID  string
	ServiceID string `gorm:"column:service_id"`
	CreatedAt time.Time
}

// TableName pins the table.
func (IPAllocation) TableName() string { return "ip_allocations" }

// ErrIPPoolFull is returned by AllocateIP when every address of the pool's range is held.
var ErrIPPoolFull = errors.New("ip pool has no free address")

// IPPoolInUseError refuses a change that would drop allocated addresses: deleting a pool that
// still has allocations, or moving its range so that allocated addresses fall outside it.
type IPPoolInUseError struct {
	Pool  string
	Count int64 // allocated addresses the change would drop
}

func (e *IPPoolInUseError) Error() string {
	return fmt.Sprintf("ip pool %s: %d allocated addresses would be dropped", e.Pool, e.Count)
}

// maxAllocateAttempts bounds how often AllocateIP picks again after a duplicate key. The pool
// row lock (MySQL) and the single writer (SQLite) serialise allocations, so a duplicate means a
// row written around that lock; the unique keys refuse it and the allocation picks the next
// free address, a bounded number of times.
const maxAllocateAttempts = 4

// testHookBeforeInsert, when set by this package's tests, runs inside the allocation
// transaction after an address was picked and before it is inserted.
var testHookBeforeInsert func(tx *gorm.DB, pool string, ip int64) error

// lockIPPool reads a pool row inside tx and holds it until tx ends: SELECT … FOR UPDATE on
// MySQL. SQLite has one writer at a time (its transactions begin IMMEDIATE, see Open), which
// serialises the same way. ErrNotFound when the pool does not exist.
func (db *DB) lockIPPool(tx *gorm.DB, name string) (*IPPool, error) {
	q := tx.Where("name = ?", name)
	if db.Dialect == MySQL {
		q = q.Clauses(clause.Locking{Strength: "UPDATE"})
	}
	var p IPPool
	err := q.Take(&p).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return &p, nil
}

// SaveIPPools inserts or updates pools in one transaction and reports, per pool, whether it was
// created. An update that would leave allocated addresses outside the new [FirstIP, LastIP]
// range is refused with *IPPoolInUseError and nothing is written. Columns are written
// explicitly (a struct update would skip zero values). Source and the timestamps are set here.
func (db *DB) SaveIPPools(ctx context.Context, pools []IPPool, source string) ([]bool, error) {
	order := make([]int, len(pools))
	for i := range order {
		order[i] = i
	}
	// Lock rows in name order so that two concurrent multi-pool saves cannot deadlock.
	sort.Slice(order, func(a, b int) bool { return pools[order[a]].Name < pools[order[b]].Name })
	var created []bool
	save := func() error {
		created = make([]bool, len(pools))
		return db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			now := Now()
			for _, i := range order {
				p := pools[i]
				cur, err := db.lockIPPool(tx, p.Name)
				switch {
				case errors.Is(err, ErrNotFound):
					p.Source, p.CreatedAt, p.UpdatedAt = source, now, now
					if err := tx.Create(&p).Error; err != nil {
						return err
					}
					created[i] = true
					continue
				case err != nil:
					return err
				}
				if err := updateIPPool(tx, cur, p, source, now); err != nil {
					return err
				}
			}
			return nil
		}, db.txOpts())
	}
	err := retryDeadlock(ctx, save)
	if errors.Is(err, ErrDuplicate) {
		// Another replica created one of the pools between our read and our insert; the
		// second pass finds it and updates it.
		err = retryDeadlock(ctx, save)
	}
	if err != nil {
		return nil, err
	}
	return created, nil
}

// updateIPPool writes p over the locked pool cur, unless an allocation would no longer fit it
// (IPPoolInUseError).
func updateIPPool(tx *gorm.DB, cur *IPPool, p IPPool, source string, now time.Time) error {
	q := tx.Model(&IPAllocation{}).Where("pool = ?", cur.Name)
	// An IPv6 allocation is an index whose meaning depends on the cidr and the assigned length
	// (R54): changing either moves every allocation.
	if cur.AssignPrefix == p.AssignPrefix && (p.AssignPrefix == 0 || cur.CIDR == p.CIDR) {
		q = q.Where("ip < ? OR ip > ?", p.FirstIP, p.LastIP)
	}
	var outside int64
	if err := q.Count(&outside).Error; err != nil {
		return err
	}
	if outside > 0 {
		return &IPPoolInUseError{Pool: cur.Name, Count: outside}
	}
	return tx.Model(&IPPool{}).Where("name = ?", cur.Name).Updates(map[string]any{
		"cluster": p.Cluster, "bridge": p.Bridge, "cidr": p.CIDR, "gateway": p.Gateway,
		"first_ip": p.FirstIP, "last_ip": p.LastIP, "assign_prefix": p.AssignPrefix, "nameservers": p.Nameservers,
		"reverse_zone": p.ReverseZone, "source": source, "updated_at": now,
	}).Error
}

// GetIPPool reads one pool; ErrNotFound when there is none.
func GetIPPool(ctx context.Context, tx *gorm.DB, name string) (*IPPool, error) {
	var p IPPool
	err := tx.WithContext(ctx).Where("name = ?", name).Take(&p).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return &p, nil
}

// ListIPPools reads every pool, ordered by name.
func ListIPPools(ctx context.Context, tx *gorm.DB) ([]IPPool, error) {
	var out []IPPool
	err := tx.WithContext(ctx).Order("name").Find(&out).Error
	return out, err
}

// CountIPAllocations returns the number of allocated addresses per pool (pools without any
// are absent from the map).
func CountIPAllocations(ctx context.Context, tx *gorm.DB) (map[string]int64, error) {
	var rows []struct {
		Pool string
		N    int64
	}
	err := tx.WithContext(ctx).Model(&IPAllocation{}).Select("pool, COUNT(*) AS n").Group("pool").Scan(&rows).Error
	if err != nil {
		return nil, err
	}
	out := make(map[string]int64, len(rows))
	for _, r := range rows {
		out[r.Pool] = r.N
	}
	return out, nil
}

// DeleteIPPool removes a pool: ErrNotFound when there is none, *IPPoolInUseError while any of
// its addresses is allocated (the foreign key refuses it as well).
func (db *DB) DeleteIPPool(ctx context.Context, name string) error {
	return retryDeadlock(ctx, func() error {
		return db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			if _, err := db.lockIPPool(tx, name); err != nil {
				return err
			}
			var n int64
			if err := tx.Model(&IPAllocation{}).Where("pool = ?", name).Count(&n).Error; err != nil {
				return err
			}
			if n > 0 {
				return &IPPoolInUseError{Pool: name, Count: n}
			}
			return tx.Where("name = ?", name).Delete(&IPPool{}).Error
		}, db.txOpts())
	})
}

// lowestFreeIP is the smallest address in [first, last] not allocated in pool: the candidates
// are first and every allocated address plus one, and the smallest candidate nobody holds wins.
// It reads the index only, however large the range.
const lowestFreeIP = `SELECT MIN(c.ip) FROM (
  SELECT ? AS ip
  UNION ALL
  SELECT a.ip + 1 FROM ip_allocations a WHERE a.pool = ? AND a.ip >= ? AND a.ip < ?
) c
WHERE NOT EXISTS (SELECT 1 FROM ip_allocations x WHERE x.pool = ? AND x.ip = c.ip)`

// AllocateIP gives serviceID an address of pool and returns it with the pool row. It is
// idempotent: a service that already holds an address of the pool gets that address back. A
// new address is the lowest free one of the pool's range. ErrNotFound when the pool does not
// exist, ErrIPPoolFull when no address is free.
//
// Two services never hold one address, across any number of replicas: the allocation runs in
// one transaction that first locks the pool row (FOR UPDATE on MySQL; SQLite has a single
// writer), and ip_allocations is unique on (pool, ip) and on (pool, client_id, service_id), so an insert
// that got past the lock anyway fails with a duplicate key and the pick is made again.
func (db *DB) AllocateIP(ctx context.Context, pool string, k ServiceKey) (IPAllocation, IPPool, error) {
	var alloc IPAllocation
	var row IPPool
	err := retryDeadlock(ctx, func() error {
		return db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			p, err := db.lockIPPool(tx, pool)
			if err != nil {
				return err
			}
			row = *p
			for attempt := 0; attempt < maxAllocateAttempts; attempt++ {
				var taken bool
				alloc, taken, err = allocateOnce(tx, p, k)
				if !taken {
					return err
				}
				// The address (or this service's slot) was taken around the lock: look again.
			}
			return fmt.Errorf("allocate in pool %s: %d attempts hit a duplicate key: %w", pool, maxAllocateAttempts, ErrDuplicate)
		}, db.txOpts())
	})
	if err != nil {
		return IPAllocation{}, IPPool{}, err
	}
	return alloc, row, nil
}

// allocateOnce gives the service the address it holds in the pool already, or the lowest free
// one. taken reports an insert that lost to a duplicate key: the caller picks again.
func allocateOnce(tx *gorm.DB, p *IPPool, k ServiceKey) (alloc IPAllocation, taken bool, err error) {
	// A fresh value: gorm adds the primary key of a non-empty destination to the query.
	var held IPAllocation
	err = tx.Where("pool = ? AND "+keyCond, p.Name, k.ClientID, k.ServiceID).Take(&held).Error
	if err == nil {
		return held, false, nil
	}
	if !errors.Is(err, gorm.ErrRecordNotFound) {
		return alloc, false, err
	}
	var next sql.NullInt64
	if err := tx.Raw(lowestFreeIP, p.FirstIP, p.Name, p.FirstIP, p.LastIP, p.Name).Row().Scan(&next); err != nil {
		return alloc, false, err
	}
	if !next.Valid || next.Int64 > p.LastIP {
		return alloc, false, ErrIPPoolFull
	}
	if testHookBeforeInsert != nil {
		if err := testHookBeforeInsert(tx, p.Name, next.Int64); err != nil {
			return alloc, false, err
		}
	}
	alloc = IPAllocation{Pool: p.Name, IP: next.Int64, ClientID: k.ClientID, ServiceID: k.ServiceID, CreatedAt: Now()}
	err = tx.Create(&alloc).Error
	if errors.Is(err, ErrDuplicate) {
		return alloc, true, nil
	}
	return alloc, false, err
}

// ServiceIPAllocations returns the addresses a service holds with their pools, ordered by pool.
func ServiceIPAllocations(ctx context.Context, tx *gorm.DB, k ServiceKey) ([]IPAllocation, map[string]IPPool, error) {
	var allocs []IPAllocation
	if err := tx.WithContext(ctx).Where(keyCond, k.ClientID, k.ServiceID).Order("pool").Find(&allocs).Error; err != nil {
		return nil, nil, err
	}
	pools, err := poolsOf(tx.WithContext(ctx), allocs)
	if err != nil {
		return nil, nil, err
	}
	return allocs, pools, nil
}

// poolsOf reads the pools of allocs by name.
func poolsOf(tx *gorm.DB, allocs []IPAllocation) (map[string]IPPool, error) {
	pools := map[string]IPPool{}
	if len(allocs) == 0 {
		return pools, nil
	}
	names := make([]string, 0, len(allocs))
	for _, a := range allocs {
		names = append(names, a.Pool)
	}
	var rows []IPPool
	if err := tx.Where("name IN ?", names).Find(&rows).Error; err != nil {
		return nil, err
	}
	for _, r := range rows {
		pools[r.Name] = r
	}
	return pools, nil
}

// ReleaseIPs frees every address a service holds and returns how many were freed (0 is not an
// error: a release is idempotent). The same transaction turns the service's reverse DNS records
// into pending removals (R55).
func ReleaseIPs(ctx context.Context, tx *gorm.DB, k ServiceKey) (int64, error) {
	return ReleaseIPsExcept(ctx, tx, k, nil)
}

// ReleaseIPsExcept frees the addresses a service holds in pools other than keep (a change of
// plan, R54) and returns how many were freed; the reverse DNS records of the freed addresses
// become pending removals in the same transaction (R55).
func ReleaseIPsExcept(ctx context.Context, tx *gorm.DB, k ServiceKey, keep []string) (int64, error) {
	var n int64
	err := tx.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		q := tx.Where(keyCond, k.ClientID, k.ServiceID)
		if len(keep) > 0 {
			q = q.Where("pool NOT IN ?", keep)
		}
		res := q.Delete(&IPAllocation{})
		if res.Error != nil {
			return res.Error
		}
		n = res.RowsAffected
		return markRDNSReleased(tx, k, keep)
	})
	return n, err
}
