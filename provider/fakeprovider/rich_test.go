package fakeprovider_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/internal/testclock"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/provider/providertest"
	"github.com/ujumbe/messaging/record"
)

const (
	phone = "+254712345678"
	psid  = "6543210987654321"
	igsid = "17841400000000001"
)

// upload uploads body as kind/mime through the fake in workspace ws_1 on
// WhatsApp and returns the media id (or, sample set, the handle).
func upload(t *testing.T, p *fakeprovider.Provider, sample bool, kind, mime, body string) string {
	t.Helper()
	u := &messaging.MediaUpload{Kind: kind, MimeType: mime, Size: int64(len(body)), Body: strings.NewReader(body)}
	s := &messaging.ChannelSender{WorkspaceID: "ws_1", Channel: messaging.ChannelWhatsApp}
	var r *messaging.MediaUploadReceipt
	var err error
	if sample {
		r, err = p.UploadTemplateSample(t.Context(), s, u)
	} else {
		r, err = p.UploadMedia(t.Context(), s, u)
	}
	if err != nil {
		t.Fatalf("upload %s %s: %v", kind, mime, err)
	}
	return r.ProviderMediaID
}

func rich(channel, to, typ string, o *record.OutboundContent) *messaging.Message {
	return &messaging.Message{ID: "msg_r", WorkspaceID: "ws_1", Channel: channel, To: to, Type: typ, Outbound: o}
}

func byID(typ, id string) *messaging.Message {
	return rich(messaging.ChannelWhatsApp, phone, typ, &record.OutboundContent{Media: &record.MediaRef{ID: "med_1", ProviderMediaID: id}})
}

func buttons() *record.Interactive {
	return &record.Interactive{Type: record.InteractiveTypeButton, Body: "Arrived?", Buttons: []record.InteractiveButton{{ID: "y", Title: "Yes"}}}
}

