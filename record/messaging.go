package record

import (
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
)

// The channels of the spec. A service serves the channels its provider
// declares (see messaging.ChannelProvider); these are the names the spec gives Meta's
// three, and WhatsApp is the channel of templates.
const (
	ChannelWhatsApp  = "whatsapp"
	ChannelInstagram = "instagram"
	ChannelMessenger = "messenger"
)

// Message types.
const (
	TypeText     = "text"
	TypeImage    = "image"
	TypeVideo    = "video"
	TypeDocument = "document"
	TypeAudio    = "audio"
	TypeTemplate = "template"
)

// Message statuses. Statuses only move forward: queued -> sent -> delivered
// -> read, and failed from any of queued, sent or delivered. Canceled,
// an addition to the spec's statuses, is reached only from queued, by a
// cancel (messaging.Messages.Cancel) of a message no worker has begun to
// hand over; like failed and read it is final.
const (
	StatusQueued    = "queued"
	StatusSent      = "sent"
	StatusDelivered = "delivered"
	StatusRead      = "read"
	StatusFailed    = "failed"
	StatusCanceled  = "canceled"
)

// MaxSendAhead is how far ahead of the service's clock a scheduled send's
// SendAt may be.
const MaxSendAhead = 35 * 24 * time.Hour

// SendAtTolerance is how far in the past a scheduled send's SendAt may be
// (a clock a little behind the service's, a request that took a while):
// such a send is due at once. Earlier than that is refused.
const SendAtTolerance = time.Minute

// Message directions.
const (
	DirectionOutbound = "outbound"
	DirectionInbound  = "inbound"
)

// Text length limits per channel, in characters (runes), as documented by the
// channel providers: WhatsApp text bodies hold 4,096 characters, Messenger
// texts 2,000 and Instagram texts 1,000. Captions hold 1,024 characters.
const (
	MaxTextWhatsApp   = 4096
	MaxTextMessenger  = 2000
	MaxTextInstagram  = 1000
	MaxCaption        = 1024
	MaxFilename       = 240
	MaxIdempotencyKey = 255
	MaxURL            = 2048
)

// Message is a message record. To is the conversation's peer: the
// recipient of an outbound message, the sender of an inbound one (see
// From).
type Message struct {
	ID             string
	WorkspaceID    string
	ConversationID string
	Channel        string
	To             string
	Direction      string
	Status         string
	FailureReason  string
	Type           string
	Text           string
	MediaURL       string
	Caption        string
	Filename       string
	TemplateName   string
	Language       string
	Components     []SendComponent
	// Content is the rich content of an inbound message (media,
	// location, contacts, reply, reaction, context); nil on outbound
	// messages and on inbound texts that quote nothing.
	Content *InboundContent
	// Outbound is the rich content of an outbound message (interactive,
	// location, contacts, reaction, uploaded media, the message it
	// quotes); nil on inbound messages and on outbound ones that carry
	// none of it.
	Outbound *OutboundContent
	// ReadAt is when the business marked an inbound message read at the
	// provider (Messages.MarkRead); nil until then and on outbound
	// messages.
	ReadAt *time.Time
	// SendAt is when a scheduled outbound message is to be handed over
	// (the send's send_at, in UTC); nil for a message sent as soon as
	// possible. The accept sets DueAt to it, so no claim takes the
	// message before then.
	SendAt *time.Time
	// IdempotencyKey is the caller's key, empty when none was given.
	IdempotencyKey string
	// RequestHash fingerprints the request that created the message, so a
	// reused idempotency key with a different request is detected.
	RequestHash string
	// ProviderMessageID is the channel provider's id, once sent.
	ProviderMessageID string
	// DueAt is when the dispatcher may next claim the message: its accept
	// time (its SendAt when scheduled later), a retry time, or the end of
	// the lease of the worker holding it.
	// Only queued outbound messages are claimed.
	DueAt time.Time
	// LeaseOwner names the dispatcher worker holding the message while it
	// is being handed to the provider; empty when none.
	LeaseOwner string
	// Attempts counts the hand-overs to the provider started so far (and
	// the claim that fails a message whose outcome stayed unknown through
	// its confirmation window).
	Attempts int
	// LastError is the error of the last failed attempt, kept while the
	// message waits for a retry.
	LastError string
	// UnconfirmedSince, when set, is the start of a hand-over to the
	// provider whose outcome is not recorded: the message may have been
	// sent. The claim that begins a hand-over sets it (when it is not set
	// already), so a process that dies mid-send leaves the mark behind; a
	// recorded outcome (a status change, a release after a refusal)
	// clears it. A later claim of a marked message does not send it before
	// the provider confirms it or the confirmation window ends (see
	// messaging.DispatchOptions.ConfirmWindow).
	UnconfirmedSince *time.Time
	// History is every change of Status after the message was stored,
	// oldest first (see driver.Store.MessageUpdateStatuses).
	History []StatusChange
	// TraceParent is the W3C trace context (traceparent) of the span that
	// accepted the message, so the dispatcher's span continues its trace;
	// empty when no trace was recorded. It holds no personal data.
	TraceParent string
	CreatedAt   time.Time
	UpdatedAt   time.Time
	// Fallback is the SMS fallback of a template send, nil when it has
	// none. Stores keep it apart from the message (Store.MessageFallbacks
	// reads it); their message reads leave it nil.
	Fallback *SMSFallback
}

// Clone returns a deep copy of m: changing the copy's components or
// parameters never changes m.
func (m *Message) Clone() *Message {
	c := *m
	if m.Components != nil {
		c.Components = make([]SendComponent, len(m.Components))
		for i, sc := range m.Components {
			sc.Parameters = slices.Clone(sc.Parameters)
			if sc.Index != nil {
				idx := *sc.Index
				sc.Index = &idx
			}
			c.Components[i] = sc
		}
	}
	c.History = slices.Clone(m.History)
	c.Content = m.Content.Clone()
	c.Outbound = m.Outbound.Clone()
	c.ReadAt = clonePtr(m.ReadAt)
	c.SendAt = clonePtr(m.SendAt)
	c.Fallback = m.Fallback.Clone()
	if m.UnconfirmedSince != nil {
		t := *m.UnconfirmedSince
		c.UnconfirmedSince = &t
	}
	return &c
}

// NewID returns a new unique, time-ordered identifier with the given prefix,
// for example "msg_0192f1c8a6f47c3ea1d4b5e2f9a0c3d1".
func NewID(prefix string) string {
	u := uuid.Must(uuid.NewV7())
	return prefix + "_" + hex.EncodeToString(u[:])
}

// ConversationID returns the conversation id of every message to recipient
// to on channel in workspace ws. It is derived, so it is the same for every
// message of that triple without any shared state.
func ConversationID(ws, channel, to string) string {
	sum := sha256.Sum256([]byte(ws + "\x00" + channel + "\x00" + to))
	return "conv_" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(sum[:15]))
}
