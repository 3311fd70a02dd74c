package metaprovider

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"strconv"
	"strings"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/internal/defaults"
)

// Defaults of ReceiverOptions.
const (
	// DefaultMaxBodyBytes is the default limit of a notification's body:
	// 1 MiB.
	DefaultMaxBodyBytes = 1 << 20
	// maxChallenge bounds the hub.challenge echoed by the handshake.
	maxChallenge = 256
)

// ErrUnverified is wrapped by the error Serve returns for a request that
// failed Meta's verification: a handshake whose hub.verify_token does not
// match (a *messaging.Error with CodeForbidden) and a notification whose
// X-Hub-Signature-256 is missing or wrong (CodeUnauthorized). It matches
// messaging.ErrReceiverUnverified too (errors.Is), which a host counts
// against the client's rate limit, as httpapi does.
var ErrUnverified error = unverified{}

// unverified is ErrUnverified: Meta's word for
// messaging.ErrReceiverUnverified.
type unverified struct{}

func (unverified) Error() string { return "metaprovider: request not verified as Meta's" }

// Is reports whether target is messaging.ErrReceiverUnverified.
func (unverified) Is(target error) bool { return target == messaging.ErrReceiverUnverified }

// StatusError is a refusal that no messaging.Code describes, with its HTTP
// status: 405 for a method other than GET and POST (Serve has set the
// Allow header) and 413 for a body over the size limit. It is the
// receivers' messaging.ReceiverError.
type StatusError = messaging.ReceiverError

// DefaultWebhookPath is the default path of the receiver a Provider
// offers (WebhookOptions.Path).
const DefaultWebhookPath = "/webhooks/meta"

// WebhookOptions configure the receiver of Meta's webhooks (WhatsApp Cloud
// API, Messenger and Instagram) a Provider offers its host, set as
// Options.Webhook: a Receiver (see NewReceiver: it documents what it
// accepts and applies) mounted at Path.
//
// httpapi mounts it and answers its refusals with its error envelope (405
// method_not_allowed, 413 payload_too_large, 400 validation_error, 401
// unauthorized for a missing or wrong X-Hub-Signature-256, 403 forbidden
// for a failed handshake, 500 for a failure of the service), charging the
// 401 and 403 refusals to the client address's "unauthenticated" rate
// limit (429 once it is spent); bodies are limited to its MaxBodyBytes,
// and the receiver logs to its Logger with the request's correlation id.
type WebhookOptions struct {
	// Path is where the receiver is mounted. Default DefaultWebhookPath.
	// A path that is not clean or collides with a route of the host is
	// not mounted (the host logs the error).
	Path string
	// VerifyToken is the verify token set in the Meta app's webhook
	// settings. Empty: every handshake is refused.
	VerifyToken string
	// AppSecret is the Meta app's secret, which signs every notification.
	// Empty: every notification is refused.
	AppSecret string
	// Accounts maps the receiving account (WhatsApp phone-number id,
	// Facebook page id or Instagram account id) to its workspace id, for
	// inbound messages; see ReceiverOptions.Accounts.
	Accounts map[string]string
}

var _ messaging.CallbackReceiver = (*Provider)(nil)

// Receiver implements messaging.CallbackReceiver: with Options.Webhook
// set, a Receiver applying Meta's webhooks to svc (named "meta webhook",
// at Webhook.Path), with the host's body limit, logger and log attributes;
// nil without Options.Webhook.
func (p *Provider) Receiver(svc *messaging.Service, host *messaging.ReceiverHost) *messaging.Receiver {
	if p.webhook == nil {
		return nil
	}
	rc := NewReceiver(svc, &ReceiverOptions{
		VerifyToken: p.webhook.VerifyToken, AppSecret: p.webhook.AppSecret, Accounts: p.webhook.Accounts,
		MaxBodyBytes: host.MaxBodyBytes, Logger: host.Logger, LogAttrs: host.LogAttrs,
	})
	path := p.webhook.Path
	if path == "" {
		path = DefaultWebhookPath
	}
	return &messaging.Receiver{Name: "meta webhook", Path: path, Serve: rc.Serve}
}

