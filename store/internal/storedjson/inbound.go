package storedjson

import (
	"encoding/json"

	"github.com/ujumbe/messaging/record"

	"github.com/ujumbe/messaging"
)

// inboundContent is the stored form of a messaging.InboundContent, kept
// as one JSON object in the message's content column.
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

// EncodeInboundContent returns the stored form of c, nil for nil.
func EncodeInboundContent(c *messaging.InboundContent) (*string, error) {
	if c == nil {
		return nil, nil
	}
	st := inboundContent{
		Media:    ptr(c.Media, func(v record.InboundMedia) inboundMedia { return inboundMedia(v) }),
		Location: ptr(c.Location, func(v record.Location) location { return location(v) }),
		Contacts: convert(c.Contacts, func(v record.SharedContact) sharedContact {
			return sharedContact{FormattedName: v.FormattedName, FirstName: v.FirstName, LastName: v.LastName,
				Organization: v.Organization,
				Phones:       convert(v.Phones, func(p record.ContactPhone) contactPhone { return contactPhone(p) }),
				Emails:       convert(v.Emails, func(e record.ContactEmail) contactEmail { return contactEmail(e) })}
		}),
		Reply:    ptr(c.Reply, func(v record.InteractiveReply) reply { return reply(v) }),
		Reaction: ptr(c.Reaction, func(v record.Reaction) reaction { return reaction(v) }),
		Context:  ptr(c.Context, func(v messaging.ReplyContext) replyContext { return replyContext(v) }),
		RawType:  c.RawType,
	}
	b, err := json.Marshal(st)
	if err != nil {
		return nil, err
	}
	s := string(b)
	return &s, nil
}

// DecodeInboundContent returns the content stored as s (nil for NULL).
func DecodeInboundContent(s *string) (*messaging.InboundContent, error) {
	if s == nil {
		return nil, nil
	}
	var st inboundContent
	if err := json.Unmarshal([]byte(*s), &st); err != nil {
		return nil, err
	}
	return &messaging.InboundContent{
		Media:    ptr(st.Media, func(v inboundMedia) record.InboundMedia { return record.InboundMedia(v) }),
		Location: ptr(st.Location, func(v location) record.Location { return record.Location(v) }),
		Contacts: convert(st.Contacts, func(v sharedContact) record.SharedContact {
			return record.SharedContact{FormattedName: v.FormattedName, FirstName: v.FirstName, LastName: v.LastName,
				Organization: v.Organization,
				Phones:       convert(v.Phones, func(p contactPhone) record.ContactPhone { return record.ContactPhone(p) }),
				Emails:       convert(v.Emails, func(e contactEmail) record.ContactEmail { return record.ContactEmail(e) })}
		}),
		Reply:    ptr(st.Reply, func(v reply) record.InteractiveReply { return record.InteractiveReply(v) }),
		Reaction: ptr(st.Reaction, func(v reaction) record.Reaction { return record.Reaction(v) }),
		Context:  ptr(st.Context, func(v replyContext) messaging.ReplyContext { return messaging.ReplyContext(v) }),
		RawType:  st.RawType,
	}, nil
}
