package messaging

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/time/rate"

	"github.com/ujumbe/messaging/internal/defaults"
	"github.com/ujumbe/messaging/internal/workqueue"
)

// DispatchOptions configure the dispatcher that hands queued messages to the
// Provider. Zero fields take the documented defaults.
type DispatchOptions struct {
	// Workers is the number of sends in flight at once. Default 8.
	Workers int
	// BatchSize is the most messages claimed at once. A claim takes up to
	// BatchSize messages even when fewer workers are free: those claimed
	// ahead wait for a worker under their lease, and one whose lease no
	// longer covers SendTimeout when a worker takes it is left to the next
	// claim after the lease. Default 4 x Workers.
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
	defaults.Positive(&d.Workers, 8)
	defaults.Positive(&d.BatchSize, 4*d.Workers)
	defaults.Positive(&d.SendTimeout, 30*time.Second)
	defaults.Positive(&d.Lease, 60*time.Second)
	if d.Lease <= d.SendTimeout {
		d.Lease = d.SendTimeout + 10*time.Second
	}
	defaults.Positive(&d.PollInterval, 200*time.Millisecond)
	defaults.Positive(&d.MaxAttempts, 10)
	defaults.Positive(&d.MaxAge, 24*time.Hour)
	defaults.Positive(&d.InitialBackoff, time.Second)
	defaults.Positive(&d.MaxBackoff, 10*time.Minute)
	if d.PerSenderRate == 0 {
		d.PerSenderRate = 80
	}
	return d
}

// dispatcher claims due queued messages under a lease and hands them to the
// provider with a bounded pool of workers (see package internal/workqueue
// for the loop and the pacing).
//
// Delivery to the provider is at least once: a message is marked sent right
// after the provider accepted it. A failed write of that outcome is retried
// until it succeeds or the message's lease runs out, so a message is handed
// over again only when the process dies between the provider's answer and
// that write, or when the store refuses the write for the whole rest of the
// lease. A claim that fails hands over nothing, and the next claim waits a
// backoff.
type dispatcher struct {
	svc   *Service
	opts  DispatchOptions
	owner string
	queue *workqueue.Queue[*Message]
	// retry is the wait before the next attempt of a message whose send
	// failed with a retryable error.
	retry workqueue.Schedule

	// statuses gathers the status changes of the workers' outcomes into
	// one store write.
	statuses *statusBatch

	mu       sync.Mutex
	limiters map[string]*rate.Limiter
}

// newDispatcher returns the dispatcher of s; sleep (nil: a timer) waits
// after a failed claim and between retries of an outcome write.
func newDispatcher(s *Service, o DispatchOptions, sleep workqueue.Sleep) *dispatcher {
	var b [8]byte
	_, _ = rand.Read(b[:])
	d := &dispatcher{svc: s, opts: o.withDefaults(), owner: "disp_" + hex.EncodeToString(b[:]), limiters: map[string]*rate.Limiter{},
		statuses: &statusBatch{store: s.store}}
	d.retry = workqueue.Exponential(d.opts.InitialBackoff, d.opts.MaxBackoff, 0.2, d.opts.MaxAttempts)
	d.queue = workqueue.New(workqueue.Config[*Message]{
		Name: "dispatcher", Workers: d.opts.Workers, BatchSize: d.opts.BatchSize, PollInterval: d.opts.PollInterval,
		// Claims take BatchSize messages even when fewer workers are free
		// (fewer claims, each a store write); process leaves a message
		// whose lease no longer covers a send.
		ClaimAhead: true,
		Now:        s.now, Sleep: sleep, Logger: s.log,
		// A failed write of a result is logged by process and never
		// paces the claims: the message is claimed again after its lease.
		Work: func(ctx context.Context, m *Message) error { d.process(ctx, m); return nil },
		Claim: func(ctx context.Context, limit int) ([]*Message, error) {
			return s.store.MessageClaim(ctx, &MessageClaimParams{Owner: d.owner, Now: s.now(), Lease: d.opts.Lease, Limit: limit})
		},
	})
	return d
}

