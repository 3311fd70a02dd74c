package sms

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/internal/retry"
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
	go s.loop(runCtx, s.stop, s.done)
	return nil
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

func (s *SMS) loop(ctx context.Context, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTimer(0)
	defer t.Stop()
	sctx, cancel := retry.StopContext(ctx, stop)
	defer cancel()
	pace := retry.NewBackoff(retry.ClaimInitial, retry.ClaimMax, s.now)
	for {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-s.wake:
		case <-t.C:
		}
		_, err := s.runDue(ctx, stop)
		if err != nil && ctx.Err() == nil {
			// A failed claim or outcome write: wait a growing pause (not
			// cut short by new sends) before trying again.
			wait := pace.Failed()
			s.log.ErrorContext(ctx, "sms: scheduler failed; backing off", "err", err.Error(), "retry_in", wait, "failures", pace.Failures())
			if s.sleep(sctx, wait) != nil {
				return
			}
			t.Reset(0)
			continue
		}
		if n := pace.Succeeded(); n > 0 {
			s.log.InfoContext(ctx, "sms: scheduler works again", "failures", n)
		}
		t.Reset(s.opts.PollInterval)
	}
}

// RunDue hands every message due now to the gateway, in batches of
// Options.BatchSize, and returns how many it handed over (accepted or not).
// The scheduler calls it; tests with an injected clock call it directly.
func (s *SMS) RunDue(ctx context.Context) (int, error) { return s.runDue(ctx, nil) }

func (s *SMS) runDue(ctx context.Context, stop <-chan struct{}) (int, error) {
	total := 0
	for {
		select {
		case <-stop:
			return total, nil
		default:
		}
		if err := ctx.Err(); err != nil {
			return total, err
		}
		now := s.now()
		token := messaging.NewID("claim")
		msgs, err := s.store.SMSClaimDue(ctx, &ClaimParams{Now: now, LeaseUntil: now.Add(s.opts.Lease), Token: token, Limit: s.opts.BatchSize})
		if err != nil {
			return total, fmt.Errorf("claim: %w", err)
		}
		if len(msgs) == 0 {
			return total, nil
		}
		if err := s.deliver(ctx, msgs, token, now.Add(s.opts.Lease)); err != nil {
			return total, err
		}
		total += len(msgs)
		if len(msgs) < s.opts.BatchSize {
			return total, nil
		}
	}
}

// deliver hands claimed messages to the gateway in one call and records
// each outcome. A failed write of the outcomes is retried until it succeeds
// or the claim's lease (leaseUntil) ends: until then nobody else hands the
// messages over again.
func (s *SMS) deliver(ctx context.Context, msgs []*Message, token string, leaseUntil time.Time) error {
	gms := make([]*GatewayMessage, len(msgs))
	for i, m := range msgs {
		gms[i] = &GatewayMessage{Reference: m.ID, Number: m.Number, Mobile: m.Mobile, Text: m.Text, Sender: m.Sender}
	}
	gctx, cancel := context.WithTimeout(ctx, s.opts.Lease/2)
	results, callErr := s.gw.Send(gctx, gms)
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
		c := &Completion{Number: m.Number, Token: token, At: now}
		switch {
		case err == nil:
			c.Status, c.GatewayMessageID, c.NetworkID = StatusSent, results[i].MessageID, results[i].NetworkID
			if c.NetworkID == "" {
				c.NetworkID = m.NetworkID
			}
		case Retryable(err) && m.Attempts < s.opts.MaxAttempts:
			c.Status, c.RetryAt, c.FailureReason = StatusQueued, now.Add(s.backoff(m.Attempts, err)), failureReason(err)
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
	n, err := retry.Record(ctx, leaseUntil, s.now, s.sleep, func(cctx context.Context) error {
		var err error
		errs, err = s.store.SMSComplete(cctx, cs)
		return err
	}, nil)
	if err != nil {
		return fmt.Errorf("complete (%d attempts): %w", n, err)
	}
	if n > 1 {
		s.log.InfoContext(ctx, "sms: outcomes recorded after retries", "messages", len(cs), "attempts", n)
	}
	for i, e := range errs {
		if e != nil {
			s.log.WarnContext(ctx, "sms: outcome not recorded: the claim was lost", "number", cs[i].Number, "err", e.Error())
		}
	}
	return nil
}

// backoff returns the wait before the next attempt after attempt number
// attempts failed: RetryBackoff doubled per attempt, capped at
// MaxRetryBackoff, and at least what the gateway asked for.
func (s *SMS) backoff(attempts int, err error) time.Duration {
	d := s.opts.RetryBackoff
	for i := 1; i < attempts && d < MaxRetryBackoff; i++ {
		d *= 2
	}
	d = min(d, MaxRetryBackoff)
	var ge *GatewayError
	if errors.As(err, &ge) && ge.RetryAfter > d {
		d = ge.RetryAfter
	}
	return d
}

func failureReason(err error) string {
	var ge *GatewayError
	if errors.As(err, &ge) {
		return fmt.Sprintf("[%d] %s", ge.Code, ge.Description)
	}
	return err.Error()
}
