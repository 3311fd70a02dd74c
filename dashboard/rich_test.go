package dashboard_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/record"
)

// pngBytes are the first bytes of a PNG file, as the upload's sniffer
// reads them.
var pngBytes = []byte("\x89PNG\r\n\x1a\n" + strings.Repeat("\x00", 40))

// mp4Bytes are the first bytes of an MP4 video.
var mp4Bytes = []byte("\x00\x00\x00\x18ftypmp42" + strings.Repeat("\x00", 40))

// richMessages sends acme one outbound message of each rich type to
// +254712345678, after a text they quote and react to, and returns their
// ids by name ("text", "buttons", "list", "cta", "location", "contacts",
// "reaction", "sticker", "image", "reply"). They are dispatched, so the
// provider has them.
func (f *fixture) richMessages() map[string]string {
	f.t.Helper()
	ws := f.svc.Workspace("acme")
	ids := map[string]string{"text": f.sendText("acme", "+254712345678", "Your order A-77 is ready")}
	f.dispatch()
	upload := func(kind, mime string, body []byte) string {
		f.t.Helper()
		u, err := ws.MediaUploads.Upload(f.ctx, &messaging.MediaUploadParams{Kind: kind, MimeType: mime, Body: bytes.NewReader(body)})
		if err != nil {
			f.t.Fatal(err)
		}
		return u.ID
	}
	img := upload("image", "image/png", pngBytes)
	webp := upload("sticker", "image/webp", []byte("RIFF\x30\x00\x00\x00WEBPVP8 "+strings.Repeat("\x00", 40)))
	for name, p := range map[string]*messaging.SendParams{
		"buttons": {Type: "interactive", Interactive: &record.Interactive{Type: record.InteractiveTypeButton,
			Header: &record.InteractiveHeader{Type: "image", Media: &record.MediaRef{ID: img}}, Body: "When should we deliver A-77?", Footer: "Duka Ltd",
			Buttons: []record.InteractiveButton{{ID: "slot-am", Title: "Morning"}, {ID: "slot-pm", Title: "Afternoon"}}}},
		"list": {Type: "interactive", Interactive: &record.Interactive{Type: record.InteractiveTypeList,
			Header: &record.InteractiveHeader{Type: "text", Text: "Our sizes"}, Body: "Pick a size",
			List: &record.InteractiveList{Button: "Sizes", Sections: []record.ListSection{
				{Title: "Shirts", Rows: []record.ListRow{{ID: "s", Title: "Small", Description: "Chest 90 cm"}, {ID: "m", Title: "Medium"}}},
				{Title: "Shoes", Rows: []record.ListRow{{ID: "42", Title: "EU 42"}}}}}}},
		"cta": {Type: "interactive", Interactive: &record.Interactive{Type: record.InteractiveTypeCTAURL,
			Header: &record.InteractiveHeader{Type: "image", MediaURL: "https://cdn.example/banner.png"}, Body: "Track your parcel",
			CTA: &record.CTAURL{DisplayText: "Track", URL: "https://shop.example/track/A-77"}}},
		"location": {Type: "location", Location: &record.Location{Latitude: -1.2864, Longitude: 36.8172, Name: "Duka Ltd", Address: "Moi Avenue, Nairobi"}},
		"contacts": {Type: "contacts", Contacts: []record.SharedContact{{FormattedName: "Amina Odhiambo", Organization: "Duka Ltd",
			Phones: []record.ContactPhone{{Phone: "+254712000101", Type: "WORK"}}, Emails: []record.ContactEmail{{Email: "amina@example.com"}}}}},
		"reaction": {Type: "reaction", Reaction: &messaging.ReactionParams{MessageID: ids["text"], Emoji: "👍"}},
		"sticker":  {Type: "sticker", MediaID: webp},
		"image":    {Type: "image", MediaID: img, Caption: "Your receipt"},
		"reply":    {Type: "text", Text: "Yes, it is ready", ReplyTo: ids["text"]},
	} {
		p.Channel, p.To = "whatsapp", "+254712345678"
		res, err := ws.Messages.Send(f.ctx, p)
		if err != nil {
			f.t.Fatalf("sending %s: %v", name, err)
		}
		ids[name] = res.MessageID
	}
	f.clock.Advance(time.Second)
	f.dispatch()
	return ids
}