// TestRichSendsAccepted: media, stickers and interactive headers by an
// uploaded id, reactions and quotes of messages the fake sent or received
// are accepted and recorded as sent, and the magic numbers still fail
// later or hang for every type.
func TestRichSendsAccepted(t *testing.T) {
	t.Parallel()
	c := testclock.New(t0)
	s := &inboundSink{}
	p := fakeprovider.NewWithOptions(&fakeprovider.Options{Clock: c.Now, Sink: s, IDPrefix: "wamid.r."})
	jpeg := upload(t, p, false, "image", "image/jpeg", "\xff\xd8\xffjpeg")
	webp := upload(t, p, false, "sticker", "image/webp", "RIFF....WEBP")
	pdf := upload(t, p, false, "document", "application/pdf", "%PDF-1.4")
	if jpeg != "fake-media-1" || webp != "fake-media-2" {
		t.Errorf("media ids %q, %q; want fake-media-1, fake-media-2", jpeg, webp)
	}
	first := send(t, p, text(phone, "hello"))
	if _, err := p.Receive(t.Context(), &messaging.InboundMessage{WorkspaceID: "ws_1", From: phone, Text: "hi"}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Receive(t.Context(), &messaging.InboundMessage{WorkspaceID: "ws_1", Channel: "instagram", From: igsid, Text: "hey", ProviderMessageID: "aWdf.given"}); err != nil {
		t.Fatal(err)
	}

	header := buttons()
	header.Header = &record.InteractiveHeader{Type: "document", Media: &record.MediaRef{ID: "med_3", ProviderMediaID: pdf}, Filename: "a.pdf"}
	msgs := []*messaging.Message{
		byID("image", jpeg),
		byID("sticker", webp),
		byID("document", jpeg), // any file is a document
		rich("whatsapp", phone, "interactive", &record.OutboundContent{Interactive: header}),
		rich("whatsapp", phone, "reaction", &record.OutboundContent{Reaction: &record.Reaction{ProviderMessageID: first, Emoji: "👍"}}),
		rich("whatsapp", phone, "reaction", &record.OutboundContent{Reaction: &record.Reaction{ProviderMessageID: "wamid.r.in.000001"}}),
		rich("instagram", igsid, "reaction", &record.OutboundContent{Reaction: &record.Reaction{ProviderMessageID: "aWdf.given", Emoji: "\u2764\ufe0f"}}),
		{ID: "msg_q", WorkspaceID: "ws_1", Channel: "whatsapp", To: phone, Type: "text", Text: "quoting",
			Outbound: &record.OutboundContent{Context: &record.ReplyContext{ProviderMessageID: first}}},
		rich("whatsapp", "+254712340000", "location", &record.OutboundContent{Location: &record.Location{Latitude: 1, Longitude: 2}}),
	}
	if in, given := s.got[0].ProviderMessageID, s.got[1].ProviderMessageID; in != "wamid.r.in.000001" || given != "aWdf.given" {
		t.Fatalf("received ids %q, %q", in, given)
	}
	for i, m := range msgs {
		if _, err := p.Send(t.Context(), nil, m); err != nil {
			t.Errorf("send %d (%s): %v", i, m.Type, err)
		}
	}
	sent := p.Sent()
	if len(sent) != 1+len(msgs) {
		t.Fatalf("Sent() holds %d, want %d", len(sent), 1+len(msgs))
	}
	if got := sent[2].Outbound.Media.ProviderMediaID; got != webp {
		t.Errorf("Sent()[2] media id %q, want %q", got, webp)
	}
	if got := sent[4].Outbound.Interactive.Header.Media.ProviderMediaID; got != pdf {
		t.Errorf("Sent()[4] header media %q, want %q", got, pdf)
	}
	// The location to the undeliverable number fails later.
	var failed []string
	for _, r := range p.Pending() {
		if r.Status.Status == messaging.StatusFailed {
			failed = append(failed, r.Status.ProviderMessageID)
		}
	}
	if d := cmp.Diff([]string{"wamid.r.000010"}, failed); d != "" {
		t.Errorf("failed reports (-want +got):\n%s", d)
	}
	// An interactive message to the hanging number hangs.
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if _, err := p.Send(ctx, nil, rich("whatsapp", "+254712340408", "interactive", &record.OutboundContent{Interactive: buttons()})); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("interactive to a number ending in 0408: %v, want the context's deadline", err)
	}
}

