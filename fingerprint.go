package messaging

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/ujumbe/messaging/record"
)

// The kinds of outbound message requests. A request's kind is the first
// part of its request hash, so a send and a template send never match.
const (
	kindSend     = "send"
	kindTemplate = "template"
)

// requestHash returns the hash of the request that created msg, of kind
// kindSend or kindTemplate: a repeat under the same idempotency key must
// have the same hash. It is SHA-256 over the kind, a NUL byte and the JSON
// of the request's canonical form (sendFingerprint or
// templateFingerprint), in hex.
//
// The hashes are stored with the messages and compared with the requests of
// later releases, so their bytes are frozen: the fingerprint types below
// keep the member names, order and omitempty of the params structs whose
// JSON was hashed when idempotency keys were introduced, independent of the
// JSON tags of the public types. Never change them; TestRequestHashIsFrozen
// pins their output.
func requestHash(kind string, msg *Message) (string, error) {
	var v any
	if kind == kindTemplate {
		v = templateFingerprint{To: msg.To, TemplateName: msg.TemplateName, Language: msg.Language, Components: componentFingerprints(msg.Components),
			SendAt: sendAtFingerprint(msg.SendAt), Fallback: fallbackFingerprintOf(msg.Fallback)}
	} else {
		f := sendFingerprint{Channel: msg.Channel, To: msg.To, Type: msg.Type, Text: msg.Text,
			MediaURL: msg.MediaURL, Caption: msg.Caption, Filename: msg.Filename}
		if o := msg.Outbound; o != nil {
			f.richFingerprint = richOf(o)
		}
		f.SendAt = sendAtFingerprint(msg.SendAt)
		v = f
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(append([]byte(kind+"\x00"), b...))
	return hex.EncodeToString(sum[:]), nil
}

// sendFingerprint is the canonical form of a send: the validated fields,
// the recipient in its canonical form. (The request form it was frozen
// from also had idempotency_key, template_name, language and components,
// all omitempty and always empty in a hashed request: the key was cleared
// and template fields refused, so they never appeared in the bytes.)
type sendFingerprint struct {
	Channel  string `json:"channel"`
	To       string `json:"to"`
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	MediaURL string `json:"media_url,omitempty"`
	Caption  string `json:"caption,omitempty"`
	Filename string `json:"filename,omitempty"`
	// The members of rich sends, added after the first release: all
	// omitempty, so a send without them hashes to the bytes it always
	// did.
	richFingerprint
	// SendAt is a scheduled send's time (sendAtFingerprint), added with
	// scheduled sends: omitempty, so a send without it hashes as before.
	SendAt string `json:"send_at,omitempty"`
}

// sendAtFingerprint is the canonical form of a scheduled send's time: the
// instant in UTC with every digit (RFC 3339 with nanoseconds), so that the
// same instant written with any offset hashes alike; "" when not
// scheduled.
func sendAtFingerprint(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// richFingerprint is the canonical form of the rich members of a send
// (the references by our ids, as the request gave them). Its member names
// and order are frozen like the rest.
type richFingerprint struct {
	MediaID     string                  `json:"media_id,omitempty"`
	Interactive *interactiveFingerprint `json:"interactive,omitempty"`
	Location    *locationFingerprint    `json:"location,omitempty"`
	Contacts    []contactFingerprint    `json:"contacts,omitempty"`
	Reaction    *reactionFingerprint    `json:"reaction,omitempty"`
	ReplyTo     string                  `json:"context_message_id,omitempty"`
}

type interactiveFingerprint struct {
	Type    string             `json:"type"`
	Header  *headerFingerprint `json:"header,omitempty"`
	Body    string             `json:"body"`
	Footer  string             `json:"footer,omitempty"`
	Buttons [][2]string        `json:"buttons,omitempty"`
	Button  string             `json:"list_button,omitempty"`
	// Sections are the list's sections: title, then rows of id, title
	// and description.
	Sections []sectionFingerprint `json:"sections,omitempty"`
	CTA      *[2]string           `json:"cta_url,omitempty"`
}

type headerFingerprint struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	MediaURL string `json:"media_url,omitempty"`
	MediaID  string `json:"media_id,omitempty"`
	Filename string `json:"filename,omitempty"`
}

type sectionFingerprint struct {
	Title string      `json:"title,omitempty"`
	Rows  [][3]string `json:"rows"`
}

type locationFingerprint struct {
	Latitude  float64 `json:"latitude"`
	Longitude float64 `json:"longitude"`
	Name      string  `json:"name,omitempty"`
	Address   string  `json:"address,omitempty"`
}

type contactFingerprint struct {
	FormattedName string      `json:"formatted_name"`
	FirstName     string      `json:"first_name,omitempty"`
	LastName      string      `json:"last_name,omitempty"`
	Organization  string      `json:"organization,omitempty"`
	Phones        [][3]string `json:"phones,omitempty"`
	Emails        [][2]string `json:"emails,omitempty"`
}

type reactionFingerprint struct {
	MessageID string `json:"message_id"`
	Emoji     string `json:"emoji"`
}

// richOf returns the canonical form of the rich members of o, before its
// references are resolved.
func richOf(o *OutboundContent) richFingerprint {
	var f richFingerprint
	if o.Media != nil {
		f.MediaID = o.Media.ID
	}
	if o.Context != nil {
		f.ReplyTo = o.Context.MessageID
	}
	if o.Reaction != nil {
		f.Reaction = &reactionFingerprint{MessageID: o.Reaction.MessageID, Emoji: o.Reaction.Emoji}
	}
	if l := o.Location; l != nil {
		f.Location = &locationFingerprint{Latitude: l.Latitude, Longitude: l.Longitude, Name: l.Name, Address: l.Address}
	}
	for _, c := range o.Contacts {
		cf := contactFingerprint{FormattedName: c.FormattedName, FirstName: c.FirstName, LastName: c.LastName, Organization: c.Organization}
		for _, p := range c.Phones {
			cf.Phones = append(cf.Phones, [3]string{p.Phone, p.WaID, p.Type})
		}
		for _, e := range c.Emails {
			cf.Emails = append(cf.Emails, [2]string{e.Email, e.Type})
		}
		f.Contacts = append(f.Contacts, cf)
	}
	if in := o.Interactive; in != nil {
		inf := &interactiveFingerprint{Type: in.Type, Body: in.Body, Footer: in.Footer}
		if h := in.Header; h != nil {
			inf.Header = &headerFingerprint{Type: h.Type, Text: h.Text, MediaURL: h.MediaURL, Filename: h.Filename}
			if h.Media != nil {
				inf.Header.MediaID = h.Media.ID
			}
		}
		for _, b := range in.Buttons {
			inf.Buttons = append(inf.Buttons, [2]string{b.ID, b.Title})
		}
		if l := in.List; l != nil {
			inf.Button = l.Button
			for _, s := range l.Sections {
				sf := sectionFingerprint{Title: s.Title, Rows: [][3]string{}}
				for _, r := range s.Rows {
					sf.Rows = append(sf.Rows, [3]string{r.ID, r.Title, r.Description})
				}
				inf.Sections = append(inf.Sections, sf)
			}
		}
		if c := in.CTA; c != nil {
			inf.CTA = &[2]string{c.DisplayText, c.URL}
		}
		f.Interactive = inf
	}
	return f
}

// templateFingerprint is the canonical form of a template send: the
// recipient in its canonical form and the language with its default
// applied. (The request form it was frozen from also had idempotency_key,
// omitempty and always cleared.)
type templateFingerprint struct {
	To           string                 `json:"to"`
	TemplateName string                 `json:"template_name"`
	Language     string                 `json:"language"`
	Components   []componentFingerprint `json:"components,omitempty"`
	// SendAt was added with scheduled sends (see sendFingerprint.SendAt).
	SendAt string `json:"send_at,omitempty"`
	// Fallback was added after the freeze: omitted when there is none, so
	// the bytes of a send without one are unchanged.
	Fallback *fallbackFingerprint `json:"fallback,omitempty"`
}

// fallbackFingerprint is the canonical form of an SMS fallback: its
// wait resolved, in seconds.
type fallbackFingerprint struct {
	Text      string `json:"text"`
	PartnerID string `json:"partner_id"`
	Shortcode string `json:"shortcode"`
	After     int64  `json:"after"`
}

// fallbackFingerprintOf returns the fingerprint of f, nil for nil.
func fallbackFingerprintOf(f *record.SMSFallback) *fallbackFingerprint {
	if f == nil {
		return nil
	}
	return &fallbackFingerprint{Text: f.Text, PartnerID: f.PartnerID, Shortcode: f.Shortcode, After: int64(f.After / time.Second)}
}

// componentFingerprint is the canonical form of a SendComponent.
type componentFingerprint struct {
	Type       string                 `json:"type"`
	SubType    string                 `json:"sub_type,omitempty"`
	Index      *int                   `json:"index,omitempty"`
	Parameters []parameterFingerprint `json:"parameters"`
}

// parameterFingerprint is the canonical form of a SendParameter.
type parameterFingerprint struct {
	Type       string `json:"type"`
	Text       string `json:"text,omitempty"`
	Link       string `json:"link,omitempty"`
	Filename   string `json:"filename,omitempty"`
	CouponCode string `json:"coupon_code,omitempty"`
	Payload    string `json:"payload,omitempty"`
}

// componentFingerprints returns the canonical form of cs. A nil slice stays
// nil and an empty one empty, as their JSON differs (null and []).
func componentFingerprints(cs []SendComponent) []componentFingerprint {
	if cs == nil {
		return nil
	}
	out := make([]componentFingerprint, len(cs))
	for i, c := range cs {
		out[i] = componentFingerprint{Type: c.Type, SubType: c.SubType, Index: c.Index}
		if c.Parameters != nil {
			out[i].Parameters = make([]parameterFingerprint, len(c.Parameters))
		}
		for j, p := range c.Parameters {
			out[i].Parameters[j] = parameterFingerprint{Type: p.Type, Text: p.Text, Link: p.Link, Filename: p.Filename,
				CouponCode: p.CouponCode, Payload: p.Payload}
		}
	}
	return out
}
