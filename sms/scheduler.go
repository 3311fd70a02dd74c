package sms

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ujumbe/messaging/record"

	"go.opentelemetry.io/otel/attribute"

	"github.com/ujumbe/messaging/internal/spans"
	"github.com/ujumbe/messaging/internal/workqueue"
)

// Start starts the scheduler: a goroutine that hands due messages (immediate
// sends, scheduled messages whose time came, retries, and messages whose
// claimer died) to the gateway, every Options.PollInterval and at once after
// an immediate send. It runs until ctx is done or Close is called. Starting
// a started scheduler is an error.
//
// A message is claimed under a lease (one claimer at a time) and the claim
// durably marks it as possibly handed over (Message.UnconfirmedSince); it
// is handed to the gateway with its Number as the upstream's client
// reference, and its outcome recorded: accepted (the upstream's id),
// refused (the upstream's code), or unknown (the call timed out or lost
// its connection after the request was written, the process died, the
// lease ran out). A message whose outcome is unknown is not handed over
// again before Options.ConfirmWindow has passed since the claim that may
// have handed it over; a report of the upstream carrying its reference
// confirms it meanwhile (ApplyUpstreamReport), and without one
// Options.UnconfirmedPolicy decides. A throttling answer of the upstream
// (GatewayError.Throttled) pauses every hand-over for the time it asks.
func (s *SMS) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running {
		return errors.New("sms: scheduler already started")
	}
	runCtx, cancel := context.WithCancel(ctx)
	s.running, s.cancel = true, cancel
	s.stop, s.done = make(chan struct{}), make(chan struct{})
	go func() { defer close(s.done); s.queue.Run(runCtx, s.stop) }()
	return nil
}

// Running reports whether the scheduler started by Start runs: Close was
// not called and its context is not done. Readiness probes use it.
func (s *SMS) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.running {
		return false
	}
	select {
	case <-s.done:
		return false
	default:
		return true
	}
}

// Close stops the scheduler and waits for the batch in flight to be handed
// over and recorded. If ctx ends first, the batch is cancelled (its
// messages are claimed again after their lease) and Close returns ctx's
// error. Closing a scheduler that is not running does nothing.
func (s *SMS) Close(ctx context.Context) error {
	s.mu.Lock()
	if !s.running {
		s.mu.Unlock()
		return nil
	}
	s.running = false
	stop, done, cancel := s.stop, s.done, s.cancel
	s.mu.Unlock()
	close(stop)
	defer cancel()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		cancel()
		<-done
		return ctx.Err()
	}
}

// newQueue returns the work queue of the scheduler: one worker hands each
// claim (up to Options.BatchSize messages) to the gateway in one call.
func (s *SMS) newQueue() *workqueue.Queue[*Message] {
	return workqueue.New(workqueue.Config[*Message]{
		Name: "sms", Workers: 1, BatchSize: s.opts.BatchSize, PollInterval: s.opts.PollInterval,
		Now: s.now, Sleep: s.opts.Sleep, Logger: s.log, WorkBatch: s.deliver,
		Claim: func(ctx context.Context, limit int) ([]*Message, error) {
			if !s.mayHandOver(ctx) {
				return nil, nil // paused below the credit floor: nothing claimed
			}
			now := s.now()
			if s.handover.paused(now) {
				return nil, nil // the upstream throttled the account: nothing claimed
			}
			token := record.NewID("claim")
			s.handover.claimed(token, now)
			msgs, err := s.store.SMSClaimDue(ctx, &ClaimParams{Now: now, LeaseUntil: now.Add(s.opts.Lease), Token: token, Limit: limit,
				RenewMarksBefore: now.Add(-s.opts.ConfirmWindow)})
			if err != nil || len(msgs) == 0 {
				s.handover.take(token)
			}
			if err != nil {
				return nil, fmt.Errorf("claim: %w", err)
			}
			return msgs, nil
		},
	})
}

// wakeScheduler nudges the scheduler loop, if it runs.
func (s *SMS) wakeScheduler() { s.queue.Notify() }

// RunDue hands every message due now to the gateway, in batches of
// Options.BatchSize, and returns how many it claimed (handed over,
// accepted or not, or put back to wait for the confirmation window of an
// earlier hand-over whose outcome is unknown):
// the scheduler's work done once, for tests with an injected clock or to
// drive the scheduler from elsewhere instead of Start.
func (s *SMS) RunDue(ctx context.Context) (int, error) { return s.queue.RunDue(ctx) }

