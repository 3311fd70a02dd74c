package metaprovider

import (
	"cmp"
	"context"
	"log/slog"
	"strings"

	"github.com/ujumbe/messaging/record"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/internal/textcheck"
)

// result counts what a notification did; it is the body of the answer.
type result struct {
	Statuses  int `json:"statuses"`
	Messages  int `json:"messages"`
	Templates int `json:"templates"`
	// Accounts counts the account health reports applied
	// (phone_number_quality_update).
	Accounts int `json:"accounts"`
	Ignored  int `json:"ignored"`
}

// notification applies the items of one notification to the service,
// counting them, and keeps the last failure of the service.
type notification struct {
	rc     *Receiver
	log    *slog.Logger
	res    result
	failed error
	// workspaces holds the accounts' workspaces found so far ("": none).
	workspaces map[string]string
}

// apply applies every item of p. It returns an error only when the service
// itself failed, so that Meta retries the notification.
func (rc *Receiver) apply(ctx context.Context, log *slog.Logger, p *webhookPayload) (*result, error) {
	n := &notification{rc: rc, log: log, workspaces: map[string]string{}}
	channel := channelOf(p.Object)
	if channel == "" {
		n.ignore(ctx, "a notification of an unknown object")
		return &n.res, nil
	}
	for i := range p.Entry {
		e := &p.Entry[i]
		for j := range e.Changes {
			n.change(ctx, channel, e.ID, &e.Changes[j])
		}
		for j := range e.Messaging {
			n.event(ctx, channel, e.ID, &e.Messaging[j])
		}
	}
	if n.failed != nil {
		return nil, n.failed
	}
	return &n.res, nil
}

