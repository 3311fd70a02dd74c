// Package metaprovider sends messages through Meta's Graph API: WhatsApp
// through the WhatsApp Cloud API, and Messenger and Instagram through the
// Send API. Its Receiver receives Meta's webhooks for those channels
// (status reports, inbound messages and WhatsApp template events; see
// receive.go). A Provider declares the three channels with Meta's
// vocabulary (ChannelSpecs: phone_number_id, waba_id, page_id,
// instagram_account_id and their rules) and, with Options.Webhook, offers
// its Receiver to the service's host (httpapi mounts it).
//
// WhatsApp messages are posted to {BaseURL}/{Version}/{phone-number-id}/messages
// with messaging_product "whatsapp": text (text.body, preview_url false),
// media (image, video, document, audio by link, with caption and filename
// where the type allows them) and templates (name, language code and
// components: header, body and button components with sub_type and index,
// media header parameters as {type: document, document: {link, filename}}).
// The provider message id is messages[0].id of the answer. Every send
// carries the service's message id as biz_opaque_callback_data, which Meta
// echoes in the message's status webhooks: the Receiver hands it on, so
// that a report confirms a send whose answer never came (see
// messaging.ProviderStatus.MessageID).
//
// Messenger and Instagram messages are posted to
// {BaseURL}/{Version}/{page-id or ig-user-id}/messages with recipient {id}
// (or {phone_number} for an E.164 recipient) and message {text} or
// attachment {type, payload {url}}; a document is sent as a file
// attachment. Attachments carry no caption or filename on these channels, so
// those fields are not sent. Messenger messages are sent with
// messaging_type RESPONSE. The provider message id is message_id. Every
// send carries the service's message id as message.metadata, which Meta
// echoes in the message_echoes webhook.
//
// Rich outbound messages (record.Message.Outbound) map to Meta's payloads
// as follows; the service checks every limit and what each channel
// carries (ChannelSpec.Outbound) before, and what a channel cannot carry
// is refused here too (a permanent CodeInvalidMessage SendError).
//
// On WhatsApp:
//   - interactive: {"type": "interactive", "interactive": {type, header,
//     body {text}, footer {text}, action}}; button: action.buttons
//     [{type "reply", reply {id, title}}]; list: action {button,
//     sections [{title, rows [{id, title, description}]}]}; cta_url:
//     action {name "cta_url", parameters {display_text, url}}. A header is
//     {type "text", text}, or {type "image", image {link}}, and likewise
//     for video and document (a document with its filename), with {id}
//     instead of {link} for uploaded media.
//   - location: location {latitude, longitude, name, address}.
//   - contacts: contacts [{name {formatted_name, first_name, last_name},
//     phones [{phone, type, wa_id}], emails [{email, type}], org
//     {company}}] (formatted_name defaults to the first and last names).
//   - reaction: reaction {message_id: the provider id, emoji}; an empty
//     emoji removes the reaction.
//   - sticker: sticker {link} or {id}; image, video, document, audio and
//     sticker are sent by {id} when Outbound.Media names an upload.
//   - a quoted message (Outbound.Context): context {message_id} on any
//     type.
//
// On Messenger and Instagram, reply buttons are quick replies: message
// {text: body, quick_replies [{content_type "text", title, payload: the
// button id}]}. A Messenger cta_url is a button template: attachment
// {type "template", payload {template_type "button", text: body, buttons
// [{type "web_url", url, title: display_text}]}}. An Instagram reaction is
// the sender action {recipient, sender_action "react", payload
// {message_id, reaction "love"}} (ReactionLove is the only emoji), or
// "unreact" for the empty emoji; Meta answers it without a message id, so
// its provider message id is "reaction:{reacted message id}:{our id}".
// Headers, footers, lists, locations, contacts, stickers, quoted messages
// and uploaded media are not sent on these channels.
//
// MarkRead (messaging.ReadMarker) posts WhatsApp's read status
// {messaging_product, status "read", message_id}, with typing_indicator
// {type "text"} when typing, or the Send API's sender action mark_seen
// (then typing_on) to the customer. UploadMedia (messaging.MediaUploader)
// streams a WhatsApp upload to /{phone-number-id}/media;
// UploadTemplateSample (messaging.TemplateSampleUploader) uses the
// Resumable Upload API with Options.AppID, and SubmitTemplate sends the
// handle it returned as the header_handle example.
//
// The sender (phone-number id, page id or Instagram account id) and its
// access token are the workspace's channel connection, which the service
// resolves and hands to Send. No sender fails the message with
// CodeSenderNotConfigured.
// Tokens are sent only in the Authorization header and never appear in
// errors or logs.
//
// Beyond sending, a Provider has the optional capabilities of
// messaging.TemplateManager (SubmitTemplate: POST
// /{waba-id}/message_templates with the components in Meta's shape and the
// examples Meta requires, see ExampleMediaURL for media headers;
// DeleteTemplate: DELETE by name, and hsm_id for one language),
// messaging.TemplateLister (ListTemplates: GET
// /{waba-id}/message_templates, every page) and
// messaging.ConnectionVerifier (VerifyConnection: reads only the
// account's token can make; see its doc).
// They take the sender as a *messaging.ChannelSender. Package metatest is
// a mock of these Graph endpoints for tests.
//
// Errors of the Graph API ({"error": {"message", "code", "error_subcode",
// "error_data": {"details"}}}) become *messaging.SendError with Code the
// error code and Text the message (without Graph's "(#code) " prefix),
// followed by ": " and the details when there are details. They are
// retryable for network failures, HTTP 5xx and 429, and for the codes of
// rate limits and temporary failures (see RetryableCode), with RetryAfter
// from the Retry-After header; every other error is permanent. HTTP 429 and
// the codes of a sender's throughput (see ThrottlingCode) are also
// Throttled, so that the dispatcher pauses the sender rather than the
// message; the pair rate limit of one recipient (131056) is not. A request
// that may have reached Meta without an answer being read (a timeout, a
// connection lost once the request was written, a 2xx answer cut short) is
// a retryable CodeOutcomeUnknown with Unknown set; a failure to connect is
// CodeNetwork, never Unknown: nothing reached Meta. Code 190
// (CodeCredentialsRefused: the access token is invalid or expired, any subcode)
// is permanent with Credentials set, whatever the HTTP status, so that the
// service marks the connection as refused.
package metaprovider

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ujumbe/messaging/record"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/internal/defaults"
)