// ReceiverOptions configure a Receiver. A nil *ReceiverOptions means all
// defaults, which refuse every handshake and notification.
type ReceiverOptions struct {
	// VerifyToken is the verify token set in the Meta app's webhook
	// settings. Empty: every handshake is refused.
	VerifyToken string
	// AppSecret is the Meta app's secret, which signs every notification.
	// Empty: every notification is refused.
	AppSecret string
	// Accounts maps the receiving account (WhatsApp phone-number id,
	// Facebook page id or Instagram account id) to its workspace id, for
	// inbound messages. It overrides the workspaces' channel connections:
	// an account it does not hold is routed by
	// messaging.Service.WorkspaceForAccount, and an inbound message to an
	// account neither knows is ignored. Default nil: connections only.
	Accounts map[string]string
	// MaxBodyBytes is the largest accepted notification body. Default
	// DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// Logger receives a line per ignored item and per failure of the
	// service. Default: discard.
	Logger *slog.Logger
	// LogAttrs returns attributes (alternating keys and values, as for
	// slog.Logger.With) put first on the lines logged about a request,
	// for example its correlation id. Default nil: none.
	LogAttrs func(r *http.Request) []any
}

// Receiver receives Meta's webhooks (WhatsApp Cloud API, Messenger and
// Instagram) for a Service. Create it with NewReceiver. It is an
// http.Handler, safe for concurrent use; mount it at the callback URL set
// in the Meta app.
//
// GET answers Meta's verification handshake: with hub.mode=subscribe and
// hub.verify_token equal to VerifyToken it returns hub.challenge as
// text/plain, otherwise 403.
//
// POST accepts event notifications signed with X-Hub-Signature-256
// ("sha256=" + hex HMAC-SHA256 of the raw body keyed with AppSecret); a
// missing or wrong signature is 401 and nothing is applied. From a signed
// body it applies WhatsApp status reports
// (entry[].changes[].value.statuses[]: sent, delivered, read, failed with
// errors[]) through Service.ApplyProviderStatus, and Messenger delivery
// receipts (delivery.mids) and Instagram read receipts (read.mid) likewise;
// a status report carrying biz_opaque_callback_data (our message id, sent
// with every message) is applied with that id as ProviderStatus.MessageID
// and the workspace of the receiving phone-number id as WorkspaceID, so
// that it confirms a send whose answer never came. A Messenger or
// Instagram echo of a sent message (is_echo) carrying metadata (our
// message id likewise) is applied as the status sent of its mid,
// correlated the same way with the workspace of the sending page or
// account; the echo is trusted as correlation only, never recorded as a
// message, and an echo without metadata (a message sent by another app or
// from the inbox) is ignored. It records inbound messages (WhatsApp
// value.messages[] of every type, with their content: media ids, location, contacts, replies, reactions,
// the quoted message; an unknown type as unsupported with its raw type;
// Messenger and Instagram entry[].messaging[].message) through
// Service.RecordInbound in
// the workspace of the receiving account (Accounts, else the workspace
// whose channel connection has the account, see
// messaging.Service.WorkspaceForAccount); and it applies WhatsApp
// template events through Service.ApplyTemplateEvent: changes of field
// message_template_status_update (event, message_template_id as a number
// or string, name, language, reason or else other_info.title) and
// message_template_quality_update (new_quality_score, as the event
// messaging.ProviderTemplateQuality), for the WhatsApp Business Account
// whose id is the entry's id; and it applies changes of field
// phone_number_quality_update (display_phone_number, event, current_limit,
// or the newer max_daily_conversations_per_business) through
// Service.ApplyChannelQualityEvent to that account's connection. Reports arrive in any order and never move a
// status backwards. A status report
// of a provider message id that no message carries yet (Meta can report
// delivered before the dispatcher has recorded the id) is kept by the
// service and applied once the id is recorded (see
// messaging.Service.ApplyProviderStatus), and counts as a status. Items
// that cannot be applied (an unknown account or WABA, an unknown template
// or template event, an unsupported status) are ignored and
// logged, never applied to another workspace, and the answer is still 200
// with the counts {"statuses", "messages", "templates", "ignored"}; only a
// failure of the service itself (for example the store, including a
// status report it could not keep) answers 500, so that Meta delivers the notification
// again (applying it twice is harmless: statuses never move back and
// inbound messages are recorded once). A body that is not a JSON object
// is 400, one over MaxBodyBytes 413, another method 405.
type Receiver struct {
	svc      service
	token    string
	secret   []byte
	accounts map[string]string
	maxBody  int64
	log      *slog.Logger
	logAttrs func(r *http.Request) []any
}

