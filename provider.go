package messaging

import (
	"context"
	"errors"
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

// Bounds of the reports kept for provider message ids not known yet.
const (
	// DefaultPendingReportRetention is the default
	// Options.PendingReportRetention.
	DefaultPendingReportRetention = 24 * time.Hour
	// MaxPendingReports is the most reports kept for one provider message
	// id not known yet; later ones are dropped. A message has four
	// statuses to report, so this leaves room for repeated reports.
	MaxPendingReports = 8
)

// ApplyProviderStatus applies a provider's status report under the status
// rules (see UpdateStatus). Reports arrive in any order; one that would
// move a status backwards is ignored. It reports whether the status
// changed.
//
// A report can arrive before the dispatcher has recorded the provider
// message id it is about: Meta pushes delivered within milliseconds of
// answering the send. A report of an id that no message carries is
// therefore validated and kept in the store (for
// Options.PendingReportRetention, at most MaxPendingReports per id; more
// are dropped and logged), and applied when the id is recorded (see
// UpdateStatus); ApplyProviderStatus then returns false and no error, as
// for an ignored report: either way the report needs no resending. Only an
// error means the report was neither applied nor kept, so that the
// provider should deliver it again; an invalid report (an unknown status,
// failed without code) is a validation_error.
func (s *Service) ApplyProviderStatus(ctx context.Context, p *ProviderStatus) (bool, error) {
	if err := refuseUnstorable(p); err != nil {
		return false, err
	}
	if p.ProviderMessageID == "" {
		return false, validationError("id", "the provider message id is required")
	}
	m, err := s.store.MessageGetByProviderID(ctx, p.ProviderMessageID)
	if err == nil {
		return s.UpdateStatus(ctx, &StatusUpdate{
			WorkspaceID: m.WorkspaceID, MessageID: m.ID, Status: p.Status,
			ProviderCode: p.Code, ProviderText: p.Text,
		})
	}
	if !errors.Is(err, ErrNotFound) {
		return false, wrapStoreError(err, "provider message", p.ProviderMessageID)
	}
	return s.keepReport(ctx, p)
}

// keepReport keeps a valid report of a provider message id that no message
// carries yet, until UpdateStatus records the id.
//
// The dispatcher records the id, then takes the reports kept for it; a
// report kept just after that take would wait for nothing. So once the
// report is kept, the id is looked up again: when a message carries it
// now, its reports are taken and applied here. Whichever of the two takes
// comes second finds the report, since the lookup follows the save and the
// dispatcher's take follows its record of the id.
func (s *Service) keepReport(ctx context.Context, p *ProviderStatus) (bool, error) {
	if err := checkStatus(p.Status, p.Code); err != nil {
		return false, err
	}
	now := s.now()
	r := &PendingReport{ProviderMessageID: p.ProviderMessageID, Status: p.Status,
		ProviderCode: p.Code, ProviderText: p.Text, ReceivedAt: now}
	kept, err := s.store.PendingReportSave(ctx, &PendingReportSaveParams{Report: r, NotBefore: now.Add(-s.retention), Limit: MaxPendingReports})
	if err != nil {
		return false, wrapStoreError(err, "pending report", p.ProviderMessageID)
	}
	if kept {
		s.log.InfoContext(ctx, "kept a status report of a provider message id not recorded yet",
			"provider_message_id", p.ProviderMessageID, "status", p.Status)
	} else {
		s.log.WarnContext(ctx, "dropped a status report: too many are kept for its provider message id",
			"provider_message_id", p.ProviderMessageID, "status", p.Status, "limit", MaxPendingReports)
	}
	m, err := s.store.MessageGetByProviderID(ctx, p.ProviderMessageID)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	if err != nil {
		// The report is kept, but if the dispatcher's take came before
		// the save it would wait for nothing: ask for it again.
		return false, wrapStoreError(err, "provider message", p.ProviderMessageID)
	}
	return s.applyPending(ctx, m.WorkspaceID, m.ID, p.ProviderMessageID)
}

// applyPending takes the unexpired reports kept for providerMessageID and
// applies them, oldest first, to message id of workspace ws through
// UpdateStatus, and reports whether any changed its status.
//
// A report that fails to apply is not kept again: it was taken because a
// message now carries its id, and takes happen only when an id is
// recorded or a report of an unknown id is kept, so it would wait, never
// applied, until it expired. The failure (of the store) is returned, and
// the reports not applied are logged.
func (s *Service) applyPending(ctx context.Context, ws, id, providerMessageID string) (bool, error) {
	reports, err := s.store.PendingReportTake(ctx, providerMessageID, s.now().Add(-s.retention))
	if err != nil {
		return false, wrapStoreError(err, "pending report", providerMessageID)
	}
	changed := false
	for i, r := range reports {
		c, err := s.UpdateStatus(ctx, &StatusUpdate{WorkspaceID: ws, MessageID: id, Status: r.Status,
			ProviderCode: r.ProviderCode, ProviderText: r.ProviderText})
		if err != nil {
			for _, lost := range reports[i:] {
				s.log.ErrorContext(ctx, "a kept status report could not be applied and is lost",
					"message_id", id, "provider_message_id", providerMessageID, "status", lost.Status,
					"received_at", lost.ReceivedAt, "err", err)
			}
			return changed, err
		}
		changed = changed || c
	}
	return changed, nil
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
	if err := refuseUnstorable(in); err != nil {
		return nil, err
	}
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