var _ messaging.Provider = (*Provider)(nil)

// Defaults of Options.
const (
	// DefaultBaseURL is the Graph API's address.
	DefaultBaseURL = "https://graph.facebook.com"
	// DefaultVersion is the Graph API version used.
	DefaultVersion = "v21.0"
	// DefaultTimeout is the timeout of the default HTTP client.
	DefaultTimeout = 30 * time.Second
	// maxResponseBytes bounds the bytes read from a Graph answer.
	maxResponseBytes = 1 << 20
)

// Codes of the errors this package reports itself (Graph's own codes are
// passed through).
const (
	// CodeSenderNotConfigured: there is no sender (no connection, or
	// one without credentials) for the workspace and channel.
	CodeSenderNotConfigured = "sender_not_configured"
	// CodeInvalidMessage: the message cannot be expressed on its channel
	// (Graph's code for an invalid parameter).
	CodeInvalidMessage = "100"
	// CodeNetwork: the Graph API could not be reached. Retryable.
	CodeNetwork = "network_error"
	// CodeOutcomeUnknown: the request was written to the Graph API and
	// no answer was read (a timeout, a lost connection). Meta may have
	// sent the message: the SendError is Retryable with Unknown set.
	CodeOutcomeUnknown = "outcome_unknown"
	// CodeInvalidResponse: Graph answered success without a message id
	// (or a template id), or a template list that never ends.
	CodeInvalidResponse = "invalid_response"
)

// CodeCredentialsRefused is Graph's error code for an invalid or expired access
// token (any subcode: 463 expired, 460 password changed, 467 invalid, ...).
// Such an answer is a permanent *messaging.SendError with Credentials set.
const CodeCredentialsRefused = 190

// Options configure a Provider. A nil *Options means all defaults.
type Options struct {
	// BaseURL is the Graph API's address. Default DefaultBaseURL.
	BaseURL string
	// Version is the Graph API version. Default DefaultVersion.
	Version string
	// HTTPClient sends the requests. Default: a new client with a 30 s
	// timeout (never http.DefaultClient).
	HTTPClient *http.Client
	// Clock returns the current time, to read a Retry-After header given
	// as a date. Default time.Now.
	Clock func() time.Time
	// Webhook, when set, configures the receiver of Meta's webhooks the
	// Provider offers its host (a messaging.CallbackReceiver: httpapi
	// mounts it). Default nil: no receiver.
	Webhook *WebhookOptions
	// AppID is the id of the Meta app the access tokens belong to (1 to
	// 32 digits), which Meta's Resumable Upload API needs
	// (POST /{app-id}/uploads): UploadTemplateSample refuses every
	// upload without it. Optional otherwise. (The app's secret, which
	// signs webhooks, is WebhookOptions.AppSecret.)
	AppID string
}

