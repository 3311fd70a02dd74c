package messaging

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"
)

// Provider is the channel provider the service hands accepted messages to
// (WhatsApp Cloud API, Messenger, Instagram, or a simulator). Implementations
// live in sub-packages such as provider/fakeprovider.
type Provider interface {
	// Send hands one outbound message to the channel provider as the
	// sender s and returns the provider's message id. s is the workspace's
	// connection on m's channel, resolved by the dispatcher (see
	// Service.ChannelSender): its account and access token; nil when the
	// channel is connected without credentials (enough for a simulator)
	// or not at all, and a provider that needs credentials then refuses
	// the message. A failure is reported as *SendError; any other error is
	// treated as a retryable transport failure.
	Send(ctx context.Context, s *ChannelSender, m *Message) (*SendReceipt, error)
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
	// Credentials reports that the provider refused the credentials of
	// the workspace's connection (Meta's code 190: the access token is
	// invalid or expired). The service marks the connection
	// ConnectionError with Text as the reason.
	Credentials bool
	// Throttled reports that the provider refused the send because the
	// sender (the phone number, page, account or upstream account) is over
	// its throughput (HTTP 429, Meta's 130429 and 80007), not because of
	// this message: the dispatcher pauses every send of that sender for
	// RetryAfter (at least DispatchOptions.InitialBackoff) instead of
	// backing off this message alone.
	Throttled bool
	// Unknown reports that the request may have reached the provider and
	// no answer came (a timeout or a connection lost after the request was
	// written): the outcome is unknown, and the message is not sent again
	// before the provider confirms it or the confirmation window ends (see
	// DispatchOptions.ConfirmWindow). The dispatcher also treats a Send
	// that ends with its context's deadline as unknown.
	Unknown bool
}

// Error implements the error interface.
func (e *SendError) Error() string {
	return fmt.Sprintf("provider error %s", FailureReason(e.Code, e.Text))
}

// ChannelSender is the identity a provider sends as for one workspace on
// one channel: the account of its connection and the access token in
// clear. It is handed to providers only; String and LogValue never show
// the token.
type ChannelSender struct {
	WorkspaceID string
	Channel     string
	// AccountID is the connection's account id (ChannelSpec.Account: the
	// phone-number id, page id or Instagram account id).
	AccountID string
	// WABAID is the id of the account's owner, on a channel that has one
	// (ChannelSpec.Owner: the WhatsApp Business Account id).
	WABAID string
	// AccessToken is the token to send with.
	AccessToken string
	// Generation is the connection's Generation when it was read.
	Generation int64
}

// String describes the sender without its token.
func (s *ChannelSender) String() string {
	return "ChannelSender(" + s.Channel + ", " + s.AccountID + ", token redacted)"
}

// GoString describes the sender without its token, for %#v.
func (s *ChannelSender) GoString() string { return s.String() }

// LogValue logs the sender without its token.
func (s *ChannelSender) LogValue() slog.Value {
	return slog.GroupValue(slog.String("channel", s.Channel), slog.String("account_id", s.AccountID),
		slog.String("access_token", "[redacted]"))
}

// ProviderTemplate is a template as the channel provider knows it.
type ProviderTemplate struct {
	// ID is the provider's template id.
	ID       string
	Name     string
	Language string
	Category string
	// Status is the provider's own review status (Meta's APPROVED,
	// PENDING, REJECTED, PAUSED, DISABLED, ...); see TemplateEventState
	// for how it maps to the review states.
	Status string
	// Reason is the rejection or pause reason, when there is one.
	Reason string
	// Quality is the provider's quality rating (GREEN, YELLOW, RED,
	// UNKNOWN), when known.
	Quality    string
	Components []TemplateComponent
}

// TemplateManager is an optional capability of a Provider that reviews
// templates: the service submits templates to it and deletes them there.
// The sender is the workspace's WhatsApp connection; it is nil when the
// channel is connected without credentials (enough for a simulator).
// Errors are *SendError where the provider answered (with Credentials set
// for refused credentials), any other error a transport failure.
type TemplateManager interface {
	// SubmitTemplate submits t for review and returns the provider's
	// record of it (its id and initial status).
	SubmitTemplate(ctx context.Context, s *ChannelSender, t *Template) (*ProviderTemplate, error)
	// DeleteTemplate deletes t from the sender's account: the one
	// language t.ProviderTemplateID names when it is set, else every
	// language of t.Name (Meta deletes by name). A template the provider
	// does not know is not an error.
	DeleteTemplate(ctx context.Context, s *ChannelSender, t *Template) error
}

// TemplateLister is an optional capability of a Provider that lists the
// templates of an account, so that the service can refresh its cached
// list (see Service.SyncTemplates). The provider's list is the truth: a
// template it does not list is removed from the cache. Errors are as for
// TemplateManager.
type TemplateLister interface {
	// ListTemplates returns every template of the sender's account (all
	// pages).
	ListTemplates(ctx context.Context, s *ChannelSender) ([]*ProviderTemplate, error)
}

// ChannelProvider is an optional capability of a Provider that declares
// the channels it serves. The service serves the channels its provider
// declares, and consults their specs for every rule that differs by
// channel; New refuses a provider that declares none (register such a
// provider for its channels with a ProviderMux).
type ChannelProvider interface {
	// Channels returns the specs of the channels the provider serves, in
	// the order the service lists them.
	Channels() []ChannelSpec
}

