package models

import (
	"context"
	"fmt"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Tier is one resolution of stored usage (R45): 5-minute buckets written by the folder, hourly
// and daily ones rolled up from the tier below.
type Tier string

// The usage tiers, finest first.
const (
	Tier5m Tier = "5m"
	Tier1h Tier = "1h"
	Tier1d Tier = "1d"
)

// Tiers are the usage tiers, finest first.
var Tiers = []Tier{Tier5m, Tier1h, Tier1d}

// Seconds is the width of a tier's bucket.
func (t Tier) Seconds() int64 {
	switch t {
	case Tier1h:
		return 3600
	case Tier1d:
		return 86400
	default:
		return 300
	}
}

func (t Tier) table() string { return "usage_" + string(t) }

// Valid reports whether t is one of the tiers.
func (t Tier) Valid() bool { return t == Tier5m || t == Tier1h || t == Tier1d }

// UsageFigures are the sums, counts and maxima of a bucket of any tier; a coarser bucket's are
// the sums, counts and maxima of the finer buckets it covers, so nothing a report needs is lost.
// SwapLimit is the latest known limit. A nil pointer is not known (R34).
type UsageFigures struct {
	Samples     int64   `gorm:"column:samples"`
	SwapSamples int64   `gorm:"column:swap_samples"`
	SwapSum     int64   `gorm:"column:swap_sum"`
	SwapMax     *int64  `gorm:"column:swap_max"`
	SwapLimit   *int64  `gorm:"column:swap_limit"`
	MemSum      int64   `gorm:"column:mem_sum"`
	MemMax      *int64  `gorm:"column:mem_max"`
	CPUSum      float64 `gorm:"column:cpu_sum"`
	DiskMax     *int64  `gorm:"column:disk_max"`
	NetIn       *int64  `gorm:"column:netin"`
	NetOut      *int64  `gorm:"column:netout"`
}

// UsageTierRow is one stored bucket of a tier: the service by its key (services.id), the node
// by its usage_nodes id.
type UsageTierRow struct {
	Svc    int64 `gorm:"column:svc;primaryKey;autoIncrement:false"`
	Start  int64 `gorm:"column:start;primaryKey;autoIncrement:false"` // unix seconds
	NodeID int   `gorm:"column:node_id"`
	UsageFigures
}

// tierColumns are the columns a tier upsert overwrites: all but the key.
var tierColumns = []string{"node_id", "samples", "swap_samples", "swap_sum", "swap_max", "swap_limit", "mem_sum",
	"mem_max", "cpu_sum", "disk_max", "netin", "netout"}

// usageNode is a (cluster, node) pair of usage_nodes.
type usageNode struct {
	ID      int    `gorm:"column:id;primaryKey"`
	Cluster string `gorm:"column:cluster"`
	Node    string `gorm:"column:node"`
}

func (usageNode) TableName() string { return "usage_nodes" }

// usageNodeIDs returns the ids of the (cluster, node) pairs, adding the pairs not yet known (a
// pair another replica adds at the same time is ignored here and read back).
func (db *DB) usageNodeIDs(ctx context.Context, pairs []usageNode) (map[usageNode]int, error) {
	seen := map[usageNode]bool{}
	var uniq []usageNode
	for _, p := range pairs {
		k := usageNode{Cluster: p.Cluster, Node: p.Node}
		if !seen[k] {
			seen[k] = true
			uniq = append(uniq, k)
		}
	}
	out, err := db.knownUsageNodes(ctx, uniq)
	if err != nil || len(out) == len(uniq) {
		return out, err
	}
	var missing []usageNode
	for _, k := range uniq {
		if _, ok := out[k]; !ok {
			missing = append(missing, k)
		}
	}
	if err := db.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&missing).Error; err != nil {
		return nil, err
	}
	return db.knownUsageNodes(ctx, uniq)
}

// knownUsageNodes returns the ids of those of the pairs usage_nodes holds.
func (db *DB) knownUsageNodes(ctx context.Context, pairs []usageNode) (map[usageNode]int, error) {
	clusters := make([]string, 0, len(pairs))
	for _, p := range pairs {
		clusters = append(clusters, p.Cluster)
	}
	var known []usageNode
	if err := db.WithContext(ctx).Where("cluster IN ?", clusters).Find(&known).Error; err != nil {
		return nil, err
	}
	want := map[usageNode]bool{}
	for _, p := range pairs {
		want[p] = true
	}
	out := map[usageNode]int{}
	for _, n := range known {
		if k := (usageNode{Cluster: n.Cluster, Node: n.Node}); want[k] {
			out[k] = n.ID
		}
	}
	return out, nil
}

// serviceRows reads the id, client and service id of the services whose service id is one of
// serviceIDs (of every client).
func (db *DB) serviceRows(ctx context.Context, serviceIDs []string) ([]Service, error) {
	var out []Service
	for start := 0; start < len(serviceIDs); start += UsageUpsertBatch {
		end := min(start+UsageUpsertBatch, len(serviceIDs))
		var rows []Service
		err := db.WithContext(ctx).Select("id", "client_id", "service_id").Where("service_id IN ?", serviceIDs[start:end]).
			Find(&rows).Error
		if err != nil {
			return nil, err
		}
		out = append(out, rows...)
	}
	return out, nil
}

