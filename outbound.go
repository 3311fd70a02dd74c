package messaging

import (
	"context"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ujumbe/messaging/record"
)

// ReactionParams is the reaction of a send of type reaction: the id of a
// message of the same conversation (ours or inbound) and the emoji, empty
// to remove the business's earlier reaction.
type ReactionParams struct {
	MessageID string
	Emoji     string
}

// The rich outbound checks of a send: each member a type needs, the
// channel's support for it (ChannelSpec.Outbound) and Meta's limits
// (record's Max constants). They run before anything is stored; the
// references to other records (the quoted message, the message reacted
// to, uploaded media) are resolved afterwards, by resolveOutbound.

// extraFields are the members of a send beyond channel, to, type and
// idempotency_key, in the order errors name them, with whether p sets
// each.
func (p *SendParams) extraFields() []struct {
	name string
	set  bool
} {
	return []struct {
		name string
		set  bool
	}{
		{"text", p.Text != ""}, {"media_url", p.MediaURL != ""}, {"media_id", p.MediaID != ""},
		{"caption", p.Caption != ""}, {"filename", p.Filename != ""},
		{"interactive", p.Interactive != nil}, {"location", p.Location != nil},
		{"contacts", p.Contacts != nil}, {"reaction", p.Reaction != nil},
	}
}

// typeFields are the members each send type takes (besides the quoted
// message, context.message_id, which every type but reaction takes).
var typeFields = map[string][]string{
	record.TypeText:        {"text"},
	record.TypeImage:       {"media_url", "media_id", "caption"},
	record.TypeVideo:       {"media_url", "media_id", "caption"},
	record.TypeDocument:    {"media_url", "media_id", "filename"},
	record.TypeAudio:       {"media_url", "media_id"},
	record.TypeSticker:     {"media_url", "media_id"},
	record.TypeInteractive: {"interactive"},
	record.TypeLocation:    {"location"},
	record.TypeContacts:    {"contacts"},
	record.TypeReaction:    {"reaction"},
}

// sendTypes lists the send types in the order errors name them.
const sendTypes = "text, image, video, document, audio, sticker, interactive, location, contacts, reaction"

// refuseForeignFields refuses the first member p sets that its type does
// not take.
func (p *SendParams) refuseForeignFields() error {
	takes := typeFields[p.Type]
	for _, f := range p.extraFields() {
		if f.set && !slices.Contains(takes, f.name) {
			return validationError(f.name, "is not allowed when type is %s", p.Type)
		}
	}
	return nil
}

// checkCarried refuses a type, or a part of it, that the channel does not
// carry.
func checkCarried(spec *ChannelSpec, channel string, p *SendParams) error {
	var o OutboundSupport
	if spec != nil {
		o = spec.Outbound
	}
	carried := map[string]bool{
		record.TypeText: true, record.TypeImage: true, record.TypeVideo: true, record.TypeDocument: true, record.TypeAudio: true,
		record.TypeInteractive: len(o.Interactive) > 0, record.TypeLocation: o.Location, record.TypeContacts: o.Contacts,
		record.TypeReaction: o.Reaction, record.TypeSticker: o.Sticker,
	}
	if !carried[p.Type] {
		return validationError("type", "%s messages are not carried on channel %s", p.Type, channel)
	}
	if p.ReplyTo != "" && !o.Replies {
		return validationErrorAt(record.FieldPath("context").Member("message_id"), "quoting a message is not carried on channel %s", channel)
	}
	return nil
}

// validateRich checks the member of p's rich type (interactive, location,
// contacts, reaction) and p's media source.
func (p *SendParams) validateRich(spec *ChannelSpec, channel string) error {
	switch p.Type {
	case record.TypeImage, record.TypeVideo, record.TypeDocument, record.TypeAudio, record.TypeSticker:
		switch {
		case p.MediaURL == "" && p.MediaID == "":
			return validationError("media_url", "is required when type is %s (or media_id, an uploaded file)", p.Type)
		case p.MediaURL != "" && p.MediaID != "":
			return validationError("media_id", "is not allowed with media_url: give one of them")
		case p.MediaURL != "":
			return validateHTTPURL(record.FieldPath("media_url"), p.MediaURL)
		}
		return checkMediaID(record.FieldPath("media_id"), p.MediaID)
	case record.TypeInteractive:
		if p.Interactive == nil {
			return validationError("interactive", "is required when type is interactive")
		}
		return validateInteractive(p.Interactive, spec.Outbound, channel)
	case record.TypeLocation:
		if p.Location == nil {
			return validationError("location", "is required when type is location")
		}
		return validateLocation(p.Location)
	case record.TypeContacts:
		return validateContactCards(p.Contacts)
	case record.TypeReaction:
		if p.Reaction == nil {
			return validationError("reaction", "is required when type is reaction")
		}
		return validateReaction(p.Reaction, spec.Outbound)
	}
	return nil
}