// seen is the part of a message page showing what the recipient sees.
func seen(t *testing.T, r response) string {
	t.Helper()
	i := strings.Index(r.body, `<section class="card seen"`)
	if r.status != http.StatusOK || i < 0 {
		t.Fatalf("the page (status %d) has no \"As the recipient sees it\" section:\n%s", r.status, r.body)
	}
	rest := r.body[i:]
	end := strings.Index(rest, `id="timeline-head"`)
	if end < 0 {
		t.Fatal("no timeline after the section")
	}
	return rest[:end]
}

// TestOutboundRichRendering: the page of each rich outbound message shows
// its parts as the recipient sees them.
func TestOutboundRichRendering(t *testing.T) {
	f := setup(t)
	ids := f.richMessages()
	link := func(name string) string {
		return `<a href="/dashboard/w/acme/messages/` + ids[name] + `"><code>` + ids[name] + `</code></a>`
	}
	img, _ := f.svc.Workspace("acme").Messages.Get(f.ctx, ids["image"])
	for _, tc := range []struct {
		name  string
		parts []string
	}{
		{"buttons", []string{`aria-label="image header sent by uploaded media id ` + img.Outbound.Media.ID, `media id <code>` + img.Outbound.Media.ID + `</code> · image/png`, `<div class="b-body">When should we deliver A-77?</div>`,
			`<div class="b-footer">Duka Ltd</div>`, `<ul class="bubble-buttons" aria-label="Reply buttons">`,
			`<button type="button" class="reply-button" disabled title="Reply id slot-am">↩ Morning</button>`,
			`<button type="button" class="reply-button" disabled title="Reply id slot-pm">↩ Afternoon</button>`}},
		{"list", []string{`<h3 class="b-header">Our sizes</h3>`,
			`<div class="b-body">Pick a size</div>`, `☰ Sizes</button>`, `<h3>Shirts</h3>`, `<h3>Shoes</h3>`,
			`<li title="Row id s"><span class="row-title">Small</span><br><span class="muted">Chest 90 cm</span></li>`,
			`<li title="Row id 42"><span class="row-title">EU 42</span></li>`}},
		{"cta", []string{`<a href="https://cdn.example/banner.png" rel="noopener noreferrer">https://cdn.example/banner.png</a>`,
			`<div class="b-body">Track your parcel</div>`, `<a class="cta" href="https://shop.example/track/A-77" rel="noopener noreferrer">↗ Track</a>`}},
		{"location", []string{`<h3 class="b-header">Duka Ltd</h3>`, `<p class="b-address">Moi Avenue, Nairobi</p>`,
			`<span class="coords">-1.2864, 36.8172</span>`,
			`href="https://www.openstreetmap.org/?mlat=-1.2864&amp;mlon=36.8172#map=16/-1.2864/36.8172"`}},
		{"contacts", []string{`<ul class="b-contacts" aria-label="Contact cards">`, `<h3 class="b-header">Amina Odhiambo</h3>`,
			`<a href="tel:&#43;254712000101">&#43;254712000101</a> <span class="muted">(WORK)</span>`, `<a href="mailto:amina@example.com">amina@example.com</a>`}},
		{"reaction", []string{`aria-label="reaction 👍">👍</span> reacted to`, link("text") + `: <q>Your order A-77 is ready</q>`}},
		{"sticker", []string{`aria-label="sticker sent by uploaded media id med_`, `STICKER`, ` · image/webp`}},
		{"image", []string{`aria-label="image sent by uploaded media id ` + img.Outbound.Media.ID + `"`, `· image/png`, `<div class="b-body">Your receipt</div>`}},
		{"reply", []string{`<p class="b-quote" id="seen-quote">Reply to ` + link("text") + `: <q>Your order A-77 is ready</q></p>`,
			`<div class="b-body">Yes, it is ready</div>`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			part := seen(t, f.get("/w/acme/messages/"+ids[tc.name]))
			for _, p := range tc.parts {
				if !strings.Contains(part, p) {
					t.Errorf("the page lacks %q; the section:\n%s", p, part)
				}
			}
		})
	}
	// The log shows a line of each.
	f.get("/w/acme/messages").wantContains(t, "location: Duka Ltd", "contact card: Amina Odhiambo", "reaction 👍", "When should we deliver A-77?")
}