// TestRichRefusals: each payload Meta refuses is a permanent SendError
// with Meta's code, and is not recorded.
func TestRichRefusals(t *testing.T) {
	t.Parallel()
	c := testclock.New(t0)
	p := fakeprovider.NewWithOptions(&fakeprovider.Options{Clock: c.Now, IDPrefix: "wamid.x.", Sink: &inboundSink{}})
	old := upload(t, p, false, "image", "image/jpeg", "\xff\xd8\xffold")
	c.Advance(fakeprovider.MediaLifetime - time.Second)
	jpeg := upload(t, p, false, "image", "image/jpeg", "\xff\xd8\xffjpeg")
	video := upload(t, p, false, "video", "video/mp4", "....ftypmp42")
	handle := upload(t, p, true, "image", "image/png", "\x89PNG")
	other, err := p.UploadMedia(t.Context(), &messaging.ChannelSender{WorkspaceID: "ws_2", Channel: "whatsapp"},
		&messaging.MediaUpload{Kind: "image", MimeType: "image/jpeg", Size: 4, Body: strings.NewReader("\xff\xd8\xff.")})
	if err != nil {
		t.Fatal(err)
	}
	sent := send(t, p, text(phone, "hello"))
	if _, err := p.Receive(t.Context(), &messaging.InboundMessage{WorkspaceID: "ws_1", From: phone, Text: "hi"}); err != nil {
		t.Fatal(err)
	}
	c.Advance(time.Second) // old expires now; the others live on
	if _, err := p.Send(t.Context(), nil, byID("image", jpeg)); err != nil {
		t.Fatalf("a live upload: %v", err)
	}
	n := len(p.Sent())

	headerBtn := buttons()
	headerBtn.Header = &record.InteractiveHeader{Type: "text", Text: "Hi"}
	footerBtn := buttons()
	footerBtn.Footer = "bye"
	list := &record.Interactive{Type: "list", Body: "Pick", List: &record.InteractiveList{Button: "Open",
		Sections: []record.ListSection{{Rows: []record.ListRow{{ID: "a", Title: "A"}}}}}}
	videoHeader := buttons()
	videoHeader.Header = &record.InteractiveHeader{Type: "image", Media: &record.MediaRef{ProviderMediaID: video}}
	long := buttons()
	long.Body = strings.Repeat("a", 1001)
	react := func(channel, to, id, emoji string) *messaging.Message {
		return rich(channel, to, "reaction", &record.OutboundContent{Reaction: &record.Reaction{ProviderMessageID: id, Emoji: emoji}})
	}
	quote := func(channel, to, id string) *messaging.Message {
		m := rich(channel, to, "text", &record.OutboundContent{Context: &record.ReplyContext{ProviderMessageID: id}})
		m.Text = "re"
		return m
	}
	both := byID("image", jpeg)
	both.MediaURL = "https://example.com/a.jpg"
	loc := &record.OutboundContent{Location: &record.Location{Latitude: 1, Longitude: 2}}
	for _, tc := range []struct {
		label, code string
		m           *messaging.Message
		text        string // when set, in the error's text
	}{
		{"location on messenger", "100", rich("messenger", psid, "location", loc), ""},
		{"contacts on instagram", "100", rich("instagram", igsid, "contacts", &record.OutboundContent{Contacts: []record.SharedContact{{FormattedName: "A"}}}), ""},
		{"sticker on instagram", "100", &messaging.Message{WorkspaceID: "ws_1", Channel: "instagram", To: igsid, Type: "sticker", MediaURL: "https://example.com/s.webp"}, ""},
		{"list on messenger", "100", rich("messenger", psid, "interactive", &record.OutboundContent{Interactive: list}), ""},
		{"header on messenger", "100", rich("messenger", psid, "interactive", &record.OutboundContent{Interactive: headerBtn}), ""},
		{"footer on instagram", "100", rich("instagram", igsid, "interactive", &record.OutboundContent{Interactive: footerBtn}), ""},
		{"instagram body past 1000", "131009", rich("instagram", igsid, "interactive", &record.OutboundContent{Interactive: long}), ""},
		{"instagram reaction other than love", "100", react("instagram", igsid, sent, "👍"), ""},
		{"quote on instagram", "100", quote("instagram", igsid, sent), ""},
		{"location member on a text", "100", func() *messaging.Message { m := rich("whatsapp", phone, "text", loc); m.Text = "x"; return m }(), ""},
		{"media link and id", "100", both, "mutually exclusive"},
		{"interactive without its member", "100", rich("whatsapp", phone, "interactive", nil), ""},
		{"unknown media id", "131009", byID("image", "fake-media-99"), ""},
		{"a sample handle as media id", "131009", byID("image", handle), "was not uploaded"},
		{"another workspace's media", "131009", byID("image", other.ProviderMediaID), "was not uploaded"},
		{"expired media id", "131009", byID("image", old), "expired"},
		{"sticker of a jpeg upload", "131009", byID("sticker", jpeg), "a sticker must be image/webp"},
		{"image of a video upload", "131009", byID("image", video), ""},
		{"image header of a video upload", "131009", rich("whatsapp", phone, "interactive", &record.OutboundContent{Interactive: videoHeader}), ""},
		{"reaction to an unknown id", "131009", react("whatsapp", phone, "wamid.other.1", "👍"), ""},
		{"reaction to an id not issued yet", "131009", react("whatsapp", phone, "wamid.x.000099", "👍"), ""},
		{"reaction to an inbound id not issued yet", "131009", react("whatsapp", phone, "wamid.x.in.000002", "👍"), ""},
		{"quote of an unknown id", "131009", quote("whatsapp", phone, "wamid.other.2"), ""},
	} {
		_, err := p.Send(t.Context(), nil, tc.m)
		var se *messaging.SendError
		if !errors.As(err, &se) || se.Code != tc.code || se.Retryable || !strings.Contains(se.Text, tc.text) {
			t.Errorf("%s: err = %v, want permanent %s %s", tc.label, err, tc.code, tc.text)
		}
	}
	if got := len(p.Sent()); got != n {
		t.Errorf("refused sends were recorded: %d, want %d", got, n)
	}
}