// serviceRowIDs maps services to the small integer key their usage rows are stored under
// (services.id); services not in services are absent. A service id alone may name services
// of several clients (R46): the client picks one.
func (db *DB) serviceRowIDs(ctx context.Context, svcs []ServiceKey) (map[ServiceKey]int64, error) {
	ids := make([]string, len(svcs))
	for i, k := range svcs {
		ids[i] = k.ServiceID
	}
	rows, err := db.serviceRows(ctx, ids)
	if err != nil {
		return nil, err
	}
	want := make(map[ServiceKey]bool, len(svcs))
	for _, k := range svcs {
		want[k] = true
	}
	out := make(map[ServiceKey]int64, len(svcs))
	for _, r := range rows {
		if want[r.Key()] {
			out[r.Key()] = r.ID
		}
	}
	return out, nil
}

// usageKeys returns the keys of every service (of any client) whose id is one of serviceIDs,
// so that usage reads are primary-key ranges of the tier tables rather than joins driven by
// the services table.
func (db *DB) usageKeys(ctx context.Context, serviceIDs []string) ([]int64, error) {
	rows, err := db.serviceRows(ctx, serviceIDs)
	if err != nil {
		return nil, err
	}
	keys := make([]int64, 0, len(rows))
	for _, r := range rows {
		keys = append(keys, r.ID)
	}
	return keys, nil
}

// UsageServiceKeyPage returns up to limit service keys above after, ascending: the roll-up and
// the retention walk every service's rows by primary key in pages of these.
func (db *DB) UsageServiceKeyPage(ctx context.Context, after int64, limit int) ([]int64, error) {
	var keys []int64
	err := db.WithContext(ctx).Model(&Service{}).Where("id > ?", after).Order("id").Limit(limit).Pluck("id", &keys).Error
	return keys, err
}

// UsageTierRows returns the stored buckets of tier t for the service keys whose start lies in
// [from, to), ordered by service key and start.
func (db *DB) UsageTierRows(ctx context.Context, t Tier, svcs []int64, from, to int64) ([]UsageTierRow, error) {
	if len(svcs) == 0 {
		return nil, nil
	}
	var out []UsageTierRow
	err := db.WithContext(ctx).Table(t.table()).Select("svc", append([]string{"start"}, tierColumns...)).
		Where("svc IN ? AND start >= ? AND start < ?", svcs, from, to).Order("svc, start").Scan(&out).Error
	return out, err
}

// UpsertUsageTier writes rows of the hourly or daily tier; a row's values are the whole bucket,
// never increments, so writing it again changes nothing.
func (db *DB) UpsertUsageTier(ctx context.Context, t Tier, rows []UsageTierRow) error {
	if len(rows) == 0 {
		return nil
	}
	if t == Tier5m {
		return fmt.Errorf("usage: the 5-minute tier is written by the folder")
	}
	return retryDeadlock(ctx, func() error {
		return db.WithContext(ctx).Table(t.table()).Clauses(clause.OnConflict{
			Columns:   []clause.Column{{Name: "svc"}, {Name: "start"}},
			DoUpdates: clause.AssignmentColumns(tierColumns),
		}).CreateInBatches(rows, UsageUpsertBatch).Error
	})
}

// tierTotalsSelect sums a tier's buckets per service.
const tierTotalsSelect = "u.svc AS svc, MIN(s.service_id) AS service_id, SUM(u.samples) AS samples, SUM(u.swap_samples) AS swap_samples, " +
	"SUM(u.swap_sum) AS swap_sum, MAX(u.swap_max) AS swap_max, SUM(u.mem_sum) AS mem_sum, MAX(u.mem_max) AS mem_max, " +
	"SUM(u.cpu_sum) AS cpu_sum, MAX(u.disk_max) AS disk_max, SUM(u.netin) AS netin_bytes, SUM(u.netout) AS netout_bytes"

// UsageTierTotals sums the buckets of tier t of each service whose start lies in [from, to)
// (unix seconds). SUM over NULL columns stays NULL, so an unknown value stays unknown.
func (db *DB) UsageTierTotals(ctx context.Context, t Tier, serviceIDs []string, from, to int64) (map[string]UsageTotals, error) {
	out := map[string]UsageTotals{}
	if len(serviceIDs) == 0 || from >= to {
		return out, nil
	}
	keys, err := db.usageKeys(ctx, serviceIDs)
	if err != nil {
		return nil, err
	}
	byKey, err := db.UsageTierTotalsOf(ctx, t, keys, from, to)
	for _, r := range byKey {
		out[r.ServiceID] = r
	}
	return out, err
}