var _ http.Handler = (*Receiver)(nil)

// service is what the Receiver uses of *messaging.Service.
type service interface {
	ApplyProviderStatus(ctx context.Context, p *messaging.ProviderStatus) (bool, error)
	ApplyTemplateEvent(ctx context.Context, ev *messaging.TemplateEvent) (*messaging.Template, error)
	ApplyChannelQualityEvent(ctx context.Context, ev *messaging.ChannelQualityEvent) (*messaging.ChannelConnection, error)
	WorkspaceForAccount(ctx context.Context, channel, account string) (string, error)
	RecordInbound(ctx context.Context, in *messaging.InboundMessage) (*messaging.Message, error)
}

// NewReceiver returns a Receiver applying notifications to svc. An empty
// AppSecret is logged as a warning: every notification will be refused.
func NewReceiver(svc *messaging.Service, opts *ReceiverOptions) *Receiver {
	o := defaults.Of(opts)
	defaults.Positive(&o.MaxBodyBytes, DefaultMaxBodyBytes)
	rc := &Receiver{svc: svc, token: o.VerifyToken, secret: []byte(o.AppSecret), accounts: maps.Clone(o.Accounts),
		maxBody: o.MaxBodyBytes, log: defaults.Logger(o.Logger), logAttrs: o.LogAttrs}
	if rc.accounts == nil {
		rc.accounts = map[string]string{}
	}
	if o.AppSecret == "" {
		rc.log.Warn("meta webhook: AppSecret is empty; every notification will be refused")
	}
	return rc
}

// ServeHTTP implements http.Handler: it serves r with Serve and answers an
// error as text/plain (see answer).
func (rc *Receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := rc.Serve(w, r); err != nil {
		status, msg := answer(err)
		http.Error(w, msg, status)
	}
}

// answer returns the plain-text answer of a refusal of Serve: its own 405
// and 413, 401 and 403 for an unverified request, 400 for an invalid body,
// 503 when the store is unavailable and 500 for any other failure of the
// service, whose text is not sent. Meta delivers again after any answer but
// 200.
func answer(err error) (status int, msg string) {
	var se *StatusError
	if errors.As(err, &se) {
		return se.Status, se.Message
	}
	var me *messaging.Error
	if errors.As(err, &me) {
		switch me.Code {
		case messaging.CodeUnauthorized:
			return http.StatusUnauthorized, me.Message
		case messaging.CodeForbidden:
			return http.StatusForbidden, me.Message
		case messaging.CodeValidation:
			return http.StatusBadRequest, me.Message
		case messaging.CodeServiceUnavailable:
			return http.StatusServiceUnavailable, me.Message
		}
	}
	return http.StatusInternalServerError, "internal error; retry later"
}

