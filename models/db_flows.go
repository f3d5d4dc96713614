package models

import (
	"context"
	"time"
)

// The methods below are the flows' way to the database: each runs the function of the same name,
// which takes a *gorm.DB so that the models' own transactions can share it, on db.

// BackupCandidates is [BackupCandidates] on db.
func (db *DB) BackupCandidates(ctx context.Context, plan string) ([]Service, error) {
	return BackupCandidates(ctx, db.Gorm, plan)
}

// BackupGauges is [BackupGauges] on db.
func (db *DB) BackupGauges(ctx context.Context) ([]BackupGauge, error) {
	return BackupGauges(ctx, db.Gorm)
}

// ClaimRDNS is [ClaimRDNS] on db.
func (db *DB) ClaimRDNS(ctx context.Context, address string, gen int64, now, until time.Time) (bool, error) {
	return ClaimRDNS(ctx, db.Gorm, address, gen, now, until)
}

// CountActiveOperations is [CountActiveOperations] on db.
func (db *DB) CountActiveOperations(ctx context.Context, k ServiceKey, except string, actions ...string) (int64, error) {
	return CountActiveOperations(ctx, db.Gorm, k, except, actions...)
}

// CountRDNS is [CountRDNS] on db.
func (db *DB) CountRDNS(ctx context.Context) (RDNSCounts, error) {
	return CountRDNS(ctx, db.Gorm)
}

// CreatesInFlight is [CreatesInFlight] on db.
func (db *DB) CreatesInFlight(ctx context.Context, cluster string, except ServiceKey, since time.Time) ([]InFlightCreate, error) {
	return CreatesInFlight(ctx, db.Gorm, cluster, except, since)
}

// DueRDNS is [DueRDNS] on db.
func (db *DB) DueRDNS(ctx context.Context, now time.Time, limit int) ([]RDNSRecord, error) {
	return DueRDNS(ctx, db.Gorm, now, limit)
}

// EndNodeMaintenance is [EndNodeMaintenance] on db.
func (db *DB) EndNodeMaintenance(ctx context.Context, cluster, node string) error {
	return EndNodeMaintenance(ctx, db.Gorm, cluster, node)
}

// EnforceableServices is [EnforceableServices] on db.
func (db *DB) EnforceableServices(ctx context.Context, cluster string) ([]Service, error) {
	return EnforceableServices(ctx, db.Gorm, cluster)
}

// FinishRDNS is [FinishRDNS] on db.
func (db *DB) FinishRDNS(ctx context.Context, r RDNSRecord, o RDNSOutcome) error {
	return FinishRDNS(ctx, db.Gorm, r, o)
}

// GateQueues is [GateQueues] on db.
func (db *DB) GateQueues(ctx context.Context) ([]GateQueue, error) {
	return GateQueues(ctx, db.Gorm)
}

// GetBandwidthUsage is [GetBandwidthUsage] on db.
func (db *DB) GetBandwidthUsage(ctx context.Context, k ServiceKey) (*BandwidthUsage, error) {
	return GetBandwidthUsage(ctx, db.Gorm, k)
}

// GetClientServiceWithIPs is [GetClientServiceWithIPs] on db.
func (db *DB) GetClientServiceWithIPs(ctx context.Context, clientID, serviceID string) (*Service, []HeldIP, error) {
	return GetClientServiceWithIPs(ctx, db.Gorm, clientID, serviceID)
}

// GetIntent is [GetIntent] on db.
func (db *DB) GetIntent(ctx context.Context, id string) (*Intent, error) {
	return GetIntent(ctx, db.Gorm, id)
}

// GetServiceIntent is [GetServiceIntent] on db.
func (db *DB) GetServiceIntent(ctx context.Context, k ServiceKey, id string) (*Intent, error) {
	return GetServiceIntent(ctx, db.Gorm, k, id)
}

// HasOpenOperation is [HasOpenOperation] on db.
func (db *DB) HasOpenOperation(ctx context.Context, k ServiceKey) (bool, error) {
	return HasOpenOperation(ctx, db.Gorm, k)
}

// InsertAudit is [InsertAudit] on db.
func (db *DB) InsertAudit(ctx context.Context, ev *AuditEvent) error {
	return InsertAudit(ctx, db.Gorm, ev)
}

// InsertAudits is [InsertAudits] on db.
func (db *DB) InsertAudits(ctx context.Context, evs []AuditEvent) error {
	return InsertAudits(ctx, db.Gorm, evs)
}

// LatestIntent is [LatestIntent] on db.
func (db *DB) LatestIntent(ctx context.Context, k ServiceKey) (*Intent, error) {
	return LatestIntent(ctx, db.Gorm, k)
}

// LatestIntentIn is [LatestIntentIn] on db.
func (db *DB) LatestIntentIn(ctx context.Context, k ServiceKey, states ...string) (*Intent, error) {
	return LatestIntentIn(ctx, db.Gorm, k, states...)
}

