package metaprovider_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ujumbe/messaging/record"

	"github.com/google/go-cmp/cmp"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/httpapi"
	"github.com/ujumbe/messaging/provider/metaprovider"
	"github.com/ujumbe/messaging/provider/metaprovider/metatest"
	"github.com/ujumbe/messaging/store/memstore"
)

// e2eTo is the customer of the end-to-end test, whom the documented
// examples call +16505551234.
const e2eTo = "+254712345678"

// e2e is a Service on metaprovider and a metatest Graph API, with the
// workspace acme whose WhatsApp connection is verified by the mock, and
// its REST surface (httpapi) with an API key of acme: sends, uploads and
// read marks go through it, as a REST caller's do.
type e2e struct {
	mock *metatest.Server
	svc  *messaging.Service
	ws   *messaging.Workspace
	h    http.Handler
	key  string
}

func newE2E(t *testing.T) *e2e {
	t.Helper()
	mock := metatest.New()
	t.Cleanup(mock.Close)
	mock.AddPhoneNumber(wabaID, phoneID, "+1 555-010-0100", connTok)
	p, err := metaprovider.New(&metaprovider.Options{BaseURL: mock.URL(), HTTPClient: mock.Client(), AppID: appID})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := messaging.New(memstore.New(), p, &messaging.Options{Clock: func() time.Time { return now }, SecretKey: bytes.Repeat([]byte{5}, 32)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := svc.CreateWorkspace(ctx, &messaging.CreateWorkspaceParams{ID: "acme", Name: "Acme", Channels: svc.Channels()}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Workspace("acme").Channels.Connect(ctx, messaging.ChannelWhatsApp, &messaging.ChannelCredentials{
		Fields: map[string]string{metaprovider.FieldPhoneNumberID: phoneID, metaprovider.FieldWABAID: wabaID}, AccessToken: connTok}); err != nil {
		t.Fatal(err)
	}
	_, key, err := svc.Workspace("acme").APIKeys.Create(ctx, &messaging.KeyCreateParams{
		Scopes: []string{record.ScopeReadMessages, record.ScopeWriteMessages}})
	if err != nil {
		t.Fatal(err)
	}
	return &e2e{mock: mock, svc: svc, ws: svc.Workspace("acme"), h: httpapi.New(svc, nil), key: key}
}

// do makes a request of the REST surface with acme's key and decodes a
// 2xx answer into out; another status fails the test.
func (e *e2e) do(t *testing.T, method, path, contentType string, body io.Reader, out any) {
	t.Helper()
	req := httptest.NewRequest(method, path, body)
	req.Header.Set("X-API-Key", e.key)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	if rec.Code/100 != 2 {
		t.Fatalf("%s %s: %d %s", method, path, rec.Code, rec.Body)
	}
	if err := json.Unmarshal(rec.Body.Bytes(), out); err != nil {
		t.Fatalf("%s %s: %v in %s", method, path, err, rec.Body)
	}
}

// restSend is the body of POST /v1/messages that asks for the send p.
func restSend(p *messaging.SendParams) map[string]any {
	b := map[string]any{"channel": p.Channel, "to": p.To, "type": p.Type}
	for k, v := range map[string]string{"text": p.Text, "media_url": p.MediaURL, "media_id": p.MediaID, "caption": p.Caption, "filename": p.Filename} {
		if v != "" {
			b[k] = v
		}
	}
	if p.ReplyTo != "" {
		b["context"] = map[string]any{"message_id": p.ReplyTo}
	}
	if p.Reaction != nil {
		b["reaction"] = map[string]any{"message_id": p.Reaction.MessageID, "emoji": p.Reaction.Emoji}
	}
	if p.Location != nil {
		b["location"] = p.Location
	}
	if p.Contacts != nil {
		b["contacts"] = p.Contacts
	}
	if in := p.Interactive; in != nil {
		raw, _ := json.Marshal(in)
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		if h, ok := m["header"].(map[string]any); ok && in.Header.Media != nil {
			delete(h, "media")
			h["media_id"] = in.Header.Media.ID
		}
		b["interactive"] = m
	}
	return b
}

// receive records an inbound text of the customer with the provider id
// wamid.
func (e *e2e) receive(t *testing.T, wamid string) *messaging.Message {
	t.Helper()
	m, err := e.svc.RecordInbound(t.Context(), &messaging.InboundMessage{WorkspaceID: "acme", Channel: messaging.ChannelWhatsApp,
		From: e2eTo[1:], ProviderMessageID: wamid, Type: record.TypeText, Text: "Thanks!"})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// upload uploads b with POST /v1/media and checks that the
// mock received exactly those bytes, as the purpose asks (the media
// endpoint for messages, the Resumable Upload API for a template sample).
func (e *e2e) upload(t *testing.T, purpose, kind, mime, name string, b []byte) *messaging.UploadedMedia {
	t.Helper()
	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	for k, v := range map[string]string{"purpose": purpose, "kind": kind} {
		if v != "" {
			_ = mw.WriteField(k, v)
		}
	}
	hdr := textproto.MIMEHeader{}
	hdr.Set("Content-Disposition", `form-data; name="file"; filename="`+name+`"`)
	hdr.Set("Content-Type", mime)
	part, _ := mw.CreatePart(hdr)
	_, _ = part.Write(b)
	_ = mw.Close()
	var answer struct {
		ID string `json:"id"`
	}
	e.do(t, http.MethodPost, "/v1/media", mw.FormDataContentType(), &form, &answer)
	u, err := e.ws.MediaUploads.Get(t.Context(), answer.ID)
	if err != nil {
		t.Fatalf("Upload(%s): %v", name, err)
	}
	sum := sha256.Sum256(b)
	if purpose == record.MediaForTemplateSample {
		for _, s := range e.mock.TemplateSamples() {
			if s.Handle == u.ProviderMediaID {
				if s.AppID != appID || s.FileType != mime || s.FileName != name || s.Size != int64(len(b)) || s.SHA256 != hex.EncodeToString(sum[:]) ||
					s.Authorization != "OAuth "+connTok {
					t.Errorf("the mock received the sample %s as %+v, want its %d bytes of %s for app %s with the connection's token", name, s, len(b), mime, appID)
				}
				return u
			}
		}
		t.Fatalf("sample %s: handle %q is none the mock issued (%+v)", name, u.ProviderMediaID, e.mock.TemplateSamples())
	}
	for _, m := range e.mock.MediaUploads() {
		if m.ID == u.ProviderMediaID {
			if m.AccountID != phoneID || m.MessagingProduct != "whatsapp" || m.Type != mime || m.PartType != mime || m.Filename != name ||
				m.Size != int64(len(b)) || m.SHA256 != hex.EncodeToString(sum[:]) || m.Authorization != "Bearer "+connTok {
				t.Errorf("the mock received %s as %+v, want its %d bytes of %s on %s with the connection's token", name, m, len(b), mime, phoneID)
			}
			return u
		}
	}
	t.Fatalf("upload %s: media id %q is none the mock issued (%+v)", name, u.ProviderMediaID, e.mock.MediaUploads())
	return nil
}

// send sends p to the customer with POST /v1/messages, runs the
// dispatcher until the message is sent, and returns the payload the mock
// accepted for it.
func (e *e2e) send(t *testing.T, p *messaging.SendParams) (*messaging.Message, map[string]any) {
	t.Helper()
	ctx := t.Context()
	p.Channel, p.To = messaging.ChannelWhatsApp, e2eTo
	body, _ := json.Marshal(restSend(p))
	var res struct {
		MessageID string `json:"message_id"`
	}
	e.do(t, http.MethodPost, "/v1/messages", "application/json", bytes.NewReader(body), &res)
	var (
		m   *messaging.Message
		err error
	)
	for range 10 {
		if _, err := e.svc.DispatchDue(ctx); err != nil {
			t.Fatal(err)
		}
		if m, err = e.ws.Messages.Get(ctx, res.MessageID); err != nil {
			t.Fatal(err)
		}
		if m.Status != messaging.StatusQueued {
			break
		}
	}
	if m.Status != messaging.StatusSent {
		t.Fatalf("%s message is %s (%q), want sent", p.Type, m.Status, m.FailureReason)
	}
	for _, pl := range e.mock.Payloads() {
		if pl.ProviderMessageID == m.ProviderMessageID {
			if pl.AccountID != phoneID || !pl.WhatsApp || pl.Type != p.Type {
				t.Errorf("payload of %s: %+v, want a whatsapp %s from %s", m.ID, pl, p.Type, phoneID)
			}
			return m, pl.Body
		}
	}
	t.Fatalf("the mock accepted no payload as %q", m.ProviderMessageID)
	return nil, nil
}

// normalise replaces, in a copy of v, every string equal to a key of ids
// with its value: the ids this run made (media ids, provider message ids,
// the recipient) become the documented example's.
func normalise(v any, ids map[string]string) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, x := range v {
			out[k] = normalise(x, ids)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = normalise(x, ids)
		}
		return out
	case string:
		if r, ok := ids[v]; ok {
			return r
		}
	}
	return v
}

// documented reads Meta's documented example testdata/payloads/name.
func documented(t *testing.T, name string) any {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "payloads", name))
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return v
}

