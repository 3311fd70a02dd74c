package workqueue

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// script plays a worker's store and work to a queue. Each claim sends its
// limit on asked and returns what the test sends on answer; each work
// sends its item on started and returns when the test releases it (or its
// context ends), with the error set for it.
type script struct {
	asked   chan int
	answer  chan answer
	started chan int

	mu       sync.Mutex
	release  map[int]chan struct{}
	errs     map[int]error
	ended    map[int]error // the context error each work saw when it returned
	inflight int
	most     int // the most works in flight at once
}

type answer struct {
	items []int
	err   error
}

func newScript() *script {
	return &script{asked: make(chan int), answer: make(chan answer), started: make(chan int, 100),
		release: map[int]chan struct{}{}, errs: map[int]error{}, ended: map[int]error{}}
}

func (s *script) claim(ctx context.Context, limit int) ([]int, error) {
	select {
	case s.asked <- limit:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	a := <-s.answer
	return a.items, a.err
}

func (s *script) gate(item int) chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := s.release[item]
	if ch == nil {
		ch = make(chan struct{})
		s.release[item] = ch
	}
	return ch
}

func (s *script) work(ctx context.Context, item int) error {
	s.mu.Lock()
	s.inflight++
	s.most = max(s.most, s.inflight)
	s.mu.Unlock()
	s.started <- item
	select {
	case <-s.gate(item):
	case <-ctx.Done():
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inflight--
	s.ended[item] = ctx.Err()
	return s.errs[item]
}

func (s *script) free(items ...int) {
	for _, i := range items {
		close(s.gate(i))
	}
}

// expectClaim waits for the next claim, checks its limit and answers it.
func (s *script) expectClaim(t *testing.T, limit int, a answer) {
	t.Helper()
	if got := recv(t, s.asked, "a claim"); got != limit {
		t.Fatalf("claim of %d items; want %d", got, limit)
	}
	s.answer <- a
}

// expectStarted waits until the given items started, in any order.
func (s *script) expectStarted(t *testing.T, items ...int) {
	t.Helper()
	var got []int
	for range items {
		got = append(got, recv(t, s.started, "work to start"))
	}
	slices.Sort(got)
	if diff := cmp.Diff(slices.Sorted(slices.Values(items)), got); diff != "" {
		t.Fatalf("started (-want +got):\n%s", diff)
	}
}

// run runs q in the background until the test stops it.
func run(q *Queue[int]) (ctx context.Context, cancel context.CancelFunc, stop chan struct{}, done chan struct{}) {
	ctx, cancel = context.WithCancel(context.Background())
	stop, done = make(chan struct{}), make(chan struct{})
	go func() { defer close(done); q.Run(ctx, stop) }()
	return ctx, cancel, stop, done
}

// TestRunClaimsForFreeWorkers: a queue of 4 workers claims for the free
// workers only once half of them are free, claims again at once after a
// claim that returned items, waits for Notify after one that returned
// none, and on stop lets the work in flight finish with its context
// intact.
func TestRunClaimsForFreeWorkers(t *testing.T) {
	t.Parallel()
	s := newScript()
	q := New(Config[int]{Name: "q", Workers: 4, BatchSize: 8, PollInterval: time.Hour, Claim: s.claim, Work: s.work})
	_, cancel, stop, done := run(q)
	defer cancel()

	s.expectClaim(t, 4, answer{items: []int{1, 2, 3, 4}})
	s.expectStarted(t, 1, 2, 3, 4)
	s.free(1, 2) // half the workers free: a claim for two
	s.expectClaim(t, 2, answer{items: []int{5}})
	s.expectStarted(t, 5)
	s.free(3) // 4 and 5 in flight: two free, and the last claim returned items
	s.expectClaim(t, 2, answer{})
	q.Notify() // nothing due, then woken
	s.expectClaim(t, 2, answer{})

	close(stop)
	s.free(4, 5)
	recv(t, done, "Run to return")
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.most > 4 {
		t.Errorf("%d works in flight at once; want at most 4", s.most)
	}
	for item, err := range s.ended {
		if err != nil {
			t.Errorf("work %d saw its context end (%v); stop must let it finish", item, err)
		}
	}
	if len(s.ended) != 5 {
		t.Errorf("%d works finished; want all 5 before Run returned", len(s.ended))
	}
}

// TestRunRefillAtWorkersWaitsForTheWholeBatch: with RefillAt = Workers a
// claim waits until every worker is free.
func TestRunRefillAtWorkersWaitsForTheWholeBatch(t *testing.T) {
	t.Parallel()
	s := newScript()
	q := New(Config[int]{Name: "q", Workers: 3, RefillAt: 3, PollInterval: time.Hour, Claim: s.claim, Work: s.work})
	_, cancel, stop, done := run(q)
	defer cancel()
	s.expectClaim(t, 3, answer{items: []int{1, 2, 3}})
	s.expectStarted(t, 1, 2, 3)
	s.free(1, 2)
	s.free(3)
	s.expectClaim(t, 3, answer{}) // would be 2 (or 1) if it did not wait for 3
	close(stop)
	recv(t, done, "Run to return")
}

// TestRunCancelAbandonsWork: cancelling the context cancels the work in
// flight, and Run returns once it has returned.
func TestRunCancelAbandonsWork(t *testing.T) {
	t.Parallel()
	s := newScript()
	q := New(Config[int]{Name: "q", Workers: 2, PollInterval: time.Hour, Claim: s.claim, Work: s.work})
	_, cancel, _, done := run(q)
	s.expectClaim(t, 2, answer{items: []int{1, 2}})
	s.expectStarted(t, 1, 2)
	cancel()
	recv(t, done, "Run to return")
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, item := range []int{1, 2} {
		if err := s.ended[item]; !errors.Is(err, context.Canceled) {
			t.Errorf("work %d ended with context error %v; want it cancelled", item, err)
		}
	}
}

// TestRunPolls: with nothing due and nothing waking it, the queue claims
// again after PollInterval.
func TestRunPolls(t *testing.T) {
	t.Parallel()
	s := newScript()
	q := New(Config[int]{Name: "q", PollInterval: time.Millisecond, Claim: s.claim, Work: s.work})
	_, cancel, stop, done := run(q)
	defer cancel()
	s.expectClaim(t, 1, answer{})
	s.expectClaim(t, 1, answer{})
	close(stop)
	recv(t, done, "Run to return")
}

// TestRunBacksOffAfterFailedClaims: a claim that fails hands nothing
// over, even the items it returned; the next claim waits a backoff that
// doubles from claimInitial, logged once per step; a claim that succeeds
// resets it.
func TestRunBacksOffAfterFailedClaims(t *testing.T) {
	t.Parallel()
	s, c, l := newScript(), newClock(), newLogs()
	q := New(Config[int]{Name: "q", Workers: 2, PollInterval: time.Hour, Claim: s.claim, Work: s.work,
		Now: c.Now, Sleep: c.Sleep, Logger: slog.New(l)})
	_, cancel, stop, done := run(q)
	defer cancel()
	for range 8 {
		s.expectClaim(t, 2, answer{items: []int{1, 2}, err: errFault})
	}
	s.expectClaim(t, 2, answer{})
	q.Notify()
	s.expectClaim(t, 2, answer{err: errFault})
	s.expectClaim(t, 2, answer{})
	close(stop)
	recv(t, done, "Run to return")

	if n := len(s.started); n != 0 {
		t.Errorf("%d items of failed claims worked; want none", n)
	}
	w := c.Waits()
	if len(w) != 9 {
		t.Fatalf("%d waits; want one per failed claim (9)", len(w))
	}
	for i, base := range []time.Duration{claimInitial, 2 * claimInitial, 4 * claimInitial, 8 * claimInitial, 16 * claimInitial, 32 * claimInitial, claimMax, claimMax} {
		within(t, "wait", w[i], base)
	}
	within(t, "first wait after a success", w[8], claimInitial)
	if n := l.count("q: claim failed; backing off"); n != 9 {
		t.Errorf("%d back-off lines; want 9", n)
	}
	if n := l.count("q: claims succeed again"); n != 2 {
		t.Errorf("%d recovery lines; want 2", n)
	}
}

// TestRunStopCutsABackoffShort: stop ends the wait after a failed claim.
func TestRunStopCutsABackoffShort(t *testing.T) {
	t.Parallel()
	s, c := newScript(), newClock()
	c.block = true
	q := New(Config[int]{Name: "q", Claim: s.claim, Work: s.work, Now: c.Now, Sleep: c.Sleep})
	_, cancel, stop, done := run(q)
	defer cancel()
	s.expectClaim(t, 1, answer{err: errFault})
	recv(t, c.slept, "the backoff")
	close(stop)
	recv(t, done, "Run to return")
}

// TestRunBatchWorkAndItsErrors: WorkBatch gets each claim whole (up to
// BatchSize items); a work that returns an error makes the queue back off
// before its next claim.
func TestRunBatchWorkAndItsErrors(t *testing.T) {
	t.Parallel()
	c, l := newClock(), newLogs()
	claims := make(chan int)
	batches := make(chan []int, 10)
	due := [][]int{{1, 2, 3}, {4}, nil}
	q := New(Config[int]{Name: "q", BatchSize: 3, PollInterval: time.Hour, Now: c.Now, Sleep: c.Sleep, Logger: slog.New(l),
		Claim: func(_ context.Context, limit int) ([]int, error) {
			claims <- limit
			items := due[0]
			due = due[1:]
			return items, nil
		},
		WorkBatch: func(_ context.Context, items []int) error {
			batches <- items
			if items[0] == 1 {
				return errFault
			}
			return nil
		}})
	_, cancel, stop, done := run(q)
	defer cancel()
	for range 3 {
		if limit := recv(t, claims, "a claim"); limit != 3 {
			t.Errorf("claim of %d; want BatchSize (3)", limit)
		}
	}
	close(stop)
	recv(t, done, "Run to return")
	close(batches)
	var got [][]int
	for b := range batches {
		got = append(got, b)
	}
	if diff := cmp.Diff([][]int{{1, 2, 3}, {4}}, got); diff != "" {
		t.Errorf("batches (-want +got):\n%s", diff)
	}
	if w := c.Waits(); len(w) != 1 {
		t.Errorf("waits %v; want one backoff after the failed work", w)
	} else {
		within(t, "wait after a failed work", w[0], claimInitial)
	}
	if n := l.count("q: work failed; backing off"); n != 1 {
		t.Errorf("%d back-off lines; want 1", n)
	}
}

// TestRunDue: claims BatchSize until a claim returns nothing, works every
// item, and returns the number worked.
func TestRunDue(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	due := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	var limits, worked []int
	q := New(Config[int]{Workers: 3, BatchSize: 4,
		Claim: func(_ context.Context, limit int) ([]int, error) {
			mu.Lock()
			defer mu.Unlock()
			limits = append(limits, limit)
			n := min(limit, len(due))
			items := due[:n]
			due = due[n:]
			return items, nil
		},
		Work: func(_ context.Context, item int) error {
			mu.Lock()
			defer mu.Unlock()
			worked = append(worked, item)
			return nil
		}})
	n, err := q.RunDue(context.Background())
	if n != 10 || err != nil {
		t.Fatalf("RunDue = %d, %v; want 10, nil", n, err)
	}
	if diff := cmp.Diff([]int{4, 4, 4, 4}, limits); diff != "" {
		t.Errorf("claim limits (-want +got):\n%s", diff)
	}
	slices.Sort(worked)
	if diff := cmp.Diff([]int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, worked); diff != "" {
		t.Errorf("worked (-want +got):\n%s", diff)
	}
}

// TestRunDueBoundsConcurrency: no more than Workers works run at once,
// and RunDue waits for all of them.
func TestRunDueBoundsConcurrency(t *testing.T) {
	t.Parallel()
	s := newScript()
	q := New(Config[int]{Workers: 2, BatchSize: 3, Claim: s.claim, Work: s.work})
	type result struct {
		n   int
		err error
	}
	res := make(chan result, 1)
	go func() {
		n, err := q.RunDue(context.Background())
		res <- result{n, err}
	}()
	s.expectClaim(t, 3, answer{items: []int{1, 2, 3}})
	first := []int{recv(t, s.started, "work"), recv(t, s.started, "work")}
	s.free(first...)
	third := recv(t, s.started, "the third work")
	s.free(third)
	s.expectClaim(t, 3, answer{})
	if r := recv(t, res, "RunDue"); r.n != 3 || r.err != nil {
		t.Errorf("RunDue = %d, %v; want 3, nil", r.n, r.err)
	}
	if s.most > 2 {
		t.Errorf("%d works at once; want at most 2", s.most)
	}
}

func TestRunDueErrors(t *testing.T) {
	t.Parallel()
	t.Run("a failed claim hands nothing over", func(t *testing.T) {
		t.Parallel()
		worked := 0
		q := New(Config[int]{Claim: func(context.Context, int) ([]int, error) { return []int{1}, errFault },
			Work: func(context.Context, int) error { worked++; return nil }})
		if n, err := q.RunDue(context.Background()); n != 0 || !errors.Is(err, errFault) || worked != 0 {
			t.Errorf("RunDue = %d, %v with %d worked; want 0, the claim's error, none worked", n, err, worked)
		}
	})
	t.Run("a failed work ends the run after its batch", func(t *testing.T) {
		t.Parallel()
		claims := 0
		q := New(Config[int]{Workers: 2, BatchSize: 2,
			Claim: func(context.Context, int) ([]int, error) { claims++; return []int{1, 2}, nil },
			Work: func(_ context.Context, item int) error {
				if item == 2 {
					return errFault
				}
				return nil
			}})
		if n, err := q.RunDue(context.Background()); n != 2 || !errors.Is(err, errFault) || claims != 1 {
			t.Errorf("RunDue = %d, %v after %d claims; want 2, the work's error, 1 claim", n, err, claims)
		}
	})
	t.Run("a done context claims nothing", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		claims := 0
		q := New(Config[int]{Claim: func(context.Context, int) ([]int, error) { claims++; return nil, nil },
			Work: func(context.Context, int) error { return nil }})
		if n, err := q.RunDue(ctx); n != 0 || !errors.Is(err, context.Canceled) || claims != 0 {
			t.Errorf("RunDue = %d, %v after %d claims; want 0, context.Canceled, no claim", n, err, claims)
		}
	})
}

