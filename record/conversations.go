package record

import "time"

// CustomerServiceWindow is how long after a contact's last inbound
// message a free-form (non-template) message may be sent to them: the 24
// hours of WhatsApp's customer-service window (Messenger's and Instagram's
// standard messaging windows are 24 hours too).
const CustomerServiceWindow = 24 * time.Hour

// Conversation is the thread of a workspace with one contact on one
// channel: every message sent to To and received from To on Channel.
// The store keeps it up to date as messages are created.
type Conversation struct {
	ID          string
	WorkspaceID string
	Channel     string
	// To is the contact's address on the channel (E.164 on WhatsApp).
	To string
	// LastMessage is the newest message of the conversation (by creation
	// time, then id).
	LastMessage *Message
	// LastMessageAt is the CreatedAt of LastMessage: the conversation's
	// last activity.
	LastMessageAt time.Time
	// LastInboundAt is when the last inbound message of the conversation
	// was created; zero when the contact never wrote.
	LastInboundAt time.Time
	// Contact is the workspace's contact whose phone is To, if any
	// (WhatsApp conversations only); filled by messaging.Conversations.List.
	Contact *Contact
}

// WindowExpiresAt returns when the customer-service window of the
// conversation ends (CustomerServiceWindow after the last inbound
// message), or the zero time when the contact never wrote.
func (c *Conversation) WindowExpiresAt() time.Time {
	if c.LastInboundAt.IsZero() {
		return time.Time{}
	}
	return c.LastInboundAt.Add(CustomerServiceWindow)
}