// LatestIntentOfKind is [LatestIntentOfKind] on db.
func (db *DB) LatestIntentOfKind(ctx context.Context, k ServiceKey, kind string) (*Intent, error) {
	return LatestIntentOfKind(ctx, db.Gorm, k, kind)
}

// LatestOperation is [LatestOperation] on db.
func (db *DB) LatestOperation(ctx context.Context, k ServiceKey, action string) (*Operation, error) {
	return LatestOperation(ctx, db.Gorm, k, action)
}

// ListClientServices is [ListClientServices] on db.
func (db *DB) ListClientServices(ctx context.Context, clientID, after string, limit int) (ClientServicePage, error) {
	return ListClientServices(ctx, db.Gorm, clientID, after, limit)
}

// NodesInMaintenance is [NodesInMaintenance] on db.
func (db *DB) NodesInMaintenance(ctx context.Context, cluster string) (map[string]NodeMaintenance, error) {
	return NodesInMaintenance(ctx, db.Gorm, cluster)
}

// OpenActions is [OpenActions] on db.
func (db *DB) OpenActions(ctx context.Context, action string) (map[ServiceKey]bool, error) {
	return OpenActions(ctx, db.Gorm, action)
}

// OpenOperationOf is [OpenOperationOf] on db.
func (db *DB) OpenOperationOf(ctx context.Context, k ServiceKey, action string) (*Operation, error) {
	return OpenOperationOf(ctx, db.Gorm, k, action)
}

// RecordServiceBackups is [RecordServiceBackups] on db.
func (db *DB) RecordServiceBackups(ctx context.Context, svc int64, backups int, bytes int64, at time.Time) error {
	return RecordServiceBackups(ctx, db.Gorm, svc, backups, bytes, at)
}

// ReleaseIPsExcept is [ReleaseIPsExcept] on db.
func (db *DB) ReleaseIPsExcept(ctx context.Context, k ServiceKey, keep []string) (int64, error) {
	return ReleaseIPsExcept(ctx, db.Gorm, k, keep)
}

// ReleaseVMID is [ReleaseVMID] on db.
func (db *DB) ReleaseVMID(ctx context.Context, k ServiceKey) error {
	return ReleaseVMID(ctx, db.Gorm, k)
}

// ReserveVMID is [ReserveVMID] on db.
func (db *DB) ReserveVMID(ctx context.Context, k ServiceKey, cluster string, vmid int) error {
	return ReserveVMID(ctx, db.Gorm, k, cluster, vmid)
}

// ReservedVMIDs is [ReservedVMIDs] on db.
func (db *DB) ReservedVMIDs(ctx context.Context, cluster string, from, limit int) ([]int, error) {
	return ReservedVMIDs(ctx, db.Gorm, cluster, from, limit)
}

// SaveBandwidthUsage is [SaveBandwidthUsage] on db.
func (db *DB) SaveBandwidthUsage(ctx context.Context, u *BandwidthUsage) error {
	return SaveBandwidthUsage(ctx, db.Gorm, u)
}

// ServiceOwners is [ServiceOwners] on db.
func (db *DB) ServiceOwners(ctx context.Context, serviceID string) ([]string, error) {
	return ServiceOwners(ctx, db.Gorm, serviceID)
}

// ServiceRDNS is [ServiceRDNS] on db.
func (db *DB) ServiceRDNS(ctx context.Context, k ServiceKey) ([]RDNSRecord, error) {
	return ServiceRDNS(ctx, db.Gorm, k)
}

// ServiceVMIDs is [ServiceVMIDs] on db.
func (db *DB) ServiceVMIDs(ctx context.Context, cluster string) (map[int]ServiceKey, error) {
	return ServiceVMIDs(ctx, db.Gorm, cluster)
}

// ServicesOnNode is [ServicesOnNode] on db.
func (db *DB) ServicesOnNode(ctx context.Context, cluster, node string) ([]Service, error) {
	return ServicesOnNode(ctx, db.Gorm, cluster, node)
}

// SetNodeMaintenance is [SetNodeMaintenance] on db.
func (db *DB) SetNodeMaintenance(ctx context.Context, m NodeMaintenance) error {
	return SetNodeMaintenance(ctx, db.Gorm, m)
}

// UnsyncedRDNS is [UnsyncedRDNS] on db.
func (db *DB) UnsyncedRDNS(ctx context.Context, k ServiceKey) ([]RDNSRecord, error) {
	return UnsyncedRDNS(ctx, db.Gorm, k)
}

// SavePlan is [SavePlan] on db.
func (db *DB) SavePlan(ctx context.Context, code, source, body string) (bool, error) {
	return SavePlan(ctx, db.Gorm, code, source, body)
}