func TestNewDefaults(t *testing.T) {
	t.Parallel()
	claim := func(context.Context, int) ([]int, error) { return nil, nil }
	work := func(context.Context, int) error { return nil }
	tests := []struct {
		name                            string
		c                               Config[int]
		workers, batch, refill, perWork int
		poll                            time.Duration
	}{
		{"zero", Config[int]{}, 1, 1, 1, 1, time.Second},
		{"workers", Config[int]{Workers: 8}, 8, 8, 4, 1, time.Second},
		{"odd workers", Config[int]{Workers: 3, BatchSize: 10, PollInterval: time.Minute}, 3, 10, 1, 1, time.Minute},
		{"refill above workers", Config[int]{Workers: 4, RefillAt: 9}, 4, 4, 4, 1, time.Second},
		{"batch work", Config[int]{BatchSize: 20, WorkBatch: func(context.Context, []int) error { return nil }}, 1, 20, 1, 20, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := tt.c
			c.Claim, c.Work = claim, work
			q := New(c)
			got := []any{q.c.Workers, q.c.BatchSize, q.c.RefillAt, q.perWork, q.c.PollInterval, q.c.Now != nil, q.c.Sleep != nil, q.c.Logger != nil}
			want := []any{tt.workers, tt.batch, tt.refill, tt.perWork, tt.poll, true, true, true}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("workers, batch, refill, per work, poll, clock, sleep, logger (-want +got):\n%s", diff)
			}
		})
	}
	q := New(Config[int]{Claim: claim, Work: work})
	q.Notify()
	q.Notify() // never blocks
}

