package models

import (
	"context"
	"fmt"
	"sort"
	"time"

	"gorm.io/gorm/clause"
)

// AgentRoute is one row of agent_routes (R57): replica holds tunnels live tunnels to cluster's
// agents and is reached by the other replicas at URL.
type AgentRoute struct {
	Cluster string `gorm:"primaryKey"`
	Replica string `gorm:"primaryKey"`
	URL     string `gorm:"column:url"`
	Tunnels int
	// SeenAt is when the replica last said so, in Unix microseconds.
	SeenAt int64
}

// TableName pins the table.
func (AgentRoute) TableName() string { return "agent_routes" }

// AdvertiseAgentRoutes records the tunnels replica holds, by cluster, refreshing their time:
// a cluster with tunnels gets its row, every other row of the replica goes.
func (db *DB) AdvertiseAgentRoutes(ctx context.Context, replica, url string, tunnels map[string]int) error {
	now := Now().UnixMicro()
	held := make([]string, 0, len(tunnels))
	for cluster, n := range tunnels {
		if n > 0 {
			held = append(held, cluster)
		}
	}
	sort.Strings(held)
	return retryDeadlock(ctx, func() error {
		del := db.WithContext(ctx).Where("replica = ?", replica)
		if len(held) > 0 {
			del = del.Where("cluster NOT IN ?", held)
		}
		if err := del.Delete(&AgentRoute{}).Error; err != nil {
			return fmt.Errorf("agent routes of %s: %w", replica, err)
		}
		for _, cluster := range held {
			row := AgentRoute{Cluster: cluster, Replica: replica, URL: url, Tunnels: tunnels[cluster], SeenAt: now}
			err := db.WithContext(ctx).Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "cluster"}, {Name: "replica"}},
				DoUpdates: clause.AssignmentColumns([]string{"url", "tunnels", "seen_at"})}).Create(&row).Error
			if err != nil {
				return fmt.Errorf("agent route %s via %s: %w", cluster, replica, err)
			}
		}
		return nil
	})
}

// AgentRoutes lists the replicas other than except that said within fresh that they hold a
// tunnel to cluster, most tunnels first.
func (db *DB) AgentRoutes(ctx context.Context, cluster, except string, fresh time.Duration) ([]AgentRoute, error) {
	var rows []AgentRoute
	err := pooled(ctx, db.Gorm).Where("cluster = ? AND replica <> ? AND tunnels > 0 AND seen_at > ?", cluster, except,
		Now().Add(-fresh).UnixMicro()).Order("tunnels DESC, replica").Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("agent routes of %s: %w", cluster, err)
	}
	return rows, nil
}

// AgentRouteTable is the route table as the agents' hub uses it (R57): a route counts while
// its replica refreshed it within Fresh.
type AgentRouteTable struct {
	DB    *DB
	Fresh time.Duration
}

// Advertise records the tunnels replica holds, by cluster.
func (r AgentRouteTable) Advertise(ctx context.Context, replica, url string, tunnels map[string]int) error {
	return r.DB.AdvertiseAgentRoutes(ctx, replica, url, tunnels)
}

// Routes lists the URLs of the other replicas holding a fresh tunnel to cluster.
func (r AgentRouteTable) Routes(ctx context.Context, cluster, except string) ([]string, error) {
	rows, err := r.DB.AgentRoutes(ctx, cluster, except, r.Fresh)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(rows))
	for i, row := range rows {
		out[i] = row.URL
	}
	return out, nil
}
