package models

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/glebarez/sqlite"
	mysqldrv "github.com/go-sql-driver/mysql"
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
	// nodes makes the pool's connections when several database nodes are configured (nil
	// otherwise); addr is the one node's address then.
	nodes *nodeSet
	addr  string
}

// ErrNotFound is returned by lookups that find no row.
var ErrNotFound = errors.New("not found")

// ErrDuplicate is returned when a unique key is violated.
var ErrDuplicate = gorm.ErrDuplicatedKey

// Open connects to the database. For SQLite the DSN is a file path (or ":memory:"); the pool is
// limited to one connection, which serialises writers the way SQLite wants. For MySQL, failover
// names further database nodes (a Galera cluster) the replica moves to, in order, when the ones
// before are unreachable or not ready (R51).
func Open(driver, dsn string, failover ...string) (*DB, error) {
	cfg := &gorm.Config{TranslateError: true, Logger: logger.Discard, NowFunc: func() time.Time { return time.Now().UTC() }}
	db := &DB{Dialect: driver}
	var dial gorm.Dialector
	switch driver {
	case MySQL:
		var err error
		if dial, err = db.mysqlDialector(dsn, failover); err != nil {
			return nil, err
		}
	case SQLite:
		if len(failover) > 0 {
			return nil, errors.New("database failover nodes need the mysql driver")
		}
		if err := prepareSQLiteFile(dsn); err != nil {
			return nil, err
		}
		if !strings.Contains(dsn, "?") {
			dsn += "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_txlock=immediate"
		}
		dial = sqlite.Open(dsn)
	default:
		return nil, fmt.Errorf("unknown database driver %q", driver)
	}
	g, err := gorm.Open(dial, cfg)
	if err != nil {
		db.closeNodes()
		return nil, fmt.Errorf("open %s database: %w", driver, err)
	}
	db.Gorm = g
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
	return db, nil
}

// mysqlDialector completes each DSN with the parameters pvebill relies on and returns the gorm
// dialector: over the driver for one node, over a nodeSet for several.
func (db *DB) mysqlDialector(dsn string, failover []string) (gorm.Dialector, error) {
	dsn = mysqlDSN(dsn)
	if cfg, err := mysqldrv.ParseDSN(dsn); err == nil {
		db.addr = cfg.Addr
	}
	if len(failover) == 0 {
		return mysql.Open(dsn), nil
	}
	all := []string{dsn}
	for _, d := range failover {
		all = append(all, mysqlDSN(d))
	}
	set, err := newNodeSet(all)
	if err != nil {
		return nil, err
	}
	db.nodes = set
	return mysql.New(mysql.Config{Conn: sql.OpenDB(set)}), nil
}

// mysqlDSN adds what pvebill relies on to a MySQL DSN, unless it says otherwise.
func mysqlDSN(dsn string) string {
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
	return dsn
}

// closeNodes stops the node monitor of a DB whose open failed.
func (db *DB) closeNodes() {
	if db.nodes != nil {
		_ = db.nodes.Close()
	}
}

// Nodes says which database node the replica uses and what it knows of the others: nil for
// SQLite, one entry for a single MySQL server (in use, its readiness unprobed).
func (db *DB) Nodes() []NodeState {
	if db.nodes != nil {
		return db.nodes.Nodes()
	}
	if db.Dialect != MySQL {
		return nil
	}
	return []NodeState{{Addr: db.addr, Ready: true, InUse: true}}
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
