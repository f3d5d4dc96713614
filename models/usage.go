package models

import (
	"context"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// UsageBucket is one service's usage in one bucket (R32), as the folder and the report see it:
// which service and guest, when, and the bucket's figures (UsageFigures, the same sums, counts
// and maxima every tier stores). Sums and counts are kept rather than averages so that any period
// weights every sample equally. A nil pointer is a value that is not known (R34): no sample
// carried it, or no counter delta could be computed.
//
// It is stored compactly in usage_5m (R45): the service by services.id, the cluster and node by
// a usage_nodes id, the VMID and guest type not at all (they are the service's); reads join them
// back in. The last_* counters are the folder's, kept only in the 5-minute tier.
type UsageBucket struct {
	// Svc is the service's key in services.id, set on the buckets read back: a service id alone
	// may name services of several clients (R46).
	Svc         int64  `gorm:"column:svc"`
	ClientID    string `gorm:"column:client_id"`
	ServiceID   string `gorm:"column:service_id"`
	BucketStart int64  `gorm:"column:bucket_start"` // unix seconds
	Cluster     string `gorm:"column:cluster"`
	Node        string `gorm:"column:node"`
	VMID        int    `gorm:"column:vmid"`
	GuestType   string `gorm:"column:guest_type"`
	UsageFigures
	LastNetIn  *int64 `gorm:"column:last_netin"`
	LastNetOut *int64 `gorm:"column:last_netout"`
	LastUptime *int64 `gorm:"column:last_uptime"`
	LastSample int64  `gorm:"column:last_sample_at"` // unix seconds of the bucket's latest sample
}

// TableName is the 5-minute tier the bucket is stored in (counting rows through the model
// counts that tier).
func (UsageBucket) TableName() string { return Tier5m.table() }

// usage5mRow is a UsageBucket as stored in usage_5m.
type usage5mRow struct {
	UsageTierRow
	LastNetIn  *int64 `gorm:"column:last_netin"`
	LastNetOut *int64 `gorm:"column:last_netout"`
	LastUptime *int64 `gorm:"column:last_uptime"`
	LastSample int64  `gorm:"column:last_sample_at"`
}

func (usage5mRow) TableName() string { return Tier5m.table() }

// usage5mColumns are the columns an upsert overwrites: all but the key. The values written are
// the bucket's whole state, never increments, so writing the same bucket twice changes nothing.
var usage5mColumns = append(append([]string(nil), tierColumns...), "last_netin", "last_netout", "last_uptime",
	"last_sample_at")

// UsageUpsertBatch is how many buckets one INSERT statement carries.
const UsageUpsertBatch = 500

// UpsertUsageBuckets writes buckets with batched, idempotent upserts (INSERT … ON DUPLICATE KEY
// UPDATE on MySQL, INSERT … ON CONFLICT DO UPDATE on SQLite). A bucket of a service that is not
// in services has no guest to bill and is not stored.
func (db *DB) UpsertUsageBuckets(ctx context.Context, buckets []UsageBucket) error {
	if len(buckets) == 0 {
		return nil
	}
	svcs := make([]ServiceKey, 0, len(buckets))
	nodes := make([]usageNode, 0, len(buckets))
	for _, b := range buckets {
		svcs = append(svcs, b.Key())
		nodes = append(nodes, usageNode{Cluster: b.Cluster, Node: b.Node})
	}
	keys, err := db.serviceRowIDs(ctx, svcs)
	if err != nil {
		return err
	}
	nodeIDs, err := db.usageNodeIDs(ctx, nodes)
	if err != nil {
		return err
	}
	rows := make([]usage5mRow, 0, len(buckets))
	for _, b := range buckets {
		svc, ok := keys[b.Key()]
		if !ok {
			continue
		}
		rows = append(rows, usage5mRow{UsageTierRow: UsageTierRow{Svc: svc, Start: b.BucketStart,
			NodeID: nodeIDs[usageNode{Cluster: b.Cluster, Node: b.Node}], UsageFigures: b.UsageFigures},
			LastNetIn: b.LastNetIn, LastNetOut: b.LastNetOut, LastUptime: b.LastUptime, LastSample: b.LastSample})
	}
	if len(rows) == 0 {
		return nil
	}
	return retryDeadlock(ctx, func() error {
		return db.WithContext(ctx).Clauses(clause.OnConflict{
			Columns:   []clause.Column{{Name: "svc"}, {Name: "start"}},
			DoUpdates: clause.AssignmentColumns(usage5mColumns),
		}).CreateInBatches(rows, UsageUpsertBatch).Error
	})
}

// usage5mSelect reads usage_5m rows as UsageBuckets, joining back the service and the node.
const usage5mSelect = "u.svc AS svc, s.client_id AS client_id, s.service_id AS service_id, u.start AS bucket_start, COALESCE(n.cluster, '') AS cluster, COALESCE(n.node, '') AS node, " +
	"COALESCE(s.vmid, 0) AS vmid, s.guest_type AS guest_type, u.samples, u.swap_samples, u.swap_sum, u.swap_max, " +
	"u.swap_limit, u.mem_sum, u.mem_max, u.cpu_sum, u.disk_max, u.netin, u.netout, " +
	"u.last_netin, u.last_netout, u.last_uptime, u.last_sample_at"

func (db *DB) usage5mQuery(ctx context.Context) *gorm.DB {
	return db.WithContext(ctx).Table("usage_5m AS u").Select(usage5mSelect).
		Joins("JOIN services s ON s.id = u.svc").Joins("LEFT JOIN usage_nodes n ON n.id = u.node_id")
}

// UsageBuckets returns the buckets of the services whose start lies in [from, to) (unix
// seconds), ordered by service and start.
func (db *DB) UsageBuckets(ctx context.Context, serviceIDs []string, from, to int64) ([]UsageBucket, error) {
	if len(serviceIDs) == 0 {
		return nil, nil
	}
	keys, err := db.usageKeys(ctx, serviceIDs)
	if err != nil {
		return nil, err
	}
	return db.UsageBucketsOf(ctx, keys, from, to)
}

// UsageBucketsOf is UsageBuckets for services named by their keys (services.id), ordered by
// service id, key and start.
func (db *DB) UsageBucketsOf(ctx context.Context, keys []int64, from, to int64) ([]UsageBucket, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	var out []UsageBucket
	err := db.usage5mQuery(ctx).Where("u.svc IN ? AND u.start >= ? AND u.start < ?", keys, from, to).
		Order("s.service_id, u.svc, u.start").Scan(&out).Error
	return out, err
}

// RecentUsageBuckets returns, per service, the latest bucket that started at or after since
// (the folding state to resume after a restart). Services without one are absent.
func (db *DB) RecentUsageBuckets(ctx context.Context, svcs []ServiceKey, since int64) (map[ServiceKey]UsageBucket, error) {
	out := map[ServiceKey]UsageBucket{}
	for start := 0; start < len(svcs); start += UsageUpsertBatch {
		end := min(start+UsageUpsertBatch, len(svcs))
		m, err := db.serviceRowIDs(ctx, svcs[start:end])
		if err != nil {
			return nil, err
		}
		if len(m) == 0 {
			continue
		}
		keys := make([]int64, 0, len(m))
		for _, k := range m {
			keys = append(keys, k)
		}
		var rows []UsageBucket
		err = db.usage5mQuery(ctx).Where("u.svc IN ? AND u.start >= ?", keys, since).Order("u.start").Scan(&rows).Error
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			out[r.Key()] = r // ascending: the last one wins
		}
	}
	return out, nil
}

