package metatest

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// ReadMark is a read receipt or sender action the Server received on
// POST /{version}/{id}/messages: WhatsApp's {"messaging_product":
// "whatsapp", "status": "read", "message_id", "typing_indicator"?}, or
// the Send API's {"recipient", "sender_action": "mark_seen" |
// "typing_on" | "typing_off"}. Read marks are not sends: they are not
// numbered and carry no message id.
type ReadMark struct {
	// WhatsApp is true for a WhatsApp read receipt.
	WhatsApp bool
	// AccountID is the path's phone-number, page or Instagram account id.
	AccountID string
	// MessageID is the WhatsApp message marked read.
	MessageID string
	// Typing is true when a typing indicator was asked for: WhatsApp's
	// typing_indicator {"type": "text"}, or the sender action typing_on.
	Typing bool
	// SenderAction and Recipient are the Send API's sender_action and
	// recipient.id.
	SenderAction, Recipient string
}

// ReadMarks returns a copy of the read marks received so far, in order.
func (s *Server) ReadMarks() []ReadMark {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.readMarks)
}

// Payload is the body of a message the Server accepted on POST
// /{version}/{id}/messages: every send (see Sends), and the Send API's
// reactions, which Meta answers without a message id. Read receipts and
// the other sender actions are ReadMarks.
type Payload struct {
	// WhatsApp is true for a Cloud API message.
	WhatsApp bool
	// AccountID is the path's phone-number, page or Instagram account id.
	AccountID string
	// ProviderMessageID is the id the answer carried (the Send's); empty
	// for a reaction on the Send API.
	ProviderMessageID string
	// Type is a WhatsApp message's type ("text" when it names none); on
	// the Send API "react" or "unreact" for a reaction, "attachment" for a
	// message with one, else "text".
	Type string
	// Body is the JSON body as received, decoded into maps, slices,
	// float64s and strings: what tests compare with Meta's documented
	// payloads.
	Body map[string]any
}

// Payloads returns a copy of the payloads accepted so far, in order.
func (s *Server) Payloads() []Payload {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.payloads)
}

// payloadType is the Type of an accepted payload b.
func payloadType(wa bool, b map[string]any) string {
	switch {
	case wa && str(b, "type") != "":
		return str(b, "type")
	case wa:
		return "text"
	case obj(b["message"])["attachment"] != nil:
		return "attachment"
	}
	return "text"
}

// apiError is a refusal of a send, in Graph's terms.
type apiError struct {
	code    int
	message string
}

// path names a member as Graph's messages do: interactive['body']['text'].
func path(root string, members ...string) string {
	for _, m := range members {
		root += "['" + m + "']"
	}
	return root
}

func missing(root string, members ...string) *apiError {
	return &apiError{100, "(#100) The parameter " + path(root, members...) + " is required."}
}

func notValid(format string, args ...any) *apiError {
	return &apiError{131009, "(#131009) Parameter value is not valid: " + fmt.Sprintf(format, args...)}
}

