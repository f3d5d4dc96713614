// Package poll lets a test wait on an observable fact (a row, a request the simulator logged, a
// metric) instead of on the clock. It imports nothing of pvebill, so the tests of any package,
// models included, can use it. It is for tests only: no production package imports it.
package poll

import (
	"testing"
	"time"
)

// Every is how often Until reads its condition: short, so a test goes on as soon as the fact
// holds, and long enough not to load the machine.
const Every = 5 * time.Millisecond

// Until reads cond every few milliseconds until it holds. The first read is immediate. When
// within passes first it fails the test, naming what it waited for.
func Until(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Wait(within, cond) {
		t.Fatalf("timed out after %v waiting for %s", within, what)
	}
}

// Wait reads cond every few milliseconds until it holds or within passes, and reports whether
// it held. It is for a goroutine other than the test's, which may not call t.Fatal.
func Wait(within time.Duration, cond func() bool) bool {
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	tick := time.NewTicker(Every)
	defer tick.Stop()
	for !cond() {
		select {
		case <-deadline.C:
			return cond()
		case <-tick.C:
		}
	}
	return true
}
