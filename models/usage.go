package models

import (
	"context"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// UsageBucket is one service's usage in one 5-minute bucket (R32). Sums and counts are kept
// rather than averages so that any period weights every sample equally. A nil pointer is a value
// that is not known (R34): no sample carried it, or no counter delta could be computed.
type UsageBucket struct {
	ServiceID   string  `gorm:"column:service_id;primaryKey"`
	BucketStart int64   `gorm:"column:bucket_start;primaryKey;autoIncrement:false"` // unix seconds
	Cluster     string  `gorm:"column:cluster"`
	Node        string  `gorm:"column:node"`
	VMID        int     `gorm:"column:vmid"`
	GuestType   string  `gorm:"column:guest_type"`
	Samples     int     `gorm:"column:samples"`
	SwapSamples int     `gorm:"column:swap_samples"`
	SwapSum     int64   `gorm:"column:swap_sum"`
	SwapMax     *int64  `gorm:"column:swap_max"`
	SwapLimit   *int64  `gorm:"column:swap_limit"`
	MemSum      int64   `gorm:"column:mem_sum"`
	MemMax      *int64  `gorm:"column:mem_max"`
	CPUSum      float64 `gorm:"column:cpu_sum"`
	DiskMax     *int64  `gorm:"column:disk_max"`
	NetIn       *int64  `gorm:"column:netin_bytes"`
	NetOut      *int64  `gorm:"column:netout_bytes"`
	LastNetIn   *int64  `gorm:"column:last_netin"`
	LastNetOut  *int64  `gorm:"column:last_netout"`
	LastUptime  *int64  `gorm:"column:last_uptime"`
	LastSample  int64   `gorm:"column:last_sample_at"` // unix seconds of the bucket's latest sample
}

// TableName pins the table.
func (UsageBucket) TableName() string { return "usage_buckets" }

// usageBucketColumns are the columns an upsert overwrites: all but the key. The values written
// are the bucket's whole state, never increments, so writing the same bucket twice changes
// nothing.
var usageBucketColumns = []string{"cluster", "node", "vmid", "guest_type", "samples", "swap_samples", "swap_sum",
	"swap_max", "swap_limit", "mem_sum", "mem_max", "cpu_sum", "disk_max", "netin_bytes", "netout_bytes",
	"last_netin", "last_netout", "last_uptime", "last_sample_at"}

// UsageUpsertBatch is how many buckets one INSERT statement carries.
const UsageUpsertBatch = 500

// UpsertUsageBuckets writes buckets with batched, idempotent upserts (INSERT … ON DUPLICATE KEY
// UPDATE on MySQL, INSERT … ON CONFLICT DO UPDATE on SQLite).
func (db *DB) UpsertUsageBuckets(ctx context.Context, buckets []UsageBucket) error {
	if len(buckets) == 0 {
		return nil
	}
	return retryDeadlock(ctx, func() error {
		return db.WithContext(ctx).Clauses(clause.OnConflict{
			Columns:   []clause.Column{{Name: "service_id"}, {Name: "bucket_start"}},
			DoUpdates: clause.AssignmentColumns(usageBucketColumns),
		}).CreateInBatches(buckets, UsageUpsertBatch).Error
	})
}

// UsageBuckets returns the buckets of the services whose start lies in [from, to) (unix
// seconds), ordered by service and start.
func (db *DB) UsageBuckets(ctx context.Context, serviceIDs []string, from, to int64) ([]UsageBucket, error) {
	if len(serviceIDs) == 0 {
		return nil, nil
	}
	var out []UsageBucket
	err := db.WithContext(ctx).Where("service_id IN ? AND bucket_start >= ? AND bucket_start < ?", serviceIDs, from, to).
		Order("service_id, bucket_start").Find(&out).Error
	return out, err
}

// RecentUsageBuckets returns, per service, the latest bucket that started at or after since
// (the folding state to resume after a restart). Services without one are absent.
func (db *DB) RecentUsageBuckets(ctx context.Context, serviceIDs []string, since int64) (map[string]UsageBucket, error) {
	out := map[string]UsageBucket{}
	for start := 0; start < len(serviceIDs); start += UsageUpsertBatch {
		end := min(start+UsageUpsertBatch, len(serviceIDs))
		var rows []UsageBucket
		err := db.WithContext(ctx).Where("service_id IN ? AND bucket_start >= ?", serviceIDs[start:end], since).
			Order("bucket_start").Find(&rows).Error
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			out[r.ServiceID] = r // ascending: the last one wins
		}
	}
	return out, nil
}

// UsageTotals is one service's usage summed over a period; nil where no bucket knew the value.
type UsageTotals struct {
	ServiceID   string   `gorm:"column:service_id"`
	Samples     int64    `gorm:"column:samples"`
	SwapSamples int64    `gorm:"column:swap_samples"`
	SwapSum     *int64   `gorm:"column:swap_sum"`
	SwapMax     *int64   `gorm:"column:swap_max"`
	MemSum      *int64   `gorm:"column:mem_sum"`
	MemMax      *int64   `gorm:"column:mem_max"`
	CPUSum      *float64 `gorm:"column:cpu_sum"`
	DiskMax     *int64   `gorm:"column:disk_max"`
	NetIn       *int64   `gorm:"column:netin_bytes"`
	NetOut      *int64   `gorm:"column:netout_bytes"`
}

