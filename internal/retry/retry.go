// Package retry paces the background workers of the library (the
// dispatcher, the webhook sender, the SMS scheduler) when their store
// fails: an exponential backoff (factor 2, +-20 % jitter, capped) after a
// failed claim, and the retry of an outcome write until it succeeds or the
// worker's lease runs out. Both read time from the injected clock and wait
// through an injected sleep, so tests drive them without real waits.
package retry

import (
	"context"
	"time"

	"github.com/cenkalti/backoff/v4"
)

// The pacing of every background worker of the library when its store
// fails: after a failed claim the next one waits ClaimInitial, doubling up
// to ClaimMax; a failed outcome write is retried after RecordInitial,
// doubling up to RecordMax, until it succeeds or the work's lease ends;
// one attempt of an outcome write is bounded by RecordTimeout.
const (
	ClaimInitial  = 250 * time.Millisecond
	ClaimMax      = 10 * time.Second
	RecordInitial = 100 * time.Millisecond
	RecordMax     = 5 * time.Second
	RecordTimeout = 10 * time.Second
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

// Backoff is the exponential backoff of a worker whose store fails. The
// zero value is not usable; use NewBackoff.
type Backoff struct {
	b        *backoff.ExponentialBackOff
	failures int
}

// clockOf adapts a clock function to backoff.Clock.
type clockOf func() time.Time

func (c clockOf) Now() time.Time { return c() }

// NewBackoff returns a backoff whose first wait is about initial (+-20 %)
// and whose waits double up to max.
func NewBackoff(initial, max time.Duration, now func() time.Time) *Backoff {
	b := &backoff.ExponentialBackOff{
		InitialInterval: initial, RandomizationFactor: 0.2, Multiplier: 2,
		MaxInterval: max, MaxElapsedTime: 0, Stop: backoff.Stop, Clock: clockOf(now),
	}
	b.Reset()
	return &Backoff{b: b}
}

// Failed records a failure and returns how long to wait before the next
// attempt.
func (b *Backoff) Failed() time.Duration {
	b.failures++
	return b.b.NextBackOff()
}

// Failures returns the number of failures since the last success.
func (b *Backoff) Failures() int { return b.failures }

// Succeeded records a success and reports how many failures came before
// it (0 when the last attempt succeeded too); the next failure waits the
// initial interval again.
func (b *Backoff) Succeeded() int {
	n := b.failures
	if n > 0 {
		b.failures = 0
		b.b.Reset()
	}
	return n
}

// StopContext returns a context that is done when ctx is done or stop is
// closed: what a worker's waits listen to.
func StopContext(ctx context.Context, stop <-chan struct{}) (context.Context, context.CancelFunc) {
	sctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-stop:
			cancel()
		case <-sctx.Done():
		}
	}()
	return sctx, cancel
}

// Record runs write, an outcome write of work leased until leaseEnd,
// without ctx's cancellation and within RecordTimeout per attempt, and
// retries it (RecordInitial doubling to RecordMax) until it succeeds,
// permanent reports its error as final, or the next attempt would start
// after leaseEnd on the clock now. ctx cancels only the waits between
// attempts. It returns the number of attempts and the last error.
func Record(ctx context.Context, leaseEnd time.Time, now func() time.Time, sleep Sleep,
	write func(context.Context) error, permanent func(error) bool) (int, error) {
	base := context.WithoutCancel(ctx)
	return Until(ctx, leaseEnd, now, sleep, RecordInitial, RecordMax, func(context.Context) error {
		actx, cancel := context.WithTimeout(base, RecordTimeout)
		defer cancel()
		return write(actx)
	}, permanent)
}

// Until calls op until it returns nil, permanent reports its error as one
// that no retry can fix, ctx is done, or the next attempt would start at
// or after deadline on the clock now. Between attempts it waits the
// backoff of initial, doubling up to max. It returns the number of
// attempts and the last error (nil when op succeeded).
func Until(ctx context.Context, deadline time.Time, now func() time.Time, sleep Sleep, initial, max time.Duration,
	op func(context.Context) error, permanent func(error) bool) (int, error) {
	b := NewBackoff(initial, max, now)
	for n := 1; ; n++ {
		err := op(ctx)
		if err == nil || (permanent != nil && permanent(err)) {
			return n, err
		}
		wait := b.Failed()
		if !now().Add(wait).Before(deadline) {
			return n, err
		}
		if serr := sleep(ctx, wait); serr != nil {
			return n, err
		}
	}
}