// permanent reports whether a failed store write is one that no retry can
// fix: a missing record or a refusal by the rules, not a storage fault.
func permanent(err error) bool {
	var e *Error
	if errors.As(err, &e) {
		return e.Code != CodeInternal && e.Code != CodeServiceUnavailable
	}
	return errors.Is(err, ErrNotFound) || errors.Is(err, ErrConflict) || errors.Is(err, ErrStale)
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

// process hands one claimed message to the provider and records the result.
//
// The message counts on the status batch (its statusHold, see
// statusBatch) from the start of process until its status change joins
// the batch or process ends, except while it waits for the provider or
// its pacing.
func (d *dispatcher) process(ctx context.Context, m *Message) {
	// The hold starts here, not at the claim: a claimed message may wait
	// for a worker that waits for the batch (DispatchDue claims more
	// than it has workers).
	hold := d.statuses.holdOne()
	defer hold.release()
	if l := d.limiter(m.WorkspaceID, m.Channel); l != nil {
		hold.release()
		if err := l.Wait(ctx); err != nil {
			return // cancelled: the lease runs out and the message is claimed again
		}
	}
	if d.svc.now().Add(d.opts.SendTimeout).After(m.DueAt) {
		// What is left of the lease (m.DueAt of a claimed message) would
		// not cover a send: it waited for a worker or for pacing too long.
		// It is not sent now, so that it cannot be sent twice once the
		// lease lets another claim take it; that claim sends it.
		return
	}
	tel := d.svc.tel
	var span trace.Span
	ctx, span = d.startSpan(ctx, m)
	var spanErr error
	defer func() { endSpan(span, spanErr) }()
	sctx, cancel := context.WithTimeout(ctx, d.opts.SendTimeout)
	sctx, pspan := tel.start(sctx, "messaging.provider.send", tel.spanClient)
	if recording(pspan) {
		pspan.SetAttributes(AttrMessageID.String(m.ID), AttrChannel.String(m.Channel))
	}
	started := d.svc.now()
	hold.release()
	rcpt, err := d.svc.provider.Send(sctx, m)
	hold.resume()
	endSpan(pspan, err)
	cancel()
	if ctx.Err() != nil {
		// The dispatcher was killed mid-send: record nothing; the message
		// is claimed again when its lease ends.
		return
	}
	// Results are recorded even while stopping, without the caller's
	// cancellation, and retried until the lease ends (m.DueAt of a claimed
	// message): the lease is what keeps the message from a second send.
	set := func(ctx context.Context, p *MessageStatusParams) (*Message, bool, error) {
		return d.statuses.update(ctx, p, hold)
	}
	record := func(what string, write func(context.Context) error) {
		_ = d.queue.Record(ctx, &workqueue.Outcome{What: what, LeaseEnd: m.DueAt, Write: write, Permanent: permanent, LogArgs: []any{"message_id", m.ID}})
	}
	if err == nil {
		if rcpt == nil || rcpt.ProviderMessageID == "" {
			err = &SendError{Code: "invalid_response", Text: "the provider returned no message id", Retryable: true}
		} else {
			record("sent", func(rctx context.Context) error {
				_, uerr := d.svc.recordStatusVia(rctx, &StatusUpdate{WorkspaceID: m.WorkspaceID, MessageID: m.ID, Status: StatusSent, ProviderMessageID: rcpt.ProviderMessageID}, m, set)
				return uerr
			})
			return
		}
	}
	// Only a sent message's change is worth the batch's wait: the
	// others may do I/O first (the credentials refused, a release).
	hold.release()
	var se *SendError
	if !errors.As(err, &se) {
		se = &SendError{Code: "unreachable", Text: "The channel provider could not be reached", Retryable: true}
		if errors.Is(err, context.DeadlineExceeded) {
			se.Text = "The channel provider did not answer in time"
		}
	}
	spanErr = se
	tel.providerError(ctx, m.Channel, se.Code)
	if se.Credentials {
		d.svc.credentialsRefused(context.WithoutCancel(ctx), m.WorkspaceID, m.Channel, se, started)
	}
	now := d.svc.now()
	if delay, more := d.retry.After(m.Attempts); se.Retryable && more && now.Sub(m.CreatedAt) < d.opts.MaxAge {
		delay = max(delay, se.RetryAfter)
		tel.retries.Add(ctx, 1, tel.channel(m.Channel).add...)
		record("the retry", func(rctx context.Context) error {
			_, rerr := d.svc.store.MessageRelease(rctx, &MessageReleaseParams{
				WorkspaceID: m.WorkspaceID, ID: m.ID, Owner: d.owner, DueAt: now.Add(delay), LastError: FailureReason(se.Code, se.Text),
			})
			return rerr
		})
		return
	}
	record("the failure", func(rctx context.Context) error {
		_, uerr := d.svc.recordStatusVia(rctx, &StatusUpdate{WorkspaceID: m.WorkspaceID, MessageID: m.ID, Status: StatusFailed, ProviderCode: se.Code, ProviderText: se.Text}, m, set)
		return uerr
	})
}

// startSpan starts the span of one dispatch of m, when tracing is on: a
// child of the span that accepted m (its stored trace context), with a
// link to it, so one trace shows the message's way from the request to
// the provider.
func (d *dispatcher) startSpan(ctx context.Context, m *Message) (context.Context, trace.Span) {
	tel := d.svc.tel
	if tel.tracer == nil {
		return ctx, nil
	}
	ctx, opts := continueTrace(ctx, m.TraceParent, []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindConsumer)})
	ctx, span := tel.tracer.Start(ctx, "messaging.dispatch", opts...)
	if span.IsRecording() {
		span.SetAttributes(AttrMessageID.String(m.ID), AttrChannel.String(m.Channel), attribute.Int("messaging.attempt", m.Attempts))
	}
	return ctx, span
}

// DispatchDue does the dispatcher's work once: it claims every message due
// now, hands them to the provider (Workers at a time) and records the
// results before returning the number handled. Use it in tests with an
// injected clock, or to drive dispatch from a scheduler instead of Start.
func (s *Service) DispatchDue(ctx context.Context) (int, error) {
	return runDue(ctx, s.dispatch.queue, "message")
}

// runDue does the work of q once (see DispatchDue), turning the error of
// a failed claim of what (a message, a webhook delivery) into the
// library's errors; a done ctx returns ctx's error.
func runDue[T any](ctx context.Context, q *workqueue.Queue[T], what string) (int, error) {
	n, err := q.RunDue(ctx)
	if err != nil && ctx.Err() == nil {
		return n, wrapStoreError(err, what, "")
	}
	return n, err
}

// wakeDispatcher tells the dispatcher that a message was queued, so that
// it claims without waiting for its next poll.
func (s *Service) wakeDispatcher() { s.dispatch.queue.Notify() }
