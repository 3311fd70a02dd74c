package messaging

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v4"
	"golang.org/x/time/rate"

	"github.com/ujumbe/messaging/internal/retry"
)

// DispatchOptions configure the dispatcher that hands queued messages to the
// Provider. Zero fields take the documented defaults.
type DispatchOptions struct {
	// Workers is the number of sends in flight at once. Default 8.
	Workers int
	// BatchSize is the most messages claimed at once. Default 2 x Workers.
	BatchSize int
	// Lease is how long a claimed message belongs to this dispatcher. A
	// message whose lease ran out (the process died mid-send) is claimed
	// again. Default 60 s; it must exceed SendTimeout.
	Lease time.Duration
	// SendTimeout bounds one Provider.Send. Default 30 s.
	SendTimeout time.Duration
	// PollInterval is how often the store is polled for due messages when
	// nothing woke the dispatcher. Default 200 ms.
	PollInterval time.Duration
	// MaxAttempts is the most hand-overs to the provider before a message
	// with retryable errors fails. Default 10.
	MaxAttempts int
	// MaxAge is how long after acceptance a message may still be retried.
	// Default 24 h.
	MaxAge time.Duration
	// InitialBackoff and MaxBackoff shape the exponential backoff (factor
	// 2, +-20 % jitter) between retries. Defaults 1 s and 10 min.
	InitialBackoff time.Duration
	MaxBackoff     time.Duration
	// PerSenderRate is the most messages per second handed to the provider
	// for one sender (a workspace's connected channel), in real time.
	// Default 80, WhatsApp's default throughput per phone number; negative
	// means unlimited.
	PerSenderRate float64
}

func (o *DispatchOptions) withDefaults() DispatchOptions {
	d := *o
	if d.Workers <= 0 {
		d.Workers = 8
	}
	if d.BatchSize <= 0 {
		d.BatchSize = 2 * d.Workers
	}
	if d.SendTimeout <= 0 {
		d.SendTimeout = 30 * time.Second
	}
	if d.Lease <= 0 {
		d.Lease = 60 * time.Second
	}
	if d.Lease <= d.SendTimeout {
		d.Lease = d.SendTimeout + 10*time.Second
	}
	if d.PollInterval <= 0 {
		d.PollInterval = 200 * time.Millisecond
	}
	if d.MaxAttempts <= 0 {
		d.MaxAttempts = 10
	}
	if d.MaxAge <= 0 {
		d.MaxAge = 24 * time.Hour
	}
	if d.InitialBackoff <= 0 {
		d.InitialBackoff = time.Second
	}
	if d.MaxBackoff <= 0 {
		d.MaxBackoff = 10 * time.Minute
	}
	if d.PerSenderRate == 0 {
		d.PerSenderRate = 80
	}
	return d
}

// dispatcher claims due queued messages under a lease and hands them to the
// provider with a bounded pool of workers.
//
// Delivery to the provider is at least once: a message is marked sent right
// after the provider accepted it. A failed write of that outcome is retried
// (see package internal/retry for the pacing) until it succeeds or the message's lease runs out, so
// a message is handed over again only when the process dies between the
// provider's answer and that write, or when the store refuses the write
// for the whole rest of the lease. A claim that fails hands over nothing,
// and the next claim waits a backoff.
type dispatcher struct {
	svc   *Service
	opts  DispatchOptions
	owner string
	wake  chan struct{}
	// sleep waits between claims after a failure and between retries of an
	// outcome write; tests replace it to move an injected clock instead.
	sleep retry.Sleep

	mu       sync.Mutex
	limiters map[string]*rate.Limiter
}

func newDispatcher(s *Service, o DispatchOptions) *dispatcher {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return &dispatcher{svc: s, opts: o.withDefaults(), owner: "disp_" + hex.EncodeToString(b[:]),
		wake: make(chan struct{}, 1), limiters: map[string]*rate.Limiter{}, sleep: retry.RealSleep}
}

// retryable reports whether a failed store write may succeed when tried
// again: a storage fault, not a missing record or a refusal by the rules.
func retryable(err error) bool {
	var e *Error
	if errors.As(err, &e) {
		return e.Code == CodeInternal || e.Code == CodeServiceUnavailable
	}
	return !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrConflict) && !errors.Is(err, ErrStale)
}

