package models

import "gorm.io/gorm"

// SplitSQLForTest exposes splitSQL to the external tests.
var SplitSQLForTest = splitSQL

// PooledStatementsForTest counts the statements the pool has prepared and the queries it has
// seen.
func PooledStatementsForTest(db *DB) (prepared, seen int) {
	p := db.Gorm.Plugins[stmtPoolName].(*stmtPool)
	p.mu.RLock()
	defer p.mu.RUnlock()
	for _, st := range p.stmts {
		if st != nil {
			prepared++
		}
	}
	return prepared, len(p.stmts)
}

// PooledForTest exposes pooled and inTransaction.
var (
	PooledForTest        = pooled
	InTransactionForTest = inTransaction
)

// WithoutStatementPoolForTest makes db run every statement unprepared, as database/sql sends it
// without the pool (the comparison in BenchmarkWebhookStatements).
func WithoutStatementPoolForTest(db *DB) {
	if p, ok := db.Gorm.Plugins[stmtPoolName].(*stmtPool); ok {
		p.close()
		delete(db.Gorm.Plugins, stmtPoolName)
	}
}

// UsageServicesSQLForTest is the statement UsageServices runs for q, with its values inlined.
func UsageServicesSQLForTest(db *DB, q UsageServicesQuery) string {
	return db.Gorm.ToSQL(func(tx *gorm.DB) *gorm.DB {
		var rows []Service
		return usageServicesQuery(tx, q).Find(&rows)
	})
}