// TestRunClaimAhead: with ClaimAhead a queue claims BatchSize items, works
// them Workers at a time, still works those it holds once stopped, and
// claims nothing more; cancelled, it starts none of those it holds.
func TestRunClaimAhead(t *testing.T) {
	t.Parallel()
	s := newScript()
	q := New(Config[int]{Name: "q", Workers: 2, BatchSize: 5, ClaimAhead: true, PollInterval: time.Hour, Claim: s.claim, Work: s.work})
	_, cancel, stop, done := run(q)
	defer cancel()
	s.expectClaim(t, 5, answer{items: []int{1, 2, 3, 4, 5}}) // would be 2 without ClaimAhead
	s.expectStarted(t, 1, 2)
	s.free(1)
	s.expectStarted(t, 3)
	close(stop)
	s.free(2, 3)
	s.expectStarted(t, 4, 5)
	s.free(4, 5)
	recv(t, done, "Run to return")
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.most > 2 {
		t.Errorf("%d works in flight at once; want at most 2", s.most)
	}

	// Cancelled while holding items: those are never started.
	c := newScript()
	q = New(Config[int]{Name: "q", Workers: 1, BatchSize: 3, ClaimAhead: true, PollInterval: time.Hour, Claim: c.claim, Work: c.work})
	_, cancel2, _, done2 := run(q)
	c.expectClaim(t, 3, answer{items: []int{1, 2, 3}})
	c.expectStarted(t, 1)
	cancel2()
	recv(t, done2, "Run to return")
	select {
	case item := <-c.started:
		t.Errorf("item %d started after the cancellation", item)
	default:
	}
}