// handoverState is what the scheduler keeps in memory between a claim
// and its hand-over: the time of each claim not delivered yet, and the
// pause the upstream asked for by throttling the service's account.
type handoverState struct {
	mu sync.Mutex
	// claimedAt is the Now of each claim, by token, until it is delivered.
	claimedAt map[string]time.Time
	// pausedUntil: nothing is claimed before it.
	pausedUntil time.Time
}

// claimed remembers that the claim token was made at now.
func (h *handoverState) claimed(token string, now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.claimedAt == nil {
		h.claimedAt = map[string]time.Time{}
	}
	h.claimedAt[token] = now
}

// take returns and forgets the time of the claim token (ok false when it
// is not known).
func (h *handoverState) take(token string) (at time.Time, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	at, ok = h.claimedAt[token]
	delete(h.claimedAt, token)
	return at, ok
}

// pause holds every hand-over back until until (a later pause wins).
func (h *handoverState) pause(until time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if until.After(h.pausedUntil) {
		h.pausedUntil = until
	}
}

// paused reports whether hand-overs are paused at now.
func (h *handoverState) paused(now time.Time) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return now.Before(h.pausedUntil)
}

// deliver hands the messages of one claim to the gateway in one call and
// records each outcome. A failed write of the outcomes is retried until it
// succeeds or the claim's lease (the DueAt of a claimed message) ends:
// until then nobody else hands the messages over again.
//
// A message an earlier claim marked as possibly handed over (its
// UnconfirmedSince before this claim) is not handed over while its
// confirmation window runs: it is put back, its mark kept, until the
// window's end. When the window ended (the claim renewed the mark),
// Options.UnconfirmedPolicy decides: resend it, or fail it. A hand-over
// whose outcome is unknown keeps the mark the claim set and waits for the
// window likewise.
func (s *SMS) deliver(ctx context.Context, msgs []*Message) error {
	token, leaseUntil := msgs[0].ClaimToken, msgs[0].DueAt
	window := s.opts.ConfirmWindow
	claimedAt, ok := s.handover.take(token)
	if !ok {
		// Not claimed by this scheduler's Claim: take the earliest time
		// the claim can have been made, so that no window is cut short.
		claimedAt = leaseUntil.Add(-s.opts.Lease)
	}
	now := s.now()
	cs := make([]*Completion, len(msgs))
	var send []int
	for i, m := range msgs {
		c := &Completion{Number: m.Number, Token: token, At: now}
		cs[i] = c
		prev := m.UnconfirmedSince
		switch {
		case prev == nil:
			send = append(send, i)
		case prev.After(claimedAt.Add(-window)):
			// The window of an earlier hand-over runs: the claim kept
			// its mark, and hands nothing over (its attempt is taken
			// back).
			c.Status, c.RetryAt, c.Unconfirmed, c.Untried = StatusQueued, prev.Add(window), true, true
			c.FailureReason = "hand-over outcome unknown: waiting for the upstream's report"
			s.log.InfoContext(ctx, "sms: not handed over again: an earlier hand-over's outcome is unknown", "number", m.Number,
				"unconfirmed_since", *prev, "until", c.RetryAt)
		case s.opts.UnconfirmedPolicy == UnconfirmedFail || m.Attempts > s.opts.MaxAttempts:
			c.Status, c.FailureReason = StatusFailed, ReasonUnconfirmed
			s.log.WarnContext(ctx, "sms: failed: its hand-over was never confirmed", "number", m.Number, "unconfirmed_since", *prev)
		default:
			s.log.WarnContext(ctx, "sms: handed over once more: its earlier hand-over was never confirmed", "number", m.Number, "unconfirmed_since", *prev)
			send = append(send, i)
		}
	}
	if len(send) > 0 {
		s.handOver(ctx, msgs, send, cs, claimedAt.Add(window))
	}
	counts := map[string]int{}
	for _, c := range cs {
		counts[c.Status]++
	}
	s.log.InfoContext(ctx, "sms: batch handed to gateway", "messages", len(msgs), "handed_over", len(send),
		"sent", counts[StatusSent], "retry", counts[StatusQueued], "failed", counts[StatusFailed])
	var errs []error
	err := s.queue.Record(ctx, &workqueue.Outcome{What: "outcomes", LeaseEnd: leaseUntil, LogArgs: []any{"messages", len(cs)},
		Write: func(cctx context.Context) error {
			var err error
			errs, err = s.store.SMSComplete(cctx, cs)
			return err
		}})
	if err != nil {
		return fmt.Errorf("complete: %w", err)
	}
	for i, e := range errs {
		if e != nil {
			s.log.WarnContext(ctx, "sms: outcome not recorded: the claim was lost", "number", cs[i].Number, "err", e.Error())
			continue
		}
		a := s.tel.account(msgs[i].PartnerID)
		switch {
		case cs[i].Status == StatusSent:
			s.tel.sent.Add(ctx, 1, a...)
		case cs[i].Status == StatusQueued && cs[i].Unconfirmed:
		case cs[i].Status == StatusQueued:
			s.tel.retries.Add(ctx, 1, a...)
		case cs[i].Status == StatusFailed:
			s.tel.failed.Add(ctx, 1, a...)
		}
	}
	return nil
}