func obj(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

// mediaTypes are the message types of media objects, and the
// interactive header types that carry one.
var mediaTypes = []string{"image", "video", "audio", "document", "sticker"}

// checkMedia checks the media object of type typ at root: an id or a link,
// not both.
func checkMedia(m map[string]any, root ...string) *apiError {
	name, members := root[0], root[1:]
	if m == nil {
		return missing(name, members...)
	}
	id, link := str(m, "id"), str(m, "link")
	switch {
	case id == "" && link == "":
		return missing(name, append(slices.Clone(members), "id")...)
	case id != "" && link != "":
		return notValid("%s must have an id or a link, not both", path(name, members...))
	}
	return nil
}

// checkWhatsApp checks a Cloud API message as Meta does before accepting
// it: the members each type requires (text.body, a media object's id or
// link, an interactive message's body and action, a location's
// coordinates, a contact's formatted name, a reaction's message id and
// emoji, a template's name and language) and a quoted message's id.
func checkWhatsApp(b map[string]any) *apiError {
	if c, ok := b["context"]; ok && str(obj(c), "message_id") == "" {
		return missing("context", "message_id")
	}
	typ := str(b, "type")
	if typ == "" {
		typ = "text"
	}
	switch {
	case typ == "text":
		if str(obj(b["text"]), "body") == "" {
			return missing("text", "body")
		}
	case slices.Contains(mediaTypes, typ):
		return checkMedia(obj(b[typ]), typ)
	case typ == "interactive":
		return checkInteractive(obj(b["interactive"]))
	case typ == "location":
		loc := obj(b["location"])
		for _, k := range []string{"latitude", "longitude"} {
			if _, ok := loc[k].(float64); !ok {
				return missing("location", k)
			}
		}
	case typ == "contacts":
		cs := list(b["contacts"])
		if len(cs) == 0 {
			return missing("contacts")
		}
		for i, c := range cs {
			if str(obj(obj(c)["name"]), "formatted_name") == "" {
				return missing(fmt.Sprintf("contacts[%d]", i), "name", "formatted_name")
			}
		}
	case typ == "reaction":
		r := obj(b["reaction"])
		if str(r, "message_id") == "" {
			return missing("reaction", "message_id")
		}
		if _, ok := r["emoji"].(string); !ok {
			return missing("reaction", "emoji")
		}
	case typ == "template":
		t := obj(b["template"])
		if str(t, "name") == "" {
			return missing("template", "name")
		}
		if str(obj(t["language"]), "code") == "" {
			return missing("template", "language", "code")
		}
	default:
		return &apiError{100, fmt.Sprintf("(#100) Param type must be a message type - got %q.", typ)}
	}
	return nil
}

// checkInteractive checks an interactive message of type button, list or
// cta_url (other interactive types are accepted as they are).
func checkInteractive(in map[string]any) *apiError {
	if in == nil {
		return missing("interactive")
	}
	typ := str(in, "type")
	if typ == "" {
		return missing("interactive", "type")
	}
	if typ != "button" && typ != "list" && typ != "cta_url" {
		return nil
	}
	if str(obj(in["body"]), "text") == "" {
		return missing("interactive", "body", "text")
	}
	if h, ok := in["header"]; ok {
		h := obj(h)
		ht := str(h, "type")
		switch {
		case ht == "":
			return missing("interactive", "header", "type")
		case ht == "text":
			if str(h, "text") == "" {
				return missing("interactive", "header", "text")
			}
		case typ == "list":
			return notValid("a list's header must be text, not %s", ht)
		case ht == "image" || ht == "video" || ht == "document":
			if err := checkMedia(obj(h[ht]), "interactive", "header", ht); err != nil {
				return err
			}
		default:
			return notValid("interactive['header']['type'] must be text, image, video or document, not %q", ht)
		}
	}
	if f, ok := in["footer"]; ok && str(obj(f), "text") == "" {
		return missing("interactive", "footer", "text")
	}
	action := obj(in["action"])
	if action == nil {
		return missing("interactive", "action")
	}
	switch typ {
	case "button":
		bs := list(action["buttons"])
		if len(bs) == 0 || len(bs) > 3 {
			return notValid("interactive['action']['buttons'] must have 1 to 3 buttons, not %d", len(bs))
		}
		seen := map[string]bool{}
		for i, b := range bs {
			b := obj(b)
			at := fmt.Sprintf("buttons[%d]", i)
			if str(b, "type") != "reply" {
				return missing("interactive", "action", at, "type")
			}
			r := obj(b["reply"])
			for _, k := range []string{"id", "title"} {
				if str(r, k) == "" {
					return missing("interactive", "action", at, "reply", k)
				}
			}
			if seen[str(r, "id")] {
				return notValid("buttons' ids must be unique (%q twice)", str(r, "id"))
			}
			seen[str(r, "id")] = true
		}
	case "list":
		if str(action, "button") == "" {
			return missing("interactive", "action", "button")
		}
		secs := list(action["sections"])
		if len(secs) == 0 || len(secs) > 10 {
			return notValid("interactive['action']['sections'] must have 1 to 10 sections, not %d", len(secs))
		}
		rows := 0
		for i, sec := range secs {
			sec := obj(sec)
			at := fmt.Sprintf("sections[%d]", i)
			if len(secs) > 1 && str(sec, "title") == "" {
				return missing("interactive", "action", at, "title")
			}
			rs := list(sec["rows"])
			if len(rs) == 0 {
				return missing("interactive", "action", at, "rows")
			}
			for j, r := range rs {
				for _, k := range []string{"id", "title"} {
					if str(obj(r), k) == "" {
						return missing("interactive", "action", at, fmt.Sprintf("rows[%d]", j), k)
					}
				}
			}
			rows += len(rs)
		}
		if rows > 10 {
			return notValid("a list has at most 10 rows, not %d", rows)
		}
	case "cta_url":
		if str(action, "name") != "cta_url" {
			return missing("interactive", "action", "name")
		}
		ps := obj(action["parameters"])
		for _, k := range []string{"display_text", "url"} {
			if str(ps, k) == "" {
				return missing("interactive", "action", "parameters", k)
			}
		}
	}
	return nil
}

// readStatus answers a WhatsApp read receipt, {"success": true}, and
// records it.
func (s *Server) readStatus(w http.ResponseWriter, r *http.Request, b map[string]any) {
	switch {
	case str(b, "status") != "read":
		invalidParam(w, fmt.Sprintf("Param status must be read - got %q.", str(b, "status")))
		return
	case str(b, "message_id") == "":
		required(w, "message_id")
		return
	}
	typing := false
	if ti, ok := b["typing_indicator"]; ok {
		if str(obj(ti), "type") != "text" {
			invalidParam(w, "Param typing_indicator['type'] must be text.")
			return
		}
		typing = true
	}
	s.mu.Lock()
	s.readMarks = append(s.readMarks, ReadMark{WhatsApp: true, AccountID: r.PathValue("id"), MessageID: str(b, "message_id"), Typing: typing})
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]bool{"success": true})
}

// senderActions are the Send API's sender actions about the conversation,
// recorded as read marks.
var senderActions = []string{"mark_seen", "typing_on", "typing_off"}

// senderAction answers a Send API sender action {"recipient_id"}:
// mark_seen, typing_on and typing_off are recorded as read marks; react
// and unreact (Instagram) as sends without a message id, as Meta answers
// them.
func (s *Server) senderAction(w http.ResponseWriter, r *http.Request, b map[string]any, to string) {
	action := str(b, "sender_action")
	switch {
	case to == "":
		required(w, "recipient")
		return
	case slices.Contains(senderActions, action):
		s.mu.Lock()
		s.readMarks = append(s.readMarks, ReadMark{AccountID: r.PathValue("id"), SenderAction: action, Recipient: to, Typing: action == "typing_on"})
		s.mu.Unlock()
	case action == "react" || action == "unreact":
		p := obj(b["payload"])
		if str(p, "message_id") == "" {
			required(w, "payload['message_id']")
			return
		}
		if action == "react" && str(p, "reaction") == "" {
			required(w, "payload['reaction']")
			return
		}
		s.mu.Lock()
		s.payloads = append(s.payloads, Payload{AccountID: r.PathValue("id"), Type: action, Body: b})
		s.mu.Unlock()
	default:
		invalidParam(w, "Param sender_action must be one of {"+strings.Join(append(slices.Clone(senderActions), "react", "unreact"), ", ")+"} - got \""+action+"\".")
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"recipient_id": to})
}