// webp is a small static WebP image (a RIFF container of a VP8 frame).
func webp() []byte {
	frame := append([]byte("VP8 "), make([]byte, 4+32)...)
	binary.LittleEndian.PutUint32(frame[4:], 32)
	b := append([]byte("RIFF\x00\x00\x00\x00WEBP"), frame...)
	binary.LittleEndian.PutUint32(b[4:], uint32(len(b)-8))
	return b
}

// TestEndToEndRichMessages sends every rich type through the library
// (Workspace.Messages.Send, the dispatcher, metaprovider) to metatest, and
// compares each payload the mock received with Meta's documented example
// of it, once the ids this run made (uploaded media, the quoted and
// reacted-to inbound messages, the recipient) are replaced by the
// example's; each media id must be the one the mock issued for the
// upload, whose bytes it received.
func TestEndToEndRichMessages(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	quoted := e.receive(t, "wamid.E2E.QUOTED")
	reacted := e.receive(t, "wamid.E2E.REACTED")
	png := append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), bytes.Repeat([]byte{7}, 300)...)
	pdf := []byte("%PDF-1.4\n%workshop dates\n")
	image := e.upload(t, "", record.MediaImage, "image/png", "workshop.png", png)
	doc := e.upload(t, "", record.MediaDocument, "application/pdf", "dates.pdf", pdf)
	sticker := e.upload(t, "", record.MediaSticker, "image/webp", "smile.webp", webp())
	if image.ProviderMediaID == doc.ProviderMediaID || doc.ProviderMediaID == sticker.ProviderMediaID {
		t.Fatalf("uploads share a media id: %s %s %s", image.ProviderMediaID, doc.ProviderMediaID, sticker.ProviderMediaID)
	}
	ids := map[string]string{
		e2eTo:                   "+16505551234",
		image.ProviderMediaID:   "2762702990552401",
		doc.ProviderMediaID:     "1013859600285441",
		sticker.ProviderMediaID: "798882015472548",
		"wamid.E2E.QUOTED":      wamid,
		"wamid.E2E.REACTED":     reactMID,
	}
	list := &messaging.InteractiveList{Button: "Shipping Options", Sections: []messaging.ListSection{
		{Title: "I want it ASAP!", Rows: []messaging.ListRow{
			{ID: "priority_express", Title: "Priority Mail Express", Description: "Next Day to 2 Days"},
			{ID: "priority_mail", Title: "Priority Mail", Description: "1-3 Days"}}},
		{Title: "I can wait a bit", Rows: []messaging.ListRow{{ID: "ground_advantage", Title: "USPS Ground Advantage"}}},
	}}
	// The service requires a phone on every card; Meta's example has a
	// second card without one, which this test gives one.
	pabloPhone := func(want any) {
		cards := want.(map[string]any)["contacts"].([]any)
		cards[1].(map[string]any)["phones"] = []any{map[string]any{"phone": "+15555555557", "type": "CELL"}}
	}
	for _, c := range []struct {
		file  string
		p     *messaging.SendParams
		patch func(want any)
	}{
		{"wa_interactive_button.json", &messaging.SendParams{Type: record.TypeInteractive, Interactive: &messaging.Interactive{
			Type: record.InteractiveTypeButton, Header: &messaging.InteractiveHeader{Type: "image", Media: &messaging.MediaRef{ID: image.ID}},
			Body: "Your workshop is at 9am tomorrow. Use the buttons to reschedule.", Footer: "Lucky Shrub",
			Buttons: []messaging.InteractiveButton{{ID: "change-button", Title: "Change"}, {ID: "cancel-button", Title: "Cancel"}}}}, nil},
		{"wa_interactive_list.json", &messaging.SendParams{Type: record.TypeInteractive, Interactive: &messaging.Interactive{
			Type: record.InteractiveTypeList, Header: &messaging.InteractiveHeader{Type: "text", Text: "Choose Shipping Option"},
			Body: "Which shipping option do you prefer?", Footer: "Lucky Shrub: Your gateway to succulents", List: list}}, nil},
		{"wa_interactive_cta_url.json", &messaging.SendParams{Type: record.TypeInteractive, Interactive: &messaging.Interactive{
			Type: record.InteractiveTypeCTAURL, Header: &messaging.InteractiveHeader{Type: "video", MediaURL: "https://www.luckyshrub.com/assets/workshop.mp4"},
			Body: "Tap the button below to see available dates.", Footer: "Dates subject to change.",
			CTA: &messaging.CTAURL{DisplayText: "See Dates", URL: "https://www.luckyshrub.com?clickID=kqDGWd24Q5TRwoEQ"}}}, nil},
		{"wa_interactive_cta_url_document.json", &messaging.SendParams{Type: record.TypeInteractive, Interactive: &messaging.Interactive{
			Type: record.InteractiveTypeCTAURL, Header: &messaging.InteractiveHeader{Type: "document", Media: &messaging.MediaRef{ID: doc.ID}, Filename: "dates.pdf"},
			Body: "Tap the button below to see available dates.",
			CTA:  &messaging.CTAURL{DisplayText: "See Dates", URL: "https://www.luckyshrub.com/dates"}}}, nil},
		{"wa_location.json", &messaging.SendParams{Type: record.TypeLocation, Location: &messaging.Location{
			Latitude: 37.44216251868683, Longitude: -122.16153582049394, Name: "Philz Coffee", Address: "101 Forest Ave, Palo Alto, CA 94301"}}, nil},
		{"wa_contacts.json", &messaging.SendParams{Type: record.TypeContacts, Contacts: []messaging.SharedContact{
			{FormattedName: "Barbara J. Johnson", FirstName: "Barbara", LastName: "Johnson", Organization: "Lucky Shrub",
				Phones: []messaging.ContactPhone{{Phone: "+15555555555", Type: "WORK", WaID: "15555555555"}, {Phone: "+15555555556", Type: "HOME"}},
				Emails: []messaging.ContactEmail{{Email: "bjohnson@luckyshrub.com", Type: "WORK"}}},
			{FormattedName: "Pablo Morales", FirstName: "Pablo", LastName: "Morales", Phones: []messaging.ContactPhone{{Phone: "+15555555557", Type: "CELL"}}},
		}}, pabloPhone},
		{"wa_reaction.json", &messaging.SendParams{Type: record.TypeReaction, Reaction: &messaging.ReactionParams{MessageID: reacted.ID, Emoji: "\U0001F600"}}, nil},
		{"wa_sticker_id.json", &messaging.SendParams{Type: record.TypeSticker, MediaID: sticker.ID}, nil},
		{"wa_text_context.json", &messaging.SendParams{Type: record.TypeText, Text: "You're welcome, Pablo!", ReplyTo: quoted.ID}, nil},
	} {
		m, body := e.send(t, c.p)
		// Every send carries our id as its correlation, which the
		// documented examples do not show.
		if body["biz_opaque_callback_data"] != m.ID {
			t.Errorf("%s: biz_opaque_callback_data = %v, want the message id %s", c.file, body["biz_opaque_callback_data"], m.ID)
		}
		delete(body, "biz_opaque_callback_data")
		want := documented(t, c.file)
		if c.patch != nil {
			c.patch(want)
		}
		if d := cmp.Diff(want, normalise(body, ids)); d != "" {
			t.Errorf("%s: the payload the mock received differs from Meta's documented example (-want +got):\n%s", c.file, d)
		}
	}
}

