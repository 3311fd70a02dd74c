package messaging

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sync"
	"time"

	"github.com/ujumbe/messaging/internal/metricname"
	"github.com/ujumbe/messaging/internal/spans"
	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

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
	// longer covers SendTimeout when a worker takes it is put back, untried,
	// for the next claim. Default 4 x Workers.
	BatchSize int
	// Lease is how long a claimed message belongs to this dispatcher. A
	// message whose lease ran out (the process died mid-send) is claimed
	// again, and then waits for its confirmation window (see
	// ConfirmWindow) before it is sent. Default 60 s; it must exceed
	// SendTimeout.
	Lease time.Duration
	// SendTimeout bounds one Provider.Send. Default 30 s.
	SendTimeout time.Duration
	// PollInterval is how often the store is polled for due messages when
	// nothing woke the dispatcher. Default 200 ms.
	PollInterval time.Duration
	// MaxAttempts is the most hand-overs to the provider before a message
	// with retryable errors fails. Default 10.
	MaxAttempts int
	// MaxAge is how long after acceptance (a scheduled message's SendAt)
	// a message may still be retried. Default 24 h.
	MaxAge time.Duration
	// InitialBackoff and MaxBackoff shape the exponential backoff (factor
	// 2, +-20 % jitter) between retries. Defaults 1 s and 10 min.
	InitialBackoff time.Duration
	MaxBackoff     time.Duration
	// PerSenderRate is the most messages per second handed to the provider
	// for one sender (a workspace's connected channel) without a
	// connection of its own, in real time; a sender with one is paced at
	// its ChannelConnection.Throughput. Default 80, WhatsApp's default
	// throughput per phone number; negative means unlimited for every
	// sender (load tests).
	PerSenderRate float64
	// SenderInFlight is the most sends in flight at once for one sender,
	// so that a sender whose provider hangs cannot hold every worker. A
	// worker with a message of a sender at its bound waits up to
	// SenderBusyDelay (in real time) for one of its sends to end; if none
	// does, the message goes back to the queue, untried, for
	// SenderBusyDelay, and the worker takes other work. Default
	// Workers - max(1, Workers/8), at least 1: one worker in eight is left
	// to the other senders.
	SenderInFlight int
	// SenderBusyDelay is how long a worker waits for a busy sender, and
	// how long the message then waits in the queue. Default 1 s.
	SenderBusyDelay time.Duration
	// ConfirmWindow is how long a message whose send outcome is unknown
	// (the provider may have taken it and no answer was recorded: a
	// timeout, a lost connection, a process that died or a lease that ran
	// out after the claim) waits for the provider to confirm it before
	// the workspace's policy (WorkspaceInfo.ActiveUnconfirmedSends)
	// resends or fails it. A provider report that carries the message's
	// id (see ProviderStatus.MessageID) confirms it with no second
	// request. Default 5 min.
	ConfirmWindow time.Duration
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
	defaults.Positive(&d.SenderInFlight, max(1, d.Workers-max(1, d.Workers/8)))
	defaults.Positive(&d.SenderBusyDelay, time.Second)
	defaults.Positive(&d.ConfirmWindow, 5*time.Minute)
	return d
}

// dispatcher claims due queued messages under a lease and hands them to the
// provider with a bounded pool of workers (see package internal/workqueue
// for the loop and the pacing).
//
// Nothing accepted is lost, and a message is not handed over twice within
// the confirmation window: the claim marks each message possibly sent, a
// recorded answer clears the mark, and a claim that finds an older mark
// (an unknown outcome: a timeout after the request, a process that died, a
// sent write the store refused for the rest of the lease) waits for the
// provider's correlated report until the window ends (see process and
// unconfirmed). A claim that fails hands nothing over, and the next claim
// waits a backoff.
type dispatcher struct {
	svc   *Service
	opts  DispatchOptions
	owner string
	queue *workqueue.Queue[*Message]
	// retry is the wait before the next attempt of a message whose send
	// failed with a retryable error.
	retry workqueue.Schedule

	// mu guards senders and their pausedUntil.
	mu sync.Mutex
	// senders holds the state of each sender (a workspace's channel) ever
	// seen.
	senders map[string]*senderState
}