// recordOutcome runs write (an outcome write of work leased until
// leaseEnd) without the caller's cancellation, retrying a storage fault
// until it succeeds or the lease ends; ctx cancels only the waits between
// attempts. It logs a failure once, with the number of attempts.
func recordOutcome(ctx context.Context, s *Service, sleep retry.Sleep, leaseEnd time.Time, what string, write func(context.Context) error, logArgs ...any) error {
	n, err := retry.Record(ctx, leaseEnd, s.now, sleep, write, func(err error) bool { return !retryable(err) })
	switch {
	case err != nil:
		s.log.Error(what+" failed", append(logArgs, "attempts", n, "err", err)...)
	case n > 1:
		s.log.Info(what+" succeeded after retries", append(logArgs, "attempts", n)...)
	}
	return err
}

// notify wakes the dispatcher loop without blocking.
func (d *dispatcher) notify() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// run claims and sends until stop is closed (then it lets in-flight sends
// finish) or ctx is cancelled (then in-flight sends are cancelled too).
func (d *dispatcher) run(ctx context.Context, stop <-chan struct{}) {
	sem := make(chan struct{}, d.opts.Workers)
	freed := make(chan struct{}, 1) // a worker finished
	var wg sync.WaitGroup
	defer wg.Wait()
	timer := time.NewTimer(0)
	defer timer.Stop()
	sctx, cancel := retry.StopContext(ctx, stop)
	defer cancel()
	pace := retry.NewBackoff(retry.ClaimInitial, retry.ClaimMax, d.svc.now)
	for {
		select {
		case <-ctx.Done():
			return
		case <-stop:
			return
		default:
		}
		// Claim when at least half of the workers are free (or all are
		// idle), so that claims come in batches: each claim is a store
		// write, and one per freed worker would cost a commit per message.
		free := d.opts.Workers - len(sem)
		if free < max(1, d.opts.Workers/2) && len(sem) > 0 {
			select {
			case <-freed:
				continue
			case <-ctx.Done():
				return
			case <-stop:
				return
			}
		}
		msgs, err := d.svc.store.MessageClaim(ctx, &MessageClaimParams{
			Owner: d.owner, Now: d.svc.now(), Lease: d.opts.Lease, Limit: min(free, d.opts.BatchSize),
		})
		if err != nil {
			// A failed claim hands over nothing, whatever it returned.
			if ctx.Err() != nil {
				return
			}
			wait := pace.Failed()
			d.svc.log.Error("dispatcher: claim failed; backing off", "err", err, "retry_in", wait, "failed_claims", pace.Failures())
			if d.sleep(sctx, wait) != nil {
				return
			}
			continue
		}
		if n := pace.Succeeded(); n > 0 {
			d.svc.log.Info("dispatcher: claims succeed again", "failed_claims", n)
		}
		for _, m := range msgs {
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer func() {
					<-sem
					select {
					case freed <- struct{}{}:
					default:
					}
					wg.Done()
				}()
				d.process(ctx, m)
			}()
		}
		if len(msgs) > 0 {
			continue
		}
		timer.Reset(d.opts.PollInterval)
		select {
		case <-ctx.Done():
			return
		case <-stop:
			return
		case <-d.wake:
		case <-timer.C:
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
	}
}