// channelOf maps a notification's object to its channel; "" for objects
// the receiver does not handle.
func channelOf(object string) string {
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

// change applies a WhatsApp change of the entry entryID: a template event
// of its WhatsApp Business Account (the entry's id), or its status reports
// and then its inbound messages to the change's phone-number id. A status
// report carrying biz_opaque_callback_data is correlated with our message
// of that id in the phone number's workspace.
func (n *notification) change(ctx context.Context, channel, entryID string, c *webhookChange) {
	switch {
	case c.Field == "" || c.Field == "messages":
	case channel == messaging.ChannelWhatsApp && (c.Field == fieldTemplateStatus || c.Field == fieldTemplateQuality):
		n.template(ctx, entryID, c.Field, &c.Value)
		return
	case channel == messaging.ChannelWhatsApp && c.Field == fieldPhoneNumberQuality:
		n.quality(ctx, entryID, &c.Value)
		return
	default:
		n.ignore(ctx, "a change of an unsupported field", "field", c.Field)
		return
	}
	account := c.Value.Metadata.PhoneNumberID
	for _, s := range c.Value.Statuses {
		p := &messaging.ProviderStatus{ProviderMessageID: s.ID, Status: s.Status}
		if s.Status == messaging.StatusFailed {
			p.Code, p.Text = failure(s.Errors)
		}
		if id := s.BizOpaqueCallbackData; correlated(id) && s.ID != "" {
			ws, err := n.workspaceOf(ctx, channel, account)
			if err != nil {
				n.outcome(ctx, err, "routing of a status report", "account", account, "provider_message_id", s.ID)
				continue
			}
			// An unknown account leaves the report uncorrelated: it
			// still applies to a message that carries its id.
			if ws != "" {
				p.WorkspaceID, p.MessageID = ws, id
			}
		}
		n.status(ctx, p)
	}
	for i := range c.Value.Messages {
		m := &c.Value.Messages[i]
		n.inbound(ctx, waInboundMessage(m), account)
	}
}

// event applies a Messenger or Instagram event of an entry: an inbound
// message to its recipient (or, without one, to the entry's account), a
// delivery receipt, a read receipt, or the echo of a message the account
// sent (see echo).
func (n *notification) event(ctx context.Context, channel, entryID string, m *messagingEvent) {
	account := m.Recipient.ID
	if account == "" {
		account = entryID
	}
	switch {
	case m.Message != nil && m.Message.IsEcho:
		n.echo(ctx, channel, cmp.Or(m.Sender.ID, entryID), m.Message.Mid, m.Message.Metadata)
	case m.Message != nil:
		n.inbound(ctx, sendAPIInbound(channel, m.Sender.ID, m.Message.Mid, m.Message.Text, m.Message.Attachments), account)
	case m.Delivery != nil:
		for _, mid := range m.Delivery.Mids {
			n.status(ctx, &messaging.ProviderStatus{ProviderMessageID: mid, Status: messaging.StatusDelivered})
		}
	case m.Read != nil && m.Read.Mid != "":
		n.status(ctx, &messaging.ProviderStatus{ProviderMessageID: m.Read.Mid, Status: messaging.StatusRead})
	default:
		n.ignore(ctx, "a messaging event the service does not handle")
	}
}

// echo applies the echo of message mid sent by account: with metadata
// (our message id, which every send carries) it is the status sent of mid,
// correlated with our message of that id in the account's workspace, so
// that it confirms a send whose answer never came. The metadata is
// trusted as correlation only: nothing of the echo is recorded as
// content. An echo without usable metadata (a message another app or the
// inbox sent), or of an account no workspace has, is ignored.
func (n *notification) echo(ctx context.Context, channel, account, mid, metadata string) {
	if !correlated(metadata) {
		n.ignore(ctx, "an echo of a sent message", "provider_message_id", mid)
		return
	}
	ws, err := n.workspaceOf(ctx, channel, account)
	switch {
	case err != nil:
		n.outcome(ctx, err, "routing of an echo", "account", account, "provider_message_id", mid)
	case ws == "":
		n.ignore(ctx, "an echo from an unknown account", "account", account, "provider_message_id", mid)
	default:
		n.status(ctx, &messaging.ProviderStatus{ProviderMessageID: mid, Status: messaging.StatusSent, WorkspaceID: ws, MessageID: metadata})
	}
}

// correlated reports whether id, echoed by Meta, can be our message id:
// not empty, no longer than a send carries, and text a store keeps.
func correlated(id string) bool {
	return id != "" && len(id) <= maxCorrelation && textcheck.Rule(id) == ""
}

// workspaceOf returns the workspace of account on channel: the one
// ReceiverOptions.Accounts gives, else the one whose connection on the
// channel has the account (Service.WorkspaceForAccount); "" when neither
// knows it. The error is a failure of the service.
func (n *notification) workspaceOf(ctx context.Context, channel, account string) (string, error) {
	if account == "" {
		return "", nil
	}
	if ws, ok := n.rc.accounts[account]; ok {
		return ws, nil
	}
	if ws, ok := n.workspaces[account]; ok {
		return ws, nil
	}
	ws, err := n.rc.svc.WorkspaceForAccount(ctx, channel, account)
	switch {
	case messaging.ErrorCode(err) == messaging.CodeNotFound:
		ws = ""
	case err != nil:
		return "", err
	}
	n.workspaces[account] = ws
	return ws, nil
}

// Fields of WhatsApp changes carrying template events.
const (
	fieldTemplateStatus  = "message_template_status_update"
	fieldTemplateQuality = "message_template_quality_update"
)

// template applies a template event of the WhatsApp Business Account waba
// through Service.ApplyTemplateEvent. The reason of a status update is its
// reason or, when that is none, its other_info.title (Meta explains a
// pause there).
func (n *notification) template(ctx context.Context, waba, field string, v *webhookValue) {
	ev := &messaging.TemplateEvent{OwnerID: waba, ProviderTemplateID: string(v.MessageTemplateID),
		Name: v.MessageTemplateName, Language: v.MessageTemplateLanguage}
	if field == fieldTemplateQuality {
		ev.Event, ev.Quality = record.ProviderTemplateQuality, v.NewQualityScore
	} else {
		ev.Event, ev.Reason = v.Event, v.Reason
		if (ev.Reason == "" || strings.EqualFold(ev.Reason, "NONE")) && v.OtherInfo != nil {
			ev.Reason = v.OtherInfo.Title
		}
	}
	args := []any{"waba_id", waba, "provider_template_id", ev.ProviderTemplateID, "name", ev.Name, "language", ev.Language, "event", ev.Event}
	if waba == "" {
		n.ignore(ctx, "a template event without a WhatsApp Business Account id", args...)
		return
	}
	_, err := n.rc.svc.ApplyTemplateEvent(ctx, ev)
	if n.outcome(ctx, err, "template event", args...) {
		n.res.Templates++
	}
}

// fieldPhoneNumberQuality is the field of WhatsApp changes reporting a
// change of a phone number's quality or messaging limit.
const fieldPhoneNumberQuality = "phone_number_quality_update"

// quality applies a phone_number_quality_update of the WhatsApp Business
// Account waba through Service.ApplyChannelQualityEvent: the connection of
// that WABA whose number is display_phone_number. The tier is
// current_limit, else the daily limit as a number (newer versions); the
// quality rating follows from the event: FLAGGED is RED, UNFLAGGED GREEN
// (Meta's notification carries no rating; the next verification reads the
// exact one).
func (n *notification) quality(ctx context.Context, waba string, v *webhookValue) {
	ev := &messaging.ChannelQualityEvent{Channel: messaging.ChannelWhatsApp, OwnerID: waba, DisplayPhoneNumber: v.DisplayPhoneNumber,
		Event: strings.ToUpper(strings.TrimSpace(v.Event)), MessagingTier: tierOf(v.CurrentLimit)}
	if ev.MessagingTier == "" {
		ev.MessagingTier = tierOf(string(cmp.Or(v.MaxDailyConversationsPerBusiness, v.MaxDailyConversationPerPhone)))
	}
	switch ev.Event {
	case "FLAGGED":
		ev.QualityRating = record.QualityRed
	case "UNFLAGGED":
		ev.QualityRating = record.QualityGreen
	}
	args := []any{"waba_id", waba, "display_phone_number", ev.DisplayPhoneNumber, "event", ev.Event, "messaging_tier", ev.MessagingTier}
	switch {
	case waba == "":
		n.ignore(ctx, "a phone number quality update without a WhatsApp Business Account id", args...)
		return
	case ev.QualityRating == "" && ev.MessagingTier == "":
		n.ignore(ctx, "a phone number quality update that changes neither quality nor limit", args...)
		return
	}
	_, err := n.rc.svc.ApplyChannelQualityEvent(ctx, ev)
	if n.outcome(ctx, err, "phone number quality update", args...) {
		n.res.Accounts++
	}
}

// tierOf is Meta's messaging limit tier of a limit as a webhook writes it:
// a tier name (TIER_10K) as it is, a number of conversations (10000) or
// UNLIMITED as the tier's name; "" for anything else (TIER_NOT_SET, an
// unknown number).
func tierOf(limit string) string {
	l := strings.ToUpper(strings.TrimSpace(limit))
	switch l {
	case "", "TIER_NOT_SET":
		return ""
	case "UNLIMITED":
		return record.TierUnlimited
	case "50":
		return "TIER_50"
	case "250":
		return record.Tier250
	case "1000", "1K":
		return record.Tier1K
	case "2000", "2K":
		return "TIER_2K"
	case "10000", "10K":
		return record.Tier10K
	case "100000", "100K":
		return record.Tier100K
	}
	if strings.HasPrefix(l, "TIER_") {
		return l
	}
	return ""
}

// status applies the status report p through Service.ApplyProviderStatus.
func (n *notification) status(ctx context.Context, p *messaging.ProviderStatus) {
	id, st := p.ProviderMessageID, p.Status
	if id == "" {
		n.ignore(ctx, "a status without id")
		return
	}
	switch st {
	case messaging.StatusSent, messaging.StatusDelivered, messaging.StatusRead, messaging.StatusFailed:
	default:
		n.ignore(ctx, "a status the service does not track", "provider_message_id", id, "status", st)
		return
	}
	args := []any{"provider_message_id", id, "status", st}
	if p.MessageID != "" {
		args = append(args, "workspace", p.WorkspaceID, "message_id", p.MessageID)
	}
	_, err := n.rc.svc.ApplyProviderStatus(ctx, p)
	if n.outcome(ctx, err, "status", args...) {
		n.res.Statuses++
	}
}

// inbound records in, received by account, through Service.RecordInbound
// in the account's workspace: the one ReceiverOptions.Accounts gives, else
// the one whose connection on the channel has the account
// (Service.WorkspaceForAccount).
func (n *notification) inbound(ctx context.Context, in *messaging.InboundMessage, account string) {
	ws, err := n.workspaceOf(ctx, in.Channel, account)
	if err != nil {
		n.outcome(ctx, err, "routing of an inbound message", "account", account, "provider_message_id", in.ProviderMessageID)
		return
	}
	if ws == "" {
		n.ignore(ctx, "an inbound message to an unknown account", "account", account, "provider_message_id", in.ProviderMessageID)
		return
	}
	in.WorkspaceID = ws
	_, err = n.rc.svc.RecordInbound(ctx, in)
	if n.outcome(ctx, err, "inbound message", "workspace", ws, "provider_message_id", in.ProviderMessageID) {
		n.res.Messages++
	}
}

// ignore counts and logs an item that is not applied.
func (n *notification) ignore(ctx context.Context, msg string, args ...any) {
	n.res.Ignored++
	n.log.InfoContext(ctx, "meta webhook: ignored "+msg, args...)
}

// outcome reports whether the service applied an item (err is nil). An
// item the service refuses (not found, invalid, conflicting) is ignored;
// any other error is a failure of the service, which fails the
// notification.
func (n *notification) outcome(ctx context.Context, err error, what string, args ...any) bool {
	if err == nil {
		return true
	}
	switch messaging.ErrorCode(err) {
	case messaging.CodeNotFound, messaging.CodeValidation, messaging.CodeConflict:
		n.ignore(ctx, what, append(args, "reason", err.Error())...)
	default:
		n.res.Ignored++
		n.log.ErrorContext(ctx, "meta webhook: "+what+" failed; asking Meta to retry", append(args, "err", err.Error())...)
		n.failed = err
	}
	return false
}

// failure returns the code and text of a failed status: the first error's
// code and title (or message), with its details when they add something.
func failure(errs []webhookError) (code, text string) {
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
	switch {
	case d == "" || sameSentence(d, text):
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

// sameSentence reports whether a and b are equal once lower-cased and
// stripped of trailing dots and spaces.
func sameSentence(a, b string) bool {
	norm := func(s string) string { return strings.ToLower(strings.TrimRight(s, ". ")) }
	return norm(a) == norm(b)
}

// waInboundMessage converts a WhatsApp inbound message with its content:
// media (image, video, audio, document, sticker) with its id, location,
// contacts, button and list replies, quick-reply buttons, reactions, and
// the message it quotes. A type without its member, and a type the service
// does not know, is recorded as the service's unsupported type with the
// raw type name (an "unsupported" notification: its unsupported.type when
// given).
func waInboundMessage(m *waInbound) *messaging.InboundMessage {
	in := &messaging.InboundMessage{Channel: messaging.ChannelWhatsApp, From: m.From, ProviderMessageID: m.ID, Type: m.Type}
	c := &messaging.InboundContent{}
	unsupported := func() {
		in.Type, c.RawType = record.TypeUnsupported, m.Type
		if m.Type == record.TypeUnsupported && m.Unsupported != nil && m.Unsupported.Type != "" {
			c.RawType = m.Unsupported.Type
		}
		if c.RawType == "" {
			c.RawType = record.TypeUnsupported
		}
	}
	media := map[string]*waInboundMedia{
		record.TypeImage: m.Image, record.TypeVideo: m.Video, record.TypeDocument: m.Document,
		record.TypeAudio: m.Audio, record.TypeSticker: m.Sticker,
	}
	switch m.Type {
	case record.TypeText:
		in.Text = m.Text.Body
	case record.TypeImage, record.TypeVideo, record.TypeDocument, record.TypeAudio, record.TypeSticker:
		md := media[m.Type]
		if md == nil || md.ID == "" {
			unsupported()
			break
		}
		in.Caption = md.Caption
		c.Media = &record.InboundMedia{ProviderMediaID: md.ID, MimeType: md.MimeType, SHA256: md.SHA256,
			Caption: md.Caption, Filename: md.Filename, Animated: md.Animated}
	case record.TypeLocation:
		if m.Location == nil {
			unsupported()
			break
		}
		l := m.Location
		c.Location = &record.Location{Latitude: l.Latitude, Longitude: l.Longitude, Name: l.Name, Address: l.Address, URL: l.URL}
	case record.TypeContacts:
		if len(m.Contacts) == 0 {
			unsupported()
			break
		}
		c.Contacts = waSharedContacts(m.Contacts)
	case record.TypeButton:
		if m.Button == nil {
			unsupported()
			break
		}
		in.Text = m.Button.Text
		c.Reply = &record.InteractiveReply{Kind: record.ReplyQuickButton, ID: m.Button.Payload, Title: m.Button.Text}
	case record.TypeInteractive:
		item, kind := waChosenReply(m)
		if item == nil {
			// A reply of another kind (a flow's nfm_reply): its kind is
			// the raw type.
			unsupported()
			if m.Interactive != nil && m.Interactive.Type != "" {
				c.RawType = "interactive." + m.Interactive.Type
			}
			break
		}
		in.Text = item.Title
		c.Reply = &record.InteractiveReply{Kind: kind, ID: item.ID, Title: item.Title, Description: item.Description}
	case record.TypeReaction:
		if m.Reaction == nil || m.Reaction.MessageID == "" {
			unsupported()
			break
		}
		c.Reaction = &record.Reaction{ProviderMessageID: m.Reaction.MessageID, Emoji: m.Reaction.Emoji}
	default:
		unsupported()
	}
	if m.Context != nil && m.Context.ID != "" {
		c.Context = &messaging.ReplyContext{ProviderMessageID: m.Context.ID}
	}
	if hasInboundContent(c) {
		in.Content = c
	}
	return in
}

// waSharedContacts converts the contact cards of a contacts message.
func waSharedContacts(cards []waContact) []record.SharedContact {
	var out []record.SharedContact
	for _, wc := range cards {
		sc := record.SharedContact{FormattedName: wc.Name.FormattedName, FirstName: wc.Name.FirstName,
			LastName: wc.Name.LastName, Organization: wc.Org.Company}
		for _, p := range wc.Phones {
			sc.Phones = append(sc.Phones, record.ContactPhone{Phone: p.Phone, WaID: p.WaID, Type: p.Type})
		}
		for _, e := range wc.Emails {
			sc.Emails = append(sc.Emails, record.ContactEmail{Email: e.Email, Type: e.Type})
		}
		out = append(out, sc)
	}
	return out
}

// waChosenReply returns the button or list row an interactive message
// chose, with its reply kind; nil for a reply of another kind.
func waChosenReply(m *waInbound) (*waReplyItem, string) {
	it := m.Interactive
	switch {
	case it == nil:
	case it.ButtonReply != nil:
		return it.ButtonReply, record.ReplyButton
	case it.ListReply != nil:
		return it.ListReply, record.ReplyList
	}
	return nil, ""
}

// hasInboundContent reports whether c holds anything besides the text
// and caption, so that the inbound message carries it.
func hasInboundContent(c *messaging.InboundContent) bool {
	return c.Media != nil || c.Location != nil || c.Contacts != nil || c.Reply != nil || c.Reaction != nil ||
		c.Context != nil || c.RawType != ""
}

// sendAPIInbound converts a Messenger or Instagram inbound message: its
// text, or else its first image, video, audio or file attachment (whose
// URL is the provider's), or else the service's unsupported type with the
// first attachment's type as the raw type ("message" without one).
func sendAPIInbound(channel, from, mid, text string, atts []fbAttachment) *messaging.InboundMessage {
	in := &messaging.InboundMessage{Channel: channel, From: from, ProviderMessageID: mid, Type: record.TypeText, Text: text}
	if text != "" {
		return in
	}
	for _, a := range atts {
		typ := a.Type
		if typ == "file" {
			typ = record.TypeDocument
		}
		switch typ {
		case record.TypeImage, record.TypeVideo, record.TypeAudio, record.TypeDocument:
			in.Type, in.MediaURL = typ, a.Payload.URL
			return in
		}
	}
	raw := "message"
	if len(atts) > 0 && atts[0].Type != "" {
		raw = atts[0].Type
	}
	in.Type, in.Content = record.TypeUnsupported, &messaging.InboundContent{RawType: raw}
	return in
}
