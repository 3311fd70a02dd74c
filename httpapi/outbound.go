package httpapi

import (
	"time"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/record"
)

// The rich members of a send (POST /v1/messages) and of an outbound
// message as GET /v1/messages/{id} shows it: one shape for both, so that
// what a caller sent reads back the same. The provider's ids (of uploaded
// media, of the message quoted or reacted to) are never shown.

// interactiveJSON is an interactive message: reply buttons, a list or a
// call-to-action URL button (schema Interactive).
type interactiveJSON struct {
	Type    string                  `json:"type"`
	Header  *interactiveHeaderJSON  `json:"header,omitempty"`
	Body    string                  `json:"body"`
	Footer  string                  `json:"footer,omitempty"`
	Buttons []interactiveButtonJSON `json:"buttons,omitempty"`
	List    *interactiveListJSON    `json:"list,omitempty"`
	CTA     *ctaURLJSON             `json:"cta_url,omitempty"`
}

// interactiveHeaderJSON is the header of an interactive message: a text,
// or an image, video or document by link (media_url) or upload (media_id).
type interactiveHeaderJSON struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	MediaURL string `json:"media_url,omitempty"`
	MediaID  string `json:"media_id,omitempty"`
	Filename string `json:"filename,omitempty"`
}

type interactiveButtonJSON struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

type interactiveListJSON struct {
	Button   string            `json:"button"`
	Sections []listSectionJSON `json:"sections"`
}

type listSectionJSON struct {
	Title string        `json:"title,omitempty"`
	Rows  []listRowJSON `json:"rows"`
}

type listRowJSON struct {
	ID          string `json:"id"`
	Title       string `json:"title"`
	Description string `json:"description,omitempty"`
}

type ctaURLJSON struct {
	DisplayText string `json:"display_text"`
	URL         string `json:"url"`
}

// params returns the library's form of q; empty lists stay empty (the
// library refuses them by name) and a header's media_id becomes its Media.
func (q interactiveJSON) params() messaging.Interactive {
	in := messaging.Interactive{Type: q.Type, Body: q.Body, Footer: q.Footer,
		Buttons: convertList(q.Buttons, func(b interactiveButtonJSON) messaging.InteractiveButton { return messaging.InteractiveButton(b) }),
		CTA:     converted(q.CTA, func(c ctaURLJSON) record.CTAURL { return record.CTAURL(c) }),
	}
	if h := q.Header; h != nil {
		in.Header = &messaging.InteractiveHeader{Type: h.Type, Text: h.Text, MediaURL: h.MediaURL, Filename: h.Filename}
		if h.MediaID != "" {
			in.Header.Media = &messaging.MediaRef{ID: h.MediaID}
		}
	}
	if l := q.List; l != nil {
		in.List = &messaging.InteractiveList{Button: l.Button, Sections: convertList(l.Sections, func(s listSectionJSON) messaging.ListSection {
			return messaging.ListSection{Title: s.Title, Rows: convertList(s.Rows, func(r listRowJSON) messaging.ListRow { return messaging.ListRow(r) })}
		})}
	}
	return in
}

// interactiveView returns the JSON form of in, without provider ids.
func interactiveView(in messaging.Interactive) interactiveJSON {
	v := interactiveJSON{Type: in.Type, Body: in.Body, Footer: in.Footer,
		Buttons: convertList(in.Buttons, func(b messaging.InteractiveButton) interactiveButtonJSON { return interactiveButtonJSON(b) }),
		CTA:     converted(in.CTA, func(c record.CTAURL) ctaURLJSON { return ctaURLJSON(c) }),
	}
	if h := in.Header; h != nil {
		v.Header = &interactiveHeaderJSON{Type: h.Type, Text: h.Text, MediaURL: h.MediaURL, Filename: h.Filename}
		if h.Media != nil {
			v.Header.MediaID = h.Media.ID
		}
	}
	if l := in.List; l != nil {
		v.List = &interactiveListJSON{Button: l.Button, Sections: convertList(l.Sections, func(s messaging.ListSection) listSectionJSON {
			return listSectionJSON{Title: s.Title, Rows: convertList(s.Rows, func(r messaging.ListRow) listRowJSON { return listRowJSON(r) })}
		})}
	}
	return v
}

// locationRequest is the location of a send. Latitude and longitude are
// pointers to tell a missing coordinate (refused here: the library cannot
// tell it from 0) from one out of range (refused by the library).
type locationRequest struct {
	Latitude  *float64 `json:"latitude"`
	Longitude *float64 `json:"longitude"`
	Name      string   `json:"name"`
	Address   string   `json:"address"`
}

func (q *locationRequest) params() (*messaging.Location, error) {
	if q.Latitude == nil {
		return nil, badRequest("location.latitude", "is required")
	}
	if q.Longitude == nil {
		return nil, badRequest("location.longitude", "is required")
	}
	return &messaging.Location{Latitude: *q.Latitude, Longitude: *q.Longitude, Name: q.Name, Address: q.Address}, nil
}

// params returns the library's form of a contact card of a send.
func (c sharedContactJSON) params() messaging.SharedContact {
	return messaging.SharedContact{FormattedName: c.FormattedName, FirstName: c.FirstName, LastName: c.LastName, Organization: c.Organization,
		Phones: convertList(c.Phones, func(p contactPhoneJSON) messaging.ContactPhone { return messaging.ContactPhone(p) }),
		Emails: convertList(c.Emails, func(e contactEmailJSON) messaging.ContactEmail { return messaging.ContactEmail(e) })}
}

// sentReactionJSON is the reaction of a send and of an outbound message:
// the message reacted to and the emoji, empty to remove the reaction.
type sentReactionJSON struct {
	MessageID string `json:"message_id"`
	Emoji     string `json:"emoji"`
}

// sentContextJSON is the message a send quotes.
type sentContextJSON struct {
	MessageID string `json:"message_id"`
}

// outboundContentView returns the JSON form of the rich content of an
// outbound message, nil for nil.
func outboundContentView(c *messaging.OutboundContent) *contentJSON {
	if c == nil {
		return nil
	}
	v := &contentJSON{
		Location: converted(c.Location, func(l record.Location) locationJSON {
			return locationJSON{Latitude: l.Latitude, Longitude: l.Longitude, Name: l.Name, Address: l.Address}
		}),
		Contacts:    convertList(c.Contacts, sharedContactView),
		Interactive: orNone(converted(c.Interactive, interactiveView)),
		Reaction: orNone(converted(c.Reaction, func(r record.Reaction) sentReactionJSON {
			return sentReactionJSON{MessageID: r.MessageID, Emoji: r.Emoji}
		})),
		Context: orNone(converted(c.Context, func(r messaging.ReplyContext) sentContextJSON { return sentContextJSON{MessageID: r.MessageID} })),
	}
	if c.Media != nil {
		v.MediaID = c.Media.ID
	}
	return v
}

// readAtJSON is the read_at of an inbound message: null until it is
// marked read.
type readAtJSON struct{ at *time.Time }

// MarshalJSON implements json.Marshaler.
func (r readAtJSON) MarshalJSON() ([]byte, error) {
	if r.at == nil {
		return []byte("null"), nil
	}
	return timestamp(*r.at).MarshalJSON()
}

// markReadRequest is the optional body of POST /v1/messages/{id}/read.
type markReadRequest struct {
	Typing bool `json:"typing"`
}
