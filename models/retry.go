package models

import (
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"time"

	mysqldrv "github.com/go-sql-driver/mysql"
	"github.com/prometheus/client_golang/prometheus"
	"gorm.io/gorm"
)

// The MariaDB errors after which a whole transaction is simply run again (R51). None of them
// commits anything, so a retry cannot apply a change twice.
const (
	// errDeadlock is a deadlock victim on one server, and on Galera a certification failure:
	// another node committed a conflicting write set first, and this transaction lost at
	// commit (or was aborted by the applier).
	errDeadlock = 1213
	// errLockWaitTimeout is a lock wait that ran out of innodb_lock_wait_timeout.
	errLockWaitTimeout = 1205
	// errWsrepNotReady is a Galera node that is not ready for queries (wsrep_ready=OFF: it lost
	// quorum or is still joining); the pool's next connection may reach a node that is.
	errWsrepNotReady = 1047
)

// retryAttempts bounds how often one transaction runs; txRetryBase is the first back-off, which
// grows linearly with jitter (a node that is not ready gets a longer one, see backoff).
const (
	retryAttempts = 10
	txRetryBase   = 3 * time.Millisecond
)

// The retry metrics, shared by every DB of the process and registered by RegisterMetrics.
var (
	txRetries = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pvebill_db_tx_retries_total",
		Help: "Database transactions run again after a retryable error, by MariaDB error number (1213 deadlock or Galera certification failure, 1205 lock wait timeout, 1047 Galera node not ready)."},
		[]string{"code"})
	txRetriesExhausted = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pvebill_db_tx_retries_exhausted_total",
		Help: "Database transactions given up after the retry bound, by MariaDB error number of the last failure."},
		[]string{"code"})
)

// retryDeadlock re-runs f when MySQL/MariaDB picked its transaction as a deadlock victim, a lock
// wait timed out, a Galera certification failed or the Galera node was not ready (the documented
// remedy for each is to run the transaction again), at most retryAttempts times in all. Every
// retry and every give-up is counted by error number.
func retryDeadlock(ctx context.Context, f func() error) error {
	var err error
	for attempt := 0; attempt < retryAttempts; attempt++ {
		if err = f(); err == nil {
			return nil
		}
		code, ok := retryableCode(err)
		if !ok {
			return err
		}
		label := strconv.Itoa(int(code))
		if attempt == retryAttempts-1 {
			txRetriesExhausted.WithLabelValues(label).Inc()
			return err
		}
		txRetries.WithLabelValues(label).Inc()
		select {
		case <-ctx.Done():
			return err
		case <-time.After(backoff(code, attempt)):
		}
	}
	return err
}

// backoff is the wait before retry attempt+1: linear with up to 100% jitter, so that two
// replicas that lost to each other do not collide again in step. A node that is not ready needs
// longer (it rejoins or the pool moves on), so its base is ten times larger.
func backoff(code uint16, attempt int) time.Duration {
	base := txRetryBase
	if code == errWsrepNotReady {
		base *= 10
	}
	d := time.Duration(attempt+1) * base
	return d + rand.N(d)
}

// RetryDeadlock is retryDeadlock for transactions written outside this package.
func RetryDeadlock(ctx context.Context, f func() error) error { return retryDeadlock(ctx, f) }

// retryableCode returns the MariaDB error number of err when it is one a transaction is retried
// after.
func retryableCode(err error) (uint16, bool) {
	var me *mysqldrv.MySQLError
	if !errors.As(err, &me) {
		return 0, false
	}
	switch me.Number {
	case errDeadlock, errLockWaitTimeout, errWsrepNotReady:
		return me.Number, true
	}
	return 0, false
}

// retryRows runs one autocommit statement (a compare-and-swap update or delete) under
// retryDeadlock and returns the rows it matched. On Galera the statement's loser learns at commit
// (1213); run again, it matches no row, which is how a compare-and-swap says it lost.
func retryRows(ctx context.Context, stmt func() *gorm.DB) (int64, error) {
	var n int64
	err := retryDeadlock(ctx, func() error {
		res := stmt()
		n = res.RowsAffected
		return res.Error
	})
	return n, err
}