// senderState is what the dispatcher knows of one sender: its pacing, its
// sends in flight and the end of a pause its provider asked for.
type senderState struct {
	// limiter paces its sends; nil when PerSenderRate is unlimited.
	limiter *rate.Limiter
	// slots holds a value per send in flight (capacity SenderInFlight).
	slots chan struct{}
	// pausedUntil is guarded by dispatcher.mu.
	pausedUntil time.Time
	// pacedAt is when pace last read the sender's connection; guarded by
	// dispatcher.mu.
	pacedAt time.Time
}

// paceEvery is how often pace reads a sender's throughput again: a change
// applies within it, and a busy sender's hand-overs do not each read the
// connection.
const paceEvery = time.Second

// newDispatcher returns the dispatcher of s; sleep (nil: a timer) waits
// after a failed claim and between retries of an outcome write.
func newDispatcher(s *Service, o DispatchOptions, sleep workqueue.Sleep) *dispatcher {
	var b [8]byte
	_, _ = rand.Read(b[:])
	d := &dispatcher{svc: s, opts: o.withDefaults(), owner: "disp_" + hex.EncodeToString(b[:]),
		senders: map[string]*senderState{}}
	d.retry = workqueue.Exponential(d.opts.InitialBackoff, d.opts.MaxBackoff, 0.2, d.opts.MaxAttempts)
	d.queue = workqueue.New(workqueue.Config[*Message]{
		Name: "dispatcher", Workers: d.opts.Workers, BatchSize: d.opts.BatchSize, PollInterval: d.opts.PollInterval,
		// Claims take BatchSize messages even when fewer workers are free
		// (fewer claims, each a store write); process leaves a message
		// whose lease no longer covers a send.
		ClaimAhead: true,
		Now:        s.now, Sleep: sleep, Logger: s.log,
		// A failed write of a result is logged by process and never
		// paces the claims: the message is claimed again after its lease
		// (and waits for its confirmation window).
		Work: func(ctx context.Context, m *Message) error { d.process(ctx, m); return nil },
		Claim: func(ctx context.Context, limit int) ([]*Message, error) {
			return s.store.MessageClaim(ctx, &driver.MessageClaimParams{Owner: d.owner, Now: s.now(), Lease: d.opts.Lease, Limit: limit})
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
	return errors.Is(err, ErrNotFound) || errors.Is(err, ErrConflict) || errors.Is(err, driver.ErrStale)
}

// process hands one claimed message to the provider and records the result.
//
// The message counts on the service's status batch (its statusHold, see
// statusBatch) from the start of process until its status change joins
// the batch or process ends, except while it waits for the provider or
// its pacing.
//
// The claim marked the message possibly sent (Message.UnconfirmedSince).
// A mark older than this claim means that an earlier hand-over's outcome
// is unknown: the message is then not sent before the provider confirms
// it or the confirmation window ends (see unconfirmed). Every path that
// hands nothing over puts the message back untried, clearing the mark; an
// answer of the provider records the outcome, which clears it too; only an
// unknown outcome keeps it.
func (d *dispatcher) process(ctx context.Context, m *Message) {
	// The hold starts here, not at the claim: a claimed message may wait
	// for a worker that waits for the batch (DispatchDue claims more
	// than it has workers).
	a := &handOver{m: m, hold: d.svc.statuses.holdOne(),
		claimedAt: m.DueAt.Add(-d.opts.Lease)} // the claim set DueAt to its time plus the lease
	defer a.hold.release()
	if m.UnconfirmedSince != nil && m.UnconfirmedSince.Before(a.claimedAt) {
		a.hold.release()
		d.unconfirmed(ctx, m)
		return
	}
	a.sender = d.sender(m.WorkspaceID, m.Channel)
	d.pace(ctx, a.sender, m.WorkspaceID, m.Channel)
	if !d.admit(ctx, a) {
		return
	}
	ctx, span := d.startSpan(ctx, m)
	rcpt, err := d.send(ctx, a)
	if ctx.Err() != nil {
		// The dispatcher was killed mid-send: record nothing. The mark
		// stays, so the claim after the lease waits for a confirmation.
		spans.End(span, nil)
		return
	}
	spans.End(span, d.recordOutcome(ctx, a, rcpt, err))
}

// handOver is one claimed message on its way through process.
type handOver struct {
	m *Message
	// hold is the message's count on the status batch.
	hold *statusHold
	// claimedAt is the time of the claim.
	claimedAt time.Time
	// sender is the state of the message's sender.
	sender *senderState
	// started is when the provider was asked.
	started time.Time
}

// admit reports whether a's message may be handed over now: its sender is
// not paused, its pacing lets it go, its lease still covers a send and a
// send of its sender is free. Otherwise the message is put back, untried,
// and admit returns false. The hold does not count while admit waits.
func (d *dispatcher) admit(ctx context.Context, a *handOver) bool {
	m, sender := a.m, a.sender
	if until := d.paused(sender); until.After(d.svc.now()) {
		a.hold.release()
		d.putBack(ctx, m, until)
		return false
	}
	if sender.limiter != nil {
		a.hold.release()
		if err := sender.limiter.Wait(ctx); err != nil {
			// Cancelled, or the context's deadline comes before the
			// sender's next turn: nothing was handed over.
			due := d.svc.now()
			if ctx.Err() == nil {
				due = due.Add(time.Duration(float64(time.Second) / float64(sender.limiter.Limit())))
			}
			d.putBack(ctx, m, due)
			return false
		}
	}
	now := d.svc.now()
	if now.Add(d.opts.SendTimeout).After(m.DueAt) {
		// What is left of the lease (m.DueAt of a claimed message) would
		// not cover a send: it waited for a worker or for pacing too long.
		// It goes back untried rather than be sent while another claim
		// may take it once the lease ends.
		a.hold.release()
		d.putBack(ctx, m, now)
		return false
	}
	if until := d.paused(sender); until.After(now) {
		a.hold.release() // the sender was paused while this one waited
		d.putBack(ctx, m, until)
		return false
	}
	a.hold.release() // enter may wait for the sender; the batch must not
	if !d.enter(ctx, sender) {
		d.putBack(ctx, m, now.Add(d.opts.SenderBusyDelay))
		return false
	}
	return true
}

// send hands a's message to the provider, under SendTimeout and its span,
// and ends the send of its sender that admit counted. The hold does not
// count during the call, and counts again after it.
func (d *dispatcher) send(ctx context.Context, a *handOver) (*SendReceipt, error) {
	tel := d.svc.tel
	sctx, cancel := context.WithTimeout(ctx, d.opts.SendTimeout)
	defer cancel()
	sctx, pspan := tel.start(sctx, "messaging.provider.send", tel.spanClient)
	if spans.Recording(pspan) {
		pspan.SetAttributes(metricname.AttrMessageID.String(a.m.ID), metricname.AttrChannel.String(a.m.Channel))
	}
	a.started = d.svc.now()
	a.hold.release()
	rcpt, err := d.handTo(sctx, a.m)
	a.hold.resume()
	d.leave(a.sender)
	spans.End(pspan, err)
	return rcpt, err
}

// record writes an outcome of a's message with write, retried until the
// lease ends (m.DueAt of a claimed message): the lease is what keeps the
// message from a second send. Outcomes are recorded even while stopping,
// without the caller's cancellation.
func (d *dispatcher) record(ctx context.Context, a *handOver, what string, write func(context.Context) error) {
	_ = d.queue.Record(ctx, &workqueue.Outcome{What: what, LeaseEnd: a.m.DueAt, Write: write, Permanent: permanent, LogArgs: []any{"message_id", a.m.ID}})
}

// recordOutcome records the provider's answer to a's send (rcpt, err):
// sent, a retry, a failure, or an unknown outcome that waits for the
// provider's confirmation. It returns the error of the send, for its
// span.
func (d *dispatcher) recordOutcome(ctx context.Context, a *handOver, rcpt *SendReceipt, err error) error {
	m := a.m
	if err == nil {
		if rcpt == nil || rcpt.ProviderMessageID == "" {
			// Accepted without an id: the provider may have taken it.
			err = &SendError{Code: "invalid_response", Text: "the provider returned no message id", Retryable: true, Unknown: true}
		} else {
			d.record(ctx, a, "sent", func(rctx context.Context) error {
				_, uerr := d.svc.recordStatus(rctx, &StatusUpdate{WorkspaceID: m.WorkspaceID, MessageID: m.ID, Status: StatusSent, ProviderMessageID: rcpt.ProviderMessageID},
					statusWay{before: m, hold: a.hold})
				return uerr
			})
			return nil
		}
	}
	// Only a sent message's change is worth the batch's wait: the
	// others may do I/O first (the credentials refused, a release).
	a.hold.release()
	se := sendError(err)
	d.svc.tel.providerError(ctx, m.Channel, se.Code)
	if se.Unknown {
		d.recordUnknown(ctx, a, se)
	} else {
		d.recordRefusal(ctx, a, se)
	}
	return se
}

// sendError returns the error of a send as a *SendError: itself when it
// is one, else an unreachable provider (whose answer is unknown when the
// send timed out).
func sendError(err error) *SendError {
	var se *SendError
	if !errors.As(err, &se) {
		se = &SendError{Code: "unreachable", Text: "The channel provider could not be reached", Retryable: true}
		if errors.Is(err, context.DeadlineExceeded) {
			se.Text = "The channel provider did not answer in time"
			se.Unknown = true
		}
	}
	return se
}

// recordUnknown records a send whose outcome is unknown: the provider may
// have taken it, so the claim's mark is kept and the message waits for
// its confirmation (a report carrying the message's id). (When a
// correlated report confirmed it meanwhile, the message is no longer
// queued and the release changes nothing.)
func (d *dispatcher) recordUnknown(ctx context.Context, a *handOver, se *SendError) {
	m := a.m
	mark := a.claimedAt // the claim's mark (a store that did not set it gets it here)
	if m.UnconfirmedSince != nil {
		mark = *m.UnconfirmedSince
	}
	d.svc.tel.unconfirmedSend(ctx, m.Channel, metricname.UnconfirmedOutcomeUnknown)
	d.record(ctx, a, "the unknown outcome", func(rctx context.Context) error {
		released, rerr := d.svc.store.MessageRelease(rctx, &driver.MessageReleaseParams{
			WorkspaceID: m.WorkspaceID, ID: m.ID, Owner: d.owner, DueAt: mark.Add(d.opts.ConfirmWindow),
			LastError: FailureReason(se.Code, se.Text), Unconfirmed: &mark,
		})
		if released {
			d.svc.log.WarnContext(ctx, "dispatcher: the outcome of a send is unknown; waiting for the provider to confirm it",
				"message_id", m.ID, "channel", m.Channel, "error", FailureReason(se.Code, se.Text), "confirm_by", mark.Add(d.opts.ConfirmWindow))
		}
		return rerr
	})
}

// recordRefusal records a send the provider refused: refused credentials
// and a throttled sender are noted, and the message is released for a
// retry while it has attempts and age left, else failed.
func (d *dispatcher) recordRefusal(ctx context.Context, a *handOver, se *SendError) {
	m, tel := a.m, d.svc.tel
	if se.Credentials {
		d.svc.credentialsRefused(context.WithoutCancel(ctx), m.WorkspaceID, m.Channel, se, a.started)
	}
	now := d.svc.now()
	if se.Throttled {
		d.pause(a.sender, now.Add(max(se.RetryAfter, d.opts.InitialBackoff)))
	}
	if delay, more := d.retry.After(m.Attempts); se.Retryable && more && now.Sub(sendFrom(m)) < d.opts.MaxAge {
		delay = max(delay, se.RetryAfter)
		tel.retries.Add(ctx, 1, tel.channel(m.Channel).add...)
		d.record(ctx, a, "the retry", func(rctx context.Context) error {
			_, rerr := d.svc.store.MessageRelease(rctx, &driver.MessageReleaseParams{
				WorkspaceID: m.WorkspaceID, ID: m.ID, Owner: d.owner, DueAt: now.Add(delay), LastError: FailureReason(se.Code, se.Text),
			})
			return rerr
		})
		return
	}
	d.record(ctx, a, "the failure", func(rctx context.Context) error {
		_, uerr := d.svc.recordStatus(rctx, &StatusUpdate{WorkspaceID: m.WorkspaceID, MessageID: m.ID, Status: StatusFailed, ProviderCode: se.Code, ProviderText: se.Text},
			statusWay{before: m, hold: a.hold})
		return uerr
	})
}

// handTo hands m to the provider of its channel as its sender: the
// workspace's connection on m's channel (Service.ChannelSender), resolved
// within the send's timeout. A channel no provider serves fails m
// (CodeNoProvider). A connection the provider has not verified fails the send
// without a call, as ChannelSender's *SendError says (retryable while it is
// pending); a channel without credentials, or without a connection,
// hands a nil sender, for the provider to judge; a failure to read the
// connection is a retryable failure, like a provider out of reach.
func (d *dispatcher) handTo(ctx context.Context, m *Message) (*SendReceipt, error) {
	snd, err := d.svc.ChannelSender(ctx, m.WorkspaceID, m.Channel)
	switch {
	case errors.Is(err, ErrNotFound):
		snd = nil
	case err != nil:
		return nil, err
	}
	p := d.svc.providerFor(m.Channel)
	if p == nil {
		return nil, noProvider(m.Channel)
	}
	return p.Send(ctx, snd, m)
}

// putBack releases a claimed message that was not handed over, to be due
// at due: its claim's attempt is taken back and its mark cleared. A
// failed release is left to the lease; the mark then makes the next claim
// wait for a confirmation window, which is safe, only slower.
func (d *dispatcher) putBack(ctx context.Context, m *Message, due time.Time) {
	_, err := d.svc.store.MessageRelease(context.WithoutCancel(ctx), &driver.MessageReleaseParams{
		WorkspaceID: m.WorkspaceID, ID: m.ID, Owner: d.owner, DueAt: due, LastError: m.LastError, Untried: true,
	})
	if err != nil {
		d.svc.log.WarnContext(ctx, "dispatcher: putting back a message that was not sent failed; it waits for its lease",
			"message_id", m.ID, "err", err)
	}
}

// unconfirmed handles a claimed message whose earlier hand-over has an
// unknown outcome (m.UnconfirmedSince before this claim). Within the
// confirmation window it waits, untried, for the window's end (a
// correlated report confirms it meanwhile: see ApplyProviderStatus).
// After the window the workspace's policy decides: UnconfirmedFail fails
// it with the reason [unconfirmed]; UnconfirmedResend puts it back due now
// with the mark cleared, so the next claim hands it over afresh (and marks
// it again).
func (d *dispatcher) unconfirmed(ctx context.Context, m *Message) {
	mark := *m.UnconfirmedSince
	end := mark.Add(d.opts.ConfirmWindow)
	now := d.svc.now()
	if now.Before(end) {
		_, err := d.svc.store.MessageRelease(context.WithoutCancel(ctx), &driver.MessageReleaseParams{
			WorkspaceID: m.WorkspaceID, ID: m.ID, Owner: d.owner, DueAt: end, LastError: m.LastError, Unconfirmed: &mark, Untried: true,
		})
		if err != nil {
			d.svc.log.WarnContext(ctx, "dispatcher: putting back a message that waits for confirmation failed; it waits for its lease",
				"message_id", m.ID, "err", err)
		}
		return
	}
	policy := record.UnconfirmedResend
	if w, err := d.svc.store.WorkspaceGet(ctx, m.WorkspaceID); err == nil {
		policy = w.ActiveUnconfirmedSends()
	} else {
		// The send waits for the lease; the next claim reads the policy again.
		d.svc.log.WarnContext(ctx, "dispatcher: reading the workspace's policy for unconfirmed sends failed", "message_id", m.ID, "err", err)
		return
	}
	// A resend is an attempt like any other: none is left when the
	// hand-overs so far (this claim's is not one) used them all up.
	if _, more := d.retry.After(m.Attempts - 1); !more || now.Sub(sendFrom(m)) >= d.opts.MaxAge {
		policy = record.UnconfirmedFail
	}
	tel := d.svc.tel
	if policy == record.UnconfirmedFail {
		tel.unconfirmedSend(ctx, m.Channel, metricname.UnconfirmedOutcomeFailed)
		text := "The provider did not confirm the send within " + d.opts.ConfirmWindow.String() + "; it may or may not have reached the recipient"
		_ = d.queue.Record(ctx, &workqueue.Outcome{What: "the unconfirmed failure", LeaseEnd: m.DueAt, Permanent: permanent, LogArgs: []any{"message_id", m.ID},
			Write: func(rctx context.Context) error {
				// From queued only: a report that confirmed the send
				// meanwhile wins over the failure.
				_, err := d.svc.recordStatus(rctx, &StatusUpdate{WorkspaceID: m.WorkspaceID, MessageID: m.ID, Status: StatusFailed,
					ProviderCode: defaults.ProviderCodeUnconfirmed, ProviderText: text}, statusWay{before: m, queuedOnly: true})
				if errors.Is(err, errNoLongerQueued) {
					return nil
				}
				return err
			}})
		return
	}
	tel.unconfirmedSend(ctx, m.Channel, metricname.UnconfirmedOutcomeResent)
	d.svc.log.WarnContext(ctx, "dispatcher: the provider did not confirm a send within the confirmation window; sending it again",
		"message_id", m.ID, "channel", m.Channel, "unconfirmed_since", mark)
	d.putBack(ctx, m, now)
}

// sender returns the state of the sender of workspace ws on channel,
// made when missing.
func (d *dispatcher) sender(ws, channel string) *senderState {
	d.mu.Lock()
	defer d.mu.Unlock()
	k := ws + "\x00" + channel
	st := d.senders[k]
	if st == nil {
		st = &senderState{slots: make(chan struct{}, d.opts.SenderInFlight)}
		if d.opts.PerSenderRate >= 0 {
			st.limiter = rate.NewLimiter(rate.Limit(d.opts.PerSenderRate), max(1, int(d.opts.PerSenderRate)))
		}
		d.senders[k] = st
	}
	return st
}

// pace sets the pacing of st, the sender of workspace ws on channel, to
// the throughput of its connection (ChannelConnection.Throughput, read
// through the service's connection cache, at most once every paceEvery)
// when it has one with credentials; a sender without one keeps
// PerSenderRate. Pacing that is off (PerSenderRate negative) stays off.
func (d *dispatcher) pace(ctx context.Context, st *senderState, ws, channel string) {
	if st.limiter == nil {
		return
	}
	now := d.svc.now()
	d.mu.Lock()
	due := st.pacedAt.IsZero() || now.Sub(st.pacedAt) >= paceEvery
	if due {
		st.pacedAt = now
	}
	d.mu.Unlock()
	if !due {
		return
	}
	perSecond := d.opts.PerSenderRate
	if c, err := d.svc.store.ConnectionGet(ctx, ws, channel); err == nil && c.Status != record.ConnectionDisconnected && c.AccountID != "" {
		perSecond = float64(c.Throughput)
		if c.Throughput <= 0 {
			perSecond = record.DefaultThroughput
		}
	}
	if st.limiter.Limit() != rate.Limit(perSecond) {
		st.limiter.SetLimit(rate.Limit(perSecond))
		st.limiter.SetBurst(max(1, int(perSecond)))
	}
}

// paused returns the end of the pause of st the provider asked for (zero
// when none).
func (d *dispatcher) paused(st *senderState) time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	return st.pausedUntil
}

// pause pauses every send of st until until (a later pause wins).
func (d *dispatcher) pause(st *senderState, until time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if until.After(st.pausedUntil) {
		st.pausedUntil = until
	}
}

// enter counts a send of st in flight, waiting up to SenderBusyDelay
// while SenderInFlight are; false when none ended.
func (d *dispatcher) enter(ctx context.Context, st *senderState) bool {
	select {
	case st.slots <- struct{}{}:
		return true
	default:
	}
	t := time.NewTimer(d.opts.SenderBusyDelay)
	defer t.Stop()
	select {
	case st.slots <- struct{}{}:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}

// leave ends a send of st counted by enter.
func (d *dispatcher) leave(st *senderState) { <-st.slots }

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
		span.SetAttributes(metricname.AttrMessageID.String(m.ID), metricname.AttrChannel.String(m.Channel), attribute.Int("messaging.attempt", m.Attempts))
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

// sendFrom is when m was first to be handed over: its acceptance, or its
// SendAt when it was scheduled later. Its retries are bounded by MaxAge
// from then.
func sendFrom(m *Message) time.Time {
	if m.SendAt != nil && m.SendAt.After(m.CreatedAt) {
		return *m.SendAt
	}
	return m.CreatedAt
}

// wakeDispatcher tells the dispatcher that a message was queued, so that
// it claims without waiting for its next poll.
func (s *Service) wakeDispatcher() { s.dispatch.queue.Notify() }