// Provider sends through the Graph API. It is safe for concurrent use.
type Provider struct {
	base    string
	baseURL *url.URL
	client  *http.Client
	now     func() time.Time
	webhook *WebhookOptions
	appID   string
}

var versionRe = regexp.MustCompile(`^v[0-9]+\.[0-9]+$`)

// New returns a Provider. It sends as the sender each call is handed: the
// workspace's channel connection, resolved by the service.
func New(opts *Options) (*Provider, error) {
	o := defaults.Of(opts)
	o.BaseURL, o.Version = cmp.Or(o.BaseURL, DefaultBaseURL), cmp.Or(o.Version, DefaultVersion)
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: DefaultTimeout}
	}
	o.Clock = defaults.Clock(o.Clock)
	u, err := url.Parse(o.BaseURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("metaprovider: New: BaseURL %q must be an absolute http(s) URL without query", o.BaseURL)
	}
	if !versionRe.MatchString(o.Version) {
		return nil, fmt.Errorf("metaprovider: New: Version %q must look like v21.0", o.Version)
	}
	if o.AppID != "" && numericID("")(o.AppID) != nil {
		return nil, fmt.Errorf("metaprovider: New: AppID must be 1 to 32 digits")
	}
	p := &Provider{
		base:    strings.TrimRight(o.BaseURL, "/") + "/" + o.Version + "/",
		baseURL: u,
		client:  o.HTTPClient,
		now:     o.Clock,
		appID:   o.AppID,
	}
	if o.Webhook != nil {
		w := *o.Webhook
		w.Accounts = maps.Clone(w.Accounts)
		p.webhook = &w
	}
	return p, nil
}

func permanent(code, text string) *messaging.SendError {
	return &messaging.SendError{Code: code, Text: text}
}

// notConfigured is the error of a missing sender. It is a credentials
// error: the workspace has no credentials for Meta, so a template
// submission stays pending until it has.
func notConfigured(channel string) *messaging.SendError {
	se := permanent(CodeSenderNotConfigured, fmt.Sprintf("no %s sender is configured for the workspace", channel))
	se.Credentials = true
	return se
}

// Send posts m to the Graph API as the sender s (its account id and
// access token) and returns the provider message id. A nil sender, or one
// without an account or a token, fails m with CodeSenderNotConfigured.
func (p *Provider) Send(ctx context.Context, s *messaging.ChannelSender, m *messaging.Message) (*messaging.SendReceipt, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, permanent(CodeInvalidMessage, "Invalid parameter: no message")
	}
	var (
		payload any
		err     error
	)
	switch m.Channel {
	case messaging.ChannelWhatsApp:
		payload, err = whatsAppPayload(m)
	case messaging.ChannelMessenger, messaging.ChannelInstagram:
		payload, err = sendAPIPayload(m)
	default:
		err = permanent(CodeInvalidMessage, fmt.Sprintf("Invalid parameter: unknown channel %q", m.Channel))
	}
	if err != nil {
		return nil, err
	}
	if s == nil || s.AccountID == "" || s.AccessToken == "" {
		return nil, notConfigured(m.Channel)
	}
	body, err := json.Marshal(payload)
	if err != nil {
		return nil, permanent(CodeInvalidMessage, "Invalid parameter: "+err.Error())
	}
	raw, status, err := p.do(ctx, http.MethodPost, p.base+url.PathEscape(s.AccountID)+"/messages", s.AccessToken, body)
	if err != nil {
		return nil, err
	}
	var ok struct {
		Messages []struct {
			ID string `json:"id"`
		} `json:"messages"`
		MessageID string `json:"message_id"`
	}
	_ = json.Unmarshal(raw, &ok)
	id := ok.MessageID
	if m.Channel == messaging.ChannelWhatsApp {
		id = ""
		if len(ok.Messages) > 0 {
			id = ok.Messages[0].ID
		}
	}
	if fb, isFB := payload.(*fbMessage); isFB && fb.SenderAction != "" && id == "" && status/100 == 2 {
		// A sender action (an Instagram reaction) is answered with the
		// recipient only: it has no message id of its own, and no status
		// webhook follows it.
		id = reactionID(fb.Payload.MessageID, m.ID)
	}
	if id == "" {
		// The message may have been accepted: its outcome is unknown, and
		// its status report (carrying our id) may still confirm it.
		return nil, &messaging.SendError{Code: CodeInvalidResponse, Text: fmt.Sprintf("the Graph API answered %d without a message id", status),
			Retryable: true, Unknown: true}
	}
	return &messaging.SendReceipt{ProviderMessageID: id}, nil
}

