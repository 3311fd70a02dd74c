package messaging

import (
	"context"
	"crypto/cipher"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
)

// Channels.
const (
	ChannelWhatsApp  = "whatsapp"
	ChannelInstagram = "instagram"
	ChannelMessenger = "messenger"
)

// Channels lists every channel the service supports.
func Channels() []string { return []string{ChannelWhatsApp, ChannelInstagram, ChannelMessenger} }

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
// -> read, and failed from any of queued, sent or delivered.
const (
	StatusQueued    = "queued"
	StatusSent      = "sent"
	StatusDelivered = "delivered"
	StatusRead      = "read"
	StatusFailed    = "failed"
)

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

// Options configure a Service. A nil *Options means all defaults.
type Options struct {
	// Clock returns the current time. Default: time.Now.
	Clock func() time.Time
	// Sleep is how the background workers wait after a failed claim and
	// between retries of a failed outcome write: it waits d or until ctx is
	// done (then it returns ctx's error). Default: a timer. Tests that
	// inject Clock pass one that advances their clock instead.
	Sleep func(ctx context.Context, d time.Duration) error
	// Logger receives the service's logs. Default: a logger that discards.
	Logger *slog.Logger
	// Dispatch configures the dispatcher started by Start.
	Dispatch DispatchOptions
	// Webhooks configures the delivery of events to webhook endpoints.
	Webhooks WebhookOptions
	// SecretKey is a 32-byte key that encrypts webhook signing secrets at
	// rest (AES-256-GCM). Required to create webhook endpoints and to
	// deliver to them; keep it outside the database.
	SecretKey []byte
	// PendingReportRetention is how long a provider's status report about
	// a provider message id that no message carries yet is kept, waiting
	// for the dispatcher to record that id (Meta may report a message
	// delivered before its answer to the send is recorded; see
	// Service.ApplyProviderStatus). Older reports are discarded. At most
	// MaxPendingReports reports are kept per id. Zero or negative means
	// the default: DefaultPendingReportRetention (24 h).
	PendingReportRetention time.Duration
}

// Service is the messaging service. It is safe for concurrent use.
type Service struct {
	store    Store
	provider Provider
	now      func() time.Time
	log      *slog.Logger
	events   *eventBus
	aead     cipher.AEAD
	dispatch *dispatcher
	hooks    *webhookSender
	// retention is Options.PendingReportRetention with its default.
	retention time.Duration

	runMu sync.Mutex
	stop  chan struct{}
	done  chan struct{}
}

