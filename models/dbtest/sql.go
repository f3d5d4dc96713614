package dbtest

import (
	"testing"
	"time"

	"gorm.io/gorm"

	"pvebill/models"
)

// The helpers below are for what a test needs of the database beyond models.DB's methods:
// reading rows back to check them, putting a row into a state no method writes (a lease run
// out, a service created in the past), seeding in bulk, and watching or breaking statements.
// Code outside models reaches the database only through them and through models.DB's methods.

// Exec runs a statement, failing the test on an error.
func Exec(t testing.TB, db *models.DB, query string, args ...any) {
	t.Helper()
	if err := db.Gorm.Exec(query, args...).Error; err != nil {
		t.Fatalf("exec %q: %v", query, err)
	}
}

// Query runs a query and scans its rows into dest (a pointer to a value, a struct, a slice of
// either, or []map[string]any), and returns the error: for the callers that tolerate one (a
// poll that tries again, a goroutine that may not fail the test).
func Query(db *models.DB, dest any, query string, args ...any) error {
	return db.Gorm.Raw(query, args...).Scan(dest).Error
}

// Scan is Query failing the test on an error.
func Scan(t testing.TB, db *models.DB, dest any, query string, args ...any) {
	t.Helper()
	if err := Query(db, dest, query, args...); err != nil {
		t.Fatalf("query %q: %v", query, err)
	}
}

// Count runs a query that selects one number (SELECT COUNT(*) ...) and returns it, failing the
// test on an error.
func Count(t testing.TB, db *models.DB, query string, args ...any) int64 {
	t.Helper()
	var n int64
	Scan(t, db, &n, query, args...)
	return n
}

// TableRows reads every row of a table, column name to value, failing the test on an error
// (for checks that a secret is stored nowhere).
func TableRows(t testing.TB, db *models.DB, table string) []map[string]any {
	t.Helper()
	var rows []map[string]any
	Scan(t, db, &rows, "SELECT * FROM "+table)
	return rows
}

// ExpireLease moves the end of the operation's lease a second into the past, as if the
// worker holding it had died and its lease run out (rather than waiting for that).
func ExpireLease(t testing.TB, db *models.DB, operationID string) {
	t.Helper()
	Exec(t, db, "UPDATE operations SET lease_until = ? WHERE id = ?", models.Now().Add(-time.Second), operationID)
}

// SetServiceCreated sets when the service (of whichever client) was created, for usage tests
// whose periods begin before the row was written.
func SetServiceCreated(t testing.TB, db *models.DB, serviceID string, at time.Time) {
	t.Helper()
	Exec(t, db, "UPDATE services SET created_at = ? WHERE service_id = ?", at, serviceID)
}

// Insert writes rows (a slice of models, or a pointer to one) batch rows a statement, failing
// the test on an error: bulk seeding for benchmarks.
func Insert(t testing.TB, db *models.DB, rows any, batch int) {
	t.Helper()
	if err := db.Gorm.CreateInBatches(rows, batch).Error; err != nil {
		t.Fatalf("insert: %v", err)
	}
}

// Transaction runs f in one transaction of db and returns its error (committed when f returns
// nil): for tests that hold a lock while something else runs, or batch many writes.
func Transaction(db *models.DB, f func(tx *gorm.DB) error) error {
	return db.Gorm.Transaction(f)
}

// Statement is a kind of statement gorm runs, for After.
type Statement int

// The kinds of statement.
const (
	OnCreate Statement = iota
	OnQuery
	OnUpdate
	OnDelete
	OnRow
	OnRaw
)

// After registers f under name to run after each statement of the kinds on, for tests that
// count or record the statements db runs. Register before anything uses db: gorm's callbacks
// are not to be changed while statements run.
func After(t testing.TB, db *models.DB, name string, f func(tx *gorm.DB), on ...Statement) {
	t.Helper()
	cb := db.Gorm.Callback()
	for _, s := range on {
		var err error
		switch s {
		case OnCreate:
			err = cb.Create().After("gorm:create").Register(name, f)
		case OnQuery:
			err = cb.Query().After("gorm:query").Register(name, f)
		case OnUpdate:
			err = cb.Update().After("gorm:update").Register(name, f)
		case OnDelete:
			err = cb.Delete().After("gorm:delete").Register(name, f)
		case OnRow:
			err = cb.Row().After("gorm:row").Register(name, f)
		case OnRaw:
			err = cb.Raw().After("gorm:raw").Register(name, f)
		default:
			t.Fatalf("unknown statement kind %d", s)
		}
		if err != nil {
			t.Fatalf("register %s: %v", name, err)
		}
	}
}

// BeforeCreate registers f under name to run before each insert db runs; f may fail the
// insert with tx.AddError (a database failure injected at one write).
func BeforeCreate(t testing.TB, db *models.DB, name string, f func(tx *gorm.DB)) {
	t.Helper()
	if err := db.Gorm.Callback().Create().Before("gorm:create").Register(name, f); err != nil {
		t.Fatalf("register %s: %v", name, err)
	}
}