// UsageTotals is one service's usage summed over a period; nil where no bucket knew the value.
type UsageTotals struct {
	Svc         int64    `gorm:"column:svc"` // the service's key (services.id)
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

// UsageTotalsFor sums the 5-minute buckets of each service whose start lies in [from, to) (unix
// seconds). SUM over NULL columns stays NULL, so an unknown value stays unknown.
func (db *DB) UsageTotalsFor(ctx context.Context, serviceIDs []string, from, to int64) (map[string]UsageTotals, error) {
	return db.UsageTierTotals(ctx, Tier5m, serviceIDs, from, to)
}

// PurgeUsageBuckets deletes 5-minute buckets that started before before (unix seconds), at most
// limit rows per statement, and returns how many it deleted.
func (db *DB) PurgeUsageBuckets(ctx context.Context, before int64, limit int) (int64, error) {
	return db.PurgeUsageTier(ctx, Tier5m, before, limit)
}

// SampledService is a managed guest the swap sampler looks for on its cluster.
type SampledService struct {
	ClientID  string
	ServiceID string
	Cluster   string
	VMID      int
	GuestType string
}

// SampledServices lists the services whose guest the sampler reads: of one of the guest types
// given (the kinds that sample swap), a vmid held, not terminated. Whether the guest runs is
// Proxmox's answer.
func (db *DB) SampledServices(ctx context.Context, guestTypes []string) ([]SampledService, error) {
	if len(guestTypes) == 0 {
		return nil, nil
	}
	var rows []Service
	err := db.WithContext(ctx).Select("client_id", "service_id", "cluster", "vmid", "guest_type").
		Where("guest_type IN ? AND vmid IS NOT NULL AND state <> ?", guestTypes, ServiceTerminated).
		Order("service_id").Find(&rows).Error
	if err != nil {
		return nil, err
	}
	out := make([]SampledService, 0, len(rows))
	for _, r := range rows {
		out = append(out, SampledService{ClientID: r.ClientID, ServiceID: r.ServiceID, Cluster: r.Cluster, VMID: *r.VMID, GuestType: r.GuestType})
	}
	return out, nil
}

// UsageServicesQuery selects the services of a usage report page.
type UsageServicesQuery struct {
	ClientID  string // "" for every client (admin)
	ServiceID string // "" for all
	// AfterServiceID and AfterClientID are the page cursor: the services after this key in the
	// order (service_id, client_id). An AfterClientID of "" (a cursor of the service id alone)
	// is after every service of that id.
	AfterServiceID string
	AfterClientID  string
	Limit          int
	// From and To bound the period: services created at or after To, and services terminated
	// before From, had no guest in it and are left out.
	From, To time.Time
}

// UsageServices returns a page of services for the usage report, ordered by (service_id,
// client_id): a service id alone may name services of several clients (R46), so the order and
// the cursor need both to name each service once.
func (db *DB) UsageServices(ctx context.Context, q UsageServicesQuery) ([]Service, error) {
	var rows []Service
	err := usageServicesQuery(db.WithContext(ctx), q).Find(&rows).Error
	return rows, err
}

// usageServicesQuery is UsageServices' statement. The cursor condition is spelt out rather than
// as a row comparison so that MariaDB, like SQLite, reads ix_services_service_client in order
// from the cursor instead of sorting every service after it (migration 0020).
func usageServicesQuery(tx *gorm.DB, q UsageServicesQuery) *gorm.DB {
	tx = tx.Model(&Service{})
	if q.ClientID != "" {
		tx = tx.Where("client_id = ?", q.ClientID)
	}
	if q.ServiceID != "" {
		tx = tx.Where("service_id = ?", q.ServiceID)
	}
	switch {
	case q.AfterClientID != "":
		tx = tx.Where("(service_id > ? OR (service_id = ? AND client_id > ?))", q.AfterServiceID, q.AfterServiceID, q.AfterClientID)
	case q.AfterServiceID != "":
		tx = tx.Where("service_id > ?", q.AfterServiceID)
	}
	tx = tx.Where("created_at < ?", q.To.UTC()).
		Where("NOT (state = ? AND updated_at < ?)", ServiceTerminated, q.From.UTC())
	return tx.Order("service_id").Order("client_id").Limit(q.Limit)
}

// CountServicesInState counts the services in a state (the needs_reconciliation gauge reads it
// at scrape time).
func (db *DB) CountServicesInState(ctx context.Context, state string) (int64, error) {
	var n int64
	err := db.WithContext(ctx).Model(&Service{}).Where("state = ?", state).Count(&n).Error
	return n, err
}
