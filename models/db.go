package models

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/glebarez/sqlite"
	"gorm.io/driver/mysql"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// Dialect names.
const (
	MySQL  = "mysql"
	SQLite = "sqlite"
)

// DB is the storage handle: a gorm DB plus the dialect it speaks.
type DB struct {
	Gorm    *gorm.DB
	Dialect string
}

// ErrNotFound is returned by lookups that find no row.
var ErrNotFound = errors.New("not found")

// ErrDuplicate is returned when a unique key is violated.
var ErrDuplicate = gorm.ErrDuplicatedKey

// Open connects to the database. For SQLite the DSN is a file path (or ":memory:"); the pool is
// limited to one connection, which serialises writers the way SQLite wants.
func Open(driver, dsn string) (*DB, error) {
	cfg := &gorm.Config{TranslateError: true, Logger: logger.Discard, NowFunc: func() time.Time { return time.Now().UTC() }}
	var dial gorm.Dialector
	switch driver {
	case MySQL:
		if !strings.Contains(dsn, "parseTime=") {
			dsn += sep(dsn) + "parseTime=true"
		}
		if !strings.Contains(dsn, "loc=") {
			dsn += "&loc=UTC"
		}
		// Rows affected = rows matched, as on SQLite: compare-and-swap updates that write an
		// unchanged value still count as a match.
		if !strings.Contains(dsn, "clientFoundRows=") {
			dsn += "&clientFoundRows=true"
		}

		dial = mysql.Open(dsn)
	case SQLite:
		if !strings.Contains(dsn, "?") {
			dsn += "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_txlock=immediate"
		}
		dial = sqlite.Open(dsn)
	default:
		return nil, fmt.Errorf("unknown database driver %q", driver)
	}
	g, err := gorm.Open(dial, cfg)
	if err != nil {
		return nil, fmt.Errorf("open %s database: %w", driver, err)
	}
	sqlDB, err := g.DB()
	if err != nil {
		return nil, err
	}
	if err := g.Use(newStmtPool(sqlDB)); err != nil {
		return nil, err
	}
	if driver == SQLite {
		sqlDB.SetMaxOpenConns(1)
	} else {
		sqlDB.SetMaxOpenConns(32)
		sqlDB.SetMaxIdleConns(16)
		sqlDB.SetConnMaxLifetime(5 * time.Minute)
	}
	return &DB{Gorm: g, Dialect: driver}, nil
}

func sep(dsn string) string {
	if strings.Contains(dsn, "?") {
		return "&"
	}
	return "?"
}

// txOpts are the options of the short coordination transactions: READ COMMITTED on MySQL (no
// gap locks, so claims and finishes rarely collide); SQLite serialises anyway.
func (db *DB) txOpts() *sql.TxOptions {
	if db.Dialect == MySQL {
		return &sql.TxOptions{Isolation: sql.LevelReadCommitted}
	}
	return nil
}

// Ping checks the database answers.
func (db *DB) Ping(ctx context.Context) error {
	sqlDB, err := db.Gorm.DB()
	if err != nil {
		return err
	}
	return sqlDB.PingContext(ctx)
}

// Close closes the pool.
func (db *DB) Close() error {
	sqlDB, err := db.Gorm.DB()
	if err != nil {
		return err
	}
	if p, ok := db.Gorm.Plugins[stmtPoolName].(*stmtPool); ok {
		p.close()
	}
	return sqlDB.Close()
}

// WithContext returns the gorm handle bound to ctx.
func (db *DB) WithContext(ctx context.Context) *gorm.DB { return db.Gorm.WithContext(ctx) }

// Now is the time the storage layer writes: UTC, microsecond precision (what DATETIME(6) keeps).
func Now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }
