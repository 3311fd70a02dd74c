package httpapi

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/ujumbe/messaging"
)

// DefaultMetaWebhookPath is the default path of the Meta webhook receiver.
const DefaultMetaWebhookPath = "/webhooks/meta"

// maxChallenge bounds the hub.challenge echoed by the handshake.
const maxChallenge = 256

// MetaWebhook configures the receiver of Meta's webhooks (WhatsApp Cloud
// API, Messenger and Instagram), set as Options.Meta.
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
// and it records inbound messages (WhatsApp value.messages[]; Messenger and
// Instagram entry[].messaging[].message) through Service.RecordInbound in
// the workspace that Accounts gives for the receiving account. Reports
// arrive in any order and never move a status backwards. A status report
// of a provider message id that no message carries yet (Meta can report
// delivered before the dispatcher has recorded the id) is kept by the
// service and applied once the id is recorded (see
// messaging.Service.ApplyProviderStatus), and counts as a status. Items
// that cannot be applied (an unknown account, an unsupported type or
// status) are ignored and logged, and the answer is still 200; only a
// failure of the service itself (for example the store, including a status
// report it could not keep) answers 500, so that Meta delivers the
// notification again (applying it twice is harmless: statuses never move
// back and inbound messages are recorded once).
type MetaWebhook struct {
	// Path is where the receiver is mounted. Default "/webhooks/meta". A
	// path that is not clean or collides with another route is not
	// mounted (the error is logged).
	Path string
	// VerifyToken is the verify token set in the Meta app's webhook
	// settings. Empty: every handshake is refused.
	VerifyToken string
	// AppSecret is the Meta app's secret, which signs every notification.
	// Empty: every notification is refused.
	AppSecret string
	// Accounts maps the receiving account (WhatsApp phone-number id,
	// Facebook page id or Instagram account id) to its workspace id, for
	// inbound messages. Inbound messages to other accounts are ignored.
	Accounts map[string]string
}

// metaReceiver serves one MetaWebhook.
type metaReceiver struct {
	h        *Handler
	token    string
	secret   []byte
	accounts map[string]string
}

// mountMeta mounts the Meta webhook receiver.
func (h *Handler) mountMeta(cfg *MetaWebhook) {
	path := cfg.Path
	if path == "" {
		path = DefaultMetaWebhookPath
	}
	reserved := []string{"/", "/sms/v1/"}
	for _, rt := range Routes() {
		reserved = append(reserved, rt.Pattern)
	}
	reserved = append(reserved, SMSRoutes()...)
	if !cleanPath(path) || strings.ContainsAny(path, "{} \t\r\n") || slices.Contains(reserved, path) {
		h.log.Error("meta webhook: not mounted: Path must be a clean path of its own", "path", path)
		return
	}
	if cfg.AppSecret == "" {
		h.log.Warn("meta webhook: AppSecret is empty; every notification will be refused")
	}
	mr := &metaReceiver{h: h, token: cfg.VerifyToken, secret: []byte(cfg.AppSecret), accounts: map[string]string{}}
	for k, v := range cfg.Accounts {
		mr.accounts[k] = v
	}
	defer func() {
		if p := recover(); p != nil {
			h.log.Error("meta webhook: not mounted", "path", path, "err", fmt.Sprint(p))
		}
	}()
	h.mux.HandleFunc(path, mr.serve)
}

func (mr *metaReceiver) serve(w http.ResponseWriter, r *http.Request) {
	var err error
	switch r.Method {
	case http.MethodGet:
		err = mr.handshake(w, r)
	case http.MethodPost:
		err = mr.notify(w, r)
	default:
		w.Header().Set("Allow", "GET, POST")
		err = &apiError{code: CodeMethodNotAllowed, status: http.StatusMethodNotAllowed,
			message: fmt.Sprintf("method %s is not allowed on the Meta webhook; allowed: GET, POST", r.Method)}
	}
	if err != nil {
		mr.h.writeError(w, r, err)
	}
}

// refuse charges a refused request to its client address's
// unauthenticated rate limit and returns err (or the limit's error).
func (mr *metaReceiver) refuse(w http.ResponseWriter, r *http.Request, err error) error {
	if lerr := mr.h.limit(r.Context(), w, "ip:"+mr.h.clientAddr(r), mr.h.limits["unauthenticated"]); lerr != nil {
		return lerr
	}
	return err
}

