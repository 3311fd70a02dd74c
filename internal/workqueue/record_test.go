package workqueue

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"
)

var (
	errFault = errors.New("storage fault")
	errGone  = errors.New("gone")
)

// recordQueue returns a queue named "q" on c whose logs go to l.
func recordQueue(c *clock, l *logs) *Queue[int] {
	return New(Config[int]{Name: "q", Now: c.Now, Sleep: c.Sleep, Logger: slog.New(l),
		Claim: func(context.Context, int) ([]int, error) { return nil, nil }, Work: func(context.Context, int) error { return nil }})
}

func TestRecordRetriesUntilSuccess(t *testing.T) {
	t.Parallel()
	c, l := newClock(), newLogs()
	calls := 0
	err := recordQueue(c, l).Record(context.Background(), &Outcome{What: "sent", LeaseEnd: t0.Add(time.Minute), LogArgs: []any{"id", 1},
		Write: func(context.Context) error {
			calls++
			if calls < 4 {
				return errFault
			}
			return nil
		}})
	if err != nil || calls != 4 {
		t.Fatalf("Record = %v after %d writes; want success on the 4th", err, calls)
	}
	w := c.Waits()
	if len(w) != 3 {
		t.Fatalf("%d waits; want 3", len(w))
	}
	for i, base := range []time.Duration{recordInitial, 2 * recordInitial, 4 * recordInitial} {
		within(t, "wait", w[i], base)
	}
	if n := l.count("q: recording sent succeeded after retries"); n != 1 {
		t.Errorf("%d success-after-retries lines; want 1", n)
	}
	if n := l.count("q: recording sent failed"); n != 0 {
		t.Errorf("%d failure lines for a write that succeeded", n)
	}
}

func TestRecordStopsAtAPermanentError(t *testing.T) {
	t.Parallel()
	c, l := newClock(), newLogs()
	calls := 0
	err := recordQueue(c, l).Record(context.Background(), &Outcome{What: "sent", LeaseEnd: t0.Add(time.Minute),
		Permanent: func(err error) bool { return errors.Is(err, errGone) },
		Write:     func(context.Context) error { calls++; return errGone }})
	if !errors.Is(err, errGone) || calls != 1 || len(c.Waits()) != 0 {
		t.Errorf("Record = %v after %d writes and %d waits; want the permanent error at once", err, calls, len(c.Waits()))
	}
	if n := l.count("q: recording sent failed"); n != 1 {
		t.Errorf("%d failure lines; want 1", n)
	}
}

func TestRecordStopsAtTheLeaseEnd(t *testing.T) {
	t.Parallel()
	c, l := newClock(), newLogs()
	calls := 0
	err := recordQueue(c, l).Record(context.Background(), &Outcome{What: "sent", LeaseEnd: t0.Add(time.Minute),
		Write: func(context.Context) error { calls++; return errFault }})
	if !errors.Is(err, errFault) {
		t.Fatalf("Record = %v; want the last fault", err)
	}
	if end := c.Now(); !end.Before(t0.Add(time.Minute)) || end.Before(t0.Add(50*time.Second)) {
		t.Errorf("retried until +%v; want to stop just before the lease ends at +1m", end.Sub(t0))
	}
	if w := c.Waits(); calls != len(w)+1 || w[len(w)-1] > recordMax*12/10 {
		t.Errorf("%d writes, waits %v; want one more write than waits, each at most %v +20 %%", calls, w, recordMax)
	}
	if n := l.count("q: recording sent failed"); n != 1 {
		t.Errorf("%d failure lines; want 1", n)
	}
}

// TestRecordWritesWithoutTheCallersCancellation: a cancelled caller
// still gets its outcome written once, with a context of its own bounded
// by recordTimeout, and no wait follows a failure.
func TestRecordWritesWithoutTheCallersCancellation(t *testing.T) {
	t.Parallel()
	c, l := newClock(), newLogs()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	calls := 0
	err := recordQueue(c, l).Record(ctx, &Outcome{What: "sent", LeaseEnd: t0.Add(time.Minute),
		Write: func(wctx context.Context) error {
			calls++
			if wctx.Err() != nil {
				t.Errorf("the write's context is done: %v", wctx.Err())
			}
			if dl, ok := wctx.Deadline(); !ok || time.Until(dl) > recordTimeout {
				t.Errorf("the write's deadline is %v (set: %v); want within %v", dl, ok, recordTimeout)
			}
			return errFault
		}})
	if !errors.Is(err, errFault) || calls != 1 {
		t.Errorf("Record = %v after %d writes; want one write, then the wait cut short", err, calls)
	}
}