// TestUploadMedia: an upload is streamed and remembered with its size,
// SHA-256, kind and expiry; a body error keeps nothing; a kind or MIME
// type Meta does not take, an empty file and a short one are refused.
func TestUploadMedia(t *testing.T) {
	t.Parallel()
	c := testclock.New(t0)
	p := fakeprovider.NewWithOptions(&fakeprovider.Options{Clock: c.Now, MediaIDPrefix: "m-"})
	body := strings.Repeat("\xff\xd8\xff photo ", 10000)
	s := &messaging.ChannelSender{WorkspaceID: "ws_1", Channel: "whatsapp"}
	r, err := p.UploadMedia(t.Context(), s, &messaging.MediaUpload{Kind: "image", MimeType: "image/jpeg", Filename: "p.jpg", Size: -1, Body: strings.NewReader(body)})
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(body))
	want := []fakeprovider.Upload{{ID: "m-1", Purpose: "message", WorkspaceID: "ws_1", Channel: "whatsapp", Kind: "image", MimeType: "image/jpeg",
		Filename: "p.jpg", Size: int64(len(body)), SHA256: hex.EncodeToString(sum[:]), CreatedAt: t0, ExpiresAt: t0.Add(30 * 24 * time.Hour)}}
	if r.ProviderMediaID != "m-1" || !r.ExpiresAt.Equal(want[0].ExpiresAt) {
		t.Errorf("receipt %+v, want m-1 expiring %v", r, want[0].ExpiresAt)
	}
	if d := cmp.Diff(want, p.Uploads()); d != "" {
		t.Errorf("Uploads (-want +got):\n%s", d)
	}

	cut := errors.New("cut off")
	failing := &providertest.JPEGReader{Left: 1 << 20, FailAfter: 1000, Err: cut}
	if _, err := p.UploadMedia(t.Context(), s, &messaging.MediaUpload{Kind: "image", MimeType: "image/jpeg", Size: 1 << 20, Body: failing}); !errors.Is(err, cut) {
		t.Errorf("a failing body: %v, want %v", err, cut)
	}
	for _, tc := range []struct {
		label string
		u     *messaging.MediaUpload
	}{
		{"unknown kind", &messaging.MediaUpload{Kind: "gif", MimeType: "image/gif", Size: 3, Body: strings.NewReader("GIF")}},
		{"gif image", &messaging.MediaUpload{Kind: "image", MimeType: "image/gif", Size: 3, Body: strings.NewReader("GIF")}},
		{"png sticker", &messaging.MediaUpload{Kind: "sticker", MimeType: "image/png", Size: 3, Body: strings.NewReader("PNG")}},
		{"empty", &messaging.MediaUpload{Kind: "image", MimeType: "image/png", Size: -1, Body: strings.NewReader("")}},
		{"shorter than its size", &messaging.MediaUpload{Kind: "image", MimeType: "image/png", Size: 10, Body: strings.NewReader("PNG")}},
		{"no body", &messaging.MediaUpload{Kind: "image", MimeType: "image/png", Size: 10}},
	} {
		_, err := p.UploadMedia(t.Context(), s, tc.u)
		var se *messaging.SendError
		if !errors.As(err, &se) || se.Code != "100" || se.Retryable {
			t.Errorf("%s: err = %v, want permanent 100", tc.label, err)
		}
	}
	if _, err := p.UploadTemplateSample(t.Context(), s, &messaging.MediaUpload{Kind: "audio", MimeType: "audio/ogg", Size: 3, Body: strings.NewReader("Ogg")}); err == nil {
		t.Error("an audio template sample was accepted")
	}
	if got := len(p.Uploads()); got != 1 {
		t.Errorf("refused uploads were kept: %d uploads, want 1", got)
	}
	if _, err := p.Send(t.Context(), nil, byID("image", "m-2")); err == nil {
		t.Error("a send by the id an aborted upload would have had was accepted")
	}

	// FetchMedia serves the upload's size and type until it expires.
	m, err := p.FetchMedia(t.Context(), nil, "m-1", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(m.Body)
	if m.ContentType != "image/jpeg" || m.Size != int64(len(body)) || len(got) != len(body) || !bytes.HasPrefix(got, fakeprovider.MediaBytes("m-1")) {
		t.Errorf("FetchMedia = %+v with %d bytes, want image/jpeg of %d bytes", m, len(got), len(body))
	}
	if _, err := p.FetchMedia(t.Context(), nil, "m-1", 10); !errors.Is(err, messaging.ErrMediaTooLarge) {
		t.Errorf("FetchMedia past maxBytes: %v", err)
	}
	c.Advance(30 * 24 * time.Hour)
	if _, err := p.FetchMedia(t.Context(), nil, "m-1", 1<<20); err == nil {
		t.Error("FetchMedia of an expired upload succeeded")
	}
}