// reactionID is the provider message id given to a reaction sent as a
// sender action, which Meta answers without one: "reaction:" followed by
// the id of the message reacted to and the service's id of the reaction.
func reactionID(target, id string) string {
	return "reaction:" + target + ":" + id
}

// do makes one Graph API request with token as bearer token and body (when
// not nil) as JSON, and returns the answer's body and status when it is
// 2xx. A non-2xx answer is mapped by sendError (its body and status are
// returned too). A failure before the request was written (no connection:
// DNS, refused, TLS) is a retryable CodeNetwork SendError; a failure after
// it (a timeout, a lost connection, a 2xx answer cut short) is a
// retryable CodeOutcomeUnknown SendError with Unknown set, as Meta may
// have acted on the request. Texts have the token redacted. A context
// that ends is returned wrapped, together with the CodeOutcomeUnknown
// SendError when the request was written.
func (p *Provider) do(ctx context.Context, method, rawURL, token string, body []byte) ([]byte, int, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, rawURL, rd)
	if err != nil {
		return nil, 0, permanent(CodeSenderNotConfigured, "the sender id does not form a valid URL")
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return p.doRequest(req, token)
}

// doRequest makes req, whose headers are set, as do does: it returns the
// answer's body and status when it is 2xx, and maps failures and non-2xx
// answers as do documents. token is redacted from error texts.
func (p *Provider) doRequest(req *http.Request, token string) ([]byte, int, error) {
	ctx := req.Context()
	var w written
	req = req.WithContext(httptrace.WithClientTrace(ctx, w.trace()))
	req.Header.Set("Accept", "application/json")
	resp, err := p.client.Do(req)
	if err != nil {
		return nil, 0, failed(ctx, w.mayHaveArrived(), "no answer from the Graph API", "could not reach the Graph API", err, token)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		if resp.StatusCode/100 == 2 {
			// Meta accepted the request; its answer, with the
			// message id, is lost.
			return nil, 0, failed(ctx, true, "the Graph API's answer was cut short", "", err, token)
		}
		if ctx.Err() != nil {
			return nil, 0, fmt.Errorf("metaprovider: %w", ctx.Err())
		}
		return nil, 0, &messaging.SendError{Code: CodeNetwork, Text: "reading the Graph API's answer: " + redact(err.Error(), token), Retryable: true}
	}
	if resp.StatusCode/100 != 2 {
		se := p.sendError(resp.StatusCode, resp.Header, raw)
		se.Text = redact(se.Text, token)
		return raw, resp.StatusCode, se
	}
	return raw, resp.StatusCode, nil
}

// failed is the error of a request that got no (complete) answer: when
// it may have reached Meta (arrived), a retryable CodeOutcomeUnknown
// SendError with Unknown set, saying unknown; else a retryable CodeNetwork
// one saying unreachable. A context that ended is wrapped alongside, or
// alone when the request did not arrive.
func failed(ctx context.Context, arrived bool, unknown, unreachable string, err error, token string) error {
	var se *messaging.SendError
	if arrived {
		se = &messaging.SendError{Code: CodeOutcomeUnknown, Text: unknown + ": " + redact(err.Error(), token) +
			"; Meta may have accepted the request", Retryable: true, Unknown: true}
	}
	switch {
	case ctx.Err() != nil && se != nil:
		return fmt.Errorf("metaprovider: %w: %w", ctx.Err(), se)
	case ctx.Err() != nil:
		return fmt.Errorf("metaprovider: %w", ctx.Err())
	case se != nil:
		return se
	}
	return &messaging.SendError{Code: CodeNetwork, Text: unreachable + ": " + redact(err.Error(), token), Retryable: true}
}

// States of a request's last attempt, as its client trace saw it.
const (
	notConnected int32 = iota // no connection yet: nothing reached Meta
	connected                 // a connection, the request being written
	wroteAll                  // the whole request written
	writeFailed               // the write failed: Meta got an incomplete request
)

// written follows whether a request was written, through its client
// trace. The transport may make several attempts (a new connection after
// a reused one was found closed); the last one counts.
type written struct{ state atomic.Int32 }

func (w *written) trace() *httptrace.ClientTrace {
	return &httptrace.ClientTrace{
		GotConn: func(httptrace.GotConnInfo) { w.state.Store(connected) },
		WroteRequest: func(i httptrace.WroteRequestInfo) {
			if i.Err != nil {
				w.state.Store(writeFailed)
			} else {
				w.state.Store(wroteAll)
			}
		},
	}
}

