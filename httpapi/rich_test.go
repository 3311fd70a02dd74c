package httpapi_test

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http/httptest"
	"net/textproto"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/memstore"
)

// uploadBoundary is the multipart boundary of uploadBody.
const uploadBoundary = "rich-test-boundary"

// uploadContentType is the Content-Type of the bodies of uploadBody.
const uploadContentType = "multipart/form-data; boundary=" + uploadBoundary

// jpegBytes returns n bytes that start as a JPEG file.
func jpegBytes(n int) []byte {
	b := make([]byte, n)
	copy(b, "\xff\xd8\xff\xe0\x00\x10JFIF")
	return b
}

// uploadBody is a body of POST /v1/media: the text fields (in a fixed
// order: channel, purpose, kind, type), then the part named file with
// filename and content.
func uploadBody(t testing.TB, fields map[string]string, filename string, content []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	if err := w.SetBoundary(uploadBoundary); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"channel", "purpose", "kind", "type"} {
		if v, ok := fields[k]; ok {
			if err := w.WriteField(k, v); err != nil {
				t.Fatal(err)
			}
		}
	}
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="file"; filename="`+filename+`"`)
	h.Set("Content-Type", "application/octet-stream")
	pw, err := w.CreatePart(h)
	if err != nil {
		t.Fatal(err)
	}
	pw.Write(content)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// richEnv is setup with the fake provider on the shared clock, an
// inbound message from richTo (which opens its customer-service window),
// an upload of a JPEG for messages and a message of another conversation.
type richEnv struct {
	*env
	fake    *fakeprovider.Provider
	inbound *messaging.Message
	image   string
	// elsewhere is an outbound message of A to another number.
	elsewhere string
}

const richTo = "+254712345678"

func setupRich(t *testing.T) *richEnv {
	t.Helper()
	var e *env
	fp := fakeprovider.NewWithOptions(&fakeprovider.Options{Clock: func() time.Time {
		if e == nil {
			return t0
		}
		return e.clock.Now()
	}})
	e = setupWith(t, memstore.New(), fp, nil)
	ctx := context.Background()
	in, err := fp.Receive(ctx, &messaging.InboundMessage{WorkspaceID: e.A.ID, From: richTo, Text: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	other, err := e.svc.Workspace(e.A.ID).Messages.Send(ctx, &messaging.SendParams{Channel: "whatsapp", To: "+254700000999", Type: "text", Text: "elsewhere"})
	if err != nil {
		t.Fatal(err)
	}
	return &richEnv{env: e, fake: fp, inbound: in, image: e.A.NewUpload(), elsewhere: other.MessageID}
}

// dispatch lets the dispatcher hand every due message to the fake.
func (e *richEnv) dispatch(t *testing.T) {
	t.Helper()
	if _, err := e.svc.DispatchDue(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// sent returns what the fake received for message id, nil when none.
func (e *richEnv) sent(id string) *messaging.Message {
	for _, m := range e.fake.Sent() {
		if m.ID == id {
			return m
		}
	}
	return nil
}

// member returns the member name of the JSON object body, re-encoded.
func member(t *testing.T, body []byte, name string) string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	if m[name] == nil {
		return ""
	}
	var v any
	_ = json.Unmarshal(m[name], &v)
	b, _ := json.Marshal(v)
	return string(b)
}

// TestRichSendEndToEnd: each rich type through POST /v1/messages is
// dispatched to the fake with its content resolved (the provider's ids
// of the media, quoted and reacted-to messages), and GET shows the
// members the send gave, in the same shapes, without the provider's ids.
func TestRichSendEndToEnd(t *testing.T) {
	e := setupRich(t)
	in, img := e.inbound, e.image
	cases := []struct {
		name   string
		body   string
		member string // the rich member the view shows as the request gave it
		check  func(t *testing.T, m *messaging.Message)
	}{
		{"image by upload", `{"type":"image","media_id":"` + img + `","caption":"Look"}`, "media_id", func(t *testing.T, m *messaging.Message) {
			if m.Outbound == nil || m.Outbound.Media == nil || m.Outbound.Media.ID != img || m.Outbound.Media.ProviderMediaID == "" || m.Caption != "Look" {
				t.Errorf("sent %+v, want media %s with its provider id and the caption", m.Outbound, img)
			}
		}},
		{"buttons", `{"type":"interactive","interactive":{"type":"button","header":{"type":"image","media_id":"` + img + `"},"body":"Pick","footer":"Acme","buttons":[{"id":"yes","title":"Yes"},{"id":"no","title":"No"}]}}`, "interactive", func(t *testing.T, m *messaging.Message) {
			in := m.Outbound.Interactive
			if in == nil || in.Type != "button" || len(in.Buttons) != 2 || in.Buttons[1] != (messaging.InteractiveButton{ID: "no", Title: "No"}) ||
				in.Header == nil || in.Header.Media == nil || in.Header.Media.ProviderMediaID == "" || in.Footer != "Acme" {
				t.Errorf("sent %+v", in)
			}
		}},
		{"list", `{"type":"interactive","interactive":{"type":"list","header":{"type":"text","text":"Menu"},"body":"Choose","list":{"button":"Open","sections":[{"title":"Drinks","rows":[{"id":"tea","title":"Tea","description":"Hot"}]},{"title":"Food","rows":[{"id":"ugali","title":"Ugali"}]}]}}}`, "interactive", func(t *testing.T, m *messaging.Message) {
			l := m.Outbound.Interactive.List
			if l == nil || l.Button != "Open" || len(l.Sections) != 2 || l.Sections[0].Rows[0] != (messaging.ListRow{ID: "tea", Title: "Tea", Description: "Hot"}) {
				t.Errorf("sent list %+v", l)
			}
		}},
		{"cta_url", `{"type":"interactive","interactive":{"type":"cta_url","body":"Track it","cta_url":{"display_text":"Track","url":"https://example.com/t/1"}}}`, "interactive", func(t *testing.T, m *messaging.Message) {
			if c := m.Outbound.Interactive.CTA; c == nil || c.URL != "https://example.com/t/1" || c.DisplayText != "Track" {
				t.Errorf("sent cta %+v", c)
			}
		}},
		{"location", `{"type":"location","location":{"latitude":-1.2864,"longitude":36.8172,"name":"Office","address":"Moi Avenue"}}`, "location", func(t *testing.T, m *messaging.Message) {
			if l := m.Outbound.Location; l == nil || *l != (messaging.Location{Latitude: -1.2864, Longitude: 36.8172, Name: "Office", Address: "Moi Avenue"}) {
				t.Errorf("sent location %+v", l)
			}
		}},
		{"location at 0,0", `{"type":"location","location":{"latitude":0,"longitude":0}}`, "location", func(t *testing.T, m *messaging.Message) {
			if l := m.Outbound.Location; l == nil || l.Latitude != 0 || l.Longitude != 0 {
				t.Errorf("sent location %+v", l)
			}
		}},
		{"contacts", `{"type":"contacts","contacts":[{"formatted_name":"Amina Odhiambo","first_name":"Amina","last_name":"Odhiambo","organization":"Ujumbe","phones":[{"phone":"+254712345678","type":"CELL","wa_id":"254712345678"}],"emails":[{"email":"amina@example.com","type":"WORK"}]}]}`, "contacts", func(t *testing.T, m *messaging.Message) {
			cs := m.Outbound.Contacts
			if len(cs) != 1 || cs[0].FormattedName != "Amina Odhiambo" || cs[0].Phones[0].WaID != "254712345678" || cs[0].Emails[0].Email != "amina@example.com" {
				t.Errorf("sent contacts %+v", cs)
			}
		}},
		{"reaction", `{"type":"reaction","reaction":{"message_id":"` + in.ID + `","emoji":"👍"}}`, "reaction", func(t *testing.T, m *messaging.Message) {
			if r := m.Outbound.Reaction; r == nil || r.ProviderMessageID != in.ProviderMessageID || r.Emoji != "👍" {
				t.Errorf("sent reaction %+v, want to %s", r, in.ProviderMessageID)
			}
		}},
		{"reaction removed", `{"type":"reaction","reaction":{"message_id":"` + in.ID + `","emoji":""}}`, "reaction", func(t *testing.T, m *messaging.Message) {
			if r := m.Outbound.Reaction; r == nil || r.ProviderMessageID != in.ProviderMessageID || r.Emoji != "" {
				t.Errorf("sent reaction %+v, want a removal", r)
			}
		}},
		{"text quoting", `{"type":"text","text":"Yes","context":{"message_id":"` + in.ID + `"}}`, "context", func(t *testing.T, m *messaging.Message) {
			if c := m.Outbound.Context; c == nil || c.ProviderMessageID != in.ProviderMessageID || m.Text != "Yes" {
				t.Errorf("sent context %+v, want %s", c, in.ProviderMessageID)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body := `{"channel":"whatsapp","to":"` + richTo + `",` + c.body[1:]
			r := e.call(t, "POST", "/v1/messages", "A", body)
			expect(t, r, 201, "", "")
			id, _ := r.object(t)["message_id"].(string)
			e.dispatch(t)
			m := e.sent(id)
			if m == nil {
				t.Fatalf("the fake received no message %s", id)
			}
			if m.Outbound == nil {
				t.Fatalf("sent without rich content: %+v", m)
			}
			c.check(t, m)
			g := e.call(t, "GET", "/v1/messages/"+id, "A", nil)
			expect(t, g, 200, "", "")
			if g.object(t)["status"] != "sent" {
				t.Errorf("status %v, want sent", g.object(t)["status"])
			}
			if got, want := member(t, g.body, c.member), member(t, []byte(body), c.member); got != want {
				t.Errorf("GET %s = %s, want it as sent: %s", c.member, got, want)
			}
			ids := []string{in.ProviderMessageID}
			if o := m.Outbound; o.Media != nil {
				ids = append(ids, o.Media.ProviderMediaID)
			} else if o.Interactive != nil && o.Interactive.Header != nil && o.Interactive.Header.Media != nil {
				ids = append(ids, o.Interactive.Header.Media.ProviderMediaID)
			}
			for _, pid := range ids {
				if pid == "" || bytes.Contains(g.body, []byte(pid)) {
					t.Errorf("GET shows the provider id %q: %s", pid, g.body)
				}
			}
			if bytes.Contains(g.body, []byte("provider_")) {
				t.Errorf("GET shows a provider member: %s", g.body)
			}
		})
	}
}

// TestRichSendRefusals: each bad rich send through HTTP is a 4xx naming
// the field; nothing is stored or sent.
func TestRichSendRefusals(t *testing.T) {
	e := setupRich(t)
	buttons := func(bs ...string) string {
		var parts []string
		for _, b := range bs {
			parts = append(parts, `{"id":"`+b+`","title":"`+b+`"}`)
		}
		return `{"type":"interactive","interactive":{"type":"button","body":"Pick","buttons":[` + strings.Join(parts, ",") + `]}}`
	}
	list := func(sections string) string {
		return `{"type":"interactive","interactive":{"type":"list","body":"Choose","list":{"button":"Open","sections":` + sections + `}}}`
	}
	cases := []struct {
		name, body string
		status     int
		code       string
		field      string
	}{
		{"four buttons", buttons("a", "b", "c", "d"), 400, "validation_error", "interactive.buttons"},
		{"no buttons", buttons(), 400, "validation_error", "interactive.buttons"},
		{"duplicate button ids", buttons("a", "a"), 400, "validation_error", "interactive.buttons[1].id"},
		{"button title 21", buttons(strings.Repeat("é", 20), strings.Repeat("x", 21)), 400, "validation_error", "interactive.buttons[1].title"},
		{"duplicate row ids", list(`[{"title":"A","rows":[{"id":"r","title":"R"}]},{"title":"B","rows":[{"id":"r","title":"S"}]}]`), 400, "validation_error", "interactive.list.sections[1].rows[0].id"},
		{"row title 25", list(`[{"rows":[{"id":"r","title":"` + strings.Repeat("x", 25) + `"}]}]`), 400, "validation_error", "interactive.list.sections[0].rows[0].title"},
		{"list without rows", list(`[{"title":"A","rows":[]}]`), 400, "validation_error", "interactive.list.sections[0].rows"},
		{"buttons in a list", `{"type":"interactive","interactive":{"type":"list","body":"x","buttons":[{"id":"a","title":"a"}],"list":{"button":"b","sections":[{"rows":[{"id":"r","title":"R"}]}]}}}`, 400, "validation_error", "interactive.buttons"},
		{"unknown interactive member", `{"type":"interactive","interactive":{"type":"button","body":"x","buttons":[{"id":"a","title":"a"}],"color":"red"}}`, 400, "validation_error", "color"},
		{"latitude 91", `{"type":"location","location":{"latitude":91,"longitude":36.8}}`, 400, "validation_error", "location.latitude"},
		{"longitude -181", `{"type":"location","location":{"latitude":1,"longitude":-181}}`, 400, "validation_error", "location.longitude"},
		{"latitude missing", `{"type":"location","location":{"longitude":36.8}}`, 400, "validation_error", "location.latitude"},
		{"longitude missing", `{"type":"location","location":{"latitude":1}}`, 400, "validation_error", "location.longitude"},
		{"latitude a string", `{"type":"location","location":{"latitude":"1","longitude":2}}`, 400, "validation_error", "location.latitude"},
		{"location url", `{"type":"location","location":{"latitude":1,"longitude":2,"url":"https://example.com"}}`, 400, "validation_error", "url"},
		{"empty card", `{"type":"contacts","contacts":[{}]}`, 400, "validation_error", "contacts[0].formatted_name"},
		{"no cards", `{"type":"contacts","contacts":[]}`, 400, "validation_error", "contacts"},
		{"card without phone", `{"type":"contacts","contacts":[{"formatted_name":"A"}]}`, 400, "validation_error", "contacts[0].phones"},
		{"reaction to another conversation", `{"type":"reaction","reaction":{"message_id":"` + e.elsewhere + `","emoji":"👍"}}`, 404, "not_found", "reaction.message_id"},
		{"reaction to another workspace", `{"type":"reaction","reaction":{"message_id":"` + e.B.Message.MessageID + `","emoji":"👍"}}`, 404, "not_found", "reaction.message_id"},
		{"reaction with words", `{"type":"reaction","reaction":{"message_id":"` + e.inbound.ID + `","emoji":"yes"}}`, 400, "validation_error", "reaction.emoji"},
		{"context of another workspace", `{"type":"text","text":"hi","context":{"message_id":"` + e.B.Message.MessageID + `"}}`, 404, "not_found", "context.message_id"},
		{"context without id", `{"type":"text","text":"hi","context":{}}`, 400, "validation_error", "context.message_id"},
		{"unknown media", `{"type":"image","media_id":"med_nope"}`, 404, "not_found", "media_id"},
		{"media of another workspace", `{"type":"image","media_id":"` + e.B.NewUpload() + `"}`, 404, "not_found", "media_id"},
		{"image upload sent as video", `{"type":"video","media_id":"` + e.image + `"}`, 400, "validation_error", "media_id"},
		{"media_url and media_id", `{"type":"image","media_url":"https://example.com/a.jpg","media_id":"` + e.image + `"}`, 400, "validation_error", "media_id"},
		{"header media unknown", `{"type":"interactive","interactive":{"type":"button","header":{"type":"image","media_id":"med_nope"},"body":"x","buttons":[{"id":"a","title":"a"}]}}`, 404, "not_found", "interactive.header.media_id"},
		{"location on a text", `{"type":"text","text":"hi","location":{"latitude":1,"longitude":2}}`, 400, "validation_error", "location"},
	}
	e.dispatch(t) // the messages of the setup
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before, sent := e.store.messages.Load(), len(e.fake.Sent())
			r := e.call(t, "POST", "/v1/messages", "A", `{"channel":"whatsapp","to":"`+richTo+`",`+c.body[1:])
			expect(t, r, c.status, c.code, c.field)
			if !strings.Contains(r.env.Error.Message, c.field) {
				t.Errorf("message %q does not name %s", r.env.Error.Message, c.field)
			}
			e.dispatch(t)
			if e.store.messages.Load() != before || len(e.fake.Sent()) != sent {
				t.Errorf("a refused send stored or sent a message")
			}
		})
	}
}

// TestRichSendExpiredMedia: an upload past its expiry is refused (400
// naming media_id), and nothing is stored.
func TestRichSendExpiredMedia(t *testing.T) {
	e := setupRich(t)
	e.clock.Advance(fakeprovider.MediaLifetime + time.Second)
	before := e.store.messages.Load()
	r := e.call(t, "POST", "/v1/messages", "A", `{"channel":"whatsapp","to":"`+richTo+`","type":"image","media_id":"`+e.image+`"}`)
	expect(t, r, 400, "validation_error", "media_id")
	if !strings.Contains(r.env.Error.Message, "expired") || e.store.messages.Load() != before {
		t.Errorf("%s; stored %d", r.body, e.store.messages.Load()-before)
	}
}

// TestMarkRead: POST /v1/messages/{id}/read marks an inbound message read
// at the provider once, answers the message with read_at, keeps the first
// read_at, asks again only for a typing indicator, and refuses an outbound
// message (400 naming id), another workspace's (404) and a bad body.
func TestMarkRead(t *testing.T) {
	e := setupRich(t)
	id := e.inbound.ID
	g := e.call(t, "GET", "/v1/messages/"+id, "A", nil)
	if v, ok := g.object(t)["read_at"]; !ok || v != nil {
		t.Errorf("an unread inbound message has read_at %v (present %v), want null", v, ok)
	}
	if _, ok := e.call(t, "GET", "/v1/messages/"+e.elsewhere, "A", nil).object(t)["read_at"]; ok {
		t.Errorf("an outbound message has read_at")
	}
	r := e.do(t, request{method: "POST", path: "/v1/messages/" + id + "/read", key: e.A.Full})
	expect(t, r, 200, "", "")
	first := r.object(t)["read_at"]
	if first != record.FormatTime(e.clock.Now()) || r.object(t)["message_id"] != id {
		t.Errorf("read_at %v, want %s; body %s", first, record.FormatTime(e.clock.Now()), r.body)
	}
	if n := len(e.fake.ReadMarks()); n != 1 {
		t.Fatalf("%d read marks at the fake, want 1", n)
	}
	e.clock.Advance(time.Minute)
	again := e.call(t, "POST", "/v1/messages/"+id+"/read", "A", `{}`)
	expect(t, again, 200, "", "")
	if again.object(t)["read_at"] != first || len(e.fake.ReadMarks()) != 1 {
		t.Errorf("marking again: read_at %v (want %v), %d marks (want 1)", again.object(t)["read_at"], first, len(e.fake.ReadMarks()))
	}
	typing := e.call(t, "POST", "/v1/messages/"+id+"/read", "A", `{"typing":true}`)
	expect(t, typing, 200, "", "")
	marks := e.fake.ReadMarks()
	if len(marks) != 2 || !marks[1].Typing || typing.object(t)["read_at"] != first {
		t.Errorf("typing: marks %+v, read_at %v", marks, typing.object(t)["read_at"])
	}
	if v := e.call(t, "GET", "/v1/messages/"+id, "A", nil).object(t)["read_at"]; v != first {
		t.Errorf("GET read_at %v, want %v", v, first)
	}
	expect(t, e.call(t, "POST", "/v1/messages/"+e.elsewhere+"/read", "A", nil), 400, "validation_error", "id")
	expect(t, e.call(t, "POST", "/v1/messages/"+id+"/read", "B", nil), 404, "not_found", "")
	expect(t, e.call(t, "POST", "/v1/messages/"+id+"/read", "A", `{"typing":"yes"}`), 400, "validation_error", "typing")
	expect(t, e.call(t, "POST", "/v1/messages/"+id+"/read", "A", `{"seen":true}`), 400, "validation_error", "seen")
	expect(t, e.call(t, "POST", "/v1/messages/"+id+"/read", "A.only:read:messages", nil), 403, "forbidden", "")
	if len(e.fake.ReadMarks()) != 2 {
		t.Errorf("a refused mark reached the fake")
	}
}

// upload posts body (Content-Type ct, default uploadContentType) to POST
// /v1/media with A's key.
func (e *richEnv) upload(t *testing.T, ct string, body io.Reader) *response {
	t.Helper()
	req := httptest.NewRequest("POST", "/v1/media", body)
	req.Header.Set("X-API-Key", e.A.Full)
	req.Header.Set("Content-Type", cmp.Or(ct, uploadContentType))
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	res := &response{status: rec.Code, header: rec.Result().Header, body: rec.Body.Bytes()}
	checkInvariants(t, "POST /v1/media", res)
	return res
}

// TestUpload: POST /v1/media streams the file part to the provider and
// answers the upload, which GET /v1/media/{id} answers the same; the
// file part's Content-Type is the MIME type unless the field type says
// otherwise.
func TestUpload(t *testing.T) {
	e := setupRich(t)
	pdf := []byte("%PDF-1.7\nterms and conditions")
	r := e.upload(t, "", bytes.NewReader(uploadBody(t, map[string]string{"channel": "whatsapp", "purpose": "message", "kind": "document", "type": "application/pdf"}, "terms.pdf", pdf)))
	expect(t, r, 201, "", "")
	got := r.object(t)
	sum := sha256.Sum256(pdf)
	for k, want := range map[string]any{"channel": "whatsapp", "purpose": "message", "kind": "document", "mime_type": "application/pdf",
		"size": float64(len(pdf)), "filename": "terms.pdf", "sha256": hex.EncodeToString(sum[:]), "animated": false} {
		if got[k] != want {
			t.Errorf("%s = %v, want %v", k, got[k], want)
		}
	}
	ups := e.fake.Uploads()
	if last := ups[len(ups)-1]; last.SHA256 != hex.EncodeToString(sum[:]) || last.Filename != "terms.pdf" || last.Kind != "document" {
		t.Errorf("the fake received %+v", last)
	}
	if bytes.Contains(r.body, []byte(ups[len(ups)-1].ID)) {
		t.Errorf("the answer shows the provider's media id: %s", r.body)
	}
	g := e.call(t, "GET", "/v1/media/"+got["id"].(string), "A", nil)
	expect(t, g, 200, "", "")
	if !bytes.Equal(g.body, r.body) {
		t.Errorf("GET %s\nPOST %s", g.body, r.body)
	}
	expect(t, e.call(t, "GET", "/v1/media/"+got["id"].(string), "B", nil), 404, "not_found", "")

	// No type field: the part's Content-Type.
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	h := textproto.MIMEHeader{"Content-Disposition": {`form-data; name="file"; filename="p.png"`}, "Content-Type": {"image/png"}}
	pw, _ := mw.CreatePart(h)
	pw.Write([]byte("\x89PNG\r\n\x1a\n rest of a picture"))
	mw.Close()
	r = e.upload(t, mw.FormDataContentType(), &b)
	expect(t, r, 201, "", "")
	if o := r.object(t); o["mime_type"] != "image/png" || o["kind"] != "image" {
		t.Errorf("the part's Content-Type was not used: %s", r.body)
	}
}

// rawMultipart builds a multipart body (boundary uploadBoundary) of parts
// given as name, content pairs; a name "file" gets a filename.
func rawMultipart(kv ...string) string {
	var b strings.Builder
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i] == "file" {
			fmt.Fprintf(&b, "--%s\r\nContent-Disposition: form-data; name=\"file\"; filename=\"f\"\r\nContent-Type: application/octet-stream\r\n\r\n%s\r\n", uploadBoundary, kv[i+1])
			continue
		}
		fmt.Fprintf(&b, "--%s\r\nContent-Disposition: form-data; name=%q\r\n\r\n%s\r\n", uploadBoundary, kv[i], kv[i+1])
	}
	b.WriteString("--" + uploadBoundary + "--\r\n")
	return b.String()
}

// TestUploadRefusals: each bad upload through HTTP is a 400 naming the
// field, and nothing is stored or kept by the provider.
func TestUploadRefusals(t *testing.T) {
	e := setupRich(t)
	jpeg := string(jpegBytes(600))
	png := "\x89PNG\r\n\x1a\n" + strings.Repeat("p", 600)
	cases := []struct {
		name  string
		ct    string
		body  func(t *testing.T) io.Reader
		field string
	}{
		{"6 MB JPEG", "", func(t *testing.T) io.Reader {
			return bytes.NewReader(uploadBody(t, map[string]string{"type": "image/jpeg"}, "big.jpg", jpegBytes(6<<20)))
		}, "file"},
		{"PNG declared as video", "", func(*testing.T) io.Reader {
			return strings.NewReader(rawMultipart("kind", "video", "type", "image/png", "file", png))
		}, "kind"},
		{"PNG bytes declared JPEG", "", func(*testing.T) io.Reader { return strings.NewReader(rawMultipart("type", "image/jpeg", "file", png)) }, "file"},
		{"GIF", "", func(*testing.T) io.Reader {
			return strings.NewReader(rawMultipart("type", "image/gif", "file", "GIF89a"))
		}, "mime_type"},
		{"empty file", "", func(*testing.T) io.Reader { return strings.NewReader(rawMultipart("type", "image/jpeg", "file", "")) }, "file"},
		{"no file part", "", func(*testing.T) io.Reader { return strings.NewReader(rawMultipart("type", "image/jpeg")) }, "file"},
		{"no parts", "", func(*testing.T) io.Reader { return strings.NewReader(rawMultipart()) }, "file"},
		{"field after the file", "", func(*testing.T) io.Reader {
			return strings.NewReader(rawMultipart("type", "image/jpeg", "file", jpeg, "kind", "image"))
		}, "kind"},
		{"second file", "", func(*testing.T) io.Reader {
			return strings.NewReader(rawMultipart("type", "image/jpeg", "file", jpeg, "file", jpeg))
		}, "file"},
		{"field twice", "", func(*testing.T) io.Reader {
			return strings.NewReader(rawMultipart("type", "image/jpeg", "type", "image/png", "file", jpeg))
		}, "type"},
		{"unknown field", "", func(*testing.T) io.Reader { return strings.NewReader(rawMultipart("color", "red", "file", jpeg)) }, "color"},
		{"bad purpose", "", func(*testing.T) io.Reader {
			return strings.NewReader(rawMultipart("purpose", "avatar", "type", "image/jpeg", "file", jpeg))
		}, "purpose"},
		{"JSON body", "application/json", func(*testing.T) io.Reader { return strings.NewReader(`{"type":"image/jpeg"}`) }, "Content-Type"},
		{"no boundary", "multipart/form-data", func(*testing.T) io.Reader { return strings.NewReader(rawMultipart("file", jpeg)) }, "Content-Type"},
		{"cut off mid-stream", "", func(t *testing.T) io.Reader {
			full := uploadBody(t, map[string]string{"type": "image/jpeg"}, "a.jpg", jpegBytes(64<<10))
			pr, pw := io.Pipe()
			go func() {
				pw.Write(full[:len(full)/2])
				pw.Close()
			}()
			return pr
		}, "file"},
		{"cut off in the fields", "", func(t *testing.T) io.Reader {
			full := rawMultipart("type", "image/jpeg", "file", jpeg)
			return strings.NewReader(full[:30])
		}, "file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			stored, kept := e.store.media.Load(), len(e.fake.Uploads())
			r := e.upload(t, c.ct, c.body(t))
			expect(t, r, 400, "validation_error", c.field)
			if !strings.HasPrefix(r.env.Error.Message, c.field+": ") {
				t.Errorf("message %q does not name %s", r.env.Error.Message, c.field)
			}
			if e.store.media.Load() != stored || len(e.fake.Uploads()) != kept {
				t.Errorf("a refused upload was stored (%d) or kept by the provider (%d)", e.store.media.Load()-stored, len(e.fake.Uploads())-kept)
			}
		})
	}
}

// TestUploadStreams: a 100 MB document goes through the handler streamed:
// the body, generated into an io.Pipe, is never held, and the request
// allocates less than 20 MiB.
func TestUploadStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("uploads 100 MB")
	}
	e := setupRich(t)
	const size = 100 << 20
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		mw.WriteField("kind", "document")
		mw.WriteField("type", "application/pdf")
		part, err := mw.CreateFormFile("file", "big.pdf")
		if err != nil {
			pw.CloseWithError(err)
			return
		}
		chunk := make([]byte, 64<<10)
		copy(chunk, "%PDF-1.7\n")
		for left := size; left > 0; left -= len(chunk) {
			if _, err := part.Write(chunk[:min(left, len(chunk))]); err != nil {
				return
			}
			chunk[0] = 'x' // only the first chunk starts as a PDF
		}
		pw.CloseWithError(mw.Close())
	}()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r := e.upload(t, mw.FormDataContentType(), pr)
	runtime.ReadMemStats(&after)
	expect(t, r, 201, "", "")
	if got := r.object(t)["size"]; got != float64(size) {
		t.Errorf("size %v, want %d", got, size)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("a %d MiB upload allocated %d KiB", size>>20, alloc>>10)
	if alloc > 20<<20 {
		t.Errorf("the upload allocated %d MiB, want under 20 MiB", alloc>>20)
	}
}

// TestTemplateExampleMedia: a template component's example_media goes to
// the library and back.
func TestTemplateExampleMedia(t *testing.T) {
	e := setupRich(t)
	up := e.upload(t, "", bytes.NewReader(uploadBody(t, map[string]string{"purpose": "template_sample", "type": "image/jpeg"}, "s.jpg", jpegBytes(300))))
	expect(t, up, 201, "", "")
	id := up.object(t)["id"].(string)
	r := e.call(t, "POST", "/v1/templates", "A", `{"name":"sale_banner","category":"MARKETING","language":"en","components":[{"type":"HEADER","format":"IMAGE","example_media":"`+id+`"},{"type":"BODY","text":"Big sale"}]}`)
	expect(t, r, 201, "", "")
	tid := r.object(t)["id"].(string)
	g := e.call(t, "GET", "/v1/templates/"+tid, "A", nil)
	if !strings.Contains(string(g.body), `"example_media":"`+id+`"`) {
		t.Errorf("GET does not show example_media %s: %s", id, g.body)
	}
	tp, err := e.svc.Workspace(e.A.ID).Templates.Get(context.Background(), tid)
	if err != nil || tp.Components[0].ExampleMedia != id {
		t.Errorf("stored %+v, %v", tp, err)
	}
	expect(t, e.call(t, "POST", "/v1/templates", "A", `{"name":"sale_banner2","category":"MARKETING","language":"en","components":[{"type":"HEADER","format":"IMAGE","example_media":"`+e.image+`"},{"type":"BODY","text":"Big sale"}]}`), 400, "validation_error", "components[0].example_media")
}

// preamble reads short lines ("preamble\r\n") forever: multipart framing
// before the first part, which the parts never see.
type preamble struct{ n int }

func (p *preamble) Read(b []byte) (int, error) {
	const line = "preamble\r\n"
	for i := range b {
		b[i] = line[p.n%len(line)]
		p.n++
	}
	return len(b), nil
}

// TestUploadBodyBound: a body past the largest file and 1 MiB is 413,
// even when its bytes are multipart framing the parts never see.
func TestUploadBodyBound(t *testing.T) {
	e := setupRich(t)
	body := io.MultiReader(io.LimitReader(&preamble{}, 102<<20), strings.NewReader("\r\n"+rawMultipart("type", "image/jpeg", "file", string(jpegBytes(600)))))
	stored := e.store.media.Load()
	r := e.upload(t, "", body)
	expect(t, r, 413, "payload_too_large", "")
	if e.store.media.Load() != stored {
		t.Errorf("stored an upload")
	}
}
