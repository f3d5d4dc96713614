package models

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"time"
)

//go:embed migrations
var migrationFS embed.FS

// Migration is one versioned SQL file of a dialect.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// Migrations returns the embedded migrations of a dialect in version order.
func Migrations(dialect string) ([]Migration, error) {
	dir := "migrations/" + dialect
	entries, err := fs.ReadDir(migrationFS, dir)
	if err != nil {
		return nil, fmt.Errorf("migrations for %s: %w", dialect, err)
	}
	var out []Migration
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".sql") {
			continue
		}
		num, _, ok := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("migration %s: name must start with NNNN_", name)
		}
		raw, err := migrationFS.ReadFile(dir + "/" + name)
		if err != nil {
			return nil, err
		}
		out = append(out, Migration{Version: v, Name: strings.TrimSuffix(name, ".sql"), SQL: string(raw)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out, nil
}

const createMigrationsTable = `CREATE TABLE IF NOT EXISTS schema_migrations (
  version INT NOT NULL PRIMARY KEY,
  name VARCHAR(255) NOT NULL,
  applied_at %s NOT NULL
)`

func (db *DB) ensureMigrationsTable(ctx context.Context) error {
	typ := "DATETIME(6)"
	if db.Dialect == SQLite {
		typ = "DATETIME"
	}
	return db.WithContext(ctx).Exec(fmt.Sprintf(createMigrationsTable, typ)).Error
}

// AppliedVersions returns the versions recorded in schema_migrations.
func (db *DB) AppliedVersions(ctx context.Context) (map[int]bool, error) {
	if err := db.ensureMigrationsTable(ctx); err != nil {
		return nil, err
	}
	var versions []int
	if err := db.WithContext(ctx).Raw("SELECT version FROM schema_migrations").Scan(&versions).Error; err != nil {
		return nil, err
	}
	out := make(map[int]bool, len(versions))
	for _, v := range versions {
		out[v] = true
	}
	return out, nil
}

// pending returns the migrations not yet recorded, in version order.
func (db *DB) pending(ctx context.Context) ([]Migration, error) {
	ms, err := Migrations(db.Dialect)
	if err != nil {
		return nil, err
	}
	done, err := db.AppliedVersions(ctx)
	if err != nil {
		return nil, err
	}
	var out []Migration
	for _, m := range ms {
		if !done[m.Version] {
			out = append(out, m)
		}
	}
	return out, nil
}

// Migrate applies every migration not yet recorded, in order, and returns the names applied.
// Each file's statements run in order; on MySQL DDL is not transactional, so a failed file is
// reported with its name and the next run retries from it.
func (db *DB) Migrate(ctx context.Context) ([]string, error) {
	todo, err := db.pending(ctx)
	if err != nil {
		return nil, err
	}
	var applied []string
	for _, m := range todo {
		for _, stmt := range splitSQL(m.SQL) {
			if err := db.WithContext(ctx).Exec(stmt).Error; err != nil {
				return applied, fmt.Errorf("migration %s: %w", m.Name, err)
			}
		}
		if err := db.WithContext(ctx).Exec("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
			m.Version, m.Name, time.Now().UTC()).Error; err != nil {
			return applied, fmt.Errorf("record migration %s: %w", m.Name, err)
		}
		applied = append(applied, m.Name)
	}
	return applied, nil
}

// Pending returns the names of migrations not yet applied.
func (db *DB) Pending(ctx context.Context) ([]string, error) {
	todo, err := db.pending(ctx)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(todo))
	for i, m := range todo {
		names[i] = m.Name
	}
	return names, nil
}

// ErrSchemaBehind is returned by CheckSchema when migrations are pending.
type ErrSchemaBehind struct{ Pending []string }

func (e *ErrSchemaBehind) Error() string {
	return fmt.Sprintf("database schema is behind (%d pending: %s); run `pvebill migrate --config FILE`",
		len(e.Pending), strings.Join(e.Pending, ", "))
}

// CheckSchema refuses a schema that is behind the binary.
func (db *DB) CheckSchema(ctx context.Context) error {
	p, err := db.Pending(ctx)
	if err != nil {
		return err
	}
	if len(p) > 0 {
		return &ErrSchemaBehind{Pending: p}
	}
	return nil
}

// splitSQL drops "--" comment lines, then splits on ";" (the migrations hold no semicolons in
// string literals).
func splitSQL(s string) []string {
	var kept []string
	for _, l := range strings.Split(s, "\n") {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "--") {
			kept = append(kept, l)
		}
	}
	var out []string
	for _, stmt := range strings.Split(strings.Join(kept, "\n"), ";") {
		if strings.TrimSpace(stmt) != "" {
			out = append(out, strings.TrimSpace(stmt))
		}
	}
	return out
}