// mayHaveArrived reports whether the request may have reached Meta: it was
// written, or its write had begun without failing (a transport that gives
// up on a deadline may not have reported the write yet).
func (w *written) mayHaveArrived() bool {
	s := w.state.Load()
	return s == connected || s == wroteAll
}

// redact removes the token from s, should an error ever quote it.
func redact(s, token string) string {
	if token == "" {
		return s
	}
	return strings.ReplaceAll(s, token, "[redacted]")
}

// RetryableCode reports whether a Graph error code denotes a rate limit or
// a temporary failure, after which sending again may succeed.
func RetryableCode(code int) bool {
	switch code {
	case 1, // An unknown error occurred (temporary)
		2,      // Service temporarily unavailable
		4,      // Application request limit reached
		17,     // User request limit reached
		32,     // Page request limit reached
		613,    // Calls to this API have exceeded the rate limit
		1200,   // Messenger: temporary send message failure
		80007,  // WhatsApp Business Account rate limit
		130429, // Cloud API throughput rate limit
		131000, // Something went wrong
		131016, // Service unavailable
		131056, // Pair rate limit (business and recipient)
		133004: // Server temporarily unavailable
		return true
	}
	return false
}

// ThrottlingCode reports whether a Graph error code denotes a sender over
// its throughput rather than a fault of the message: the app, user, page
// or WhatsApp Business Account request limits (4, 17, 32, 613, 80007) and
// the Cloud API's throughput of a phone number (130429). Such errors are
// Throttled. The pair rate limit of one recipient (131056) is not: other
// recipients can still be sent to.
func ThrottlingCode(code int) bool {
	switch code {
	case 4, 17, 32, 613, 80007, 130429:
		return true
	}
	return false
}

// codePairRateLimit is Graph's error code for too many messages to one
// recipient: retryable, but not a throttle of the sender.
const codePairRateLimit = 131056

var codePrefixRe = regexp.MustCompile(`^\(#[0-9]+\)\s*`)

// graphError is the error object of a Graph API answer.
type graphError struct {
	Message      string          `json:"message"`
	Type         string          `json:"type"`
	Code         int             `json:"code"`
	ErrorSubcode int             `json:"error_subcode"`
	ErrorData    json.RawMessage `json:"error_data"`
	FBTraceID    string          `json:"fbtrace_id"`
}

// sendError maps a non-2xx Graph answer to a SendError.
func (p *Provider) sendError(status int, h http.Header, body []byte) *messaging.SendError {
	retryable := status >= 500 || status == http.StatusTooManyRequests
	var env struct {
		Error *graphError `json:"error"`
	}
	var se *messaging.SendError
	if json.Unmarshal(body, &env) == nil && env.Error != nil && (env.Error.Code != 0 || env.Error.Message != "") {
		g := env.Error
		text := strings.TrimSpace(codePrefixRe.ReplaceAllString(g.Message, ""))
		if d := details(g.ErrorData); d != "" && d != text {
			if text == "" {
				text = d
			} else {
				text += ": " + d
			}
		}
		if g.ErrorSubcode != 0 {
			text += fmt.Sprintf(" (subcode %d)", g.ErrorSubcode)
		}
		if text == "" {
			text = http.StatusText(status)
		}
		code := strconv.Itoa(g.Code)
		if g.Code == 0 {
			code = strconv.Itoa(status)
		}
		se = &messaging.SendError{Code: code, Text: text, Retryable: retryable || RetryableCode(g.Code),
			Throttled: ThrottlingCode(g.Code) || (status == http.StatusTooManyRequests && g.Code != codePairRateLimit)}
		if g.Code == CodeCredentialsRefused {
			// The token is invalid or expired: sending again with it
			// cannot succeed, whatever the HTTP status.
			se.Retryable, se.Credentials, se.Throttled = false, true, false
		}
	} else {
		text := http.StatusText(status)
		if text == "" {
			text = "HTTP status " + strconv.Itoa(status)
		}
		se = &messaging.SendError{Code: strconv.Itoa(status), Text: text, Retryable: retryable,
			Throttled: status == http.StatusTooManyRequests}
	}
	if se.Retryable {
		se.RetryAfter = retryAfter(h.Get("Retry-After"), p.now())
	}
	return se
}

// details returns error_data.details, or error_data itself when Graph sent
// it as a string.
func details(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var obj struct {
		Details string `json:"details"`
	}
	if json.Unmarshal(raw, &obj) == nil {
		return strings.TrimSpace(obj.Details)
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return strings.TrimSpace(s)
	}
	return ""
}