// checkMediaID refuses a media id that cannot name an upload.
func checkMediaID(path Path, id string) error {
	if len(id) > 64 || !strings.HasPrefix(id, "med_") {
		return validationErrorAt(path, "must be the id of an uploaded file (med_...), as POST /v1/media answers it")
	}
	return nil
}

// required refuses a blank s, the field at path, and one longer than max
// characters.
func required(path Path, s string, max int) error {
	if strings.TrimSpace(s) == "" {
		return validationErrorAt(path, "is required")
	}
	return checkLen(path, s, max)
}

func validateInteractive(in *Interactive, o OutboundSupport, channel string) error {
	at := record.FieldPath("interactive")
	if in.Type == "" {
		return validationErrorAt(at.Member("type"), "is required: button, list or cta_url")
	}
	if !slices.Contains([]string{record.InteractiveTypeButton, record.InteractiveTypeList, record.InteractiveTypeCTAURL}, in.Type) {
		return validationErrorAt(at.Member("type"), "must be button, list or cta_url (got %q)", in.Type)
	}
	if !slices.Contains(o.Interactive, in.Type) {
		return validationErrorAt(at.Member("type"), "interactive %s messages are not carried on channel %s (it carries %s)", in.Type, channel, strings.Join(o.Interactive, ", "))
	}
	maxBody := o.MaxInteractiveBody
	if maxBody == 0 {
		maxBody = record.MaxInteractiveBody
	}
	if err := required(at.Member("body"), in.Body, maxBody); err != nil {
		return err
	}
	if in.Footer != "" {
		if !o.InteractiveFooter {
			return validationErrorAt(at.Member("footer"), "is not carried on channel %s", channel)
		}
		if err := checkLen(at.Member("footer"), in.Footer, record.MaxInteractiveFooter); err != nil {
			return err
		}
	}
	if in.Header != nil {
		if !o.InteractiveHeader {
			return validationErrorAt(at.Member("header"), "is not carried on channel %s", channel)
		}
		if err := validateInteractiveHeader(at.Member("header"), in.Header, in.Type); err != nil {
			return err
		}
	}
	for name, set := range map[string]bool{"buttons": in.Buttons != nil, "list": in.List != nil, "cta_url": in.CTA != nil} {
		want := map[string]string{"buttons": record.InteractiveTypeButton, "list": record.InteractiveTypeList, "cta_url": record.InteractiveTypeCTAURL}[name]
		if set && in.Type != want {
			return validationErrorAt(at.Member(name), "is only allowed when interactive.type is %s", want)
		}
	}
	switch in.Type {
	case record.InteractiveTypeButton:
		return validateReplyButtons(at.Member("buttons"), in.Buttons)
	case record.InteractiveTypeList:
		if in.List == nil {
			return validationErrorAt(at.Member("list"), "is required when interactive.type is list")
		}
		return validateList(at.Member("list"), in.List)
	default:
		if in.CTA == nil {
			return validationErrorAt(at.Member("cta_url"), "is required when interactive.type is cta_url")
		}
		if err := required(at.Member("cta_url").Member("display_text"), in.CTA.DisplayText, record.MaxCTADisplayText); err != nil {
			return err
		}
		return validateHTTPSURL(at.Member("cta_url").Member("url"), in.CTA.URL)
	}
}

// validateHTTPSURL checks that s, the field at path, is an absolute https
// URL.
func validateHTTPSURL(path Path, s string) error {
	if s == "" {
		return validationErrorAt(path, "is required")
	}
	if err := validateHTTPURL(path, s); err != nil || !strings.HasPrefix(strings.ToLower(s), "https:") {
		return validationErrorAt(path, "must be an absolute https URL")
	}
	return nil
}

