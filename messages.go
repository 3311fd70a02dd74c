package messaging

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ujumbe/messaging/internal/metricname"
	"github.com/ujumbe/messaging/internal/spans"
	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"
)

// SendResult is what a send returns: the five fields of the spec's send
// response, and whether the call replayed an earlier send with the same
// idempotency key.
type SendResult struct {
	MessageID      string
	ConversationID string
	Status         string
	Channel        string
	To             string
	// Replayed is true when the result is that of an earlier request with
	// the same idempotency key; no new message was created.
	Replayed bool
}

// SendParams are the fields of a standard (non-template) send: a
// free-form message, which the customer-service window policy governs.
// Type is text, image, video, document, audio, sticker, interactive,
// location, contacts or reaction; each type takes its own members (the
// others are refused), and a channel carries the types its
// ChannelSpec.Outbound declares.
type SendParams struct {
	Channel  string
	To       string
	Type     string
	Text     string
	MediaURL string
	// MediaID sends a file of the workspace uploaded with
	// MediaUploads.Upload instead of MediaURL (image, video, document,
	// audio, sticker).
	MediaID  string
	Caption  string
	Filename string
	// Interactive is the message of type interactive: reply buttons, a
	// list or a call-to-action URL. A header's uploaded media is given as
	// Header.Media with only its ID set.
	Interactive *Interactive
	// Location is the location of type location (its URL is not sent).
	Location *Location
	// Contacts are the cards of type contacts.
	Contacts []SharedContact
	// Reaction is the reaction of type reaction.
	Reaction *ReactionParams
	// ReplyTo is the id of a message of the same conversation, ours or
	// inbound, that this one quotes (context.message_id); any type but
	// reaction.
	ReplyTo        string
	IdempotencyKey string
	// SendAt, when set, schedules the message (see Scheduled sends in the
	// package documentation of Messages.Send): it is stored queued and not
	// handed over before SendAt.
	SendAt *time.Time
}

// Messages sends and reads the messages of one workspace.
type Messages struct {
	svc *Service
	ws  string
}

