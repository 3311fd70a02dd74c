package messaging

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Provider is the channel provider the service hands accepted messages to
// (WhatsApp Cloud API, Messenger, Instagram, or a simulator). Implementations
// live in sub-packages such as provider/fakeprovider.
type Provider interface {
	// Send hands one outbound message to the channel provider and returns
	// the provider's message id. A failure is reported as *SendError; any
	// other error is treated as a retryable transport failure.
	Send(ctx context.Context, m *Message) (*SendReceipt, error)
}

// SendReceipt is the provider's answer to an accepted send.
type SendReceipt struct {
	// ProviderMessageID is the provider's id for the message, for example a
	// WhatsApp "wamid".
	ProviderMessageID string
}

// SendError is a send refused or failed by the channel provider.
type SendError struct {
	// Code is the provider's error code, for example "131026".
	Code string
	// Text is the provider's error text.
	Text string
	// Retryable reports whether sending again later may succeed.
	Retryable bool
	// RetryAfter, when positive, is the wait the provider asked for.
	RetryAfter time.Duration
}

// Error implements the error interface.
func (e *SendError) Error() string {
	return fmt.Sprintf("provider error %s", FailureReason(e.Code, e.Text))
}

// ProviderStatus is a status report of the channel provider about a message
// it accepted (from its webhook, or from a simulator).
type ProviderStatus struct {
	// ProviderMessageID identifies the message (the id Send returned).
	ProviderMessageID string
	// Status is sent, delivered, read or failed.
	Status string
	// Code and Text describe a failure.
	Code string
	Text string
}

// ApplyProviderStatus applies a provider's status report under the status
// rules (see UpdateStatus). Reports arrive in any order; one that would
// move a status backwards is ignored. It reports whether the status
// changed; an unknown provider message id is not_found.
func (s *Service) ApplyProviderStatus(ctx context.Context, p *ProviderStatus) (bool, error) {
	if p.ProviderMessageID == "" {
		return false, validationError("id", "the provider message id is required")
	}
	m, err := s.store.MessageGetByProviderID(ctx, p.ProviderMessageID)
	if err != nil {
		return false, wrapStoreError(err, "provider message", p.ProviderMessageID)
	}
	return s.UpdateStatus(ctx, &StatusUpdate{
		WorkspaceID: m.WorkspaceID, MessageID: m.ID, Status: p.Status,
		ProviderCode: p.Code, ProviderText: p.Text,
	})
}

// InboundMessage is a message a contact sent to the workspace, as reported
// by the channel provider.
type InboundMessage struct {
	WorkspaceID string
	Channel     string
	// From is the sender: an E.164 number (WhatsApp) or a scoped id.
	From string
	// ProviderMessageID is the provider's id of the inbound message; a
	// repeated report with the same id is recorded once.
	ProviderMessageID string
	Type              string
	Text              string
	MediaURL          string
	Caption           string
}

// RecordInbound stores an inbound message (direction inbound, status
// delivered) in the conversation of its sender on its channel, so that it
// shares conversation_id with the messages sent to that contact. A repeated
// report of the same provider message id returns the stored message.
func (s *Service) RecordInbound(ctx context.Context, in *InboundMessage) (*Message, error) {
	if err := validateChannel(in.Channel); err != nil {
		return nil, err
	}
	from := in.From
	if in.Channel == ChannelWhatsApp && !strings.HasPrefix(from, "+") {
		from = "+" + from
	}
	from, err := validateRecipient(in.Channel, from)
	if err != nil {
		return nil, validationError("from", "is not a valid sender on %s", in.Channel)
	}
	if in.ProviderMessageID == "" {
		return nil, validationError("id", "the provider message id is required")
	}
	typ := in.Type
	if typ == "" {
		typ = TypeText
	}
	now := s.now()
	m := &Message{
		ID: NewID("msg"), WorkspaceID: in.WorkspaceID, ConversationID: ConversationID(in.WorkspaceID, in.Channel, from),
		Channel: in.Channel, To: from, Direction: DirectionInbound, Status: StatusDelivered, Type: typ,
		Text: in.Text, MediaURL: in.MediaURL, Caption: in.Caption, ProviderMessageID: in.ProviderMessageID,
		IdempotencyKey: "\x1finbound:" + in.Channel + ":" + in.ProviderMessageID, CreatedAt: now, UpdatedAt: now,
	}
	stored, _, err := s.store.MessageCreate(ctx, m)
	if err != nil {
		return nil, wrapStoreError(err, "message", m.ID)
	}
	return stored, nil
}
