package storedjson

import (
	"github.com/ujumbe/messaging/record"

	"github.com/ujumbe/messaging"
)

// inboundContent is the stored form of a messaging.InboundContent, kept
// as one JSON object in the message's content column (see EncodeContent).
type inboundContent struct {
	Media    *inboundMedia   `json:"media,omitempty"`
	Location *location       `json:"location,omitempty"`
	Contacts []sharedContact `json:"contacts,omitempty"`
	Reply    *reply          `json:"reply,omitempty"`
	Reaction *reaction       `json:"reaction,omitempty"`
	Context  *replyContext   `json:"context,omitempty"`
	RawType  string          `json:"raw_type,omitempty"`
}

type inboundMedia struct {
	ProviderMediaID string `json:"id"`
	MimeType        string `json:"mime_type,omitempty"`
	SHA256          string `json:"sha256,omitempty"`
	Caption         string `json:"caption,omitempty"`
	Filename        string `json:"filename,omitempty"`
	Animated        bool   `json:"animated,omitempty"`
}

type location struct {
	Latitude  float64 `json:"lat"`
	Longitude float64 `json:"lng"`
	Name      string  `json:"name,omitempty"`
	Address   string  `json:"address,omitempty"`
	URL       string  `json:"url,omitempty"`
}

type sharedContact struct {
	FormattedName string         `json:"formatted_name,omitempty"`
	FirstName     string         `json:"first_name,omitempty"`
	LastName      string         `json:"last_name,omitempty"`
	Organization  string         `json:"org,omitempty"`
	Phones        []contactPhone `json:"phones,omitempty"`
	Emails        []contactEmail `json:"emails,omitempty"`
}

type contactPhone struct {
	Phone string `json:"phone,omitempty"`
	WaID  string `json:"wa_id,omitempty"`
	Type  string `json:"type,omitempty"`
}

type contactEmail struct {
	Email string `json:"email,omitempty"`
	Type  string `json:"type,omitempty"`
}

type reply struct {
	Kind        string `json:"kind"`
	ID          string `json:"id,omitempty"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
}

type reaction struct {
	MessageID         string `json:"message_id,omitempty"`
	ProviderMessageID string `json:"provider_message_id"`
	Emoji             string `json:"emoji"`
}

type replyContext struct {
	MessageID         string `json:"message_id,omitempty"`
	ProviderMessageID string `json:"provider_message_id"`
}

// ptr converts the value at p with f, keeping nil nil.
func ptr[In, Out any](p *In, f func(In) Out) *Out {
	if p == nil {
		return nil
	}
	v := f(*p)
	return &v
}

// storeInbound returns the stored form of c.
func storeInbound(c *messaging.InboundContent) inboundContent {
	return inboundContent{
		Media:    ptr(c.Media, func(v record.InboundMedia) inboundMedia { return inboundMedia(v) }),
		Location: ptr(c.Location, func(v record.Location) location { return location(v) }),
		Contacts: convert(c.Contacts, storeContact),
		Reply:    ptr(c.Reply, func(v record.InteractiveReply) reply { return reply(v) }),
		Reaction: ptr(c.Reaction, func(v record.Reaction) reaction { return reaction(v) }),
		Context:  ptr(c.Context, func(v messaging.ReplyContext) replyContext { return replyContext(v) }),
		RawType:  c.RawType,
	}
}

// root returns the content st stores.
func (st *inboundContent) root() *messaging.InboundContent {
	return &messaging.InboundContent{
		Media:    ptr(st.Media, func(v inboundMedia) record.InboundMedia { return record.InboundMedia(v) }),
		Location: ptr(st.Location, func(v location) record.Location { return record.Location(v) }),
		Contacts: convert(st.Contacts, sharedContact.root),
		Reply:    ptr(st.Reply, func(v reply) record.InteractiveReply { return record.InteractiveReply(v) }),
		Reaction: ptr(st.Reaction, func(v reaction) record.Reaction { return record.Reaction(v) }),
		Context:  ptr(st.Context, func(v replyContext) messaging.ReplyContext { return messaging.ReplyContext(v) }),
		RawType:  st.RawType,
	}
}

// empty reports whether st has no member set.
func (st *inboundContent) empty() bool {
	return st.Media == nil && st.Location == nil && st.Contacts == nil && st.Reply == nil && st.Reaction == nil &&
		st.Context == nil && st.RawType == ""
}

// storeContact returns the stored form of a contact card.
func storeContact(v record.SharedContact) sharedContact {
	return sharedContact{FormattedName: v.FormattedName, FirstName: v.FirstName, LastName: v.LastName,
		Organization: v.Organization,
		Phones:       convert(v.Phones, func(p record.ContactPhone) contactPhone { return contactPhone(p) }),
		Emails:       convert(v.Emails, func(e record.ContactEmail) contactEmail { return contactEmail(e) })}
}

// root returns the contact card v stores.
func (v sharedContact) root() record.SharedContact {
	return record.SharedContact{FormattedName: v.FormattedName, FirstName: v.FirstName, LastName: v.LastName,
		Organization: v.Organization,
		Phones:       convert(v.Phones, func(p contactPhone) record.ContactPhone { return record.ContactPhone(p) }),
		Emails:       convert(v.Emails, func(e contactEmail) record.ContactEmail { return record.ContactEmail(e) })}
}
