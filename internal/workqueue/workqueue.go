// Package workqueue is the one model of the library's background workers
// (the message dispatcher, the webhook sender, the SMS scheduler). A worker
// describes itself in a Config: how it claims due items under a lease from
// its store, and how it works one item (or one claimed batch) and records
// the outcome. A Queue then runs it: in the background (Run), claiming in
// batches for a bounded pool of workers, woken by Notify or a poll, backing
// off after a failed claim; or once until nothing is due (RunDue). Record
// retries the write of an outcome until the lease of the work ends, and a
// Schedule, computed with cenkalti/backoff/v4, says how long failed work
// waits before its next attempt.
//
// The claim semantics (a lease owner, a claim token, an order per
// endpoint) belong to each worker's store; the queue only calls Claim.
// Time is read from Config.Now and waited through Config.Sleep, so tests
// drive a queue without real waits.
package workqueue

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/ujumbe/messaging/internal/defaults"
)

// The pacing of a queue whose store fails: after a failed claim (or a
// Work that returned an error) the next claim waits claimInitial, doubling
// up to claimMax with each failure in a row; a failed outcome write is
// retried after recordInitial, doubling up to recordMax, until it succeeds
// or the lease of the work ends; one attempt of an outcome write is
// bounded by recordTimeout. Every wait is randomised by +-jitter.
const (
	claimInitial  = 250 * time.Millisecond
	claimMax      = 10 * time.Second
	recordInitial = 100 * time.Millisecond
	recordMax     = 5 * time.Second
	recordTimeout = 10 * time.Second
	jitter        = 0.2
)

// Config describes one kind of background work to a Queue. Zero fields
// take the documented defaults; Claim and one of Work and WorkBatch are
// required.
type Config[T any] struct {
	// Name starts the queue's log messages: "<Name>: claim failed; backing
	// off".
	Name string
	// Claim leases at most limit items due now. A claim that returns an
	// error hands nothing over, whatever items it returned.
	Claim func(ctx context.Context, limit int) ([]T, error)
	// Work does one claimed item and records its outcome. An error means
	// the outcome could not be recorded: the queue then waits a backoff
	// before its next claim, as after a failed claim.
	Work func(ctx context.Context, item T) error
	// WorkBatch, when set, replaces Work: it gets each claim whole (at
	// most BatchSize items), which takes one worker.
	WorkBatch func(ctx context.Context, items []T) error
	// Workers is the number of Work (or WorkBatch) calls in flight at
	// once. Default 1.
	Workers int
	// BatchSize is the most items claimed at once. Default Workers.
	BatchSize int
	// RefillAt is how many workers must be free before Run claims again
	// while others still work: few claims (each a store write) rather than
	// one per finished item. Default half of Workers, at least 1; Workers
	// makes every claim wait until the previous batch is done.
	RefillAt int
	// ClaimAhead makes Run claim BatchSize items whenever it claims, not
	// only as many as the free workers take: the items no worker is free
	// for wait in Run, under their lease, until one is (fewer claims, each
	// a store write, for more waiting). Once stop is closed the items
	// claimed are still worked; once ctx is done those not started are
	// left to their lease. Work must check that an item's lease still
	// covers it.
	ClaimAhead bool
	// PollInterval is how often Run claims when nothing woke it. Default
	// 1 s.
	PollInterval time.Duration
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// Sleep waits after a failure and between retries of an outcome write.
	// Default RealSleep.
	Sleep Sleep
	// Logger receives the queue's logs. Default: discard.
	Logger *slog.Logger
}

// withDefaults returns c with the defaults of its zero fields.
func (c Config[T]) withDefaults() Config[T] {
	c.Workers = max(1, c.Workers)
	defaults.Positive(&c.BatchSize, c.Workers)
	defaults.Positive(&c.RefillAt, max(1, c.Workers/2))
	c.RefillAt = min(c.RefillAt, c.Workers)
	defaults.Positive(&c.PollInterval, time.Second)
	c.Now, c.Logger = defaults.Clock(c.Now), defaults.Logger(c.Logger)
	if c.Sleep == nil {
		c.Sleep = RealSleep
	}
	return c
}

// Queue runs the work a Config describes. Run and RunDue may run at the
// same time (keeping their claims apart is the store's part).
type Queue[T any] struct {
	c       Config[T] // with its defaults
	work    func(context.Context, []T) error
	perWork int // the most items one call of work gets
	wake    chan struct{}
}

// New returns the Queue of c.
func New[T any](c Config[T]) *Queue[T] {
	q := &Queue[T]{c: c.withDefaults(), wake: make(chan struct{}, 1)}
	q.work, q.perWork = func(ctx context.Context, items []T) error { return c.Work(ctx, items[0]) }, 1
	if c.WorkBatch != nil {
		q.work, q.perWork = c.WorkBatch, q.c.BatchSize
	}
	return q
}

