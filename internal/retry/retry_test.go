package retry

import (
	"context"
	"errors"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// fake is a clock moved by its sleep.
type fake struct{ now time.Time }

func (f *fake) Now() time.Time { return f.now }
func (f *fake) Sleep(ctx context.Context, d time.Duration) error {
	f.now = f.now.Add(d)
	return ctx.Err()
}

func TestBackoffGrowsToItsCapAndResets(t *testing.T) {
	f := &fake{now: t0}
	b := NewBackoff(time.Second, 8*time.Second, f.Now)
	for i, want := range []time.Duration{1, 2, 4, 8, 8, 8} {
		got := b.Failed()
		w := want * time.Second
		if got < w*8/10 || got > w*12/10 {
			t.Errorf("wait %d = %v; want %v +-20 %%", i, got, w)
		}
	}
	if n := b.Succeeded(); n != 6 {
		t.Errorf("Succeeded after 6 failures = %d", n)
	}
	if got := b.Failed(); got > 1200*time.Millisecond {
		t.Errorf("first wait after a success = %v; want about 1 s again", got)
	}
}

func TestUntilStopsAtSuccessPermanentErrorOrDeadline(t *testing.T) {
	errFault := errors.New("fault")
	errGone := errors.New("gone")
	ctx := context.Background()

	f := &fake{now: t0}
	calls := 0
	n, err := Until(ctx, t0.Add(time.Minute), f.Now, f.Sleep, time.Second, 4*time.Second, func(context.Context) error {
		calls++
		if calls < 4 {
			return errFault
		}
		return nil
	}, nil)
	if n != 4 || err != nil {
		t.Errorf("success on the 4th attempt: Until = %d, %v", n, err)
	}

	f = &fake{now: t0}
	n, err = Until(ctx, t0.Add(time.Minute), f.Now, f.Sleep, time.Second, 4*time.Second, func(context.Context) error { return errGone },
		func(err error) bool { return errors.Is(err, errGone) })
	if n != 1 || !errors.Is(err, errGone) {
		t.Errorf("permanent error: Until = %d, %v; want 1 attempt", n, err)
	}

	f = &fake{now: t0}
	n, err = Until(ctx, t0.Add(time.Minute), f.Now, f.Sleep, time.Second, 4*time.Second, func(context.Context) error { return errFault }, nil)
	if !errors.Is(err, errFault) || !f.now.Before(t0.Add(time.Minute)) || f.now.Before(t0.Add(50*time.Second)) {
		t.Errorf("failing until the deadline: Until = %d, %v, ended at +%v; want to stop just before +1m", n, err, f.now.Sub(t0))
	}

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	f = &fake{now: t0}
	n, _ = Until(cctx, t0.Add(time.Minute), f.Now, f.Sleep, time.Second, 4*time.Second, func(context.Context) error { return errFault }, nil)
	if n != 1 {
		t.Errorf("cancelled context: %d attempts; want 1 (no waiting)", n)
	}
}
