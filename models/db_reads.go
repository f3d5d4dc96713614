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
