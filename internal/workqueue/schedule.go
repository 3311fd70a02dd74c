package workqueue

import (
	"time"

	"github.com/cenkalti/backoff/v4"
)

// A Schedule is the waits between the attempts of one piece of work, as a
// backoff.BackOff of cenkalti/backoff/v4: its n-th NextBackOff is the wait
// after the n-th failed attempt, or backoff.Stop when no attempt may
// follow. Each call returns a fresh BackOff, already reset.
type Schedule func() backoff.BackOff

// Exponential returns the schedule whose first wait is initial and whose
// waits double up to max, each randomised by +-jitter (0.2 means +-20 %,
// 0 none), and which stops after maxAttempts attempts (0: never). It is
// backoff/v4's ExponentialBackOff without an elapsed-time limit, so an
// initial above max is waited once before the waits fall to max.
func Exponential(initial, max time.Duration, jitter float64, maxAttempts int) Schedule {
	return func() backoff.BackOff {
		b := &backoff.ExponentialBackOff{
			InitialInterval: initial, RandomizationFactor: jitter, Multiplier: 2, MaxInterval: max,
			// No elapsed-time limit: the clock is then never consulted.
			MaxElapsedTime: 0, Stop: backoff.Stop, Clock: backoff.SystemClock,
		}
		b.Reset()
		if maxAttempts <= 0 {
			return b
		}
		// The n-th failed attempt of maxAttempts is the last one: at most
		// maxAttempts-1 waits.
		return backoff.WithMaxRetries(b, uint64(maxAttempts-1))
	}
}

// Delays returns the schedule that waits delays[0] after the first failed
// attempt, delays[1] after the second, and so on, and stops after
// len(delays)+1 attempts.
func Delays(delays []time.Duration) Schedule {
	return func() backoff.BackOff { return &delayList{delays: delays} }
}

// delayList is the backoff.BackOff over a fixed list of waits.
type delayList struct {
	delays []time.Duration
	next   int
}

// NextBackOff returns the next delay of the list, then backoff.Stop.
func (l *delayList) NextBackOff() time.Duration {
	if l.next >= len(l.delays) {
		return backoff.Stop
	}
	l.next++
	return l.delays[l.next-1]
}

// Reset starts the list over.
func (l *delayList) Reset() { l.next = 0 }

// After returns the wait after the failure of attempt number attempts
// (counting from 1; 0 counts as 1), and false when the schedule allows no
// further attempt.
func (s Schedule) After(attempts int) (time.Duration, bool) {
	b := s()
	d := b.NextBackOff()
	for i := 1; i < attempts && d != backoff.Stop; i++ {
		d = b.NextBackOff()
	}
	return d, d != backoff.Stop
}

// pacer paces the claims of a queue whose store fails: each failure in a
// row waits the next step of its schedule; a success starts it over.
type pacer struct {
	b        backoff.BackOff
	failures int
}

func newPacer(s Schedule) *pacer { return &pacer{b: s()} }

// failed records a failure and returns how long to wait before the next
// attempt.
func (p *pacer) failed() time.Duration {
	p.failures++
	return p.b.NextBackOff()
}

// succeeded records a success and returns how many failures came right
// before it.
func (p *pacer) succeeded() int {
	n := p.failures
	if n > 0 {
		p.failures = 0
		p.b.Reset()
	}
	return n
}