// Notify makes Run claim at once instead of at its next poll. It never
// blocks.
func (q *Queue[T]) Notify() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// Run claims and works until stop is closed, then lets the work in flight
// finish, or until ctx is done, which cancels the work in flight (its
// lease runs out and another claim takes it). It returns when no work is
// in flight.
//
// It claims when at least RefillAt workers are free (or all are), at most
// as many items as the free workers take and BatchSize (BatchSize with
// ClaimAhead, holding what no worker is free for); after a claim
// that returned items it claims again, otherwise it waits for Notify or
// PollInterval. After a failed claim, or a Work that returned an error, it
// waits a backoff (0.25 s doubling to 10 s, +-20 %, through Sleep, cut
// short by stop or ctx) and logs one line; a claim that succeeds starts the
// backoff over.
func (q *Queue[T]) Run(ctx context.Context, stop <-chan struct{}) {
	sctx, cancel := UntilStopped(ctx, stop) // what the waits listen to
	defer cancel()
	w := &workers{
		sem:    make(chan struct{}, q.c.Workers), // a token per work in flight
		freed:  make(chan struct{}, 1),
		failed: make(chan error, 1),
	}
	defer w.wg.Wait()
	poll := time.NewTimer(q.c.PollInterval)
	defer poll.Stop()
	pace := newPacer(Exponential(claimInitial, claimMax, jitter, 0))
	backOff := func(what string, err error) bool {
		wait := pace.failed()
		q.c.Logger.ErrorContext(ctx, q.c.Name+": "+what+" failed; backing off", "err", err, "retry_in", wait, "failures", pace.failures)
		return q.c.Sleep(sctx, wait) == nil
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-stop:
			return
		case err := <-w.failed:
			if !backOff("work", err) {
				return
			}
			continue
		default:
		}
		// Claim when at least RefillAt workers are free (or all are idle),
		// so that claims come in batches: each claim is a store write.
		free := q.c.Workers - len(w.sem)
		if free < q.c.RefillAt && len(w.sem) > 0 {
			select {
			case <-w.freed:
				continue
			case <-ctx.Done():
				return
			case <-stop:
				return
			}
		}
		limit := min(free*q.perWork, q.c.BatchSize)
		if q.c.ClaimAhead {
			limit = q.c.BatchSize
		}
		items, err := q.c.Claim(ctx, limit)
		if err != nil {
			if ctx.Err() != nil || !backOff("claim", err) {
				return
			}
			continue
		}
		if n := pace.succeeded(); n > 0 {
			q.c.Logger.InfoContext(ctx, q.c.Name+": claims succeed again", "failures", n)
		}
		if !q.start(ctx, w, items) {
			return // what was not started is left to its lease
		}
		if len(items) == 0 && !q.idle(ctx, stop, poll) {
			return
		}
	}
}

// workers is the pool of a Run's work in flight.
type workers struct {
	wg     sync.WaitGroup
	sem    chan struct{} // a token per work in flight
	freed  chan struct{} // a work finished
	failed chan error    // a work returned an error
}

// start works items, a call of work per chunk, each as a worker of w is
// free (at once, unless claimed ahead); false when ctx is done before
// every chunk started.
func (q *Queue[T]) start(ctx context.Context, w *workers, items []T) bool {
	for chunk := range slices.Chunk(items, q.perWork) {
		select {
		case w.sem <- struct{}{}:
		case <-ctx.Done():
			return false
		}
		w.wg.Go(func() {
			if err := q.work(ctx, chunk); err != nil {
				select {
				case w.failed <- err:
				default:
				}
			}
			<-w.sem
			select {
			case w.freed <- struct{}{}:
			default:
			}
		})
	}
	return true
}

// idle waits for Notify or the next poll; false when ctx is done or stop
// is closed first.
func (q *Queue[T]) idle(ctx context.Context, stop <-chan struct{}, poll *time.Timer) bool {
	poll.Reset(q.c.PollInterval)
	select {
	case <-ctx.Done():
		return false
	case <-stop:
		return false
	case <-q.wake:
	case <-poll.C:
	}
	poll.Stop()
	return true
}

// RunDue does the work once: it claims BatchSize items due now, works
// them (Workers at a time) and waits for them, until a claim returns
// nothing. It returns the number of items worked and the first error of a
// claim or a work, or ctx's error once ctx is done.
func (q *Queue[T]) RunDue(ctx context.Context) (int, error) {
	total := 0
	for {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		items, err := q.c.Claim(ctx, q.c.BatchSize)
		if err != nil || len(items) == 0 {
			return total, err
		}
		sem := make(chan struct{}, q.c.Workers)
		errs := make(chan error, len(items))
		var wg sync.WaitGroup
		for chunk := range slices.Chunk(items, q.perWork) {
			sem <- struct{}{}
			wg.Go(func() { errs <- q.work(ctx, chunk); <-sem })
		}
		wg.Wait()
		close(errs)
		total += len(items)
		for err := range errs {
			if err != nil {
				return total, err
			}
		}
	}
}

// UntilStopped returns a context that is done when ctx is done or stop is
// closed, whichever comes first; cancel releases it.
func UntilStopped(ctx context.Context, stop <-chan struct{}) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}
