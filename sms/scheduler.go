package sms

import (
	"context"
	"errors"
	"fmt"
	"go.opentelemetry.io/otel/attribute"
	"time"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/internal/workqueue"
)

// Start starts the scheduler: a goroutine that hands due messages (immediate
// sends, scheduled messages whose time came, retries, and messages whose
// claimer died) to the gateway, every Options.PollInterval and at once after
// an immediate send. It runs until ctx is done or Close is called. Starting
// a started scheduler is an error.
//
// Delivery is at least once: a message is claimed under a lease (one
// claimer at a time), handed to the gateway, and its outcome recorded. Only a
// process that dies after the gateway accepted a message and before the
// outcome is committed (a window of one store write) leaves it to be
// claimed again when its lease ends, and so handed over twice; the gateway
// gets the same Reference both times.
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
			msgs, err := s.store.SMSClaimDue(ctx, &ClaimParams{Now: now, LeaseUntil: now.Add(s.opts.Lease), Token: messaging.NewID("claim"), Limit: limit})
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
// Options.BatchSize, and returns how many it handed over (accepted or not):
// the scheduler's work done once, for tests with an injected clock or to
// drive the scheduler from elsewhere instead of Start.
func (s *SMS) RunDue(ctx context.Context) (int, error) { return s.queue.RunDue(ctx) }

// deliver hands the messages of one claim to the gateway in one call and
// records each outcome. A failed write of the outcomes is retried until it
// succeeds or the claim's lease (the DueAt of a claimed message) ends:
// until then nobody else hands the messages over again.
func (s *SMS) deliver(ctx context.Context, msgs []*Message) error {
	token, leaseUntil := msgs[0].ClaimToken, msgs[0].DueAt
	gms := make([]*GatewayMessage, len(msgs))
	for i, m := range msgs {
		gms[i] = &GatewayMessage{Reference: m.ID, Number: m.Number, Mobile: m.Mobile, Text: m.Text, Sender: m.Sender}
	}
	gctx, cancel := context.WithTimeout(ctx, s.opts.Lease/2)
	gctx, span := s.tel.start(gctx, "sms.gateway.send")
	if recording(span) {
		span.SetAttributes(attribute.Int("sms.messages", len(gms)))
	}
	results, callErr := s.gw.Send(gctx, gms)
	endSpan(span, callErr)
	cancel()
	if callErr == nil && len(results) != len(msgs) {
		callErr = fmt.Errorf("gateway returned %d results for %d messages", len(results), len(msgs))
	}
	now := s.now()
	cs := make([]*Completion, len(msgs))
	counts := map[string]int{}
	for i, m := range msgs {
		err := callErr
		if err == nil {
			err = results[i].Err
		}
		if err == nil && results[i].MessageID == "" {
			// Never sent without the upstream's id: its reports could not
			// be matched, so the hand-over is retried.
			err = errors.New("the gateway accepted the message without giving its id")
		}
		if s.credit.on() && lowCreditRefusal(err) {
			s.checkCreditSoon()
		}
		c := &Completion{Number: m.Number, Token: token, At: now}
		delay, more := s.retryDelay(m.Attempts, err)
		switch {
		case err == nil:
			c.Status, c.GatewayMessageID, c.NetworkID = StatusSent, results[i].MessageID, results[i].NetworkID
			if c.NetworkID == "" {
				c.NetworkID = m.NetworkID
			}
		case Retryable(err) && more:
			c.Status, c.RetryAt, c.FailureReason = StatusQueued, now.Add(delay), failureReason(err)
		default:
			c.Status, c.FailureReason = StatusFailed, failureReason(err)
		}
		cs[i] = c
		counts[c.Status]++
		s.log.DebugContext(ctx, "sms: handed to gateway", "number", m.Number, "attempt", m.Attempts, "status", c.Status, "reason", c.FailureReason)
	}
	s.log.InfoContext(ctx, "sms: batch handed to gateway", "messages", len(msgs),
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
		switch cs[i].Status {
		case StatusSent:
			s.tel.sent.Add(ctx, 1, a...)
		case StatusQueued:
			s.tel.retries.Add(ctx, 1, a...)
		case StatusFailed:
			s.tel.failed.Add(ctx, 1, a...)
		}
	}
	return nil
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
