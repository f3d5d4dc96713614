package models

import (
	"context"
	"database/sql"
	"sync"
	"time"

	"gorm.io/gorm"
)

// A statement with arguments sent through database/sql is prepared, executed and closed: with
// MySQL that is two round trips and a third packet for every statement. The webhook path
// runs the same few statements all day (the idempotency reservation and answer, the plan
// read, the service and operation insert, the service read), so those go through stmtPool,
// which prepares each once on the pool and lets database/sql reuse it on every connection,
// inside transactions too. The SQL, its arguments and the gorm callbacks stay the same.
//
// gorm's own PrepareStmt mode does not serve here: a statement first prepared inside a
// transaction is cached bound to that transaction and prepared again in every later one.

// stmtPoolName is the gorm plugin name the pool is registered under, so that query functions
// handed the plain *gorm.DB find it.
const stmtPoolName = "pvebill:stmtpool"

// maxPooledStmts bounds the pool; statements beyond it run unprepared as before.
const maxPooledStmts = 64

type stmtPool struct {
	db *sql.DB
	mu sync.RWMutex
	// stmts holds the prepared statements by SQL text; a nil entry is one being prepared, or
	// one that could not be (it keeps running unprepared).
	stmts  map[string]*sql.Stmt
	closed bool
}

func newStmtPool(db *sql.DB) *stmtPool { return &stmtPool{db: db, stmts: map[string]*sql.Stmt{}} }

// Name and Initialize make the pool a gorm plugin (gorm.DB.Use).
func (p *stmtPool) Name() string              { return stmtPoolName }
func (p *stmtPool) Initialize(*gorm.DB) error { return nil }

// stmt returns the prepared statement for query, or nil: the first time a query is seen it is
// prepared in the background and this call runs it unprepared. Preparing never waits for a
// connection in the caller, which may hold the only one (SQLite) or a transaction's.
func (p *stmtPool) stmt(query string) *sql.Stmt {
	p.mu.RLock()
	st, seen := p.stmts[query]
	p.mu.RUnlock()
	if seen {
		return st
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, seen := p.stmts[query]; seen || p.closed || len(p.stmts) >= maxPooledStmts {
		return nil
	}
	p.stmts[query] = nil
	go p.prepare(query)
	return nil
}

func (p *stmtPool) prepare(query string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := p.db.PrepareContext(ctx, query)
	if err != nil {
		return // stays nil: run unprepared
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		_ = st.Close() //nolint:sqlclosecheck // closed at once when the pool is gone, else kept for the pool's life
		return
	}
	p.stmts[query] = st
}

func (p *stmtPool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for _, st := range p.stmts {
		if st != nil {
			_ = st.Close()
		}
	}
	clear(p.stmts)
}

// The gorm.ConnPool methods. A statement without arguments is sent as it is (MySQL's text
// protocol, one round trip), as database/sql does.

func (p *stmtPool) PrepareContext(ctx context.Context, query string) (*sql.Stmt, error) {
	return p.db.PrepareContext(ctx, query)
}

func (p *stmtPool) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if len(args) > 0 {
		if st := p.stmt(query); st != nil { //nolint:sqlclosecheck // the pool's statement, closed by close(); the caller closes rows
			return st.ExecContext(ctx, args...)
		}
	}
	return p.db.ExecContext(ctx, query, args...)
}

func (p *stmtPool) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if len(args) > 0 {
		if st := p.stmt(query); st != nil { //nolint:sqlclosecheck // the pool's statement, closed by close(); the caller closes rows
			return st.QueryContext(ctx, args...)
		}
	}
	return p.db.QueryContext(ctx, query, args...)
}

func (p *stmtPool) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if len(args) > 0 {
		if st := p.stmt(query); st != nil { //nolint:sqlclosecheck // the pool's statement, closed by close(); the caller closes rows
			return st.QueryRowContext(ctx, args...)
		}
	}
	return p.db.QueryRowContext(ctx, query, args...)
}

// BeginTx makes gorm transactions on the pool use its statements too (gorm.ConnPoolBeginner).
func (p *stmtPool) BeginTx(ctx context.Context, opts *sql.TxOptions) (gorm.ConnPool, error) {
	tx, err := p.db.BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &stmtTx{Tx: tx, pool: p}, nil
}

// stmtTx is a transaction that runs the pool's statements on its connection (gorm.Tx).
type stmtTx struct {
	*sql.Tx
	pool *stmtPool
}

func (t *stmtTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if len(args) > 0 {
		if st := t.pool.stmt(query); st != nil {
			return t.Tx.StmtContext(ctx, st).ExecContext(ctx, args...) //nolint:sqlclosecheck // the transaction closes its statement when it ends
		}
	}
	return t.Tx.ExecContext(ctx, query, args...)
}

func (t *stmtTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if len(args) > 0 {
		if st := t.pool.stmt(query); st != nil {
			return t.Tx.StmtContext(ctx, st).QueryContext(ctx, args...) //nolint:sqlclosecheck // the transaction closes its statement when it ends; the caller closes the rows
		}
	}
	return t.Tx.QueryContext(ctx, query, args...)
}

func (t *stmtTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if len(args) > 0 {
		if st := t.pool.stmt(query); st != nil {
			return t.Tx.StmtContext(ctx, st).QueryRowContext(ctx, args...) //nolint:sqlclosecheck // the transaction closes its statement when it ends
		}
	}
	return t.Tx.QueryRowContext(ctx, query, args...)
}

// pooled returns tx bound to ctx, running its statements through the statement pool when tx is
// the plain connection pool (a transaction handed in is used as it is).
func pooled(ctx context.Context, tx *gorm.DB) *gorm.DB {
	s := tx.WithContext(ctx)
	p, ok := tx.Plugins[stmtPoolName].(*stmtPool)
	if !ok {
		return s
	}
	if sqlDB, ok := s.Statement.ConnPool.(*sql.DB); ok && sqlDB == p.db {
		s.Statement.ConnPool = p
	}
	return s
}

// inTransaction reports whether tx runs inside a transaction.
func inTransaction(tx *gorm.DB) bool {
	_, ok := tx.Statement.ConnPool.(gorm.TxCommitter)
	return ok
}