// limiter returns the pacing limiter of a sender, or nil when unlimited.
func (d *dispatcher) limiter(ws, channel string) *rate.Limiter {
	if d.opts.PerSenderRate < 0 {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	k := ws + "\x00" + channel
	l := d.limiters[k]
	if l == nil {
		l = rate.NewLimiter(rate.Limit(d.opts.PerSenderRate), max(1, int(d.opts.PerSenderRate)))
		d.limiters[k] = l
	}
	return l
}

// backoffDelay returns the wait before attempt n+1 after n failed attempts.
func (d *dispatcher) backoffDelay(n int) time.Duration {
	b := &backoff.ExponentialBackOff{
		InitialInterval: d.opts.InitialBackoff, RandomizationFactor: 0.2, Multiplier: 2,
		MaxInterval: d.opts.MaxBackoff, MaxElapsedTime: 0, Stop: backoff.Stop, Clock: backoff.SystemClock,
	}
	b.Reset()
	delay := b.NextBackOff()
	for i := 1; i < n; i++ {
		delay = b.NextBackOff()
	}
	return delay
}

// process hands one claimed message to the provider and records the result.
func (d *dispatcher) process(ctx context.Context, m *Message) {
	if l := d.limiter(m.WorkspaceID, m.Channel); l != nil {
		if err := l.Wait(ctx); err != nil {
			return // cancelled: the lease runs out and the message is claimed again
		}
	}
	sctx, cancel := context.WithTimeout(ctx, d.opts.SendTimeout)
	rcpt, err := d.svc.provider.Send(sctx, m)
	cancel()
	if ctx.Err() != nil {
		// The dispatcher was killed mid-send: record nothing; the message
		// is claimed again when its lease ends.
		return
	}
	// Results are recorded even while stopping, without the caller's
	// cancellation, and retried until the lease ends (m.DueAt of a claimed
	// message): the lease is what keeps the message from a second send.
	record := func(what string, write func(context.Context) error) {
		_ = recordOutcome(ctx, d.svc, d.sleep, m.DueAt, "dispatcher: recording "+what, write, "message_id", m.ID)
	}
	if err == nil {
		if rcpt == nil || rcpt.ProviderMessageID == "" {
			err = &SendError{Code: "invalid_response", Text: "the provider returned no message id", Retryable: true}
		} else {
			record("sent", func(rctx context.Context) error {
				_, uerr := d.svc.recordStatus(rctx, &StatusUpdate{WorkspaceID: m.WorkspaceID, MessageID: m.ID, Status: StatusSent, ProviderMessageID: rcpt.ProviderMessageID}, m)
				return uerr
			})
			return
		}
	}
	var se *SendError
	if !errors.As(err, &se) {
		se = &SendError{Code: "unreachable", Text: "The channel provider could not be reached", Retryable: true}
		if errors.Is(err, context.DeadlineExceeded) {
			se.Text = "The channel provider did not answer in time"
		}
	}
	now := d.svc.now()
	if se.Retryable && m.Attempts < d.opts.MaxAttempts && now.Sub(m.CreatedAt) < d.opts.MaxAge {
		delay := max(d.backoffDelay(m.Attempts), se.RetryAfter)
		record("the retry", func(rctx context.Context) error {
			_, rerr := d.svc.store.MessageRelease(rctx, &MessageReleaseParams{
				WorkspaceID: m.WorkspaceID, ID: m.ID, Owner: d.owner, DueAt: now.Add(delay), LastError: FailureReason(se.Code, se.Text),
			})
			return rerr
		})
		return
	}
	record("the failure", func(rctx context.Context) error {
		_, uerr := d.svc.recordStatus(rctx, &StatusUpdate{WorkspaceID: m.WorkspaceID, MessageID: m.ID, Status: StatusFailed, ProviderCode: se.Code, ProviderText: se.Text}, m)
		return uerr
	})
}

// DispatchDue does the dispatcher's work once: it claims every message due
// now, hands them to the provider (Workers at a time) and records the
// results before returning the number handled. Use it in tests with an
// injected clock, or to drive dispatch from a scheduler instead of Start.
func (s *Service) DispatchDue(ctx context.Context) (int, error) {
	d := s.dispatch
	total := 0
	for {
		msgs, err := s.store.MessageClaim(ctx, &MessageClaimParams{Owner: d.owner, Now: s.now(), Lease: d.opts.Lease, Limit: d.opts.BatchSize})
		if err != nil {
			return total, wrapStoreError(err, "message", "")
		}
		if len(msgs) == 0 {
			return total, nil
		}
		sem := make(chan struct{}, d.opts.Workers)
		var wg sync.WaitGroup
		for _, m := range msgs {
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer func() { <-sem; wg.Done() }()
				d.process(ctx, m)
			}()
		}
		wg.Wait()
		total += len(msgs)
		if err := ctx.Err(); err != nil {
			return total, err
		}
	}
}

// wakeDispatcher tells the dispatcher that a message was queued, so that
// it claims without waiting for its next poll.
func (s *Service) wakeDispatcher() { s.dispatch.notify() }
