package models

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// NodeMaintenance is one row of node_maintenance: a node that placement leaves out (R52).
type NodeMaintenance struct {
	Cluster string `gorm:"primaryKey"`
	Node    string `gorm:"primaryKey"`
	Drain   bool
	Since   time.Time
}

// TableName pins the table.
func (NodeMaintenance) TableName() string { return "node_maintenance" }

// EndNodeMaintenance takes a node out of maintenance.
func EndNodeMaintenance(ctx context.Context, tx *gorm.DB, cluster, node string) error {
	return tx.WithContext(ctx).Where("cluster = ? AND node = ?", cluster, node).Delete(&NodeMaintenance{}).Error
}

// SetNodeMaintenance puts a node into maintenance, keeping the time it first went in; m.Drain
// records whether the operator asked for a drain.
func SetNodeMaintenance(ctx context.Context, tx *gorm.DB, m NodeMaintenance) error {
	cluster, node := m.Cluster, m.Node
	row := NodeMaintenance{Cluster: cluster, Node: node, Drain: m.Drain, Since: Now()}
	err := tx.WithContext(ctx).Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "cluster"}, {Name: "node"}},
		DoUpdates: clause.AssignmentColumns([]string{"drain"})}).Create(&row).Error
	if err != nil {
		return fmt.Errorf("set maintenance of %s/%s: %w", cluster, node, err)
	}
	return nil
}

// NodesInMaintenance returns the nodes of a cluster in maintenance, by name.
func NodesInMaintenance(ctx context.Context, tx *gorm.DB, cluster string) (map[string]NodeMaintenance, error) {
	var rows []NodeMaintenance
	if err := pooled(ctx, tx).Where("cluster = ?", cluster).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("nodes in maintenance of %s: %w", cluster, err)
	}
	out := make(map[string]NodeMaintenance, len(rows))
	for _, r := range rows {
		out[r.Node] = r
	}
	return out, nil
}

// ServicesOnNode lists the services of a cluster whose guest is recorded on node and that hold
// one (active, suspended or limited), in service order: what a drain moves.
func ServicesOnNode(ctx context.Context, tx *gorm.DB, cluster, node string) ([]Service, error) {
	var rows []Service
	err := pooled(ctx, tx).Where("cluster = ? AND node = ? AND vmid IS NOT NULL AND state IN ?", cluster, node,
		[]string{ServiceActive, ServiceSuspended, ServiceLimited}).Order("client_id, service_id").Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("services on %s/%s: %w", cluster, node, err)
	}
	return rows, nil
}

// OpenOperationOf returns the service's queued or running operation of action, or nil.
func OpenOperationOf(ctx context.Context, tx *gorm.DB, k ServiceKey, action string) (*Operation, error) {
	var ops []Operation
	err := pooled(ctx, tx).Where(keyCond+" AND action = ? AND state IN ?", k.ClientID, k.ServiceID, action,
		[]string{OpQueued, OpRunning}).Order("created_at").Limit(1).Find(&ops).Error
	if err != nil || len(ops) == 0 {
		return nil, err
	}
	return &ops[0], nil
}
