package fakeprovider

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/metaprovider"
	"github.com/ujumbe/messaging/record"
)

// outboundSupport returns what channel carries of the rich outbound
// messages, as metaprovider's channel specs say; ok is false for a channel
// Meta does not serve.
func outboundSupport(channel string) (o messaging.OutboundSupport, ok bool) {
	for _, spec := range metaprovider.ChannelSpecs() {
		if spec.Name == channel {
			return spec.Outbound, true
		}
	}
	return o, false
}

// invalid is 100 "Invalid parameter" with a detail naming the field.
func invalid(detail string) error {
	return refuse(CodeInvalidParameter, TextInvalidParameter+": "+detail)
}

// notValid is 131009 "Parameter value is not valid" with a detail.
func notValid(detail string) error {
	return refuse(CodeParamInvalid, TextParamInvalid+": "+detail)
}

// checkRich checks what m carries beyond text, media links and templates
// (m.Outbound) against what its channel carries (metaprovider's
// ChannelSpec.Outbound) and Meta's rules for each type: a type, header,
// footer, reaction emoji or quoted message the channel does not carry, a
// member of another type, or a missing member is 100 "Invalid parameter".
// The provider ids the message names (reaction, context, uploaded media)
// are checked by checkIDs.
func checkRich(m *messaging.Message) error {
	spec, _ := outboundSupport(m.Channel)
	o := m.Outbound
	if o == nil {
		o = &record.OutboundContent{}
	}
	carries := func(ok bool, what string) error {
		if !ok {
			return invalid(fmt.Sprintf("%s messages are not supported on %s", what, m.Channel))
		}
		return nil
	}
	// Members of another type.
	for _, mem := range []struct {
		set  bool
		typ  string
		name string
	}{
		{o.Interactive != nil, record.TypeInteractive, "interactive"},
		{o.Location != nil, record.TypeLocation, "location"},
		{o.Contacts != nil, record.TypeContacts, "contacts"},
		{o.Reaction != nil, record.TypeReaction, "reaction"},
	} {
		if mem.set && m.Type != mem.typ {
			return invalid(fmt.Sprintf("%s is set on a %s message", mem.name, m.Type))
		}
	}
	if o.Media != nil && !isMediaType(m.Type) {
		return invalid(fmt.Sprintf("media is set on a %s message", m.Type))
	}
	switch m.Type {
	case record.TypeImage, record.TypeVideo, record.TypeDocument, record.TypeAudio, record.TypeSticker:
		if m.Type == record.TypeSticker {
			if err := carries(spec.Sticker, "sticker"); err != nil {
				return err
			}
		}
		switch {
		case m.MediaURL == "" && o.Media == nil:
			return invalid(m.Type + ".link or " + m.Type + ".id is required")
		case m.MediaURL != "" && o.Media != nil:
			return invalid(m.Type + ".link and " + m.Type + ".id are mutually exclusive")
		case o.Media != nil && o.Media.ProviderMediaID == "":
			return invalid(m.Type + ".id is required")
		}
	case record.TypeInteractive:
		if err := checkInteractive(m.Channel, spec, o.Interactive); err != nil {
			return err
		}
	case record.TypeLocation:
		if err := carries(spec.Location, "location"); err != nil {
			return err
		}
		l := o.Location
		if l == nil {
			return invalid("location is required")
		}
		if l.Latitude < -90 || l.Latitude > 90 || l.Longitude < -180 || l.Longitude > 180 {
			return invalid("location.latitude and location.longitude must be coordinates")
		}
	case record.TypeContacts:
		if err := carries(spec.Contacts, "contacts"); err != nil {
			return err
		}
		if len(o.Contacts) == 0 {
			return invalid("contacts is required")
		}
		for i, c := range o.Contacts {
			if c.FormattedName == "" {
				return invalid(fmt.Sprintf("contacts[%d].name.formatted_name is required", i))
			}
		}
	case record.TypeReaction:
		if err := carries(spec.Reaction, "reaction"); err != nil {
			return err
		}
		r := o.Reaction
		if r == nil || r.ProviderMessageID == "" {
			return invalid("reaction.message_id is required")
		}
		if r.Emoji != "" && len(spec.ReactionEmoji) > 0 && !slices.Contains(spec.ReactionEmoji, r.Emoji) {
			return invalid(fmt.Sprintf("reaction.emoji %q is not supported on %s", r.Emoji, m.Channel))
		}
	}
	if o.Context != nil {
		if err := carries(spec.Replies, "reply (context)"); err != nil {
			return err
		}
		if o.Context.ProviderMessageID == "" {
			return invalid("context.message_id is required")
		}
	}
	return nil
}

