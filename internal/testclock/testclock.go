// Package testclock is a controllable clock for tests: pass Clock.Now where
// the product takes a clock (messaging.Options.Clock, httpapi.Options.Clock,
// ...) and move time with Advance instead of sleeping.
package testclock

import (
	"sync"
	"time"
)

// Clock is a clock that only moves when told to. It is safe for concurrent
// use.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// New returns a Clock showing t.
func New(t time.Time) *Clock { return &Clock{now: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
