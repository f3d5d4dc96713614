package models

import (
	"context"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Lease is one row of the leases table: a cron job's tick claim, a sampled node's shard or a
// replica's heartbeat. Epoch grows each time the lease changes hands.
type Lease struct {
	Name       string `gorm:"primaryKey"`
	Owner      *string
	Epoch      int64
	LeaseUntil *int64 // Unix microseconds
	LastTick   int64
	UpdatedAt  time.Time
}

// TableName pins the table.
func (Lease) TableName() string { return "leases" }

// Lease name prefixes.
const (
	LeaseJobPrefix     = "job:"
	LeaseNodePrefix    = "node:"
	LeaseReplicaPrefix = "replica:"
)

// ensureLeases creates the named rows that do not exist yet, unowned.
func (db *DB) ensureLeases(ctx context.Context, names []string) error {
	if len(names) == 0 {
		return nil
	}
	now := Now()
	rows := make([]Lease, len(names))
	for i, n := range names {
		rows[i] = Lease{Name: n, UpdatedAt: now}
	}
	_, err := retryRows(ctx, func() *gorm.DB {
		return db.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&rows)
	})
	return err
}

// ClaimTick claims tick of the named job for owner at time now: it succeeds for exactly one
// caller per tick across every replica, and only when no other replica still runs an earlier
// tick (its lease, until hold, has not expired at now). It returns the lease's new epoch, or
// ok=false when the tick was already claimed or the job still runs elsewhere. The caller gives
// now so that a test can let a hold expire without waiting for it.
func (db *DB) ClaimTick(ctx context.Context, job, owner string, tick int64, now time.Time, hold time.Duration) (epoch int64, ok bool, err error) {
	name := LeaseJobPrefix + job
	now = now.UTC().Truncate(time.Microsecond)
	if err := db.ensureLeases(ctx, []string{name}); err != nil {
		return 0, false, fmt.Errorf("lease row %s: %w", name, err)
	}
	for attempt := 0; attempt < 3; attempt++ {
		var l Lease
		if err := db.WithContext(ctx).Where("name = ?", name).Take(&l).Error; err != nil {
			return 0, false, err
		}
		if l.LastTick >= tick {
			return 0, false, nil
		}
		if l.Owner != nil && *l.Owner != owner && l.LeaseUntil != nil && *l.LeaseUntil > now.UnixMicro() {
			return 0, false, nil // an earlier tick still runs on another replica
		}
		// The claim is the compare-and-swap on the epoch, not a lock: on Galera the replica that
		// lost at commit runs the update again and matches no row (R51).
		n, err := retryRows(ctx, func() *gorm.DB {
			return db.WithContext(ctx).Model(&Lease{}).Where("name = ? AND epoch = ? AND last_tick < ?", name, l.Epoch, tick).
				Updates(map[string]any{"owner": owner, "epoch": l.Epoch + 1, "lease_until": now.Add(hold).UnixMicro(), "last_tick": tick, "updated_at": Now()})
		})
		if err != nil {
			return 0, false, err
		}
		if n == 1 {
			return l.Epoch + 1, true, nil
		}
	}
	return 0, false, nil
}

// EndTick ends owner's run of a job claimed with epoch, so the next tick need not wait for
// the hold to expire.
func (db *DB) EndTick(ctx context.Context, job, owner string, epoch int64) error {
	_, err := retryRows(ctx, func() *gorm.DB {
		return db.WithContext(ctx).Model(&Lease{}).Where("name = ? AND owner = ? AND epoch = ?", LeaseJobPrefix+job, owner, epoch).
			Updates(map[string]any{"owner": nil, "lease_until": nil, "updated_at": Now()})
	})
	return err
}

// Heartbeat records that replica owner is alive until now+ttl.
func (db *DB) Heartbeat(ctx context.Context, owner string, ttl time.Duration) error {
	name := LeaseReplicaPrefix + owner
	now := Now()
	row := Lease{Name: name, Owner: &owner, LeaseUntil: ptrInt(now.Add(ttl).UnixMicro()), UpdatedAt: now}
	_, err := retryRows(ctx, func() *gorm.DB {
		return db.WithContext(ctx).Clauses(clause.OnConflict{
			Columns:   []clause.Column{{Name: "name"}},
			DoUpdates: clause.AssignmentColumns([]string{"owner", "lease_until", "updated_at"}),
		}).Create(&row)
	})
	return err
}

// LiveReplicas counts the replicas whose heartbeat has not expired.
func (db *DB) LiveReplicas(ctx context.Context) (int, error) {
	var n int64
	err := db.WithContext(ctx).Model(&Lease{}).Where("name LIKE ? AND lease_until > ?", LeaseReplicaPrefix+"%", Now().UnixMicro()).Count(&n).Error
	return int(n), err
}

// RenewLeases extends every lease owner holds (its heartbeat and its shards) in one statement,
// and returns how many rows it renewed. A lease that already changed hands is not touched.
func (db *DB) RenewLeases(ctx context.Context, owner string, ttl time.Duration) (int64, error) {
	return retryRows(ctx, func() *gorm.DB {
		now := Now()
		return db.WithContext(ctx).Model(&Lease{}).
			Where("owner = ? AND (name LIKE ? OR name LIKE ?)", owner, LeaseNodePrefix+"%", LeaseReplicaPrefix+"%").
			Updates(map[string]any{"lease_until": now.Add(ttl).UnixMicro(), "updated_at": now})
	})
}