// TestMediaUploaderConformance runs the contract with a 100 MB upload that
// must not allocate its size (not parallel: it measures allocations).
func TestMediaUploaderConformance(t *testing.T) {
	providertest.RunMediaUploader(t, func(t *testing.T) (messaging.Provider, *messaging.ChannelSender) {
		return fakeprovider.New(), nil
	}, providertest.UploaderOptions{Size: 100 << 20, MaxAlloc: 8 << 20})
}

func TestReadMarkerConformance(t *testing.T) {
	t.Parallel()
	providertest.RunReadMarker(t, func(t *testing.T) (messaging.Provider, *messaging.ChannelSender, *messaging.Message) {
		p := fakeprovider.New()
		p.SetSink(&inboundSink{})
		m, err := p.Receive(t.Context(), &messaging.InboundMessage{WorkspaceID: "ws_1", From: phone, Text: "hi"})
		if err != nil {
			t.Fatal(err)
		}
		m.ProviderMessageID = "wamid.fake.in.000001"
		return p, nil, m
	})
}

// TestMarkRead: only received messages are marked read, each call is
// recorded, and marking again is not an error.
func TestMarkRead(t *testing.T) {
	t.Parallel()
	c := testclock.New(t0)
	p := fakeprovider.NewWithOptions(&fakeprovider.Options{Clock: c.Now, Sink: &inboundSink{}})
	out := send(t, p, text(phone, "hello"))
	if _, err := p.Receive(t.Context(), &messaging.InboundMessage{WorkspaceID: "ws_1", From: phone, Text: "hi"}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Receive(t.Context(), &messaging.InboundMessage{WorkspaceID: "ws_1", Channel: "messenger", From: psid, Text: "yo", ProviderMessageID: "m_given"}); err != nil {
		t.Fatal(err)
	}
	mark := func(id string, typing bool) error {
		return p.MarkRead(t.Context(), nil, &messaging.Message{WorkspaceID: "ws_1", Channel: "whatsapp", ProviderMessageID: id}, typing)
	}
	for _, id := range []string{"wamid.fake.in.000002", out, "m_other", ""} {
		var se *messaging.SendError
		if err := mark(id, false); !errors.As(err, &se) || se.Retryable {
			t.Errorf("MarkRead(%q) = %v, want a permanent SendError", id, err)
		}
	}
	if err := mark("wamid.fake.in.000001", false); err != nil {
		t.Fatal(err)
	}
	c.Advance(time.Minute)
	if err := mark("wamid.fake.in.000001", true); err != nil {
		t.Errorf("marking again: %v", err)
	}
	if err := mark("m_given", false); err != nil {
		t.Errorf("a given inbound id: %v", err)
	}
	want := []fakeprovider.ReadMark{
		{ProviderMessageID: "wamid.fake.in.000001", WorkspaceID: "ws_1", Channel: "whatsapp", At: t0},
		{ProviderMessageID: "wamid.fake.in.000001", WorkspaceID: "ws_1", Channel: "whatsapp", Typing: true, At: t0.Add(time.Minute)},
		{ProviderMessageID: "m_given", WorkspaceID: "ws_1", Channel: "whatsapp", At: t0.Add(time.Minute)},
	}
	if d := cmp.Diff(want, p.ReadMarks()); d != "" {
		t.Errorf("ReadMarks (-want +got):\n%s", d)
	}
}

// TestTemplateSampleHandles: a media header needs the live handle of a
// sample of its kind that the fake gave; the refusal is a permanent 100,
// which the service records as the template's rejection.
func TestTemplateSampleHandles(t *testing.T) {
	t.Parallel()
	c := testclock.New(t0)
	p := fakeprovider.NewWithOptions(&fakeprovider.Options{Clock: c.Now})
	png := upload(t, p, true, "image", "image/png", "\x89PNG")
	pdf := upload(t, p, true, "document", "application/pdf", "%PDF")
	media := upload(t, p, false, "image", "image/jpeg", "\xff\xd8\xff")
	if png != "fake-handle-1" {
		t.Errorf("handle %q, want fake-handle-1", png)
	}
	tpl := func(format, handle string) *messaging.Template {
		return &messaging.Template{WorkspaceID: "ws_1", Name: "promo", Language: "en", Category: record.CategoryMarketing,
			Components: []messaging.TemplateComponent{{Type: "HEADER", Format: format, ExampleHandle: handle}, {Type: "BODY", Text: "Hi"}}}
	}
	for _, tc := range []struct {
		label string
		t     *messaging.Template
		text  string
	}{
		{"no handle", tpl("IMAGE", ""), "Invalid parameter: header_handle is required for a media header"},
		{"no handle for a video", tpl("VIDEO", ""), "Invalid parameter: header_handle is required"},
		{"unknown handle", tpl("IMAGE", "fake-handle-9"), "Invalid parameter: header_handle"},
		{"a media id", tpl("IMAGE", media), "Invalid parameter: header_handle"},
		{"a document sample for an image", tpl("IMAGE", pdf), "Invalid parameter: header_handle"},
	} {
		_, err := p.SubmitTemplate(t.Context(), nil, tc.t)
		var se *messaging.SendError
		if !errors.As(err, &se) || se.Code != "100" || se.Retryable || !strings.HasPrefix(se.Text, tc.text) {
			t.Errorf("%s: err = %v, want permanent 100 %q", tc.label, err, tc.text)
		}
	}
	for _, ok := range []*messaging.Template{tpl("IMAGE", png), tpl("DOCUMENT", pdf), tpl("TEXT", ""), tpl("", "")} {
		if _, err := p.SubmitTemplate(t.Context(), nil, ok); err != nil {
			t.Errorf("%s header with handle %q: %v", ok.Components[0].Format, ok.Components[0].ExampleHandle, err)
		}
	}
	c.Advance(fakeprovider.MediaLifetime)
	if _, err := p.SubmitTemplate(t.Context(), nil, tpl("IMAGE", png)); err == nil {
		t.Error("an expired handle was accepted")
	}
}