// checkInteractive checks an interactive message on channel.
func checkInteractive(channel string, spec messaging.OutboundSupport, in *record.Interactive) error {
	if in == nil {
		return invalid("interactive is required")
	}
	if !slices.Contains(spec.Interactive, in.Type) {
		return invalid(fmt.Sprintf("interactive messages of type %q are not supported on %s", in.Type, channel))
	}
	maxBody := cmp0(spec.MaxInteractiveBody, record.MaxInteractiveBody)
	switch n := utf8.RuneCountInString(in.Body); {
	case strings.TrimSpace(in.Body) == "":
		return invalid("interactive.body.text is required")
	case n > maxBody:
		return notValid(fmt.Sprintf("interactive.body.text is %d characters, at most %d on %s", n, maxBody, channel))
	}
	if in.Header != nil && !spec.InteractiveHeader {
		return invalid("interactive.header is not supported on " + channel)
	}
	if in.Footer != "" && !spec.InteractiveFooter {
		return invalid("interactive.footer is not supported on " + channel)
	}
	if h := in.Header; h != nil {
		switch h.Type {
		case "text":
			if h.Text == "" {
				return invalid("interactive.header.text is required")
			}
		case record.TypeImage, record.TypeVideo, record.TypeDocument:
			if (h.MediaURL == "") == (h.Media == nil || h.Media.ProviderMediaID == "") {
				return invalid("interactive.header needs exactly one of " + h.Type + ".link and " + h.Type + ".id")
			}
		default:
			return invalid(fmt.Sprintf("interactive.header.type %q is not valid", h.Type))
		}
	}
	switch in.Type {
	case record.InteractiveTypeButton:
		if len(in.Buttons) == 0 || len(in.Buttons) > record.MaxReplyButtons {
			return notValid(fmt.Sprintf("interactive.action.buttons must hold 1 to %d buttons", record.MaxReplyButtons))
		}
		seen := map[string]bool{}
		for i, b := range in.Buttons {
			if b.ID == "" || b.Title == "" {
				return invalid(fmt.Sprintf("interactive.action.buttons[%d] needs an id and a title", i))
			}
			if seen[b.ID] {
				return notValid(fmt.Sprintf("interactive.action.buttons[%d].id %q is not unique", i, b.ID))
			}
			seen[b.ID] = true
		}
	case record.InteractiveTypeList:
		l := in.List
		if l == nil || l.Button == "" || len(l.Sections) == 0 {
			return invalid("interactive.action.button and interactive.action.sections are required")
		}
		rows := 0
		for i, s := range l.Sections {
			if len(s.Rows) == 0 {
				return invalid(fmt.Sprintf("interactive.action.sections[%d].rows is required", i))
			}
			if len(l.Sections) > 1 && s.Title == "" {
				return invalid(fmt.Sprintf("interactive.action.sections[%d].title is required when there are several sections", i))
			}
			rows += len(s.Rows)
		}
		if len(l.Sections) > record.MaxListSections || rows > record.MaxListRows {
			return notValid(fmt.Sprintf("a list holds at most %d sections and %d rows", record.MaxListSections, record.MaxListRows))
		}
	case record.InteractiveTypeCTAURL:
		if c := in.CTA; c == nil || c.DisplayText == "" || !strings.HasPrefix(c.URL, "https://") {
			return invalid("interactive.action.parameters needs a display_text and an https url")
		}
	}
	return nil
}

