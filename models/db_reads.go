package models

import "context"

// The methods below give code outside models one way to the database: a
// method on DB rather than a *gorm.DB handed out of the package.

// GetService reads the service k.
func (db *DB) GetService(ctx context.Context, k ServiceKey) (*Service, error) {
	return GetService(ctx, db.Gorm, k)
}

// UpdateService writes cols onto the service k.
func (db *DB) UpdateService(ctx context.Context, k ServiceKey, cols map[string]any) error {
	return UpdateService(ctx, db.Gorm, k, cols)
}

// GetOperation reads the operation id.
func (db *DB) GetOperation(ctx context.Context, id string) (*Operation, error) {
	return GetOperation(ctx, db.Gorm, id)
}

// OpenReconciliations lists up to limit open reconciliation operations.
func (db *DB) OpenReconciliations(ctx context.Context, limit int) ([]Operation, error) {
	return OpenReconciliations(ctx, db.Gorm, limit)
}

// ServiceBackupBytes sums the backup bytes of each of svcs.
func (db *DB) ServiceBackupBytes(ctx context.Context, svcs []int64) (map[int64]int64, error) {
	return ServiceBackupBytes(ctx, db.Gorm, svcs)
}

// GetClientService reads the service serviceID of clientID.
func (db *DB) GetClientService(ctx context.Context, clientID, serviceID string) (*Service, error) {
	return GetClientService(ctx, db.Gorm, clientID, serviceID)
}

// InsertOperation records op.
func (db *DB) InsertOperation(ctx context.Context, op *Operation) error {
	return InsertOperation(ctx, db.Gorm, op)
}

// InsertService writes the new service s.
func (db *DB) InsertService(ctx context.Context, s *Service) error {
	return InsertService(ctx, db.Gorm, s)
}

// ListAudit lists the events of the service k, oldest first.
func (db *DB) ListAudit(ctx context.Context, k ServiceKey) ([]AuditEvent, error) {
	return ListAudit(ctx, db.Gorm, k)
}

// GetServiceByRef reads the service whose row id is ref.
func (db *DB) GetServiceByRef(ctx context.Context, ref int64) (*Service, error) {
	return GetServiceByRef(ctx, db.Gorm, ref)
}

// WatchConsoleServices reads what a console watch needs of the services refs.
func (db *DB) WatchConsoleServices(ctx context.Context, refs []int64) ([]ConsoleWatch, error) {
	return WatchConsoleServices(ctx, db.Gorm, refs)
}

// GetIPPool reads the pool name.
func (db *DB) GetIPPool(ctx context.Context, name string) (*IPPool, error) {
	return GetIPPool(ctx, db.Gorm, name)
}

// ListIPPools lists the pools.
func (db *DB) ListIPPools(ctx context.Context) ([]IPPool, error) {
	return ListIPPools(ctx, db.Gorm)
}

// CountIPAllocations counts the allocations of each pool.
func (db *DB) CountIPAllocations(ctx context.Context) (map[string]int64, error) {
	return CountIPAllocations(ctx, db.Gorm)
}

// ServiceIPAllocations reads the allocations of the service k and their pools.
func (db *DB) ServiceIPAllocations(ctx context.Context, k ServiceKey) ([]IPAllocation, map[string]IPPool, error) {
	return ServiceIPAllocations(ctx, db.Gorm, k)
}

// ReleaseIPs releases the addresses of the service k.
func (db *DB) ReleaseIPs(ctx context.Context, k ServiceKey) (int64, error) {
	return ReleaseIPs(ctx, db.Gorm, k)
}

// GetPlan reads the plan code.
func (db *DB) GetPlan(ctx context.Context, code string) (*Plan, error) {
	return GetPlan(ctx, db.Gorm, code)
}

// ListPlans lists the plans.
func (db *DB) ListPlans(ctx context.Context) ([]Plan, error) {
	return ListPlans(ctx, db.Gorm)
}

// DeletePlan deletes the plan code.
func (db *DB) DeletePlan(ctx context.Context, code string) error {
	return DeletePlan(ctx, db.Gorm, code)
}

// GateHolders lists the operation holding each gate that is held.
func (db *DB) GateHolders(ctx context.Context) (map[string]string, error) {
	return GateHolders(ctx, db.Gorm)
}
