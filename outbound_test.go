package messaging_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/memstore"
)

// richProvider is the fake provider with recording media uploads, template
// samples and read marks, so the library's side of each is tested here
// whatever the simulator does.
type richProvider struct {
	*fakeprovider.Provider
	mu       sync.Mutex
	uploaded []*messaging.MediaUpload
	bytes    []int64
	reads    []string // provider ids marked read, "+typing" when asked
	readErr  error
	n        int
}

func (p *richProvider) upload(_ context.Context, _ *messaging.ChannelSender, u *messaging.MediaUpload, prefix string) (*messaging.MediaUploadReceipt, error) {
	n, err := io.Copy(io.Discard, u.Body)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.uploaded = append(p.uploaded, u)
	p.bytes = append(p.bytes, n)
	p.n++
	return &messaging.MediaUploadReceipt{ProviderMediaID: prefix + string(rune('0'+p.n))}, nil
}

func (p *richProvider) UploadMedia(ctx context.Context, s *messaging.ChannelSender, u *messaging.MediaUpload) (*messaging.MediaUploadReceipt, error) {
	return p.upload(ctx, s, u, "media-")
}

func (p *richProvider) UploadTemplateSample(ctx context.Context, s *messaging.ChannelSender, u *messaging.MediaUpload) (*messaging.MediaUploadReceipt, error) {
	return p.upload(ctx, s, u, "handle-")
}

func (p *richProvider) MarkRead(_ context.Context, _ *messaging.ChannelSender, m *messaging.Message, typing bool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.readErr != nil {
		return p.readErr
	}
	id := m.ProviderMessageID
	if typing {
		id += "+typing"
	}
	p.reads = append(p.reads, id)
	return nil
}

// richFixture is a service on memstore with richProvider, the workspaces
// "acme" (every channel) and "other" (WhatsApp), and an inbound message
// from +254712345678 on WhatsApp in acme.
type richFixture struct {
	ctx     context.Context
	svc     *messaging.Service
	clock   *fakeClock
	prov    *richProvider
	store   *countingStore
	acme    *messaging.Workspace
	other   *messaging.Workspace
	inbound *messaging.Message
}

const customer = "+254712345678"