// UsageTotalsFor sums the buckets of each service whose start lies in [from, to) (unix seconds).
// SUM over NULL columns stays NULL, so an unknown value stays unknown.
func (db *DB) UsageTotalsFor(ctx context.Context, serviceIDs []string, from, to int64) (map[string]UsageTotals, error) {
	out := map[string]UsageTotals{}
	if len(serviceIDs) == 0 {
		return out, nil
	}
	var rows []UsageTotals
	err := db.WithContext(ctx).Model(&UsageBucket{}).
		Select("service_id, SUM(samples) AS samples, SUM(swap_samples) AS swap_samples, SUM(swap_sum) AS swap_sum, "+
			"MAX(swap_max) AS swap_max, SUM(mem_sum) AS mem_sum, MAX(mem_max) AS mem_max, SUM(cpu_sum) AS cpu_sum, "+
			"MAX(disk_max) AS disk_max, SUM(netin_bytes) AS netin_bytes, SUM(netout_bytes) AS netout_bytes").
		Where("service_id IN ? AND bucket_start >= ? AND bucket_start < ?", serviceIDs, from, to).
		Group("service_id").Scan(&rows).Error
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		out[r.ServiceID] = r
	}
	return out, nil
}

// PurgeUsageBuckets deletes buckets that started before before (unix seconds), at most limit
// rows per statement until none is left, and returns how many it deleted.
func (db *DB) PurgeUsageBuckets(ctx context.Context, before int64, limit int) (int64, error) {
	var total int64
	for {
		var res *gorm.DB
		if db.Dialect == MySQL {
			res = db.WithContext(ctx).Exec("DELETE FROM usage_buckets WHERE bucket_start < ? LIMIT ?", before, limit)
		} else {
			res = db.WithContext(ctx).Exec("DELETE FROM usage_buckets WHERE rowid IN (SELECT rowid FROM usage_buckets WHERE bucket_start < ? LIMIT ?)", before, limit)
		}
		if res.Error != nil {
			return total, res.Error
		}
		total += res.RowsAffected
		if res.RowsAffected < int64(limit) {
			return total, nil
		}
	}
}

// SampledService is a managed guest the swap sampler looks for on its cluster.
type SampledService struct {
	ServiceID string
	Cluster   string
	VMID      int
	GuestType string
}

// SampledContainers lists the services whose container the sampler reads: guest type
// container, a vmid held, not terminated. Whether the container runs is Proxmox's answer.
func (db *DB) SampledContainers(ctx context.Context) ([]SampledService, error) {
	var rows []Service
	err := db.WithContext(ctx).Select("service_id", "cluster", "vmid", "guest_type").
		Where("guest_type = ? AND vmid IS NOT NULL AND state <> ?", "container", ServiceTerminated).
		Order("service_id").Find(&rows).Error
	if err != nil {
		return nil, err
	}
	out := make([]SampledService, 0, len(rows))
	for _, r := range rows {
		out = append(out, SampledService{ServiceID: r.ServiceID, Cluster: r.Cluster, VMID: *r.VMID, GuestType: r.GuestType})
	}
	return out, nil
}

// UsageServicesQuery selects the services of a usage report page.
type UsageServicesQuery struct {
	ClientID  string // "" for every client (admin)
	ServiceID string // "" for all
	After     string // page cursor: service_ids greater than this
	Limit     int
	// From and To bound the period: services created at or after To, and services terminated
	// before From, had no guest in it and are left out.
	From, To time.Time
}

// UsageServices returns a page of services for the usage report, ordered by service_id.
func (db *DB) UsageServices(ctx context.Context, q UsageServicesQuery) ([]Service, error) {
	tx := db.WithContext(ctx).Model(&Service{})
	if q.ClientID != "" {
		tx = tx.Where("client_id = ?", q.ClientID)
	}
	if q.ServiceID != "" {
		tx = tx.Where("service_id = ?", q.ServiceID)
	}
	if q.After != "" {
		tx = tx.Where("service_id > ?", q.After)
	}
	tx = tx.Where("created_at < ?", q.To.UTC()).
		Where("NOT (state = ? AND updated_at < ?)", ServiceTerminated, q.From.UTC())
	var rows []Service
	err := tx.Order("service_id").Limit(q.Limit).Find(&rows).Error
	return rows, err
}

// CountServicesInState counts the services in a state (the needs_reconciliation gauge reads it
// at scrape time).
func (db *DB) CountServicesInState(ctx context.Context, state string) (int64, error) {
	var n int64
	err := db.WithContext(ctx).Model(&Service{}).Where("state = ?", state).Count(&n).Error
	return n, err
}