// TestEndToEndTemplateSampleAndMarkRead: a template with an IMAGE header
// is created with a sample uploaded with POST /v1/media (purpose
// template_sample: the Resumable Upload API with the app's id): the mock,
// which refuses a media header without a handle it issued, receives the
// handle as the header's header_handle and keeps the template. POST
// /v1/messages/{id}/read reaches the mock as Meta's read receipt, with its
// typing indicator when asked.
func TestEndToEndTemplateSampleAndMarkRead(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	ctx := t.Context()
	png := append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), bytes.Repeat([]byte{9}, 100)...)
	sample := e.upload(t, record.MediaForTemplateSample, record.MediaImage, "image/png", "promo.png", png)
	tpl, err := e.ws.Templates.Create(ctx, &messaging.TemplateCreateParams{Name: "spring_promo", Language: "en", Category: record.CategoryMarketing,
		Components: []messaging.TemplateComponent{{Type: "HEADER", Format: "IMAGE", ExampleMedia: sample.ID}, {Type: "BODY", Text: "Spring is here, {{1}}!"}}})
	if err != nil {
		t.Fatal(err)
	}
	if tpl.Status != record.TemplatePending || tpl.ProviderTemplateID == "" {
		t.Errorf("template = %s (%q), provider id %q; want pending at the provider", tpl.Status, tpl.StatusReason, tpl.ProviderTemplateID)
	}
	var handles []string
	for _, r := range e.mock.Requests() {
		if r.Method == "POST" && r.Path == "/v21.0/"+wabaID+"/message_templates" {
			raw, _ := json.Marshal(r.Body)
			var body struct {
				Components []struct {
					Type    string `json:"type"`
					Example struct {
						HeaderHandle []string `json:"header_handle"`
					} `json:"example"`
				} `json:"components"`
			}
			if err := json.Unmarshal(raw, &body); err != nil {
				t.Fatalf("template request %s: %v", raw, err)
			}
			for _, c := range body.Components {
				if c.Type == "HEADER" {
					handles = append(handles, c.Example.HeaderHandle...)
				}
			}
		}
	}
	if d := cmp.Diff([]string{sample.ProviderMediaID}, handles); d != "" {
		t.Errorf("header_handle submitted (-want +got):\n%s", d)
	}
	if got := e.mock.Templates(wabaID); len(got) != 1 || got[0].Name != "spring_promo" || got[0].ID != tpl.ProviderTemplateID {
		t.Errorf("the mock keeps %+v, want spring_promo", got)
	}

	in := e.receive(t, "wamid.E2E.READ")
	ids := map[string]string{"wamid.E2E.READ": wamid}
	for _, c := range []struct {
		typing bool
		file   string
	}{{false, "wa_read.json"}, {true, "wa_read_typing.json"}} {
		var m struct {
			ReadAt *string `json:"read_at"`
		}
		e.do(t, http.MethodPost, "/v1/messages/"+in.ID+"/read", "application/json", strings.NewReader(fmt.Sprintf(`{"typing":%v}`, c.typing)), &m)
		if m.ReadAt == nil {
			t.Errorf("MarkRead(typing %v): ReadAt not set", c.typing)
		}
		reqs := e.mock.Requests()
		last := reqs[len(reqs)-1]
		if last.Method != "POST" || last.Path != "/v21.0/"+phoneID+"/messages" || last.Authorization != "Bearer "+connTok {
			t.Fatalf("last request %s %s, want the read receipt to /%s/messages with the token", last.Method, last.Path, phoneID)
		}
		if d := cmp.Diff(documented(t, c.file), normalise(last.Body, ids)); d != "" {
			t.Errorf("%s: the read receipt differs from Meta's documented example (-want +got):\n%s", c.file, d)
		}
	}
	want := []metatest.ReadMark{{WhatsApp: true, AccountID: phoneID, MessageID: "wamid.E2E.READ"},
		{WhatsApp: true, AccountID: phoneID, MessageID: "wamid.E2E.READ", Typing: true}}
	if d := cmp.Diff(want, e.mock.ReadMarks()); d != "" {
		t.Errorf("read marks (-want +got):\n%s", d)
	}
}