func setupRich(t *testing.T) *richFixture {
	t.Helper()
	f := &richFixture{ctx: context.Background(), clock: newFakeClock(t0), store: &countingStore{Store: memstore.New()}}
	f.prov = &richProvider{Provider: fakeprovider.NewWithOptions(&fakeprovider.Options{Clock: f.clock.Now})}
	svc, err := messaging.New(f.store, f.prov, &messaging.Options{Clock: f.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	f.svc = svc
	for _, w := range []*messaging.CreateWorkspaceParams{{ID: "acme", Name: "Acme", Channels: svc.Channels()}, {ID: "other", Name: "Other", Channels: []string{"whatsapp"}}} {
		if _, err := svc.CreateWorkspace(f.ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	f.acme, f.other = svc.Workspace("acme"), svc.Workspace("other")
	f.prov.SetSink(svc)
	f.inbound, err = f.prov.Receive(f.ctx, &messaging.InboundMessage{WorkspaceID: "acme", From: customer, ProviderMessageID: "wamid.in.1", Text: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func jpegBytes(n int) []byte {
	b := make([]byte, n)
	copy(b, "\xff\xd8\xff\xe0\x00\x10JFIF")
	return b
}

func (f *richFixture) upload(t *testing.T, ws *messaging.Workspace, p *messaging.MediaUploadParams) *messaging.UploadedMedia {
	t.Helper()
	m, err := ws.MediaUploads.Upload(f.ctx, p)
	if err != nil {
		t.Fatalf("Upload: %v", err)
	}
	return m
}

func button(id, title string) messaging.InteractiveButton {
	return messaging.InteractiveButton{ID: id, Title: title}
}

// TestRichSendRefusals: each bad rich send is a validation error naming
// its field, and nothing is stored.
func TestRichSendRefusals(t *testing.T) {
	t.Parallel()
	f := setupRich(t)
	wa := func(p messaging.SendParams) *messaging.SendParams {
		p.Channel, p.To = "whatsapp", customer
		return &p
	}
	btns := func(in *messaging.Interactive) *messaging.SendParams {
		return wa(messaging.SendParams{Type: "interactive", Interactive: in})
	}
	rows := func(n int) []messaging.ListRow {
		var out []messaging.ListRow
		for i := range n {
			out = append(out, messaging.ListRow{ID: "r" + string(rune('a'+i)), Title: "Row"})
		}
		return out
	}
	list := func(sections ...messaging.ListSection) *messaging.SendParams {
		return btns(&messaging.Interactive{Type: "list", Body: "Pick", List: &messaging.InteractiveList{Button: "Menu", Sections: sections}})
	}
	cases := []struct {
		name  string
		p     *messaging.SendParams
		code  messaging.Code
		field string
	}{
		{"four buttons", btns(&messaging.Interactive{Type: "button", Body: "b", Buttons: []messaging.InteractiveButton{button("1", "a"), button("2", "b"), button("3", "c"), button("4", "d")}}), messaging.CodeValidation, "interactive.buttons"},
		{"no buttons", btns(&messaging.Interactive{Type: "button", Body: "b"}), messaging.CodeValidation, "interactive.buttons"},
		{"duplicate button ids", btns(&messaging.Interactive{Type: "button", Body: "b", Buttons: []messaging.InteractiveButton{button("1", "a"), button("1", "b")}}), messaging.CodeValidation, "interactive.buttons[1].id"},
		{"button title 21", btns(&messaging.Interactive{Type: "button", Body: "b", Buttons: []messaging.InteractiveButton{button("1", strings.Repeat("x", 21))}}), messaging.CodeValidation, "interactive.buttons[0].title"},
		{"body 1025", btns(&messaging.Interactive{Type: "button", Body: strings.Repeat("x", 1025), Buttons: []messaging.InteractiveButton{button("1", "a")}}), messaging.CodeValidation, "interactive.body"},
		{"footer 61", btns(&messaging.Interactive{Type: "button", Body: "b", Footer: strings.Repeat("x", 61), Buttons: []messaging.InteractiveButton{button("1", "a")}}), messaging.CodeValidation, "interactive.footer"},
		{"no body", btns(&messaging.Interactive{Type: "button", Buttons: []messaging.InteractiveButton{button("1", "a")}}), messaging.CodeValidation, "interactive.body"},
		{"unknown interactive type", btns(&messaging.Interactive{Type: "carousel", Body: "b"}), messaging.CodeValidation, "interactive.type"},
		{"list with no rows", list(messaging.ListSection{Title: "A"}), messaging.CodeValidation, "interactive.list.sections[0].rows"},
		{"list with no sections", list(), messaging.CodeValidation, "interactive.list.sections"},
		{"eleven rows", list(messaging.ListSection{Title: "A", Rows: rows(6)}, messaging.ListSection{Title: "B", Rows: rows(5)[:5]}), messaging.CodeValidation, "interactive.list.sections[1].rows[0].id"},
		{"eleven rows in one section", list(messaging.ListSection{Rows: rows(11)}), messaging.CodeValidation, "interactive.list.sections[0].rows[10]"},
		{"duplicate row ids", list(messaging.ListSection{Rows: []messaging.ListRow{{ID: "x", Title: "a"}, {ID: "x", Title: "b"}}}), messaging.CodeValidation, "interactive.list.sections[0].rows[1].id"},
		{"row title 25", list(messaging.ListSection{Rows: []messaging.ListRow{{ID: "x", Title: strings.Repeat("t", 25)}}}), messaging.CodeValidation, "interactive.list.sections[0].rows[0].title"},
		{"row description 73", list(messaging.ListSection{Rows: []messaging.ListRow{{ID: "x", Title: "t", Description: strings.Repeat("d", 73)}}}), messaging.CodeValidation, "interactive.list.sections[0].rows[0].description"},
		{"untitled section of two", list(messaging.ListSection{Rows: rows(1)}, messaging.ListSection{Title: "B", Rows: []messaging.ListRow{{ID: "z", Title: "z"}}}), messaging.CodeValidation, "interactive.list.sections[0].title"},
		{"list button 21", btns(&messaging.Interactive{Type: "list", Body: "b", List: &messaging.InteractiveList{Button: strings.Repeat("m", 21), Sections: []messaging.ListSection{{Rows: rows(1)}}}}), messaging.CodeValidation, "interactive.list.button"},
		{"list with image header", btns(&messaging.Interactive{Type: "list", Body: "b", Header: &messaging.InteractiveHeader{Type: "image", MediaURL: "https://example.com/a.jpg"}, List: &messaging.InteractiveList{Button: "m", Sections: []messaging.ListSection{{Rows: rows(1)}}}}), messaging.CodeValidation, "interactive.header.type"},
		{"cta over http", btns(&messaging.Interactive{Type: "cta_url", Body: "b", CTA: &messaging.CTAURL{DisplayText: "Open", URL: "http://example.com"}}), messaging.CodeValidation, "interactive.cta_url.url"},
		{"cta without text", btns(&messaging.Interactive{Type: "cta_url", Body: "b", CTA: &messaging.CTAURL{URL: "https://example.com"}}), messaging.CodeValidation, "interactive.cta_url.display_text"},
		{"buttons on a list", btns(&messaging.Interactive{Type: "list", Body: "b", Buttons: []messaging.InteractiveButton{button("1", "a")}}), messaging.CodeValidation, "interactive.buttons"},
		{"header text 61", btns(&messaging.Interactive{Type: "button", Body: "b", Header: &messaging.InteractiveHeader{Type: "text", Text: strings.Repeat("h", 61)}, Buttons: []messaging.InteractiveButton{button("1", "a")}}), messaging.CodeValidation, "interactive.header.text"},
		{"header without media", btns(&messaging.Interactive{Type: "button", Body: "b", Header: &messaging.InteractiveHeader{Type: "video"}, Buttons: []messaging.InteractiveButton{button("1", "a")}}), messaging.CodeValidation, "interactive.header.media_url"},
		{"latitude 91", wa(messaging.SendParams{Type: "location", Location: &messaging.Location{Latitude: 91, Longitude: 0}}), messaging.CodeValidation, "location.latitude"},
		{"longitude -181", wa(messaging.SendParams{Type: "location", Location: &messaging.Location{Latitude: 0, Longitude: -181}}), messaging.CodeValidation, "location.longitude"},
		{"location without location", wa(messaging.SendParams{Type: "location"}), messaging.CodeValidation, "location"},
		{"empty contacts card", wa(messaging.SendParams{Type: "contacts", Contacts: []messaging.SharedContact{{}}}), messaging.CodeValidation, "contacts[0].formatted_name"},
		{"contact without phone", wa(messaging.SendParams{Type: "contacts", Contacts: []messaging.SharedContact{{FormattedName: "Ann"}}}), messaging.CodeValidation, "contacts[0].phones"},
		{"no contacts", wa(messaging.SendParams{Type: "contacts"}), messaging.CodeValidation, "contacts"},
		{"reaction without message", wa(messaging.SendParams{Type: "reaction", Reaction: &messaging.ReactionParams{Emoji: "👍"}}), messaging.CodeValidation, "reaction.message_id"},
		{"reaction with a word", wa(messaging.SendParams{Type: "reaction", Reaction: &messaging.ReactionParams{MessageID: "msg_x", Emoji: "ok"}}), messaging.CodeValidation, "reaction.emoji"},
		{"text with location", wa(messaging.SendParams{Type: "text", Text: "hi", Location: &messaging.Location{}}), messaging.CodeValidation, "location"},
		{"image with url and id", wa(messaging.SendParams{Type: "image", MediaURL: "https://example.com/a.jpg", MediaID: "med_1"}), messaging.CodeValidation, "media_id"},
		{"malformed media id", wa(messaging.SendParams{Type: "image", MediaID: "12345"}), messaging.CodeValidation, "media_id"},
		{"sticker caption", wa(messaging.SendParams{Type: "sticker", MediaURL: "https://example.com/s.webp", Caption: "c"}), messaging.CodeValidation, "caption"},
		{"list on messenger", &messaging.SendParams{Channel: "messenger", To: "psid_1", Type: "interactive", Interactive: &messaging.Interactive{Type: "list", Body: "b", List: &messaging.InteractiveList{Button: "m", Sections: []messaging.ListSection{{Rows: rows(1)}}}}}, messaging.CodeValidation, "interactive.type"},
		{"location on instagram", &messaging.SendParams{Channel: "instagram", To: "igsid_1", Type: "location", Location: &messaging.Location{}}, messaging.CodeValidation, "type"},
		{"reply on messenger", &messaging.SendParams{Channel: "messenger", To: "psid_1", Type: "text", Text: "hi", ReplyTo: "msg_1"}, messaging.CodeValidation, "context.message_id"},
		{"header on messenger", &messaging.SendParams{Channel: "messenger", To: "psid_1", Type: "interactive", Interactive: &messaging.Interactive{Type: "button", Body: "b", Header: &messaging.InteractiveHeader{Type: "text", Text: "h"}, Buttons: []messaging.InteractiveButton{button("1", "a")}}}, messaging.CodeValidation, "interactive.header"},
		{"thumbs up on instagram", &messaging.SendParams{Channel: "instagram", To: "igsid_1", Type: "reaction", Reaction: &messaging.ReactionParams{MessageID: "msg_1", Emoji: "👍"}}, messaging.CodeValidation, "reaction.emoji"},
		{"reaction quoting", wa(messaging.SendParams{Type: "reaction", Reaction: &messaging.ReactionParams{MessageID: "msg_1"}, ReplyTo: "msg_1"}), messaging.CodeValidation, "context.message_id"},
		{"unknown type", wa(messaging.SendParams{Type: "poll"}), messaging.CodeValidation, "type"},
		{"quote of another workspace", wa(messaging.SendParams{Type: "text", Text: "hi", ReplyTo: "msg_nope"}), messaging.CodeNotFound, "context.message_id"},
		{"media id unknown", wa(messaging.SendParams{Type: "image", MediaID: "med_unknown"}), messaging.CodeNotFound, "media_id"},
	}
	for _, c := range cases {
		_, err := f.acme.Messages.Send(f.ctx, c.p)
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		t.Run(c.name, func(t *testing.T) { wantError(t, err, c.code, c.field) })
	}
	if n := f.store.counts().Messages; n != 0 {
		t.Errorf("%d messages stored by refused sends", n)
	}
}

// TestRichSendStored: valid rich sends are stored with their content, the
// references resolved to the provider's ids.
func TestRichSendStored(t *testing.T) {
	t.Parallel()
	f := setupRich(t)
	img := f.upload(t, f.acme, &messaging.MediaUploadParams{MimeType: "image/jpeg", Body: strings.NewReader(string(jpegBytes(2048)))})
	sends := []*messaging.SendParams{
		{Type: "interactive", Interactive: &messaging.Interactive{Type: "button", Body: "Confirm?", Footer: "Acme",
			Header:  &messaging.InteractiveHeader{Type: "image", Media: &messaging.MediaRef{ID: img.ID}},
			Buttons: []messaging.InteractiveButton{button("yes", "Yes"), button("no", "No")}}, ReplyTo: f.inbound.ID},
		{Type: "location", Location: &messaging.Location{Latitude: -1.2921, Longitude: 36.8219, Name: "Acme", Address: "Nairobi"}},
		{Type: "contacts", Contacts: []messaging.SharedContact{{FormattedName: "Ann Wanjiru", Phones: []messaging.ContactPhone{{Phone: "+254700000001", Type: "WORK"}}}}},
		{Type: "reaction", Reaction: &messaging.ReactionParams{MessageID: f.inbound.ID, Emoji: "👍"}},
		{Type: "reaction", Reaction: &messaging.ReactionParams{MessageID: f.inbound.ID}},
		{Type: "image", MediaID: img.ID, Caption: "Your receipt"},
	}
	for i, p := range sends {
		p.Channel, p.To = "whatsapp", customer
		res, err := f.acme.Messages.Send(f.ctx, p)
		if err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
		m, err := f.acme.Messages.Get(f.ctx, res.MessageID)
		if err != nil {
			t.Fatal(err)
		}
		if m.Outbound == nil {
			t.Fatalf("send %d: stored without its content", i)
		}
		switch i {
		case 0:
			if m.Outbound.Context.ProviderMessageID != "wamid.in.1" || m.Outbound.Interactive.Header.Media.ProviderMediaID != img.ProviderMediaID {
				t.Errorf("references not resolved: %+v %+v", m.Outbound.Context, m.Outbound.Interactive.Header.Media)
			}
		case 3, 4:
			if m.Outbound.Reaction.ProviderMessageID != "wamid.in.1" || m.Outbound.Reaction.Emoji != p.Reaction.Emoji {
				t.Errorf("reaction %+v", m.Outbound.Reaction)
			}
		case 5:
			if d := cmp.Diff(&messaging.MediaRef{ID: img.ID, ProviderMediaID: img.ProviderMediaID, MimeType: "image/jpeg"}, m.Outbound.Media); d != "" {
				t.Errorf("media (-want +got):\n%s", d)
			}
		}
	}
}

// TestRichReferences: a quoted or reacted-to message must be of the same
// conversation and known to the provider; uploaded media must be of the
// workspace, for messages, of the kind sent and not expired.
func TestRichReferences(t *testing.T) {
	t.Parallel()
	f := setupRich(t)
	elsewhere := f.mustSendRich(t, f.acme, &messaging.SendParams{Channel: "whatsapp", To: "+254799999999", Type: "text", Text: "hi"})
	queued := f.mustSendRich(t, f.acme, &messaging.SendParams{Channel: "whatsapp", To: customer, Type: "text", Text: "hi"})
	otherIn, err := f.prov.Receive(f.ctx, &messaging.InboundMessage{WorkspaceID: "other", From: customer, ProviderMessageID: "wamid.other.1", Text: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	img := f.upload(t, f.acme, &messaging.MediaUploadParams{MimeType: "image/jpeg", Body: strings.NewReader(string(jpegBytes(100)))})
	png := []byte("\x89PNG\r\n\x1a\n" + strings.Repeat("\x00", 40))
	sample := f.upload(t, f.acme, &messaging.MediaUploadParams{Purpose: record.MediaForTemplateSample, MimeType: "image/png", Body: strings.NewReader(string(png))})
	theirs := f.upload(t, f.other, &messaging.MediaUploadParams{MimeType: "image/jpeg", Body: strings.NewReader(string(jpegBytes(100)))})
	wa := func(p messaging.SendParams) *messaging.SendParams { p.Channel, p.To = "whatsapp", customer; return &p }
	cases := []struct {
		name  string
		p     *messaging.SendParams
		code  messaging.Code
		field string
	}{
		{"quote of another conversation", wa(messaging.SendParams{Type: "text", Text: "re", ReplyTo: elsewhere.MessageID}), messaging.CodeNotFound, "context.message_id"},
		{"quote of another workspace", wa(messaging.SendParams{Type: "text", Text: "re", ReplyTo: otherIn.ID}), messaging.CodeNotFound, "context.message_id"},
		{"reaction to another conversation", wa(messaging.SendParams{Type: "reaction", Reaction: &messaging.ReactionParams{MessageID: elsewhere.MessageID, Emoji: "👍"}}), messaging.CodeNotFound, "reaction.message_id"},
		{"quote of an unsent message", wa(messaging.SendParams{Type: "text", Text: "re", ReplyTo: queued.MessageID}), messaging.CodeConflict, "context.message_id"},
		{"image sent as video", wa(messaging.SendParams{Type: "video", MediaID: img.ID}), messaging.CodeValidation, "media_id"},
		{"template sample sent", wa(messaging.SendParams{Type: "image", MediaID: sample.ID}), messaging.CodeValidation, "media_id"},
		{"media of another workspace", wa(messaging.SendParams{Type: "image", MediaID: theirs.ID}), messaging.CodeNotFound, "media_id"},
	}
	for _, c := range cases {
		_, err := f.acme.Messages.Send(f.ctx, c.p)
		t.Run(c.name, func(t *testing.T) { wantError(t, err, c.code, c.field) })
	}
	f.clock.Advance(30*24*time.Hour + time.Second)
	_, err = f.acme.Messages.Send(f.ctx, wa(messaging.SendParams{Type: "image", MediaID: img.ID}))
	wantError(t, err, messaging.CodeValidation, "media_id")
	_, err = f.acme.Messages.Send(f.ctx, wa(messaging.SendParams{Type: "reaction", Reaction: &messaging.ReactionParams{MessageID: f.inbound.ID, Emoji: "👍"}}))
	wantError(t, err, messaging.CodeValidation, "reaction.message_id")
}

func (f *richFixture) mustSendRich(t *testing.T, ws *messaging.Workspace, p *messaging.SendParams) *messaging.SendResult {
	t.Helper()
	res, err := ws.Messages.Send(f.ctx, p)
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	return res
}

// TestRichIdempotency: a rich send repeated under its key replays; the
// same key with another reaction emoji is a conflict.
func TestRichIdempotency(t *testing.T) {
	t.Parallel()
	f := setupRich(t)
	p := &messaging.SendParams{Channel: "whatsapp", To: customer, Type: "reaction", Reaction: &messaging.ReactionParams{MessageID: f.inbound.ID, Emoji: "👍"}, IdempotencyKey: "k1"}
	first := f.mustSendRich(t, f.acme, p)
	again := f.mustSendRich(t, f.acme, p)
	if !again.Replayed || again.MessageID != first.MessageID {
		t.Fatalf("repeat = %+v, want a replay of %s", again, first.MessageID)
	}
	p.Reaction = &messaging.ReactionParams{MessageID: f.inbound.ID, Emoji: "❤️"}
	_, err := f.acme.Messages.Send(f.ctx, p)
	wantError(t, err, messaging.CodeConflict, "idempotency_key")
}

// TestUploadChecks: an upload is checked before the provider sees a byte:
// kind, MIME type, the bytes' type, the size limit; a cut-off body and an
// oversized stream are refused and nothing is recorded.
func TestUploadChecks(t *testing.T) {
	t.Parallel()
	f := setupRich(t)
	png := "\x89PNG\r\n\x1a\n" + strings.Repeat("\x00", 100)
	cases := []struct {
		name  string
		p     *messaging.MediaUploadParams
		field string
	}{
		{"6 MB jpeg", &messaging.MediaUploadParams{MimeType: "image/jpeg", Body: strings.NewReader(string(jpegBytes(6 << 20)))}, "file"},
		{"6 MB jpeg with its size", &messaging.MediaUploadParams{MimeType: "image/jpeg", Size: 6 << 20, Body: strings.NewReader(string(jpegBytes(6 << 20)))}, "file"},
		{"png declared as video", &messaging.MediaUploadParams{Kind: "video", MimeType: "image/png", Body: strings.NewReader(png)}, "kind"},
		{"png bytes declared jpeg", &messaging.MediaUploadParams{MimeType: "image/jpeg", Body: strings.NewReader(png)}, "file"},
		{"gif", &messaging.MediaUploadParams{MimeType: "image/gif", Body: strings.NewReader("GIF89a")}, "mime_type"},
		{"no mime type", &messaging.MediaUploadParams{Body: strings.NewReader(png)}, "mime_type"},
		{"no file", &messaging.MediaUploadParams{MimeType: "image/png"}, "file"},
		{"empty file", &messaging.MediaUploadParams{MimeType: "image/png", Body: strings.NewReader("")}, "file"},
		{"cut off", &messaging.MediaUploadParams{MimeType: "image/jpeg", Body: io.MultiReader(strings.NewReader(string(jpegBytes(4096))), errReader{io.ErrUnexpectedEOF})}, "file"},
		{"cut off at once", &messaging.MediaUploadParams{MimeType: "image/jpeg", Body: errReader{io.ErrUnexpectedEOF}}, "file"},
		{"big static sticker", &messaging.MediaUploadParams{MimeType: "image/webp", Body: strings.NewReader("RIFF\x00\x00\x00\x00WEBPVP8 " + strings.Repeat("\x00", 101<<10))}, "file"},
		{"sample audio", &messaging.MediaUploadParams{Purpose: record.MediaForTemplateSample, MimeType: "audio/ogg", Body: strings.NewReader("OggS")}, "kind"},
		{"bad purpose", &messaging.MediaUploadParams{Purpose: "avatar", MimeType: "image/png", Body: strings.NewReader(png)}, "purpose"},
		{"text declared pdf", &messaging.MediaUploadParams{MimeType: "application/pdf", Body: strings.NewReader("hello")}, "file"},
	}
	for _, c := range cases {
		_, err := f.acme.MediaUploads.Upload(f.ctx, c.p)
		t.Run(c.name, func(t *testing.T) { wantError(t, err, messaging.CodeValidation, c.field) })
	}
	if len(f.prov.uploaded) != 0 {
		t.Errorf("%d uploads reached the provider", len(f.prov.uploaded))
	}
	// An animated sticker takes 500 KB; a 5 MB jpeg and a document do fit.
	animated := "RIFF\x00\x00\x00\x00WEBPVP8X\x0a\x00\x00\x00\x02" + strings.Repeat("\x00", 300<<10)
	st := f.upload(t, f.acme, &messaging.MediaUploadParams{MimeType: "image/webp", Body: strings.NewReader(animated)})
	if st.Kind != "sticker" || !st.Animated || st.Size != int64(len(animated)) {
		t.Errorf("sticker upload = %+v", st)
	}
	jpg := f.upload(t, f.acme, &messaging.MediaUploadParams{MimeType: "image/jpeg; charset=binary", Filename: "a.jpg", Body: strings.NewReader(string(jpegBytes(5 << 20)))})
	if jpg.Size != 5<<20 || jpg.ExpiresAt != f.clock.Now().Add(30*24*time.Hour) || len(jpg.SHA256) != 64 || f.prov.bytes[1] != 5<<20 {
		t.Errorf("jpeg upload = %+v, provider read %v", jpg, f.prov.bytes)
	}
	got, err := f.acme.MediaUploads.Get(f.ctx, jpg.ID)
	if err != nil || got.ProviderMediaID != jpg.ProviderMediaID {
		t.Errorf("Get = %+v, %v", got, err)
	}
	if _, err := f.other.MediaUploads.Get(f.ctx, jpg.ID); messaging.ErrorCode(err) != messaging.CodeNotFound {
		t.Errorf("another workspace reads the upload: %v", err)
	}
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// TestMarkRead: an inbound message is marked read at the provider once;
// the first ReadAt stays; a typing indicator asks again; outbound
// messages are refused; a provider refusal records nothing.
func TestMarkRead(t *testing.T) {
	t.Parallel()
	f := setupRich(t)
	out := f.mustSendRich(t, f.acme, &messaging.SendParams{Channel: "whatsapp", To: customer, Type: "text", Text: "hi"})
	_, err := f.acme.Messages.MarkRead(f.ctx, out.MessageID, nil)
	wantError(t, err, messaging.CodeValidation, "id")
	_, err = f.other.Messages.MarkRead(f.ctx, f.inbound.ID, nil)
	wantError(t, err, messaging.CodeNotFound, "")

	f.prov.readErr = &messaging.SendError{Code: "131047", Text: "Re-engagement message"}
	_, err = f.acme.Messages.MarkRead(f.ctx, f.inbound.ID, nil)
	wantError(t, err, messaging.CodeValidation, "id")
	if m, _ := f.acme.Messages.Get(f.ctx, f.inbound.ID); m.ReadAt != nil {
		t.Fatal("a refused mark was recorded")
	}
	f.prov.readErr = errors.New("connection reset")
	_, err = f.acme.Messages.MarkRead(f.ctx, f.inbound.ID, nil)
	wantError(t, err, messaging.CodeServiceUnavailable, "")
	f.prov.readErr = nil

	first, err := f.acme.Messages.MarkRead(f.ctx, f.inbound.ID, nil)
	if err != nil || first.ReadAt == nil || !first.ReadAt.Equal(f.clock.Now()) {
		t.Fatalf("MarkRead = %+v, %v", first, err)
	}
	f.clock.Advance(time.Minute)
	again, err := f.acme.Messages.MarkRead(f.ctx, f.inbound.ID, nil)
	if err != nil || !again.ReadAt.Equal(*first.ReadAt) {
		t.Fatalf("again = %v, %v; want the first read time", again.ReadAt, err)
	}
	if _, err := f.acme.Messages.MarkRead(f.ctx, f.inbound.ID, &messaging.MarkReadParams{Typing: true}); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"wamid.in.1", "wamid.in.1+typing"}, f.prov.reads); d != "" {
		t.Errorf("provider calls (-want +got):\n%s", d)
	}
}

// TestTemplateSample: a media-header template is submitted with its
// sample's handle; without a sample it is refused when the provider takes
// samples; a sample of another kind or for messages is refused.
func TestTemplateSample(t *testing.T) {
	t.Parallel()
	f := setupRich(t)
	png := "\x89PNG\r\n\x1a\n" + strings.Repeat("\x00", 100)
	sample := f.upload(t, f.acme, &messaging.MediaUploadParams{Purpose: record.MediaForTemplateSample, MimeType: "image/png", Body: strings.NewReader(png)})
	forMessages := f.upload(t, f.acme, &messaging.MediaUploadParams{MimeType: "image/png", Body: strings.NewReader(png)})
	tpl := func(format, media string) *messaging.TemplateCreateParams {
		return &messaging.TemplateCreateParams{Name: "receipt_" + strings.ToLower(format), Category: "UTILITY", Language: "en",
			Components: []messaging.TemplateComponent{{Type: "HEADER", Format: format, ExampleMedia: media}, {Type: "BODY", Text: "Your receipt"}}}
	}
	for _, c := range []struct {
		name string
		p    *messaging.TemplateCreateParams
		code messaging.Code
	}{
		{"no sample", tpl("IMAGE", ""), messaging.CodeValidation},
		{"sample of another kind", tpl("VIDEO", sample.ID), messaging.CodeValidation},
		{"upload for messages", tpl("IMAGE", forMessages.ID), messaging.CodeValidation},
		{"unknown sample", tpl("IMAGE", "med_nope"), messaging.CodeNotFound},
	} {
		_, err := f.acme.Templates.Create(f.ctx, c.p)
		t.Run(c.name, func(t *testing.T) { wantError(t, err, c.code, "components[0].example_media") })
	}
	draft := tpl("IMAGE", "")
	draft.Status = record.TemplateDraft
	d, err := f.acme.Templates.Create(f.ctx, draft)
	if err != nil {
		t.Fatalf("a draft without its sample: %v", err)
	}
	_, err = f.acme.Templates.Submit(f.ctx, d.ID)
	wantError(t, err, messaging.CodeValidation, "components[0].example_media")

	var handle string
	sub := &handleSpy{richProvider: f.prov, got: &handle}
	svc, err := messaging.New(f.store.Store, sub, &messaging.Options{Clock: f.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	ok := tpl("IMAGE", sample.ID)
	ok.Name = "receipt_with_sample"
	if _, err := svc.Workspace("acme").Templates.Create(f.ctx, ok); err != nil {
		t.Fatal(err)
	}
	if handle != sample.ProviderMediaID {
		t.Errorf("submitted header handle %q, want the sample's %q", handle, sample.ProviderMediaID)
	}
}

// handleSpy records the header handle of the template it is handed.
type handleSpy struct {
	*richProvider
	got *string
}

func (h *handleSpy) SubmitTemplate(ctx context.Context, s *messaging.ChannelSender, t *messaging.Template) (*messaging.ProviderTemplate, error) {
	for _, c := range t.Components {
		if c.Type == "HEADER" {
			*h.got = c.ExampleHandle
		}
	}
	return &messaging.ProviderTemplate{ID: "tpl-1", Name: t.Name, Language: t.Language, Status: "PENDING"}, nil
}