func validateInteractiveHeader(at Path, h *InteractiveHeader, kind string) error {
	switch h.Type {
	case "text":
		if h.MediaURL != "" || h.Media != nil || h.Filename != "" {
			return validationErrorAt(at.Member("media_url"), "is not allowed in a text header")
		}
		return required(at.Member("text"), h.Text, record.MaxInteractiveHeader)
	case record.TypeImage, record.TypeVideo, record.TypeDocument:
		if kind == record.InteractiveTypeList {
			return validationErrorAt(at.Member("type"), "must be text in a list message (got %q)", h.Type)
		}
		if h.Text != "" {
			return validationErrorAt(at.Member("text"), "is only allowed in a text header")
		}
		if h.Filename != "" {
			if h.Type != record.TypeDocument {
				return validationErrorAt(at.Member("filename"), "is only allowed in a document header")
			}
			if err := checkFilename(at.Member("filename"), h.Filename); err != nil {
				return err
			}
		}
		switch {
		case h.MediaURL == "" && h.Media == nil:
			return validationErrorAt(at.Member("media_url"), "is required in a %s header (or media_id, an uploaded file)", h.Type)
		case h.MediaURL != "" && h.Media != nil:
			return validationErrorAt(at.Member("media_id"), "is not allowed with media_url: give one of them")
		case h.MediaURL != "":
			return validateHTTPURL(at.Member("media_url"), h.MediaURL)
		}
		return checkMediaID(at.Member("media_id"), h.Media.ID)
	case "":
		return validationErrorAt(at.Member("type"), "is required: text, image, video or document")
	}
	return validationErrorAt(at.Member("type"), "must be text, image, video or document (got %q)", h.Type)
}

func validateReplyButtons(at Path, bs []InteractiveButton) error {
	if len(bs) == 0 || len(bs) > record.MaxReplyButtons {
		return validationErrorAt(at, "must hold 1 to %d reply buttons (got %d)", record.MaxReplyButtons, len(bs))
	}
	ids := map[string]int{}
	for i, b := range bs {
		if err := required(at.Index(i).Member("id"), b.ID, record.MaxButtonID); err != nil {
			return err
		}
		if j, dup := ids[b.ID]; dup {
			return validationErrorAt(at.Index(i).Member("id"), "repeats the id of buttons[%d]: button ids must be unique", j)
		}
		ids[b.ID] = i
		if err := required(at.Index(i).Member("title"), b.Title, record.MaxButtonTitle); err != nil {
			return err
		}
	}
	return nil
}

func validateList(at Path, l *InteractiveList) error {
	if err := required(at.Member("button"), l.Button, record.MaxListButton); err != nil {
		return err
	}
	ss := at.Member("sections")
	if len(l.Sections) == 0 || len(l.Sections) > record.MaxListSections {
		return validationErrorAt(ss, "must hold 1 to %d sections (got %d)", record.MaxListSections, len(l.Sections))
	}
	rows, ids := 0, map[string]string{}
	for i, s := range l.Sections {
		sp := ss.Index(i)
		if len(l.Sections) > 1 || s.Title != "" {
			if err := required(sp.Member("title"), s.Title, record.MaxSectionTitle); err != nil {
				if strings.TrimSpace(s.Title) == "" {
					return validationErrorAt(sp.Member("title"), "is required when the list has more than one section")
				}
				return err
			}
		}
		if len(s.Rows) == 0 {
			return validationErrorAt(sp.Member("rows"), "must hold at least one row")
		}
		for j, r := range s.Rows {
			rp := sp.Member("rows").Index(j)
			if rows++; rows > record.MaxListRows {
				return validationErrorAt(rp, "is one row too many: a list holds at most %d rows in all its sections", record.MaxListRows)
			}
			if err := required(rp.Member("id"), r.ID, record.MaxRowID); err != nil {
				return err
			}
			if prev, dup := ids[r.ID]; dup {
				return validationErrorAt(rp.Member("id"), "repeats the id of %s: row ids must be unique in the list", prev)
			}
			ids[r.ID] = rp.String()
			if err := required(rp.Member("title"), r.Title, record.MaxRowTitle); err != nil {
				return err
			}
			if err := checkLen(rp.Member("description"), r.Description, record.MaxRowDescription); err != nil {
				return err
			}
		}
	}
	return nil
}

func validateLocation(l *Location) error {
	at := record.FieldPath("location")
	if math.IsNaN(l.Latitude) || l.Latitude < -90 || l.Latitude > 90 {
		return validationErrorAt(at.Member("latitude"), "must be between -90 and 90 (got %v)", l.Latitude)
	}
	if math.IsNaN(l.Longitude) || l.Longitude < -180 || l.Longitude > 180 {
		return validationErrorAt(at.Member("longitude"), "must be between -180 and 180 (got %v)", l.Longitude)
	}
	if l.URL != "" {
		return validationErrorAt(at.Member("url"), "is not sent with a location: give name and address")
	}
	if err := checkLen(at.Member("name"), l.Name, record.MaxLocationText); err != nil {
		return err
	}
	return checkLen(at.Member("address"), l.Address, record.MaxLocationText)
}