func cmp0(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

func isMediaType(t string) bool {
	switch t {
	case record.TypeImage, record.TypeVideo, record.TypeDocument, record.TypeAudio, record.TypeSticker:
		return true
	}
	return false
}

// mimeFits reports whether an upload of MIME type mime may be sent as a
// message (or header) of type typ, as WhatsApp's supported media types
// say: JPEG and PNG images, MP4 and 3GPP videos, any audio, any document,
// WebP stickers.
func mimeFits(typ, mime string) bool {
	switch typ {
	case record.TypeImage:
		return mime == "image/jpeg" || mime == "image/png"
	case record.TypeVideo:
		return mime == "video/mp4" || mime == "video/3gpp"
	case record.TypeAudio:
		return strings.HasPrefix(mime, "audio/")
	case record.TypeDocument:
		return mime != ""
	case record.TypeSticker:
		return mime == "image/webp"
	}
	return false
}

// checkIDs checks the provider ids m names against what the fake issued
// and received: the media it sends by id (and an interactive header's),
// the message it reacts to and the message it quotes; p.mu is held.
func (p *Provider) checkIDs(m *messaging.Message, now time.Time) error {
	o := m.Outbound
	if o == nil {
		return nil
	}
	if o.Media != nil {
		if err := p.checkMedia(o.Media.ProviderMediaID, m.Type, m, now); err != nil {
			return err
		}
	}
	if in := o.Interactive; in != nil && in.Header != nil && in.Header.Media != nil && in.Header.MediaURL == "" {
		if err := p.checkMedia(in.Header.Media.ProviderMediaID, in.Header.Type, m, now); err != nil {
			return err
		}
	}
	if r := o.Reaction; r != nil && !p.knownMessage(r.ProviderMessageID) {
		return notValid(fmt.Sprintf("reaction.message_id %q names no message of this number", r.ProviderMessageID))
	}
	if c := o.Context; c != nil && !p.knownMessage(c.ProviderMessageID) {
		return notValid(fmt.Sprintf("context.message_id %q names no message of this number", c.ProviderMessageID))
	}
	return nil
}

// checkMedia checks the uploaded media id sent in m as a message (or
// header) of type typ at now; p.mu is held.
func (p *Provider) checkMedia(id, typ string, m *messaging.Message, now time.Time) error {
	u, ok := p.uploads[id]
	channel := m.Channel
	if ok && u.WorkspaceID != "" && u.WorkspaceID != m.WorkspaceID {
		ok = false // another business's media: Meta does not show it
	}
	switch {
	case !ok || u.Purpose != record.MediaForMessages:
		return notValid(fmt.Sprintf("media id %q was not uploaded", id))
	case !now.Before(u.ExpiresAt):
		return notValid(fmt.Sprintf("media id %q expired at %s", id, u.ExpiresAt.UTC().Format(time.RFC3339)))
	case u.Channel != "" && u.Channel != channel:
		return notValid(fmt.Sprintf("media id %q was uploaded on %s, not %s", id, u.Channel, channel))
	case typ == record.TypeSticker && u.MimeType != "image/webp":
		return notValid(fmt.Sprintf("a sticker must be image/webp; media id %q is %s", id, u.MimeType))
	case !mimeFits(typ, u.MimeType):
		return notValid(fmt.Sprintf("media id %q is %s, which cannot be sent as %s", id, u.MimeType, typ))
	}
	return nil
}

// knownMessage reports whether id is a provider message id the fake
// issued to a send or to a received message, or that Receive was given;
// p.mu is held.
func (p *Provider) knownMessage(id string) bool {
	return inSequence(id, p.opts.IDPrefix, p.seq) || p.knownInbound(id)
}

// knownInbound reports whether id is the provider message id of a message
// Receive handed over; p.mu is held.
func (p *Provider) knownInbound(id string) bool {
	return inSequence(id, p.opts.IDPrefix+"in.", p.inSeq) || p.received[id]
}

// inSequence reports whether id is prefix followed by the decimal number of
// an id already given (1 to last).
func inSequence(id, prefix string, last int) bool {
	rest, ok := strings.CutPrefix(id, prefix)
	if !ok || rest == "" {
		return false
	}
	for _, c := range rest {
		if c < '0' || c > '9' {
			return false
		}
	}
	n, err := strconv.Atoi(rest)
	return err == nil && n >= 1 && n <= last
}