var scopedIDRe = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// validateRecipient checks to for the channel of spec and returns its
// canonical form. A channel of phone recipients (WhatsApp) needs E.164;
// the others (Instagram, Messenger) take E.164 or a channel-scoped id of
// 1 to 64 letters, digits, '_' or '-'. A nil spec (a channel the service
// does not serve) is read as one of phone recipients.
func validateRecipient(spec *ChannelSpec, channel, to string) (string, error) {
	if to == "" {
		return "", validationError("to", "is required")
	}
	if strings.HasPrefix(to, "+") || spec == nil || spec.PhoneRecipients {
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

// validateHTTPURL checks that s, the field at path, is an absolute http
// or https URL.
func validateHTTPURL(path Path, s string) error {
	if len(s) > record.MaxURL {
		return validationErrorAt(path, "must be at most %d characters", record.MaxURL)
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return validationErrorAt(path, "must be an absolute http or https URL")
	}
	return nil
}

func validateIdempotencyKey(k string) error {
	if len(k) > record.MaxIdempotencyKey {
		return validationError("idempotency_key", "must be at most %d characters", record.MaxIdempotencyKey)
	}
	for _, r := range k {
		if r < 0x20 || r > 0x7e {
			return validationError("idempotency_key", "must contain only visible ASCII characters and spaces")
		}
	}
	return nil
}

// checkLen refuses a text, the field at path, longer than max characters.
// Its UTF-8 and NUL are checked before, for every field of a write, by
// refuseUnstorable.
func checkLen(path Path, s string, max int) error {
	if n := utf8.RuneCountInString(s); n > max {
		return validationErrorAt(path, "must be at most %d characters (got %d)", max, n)
	}
	return nil
}

// checkFilename checks a document's file name, the field at path.
func checkFilename(path Path, name string) error {
	if err := checkLen(path, name, record.MaxFilename); err != nil {
		return err
	}
	if strings.ContainsAny(name, "/\\") {
		return validationErrorAt(path, "must not contain path separators")
	}
	return nil
}

// validate checks p for the service s and returns its recipient in
// canonical form.
func (p *SendParams) validate(s *Service) (to string, err error) {
	if err := s.validateChannel(p.Channel); err != nil {
		return "", err
	}
	spec := s.spec(p.Channel)
	to, err = validateRecipient(spec, p.Channel, p.To)
	if err != nil {
		return "", err
	}
	switch p.Type {
	case "":
		return "", validationError("type", "is required")
	case record.TypeTemplate:
		return "", validationError("type", "must not be template here: send templates with SendTemplate (POST /v1/messages/templates)")
	}
	if _, ok := typeFields[p.Type]; !ok {
		return "", validationError("type", "must be one of %s (got %q)", sendTypes, p.Type)
	}
	if err := checkCarried(spec, p.Channel, p); err != nil {
		return "", err
	}
	if err := p.refuseForeignFields(); err != nil {
		return "", err
	}
	if p.ReplyTo != "" && p.Type == record.TypeReaction {
		return "", validationErrorAt(record.FieldPath("context").Member("message_id"), "is not allowed when type is reaction: reaction.message_id names the message")
	}
	switch p.Type {
	case record.TypeText:
		if strings.TrimSpace(p.Text) == "" {
			return "", validationError("text", "is required when type is text")
		}
		if err := checkLen(record.FieldPath("text"), p.Text, spec.MaxText); err != nil {
			return "", err
		}
	default:
		if err := p.validateRich(spec, p.Channel); err != nil {
			return "", err
		}
	}
	if p.Caption != "" {
		if err := checkLen(record.FieldPath("caption"), p.Caption, record.MaxCaption); err != nil {
			return "", err
		}
	}
	if p.Filename != "" {
		if err := checkFilename(record.FieldPath("filename"), p.Filename); err != nil {
			return "", err
		}
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
//
// Scheduled sends: with SendAt, the message is stored queued with its
// SendAt and the dispatcher does not hand it over before then (its DueAt
// is SendAt; a restart keeps it, as it is stored). SendAt must be at most
// record.MaxSendAhead (35 days) after the service's clock and not before
// it by more than record.SendAtTolerance (1 minute; such a send is due at
// once); otherwise the send is a validation_error naming send_at. The
// range is checked with the rest of what may refuse a new message, after
// validation: a repeat of an accepted request under its idempotency key
// answers as the first did even once its SendAt has passed. SendAt is part
// of the request an idempotency key stands for. The customer-service
// window and the channel's connection are checked at accept only, not
// again at SendAt: a free-form message whose window closed meanwhile is
// refused by the provider then, and fails with its reason. Until it is
// handed over, a scheduled message can be canceled (Cancel).
func (m *Messages) Send(ctx context.Context, p *SendParams) (*SendResult, error) {
	if err := requireStorable(p, "body", sendTexts); err != nil {
		return nil, err
	}
	to, err := p.validate(m.svc)
	if err != nil {
		return nil, err
	}
	msg := &Message{
		Channel: p.Channel, To: to, Type: p.Type, Text: p.Text,
		MediaURL: p.MediaURL, Caption: p.Caption, Filename: p.Filename,
		Outbound: p.outboundOf(), IdempotencyKey: p.IdempotencyKey, SendAt: utcTime(p.SendAt),
	}
	return m.accept(ctx, msg, kindSend)
}

// accept stores a validated outbound message of kind (kindSend or
// kindTemplate) as queued, honouring the idempotency key.
func (m *Messages) accept(ctx context.Context, msg *Message, kind string) (*SendResult, error) {
	if msg.IdempotencyKey != "" {
		hash, err := requestHash(kind, msg)
		if err != nil {
			return nil, &Error{Code: CodeInternal, Message: "internal error", Err: err}
		}
		msg.RequestHash = hash
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
	msg.ID = record.NewID("msg")
	msg.WorkspaceID = m.ws
	msg.ConversationID = record.ConversationID(m.ws, msg.Channel, msg.To)
	msg.Direction = record.DirectionOutbound
	msg.Status = StatusQueued
	msg.CreatedAt, msg.UpdatedAt, msg.DueAt = now, now, now
	if msg.SendAt != nil && msg.SendAt.After(now) {
		msg.DueAt = *msg.SendAt // no claim takes it before then
	}
	if f := msg.Fallback; f != nil {
		// The wait for delivery starts when the message may be sent.
		f.DueAt, f.UpdatedAt = msg.DueAt.Add(f.After), now
	}
	tel := m.svc.tel
	sctx, span := tel.start(ctx, "messaging.accept", tel.spanInternal)
	if span != nil {
		msg.TraceParent = traceParent(span.SpanContext())
		if span.IsRecording() {
			span.SetAttributes(metricname.AttrMessageID.String(msg.ID), metricname.AttrChannel.String(msg.Channel))
		}
	}
	stored, created, err := m.svc.store.MessageCreate(sctx, msg)
	spans.End(span, err)
	if optedOut := (*driver.OptedOutError)(nil); errors.As(err, &optedOut) {
		return nil, m.svc.optedOutError(ctx, m.ws, msg.Channel, msg.To, optedOut.At)
	}
	if err != nil {
		return nil, wrapStoreError(err, "message", msg.ID)
	}
	if !created {
		return m.replayed(stored, msg.RequestHash)
	}
	tel.accepted.Add(ctx, 1, tel.channelType(msg.Channel, msg.Type).add...)
	if !msg.DueAt.After(now) {
		m.svc.wakeDispatcher() // a scheduled message waits for the polls
	}
	return sendResult(stored, false), nil
}

// acceptable checks what may refuse a new message: a SendAt out of range,
// a template that is not approved, a channel that is not connected, a free-form message outside
// the customer-service window. A recipient who opted out is refused by
// the store, atomically with the insert (Store.MessageCreate).
func (m *Messages) acceptable(ctx context.Context, msg *Message, kind string) error {
	if err := checkSendAt(msg.SendAt, m.svc.now()); err != nil {
		return err
	}
	if kind == kindTemplate {
		if err := m.checkTemplate(ctx, msg); err != nil {
			return err
		}
		if err := m.svc.checkFallbackAccount(ctx, m.ws, msg.Fallback); err != nil {
			return err
		}
	}
	w, err := m.svc.requireChannel(ctx, m.ws, msg.Channel)
	if err != nil {
		return err
	}
	if kind == kindTemplate {
		return nil
	}
	if err := m.refuseOutsideWindow(ctx, w, msg); err != nil {
		return err
	}
	return m.resolveOutbound(ctx, msg)
}

// replayed answers a request whose idempotency key created prev: the
// original result, or a conflict when the request differs.
func (m *Messages) replayed(prev *Message, hash string) (*SendResult, error) {
	if prev.RequestHash != hash {
		return nil, errorOn(CodeConflict, "idempotency_key", "idempotency_key: was already used with a different request; use a new key for a new message", nil)
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
	msg, err := getRecord(ctx, m.svc.store.MessageGet, m.ws, "message", id)
	if err != nil {
		return nil, err
	}
	if err := m.svc.attachFallbacks(ctx, m.ws, msg); err != nil {
		return nil, err
	}
	return msg, nil
}

// requireChannel returns channel_unavailable unless the channel is connected
// in the workspace.
func (s *Service) requireChannel(ctx context.Context, ws, channel string) (*WorkspaceInfo, error) {
	w, err := s.store.WorkspaceGet(ctx, ws)
	if err != nil {
		return nil, wrapStoreError(err, "workspace", ws)
	}
	for _, c := range w.Channels {
		if c == channel {
			return w, nil
		}
	}
	if c, err := s.store.ConnectionGet(ctx, ws, channel); err == nil && c.Status != record.ConnectionDisconnected && !c.Holds() {
		why := "the provider has not verified its credentials yet"
		if c.Status == record.ConnectionError {
			why = "it does not hold its account"
		}
		return nil, errorOn(CodeChannelUnavailable, "channel", fmt.Sprintf("channel: the %s connection of this workspace is %s: %s (%s)", channel, c.Status, why, c.StatusReason), nil)
	}
	return nil, errorOn(CodeChannelUnavailable, "channel", fmt.Sprintf("channel: %s is not connected in this workspace", channel), nil)
}

func validateSendComponents(cs []SendComponent) error {
	if len(cs) > 20 {
		return validationError("components", "must hold at most 20 components")
	}
	for i, c := range cs {
		f := record.FieldPath("components").Index(i)
		switch c.Type {
		case "header", "body":
			if c.SubType != "" || c.Index != nil {
				return validationErrorAt(f.Member("sub_type"), "sub_type and index are only allowed on a button component")
			}
		case "button":
			switch c.SubType {
			case "url", "quick_reply", "copy_code":
			default:
				return validationErrorAt(f.Member("sub_type"), "must be url, quick_reply or copy_code for a button (got %q)", c.SubType)
			}
			if c.Index == nil || *c.Index < 0 || *c.Index > 9 {
				return validationErrorAt(f.Member("index"), "is required for a button: the button's position, 0 to 9")
			}
		case "":
			return validationErrorAt(f.Member("type"), "is required")
		default:
			return validationErrorAt(f.Member("type"), "must be header, body or button (got %q)", c.Type)
		}
		if len(c.Parameters) > 100 {
			return validationErrorAt(f.Member("parameters"), "must hold at most 100 parameters")
		}
		for j, p := range c.Parameters {
			pf := f.Member("parameters").Index(j)
			switch p.Type {
			case "text":
				if p.Text == "" {
					return validationErrorAt(pf.Member("text"), "is required for a text parameter")
				}
				if err := checkLen(pf.Member("text"), p.Text, record.MaxParamText); err != nil {
					return err
				}
			case "image", "video", "document":
				if c.Type != "header" {
					return validationErrorAt(pf.Member("type"), "%s parameters are only allowed in a header", p.Type)
				}
				if err := validateHTTPURL(pf.Member("link"), p.Link); err != nil {
					return err
				}
				if p.Filename != "" && (p.Type != "document" || checkLen(pf.Member("filename"), p.Filename, record.MaxFilename) != nil) {
					return validationErrorAt(pf.Member("filename"), "is only allowed for a document, at most %d characters", record.MaxFilename)
				}
			case "coupon_code":
				if p.CouponCode == "" || len(p.CouponCode) > 15 {
					return validationErrorAt(pf.Member("coupon_code"), "is required: 1 to 15 characters")
				}
			case "payload":
				if p.Payload == "" {
					return validationErrorAt(pf.Member("payload"), "is required for a payload parameter")
				}
				if err := checkLen(pf.Member("payload"), p.Payload, 128); err != nil {
					return err
				}
			case "":
				return validationErrorAt(pf.Member("type"), "is required")
			default:
				return validationErrorAt(pf.Member("type"), "must be text, image, video, document, coupon_code or payload (got %q)", p.Type)
			}
		}
	}
	return nil
}

// SendTemplate sends an approved WhatsApp template. The template_name and
// language must match an approved template of the workspace exactly,
// otherwise the error is template_not_found. Components are required when
// the template's header or body has variables, and a header component with
// the media link is required when its header is IMAGE, VIDEO or DOCUMENT.
// Each component sent must hold as many parameters as its part of the
// template takes (one per variable of the header or body; one for a
// dynamic URL, COPY_CODE or QUICK_REPLY button), or the send is a
// validation_error naming the component and nothing is queued. A missing
// button component is left to the channel provider, whose verdict arrives
// asynchronously in failure_reason ("[131008] Required parameter is
// missing"), as in the spec.
func (m *Messages) SendTemplate(ctx context.Context, p *SendTemplateParams) (*SendResult, error) {
	if err := requireStorable(p, "body", sendTemplateTexts); err != nil {
		return nil, err
	}
	to, err := validateRecipient(m.svc.spec(ChannelWhatsApp), ChannelWhatsApp, p.To)
	if err != nil {
		return nil, err
	}
	if p.TemplateName == "" {
		return nil, validationError("template_name", "is required")
	}
	lang := p.Language
	if lang == "" {
		lang = "en"
	}
	if len(p.TemplateName) > record.MaxTemplateName || !templateNameRe.MatchString(p.TemplateName) {
		return nil, errorOn(CodeTemplateNotFound, "template_name", fmt.Sprintf("template_name: no approved template %q in language %q", p.TemplateName, lang), nil)
	}
	if !languageRe.MatchString(lang) {
		return nil, validationError("language", "must be a language code such as en, sw or en_US (got %q)", lang)
	}
	if err := validateSendComponents(p.Components); err != nil {
		return nil, err
	}
	if err := validateIdempotencyKey(p.IdempotencyKey); err != nil {
		return nil, err
	}
	fb, err := m.svc.checkFallback(p.Fallback)
	if err != nil {
		return nil, err
	}
	msg := &Message{
		Channel: ChannelWhatsApp, To: to, Type: record.TypeTemplate, TemplateName: p.TemplateName, Language: lang,
		Components: p.Components, IdempotencyKey: p.IdempotencyKey, SendAt: utcTime(p.SendAt), Fallback: fb,
	}
	return m.accept(ctx, msg, kindTemplate)
}

// checkTemplate checks a template send against the workspace's template:
// it must be approved with exactly this name and language, the send must
// carry the header and body components the template cannot do without,
// and each component it carries must hold as many parameters as the
// template's part takes (see templateSlots).
func (m *Messages) checkTemplate(ctx context.Context, msg *Message) error {
	t, err := m.svc.store.TemplateGetByName(ctx, &driver.TemplateGetByNameParams{WorkspaceID: m.ws, Name: msg.TemplateName, Language: msg.Language})
	if err != nil && ErrorCode(err) != CodeNotFound {
		return wrapStoreError(err, "template", msg.TemplateName)
	}
	if err != nil || t.Status != record.TemplateApproved {
		return errorOn(CodeTemplateNotFound, "template_name", fmt.Sprintf("template_name: no approved template %q in language %q (names and languages must match exactly)", msg.TemplateName, msg.Language), nil)
	}
	return checkTemplateParams(t, msg.Components)
}

// templateSlot is a part of a template that a send component fills: its
// header, its body or one of its buttons.
type templateSlot struct {
	// what names the part in errors: "body", "header", "button 0".
	what string
	// subType is the sub_type of a button's component.
	subType string
	// params is how many parameters the part takes; -1 when the
	// template's text does not say (a variable this service cannot read).
	params int
	// optional is set when none is accepted too (a quick reply's payload).
	optional bool
	// required is set when the send must carry the part's component:
	// a header or body with variables, a media header. A missing button
	// component is left to the provider, as the spec says (131008).
	required bool
	// media is the format of a media header (IMAGE, VIDEO, DOCUMENT).
	media string
}

// templateSlots returns the parts of t a send may fill, by the key of
// their component ("header", "body", "button 0" to "button 9"). A header
// or body takes one parameter per variable; a media header one (the link);
// a dynamic URL button and a COPY_CODE button one; a QUICK_REPLY button
// its payload or none; a static URL or PHONE_NUMBER button none.
func templateSlots(t *Template) map[string]templateSlot {
	slots := map[string]templateSlot{"header": {what: "header"}, "body": {what: "body"}}
	vars := func(text string) int {
		v, err := TemplateVariables("text", text)
		if err != nil {
			return -1
		}
		return len(v)
	}
	for _, c := range t.Components {
		switch c.Type {
		case "HEADER":
			switch c.Format {
			case "IMAGE", "VIDEO", "DOCUMENT":
				slots["header"] = templateSlot{what: "header", params: 1, required: true, media: c.Format}
			default:
				n := vars(c.Text)
				slots["header"] = templateSlot{what: "header", params: n, required: n > 0}
			}
		case "BODY":
			n := vars(c.Text)
			slots["body"] = templateSlot{what: "body", params: n, required: n > 0}
		case "BUTTONS":
			for i, b := range c.Buttons {
				what := fmt.Sprintf("button %d", i)
				sl := templateSlot{what: what}
				switch {
				case b.Type == "URL":
					sl.subType = "url"
					if strings.HasSuffix(b.URL, "{{1}}") {
						sl.params = 1
					}
				case b.Type == "COPY_CODE":
					sl.subType, sl.params = "copy_code", 1
				case b.Type == "QUICK_REPLY":
					sl.subType, sl.params, sl.optional = "quick_reply", 1, true
				}
				slots[what] = sl
			}
		}
	}
	return slots
}

// checkTemplateParams checks the components cs of a send of t: one per
// part at most, each of a part t has, with as many parameters as the part
// takes, and every required part present. The errors name the component
// (components[1].parameters) or, for a missing one, components.
func checkTemplateParams(t *Template, cs []SendComponent) error {
	slots := templateSlots(t)
	seen := map[string]int{}
	for i, c := range cs {
		f := record.FieldPath("components").Index(i)
		key := c.Type
		if c.Type == "button" && c.Index != nil {
			key = fmt.Sprintf("button %d", *c.Index)
		}
		if j, dup := seen[key]; dup {
			return validationErrorAt(f, "repeats the %s of components[%d]: one component per part of the template", key, j)
		}
		seen[key] = i
		sl, ok := slots[key]
		switch {
		case !ok:
			return validationErrorAt(f.Member("index"), "template %q has no %s", t.Name, key)
		case sl.subType != "" && c.SubType != sl.subType:
			return validationErrorAt(f.Member("sub_type"), "template %q's %s is a %s button: sub_type must be %s (got %q)", t.Name, key, sl.subType, sl.subType, c.SubType)
		case sl.params >= 0 && len(c.Parameters) != sl.params && !(sl.optional && len(c.Parameters) == 0):
			return validationErrorAt(f.Member("parameters"), "template %q's %s takes %s: %d given", t.Name, key, paramCount(sl), len(c.Parameters))
		}
	}
	for _, key := range []string{"header", "body"} {
		sl := slots[key]
		if _, sent := seen[key]; !sent && sl.required {
			if sl.media != "" {
				return validationError("components", "template %q has a %s header: a header component with the media link is required", t.Name, sl.media)
			}
			return validationError("components", "template %q's %s takes %s: a %s component with them is required", t.Name, key, paramCount(sl), key)
		}
	}
	return nil
}

// paramCount describes the parameters slot sl takes ("2 parameters").
func paramCount(sl templateSlot) string {
	switch {
	case sl.media != "":
		return "1 parameter (the " + strings.ToLower(sl.media) + " link)"
	case sl.optional:
		return "at most 1 parameter"
	case sl.params == 1:
		return "1 parameter"
	}
	return fmt.Sprintf("%d parameters", sl.params)
}

// checkSendAt refuses a scheduled send's sendAt (nil: not scheduled) that
// is more than record.SendAtTolerance before now or more than
// record.MaxSendAhead after it.
func checkSendAt(sendAt *time.Time, now time.Time) error {
	if sendAt == nil {
		return nil
	}
	if sendAt.Before(now.Add(-record.SendAtTolerance)) {
		return validationError("send_at", "must not be in the past (got %s, the service's clock reads %s)", record.FormatTime(*sendAt), record.FormatTime(now))
	}
	if sendAt.After(now.Add(record.MaxSendAhead)) {
		return validationError("send_at", "must be at most 35 days ahead (got %s, the latest is %s)", record.FormatTime(*sendAt), record.FormatTime(now.Add(record.MaxSendAhead)))
	}
	return nil
}

// utcTime returns a copy of *t in UTC; nil for nil.
func utcTime(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// Cancel cancels a queued outbound message of the workspace that no
// dispatcher worker has begun to hand over (not leased, no hand-over
// whose outcome is unknown): its status becomes canceled, an addition to
// the spec's statuses, final, and it is never claimed. The change is one
// compare-and-set in the store (driver.MessageStatusParams.Unclaimed), so
// of a cancel and a concurrent claim exactly one wins. Like every status
// change it emits a message.status_updated event (previous status
// queued). It returns the message as canceled.
//
// A message that is sent, delivered, read, failed or already canceled, an
// inbound message, and one being handed over to the provider is a
// conflict naming status: cancelling twice answers conflict the second
// time. An unknown id, or one of another workspace, is not_found.
func (m *Messages) Cancel(ctx context.Context, id string) (*Message, error) {
	s := m.svc
	before, err := getRecord(ctx, s.store.MessageGet, m.ws, "message", id)
	if err != nil {
		return nil, err
	}
	if err := cancellable(before); err != nil {
		return nil, err
	}
	now := s.now()
	ev := statusEvent(before, statusAfter(before, &StatusUpdate{Status: StatusCanceled}, "", now), now)
	rec, err := ev.record()
	if err != nil {
		s.log.Error("encoding event failed", "err", err)
		rec = nil
	} else {
		rec.TraceParent = before.TraceParent
	}
	res := s.statuses.update(ctx, &driver.MessageStatusParams{
		WorkspaceID: m.ws, ID: before.ID, From: []string{StatusQueued}, To: StatusCanceled, Unclaimed: true, At: now, Event: rec,
	}, nil)
	if res.err != nil {
		return nil, wrapStoreError(res.err, "message", id)
	}
	if !res.changed {
		// A claim (or another change) came first.
		if res.after != nil {
			if err := cancellable(res.after); err != nil {
				return nil, err
			}
		}
		return nil, errorOn(CodeConflict, "status", "status: the message is being handed over to the provider and can no longer be canceled", nil)
	}
	s.tel.statusChanged(ctx, before, StatusCanceled, now)
	if res.queued {
		s.wakeWebhooks()
	}
	s.events.publish(ctx, ev)
	return res.after, nil
}

// cancellable returns the conflict that stops a cancel of msg, or nil.
func cancellable(msg *Message) error {
	switch {
	case msg.Direction != record.DirectionOutbound:
		return errorOn(CodeConflict, "status", "status: only an outbound message can be canceled; this one is inbound", nil)
	case msg.Status != StatusQueued:
		return errorOn(CodeConflict, "status", fmt.Sprintf("status: only a queued message can be canceled; this one is %s", msg.Status), nil)
	case msg.LeaseOwner != "" || msg.UnconfirmedSince != nil:
		return errorOn(CodeConflict, "status", "status: the message is being handed over to the provider and can no longer be canceled", nil)
	}
	return nil
}