// retryAfter parses a Retry-After header (seconds or an HTTP date); 0 when
// absent or invalid. It is capped at one day.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	var d time.Duration
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n <= 0 {
			return 0
		}
		d = time.Duration(min(n, 86400)) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = t.Sub(now)
	}
	return min(max(d, 0), 24*time.Hour)
}

// WhatsApp Cloud API payloads.
type (
	waMessage struct {
		MessagingProduct string         `json:"messaging_product"`
		RecipientType    string         `json:"recipient_type"`
		To               string         `json:"to"`
		Type             string         `json:"type"`
		Text             *waText        `json:"text,omitempty"`
		Image            *waMedia       `json:"image,omitempty"`
		Video            *waMedia       `json:"video,omitempty"`
		Document         *waMedia       `json:"document,omitempty"`
		Audio            *waMedia       `json:"audio,omitempty"`
		Template         *waTemplate    `json:"template,omitempty"`
		Sticker          *waMedia       `json:"sticker,omitempty"`
		Interactive      *waInteractive `json:"interactive,omitempty"`
		Location         *waLocation    `json:"location,omitempty"`
		Contacts         []waOutContact `json:"contacts,omitempty"`
		Reaction         *waReaction    `json:"reaction,omitempty"`
		// Context is the message this one quotes.
		Context *waContext `json:"context,omitempty"`
		// BizOpaqueCallbackData is the service's message id, echoed in
		// the message's status webhooks.
		BizOpaqueCallbackData string `json:"biz_opaque_callback_data,omitempty"`
	}
	waText struct {
		PreviewURL bool   `json:"preview_url"`
		Body       string `json:"body"`
	}
	// waMedia is a media object: by link, or by the id of an upload.
	waMedia struct {
		ID       string `json:"id,omitempty"`
		Link     string `json:"link,omitempty"`
		Caption  string `json:"caption,omitempty"`
		Filename string `json:"filename,omitempty"`
	}
	waTemplate struct {
		Name       string        `json:"name"`
		Language   waLanguage    `json:"language"`
		Components []waComponent `json:"components,omitempty"`
	}
	waLanguage struct {
		Code string `json:"code"`
	}
	waComponent struct {
		Type       string        `json:"type"`
		SubType    string        `json:"sub_type,omitempty"`
		Index      string        `json:"index,omitempty"`
		Parameters []waParameter `json:"parameters"`
	}
	waParameter struct {
		Type       string   `json:"type"`
		Text       string   `json:"text,omitempty"`
		Image      *waMedia `json:"image,omitempty"`
		Video      *waMedia `json:"video,omitempty"`
		Document   *waMedia `json:"document,omitempty"`
		CouponCode string   `json:"coupon_code,omitempty"`
		Payload    string   `json:"payload,omitempty"`
	}
)

// maxCorrelation is the longest correlation Meta keeps:
// biz_opaque_callback_data holds 512 characters (Send API metadata 1000).
const maxCorrelation = 512

// correlation is the correlation a send of m carries: its message id, or
// nothing when it has none or one too long for Meta (the send is then not
// correlated, rather than refused).
func correlation(m *messaging.Message) string {
	if len(m.ID) > maxCorrelation {
		return ""
	}
	return m.ID
}

func invalid(format string, args ...any) *messaging.SendError {
	return permanent(CodeInvalidMessage, "Invalid parameter: "+fmt.Sprintf(format, args...))
}

