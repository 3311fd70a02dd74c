package storedjson

import (
	"encoding/json"
	"errors"

	"github.com/ujumbe/messaging/record"

	"github.com/ujumbe/messaging"
)

// storedContent is what the content column of a message holds: the
// members of an inbound message's content at the top level (the form
// stored before outbound content existed), or an outbound message's
// content under "out".
type storedContent struct {
	inboundContent
	Out *outboundContent `json:"out,omitempty"`
}

// outboundContent is the stored form of a record.OutboundContent.
type outboundContent struct {
	Interactive *interactive    `json:"interactive,omitempty"`
	Location    *location       `json:"location,omitempty"`
	Contacts    []sharedContact `json:"contacts,omitempty"`
	Reaction    *reaction       `json:"reaction,omitempty"`
	Context     *replyContext   `json:"context,omitempty"`
	Media       *mediaRef       `json:"media,omitempty"`
}

type mediaRef struct {
	ID              string `json:"id"`
	ProviderMediaID string `json:"provider_id,omitempty"`
	MimeType        string `json:"mime_type,omitempty"`
}

type interactive struct {
	Type    string             `json:"type"`
	Header  *interactiveHeader `json:"header,omitempty"`
	Body    string             `json:"body"`
	Footer  string             `json:"footer,omitempty"`
	Buttons []button           `json:"buttons,omitempty"`
	List    *list              `json:"list,omitempty"`
	CTA     *ctaURL            `json:"cta,omitempty"`
}

type interactiveHeader struct {
	Type     string    `json:"type"`
	Text     string    `json:"text,omitempty"`
	MediaURL string    `json:"media_url,omitempty"`
	Media    *mediaRef `json:"media,omitempty"`
	Filename string    `json:"filename,omitempty"`
}

type button struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

type list struct {
	Button   string        `json:"button"`
	Sections []listSection `json:"sections,omitempty"`
}

type listSection struct {
	Title string    `json:"title,omitempty"`
	Rows  []listRow `json:"rows,omitempty"`
}

type listRow struct {
	ID          string `json:"id"`
	Title       string `json:"title"`
	Description string `json:"description,omitempty"`
}

type ctaURL struct {
	DisplayText string `json:"text"`
	URL         string `json:"url"`
}

// errBothContents is returned for a message with both an inbound and an
// outbound content, which no message has.
var errBothContents = errors.New("storedjson: a message has inbound content or outbound content, not both")

// EncodeContent returns the stored form of a message's content column:
// in's members as a JSON object (the form stored before outbound content
// existed, unchanged), or {"out": out's members}; nil (NULL) when both are
// nil. A message has one or the other: both is an error.
//
// A nil and an empty list in a content both read back as nil.
func EncodeContent(in *messaging.InboundContent, out *record.OutboundContent) (*string, error) {
	var v any
	switch {
	case in != nil && out != nil:
		return nil, errBothContents
	case in != nil:
		v = storeInbound(in)
	case out != nil:
		v = struct {
			Out outboundContent `json:"out"`
		}{storeOutbound(out)}
	default:
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	s := string(b)
	return &s, nil
}

// DecodeContent returns the content stored as s by EncodeContent: the
// inbound or the outbound content, or neither for NULL.
func DecodeContent(s *string) (*messaging.InboundContent, *record.OutboundContent, error) {
	if s == nil {
		return nil, nil, nil
	}
	var st storedContent
	if err := json.Unmarshal([]byte(*s), &st); err != nil {
		return nil, nil, err
	}
	if st.Out == nil {
		return st.root(), nil, nil
	}
	if !st.empty() {
		return nil, nil, errBothContents
	}
	return nil, st.Out.root(), nil
}

// storeOutbound returns the stored form of c.
func storeOutbound(c *record.OutboundContent) outboundContent {
	return outboundContent{
		Interactive: ptr(c.Interactive, storeInteractive),
		Location:    ptr(c.Location, func(v record.Location) location { return location(v) }),
		Contacts:    convert(c.Contacts, storeContact),
		Reaction:    ptr(c.Reaction, func(v record.Reaction) reaction { return reaction(v) }),
		Context:     ptr(c.Context, func(v record.ReplyContext) replyContext { return replyContext(v) }),
		Media:       ptr(c.Media, func(v record.MediaRef) mediaRef { return mediaRef(v) }),
	}
}

// root returns the content st stores.
func (st *outboundContent) root() *record.OutboundContent {
	return &record.OutboundContent{
		Interactive: ptr(st.Interactive, interactive.root),
		Location:    ptr(st.Location, func(v location) record.Location { return record.Location(v) }),
		Contacts:    convert(st.Contacts, sharedContact.root),
		Reaction:    ptr(st.Reaction, func(v reaction) record.Reaction { return record.Reaction(v) }),
		Context:     ptr(st.Context, func(v replyContext) record.ReplyContext { return record.ReplyContext(v) }),
		Media:       ptr(st.Media, func(v mediaRef) record.MediaRef { return record.MediaRef(v) }),
	}
}

// storeInteractive returns the stored form of an interactive message.
func storeInteractive(v record.Interactive) interactive {
	return interactive{
		Type: v.Type,
		Header: ptr(v.Header, func(h record.InteractiveHeader) interactiveHeader {
			return interactiveHeader{Type: h.Type, Text: h.Text, MediaURL: h.MediaURL, Filename: h.Filename,
				Media: ptr(h.Media, func(m record.MediaRef) mediaRef { return mediaRef(m) })}
		}),
		Body:    v.Body,
		Footer:  v.Footer,
		Buttons: convert(v.Buttons, func(b record.InteractiveButton) button { return button(b) }),
		List: ptr(v.List, func(l record.InteractiveList) list {
			return list{Button: l.Button, Sections: convert(l.Sections, func(s record.ListSection) listSection {
				return listSection{Title: s.Title, Rows: convert(s.Rows, func(r record.ListRow) listRow { return listRow(r) })}
			})}
		}),
		CTA: ptr(v.CTA, func(c record.CTAURL) ctaURL { return ctaURL(c) }),
	}
}

// root returns the interactive message v stores.
func (v interactive) root() record.Interactive {
	return record.Interactive{
		Type: v.Type,
		Header: ptr(v.Header, func(h interactiveHeader) record.InteractiveHeader {
			return record.InteractiveHeader{Type: h.Type, Text: h.Text, MediaURL: h.MediaURL, Filename: h.Filename,
				Media: ptr(h.Media, func(m mediaRef) record.MediaRef { return record.MediaRef(m) })}
		}),
		Body:    v.Body,
		Footer:  v.Footer,
		Buttons: convert(v.Buttons, func(b button) record.InteractiveButton { return record.InteractiveButton(b) }),
		List: ptr(v.List, func(l list) record.InteractiveList {
			return record.InteractiveList{Button: l.Button, Sections: convert(l.Sections, func(s listSection) record.ListSection {
				return record.ListSection{Title: s.Title, Rows: convert(s.Rows, func(r listRow) record.ListRow { return record.ListRow(r) })}
			})}
		}),
		CTA: ptr(v.CTA, func(c ctaURL) record.CTAURL { return record.CTAURL(c) }),
	}
}