// New returns a Service over store and provider. Both are required.
func New(store Store, provider Provider, opts *Options) (*Service, error) {
	if store == nil {
		return nil, fmt.Errorf("messaging: New: store is nil")
	}
	if provider == nil {
		return nil, fmt.Errorf("messaging: New: provider is nil")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.PendingReportRetention <= 0 {
		o.PendingReportRetention = DefaultPendingReportRetention
	}
	s := &Service{store: store, provider: provider, now: func() time.Time { return o.Clock().UTC() }, log: o.Logger, events: &eventBus{},
		retention: o.PendingReportRetention}
	if o.SecretKey != nil {
		aead, err := newAEAD(o.SecretKey)
		if err != nil {
			return nil, err
		}
		s.aead = aead
	}
	s.dispatch = newDispatcher(s, o.Dispatch)
	s.hooks = newWebhookSender(s, o.Webhooks)
	if o.Sleep != nil {
		s.dispatch.sleep, s.hooks.sleep = o.Sleep, o.Sleep
	}
	return s, nil
}

// Store returns the store the service runs on.
func (s *Service) Store() Store { return s.store }

// Now returns the service clock's current time in UTC.
func (s *Service) Now() time.Time { return s.now() }

// Workspace is a handle on one workspace. Its Messages, Contacts and
// Templates only see the data of that workspace: an id of another workspace
// is not found. Creating a handle does no I/O and does not check that the
// workspace exists.
type Workspace struct {
	// ID is the workspace id.
	ID string
	// Messages sends and reads messages.
	Messages *Messages
	// Contacts creates, lists, reads and updates contacts.
	Contacts *Contacts
	// Templates lists and reads templates and manages their review state.
	Templates *Templates
}

// Workspace returns a handle on the workspace with the given id.
func (s *Service) Workspace(id string) *Workspace {
	return &Workspace{
		ID:        id,
		Messages:  &Messages{svc: s, ws: id},
		Contacts:  &Contacts{svc: s, ws: id},
		Templates: &Templates{svc: s, ws: id},
	}
}

// Message is a message record.
type Message struct {
	ID             string          `json:"message_id"`
	WorkspaceID    string          `json:"-"`
	ConversationID string          `json:"conversation_id"`
	Channel        string          `json:"channel"`
	To             string          `json:"to"`
	Direction      string          `json:"direction"`
	Status         string          `json:"status"`
	FailureReason  string          `json:"failure_reason,omitempty"`
	Type           string          `json:"type"`
	Text           string          `json:"text,omitempty"`
	MediaURL       string          `json:"media_url,omitempty"`
	Caption        string          `json:"caption,omitempty"`
	Filename       string          `json:"filename,omitempty"`
	TemplateName   string          `json:"template_name,omitempty"`
	Language       string          `json:"language,omitempty"`
	Components     []SendComponent `json:"components,omitempty"`
	// IdempotencyKey is the caller's key, empty when none was given.
	IdempotencyKey string `json:"-"`
	// RequestHash fingerprints the request that created the message, so a
	// reused idempotency key with a different request is detected.
	RequestHash string `json:"-"`
	// ProviderMessageID is the channel provider's id, once sent.
	ProviderMessageID string `json:"-"`
	// DueAt is when the dispatcher may next claim the message: its accept
	// time, a retry time, or the end of the lease of the worker holding it.
	// Only queued outbound messages are claimed.
	DueAt time.Time `json:"-"`
	// LeaseOwner names the dispatcher worker holding the message while it
	// is being handed to the provider; empty when none.
	LeaseOwner string `json:"-"`
	// Attempts counts the hand-overs to the provider started so far.
	Attempts int `json:"-"`
	// LastError is the error of the last failed attempt, kept while the
	// message waits for a retry.
	LastError string    `json:"-"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
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
	return &c
}

// SendResult is what a send returns: the five fields of the spec's send
// response, and whether the call replayed an earlier send with the same
// idempotency key.
type SendResult struct {
	MessageID      string `json:"message_id"`
	ConversationID string `json:"conversation_id"`
	Status         string `json:"status"`
	Channel        string `json:"channel"`
	To             string `json:"to"`
	// Replayed is true when the result is that of an earlier request with
	// the same idempotency key; no new message was created.
	Replayed bool `json:"-"`
}

// SendParams are the fields of a standard (non-template) send.
type SendParams struct {
	Channel        string `json:"channel"`
	To             string `json:"to"`
	Type           string `json:"type"`
	Text           string `json:"text,omitempty"`
	MediaURL       string `json:"media_url,omitempty"`
	Caption        string `json:"caption,omitempty"`
	Filename       string `json:"filename,omitempty"`
	IdempotencyKey string `json:"idempotency_key,omitempty"`

	// TemplateName, Language and Components are never accepted by Send:
	// they exist so that a request decoded from JSON that carries template
	// fields is refused with a validation error naming the template
	// endpoint. Use SendTemplate.
	TemplateName string          `json:"template_name,omitempty"`
	Language     string          `json:"language,omitempty"`
	Components   []SendComponent `json:"components,omitempty"`
}

// Messages sends and reads the messages of one workspace.
type Messages struct {
	svc *Service
	ws  string
}

var scopedIDRe = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// validateRecipient checks to for the channel and returns its canonical form.
// WhatsApp needs E.164; Instagram and Messenger take E.164 or a page-scoped id
// of 1 to 64 letters, digits, '_' or '-'.
func validateRecipient(channel, to string) (string, error) {
	if to == "" {
		return "", validationError("to", "is required")
	}
	if strings.HasPrefix(to, "+") || channel == ChannelWhatsApp {
		p, err := NormalizePhone(to)
		if err != nil {
			return "", validationError("to", "must be a phone number in E.164 format (for example +14155550123) on channel %s", channel)
		}
		return p, nil
	}
	if !scopedIDRe.MatchString(to) {
		return "", validationError("to", "must be an E.164 phone number or a %s-scoped id of 1 to 64 letters, digits, '_' or '-'", channel)
	}
	return to, nil
}

func validateChannel(ch string) error {
	switch ch {
	case ChannelWhatsApp, ChannelInstagram, ChannelMessenger:
		return nil
	case "":
		return validationError("channel", "is required")
	}
	return validationError("channel", "must be one of whatsapp, instagram, messenger (got %q)", ch)
}

func maxText(channel string) int {
	switch channel {
	case ChannelMessenger:
		return MaxTextMessenger
	case ChannelInstagram:
		return MaxTextInstagram
	}
	return MaxTextWhatsApp
}

// validateHTTPURL checks that s is an absolute http or https URL.
func validateHTTPURL(field, s string) error {
	if len(s) > MaxURL {
		return validationError(field, "must be at most %d characters", MaxURL)
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return validationError(field, "must be an absolute http or https URL")
	}
	return nil
}

func validateIdempotencyKey(k string) error {
	if len(k) > MaxIdempotencyKey {
		return validationError("idempotency_key", "must be at most %d characters", MaxIdempotencyKey)
	}
	for _, r := range k {
		if r < 0x20 || r > 0x7e {
			return validationError("idempotency_key", "must contain only visible ASCII characters and spaces")
		}
	}
	return nil
}

// checkLen refuses a text longer than max characters. Its UTF-8 and NUL
// are checked before, for every field of a write, by refuseUnstorable.
func checkLen(field, s string, max int) error {
	if n := utf8.RuneCountInString(s); n > max {
		return validationError(field, "must be at most %d characters (got %d)", max, n)
	}
	return nil
}

func (p *SendParams) validate() (to string, err error) {
	if p.TemplateName != "" || p.Language != "" || len(p.Components) > 0 {
		f := "template_name"
		if p.TemplateName == "" {
			f = "language"
			if p.Language == "" {
				f = "components"
			}
		}
		return "", validationError(f, "template fields are not accepted by POST /v1/messages; send templates with POST /v1/messages/templates")
	}
	if err := validateChannel(p.Channel); err != nil {
		return "", err
	}
	to, err = validateRecipient(p.Channel, p.To)
	if err != nil {
		return "", err
	}
	switch p.Type {
	case TypeText:
		if strings.TrimSpace(p.Text) == "" {
			return "", validationError("text", "is required when type is text")
		}
		if err := checkLen("text", p.Text, maxText(p.Channel)); err != nil {
			return "", err
		}
		for f, v := range map[string]string{"media_url": p.MediaURL, "caption": p.Caption, "filename": p.Filename} {
			if v != "" {
				return "", validationError(f, "is not allowed when type is text")
			}
		}
	case TypeImage, TypeVideo, TypeDocument, TypeAudio:
		if p.MediaURL == "" {
			return "", validationError("media_url", "is required when type is %s", p.Type)
		}
		if err := validateHTTPURL("media_url", p.MediaURL); err != nil {
			return "", err
		}
		if p.Text != "" {
			return "", validationError("text", "is only allowed when type is text; use caption for image or video")
		}
		if p.Caption != "" {
			if p.Type != TypeImage && p.Type != TypeVideo {
				return "", validationError("caption", "is only allowed for image or video")
			}
			if err := checkLen("caption", p.Caption, MaxCaption); err != nil {
				return "", err
			}
		}
		if p.Filename != "" {
			if p.Type != TypeDocument {
				return "", validationError("filename", "is only allowed for document")
			}
			if err := checkLen("filename", p.Filename, MaxFilename); err != nil {
				return "", err
			}
			if strings.ContainsAny(p.Filename, "/\\") {
				return "", validationError("filename", "must not contain path separators")
			}
		}
	case "":
		return "", validationError("type", "is required")
	default:
		return "", validationError("type", "must be one of text, image, video, document, audio (got %q)", p.Type)
	}
	if err := validateIdempotencyKey(p.IdempotencyKey); err != nil {
		return "", err
	}
	return to, nil
}

// Send validates and accepts a standard message. The message is stored as
// queued and delivered asynchronously. With an IdempotencyKey, repeating the
// same request returns the original result (Replayed true) and creates
// nothing; the same key with a different request is a conflict.
func (m *Messages) Send(ctx context.Context, p *SendParams) (*SendResult, error) {
	if p == nil {
		return nil, validationError("body", "is required")
	}
	if err := refuseUnstorable(p); err != nil {
		return nil, err
	}
	to, err := p.validate()
	if err != nil {
		return nil, err
	}
	msg := &Message{
		Channel: p.Channel, To: to, Type: p.Type, Text: p.Text,
		MediaURL: p.MediaURL, Caption: p.Caption, Filename: p.Filename,
		IdempotencyKey: p.IdempotencyKey,
	}
	norm := *p
	norm.To, norm.IdempotencyKey = to, ""
	return m.accept(ctx, msg, "send", &norm)
}

// accept stores a validated outbound message as queued, honouring the
// idempotency key.
func (m *Messages) accept(ctx context.Context, msg *Message, kind string, canonical any) (*SendResult, error) {
	if msg.IdempotencyKey != "" {
		b, err := json.Marshal(canonical)
		if err != nil {
			return nil, &Error{Code: CodeInternal, Message: "internal error", Err: err}
		}
		sum := sha256.Sum256(append([]byte(kind+"\x00"), b...))
		msg.RequestHash = hex.EncodeToString(sum[:])
	}
	if err := m.acceptable(ctx, msg, kind); err != nil {
		// A repeated request answers as the first did, whatever changed
		// since (a channel disconnected, a template paused). Otherwise the
		// store tells a repeat from a new message as it inserts.
		if msg.IdempotencyKey != "" {
			prev, lerr := m.svc.store.MessageGetByIdempotencyKey(ctx, m.ws, msg.IdempotencyKey)
			if lerr == nil {
				return m.replayed(prev, msg.RequestHash)
			}
			if !errors.Is(lerr, ErrNotFound) {
				return nil, wrapStoreError(lerr, "message", "")
			}
		}
		return nil, err
	}
	now := m.svc.now()
	msg.ID = NewID("msg")
	msg.WorkspaceID = m.ws
	msg.ConversationID = ConversationID(m.ws, msg.Channel, msg.To)
	msg.Direction = DirectionOutbound
	msg.Status = StatusQueued
	msg.CreatedAt, msg.UpdatedAt, msg.DueAt = now, now, now
	stored, created, err := m.svc.store.MessageCreate(ctx, msg)
	if err != nil {
		return nil, wrapStoreError(err, "message", msg.ID)
	}
	if !created {
		return m.replayed(stored, msg.RequestHash)
	}
	m.svc.dispatch.notify()
	return sendResult(stored, false), nil
}

// acceptable checks what may refuse a new message: a template that is not
// approved, a channel that is not connected.
func (m *Messages) acceptable(ctx context.Context, msg *Message, kind string) error {
	if kind == "template" {
		if err := m.checkTemplate(ctx, msg); err != nil {
			return err
		}
	}
	return m.svc.requireChannel(ctx, m.ws, msg.Channel)
}

// replayed answers a request whose idempotency key created prev: the
// original result, or a conflict when the request differs.
func (m *Messages) replayed(prev *Message, hash string) (*SendResult, error) {
	if prev.RequestHash != hash {
		return nil, &Error{Code: CodeConflict, Field: "idempotency_key",
			Message: "idempotency_key: was already used with a different request; use a new key for a new message"}
	}
	return sendResult(prev, true), nil
}

// sendResult is the send response of m: the status is always queued, the
// status the message was accepted with.
func sendResult(m *Message, replayed bool) *SendResult {
	return &SendResult{MessageID: m.ID, ConversationID: m.ConversationID, Status: StatusQueued,
		Channel: m.Channel, To: m.To, Replayed: replayed}
}

// Get returns a message of the workspace.
func (m *Messages) Get(ctx context.Context, id string) (*Message, error) {
	if badID(id) {
		return nil, notFound("message", id)
	}
	msg, err := m.svc.store.MessageGet(ctx, m.ws, id)
	if err != nil {
		return nil, wrapStoreError(err, "message", id)
	}
	return msg, nil
}

// requireChannel returns channel_unavailable unless the channel is connected
// in the workspace.
func (s *Service) requireChannel(ctx context.Context, ws, channel string) error {
	w, err := s.store.WorkspaceGet(ctx, ws)
	if err != nil {
		return wrapStoreError(err, "workspace", ws)
	}
	for _, c := range w.Channels {
		if c == channel {
			return nil
		}
	}
	return &Error{Code: CodeChannelUnavailable, Field: "channel",
		Message: fmt.Sprintf("channel: %s is not connected in this workspace", channel)}
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

// statusFrom lists the statuses a message may move to status from.
func statusFrom(status string) []string {
	switch status {
	case StatusSent:
		return []string{StatusQueued}
	case StatusDelivered:
		return []string{StatusQueued, StatusSent}
	case StatusRead:
		return []string{StatusQueued, StatusSent, StatusDelivered}
	case StatusFailed:
		return []string{StatusQueued, StatusSent, StatusDelivered}
	}
	return nil
}

// StatusUpdate is a status change reported for a message by the dispatcher
// or by the channel provider's callback.
type StatusUpdate struct {
	WorkspaceID string
	MessageID   string
	// Status is sent, delivered, read or failed.
	Status string
	// ProviderCode and ProviderText describe a failure; the message's
	// failure_reason becomes "[<ProviderCode>] <ProviderText>".
	ProviderCode string
	ProviderText string
	// ProviderMessageID, when set, is recorded on the message.
	ProviderMessageID string
}

// checkStatus validates a reported status: one of sent, delivered, read
// and failed, and for failed a provider code.
func checkStatus(status, providerCode string) error {
	if statusFrom(status) == nil {
		return validationError("status", "must be one of sent, delivered, read, failed (got %q)", status)
	}
	if status == StatusFailed && providerCode == "" {
		return validationError("provider_code", "is required when status is failed")
	}
	return nil
}

// UpdateStatus applies a status change under the status rules: statuses
// only move forward, failed is reachable from any non-terminal status, and an
// out-of-order update (delivered after read) is ignored without error. It
// reports whether the status changed; each change emits a
// message.status_updated event to subscribers.
//
// A change that records u.ProviderMessageID (the dispatcher's queued ->
// sent) then applies, in the order they arrived, the provider's reports
// about that id that came before it and were kept (see
// ApplyProviderStatus); a failure to apply them is logged, since the
// change itself is done.
func (s *Service) UpdateStatus(ctx context.Context, u *StatusUpdate) (bool, error) {
	if err := refuseUnstorable(u); err != nil {
		return false, err
	}
	if err := checkStatus(u.Status, u.ProviderCode); err != nil {
		return false, err
	}
	from := statusFrom(u.Status)
	var reason string
	if u.Status == StatusFailed {
		reason = FailureReason(u.ProviderCode, u.ProviderText)
	}
	now := s.now()
	var ev *Event
	_, _, changed, err := s.store.MessageUpdateStatus(ctx, &MessageStatusParams{
		WorkspaceID: u.WorkspaceID, ID: u.MessageID, From: from, To: u.Status,
		FailureReason: reason, ProviderMessageID: u.ProviderMessageID, At: now,
		Event: func(before, after *Message) *EventRecord {
			ev = statusEvent(before, after, now)
			rec, err := ev.record()
			if err != nil {
				s.log.Error("encoding event failed", "err", err)
				return nil
			}
			return rec
		},
	})
	if err != nil {
		return false, wrapStoreError(err, "message", u.MessageID)
	}
	if changed && ev != nil {
		s.hooks.notify()
		s.events.publish(ctx, ev)
	}
	if changed && u.ProviderMessageID != "" {
		if _, err := s.applyPending(ctx, u.WorkspaceID, u.MessageID, u.ProviderMessageID); err != nil {
			s.log.ErrorContext(ctx, "applying the status reports kept for a provider message id failed",
				"message_id", u.MessageID, "provider_message_id", u.ProviderMessageID, "err", err)
		}
	}
	return changed, nil
}

// statusEvent builds the message.status_updated event of a change.
func statusEvent(before, after *Message, now time.Time) *Event {
	return &Event{
		ID: NewID("evt"), Type: EventMessageStatusUpdated, CreatedAt: now,
		WorkspaceID: after.WorkspaceID, MessageID: after.ID,
		Data: StatusEventData{
			MessageID: after.ID, ConversationID: after.ConversationID, Channel: after.Channel,
			To: after.To, Status: after.Status, PreviousStatus: before.Status,
			FailureReason: after.FailureReason, UpdatedAt: after.UpdatedAt,
		},
	}
}

// record returns the event as stored for webhook delivery.
func (e *Event) record() (*EventRecord, error) {
	b, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	return &EventRecord{ID: e.ID, WorkspaceID: e.WorkspaceID, MessageID: e.MessageID, Type: e.Type, Payload: b, CreatedAt: e.CreatedAt}, nil
}

// MarshalJSON implements json.Marshaler: the event as delivered to webhook
// endpoints, its times written with FormatTime.
func (e Event) MarshalJSON() ([]byte, error) {
	type data struct {
		MessageID      string   `json:"message_id"`
		ConversationID string   `json:"conversation_id"`
		Channel        string   `json:"channel"`
		To             string   `json:"to"`
		Status         string   `json:"status"`
		PreviousStatus string   `json:"previous_status"`
		FailureReason  string   `json:"failure_reason,omitempty"`
		UpdatedAt      jsonTime `json:"updated_at"`
	}
	d := e.Data
	return json.Marshal(struct {
		ID        string   `json:"id"`
		Type      string   `json:"type"`
		CreatedAt jsonTime `json:"created_at"`
		Data      data     `json:"data"`
	}{
		ID: e.ID, Type: e.Type, CreatedAt: jsonTime(e.CreatedAt),
		Data: data{
			MessageID: d.MessageID, ConversationID: d.ConversationID, Channel: d.Channel, To: d.To,
			Status: d.Status, PreviousStatus: d.PreviousStatus, FailureReason: d.FailureReason,
			UpdatedAt: jsonTime(d.UpdatedAt),
		},
	})
}

// FailureReason formats a provider error as the spec's failure_reason:
// "[<provider_code>] <provider text>".
func FailureReason(code, text string) string {
	return "[" + code + "] " + text
}

// Event kinds.
const (
	// EventMessageStatusUpdated is announced on every message status change.
	EventMessageStatusUpdated = "message.status_updated"
)

// Event is an event announced to subscribers. Its JSON form (the body of
// a webhook delivery) writes times with FormatTime, like the REST API.
type Event struct {
	ID          string          `json:"id"`
	Type        string          `json:"type"`
	CreatedAt   time.Time       `json:"created_at"`
	WorkspaceID string          `json:"-"`
	MessageID   string          `json:"-"`
	Data        StatusEventData `json:"data"`
}

// StatusEventData is the payload of a message.status_updated event.
type StatusEventData struct {
	MessageID      string    `json:"message_id"`
	ConversationID string    `json:"conversation_id"`
	Channel        string    `json:"channel"`
	To             string    `json:"to"`
	Status         string    `json:"status"`
	PreviousStatus string    `json:"previous_status"`
	FailureReason  string    `json:"failure_reason,omitempty"`
	UpdatedAt      time.Time `json:"updated_at"`
}

// eventBus fans events out to in-process subscribers.
type eventBus struct {
	mu   sync.RWMutex
	next int
	subs map[int]func(context.Context, *Event)
}

func (b *eventBus) publish(ctx context.Context, e *Event) {
	b.mu.RLock()
	fns := make([]func(context.Context, *Event), 0, len(b.subs))
	for _, f := range b.subs {
		fns = append(fns, f)
	}
	b.mu.RUnlock()
	for _, f := range fns {
		f(ctx, e)
	}
}

// Subscribe registers fn to receive every event of the service, in the
// goroutine that caused it, after the change is stored. fn must not block
// for long. The returned function unsubscribes.
func (s *Service) Subscribe(fn func(context.Context, *Event)) (unsubscribe func()) {
	b := s.events
	b.mu.Lock()
	if b.subs == nil {
		b.subs = map[int]func(context.Context, *Event){}
	}
	id := b.next
	b.next++
	b.subs[id] = fn
	b.mu.Unlock()
	return func() {
		b.mu.Lock()
		delete(b.subs, id)
		b.mu.Unlock()
	}
}