func whatsAppPayload(m *messaging.Message) (*waMessage, error) {
	if m.To == "" {
		return nil, invalid("the recipient is required")
	}
	w := &waMessage{MessagingProduct: "whatsapp", RecipientType: "individual", To: m.To, Type: m.Type,
		BizOpaqueCallbackData: correlation(m)}
	out := m.Outbound
	if out == nil {
		out = &record.OutboundContent{}
	}
	if out.Context != nil {
		if out.Context.ProviderMessageID == "" {
			return nil, invalid("context: the quoted message has no provider id")
		}
		w.Context = &waContext{MessageID: out.Context.ProviderMessageID}
	}
	var media *waMedia
	switch m.Type {
	case record.TypeImage, record.TypeVideo, record.TypeDocument, record.TypeAudio, record.TypeSticker:
		var err error
		if media, err = waMediaOf("media", m.MediaURL, out.Media); err != nil {
			return nil, err
		}
	}
	switch m.Type {
	case record.TypeText:
		w.Text = &waText{Body: m.Text}
	case record.TypeImage:
		media.Caption = m.Caption
		w.Image = media
	case record.TypeVideo:
		media.Caption = m.Caption
		w.Video = media
	case record.TypeDocument:
		media.Caption, media.Filename = m.Caption, m.Filename
		w.Document = media
	case record.TypeAudio:
		w.Audio = media
	case record.TypeSticker:
		w.Sticker = media
	case record.TypeInteractive:
		in, err := waInteractiveOf(out.Interactive)
		if err != nil {
			return nil, err
		}
		w.Interactive = in
	case record.TypeLocation:
		if out.Location == nil {
			return nil, invalid("location is required")
		}
		l := out.Location
		w.Location = &waLocation{Latitude: l.Latitude, Longitude: l.Longitude, Name: l.Name, Address: l.Address}
	case record.TypeContacts:
		if len(out.Contacts) == 0 {
			return nil, invalid("contacts are required")
		}
		w.Contacts = waContactsOf(out.Contacts)
	case record.TypeReaction:
		if out.Reaction == nil || out.Reaction.ProviderMessageID == "" {
			return nil, invalid("reaction: the message reacted to has no provider id")
		}
		w.Reaction = &waReaction{MessageID: out.Reaction.ProviderMessageID, Emoji: out.Reaction.Emoji}
	case record.TypeTemplate:
		t, err := waTemplateOf(m)
		if err != nil {
			return nil, err
		}
		w.Template = t
	default:
		return nil, invalid("message type %q is not supported", m.Type)
	}
	return w, nil
}

// waTemplateOf is the template object of a template message m.
func waTemplateOf(m *messaging.Message) (*waTemplate, error) {
	t := &waTemplate{Name: m.TemplateName, Language: waLanguage{Code: m.Language}}
	for i, c := range m.Components {
		wc := waComponent{Type: c.Type, SubType: c.SubType, Parameters: []waParameter{}}
		if c.Index != nil {
			wc.Index = strconv.Itoa(*c.Index)
		}
		for j, prm := range c.Parameters {
			wp := waParameter{Type: prm.Type}
			switch prm.Type {
			case "text":
				wp.Text = prm.Text
			case "image":
				wp.Image = &waMedia{Link: prm.Link}
			case "video":
				wp.Video = &waMedia{Link: prm.Link}
			case "document":
				wp.Document = &waMedia{Link: prm.Link, Filename: prm.Filename}
			case "coupon_code":
				wp.CouponCode = prm.CouponCode
			case "payload":
				wp.Payload = prm.Payload
			default:
				return nil, invalid("components[%d].parameters[%d].type %q is not supported", i, j, prm.Type)
			}
			wc.Parameters = append(wc.Parameters, wp)
		}
		t.Components = append(t.Components, wc)
	}
	return t, nil
}

// Messenger and Instagram Send API payloads.
type (
	fbMessage struct {
		Recipient     fbRecipient `json:"recipient"`
		MessagingType string      `json:"messaging_type,omitempty"`
		Message       *fbBody     `json:"message,omitempty"`
		// SenderAction and Payload are a sender action (Instagram's
		// react and unreact, mark_seen, typing_on), sent instead of a
		// message.
		SenderAction string           `json:"sender_action,omitempty"`
		Payload      *fbActionPayload `json:"payload,omitempty"`
	}
	fbRecipient struct {
		ID          string `json:"id,omitempty"`
		PhoneNumber string `json:"phone_number,omitempty"`
	}
	fbBody struct {
		Text         string         `json:"text,omitempty"`
		Attachment   *fbAttachment  `json:"attachment,omitempty"`
		QuickReplies []fbQuickReply `json:"quick_replies,omitempty"`
		// Metadata is the service's message id, echoed in the
		// message_echoes webhook.
		Metadata string `json:"metadata,omitempty"`
	}
	fbAttachment struct {
		Type    string    `json:"type"`
		Payload fbPayload `json:"payload"`
	}
	// fbPayload is an attachment's payload: a media URL, or a template.
	fbPayload struct {
		URL          string     `json:"url,omitempty"`
		TemplateType string     `json:"template_type,omitempty"`
		Text         string     `json:"text,omitempty"`
		Buttons      []fbButton `json:"buttons,omitempty"`
	}
	fbButton struct {
		Type  string `json:"type"`
		URL   string `json:"url,omitempty"`
		Title string `json:"title"`
	}
	fbQuickReply struct {
		ContentType string `json:"content_type"`
		Title       string `json:"title"`
		Payload     string `json:"payload"`
	}
	fbActionPayload struct {
		MessageID string `json:"message_id"`
		Reaction  string `json:"reaction,omitempty"`
	}
)