func validateContactCards(cs []SharedContact) error {
	at := record.FieldPath("contacts")
	if len(cs) == 0 || len(cs) > record.MaxContactCards {
		return validationErrorAt(at, "must hold 1 to %d contact cards (got %d)", record.MaxContactCards, len(cs))
	}
	for i, c := range cs {
		cp := at.Index(i)
		if err := required(cp.Member("formatted_name"), c.FormattedName, record.MaxNameLen*2); err != nil {
			return err
		}
		for _, f := range []struct {
			name, v string
			max     int
		}{{"first_name", c.FirstName, record.MaxNameLen}, {"last_name", c.LastName, record.MaxNameLen}, {"organization", c.Organization, record.MaxCompanyLen}} {
			if err := checkLen(cp.Member(f.name), f.v, f.max); err != nil {
				return err
			}
		}
		if len(c.Phones) == 0 {
			return validationErrorAt(cp.Member("phones"), "must hold at least one phone")
		}
		for j, ph := range c.Phones {
			pp := cp.Member("phones").Index(j)
			if err := required(pp.Member("phone"), ph.Phone, 64); err != nil {
				return err
			}
			if err := checkLen(pp.Member("type"), ph.Type, 32); err != nil {
				return err
			}
			if err := checkLen(pp.Member("wa_id"), ph.WaID, 32); err != nil {
				return err
			}
		}
		for j, e := range c.Emails {
			ep := cp.Member("emails").Index(j)
			if err := required(ep.Member("email"), e.Email, record.MaxEmailLen); err != nil {
				return err
			}
			if err := checkLen(ep.Member("type"), e.Type, 32); err != nil {
				return err
			}
		}
	}
	return nil
}

// maxEmojiRunes bounds the code points of one emoji (a family with skin
// tones joined by ZWJ has up to about ten).
const maxEmojiRunes = 16

func validateReaction(r *ReactionParams, o OutboundSupport) error {
	at := record.FieldPath("reaction")
	if r.MessageID == "" {
		return validationErrorAt(at.Member("message_id"), "is required: the id of the message to react to")
	}
	if r.Emoji == "" {
		return nil
	}
	if len(o.ReactionEmoji) > 0 && !slices.Contains(o.ReactionEmoji, r.Emoji) {
		return validationErrorAt(at.Member("emoji"), "must be %s on this channel, or empty to remove the reaction", strings.Join(o.ReactionEmoji, " or "))
	}
	if !isEmoji(r.Emoji) {
		return validationErrorAt(at.Member("emoji"), "must be one emoji, or empty to remove the reaction (got %q)", r.Emoji)
	}
	return nil
}

// isEmoji reports whether s can be one emoji: at most maxEmojiRunes code
// points, none of them ASCII, a letter, a digit or a space.
func isEmoji(s string) bool {
	if utf8.RuneCountInString(s) > maxEmojiRunes {
		return false
	}
	for _, r := range s {
		if r < utf8.RuneSelf || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsSpace(r) {
			return false
		}
	}
	return true
}

// outboundOf returns the rich content of a send of p, its references
// unresolved; nil when p carries none.
func (p *SendParams) outboundOf() *OutboundContent {
	// A deep copy: the caller's params never share the stored message's.
	o := (&OutboundContent{Interactive: p.Interactive, Location: p.Location, Contacts: p.Contacts}).Clone()
	if p.Reaction != nil {
		o.Reaction = &record.Reaction{MessageID: p.Reaction.MessageID, Emoji: p.Reaction.Emoji}
	}
	if p.ReplyTo != "" {
		o.Context = &ReplyContext{MessageID: p.ReplyTo}
	}
	if p.MediaID != "" {
		o.Media = &MediaRef{ID: p.MediaID}
	}
	if o.Interactive == nil && o.Location == nil && o.Contacts == nil && o.Reaction == nil && o.Context == nil && o.Media == nil {
		return nil
	}
	return o
}

