package httpapi

import (
	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/record"
)

// contentJSON is the content of a message as GET /v1/messages/{id}
// shows it, its members inlined in the message. Of an inbound message:
// the media, location, shared contacts, interactive reply or reaction of
// its type, the message it replies to, and the provider's name of an
// unsupported type. Of an outbound one (see outboundContentView): the
// uploaded media (media_id), location, contacts, interactive message or
// reaction of its type and the message it quotes, as the send gave them.
// Interactive, Reaction and Context hold the shape of the direction (an
// *interactiveReplyJSON or an *interactiveJSON, ...), never a nil pointer.
type contentJSON struct {
	Media       *inboundMediaJSON   `json:"media,omitempty"`
	MediaID     string              `json:"media_id,omitempty"`
	Location    *locationJSON       `json:"location,omitempty"`
	Contacts    []sharedContactJSON `json:"contacts,omitempty"`
	Interactive any                 `json:"interactive,omitempty"`
	Reaction    any                 `json:"reaction,omitempty"`
	Context     any                 `json:"context,omitempty"`
	RawType     string              `json:"unsupported_type,omitempty"`
}

// orNone is p as an interface value: nil (not a nil *T) for nil, so that
// omitempty omits it.
func orNone[T any](p *T) any {
	if p == nil {
		return nil
	}
	return p
}

type inboundMediaJSON struct {
	ProviderMediaID string `json:"provider_media_id"`
	MimeType        string `json:"mime_type,omitempty"`
	SHA256          string `json:"sha256,omitempty"`
	Caption         string `json:"caption,omitempty"`
	Filename        string `json:"filename,omitempty"`
	Animated        bool   `json:"animated,omitempty"`
}

type locationJSON struct {
	Latitude  float64 `json:"latitude"`
	Longitude float64 `json:"longitude"`
	Name      string  `json:"name,omitempty"`
	Address   string  `json:"address,omitempty"`
	URL       string  `json:"url,omitempty"`
}

type sharedContactJSON struct {
	FormattedName string             `json:"formatted_name,omitempty"`
	FirstName     string             `json:"first_name,omitempty"`
	LastName      string             `json:"last_name,omitempty"`
	Organization  string             `json:"organization,omitempty"`
	Phones        []contactPhoneJSON `json:"phones,omitempty"`
	Emails        []contactEmailJSON `json:"emails,omitempty"`
}

type contactPhoneJSON struct {
	Phone string `json:"phone,omitempty"`
	WaID  string `json:"wa_id,omitempty"`
	Type  string `json:"type,omitempty"`
}

type contactEmailJSON struct {
	Email string `json:"email,omitempty"`
	Type  string `json:"type,omitempty"`
}

// interactiveReplyJSON is the customer's choice in an interactive message;
// Kind is its type (button_reply, list_reply, quick_reply).
type interactiveReplyJSON struct {
	Kind        string `json:"type"`
	ID          string `json:"id,omitempty"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
}

type reactionJSON struct {
	MessageID         string `json:"message_id,omitempty"`
	ProviderMessageID string `json:"provider_message_id"`
	Emoji             string `json:"emoji"`
}

type replyContextJSON struct {
	MessageID         string `json:"message_id,omitempty"`
	ProviderMessageID string `json:"provider_message_id"`
}

// converted returns f of *p, or nil when p is nil.
func converted[In, Out any](p *In, f func(In) Out) *Out {
	if p == nil {
		return nil
	}
	v := f(*p)
	return &v
}

// inboundContentView returns the JSON form of c, nil for nil.
func inboundContentView(c *messaging.InboundContent) *contentJSON {
	if c == nil {
		return nil
	}
	return &contentJSON{
		Media:       converted(c.Media, func(m record.InboundMedia) inboundMediaJSON { return inboundMediaJSON(m) }),
		Location:    converted(c.Location, func(l record.Location) locationJSON { return locationJSON(l) }),
		Interactive: orNone(converted(c.Reply, func(r record.InteractiveReply) interactiveReplyJSON { return interactiveReplyJSON(r) })),
		Reaction:    orNone(converted(c.Reaction, func(r record.Reaction) reactionJSON { return reactionJSON(r) })),
		Context:     orNone(converted(c.Context, func(r messaging.ReplyContext) replyContextJSON { return replyContextJSON(r) })),
		RawType:     c.RawType,
		Contacts:    convertList(c.Contacts, sharedContactView),
	}
}

// sharedContactView returns the JSON form of a contact card.
func sharedContactView(sc record.SharedContact) sharedContactJSON {
	return sharedContactJSON{FormattedName: sc.FormattedName, FirstName: sc.FirstName, LastName: sc.LastName,
		Organization: sc.Organization,
		Phones:       convertList(sc.Phones, func(p record.ContactPhone) contactPhoneJSON { return contactPhoneJSON(p) }),
		Emails:       convertList(sc.Emails, func(e record.ContactEmail) contactEmailJSON { return contactEmailJSON(e) })}
}