// handshake answers Meta's subscription verification.
func (mr *metaReceiver) handshake(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	mode, token, challenge := q.Get("hub.mode"), q.Get("hub.verify_token"), q.Get("hub.challenge")
	ok := mode == "subscribe" && mr.token != "" &&
		subtle.ConstantTimeCompare([]byte(token), []byte(mr.token)) == 1 &&
		challenge != "" && len(challenge) <= maxChallenge
	if !ok {
		return mr.refuse(w, r, &apiError{code: messaging.CodeForbidden, status: http.StatusForbidden,
			message: "webhook verification failed: hub.mode must be subscribe and hub.verify_token must match"})
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, challenge)
	return nil
}

// validSignature reports whether header is "sha256=" + the hex HMAC-SHA256
// of body under the app secret, comparing in constant time.
func (mr *metaReceiver) validSignature(header []string, body []byte) bool {
	if len(mr.secret) == 0 || len(header) != 1 {
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
	mac := hmac.New(sha256.New, mr.secret)
	mac.Write(body)
	return hmac.Equal(got, mac.Sum(nil))
}

// metaResult counts what a notification did.
type metaResult struct {
	Statuses int `json:"statuses"`
	Messages int `json:"messages"`
	Ignored  int `json:"ignored"`
}

// notify verifies and applies one notification.
func (mr *metaReceiver) notify(w http.ResponseWriter, r *http.Request) error {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, mr.h.maxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return &apiError{code: CodePayloadTooLarge, status: http.StatusRequestEntityTooLarge,
				message: fmt.Sprintf("body: must be at most %d bytes", mr.h.maxBody)}
		}
		return badRequest("body", "could not be read")
	}
	if !mr.validSignature(r.Header.Values("X-Hub-Signature-256"), body) {
		return mr.refuse(w, r, &apiError{code: messaging.CodeUnauthorized, status: http.StatusUnauthorized,
			message: "missing or invalid X-Hub-Signature-256: it must be sha256= and the hex HMAC-SHA256 of the body under the app secret"})
	}
	var p metaPayload
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&p); err != nil {
		return badRequest("body", "must be a Meta webhook notification (a JSON object)")
	}
	res, err := mr.apply(r, &p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

// Meta notification payloads. Unknown fields are ignored: Meta adds them.
type (
	metaPayload struct {
		Object string      `json:"object"`
		Entry  []metaEntry `json:"entry"`
	}
	metaEntry struct {
		ID        string          `json:"id"`
		Changes   []metaChange    `json:"changes"`
		Messaging []metaMessaging `json:"messaging"`
	}
	metaChange struct {
		Field string    `json:"field"`
		Value metaValue `json:"value"`
	}
	metaValue struct {
		Metadata struct {
			PhoneNumberID string `json:"phone_number_id"`
		} `json:"metadata"`
		Statuses []metaStatus `json:"statuses"`
		Messages []waInbound  `json:"messages"`
	}
	metaStatus struct {
		ID     string      `json:"id"`
		Status string      `json:"status"`
		Errors []metaError `json:"errors"`
	}
	metaError struct {
		Code      metaCode `json:"code"`
		Title     string   `json:"title"`
		Message   string   `json:"message"`
		ErrorData struct {
			Details string `json:"details"`
		} `json:"error_data"`
	}
	waInbound struct {
		From string `json:"from"`
		ID   string `json:"id"`
		Type string `json:"type"`
		Text struct {
			Body string `json:"body"`
		} `json:"text"`
		Image    *waInboundMedia `json:"image"`
		Video    *waInboundMedia `json:"video"`
		Document *waInboundMedia `json:"document"`
		Audio    *waInboundMedia `json:"audio"`
		Button   *struct {
			Text string `json:"text"`
		} `json:"button"`
		Interactive *struct {
			ButtonReply *struct {
				Title string `json:"title"`
			} `json:"button_reply"`
			ListReply *struct {
				Title string `json:"title"`
			} `json:"list_reply"`
		} `json:"interactive"`
	}
	metaAttachment struct {
		Type    string `json:"type"`
		Payload struct {
			URL string `json:"url"`
		} `json:"payload"`
	}
	waInboundMedia struct {
		Caption string `json:"caption"`
	}
	metaMessaging struct {
		Sender struct {
			ID string `json:"id"`
		} `json:"sender"`
		Recipient struct {
			ID string `json:"id"`
		} `json:"recipient"`
		Message *struct {
			Mid         string           `json:"mid"`
			Text        string           `json:"text"`
			IsEcho      bool             `json:"is_echo"`
			Attachments []metaAttachment `json:"attachments"`
		} `json:"message"`
		Delivery *struct {
			Mids []string `json:"mids"`
		} `json:"delivery"`
		Read *struct {
			Mid string `json:"mid"`
		} `json:"read"`
	}
)

// metaCode is an error code Meta writes as a number (or, defensively, a
// string).
type metaCode string

// UnmarshalJSON accepts a JSON number or string.
func (c *metaCode) UnmarshalJSON(b []byte) error {
	var n json.Number
	if err := json.Unmarshal(b, &n); err == nil {
		*c = metaCode(n.String())
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*c = metaCode(s)
	return nil
}

// metaChannel maps a notification's object to its channel.
func metaChannel(object string) string {
	switch object {
	case "whatsapp_business_account":
		return messaging.ChannelWhatsApp
	case "page":
		return messaging.ChannelMessenger
	case "instagram":
		return messaging.ChannelInstagram
	}
	return ""
}

// apply applies every item of p. It returns an error only when the service
// itself failed, so that Meta retries the notification.
func (mr *metaReceiver) apply(r *http.Request, p *metaPayload) (*metaResult, error) {
	ctx := r.Context()
	log := mr.h.log.With("correlation_id", correlationID(r), "object", p.Object)
	res := &metaResult{}
	var failed error
	ignore := func(msg string, args ...any) {
		res.Ignored++
		log.InfoContext(ctx, "meta webhook: ignored "+msg, args...)
	}
	// outcome sorts an error of the service: an item it refuses is
	// ignored; a failure of the service fails the notification.
	outcome := func(err error, what string, args ...any) bool {
		if err == nil {
			return true
		}
		switch messaging.ErrorCode(err) {
		case messaging.CodeNotFound, messaging.CodeValidation, messaging.CodeConflict:
			ignore(what, append(args, "reason", err.Error())...)
		default:
			res.Ignored++
			log.ErrorContext(ctx, "meta webhook: "+what+" failed; asking Meta to retry", append(args, "err", err.Error())...)
			failed = err
		}
		return false
	}
	status := func(id, st, code, text string) {
		if id == "" {
			ignore("a status without id")
			return
		}
		switch st {
		case messaging.StatusSent, messaging.StatusDelivered, messaging.StatusRead, messaging.StatusFailed:
		default:
			ignore("a status the service does not track", "provider_message_id", id, "status", st)
			return
		}
		_, err := mr.h.svc.ApplyProviderStatus(ctx, &messaging.ProviderStatus{ProviderMessageID: id, Status: st, Code: code, Text: text})
		if outcome(err, "status", "provider_message_id", id, "status", st) {
			res.Statuses++
		}
	}
	inbound := func(in *messaging.InboundMessage, account string) {
		ws, ok := mr.accounts[account]
		if !ok || account == "" {
			ignore("an inbound message to an unknown account", "account", account, "provider_message_id", in.ProviderMessageID)
			return
		}
		in.WorkspaceID = ws
		_, err := mr.h.svc.RecordInbound(ctx, in)
		if outcome(err, "inbound message", "workspace", ws, "provider_message_id", in.ProviderMessageID) {
			res.Messages++
		}
	}

	channel := metaChannel(p.Object)
	if channel == "" {
		ignore("a notification of an unknown object")
		return res, nil
	}
	for _, e := range p.Entry {
		for _, c := range e.Changes {
			if c.Field != "" && c.Field != "messages" {
				ignore("a change of an unsupported field", "field", c.Field)
				continue
			}
			for _, s := range c.Value.Statuses {
				code, text := "", ""
				if s.Status == messaging.StatusFailed {
					code, text = failure(s.Errors)
				}
				status(s.ID, s.Status, code, text)
			}
			for _, m := range c.Value.Messages {
				in, ok := waInboundMessage(&m)
				if !ok {
					ignore("an inbound message of an unsupported type", "type", m.Type, "provider_message_id", m.ID)
					continue
				}
				inbound(in, c.Value.Metadata.PhoneNumberID)
			}
		}
		for _, m := range e.Messaging {
			account := m.Recipient.ID
			if account == "" {
				account = e.ID
			}
			switch {
			case m.Message != nil && m.Message.IsEcho:
				ignore("an echo of a sent message", "provider_message_id", m.Message.Mid)
			case m.Message != nil:
				in, ok := sendAPIInbound(channel, m.Sender.ID, m.Message.Mid, m.Message.Text, m.Message.Attachments)
				if !ok {
					ignore("an inbound message of an unsupported type", "provider_message_id", m.Message.Mid)
					continue
				}
				inbound(in, account)
			case m.Delivery != nil:
				for _, mid := range m.Delivery.Mids {
					status(mid, messaging.StatusDelivered, "", "")
				}
			case m.Read != nil && m.Read.Mid != "":
				status(m.Read.Mid, messaging.StatusRead, "", "")
			default:
				ignore("a messaging event the service does not handle")
			}
		}
	}
	if failed != nil {
		return nil, failed
	}
	return res, nil
}

// failure returns the code and text of a failed status: the first error's
// code and title (or message), with its details when they add something.
func failure(errs []metaError) (code, text string) {
	if len(errs) == 0 {
		return "unknown", "Message failed"
	}
	e := errs[0]
	code = strings.TrimSpace(string(e.Code))
	if code == "" {
		code = "unknown"
	}
	text = strings.TrimSpace(e.Title)
	if text == "" {
		text = strings.TrimSpace(e.Message)
	}
	d := strings.TrimSpace(e.ErrorData.Details)
	norm := func(s string) string { return strings.ToLower(strings.TrimRight(s, ". ")) }
	switch {
	case d == "" || norm(d) == norm(text):
	case text == "":
		text = d
	default:
		text += ": " + d
	}
	if text == "" {
		text = "Message failed"
	}
	return code, text
}

// waInboundMessage converts a WhatsApp inbound message; ok is false for
// types the service does not record.
func waInboundMessage(m *waInbound) (*messaging.InboundMessage, bool) {
	in := &messaging.InboundMessage{Channel: messaging.ChannelWhatsApp, From: m.From, ProviderMessageID: m.ID, Type: m.Type}
	media := map[string]*waInboundMedia{
		messaging.TypeImage: m.Image, messaging.TypeVideo: m.Video,
		messaging.TypeDocument: m.Document, messaging.TypeAudio: m.Audio,
	}
	switch m.Type {
	case messaging.TypeText:
		in.Text = m.Text.Body
	case messaging.TypeImage, messaging.TypeVideo, messaging.TypeDocument, messaging.TypeAudio:
		if md := media[m.Type]; md != nil {
			in.Caption = md.Caption
		}
	case "button":
		if m.Button == nil {
			return nil, false
		}
		in.Type, in.Text = messaging.TypeText, m.Button.Text
	case "interactive":
		switch {
		case m.Interactive != nil && m.Interactive.ButtonReply != nil:
			in.Text = m.Interactive.ButtonReply.Title
		case m.Interactive != nil && m.Interactive.ListReply != nil:
			in.Text = m.Interactive.ListReply.Title
		default:
			return nil, false
		}
		in.Type = messaging.TypeText
	default:
		return nil, false
	}
	return in, true
}

// sendAPIInbound converts a Messenger or Instagram inbound message: its
// text, or else its first image, video, audio or file attachment.
func sendAPIInbound(channel, from, mid, text string, atts []metaAttachment) (*messaging.InboundMessage, bool) {
	in := &messaging.InboundMessage{Channel: channel, From: from, ProviderMessageID: mid, Type: messaging.TypeText, Text: text}
	if text != "" {
		return in, true
	}
	for _, a := range atts {
		typ := a.Type
		if typ == "file" {
			typ = messaging.TypeDocument
		}
		switch typ {
		case messaging.TypeImage, messaging.TypeVideo, messaging.TypeAudio, messaging.TypeDocument:
			in.Type, in.MediaURL = typ, a.Payload.URL
			return in, true
		}
	}
	return nil, false
}
