package metaprovider

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/ujumbe/messaging"
)

var _ messaging.ReadMarker = (*Provider)(nil)

// waReadStatus is the Cloud API's read receipt of an inbound message,
// with a typing indicator when one is shown.
type waReadStatus struct {
	MessagingProduct string             `json:"messaging_product"`
	Status           string             `json:"status"`
	MessageID        string             `json:"message_id"`
	TypingIndicator  *waTypingIndicator `json:"typing_indicator,omitempty"`
}

type waTypingIndicator struct {
	Type string `json:"type"`
}

// MarkRead implements messaging.ReadMarker. On WhatsApp it posts
// {"messaging_product": "whatsapp", "status": "read", "message_id": <the
// message's provider id>} to /{phone-number-id}/messages, with
// "typing_indicator": {"type": "text"} when typing. On Messenger and
// Instagram it posts the sender action mark_seen to the customer (the
// inbound message's To, its peer) at /{page-or-ig-id}/messages, then,
// when typing, the sender action typing_on in a second request. Errors
// are mapped as Send's.
func (p *Provider) MarkRead(ctx context.Context, s *messaging.ChannelSender, m *messaging.Message, typing bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if m == nil {
		return invalid("no message")
	}
	var bodies []any
	switch m.Channel {
	case messaging.ChannelWhatsApp:
		if m.ProviderMessageID == "" {
			return invalid("the message has no provider id to mark read")
		}
		st := &waReadStatus{MessagingProduct: "whatsapp", Status: "read", MessageID: m.ProviderMessageID}
		if typing {
			st.TypingIndicator = &waTypingIndicator{Type: "text"}
		}
		bodies = append(bodies, st)
	case messaging.ChannelMessenger, messaging.ChannelInstagram:
		rcpt, err := fbRecipientOf(m.To)
		if err != nil {
			return err
		}
		bodies = append(bodies, &fbMessage{Recipient: rcpt, SenderAction: actionMarkSeen})
		if typing {
			bodies = append(bodies, &fbMessage{Recipient: rcpt, SenderAction: actionTypingOn})
		}
	default:
		return invalid("unknown channel %q", m.Channel)
	}
	if s == nil || s.AccountID == "" || s.AccessToken == "" {
		return notConfigured(m.Channel)
	}
	for _, b := range bodies {
		raw, err := json.Marshal(b)
		if err != nil {
			return invalid("%v", err)
		}
		if _, _, err := p.do(ctx, http.MethodPost, p.base+url.PathEscape(s.AccountID)+"/messages", s.AccessToken, raw); err != nil {
			return err
		}
	}
	return nil
}