// UsageTierTotalsOf is UsageTierTotals for services named by their keys (services.id), by key.
func (db *DB) UsageTierTotalsOf(ctx context.Context, t Tier, keys []int64, from, to int64) (map[int64]UsageTotals, error) {
	out := map[int64]UsageTotals{}
	if len(keys) == 0 || from >= to {
		return out, nil
	}
	var rows []UsageTotals
	err := db.WithContext(ctx).Table(t.table()+" AS u").Select(tierTotalsSelect).
		Joins("JOIN services s ON s.id = u.svc").
		Where("u.svc IN ? AND u.start >= ? AND u.start < ?", keys, from, to).
		Group("u.svc").Scan(&rows).Error
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		out[r.Svc] = r
	}
	return out, nil
}

// tierBucketSelect reads a tier's rows as UsageBuckets (without the folder's counters).
const tierBucketSelect = "u.svc AS svc, s.client_id AS client_id, s.service_id AS service_id, u.start AS bucket_start, COALESCE(n.cluster, '') AS cluster, COALESCE(n.node, '') AS node, " +
	"COALESCE(s.vmid, 0) AS vmid, s.guest_type AS guest_type, u.samples, u.swap_samples, u.swap_sum, u.swap_max, " +
	"u.swap_limit, u.mem_sum, u.mem_max, u.cpu_sum, u.disk_max, u.netin, u.netout"

// UsageTierBucketsOf returns the buckets of tier t of the services named by their keys
// (services.id) whose start lies in [from, to), ordered by service id, key and start.
func (db *DB) UsageTierBucketsOf(ctx context.Context, t Tier, keys []int64, from, to int64) ([]UsageBucket, error) {
	if len(keys) == 0 || from >= to {
		return nil, nil
	}
	var out []UsageBucket
	err := db.WithContext(ctx).Table(t.table()+" AS u").Select(tierBucketSelect).
		Joins("JOIN services s ON s.id = u.svc").Joins("LEFT JOIN usage_nodes n ON n.id = u.node_id").
		Where("u.svc IN ? AND u.start >= ? AND u.start < ?", keys, from, to).
		Order("s.service_id, u.svc, u.start").Scan(&out).Error
	return out, err
}

// purgeServicePage is how many services one retention statement covers.
const purgeServicePage = 200

// PurgeUsageTier deletes the buckets of tier t that started before before (unix seconds),
// walking the services by key so that every statement is a primary-key range (the tiers have
// no index on time), at most limit rows per statement, and returns how many it deleted.
func (db *DB) PurgeUsageTier(ctx context.Context, t Tier, before int64, limit int) (int64, error) {
	var total int64
	var after int64
	for {
		keys, err := db.UsageServiceKeyPage(ctx, after, purgeServicePage)
		if err != nil || len(keys) == 0 {
			return total, err
		}
		after = keys[len(keys)-1]
		n, err := db.purgeTierKeys(ctx, t, keys, before, limit)
		total += n
		if err != nil {
			return total, err
		}
	}
}

func (db *DB) purgeTierKeys(ctx context.Context, t Tier, keys []int64, before int64, limit int) (int64, error) {
	var total int64
	for {
		var res *gorm.DB
		if db.Dialect == MySQL {
			res = db.WithContext(ctx).Exec("DELETE FROM "+t.table()+" WHERE svc IN ? AND start < ? LIMIT ?", keys, before, limit)
		} else {
			res = db.WithContext(ctx).Exec("DELETE FROM "+t.table()+" WHERE (svc, start) IN (SELECT svc, start FROM "+
				t.table()+" WHERE svc IN ? AND start < ? LIMIT ?)", keys, before, limit)
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

// usageRollup is how far a coarse tier is rolled up: every bucket starting before DoneUntil is
// written.
type usageRollup struct {
	Tier      string `gorm:"column:tier;primaryKey"`
	DoneUntil int64  `gorm:"column:done_until"`
}

func (usageRollup) TableName() string { return "usage_rollups" }

// UsageRollupMarks returns, per coarse tier, the time (unix seconds) before which every bucket
// is rolled up; a tier never rolled up is absent.
func (db *DB) UsageRollupMarks(ctx context.Context) (map[Tier]int64, error) {
	var rows []usageRollup
	if err := db.WithContext(ctx).Find(&rows).Error; err != nil {
		return nil, err
	}
	out := map[Tier]int64{}
	for _, r := range rows {
		out[Tier(r.Tier)] = r.DoneUntil
	}
	return out, nil
}

// SetUsageRollupMark records that tier t is rolled up until doneUntil.
func (db *DB) SetUsageRollupMark(ctx context.Context, t Tier, doneUntil int64) error {
	return db.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "tier"}},
		DoUpdates: clause.AssignmentColumns([]string{"done_until"}),
	}).Create(&usageRollup{Tier: string(t), DoneUntil: doneUntil}).Error
}

// UsageEarliest returns the start of the earliest bucket of tier t; ok is false when the tier is
// empty. It scans the tier (no index on time) and is asked once, before the first roll-up.
func (db *DB) UsageEarliest(ctx context.Context, t Tier) (start int64, ok bool, err error) {
	var v *int64
	if err := db.WithContext(ctx).Table(t.table()).Select("MIN(start)").Scan(&v).Error; err != nil {
		return 0, false, err
	}
	if v == nil {
		return 0, false, nil
	}
	return *v, true, nil
}
