// Package testclock is the clock a test moves on instead of waiting: the wall clock plus what
// the test advanced it. It imports nothing of pvebill, so the tests of any package can use it;
// no production package imports it.
package testclock

import (
	"sync"
	"time"
)

// Clock is the wall clock moved on by Advance. Its zero value is the wall clock.
type Clock struct {
	mu     sync.Mutex
	offset time.Duration
}

// Now is the wall clock plus what was advanced.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
}
