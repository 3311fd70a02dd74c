package dashboard_test

import (
	"bytes"
	"net/http"
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
