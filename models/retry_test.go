package models

import (
	"errors"
	"testing"

	mysqldrv "github.com/go-sql-driver/mysql"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// R51: a Galera certification failure (1213) and a node that is not ready (1047) are retried
// like a deadlock, each retry counted by its error number, and the retries are bounded.
func TestRetryDeadlockRetriesGaleraErrorsBoundedAndCounted(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	for _, code := range []uint16{errDeadlock, errWsrepNotReady, errLockWaitTimeout} {
		label := map[uint16]string{errDeadlock: "1213", errWsrepNotReady: "1047", errLockWaitTimeout: "1205"}[code]
		before := testutil.ToFloat64(txRetries.WithLabelValues(label))
		calls := 0
		err := retryDeadlock(ctx, func() error {
			calls++
			if calls < 3 {
				return &mysqldrv.MySQLError{Number: code, Message: "retry me"}
			}
			return nil
		})
		if err != nil || calls != 3 {
			t.Fatalf("code %d: err %v after %d calls, want success on the third", code, err, calls)
		}
		if got := testutil.ToFloat64(txRetries.WithLabelValues(label)) - before; got != 2 {
			t.Fatalf("code %d: %v retries counted, want 2", code, got)
		}
	}

	exhausted := testutil.ToFloat64(txRetriesExhausted.WithLabelValues("1213"))
	calls := 0
	err := retryDeadlock(ctx, func() error {
		calls++
		return &mysqldrv.MySQLError{Number: errDeadlock, Message: "always"}
	})
	var me *mysqldrv.MySQLError
	if !errors.As(err, &me) || me.Number != errDeadlock || calls != retryAttempts {
		t.Fatalf("always failing: err %v after %d calls, want 1213 after %d", err, calls, retryAttempts)
	}
	if got := testutil.ToFloat64(txRetriesExhausted.WithLabelValues("1213")) - exhausted; got != 1 {
		t.Fatalf("%v give-ups counted, want 1", got)
	}

	calls = 0
	err = retryDeadlock(ctx, func() error {
		calls++
		return &mysqldrv.MySQLError{Number: 1062, Message: "duplicate"}
	})
	if err == nil || calls != 1 {
		t.Fatalf("a duplicate key is not retried: err %v after %d calls", err, calls)
	}
}