// resolveOutbound resolves the references of msg's rich content in the
// workspace: the quoted message and the message reacted to (of the same
// conversation, with the provider's id: not_found otherwise, conflict
// while it has none), and the uploaded media (of the workspace, for
// messages, on msg's channel, of the kind sent, not expired).
func (m *Messages) resolveOutbound(ctx context.Context, msg *Message) error {
	o := msg.Outbound
	if o == nil {
		return nil
	}
	conv := record.ConversationID(m.ws, msg.Channel, msg.To)
	if o.Context != nil {
		pid, err := m.providerIDIn(ctx, conv, record.FieldPath("context").Member("message_id"), o.Context.MessageID, "quoted")
		if err != nil {
			return err
		}
		o.Context.ProviderMessageID = pid
	}
	if o.Reaction != nil {
		pid, err := m.providerIDIn(ctx, conv, record.FieldPath("reaction").Member("message_id"), o.Reaction.MessageID, "reacted to")
		if err != nil {
			return err
		}
		o.Reaction.ProviderMessageID = pid
	}
	if o.Media != nil {
		if err := m.resolveMedia(ctx, record.FieldPath("media_id"), o.Media, msg.Channel, msg.Type); err != nil {
			return err
		}
	}
	if in := o.Interactive; in != nil && in.Header != nil && in.Header.Media != nil {
		if err := m.resolveMedia(ctx, record.FieldPath("interactive").Member("header").Member("media_id"), in.Header.Media, msg.Channel, in.Header.Type); err != nil {
			return err
		}
	}
	return nil
}

// providerIDIn returns the provider's id of message id, which must be a
// message of conversation conv: not_found (naming path) otherwise, a
// conflict while it has no provider id yet. A reaction's message must be
// younger than record.MaxReactionAge.
func (m *Messages) providerIDIn(ctx context.Context, conv string, path Path, id, what string) (string, error) {
	notIn := fieldError(CodeNotFound, path, "no message %s in this conversation (it must be a message of the same channel and recipient, in this workspace)", id)
	if badID(id) {
		return "", notIn
	}
	q, err := m.svc.store.MessageGet(ctx, m.ws, id)
	switch {
	case err != nil && ErrorCode(err) == CodeNotFound:
		return "", notIn
	case err != nil:
		return "", wrapStoreError(err, "message", id)
	case q.ConversationID != conv:
		return "", notIn
	case q.ProviderMessageID == "":
		return "", fieldError(CodeConflict, path, "message %s is %s and the provider has no id for it yet, so it cannot be %s; try again once it is sent", id, q.Status, what)
	case what == "reacted to" && m.svc.now().Sub(q.CreatedAt) > record.MaxReactionAge:
		return "", validationErrorAt(path, "message %s is older than 30 days: the provider refuses reactions to it", id)
	}
	return q.ProviderMessageID, nil
}

// resolveMedia fills ref's provider id and MIME type from the workspace's
// upload ref.ID, which must be an upload for messages on channel, of kind
// (the message or header type), not expired.
func (m *Messages) resolveMedia(ctx context.Context, path Path, ref *MediaRef, channel, kind string) error {
	u, err := m.svc.usableUpload(ctx, m.ws, path, ref.ID, record.MediaForMessages, kind)
	if err != nil {
		return err
	}
	if u.Channel != channel {
		return validationErrorAt(path, "%s was uploaded for channel %s, not %s", ref.ID, u.Channel, channel)
	}
	ref.ProviderMediaID, ref.MimeType = u.ProviderMediaID, u.MimeType
	return nil
}

// usableUpload returns the upload id of workspace ws named by the field
// at path, which must have been uploaded for purpose
// (record.MediaForMessages or MediaForTemplateSample), be of kind and not
// have expired: not_found when the workspace has no such upload, a
// validation_error naming path otherwise.
func (s *Service) usableUpload(ctx context.Context, ws string, path Path, id, purpose, kind string) (*UploadedMedia, error) {
	u, err := s.store.MediaGet(ctx, ws, id)
	switch {
	case err != nil && ErrorCode(err) == CodeNotFound:
		return nil, fieldError(CodeNotFound, path, "no uploaded file %s in this workspace", id)
	case err != nil:
		return nil, wrapStoreError(err, "media", id)
	case u.Purpose != purpose && purpose == record.MediaForMessages:
		return nil, validationErrorAt(path, "%s is a template sample: upload the file again for messages", id)
	case u.Purpose != purpose:
		return nil, validationErrorAt(path, "%s was uploaded for messages: upload the sample with purpose %s", id, purpose)
	case u.Kind != kind:
		return nil, validationErrorAt(path, "%s is a %s upload (%s) and cannot be used as %s", id, u.Kind, u.MimeType, kind)
	case !s.now().Before(u.ExpiresAt):
		return nil, validationErrorAt(path, "%s expired at %s: the provider no longer has it; upload it again", id, record.FormatTime(u.ExpiresAt))
	}
	return u, nil
}
