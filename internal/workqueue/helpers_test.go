package workqueue

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// clock is a test clock moved by its sleep, which records each wait. When
// block is set, a sleep waits for its context instead of returning.
type clock struct {
	mu    sync.Mutex
	now   time.Time
	waits []time.Duration
	block bool
	slept chan struct{} // receives a value when a blocking sleep starts
}

func newClock() *clock { return &clock{now: t0, slept: make(chan struct{}, 1)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	c.waits = append(c.waits, d)
	c.now = c.now.Add(d)
	block := c.block
	c.mu.Unlock()
	if block {
		c.slept <- struct{}{}
		<-ctx.Done()
	}
	return ctx.Err()
}

func (c *clock) Waits() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.waits...)
}

// logs counts log records by message.
type logs struct {
	mu sync.Mutex
	n  map[string]int
}

func newLogs() *logs { return &logs{n: map[string]int{}} }

func (l *logs) Enabled(context.Context, slog.Level) bool { return true }
func (l *logs) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.n[r.Message]++
	return nil
}
func (l *logs) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logs) WithGroup(string) slog.Handler      { return l }

func (l *logs) count(msg string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n[msg]
}

// within checks that d is w +-20 %.
func within(t *testing.T, what string, d, w time.Duration) {
	t.Helper()
	if d < w*8/10 || d > w*12/10 {
		t.Errorf("%s = %v; want %v +-20 %%", what, d, w)
	}
}

// recv returns the next value of ch, failing the test if none comes in
// a long while (a hang, not a timing assertion).
func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}