// ChannelSpec describes a channel: its name, how the accounts of its
// connections are named and checked, and the rules of its messages.
type ChannelSpec struct {
	// Name is the channel's name in the API, for example "whatsapp": 1 to
	// 32 lower-case letters, digits or '_', starting with a letter.
	Name string
	// Label is the channel's name as people write it (the dashboard), for
	// example "WhatsApp"; empty means Name.
	Label string
	// Account is the field of a connection's account id
	// (ChannelConnection.AccountID), the account the provider sends from
	// and reports about, for example WhatsApp's "phone_number_id". Its
	// Name is required.
	Account ChannelField
	// Owner, when its Name is set, is the required field of the id of
	// the account's owner (ChannelConnection.WABAID), for example
	// WhatsApp's "waba_id", the WhatsApp Business Account that holds the
	// number and its templates. At most one workspace's verified
	// connection holds an owner id, as for an account id. When it is not
	// set, an owner id is refused on the channel.
	Owner ChannelField
	// Display, when its Name is set, is the optional field of the
	// account's phone number as customers see it
	// (ChannelConnection.DisplayPhoneNumber), for example WhatsApp's
	// "display_phone_number"; the service normalises it to E.164 (its
	// Check is not used). When it is not set, a display number is refused
	// on the channel.
	Display ChannelField
	// MaxText is the longest text body, in characters (runes). Required.
	MaxText int
	// PhoneRecipients reports that the channel's recipients are phone
	// numbers only (E.164; an inbound sender given without its '+' gets
	// one, and contacts are matched by phone). Otherwise a recipient is an
	// E.164 number or an id of 1 to 64 letters, digits, '_' or '-' scoped
	// to the channel.
	PhoneRecipients bool
	// Outbound is what the channel carries beyond text and media by link:
	// interactive messages, locations, contact cards, reactions, stickers
	// and quoted replies. A send of something it does not carry is a
	// validation_error naming the field and the channel, never a message
	// sent without it. The zero value carries none of them.
	Outbound OutboundSupport
}

// OutboundSupport is what a channel carries of the rich outbound messages
// (see ChannelSpec.Outbound).
type OutboundSupport struct {
	// Interactive lists the interactive types the channel carries
	// (record.InteractiveTypeButton, InteractiveTypeList,
	// InteractiveTypeCTAURL).
	Interactive []string
	// InteractiveHeader and InteractiveFooter report that an interactive
	// message may carry a header and a footer.
	InteractiveHeader, InteractiveFooter bool
	// MaxInteractiveBody is the longest body of an interactive message
	// in characters; zero means record.MaxInteractiveBody.
	MaxInteractiveBody int
	// Location, Contacts, Reaction and Sticker report that the channel
	// carries messages of those types.
	Location, Contacts, Reaction, Sticker bool
	// ReactionEmoji, when not empty, are the only emoji a reaction may
	// carry on the channel (besides the empty one that removes it).
	ReactionEmoji []string
	// Replies reports that a send may quote a message of its
	// conversation (context.message_id).
	Replies bool
}

// ChannelField describes a credential field of a channel's connections.
type ChannelField struct {
	// Name is the field's name in the management API and in its errors,
	// for example "phone_number_id".
	Name string
	// Label and Hint describe the field in forms (the dashboard), for
	// example "Phone number ID" and "Digits only.".
	Label, Hint string
	// Check returns nil when v is a valid value (it is handed "" for a
	// missing one), else an error whose text is the rule v breaks, as it
	// follows the field's name in a validation error: "must be the
	// account's numeric id (1 to 32 digits)". Nil accepts 1 to 64 visible
	// ASCII characters.
	Check func(v string) error
}

// MediaUpload is a file a provider uploads (see MediaUploader and
// TemplateSampleUploader), checked by the service before the first byte
// is handed over: its kind and MIME type are among the provider's
// documented ones and its first bytes are of that type.
type MediaUpload struct {
	// Kind is the message type it is sent as: image, video, audio,
	// document or sticker.
	Kind     string
	MimeType string
	// Filename is the file name given with the upload, if any.
	Filename string
	// Size is its length in bytes when known, -1 otherwise. The service
	// always knows it for a template sample.
	Size int64
	// Body streams the bytes. A read error (the caller's upload cut off,
	// or past the kind's size limit) must abort the upload: the provider
	// returns that error and keeps nothing.
	Body io.Reader
}

// MediaUploadReceipt is the provider's answer to an upload.
type MediaUploadReceipt struct {
	// ProviderMediaID is the provider's media id (WhatsApp's media id), or
	// the upload handle of a template sample.
	ProviderMediaID string
	// ExpiresAt is when the provider forgets the upload; zero means 30
	// days after it.
	ExpiresAt time.Time
}

// MediaUploader is an optional capability of a Provider that takes media
// uploads to send by id (Meta's POST /{phone-number-id}/media), with the
// workspace's sender. It must stream Body, never holding the whole file.
// Errors are as for Send.
type MediaUploader interface {
	UploadMedia(ctx context.Context, s *ChannelSender, u *MediaUpload) (*MediaUploadReceipt, error)
}

// TemplateSampleUploader is an optional capability of a Provider that
// takes the sample of a template's media header for its reviewers (Meta's
// Resumable Upload API) and returns the handle a template submission
// gives as its header example. Errors are as for Send.
type TemplateSampleUploader interface {
	UploadTemplateSample(ctx context.Context, s *ChannelSender, u *MediaUpload) (*MediaUploadReceipt, error)
}

// ReadMarker is an optional capability of a Provider that marks an
// inbound message read at the provider (WhatsApp's read status, the Send
// API's mark_seen), with a typing indicator when typing is set. m is the
// inbound message; its ProviderMessageID is the provider's id. Marking a
// message read twice is not an error. Errors are as for Send.
type ReadMarker interface {
	MarkRead(ctx context.Context, s *ChannelSender, m *Message, typing bool) error
}