// Serve serves r like ServeHTTP, except that it returns its error instead
// of answering it, for hosts that answer errors their own way (httpapi
// answers them with its error envelope). When it returns an error it has
// written no answer, only headers (Allow on a 405). The error is a
// *StatusError (405, 413), a *messaging.Error (400 validation of the body;
// 401 and 403 wrapping ErrUnverified) or an error of the service.
func (rc *Receiver) Serve(w http.ResponseWriter, r *http.Request) error {
	switch r.Method {
	case http.MethodGet:
		return rc.handshake(w, r)
	case http.MethodPost:
		return rc.notify(w, r)
	}
	w.Header().Set("Allow", "GET, POST")
	return &StatusError{Status: http.StatusMethodNotAllowed,
		Message: fmt.Sprintf("method %s is not allowed on the Meta webhook; allowed: GET, POST", r.Method)}
}

// handshake answers Meta's subscription verification.
func (rc *Receiver) handshake(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	mode, token, challenge := q.Get("hub.mode"), q.Get("hub.verify_token"), q.Get("hub.challenge")
	ok := mode == "subscribe" && rc.token != "" &&
		subtle.ConstantTimeCompare([]byte(token), []byte(rc.token)) == 1 &&
		challenge != "" && len(challenge) <= maxChallenge
	if !ok {
		return &messaging.Error{Code: messaging.CodeForbidden, Err: ErrUnverified,
			Message: "webhook verification failed: hub.mode must be subscribe and hub.verify_token must match"}
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, challenge)
	return nil
}

// notify verifies and applies one notification, and answers what it did.
func (rc *Receiver) notify(w http.ResponseWriter, r *http.Request) error {
	body, err := rc.readBody(w, r)
	if err != nil {
		return err
	}
	if !rc.validSignature(r.Header.Values("X-Hub-Signature-256"), body) {
		return &messaging.Error{Code: messaging.CodeUnauthorized, Err: ErrUnverified,
			Message: "missing or invalid X-Hub-Signature-256: it must be sha256= and the hex HMAC-SHA256 of the body under the app secret"}
	}
	var p webhookPayload
	if err := json.NewDecoder(bytes.NewReader(body)).Decode(&p); err != nil {
		return badBody("must be a Meta webhook notification (a JSON object)")
	}
	res, err := rc.apply(r.Context(), rc.requestLogger(r, p.Object), &p)
	if err != nil {
		return err
	}
	writeResult(w, res)
	return nil
}

// readBody reads r's body up to the size limit.
func (rc *Receiver) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, rc.maxBody))
	var mbe *http.MaxBytesError
	switch {
	case err == nil:
		return body, nil
	case errors.As(err, &mbe):
		return nil, &StatusError{Status: http.StatusRequestEntityTooLarge, Message: fmt.Sprintf("body: must be at most %d bytes", rc.maxBody)}
	default:
		return nil, badBody("could not be read")
	}
}

// badBody is the validation error of a body breaking rule.
func badBody(rule string) *messaging.Error {
	return &messaging.Error{Code: messaging.CodeValidation, Field: "body", Message: "body: " + rule}
}

// validSignature reports whether header is "sha256=" + the hex HMAC-SHA256
// of body under the app secret, comparing in constant time.
func (rc *Receiver) validSignature(header []string, body []byte) bool {
	if len(rc.secret) == 0 || len(header) != 1 {
		return false
	}
	hexSig, ok := strings.CutPrefix(strings.TrimSpace(header[0]), "sha256=")
	if !ok {
		return false
	}
	got, err := hex.DecodeString(hexSig)
	if err != nil || len(got) != sha256.Size {
		return false
	}
	mac := hmac.New(sha256.New, rc.secret)
	mac.Write(body)
	return hmac.Equal(got, mac.Sum(nil))
}

// requestLogger returns the logger of a notification's lines: the host's
// attributes of r, then the notification's object.
func (rc *Receiver) requestLogger(r *http.Request, object string) *slog.Logger {
	var attrs []any
	if rc.logAttrs != nil {
		attrs = rc.logAttrs(r)
	}
	return rc.log.With(append(attrs[:len(attrs):len(attrs)], "object", object)...)
}

// writeResult answers 200 with the counts of res as JSON.
func writeResult(w http.ResponseWriter, res *result) {
	b, _ := json.Marshal(res) // three ints: it cannot fail
	b = append(b, '\n')
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}
