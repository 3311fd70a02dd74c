package messaging

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ujumbe/messaging/record"
)

// MarkReadParams are the options of Messages.MarkRead.
type MarkReadParams struct {
	// Typing shows the customer a typing indicator as well (WhatsApp's
	// typing_indicator, the Send API's typing_on), for as long as the
	// provider shows one (up to 25 seconds on WhatsApp, or until the
	// business answers).
	Typing bool
}

// MarkRead marks an inbound message of the workspace read at the provider
// (the customer sees blue ticks), with a typing indicator when p.Typing,
// and records when (Message.ReadAt). It is idempotent: a message marked
// read already is answered as stored, without asking the provider again
// unless a typing indicator is asked for; the first ReadAt stays. A
// provider that cannot mark messages read (no ReadMarker) has the mark
// recorded only. Errors: not_found for an unknown message;
// validation_error (field id) for an outbound message, or an inbound one
// the provider has no id for, or a refusal by the provider;
// channel_unavailable when the channel is not connected or its
// credentials are refused; service_unavailable when the provider could not
// be reached (nothing is recorded then).
func (m *Messages) MarkRead(ctx context.Context, id string, p *MarkReadParams) (*Message, error) {
	if p == nil {
		p = &MarkReadParams{}
	}
	msg, err := m.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if msg.Direction != record.DirectionInbound {
		return nil, validationError("id", "message %s is outbound: only inbound messages are marked read", id)
	}
	if msg.ReadAt != nil && !p.Typing {
		return msg, nil
	}
	if rm, ok := m.svc.providerFor(msg.Channel).(ReadMarker); ok {
		if msg.ProviderMessageID == "" {
			return nil, validationError("id", "message %s has no provider id to mark read", id)
		}
		snd, err := m.svc.connectedSender(ctx, m.ws, msg.Channel, "message "+id+" cannot be marked read")
		if err != nil {
			return nil, err
		}
		started := m.svc.now()
		if err := rm.MarkRead(ctx, snd, msg, p.Typing); err != nil {
			return nil, m.svc.providerCallError(ctx, m.ws, msg.Channel, record.FieldPath("id"), "marking message "+id+" read", err, started)
		}
	}
	if msg.ReadAt != nil {
		return msg, nil
	}
	marked, err := m.svc.store.MessageMarkRead(context.WithoutCancel(ctx), m.ws, id, m.svc.now())
	if err != nil {
		return nil, wrapStoreError(err, "message", id)
	}
	return marked, nil
}

// providerCallError is the error of a call to the provider about what
// (marking a message read, an upload) that failed with err, begun at
// started: refused credentials mark the connection and are
// channel_unavailable; a refusal is a validation_error naming path with
// the provider's reason; the caller's context ending is its error; any
// other failure is service_unavailable.
func (s *Service) providerCallError(ctx context.Context, ws, channel string, path Path, what string, err error, started time.Time) error {
	var se *SendError
	switch {
	case errors.As(err, &se) && se.Credentials:
		s.credentialsRefused(context.WithoutCancel(ctx), ws, channel, se, started)
		return errorOn(CodeChannelUnavailable, "channel", fmt.Sprintf("%s failed: the provider refused the credentials of channel %s", what, channel), err)
	case errors.As(err, &se) && !se.Retryable:
		e := validationErrorAt(path, "the provider refused %s (%s)", what, FailureReason(se.Code, se.Text))
		e.Err = err
		return e
	case ctx.Err() != nil:
		return ctx.Err()
	}
	return &Error{Code: CodeServiceUnavailable, Err: err, Message: fmt.Sprintf("%s failed: the provider could not be reached; retry later", what)}
}
