package workqueue

import (
	"context"
	"slices"
	"time"
)

// Sleep waits d or until ctx is done, whichever comes first, and returns
// ctx's error in the second case.
type Sleep func(ctx context.Context, d time.Duration) error

// RealSleep is the Sleep of production: a timer.
func RealSleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// An Outcome is the write of the outcome of claimed work, for
// Queue.Record.
type Outcome struct {
	// What names the outcome in the log lines: "<Config.Name>: recording
	// <What> failed".
	What string
	// LeaseEnd is when the lease of the work ends: until then no other
	// claimer does it again, so the write is retried until then.
	LeaseEnd time.Time
	// Write writes the outcome.
	Write func(ctx context.Context) error
	// Permanent reports an error of Write that no retry can fix (a missing
	// record, a refusal by the rules). Nil: every error is retried.
	Permanent func(error) bool
	// LogArgs are added to the log lines (the id of the work).
	LogArgs []any
}

// Record runs o.Write without ctx's cancellation, each attempt within
// 10 s, and retries a failed write (after 0.1 s doubling to 5 s, +-20 %)
// until it succeeds, o.Permanent reports its error as final, or the next
// attempt would start at or after o.LeaseEnd on the queue's clock; ctx
// cancels only the waits between attempts. It logs a failure once, with
// the number of attempts, and a success that needed retries. It returns
// the last error (nil when the write succeeded).
func (q *Queue[T]) Record(ctx context.Context, o *Outcome) error {
	base := context.WithoutCancel(ctx)
	b := Exponential(recordInitial, recordMax, jitter, 0)()
	for n := 1; ; n++ {
		actx, cancel := context.WithTimeout(base, recordTimeout)
		err := o.Write(actx)
		cancel()
		if err == nil {
			if n > 1 {
				q.c.Logger.InfoContext(ctx, q.c.Name+": recording "+o.What+" succeeded after retries", append(slices.Clip(o.LogArgs), "attempts", n)...)
			}
			return nil
		}
		if o.Permanent == nil || !o.Permanent(err) {
			wait := b.NextBackOff()
			if q.c.Now().Add(wait).Before(o.LeaseEnd) && q.c.Sleep(ctx, wait) == nil {
				continue
			}
		}
		q.c.Logger.ErrorContext(ctx, q.c.Name+": recording "+o.What+" failed", append(slices.Clip(o.LogArgs), "attempts", n, "err", err)...)
		return err
	}
}