// Sender actions of the Send API.
const (
	actionReact    = "react"
	actionUnreact  = "unreact"
	actionMarkSeen = "mark_seen"
	actionTypingOn = "typing_on"
)

// fbRecipientOf is the Send API recipient of to: a phone number when it
// is E.164, else a page- or Instagram-scoped id.
func fbRecipientOf(to string) (fbRecipient, error) {
	switch {
	case to == "":
		return fbRecipient{}, invalid("the recipient is required")
	case strings.HasPrefix(to, "+"):
		return fbRecipient{PhoneNumber: to}, nil
	}
	return fbRecipient{ID: to}, nil
}

func sendAPIPayload(m *messaging.Message) (*fbMessage, error) {
	rcpt, err := fbRecipientOf(m.To)
	if err != nil {
		return nil, err
	}
	f := &fbMessage{Recipient: rcpt, Message: &fbBody{Metadata: correlation(m)}}
	if m.Channel == messaging.ChannelMessenger {
		f.MessagingType = "RESPONSE"
	}
	out := m.Outbound
	if out == nil {
		out = &record.OutboundContent{}
	}
	switch {
	case out.Context != nil:
		return nil, invalid("context: quoted replies are sent on whatsapp only, not on %s", m.Channel)
	case out.Media != nil:
		return nil, invalid("media: uploaded media are sent on whatsapp only, not on %s", m.Channel)
	}
	switch m.Type {
	case record.TypeText:
		f.Message.Text = m.Text
	case record.TypeImage, record.TypeVideo, record.TypeAudio:
		f.Message.Attachment = &fbAttachment{Type: m.Type, Payload: fbPayload{URL: m.MediaURL}}
	case record.TypeDocument:
		f.Message.Attachment = &fbAttachment{Type: "file", Payload: fbPayload{URL: m.MediaURL}}
	case record.TypeInteractive:
		if err := fbInteractive(f.Message, m.Channel, out.Interactive); err != nil {
			return nil, err
		}
	case record.TypeReaction:
		if m.Channel != messaging.ChannelInstagram {
			return nil, invalid("reactions are not sent on %s", m.Channel)
		}
		r := out.Reaction
		if r == nil || r.ProviderMessageID == "" {
			return nil, invalid("reaction: the message reacted to has no provider id")
		}
		f.Message, f.MessagingType = nil, ""
		switch r.Emoji {
		case "":
			f.SenderAction, f.Payload = actionUnreact, &fbActionPayload{MessageID: r.ProviderMessageID}
		case ReactionLove:
			f.SenderAction, f.Payload = actionReact, &fbActionPayload{MessageID: r.ProviderMessageID, Reaction: "love"}
		default:
			return nil, invalid("reaction.emoji: instagram sends the love reaction (%s) only", ReactionLove)
		}
	case record.TypeTemplate:
		return nil, invalid("templates are sent on whatsapp only, not on %s", m.Channel)
	default:
		return nil, invalid("message type %q is not supported on %s", m.Type, m.Channel)
	}
	return f, nil
}

// fbInteractive sets b to the Send API's form of in on channel: reply
// buttons as quick replies under the body's text, a cta_url (Messenger)
// as a button template with one web_url button.
func fbInteractive(b *fbBody, channel string, in *record.Interactive) error {
	switch {
	case in == nil:
		return invalid("interactive is required")
	case in.Header != nil:
		return invalid("interactive.header: headers are sent on whatsapp only, not on %s", channel)
	case in.Footer != "":
		return invalid("interactive.footer: footers are sent on whatsapp only, not on %s", channel)
	}
	switch {
	case in.Type == record.InteractiveTypeButton:
		if len(in.Buttons) == 0 {
			return invalid("interactive.buttons are required")
		}
		b.Text = in.Body
		for _, bt := range in.Buttons {
			b.QuickReplies = append(b.QuickReplies, fbQuickReply{ContentType: "text", Title: bt.Title, Payload: bt.ID})
		}
	case in.Type == record.InteractiveTypeCTAURL && channel == messaging.ChannelMessenger:
		if in.CTA == nil {
			return invalid("interactive.cta_url is required")
		}
		b.Attachment = &fbAttachment{Type: "template", Payload: fbPayload{TemplateType: "button", Text: in.Body,
			Buttons: []fbButton{{Type: "web_url", URL: in.CTA.URL, Title: in.CTA.DisplayText}}}}
	default:
		return invalid("interactive.type %q is not sent on %s", in.Type, channel)
	}
	return nil
}