// postFollow posts form to path as f.as and follows the redirect with the
// cookies it set (the flash), answering the page it ends on.
func (f *fixture) postFollow(path string, form url.Values) response {
	f.t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	req, _ := http.NewRequest(http.MethodPost, f.srv.URL+"/dashboard/"+strings.TrimPrefix(path, "/"), strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", f.srv.URL)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.Header.Set("X-Viewer", f.as)
	// The redirect keeps the viewer's header (same host).
	res, err := c.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		f.t.Fatal(err)
	}
	return response{status: res.StatusCode, body: string(b), location: res.Request.URL.Path}
}

// TestMarkRead: an unread inbound message has a "Mark as read" button;
// posting it marks the message read at the provider once, goes back to
// the page with a notice, and the page then shows "Read <time>" and no
// button. Outbound messages have none; the provider's refusal is shown on
// the page.
func TestMarkRead(t *testing.T) {
	f := setup(t)
	f.prov.SetSink(f.svc)
	in, err := f.prov.Receive(f.ctx, &messaging.InboundMessage{WorkspaceID: "acme", From: "+254712345678", Text: "Is my order ready?"})
	if err != nil {
		t.Fatal(err)
	}
	page := "/w/acme/messages/" + in.ID
	form := `<form method="post" action="/dashboard/w/acme/messages/` + in.ID + `/read"`
	r := f.get(page)
	r.wantContains(t, form, `>Mark as read</button>`)
	if strings.Contains(r.body, "Read <time") {
		t.Error("an unread message shows a read time")
	}

	f.clock.Advance(time.Minute)
	r = f.postFollow(page+"/read", nil)
	if r.status != http.StatusOK || r.location != "/dashboard"+page {
		t.Fatalf("mark read ended on %d %s; want the message's page", r.status, r.location)
	}
	r.wantContains(t, `<div class="notice" role="status">Message marked read at 2026-11-24 10:31:00 UTC.</div>`,
		`Read <time datetime="2026-11-24T10:31:00.000Z">2026-11-24 10:31:00 UTC</time>`)
	if strings.Contains(r.body, "Mark as read") {
		t.Error("a read message still offers Mark as read")
	}
	if marks := f.prov.ReadMarks(); len(marks) != 1 || marks[0].ProviderMessageID != in.ProviderMessageID {
		t.Fatalf("the provider got read marks %+v; want one of %s", marks, in.ProviderMessageID)
	}
	// Posting again (a second tab) keeps the first read time and does
	// not ask the provider again.
	f.clock.Advance(time.Minute)
	if r := f.post(page+"/read", nil); r.status != http.StatusSeeOther {
		t.Errorf("a second mark answered %d; want 303", r.status)
	}
	if n := len(f.prov.ReadMarks()); n != 1 {
		t.Errorf("the provider was asked %d times; want once", n)
	}
	f.get(page).wantContains(t, "Read <time datetime=\"2026-11-24T10:31:00.000Z\">")

	out := f.sendText("acme", "+254712345678", "Yes")
	if r := f.get("/w/acme/messages/" + out); strings.Contains(r.body, "Mark as read") || strings.Contains(r.body, "Read mark") {
		t.Error("an outbound message offers a read mark")
	}
	r = f.post("/w/acme/messages/"+out+"/read", nil)
	if r.status != http.StatusUnprocessableEntity {
		t.Errorf("marking an outbound message answered %d; want 422", r.status)
	}
	r.wantContains(t, `<div class="problem" role="alert">id: message `+out+` is outbound`)

	// A message the provider never handed over: the provider refuses.
	odd, err := f.svc.RecordInbound(f.ctx, &messaging.InboundMessage{WorkspaceID: "acme", Channel: "whatsapp", From: "+254712345678",
		ProviderMessageID: "wamid.elsewhere", Type: "text", Text: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	r = f.post("/w/acme/messages/"+odd.ID+"/read", nil)
	if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, `<div class="problem" role="alert">id: the provider refused`) {
		t.Errorf("a refused mark answered %d without the library's message:\n%s", r.status, r.body)
	}
	r.wantContains(t, form[:len(`<form method="post" action="/dashboard/w/acme/messages/`)]+odd.ID+`/read"`)
	if r := f.post("/w/other/messages/"+in.ID+"/read", nil); r.status != http.StatusNotFound {
		t.Errorf("marking another workspace's message answered %d; want 404", r.status)
	}
}