// ReleaseLeases gives up every lease owner holds and removes its heartbeat (graceful shutdown):
// the other replicas take its shards at their next round instead of after the TTL.
func (db *DB) ReleaseLeases(ctx context.Context, owner string) error {
	// Retried when MariaDB picks it as a deadlock victim against another replica's renewal: a
	// release that silently failed would leave the nodes unsampled until the leases expire.
	return retryDeadlock(ctx, func() error {
		return db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			if err := tx.Where("name = ?", LeaseReplicaPrefix+owner).Delete(&Lease{}).Error; err != nil {
				return err
			}
			return tx.Model(&Lease{}).Where("owner = ?", owner).
				Updates(map[string]any{"owner": nil, "lease_until": nil, "updated_at": Now()}).Error
		}, db.txOpts())
	})
}

// ShardLeases balances the named shards (node leases) between the live replicas and returns
// the ones owner holds now. owner keeps the shards it holds (renewed), gives back what is over
// its fair share (the number of shards over the live replicas, rounded up), and takes free or
// expired shards up to it; each taking is a compare-and-swap on the shard's epoch, so two
// replicas never take the same shard.
func (db *DB) ShardLeases(ctx context.Context, owner string, names []string, ttl time.Duration) (map[string]int64, error) {
	if err := db.ensureLeases(ctx, names); err != nil {
		return nil, fmt.Errorf("shard rows: %w", err)
	}
	if err := db.Heartbeat(ctx, owner, ttl); err != nil {
		return nil, fmt.Errorf("heartbeat: %w", err)
	}
	live, err := db.LiveReplicas(ctx)
	if err != nil {
		return nil, err
	}
	live = max(live, 1)
	share := (len(names) + live - 1) / live
	var rows []Lease
	if err := db.WithContext(ctx).Where("name IN ?", names).Order("name").Find(&rows).Error; err != nil {
		return nil, err
	}
	now := Now()
	held := map[string]int64{}
	var mine, free []Lease
	for _, l := range rows {
		switch {
		case l.Owner != nil && *l.Owner == owner:
			mine = append(mine, l)
		case l.Owner == nil || l.LeaseUntil == nil || *l.LeaseUntil <= now.UnixMicro():
			free = append(free, l)
		}
	}
	until := now.Add(ttl).UnixMicro()
	for i, l := range mine {
		if i >= share {
			// Over the fair share: give it back for a replica that holds fewer.
			if _, err := retryRows(ctx, func() *gorm.DB {
				return db.WithContext(ctx).Model(&Lease{}).Where("name = ? AND owner = ? AND epoch = ?", l.Name, owner, l.Epoch).
					Updates(map[string]any{"owner": nil, "lease_until": nil, "updated_at": now})
			}); err != nil {
				return nil, err
			}
			continue
		}
		n, err := retryRows(ctx, func() *gorm.DB {
			return db.WithContext(ctx).Model(&Lease{}).Where("name = ? AND owner = ? AND epoch = ?", l.Name, owner, l.Epoch).
				Updates(map[string]any{"lease_until": until, "updated_at": now})
		})
		if err != nil {
			return nil, err
		}
		if n == 1 {
			held[l.Name] = l.Epoch
		}
	}
	for _, l := range free {
		if len(held) >= share {
			break
		}
		// Still free at the moment of the update: a renewal by the old owner keeps the epoch.
		n, err := retryRows(ctx, func() *gorm.DB {
			return db.WithContext(ctx).Model(&Lease{}).
				Where("name = ? AND epoch = ? AND (owner IS NULL OR lease_until IS NULL OR lease_until <= ?)", l.Name, l.Epoch, now.UnixMicro()).
				Updates(map[string]any{"owner": owner, "epoch": l.Epoch + 1, "lease_until": until, "updated_at": now})
		})
		if err != nil {
			return nil, err
		}
		if n == 1 {
			held[l.Name] = l.Epoch + 1
		}
	}
	return held, nil
}

// NodeLeaseName is the lease name of a cluster's node.
func NodeLeaseName(cluster, node string) string {
	return LeaseNodePrefix + cluster + "/" + node
}

// LeaseHolders returns the owner of every lease whose name starts with prefix and has not
// expired (tests and the admin view).
func (db *DB) LeaseHolders(ctx context.Context, prefix string) (map[string]string, error) {
	var rows []Lease
	if err := db.WithContext(ctx).Where("owner IS NOT NULL AND lease_until > ?", Now().UnixMicro()).Find(&rows).Error; err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, l := range rows {
		if strings.HasPrefix(l.Name, prefix) {
			out[l.Name] = *l.Owner
		}
	}
	return out, nil
}

func ptrInt(v int64) *int64 { return &v }

// TickMark reads the last tick claimed of the named job; seen is false when none ever was.
func (db *DB) TickMark(ctx context.Context, job string) (tick int64, seen bool, err error) {
	var rows []Lease
	if err := db.WithContext(ctx).Where("name = ?", LeaseJobPrefix+job).Limit(1).Find(&rows).Error; err != nil {
		return 0, false, err
	}
	if len(rows) == 0 || rows[0].LastTick == 0 {
		return 0, false, nil
	}
	return rows[0].LastTick, true, nil
}
