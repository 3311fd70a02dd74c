package messaging

import (
	"context"
	"strings"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"
)

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
	// Type is the provider's type of the message; a type the service does
	// not know (see the Type constants) is stored as TypeUnsupported with
	// Type as Content.RawType, unless the provider set Content.RawType
	// itself. Empty is TypeText.
	Type     string
	Text     string
	MediaURL string
	Caption  string
	// Content is the rich content of the message, nil for a plain text.
	// Its Context and Reaction name messages by provider id: RecordInbound
	// sets their MessageID when the provider id is a message of the
	// workspace.
	Content *InboundContent
}

// RecordInbound stores an inbound message (direction inbound, status
// delivered) in the conversation of its sender on its channel, so that it
// shares conversation_id with the messages sent to that contact, and
// announces it with a message.received event, queued for the webhooks in
// the same transaction as the message. A repeated report of the same
// provider message id returns the stored message and announces nothing.
// A text that is an opt-out keyword of the workspace
// (WorkspaceInfo.ActiveOptOutKeywords) opts the sender out of the
// channel, and an opt-in keyword (ActiveOptInKeywords) back in, with a
// contact.opted_out or contact.opted_in event.
func (s *Service) RecordInbound(ctx context.Context, in *InboundMessage) (*Message, error) {
	if err := refuseUnstorable(in, inboundTexts); err != nil {
		return nil, err
	}
	if err := s.validateChannel(in.Channel); err != nil {
		return nil, err
	}
	spec := s.spec(in.Channel)
	from := in.From
	if spec.PhoneRecipients && !strings.HasPrefix(from, "+") {
		from = "+" + from
	}
	from, err := validateRecipient(spec, in.Channel, from)
	if err != nil {
		return nil, validationError("from", "is not a valid sender on %s", in.Channel)
	}
	if in.ProviderMessageID == "" {
		return nil, validationError("id", "the provider message id is required")
	}
	typ := inboundType(in.Type)
	content := in.Content.Clone()
	if typ == record.TypeUnsupported {
		if content == nil {
			content = &InboundContent{}
		}
		if content.RawType == "" {
			content.RawType = in.Type
		}
	}
	if content != nil {
		if err := s.resolveReferences(ctx, in.WorkspaceID, content); err != nil {
			return nil, err
		}
	}
	now := s.now()
	m := &Message{
		ID: record.NewID("msg"), WorkspaceID: in.WorkspaceID, ConversationID: record.ConversationID(in.WorkspaceID, in.Channel, from),
		Channel: in.Channel, To: from, Direction: record.DirectionInbound, Status: StatusDelivered, Type: typ,
		Text: in.Text, MediaURL: in.MediaURL, Caption: in.Caption, ProviderMessageID: in.ProviderMessageID,
		Content: content, IdempotencyKey: "\x1finbound:" + in.Channel + ":" + in.ProviderMessageID, CreatedAt: now, UpdatedAt: now,
	}
	ev := receivedEvent(m, now)
	rec, err := ev.record()
	if err != nil {
		return nil, wrapStoreError(err, "message", m.ID)
	}
	stored, created, err := s.store.MessageReceive(ctx, &driver.MessageReceiveParams{Message: m, Event: rec})
	if err != nil {
		return nil, wrapStoreError(err, "message", m.ID)
	}
	if created {
		s.wakeWebhooks()
		s.events.publish(ctx, ev)
	}
	if err := s.applyKeyword(ctx, stored); err != nil {
		return nil, err
	}
	return stored, nil
}