// handOver hands the messages msgs[send[...]] to the gateway in one call
// and sets their completions in cs. windowEnd is the end of the
// confirmation window of this claim's mark: a message whose outcome is
// unknown is put back until then, its mark kept.
func (s *SMS) handOver(ctx context.Context, msgs []*Message, send []int, cs []*Completion, windowEnd time.Time) {
	gms := make([]*GatewayMessage, len(send))
	for j, i := range send {
		m := msgs[i]
		gms[j] = &GatewayMessage{Reference: m.ID, Number: m.Number, Mobile: m.Mobile, Text: m.Text, Sender: m.Sender}
	}
	gctx, cancel := context.WithTimeout(ctx, s.opts.Lease/2)
	gctx, span := s.tel.start(gctx, "sms.gateway.send")
	if spans.Recording(span) {
		span.SetAttributes(attribute.Int("sms.messages", len(gms)))
	}
	results, callErr := s.gw.Send(gctx, gms)
	spans.End(span, callErr)
	cancel()
	if callErr == nil && len(results) != len(gms) {
		callErr = fmt.Errorf("%w: the gateway returned %d results for %d messages", ErrUnknownOutcome, len(results), len(gms))
	}
	now := s.now()
	for j, i := range send {
		m, c := msgs[i], cs[i]
		c.At = now
		err := callErr
		if err == nil {
			err = results[j].Err
		}
		if err == nil && results[j].MessageID == "" {
			// Never sent without the upstream's id, and never handed over
			// again before the window: it may have been accepted.
			err = fmt.Errorf("%w: the gateway accepted the message without giving its id", ErrUnknownOutcome)
		}
		if s.credit.on() && lowCreditRefusal(err) {
			s.checkCreditSoon()
		}
		var ge *GatewayError
		throttled := errors.As(err, &ge) && ge.Throttled
		var pauseEnd time.Time
		if throttled {
			wait := ge.RetryAfter
			if wait <= 0 {
				wait = s.opts.RetryBackoff
			}
			pauseEnd = now.Add(wait)
			s.handover.pause(pauseEnd)
		}
		delay, more := s.retryDelay(m.Attempts, err)
		switch {
		case err == nil:
			c.Status, c.GatewayMessageID, c.NetworkID = StatusSent, results[j].MessageID, results[j].NetworkID
			if c.NetworkID == "" {
				c.NetworkID = m.NetworkID
			}
		case UnknownOutcome(err):
			c.Status, c.RetryAt, c.Unconfirmed = StatusQueued, windowEnd, true
			c.FailureReason = "hand-over outcome unknown: " + failureReason(err)
			s.tel.unconfirmed.Add(ctx, 1, s.tel.account(m.PartnerID)...)
		case throttled && more:
			// The whole hand-over pauses: the message goes out when the
			// pause ends, not on a backoff of its own.
			c.Status, c.RetryAt, c.FailureReason = StatusQueued, pauseEnd, failureReason(err)
		case Retryable(err) && more:
			c.Status, c.RetryAt, c.FailureReason = StatusQueued, now.Add(delay), failureReason(err)
		default:
			c.Status, c.FailureReason = StatusFailed, failureReason(err)
		}
		s.log.DebugContext(ctx, "sms: handed to gateway", "number", m.Number, "attempt", m.Attempts, "status", c.Status, "reason", c.FailureReason)
	}
}

// retryDelay returns the wait before the next attempt after attempt
// number attempts failed with err, and false when no attempt may follow
// (Options.MaxAttempts): RetryBackoff doubled per attempt, without jitter,
// capped at MaxRetryBackoff, and at least what the gateway asked for.
func (s *SMS) retryDelay(attempts int, err error) (time.Duration, bool) {
	d, more := workqueue.Exponential(min(s.opts.RetryBackoff, MaxRetryBackoff), MaxRetryBackoff, 0, s.opts.MaxAttempts).After(attempts)
	var ge *GatewayError
	if errors.As(err, &ge) {
		d = max(d, ge.RetryAfter)
	}
	return d, more
}

func failureReason(err error) string {
	var ge *GatewayError
	if errors.As(err, &ge) {
		return fmt.Sprintf("[%d] %s", ge.Code, ge.Description)
	}
	return err.Error()
}
