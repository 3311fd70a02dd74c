package messaging_test

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/store/memstore"
)

const (
	kenya  = "+254712345678"
	kenya2 = "+254722000111"
)

func TestNewRequiresStoreAndProvider(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		store    driver.Store
		provider messaging.Provider
	}{
		{"nil store", nil, fakeprovider.New()},
		{"nil provider", memstore.New(), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			svc, err := messaging.New(tc.store, tc.provider, nil)
			if err == nil || svc != nil {
				t.Fatalf("New = %v, %v; want nil and an error", svc, err)
			}
		})
	}
}

func TestSendBadInputs(t *testing.T) {
	t.Parallel()
	const wa, ig, fb = messaging.ChannelWhatsApp, messaging.ChannelInstagram, messaging.ChannelMessenger
	tests := []struct {
		name  string
		p     *messaging.SendParams
		code  messaging.Code
		field string
	}{
		{name: "nil params", p: nil, code: messaging.CodeValidation, field: "body"},
		{name: "missing channel", p: &messaging.SendParams{To: kenya, Type: "text", Text: "hi"}, code: messaging.CodeValidation, field: "channel"},
		{name: "unknown channel", p: &messaging.SendParams{Channel: "sms", To: kenya, Type: "text", Text: "hi"}, code: messaging.CodeValidation, field: "channel"},
		{name: "channel wrong case", p: &messaging.SendParams{Channel: "WhatsApp", To: kenya, Type: "text", Text: "hi"}, code: messaging.CodeValidation, field: "channel"},
		{name: "missing to", p: &messaging.SendParams{Channel: wa, Type: "text", Text: "hi"}, code: messaging.CodeValidation, field: "to"},
		{name: "missing type", p: &messaging.SendParams{Channel: wa, To: kenya, Text: "hi"}, code: messaging.CodeValidation, field: "type"},
		{name: "unknown type", p: &messaging.SendParams{Channel: wa, To: kenya, Type: "poll", Text: "hi"}, code: messaging.CodeValidation, field: "type"},
		{name: "type template", p: &messaging.SendParams{Channel: wa, To: kenya, Type: "template", Text: "hi"}, code: messaging.CodeValidation, field: "type"},
		{name: "text missing", p: &messaging.SendParams{Channel: wa, To: kenya, Type: "text"}, code: messaging.CodeValidation, field: "text"},
		{name: "text blank", p: &messaging.SendParams{Channel: wa, To: kenya, Type: "text", Text: " \n\t "}, code: messaging.CodeValidation, field: "text"},
		{name: "text invalid UTF-8", p: &messaging.SendParams{Channel: wa, To: kenya, Type: "text", Text: "hi \xff"}, code: messaging.CodeValidation, field: "text"},
		{name: "text with NUL", p: &messaging.SendParams{Channel: wa, To: kenya, Type: "text", Text: "hi\x00there"}, code: messaging.CodeValidation, field: "text"},
		{name: "text with media_url", p: &messaging.SendParams{Channel: wa, To: kenya, Type: "text", Text: "hi", MediaURL: "https://example.com/a.jpg"}, code: messaging.CodeValidation, field: "media_url"},
		{name: "text with caption", p: &messaging.SendParams{Channel: wa, To: kenya, Type: "text", Text: "hi", Caption: "c"}, code: messaging.CodeValidation, field: "caption"},
		{name: "image without media_url", p: &messaging.SendParams{Channel: wa, To: kenya, Type: "image"}, code: messaging.CodeValidation, field: "media_url"},
		{name: "video without media_url", p: &messaging.SendParams{Channel: wa, To: kenya, Type: "video", Caption: "c"}, code: messaging.CodeValidation, field: "media_url"},
		{name: "document without media_url", p: &messaging.SendParams{Channel: wa, To: kenya, Type: "document", Filename: "a.pdf"}, code: messaging.CodeValidation, field: "media_url"},
		{name: "audio without media_url", p: &messaging.SendParams{Channel: wa, To: kenya, Type: "audio"}, code: messaging.CodeValidation, field: "media_url"},
		{name: "ftp media_url", p: &messaging.SendParams{Channel: wa, To: kenya, Type: "image", MediaURL: "ftp://example.com/a.jpg"}, code: messaging.CodeValidation, field: "media_url"},
		{name: "relative media_url", p: &messaging.SendParams{Channel: wa, To: kenya, Type: "image", MediaURL: "example.com/a.jpg"}, code: messaging.CodeValidation, field: "media_url"},
		{name: "javascript media_url", p: &messaging.SendParams{Channel: wa, To: kenya, Type: "image", MediaURL: "javascript:alert(1)"}, code: messaging.CodeValidation, field: "media_url"},
		{name: "media_url without host", p: &messaging.SendParams{Channel: wa, To: kenya, Type: "image", MediaURL: "https:///a.jpg"}, code: messaging.CodeValidation, field: "media_url"},
		{name: "media_url too long", p: &messaging.SendParams{Channel: wa, To: kenya, Type: "image", MediaURL: "https://example.com/" + strings.Repeat("a", record.MaxURL)}, code: messaging.CodeValidation, field: "media_url"},
		{name: "image with text", p: &messaging.SendParams{Channel: wa, To: kenya, Type: "image", MediaURL: "https://example.com/a.jpg", Text: "hi"}, code: messaging.CodeValidation, field: "text"},
		{name: "caption on document", p: &messaging.SendParams{Channel: wa, To: kenya, Type: "document", MediaURL: "https://example.com/a.pdf", Caption: "c"}, code: messaging.CodeValidation, field: "caption"},
		{name: "caption on audio", p: &messaging.SendParams{Channel: wa, To: kenya, Type: "audio", MediaURL: "https://example.com/a.ogg", Caption: "c"}, code: messaging.CodeValidation, field: "caption"},
		{name: "caption too long", p: &messaging.SendParams{Channel: wa, To: kenya, Type: "image", MediaURL: "https://example.com/a.jpg", Caption: runes('é', record.MaxCaption+1)}, code: messaging.CodeValidation, field: "caption"},
		{name: "filename on image", p: &messaging.SendParams{Channel: wa, To: kenya, Type: "image", MediaURL: "https://example.com/a.jpg", Filename: "a.jpg"}, code: messaging.CodeValidation, field: "filename"},
		{name: "filename on video", p: &messaging.SendParams{Channel: wa, To: kenya, Type: "video", MediaURL: "https://example.com/a.mp4", Filename: "a.mp4"}, code: messaging.CodeValidation, field: "filename"},
		{name: "filename with path", p: &messaging.SendParams{Channel: wa, To: kenya, Type: "document", MediaURL: "https://example.com/a.pdf", Filename: "../etc/passwd"}, code: messaging.CodeValidation, field: "filename"},
		{name: "filename too long", p: &messaging.SendParams{Channel: wa, To: kenya, Type: "document", MediaURL: "https://example.com/a.pdf", Filename: strings.Repeat("a", record.MaxFilename+1)}, code: messaging.CodeValidation, field: "filename"},
		{name: "whatsapp text 4097 runes", p: &messaging.SendParams{Channel: wa, To: kenya, Type: "text", Text: runes('é', 4097)}, code: messaging.CodeValidation, field: "text"},
		{name: "messenger text 2001 runes", p: &messaging.SendParams{Channel: fb, To: "psid_1", Type: "text", Text: runes('é', 2001)}, code: messaging.CodeValidation, field: "text"},
		{name: "instagram text 1001 runes", p: &messaging.SendParams{Channel: ig, To: "igsid_1", Type: "text", Text: runes('é', 1001)}, code: messaging.CodeValidation, field: "text"},
		{name: "local number", p: textMsg("0712345678"), code: messaging.CodeValidation, field: "to"},
		{name: "plus one only", p: textMsg("+1"), code: messaging.CodeValidation, field: "to"},
		{name: "invalid number for country", p: textMsg("+10000000000"), code: messaging.CodeValidation, field: "to"},
		{name: "no plus on whatsapp", p: textMsg("254712345678"), code: messaging.CodeValidation, field: "to"},
		{name: "spaces in number", p: textMsg("+254 712 345 678"), code: messaging.CodeValidation, field: "to"},
		{name: "scoped id on whatsapp", p: textMsg("psid_123"), code: messaging.CodeValidation, field: "to"},
		{name: "instagram bad scoped id", p: &messaging.SendParams{Channel: ig, To: "bad id!", Type: "text", Text: "hi"}, code: messaging.CodeValidation, field: "to"},
		{name: "instagram scoped id too long", p: &messaging.SendParams{Channel: ig, To: strings.Repeat("a", 65), Type: "text", Text: "hi"}, code: messaging.CodeValidation, field: "to"},
		{name: "messenger bad phone", p: &messaging.SendParams{Channel: fb, To: "+1", Type: "text", Text: "hi"}, code: messaging.CodeValidation, field: "to"},
		{name: "idempotency_key 256 chars", p: &messaging.SendParams{Channel: wa, To: kenya, Type: "text", Text: "hi", IdempotencyKey: strings.Repeat("k", 256)}, code: messaging.CodeValidation, field: "idempotency_key"},
		{name: "idempotency_key with newline", p: &messaging.SendParams{Channel: wa, To: kenya, Type: "text", Text: "hi", IdempotencyKey: "a\nb"}, code: messaging.CodeValidation, field: "idempotency_key"},
		{name: "idempotency_key non-ASCII", p: &messaging.SendParams{Channel: wa, To: kenya, Type: "text", Text: "hi", IdempotencyKey: "clé"}, code: messaging.CodeValidation, field: "idempotency_key"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := setup(t)
			res, err := f.acme.Messages.Send(f.ctx, tc.p)
			if res != nil {
				t.Errorf("Send returned a result %+v with an error", res)
			}
			wantError(t, err, tc.code, tc.field)
			if got := f.store.counts(); got != (counts{}) {
				t.Errorf("store counts after refused send = %+v, want nothing created", got)
			}
			if n := len(f.provider.Sent()); n != 0 {
				t.Errorf("provider got %d messages, want 0", n)
			}
		})
	}
}

func TestSendTextLengthLimitsAccepted(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		channel string
		to      string
		n       int
	}{
		{"whatsapp 4096", messaging.ChannelWhatsApp, kenya, record.MaxTextWhatsApp},
		{"messenger 2000", messaging.ChannelMessenger, "psid_1", record.MaxTextMessenger},
		{"instagram 1000", messaging.ChannelInstagram, "igsid_1", record.MaxTextInstagram},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := setup(t)
			// Multi-byte runes prove the limit counts characters, not bytes.
			text := runes('é', tc.n)
			res := f.mustSend(t, f.acme, &messaging.SendParams{Channel: tc.channel, To: tc.to, Type: "text", Text: text})
			m, err := f.acme.Messages.Get(f.ctx, res.MessageID)
			if err != nil {
				t.Fatal(err)
			}
			if m.Text != text {
				t.Errorf("stored text has %d runes, want %d", len([]rune(m.Text)), tc.n)
			}
		})
	}
}

func TestSendHappyPaths(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		p    messaging.SendParams
	}{
		{"whatsapp text", messaging.SendParams{Channel: "whatsapp", To: kenya, Type: "text", Text: "Hello Jane"}},
		{"whatsapp image with caption", messaging.SendParams{Channel: "whatsapp", To: kenya, Type: "image", MediaURL: "https://cdn.example.com/p.jpg", Caption: "Your receipt"}},
		{"whatsapp image without caption", messaging.SendParams{Channel: "whatsapp", To: kenya, Type: "image", MediaURL: "http://cdn.example.com/p.jpg"}},
		{"whatsapp video", messaging.SendParams{Channel: "whatsapp", To: kenya, Type: "video", MediaURL: "https://cdn.example.com/v.mp4", Caption: "Watch"}},
		{"whatsapp document with filename", messaging.SendParams{Channel: "whatsapp", To: kenya, Type: "document", MediaURL: "https://cdn.example.com/inv.pdf", Filename: "invoice.pdf"}},
		{"whatsapp audio", messaging.SendParams{Channel: "whatsapp", To: kenya, Type: "audio", MediaURL: "https://cdn.example.com/a.ogg"}},
		{"instagram scoped id", messaging.SendParams{Channel: "instagram", To: "17841400000000001", Type: "text", Text: "Hi"}},
		{"instagram phone", messaging.SendParams{Channel: "instagram", To: kenya, Type: "image", MediaURL: "https://cdn.example.com/p.jpg"}},
		{"messenger scoped id", messaging.SendParams{Channel: "messenger", To: "psid_123-ABC", Type: "text", Text: "Hi"}},
		{"messenger document", messaging.SendParams{Channel: "messenger", To: "psid_123-ABC", Type: "document", MediaURL: "https://cdn.example.com/inv.pdf"}},
		{"idempotency key of 255 chars", messaging.SendParams{Channel: "whatsapp", To: kenya, Type: "text", Text: "Hi", IdempotencyKey: strings.Repeat("k", 255)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := setup(t)
			p := tc.p
			res := f.mustSend(t, f.acme, &p)
			if !strings.HasPrefix(res.MessageID, "msg_") {
				t.Errorf("MessageID = %q, want prefix msg_", res.MessageID)
			}
			wantRes := &messaging.SendResult{
				MessageID: res.MessageID, ConversationID: record.ConversationID("acme", p.Channel, p.To),
				Status: messaging.StatusQueued, Channel: p.Channel, To: p.To,
			}
			if d := cmp.Diff(wantRes, res); d != "" {
				t.Errorf("SendResult mismatch (-want +got):\n%s", d)
			}
			got, err := f.acme.Messages.Get(f.ctx, res.MessageID)
			if err != nil {
				t.Fatalf("Get: %v", err)
			}
			want := &msgView{
				ID: res.MessageID, WorkspaceID: "acme", ConversationID: res.ConversationID,
				Channel: p.Channel, To: p.To, Direction: record.DirectionOutbound, Status: messaging.StatusQueued,
				Type: p.Type, Text: p.Text, MediaURL: p.MediaURL, Caption: p.Caption, Filename: p.Filename,
				IdempotencyKey: p.IdempotencyKey, CreatedAt: t0, UpdatedAt: t0,
			}
			if d := cmp.Diff(want, viewOf(got)); d != "" {
				t.Errorf("Get mismatch (-want +got):\n%s", d)
			}
			if got.FailureReason != "" {
				t.Errorf("FailureReason = %q, want empty", got.FailureReason)
			}
			if c := f.store.counts(); c.Messages != 1 {
				t.Errorf("messages stored = %d, want 1", c.Messages)
			}
		})
	}
}

func TestSendGetNotFound(t *testing.T) {
	t.Parallel()
	f := setup(t)
	for _, id := range []string{"", "msg_missing", "../../etc"} {
		_, err := f.acme.Messages.Get(f.ctx, id)
		wantError(t, err, messaging.CodeNotFound, "")
	}
}

func TestConversationIDs(t *testing.T) {
	t.Parallel()
	f := setup(t)
	a1 := f.mustSend(t, f.acme, textMsg(kenya))
	a2 := f.mustSend(t, f.acme, &messaging.SendParams{Channel: "whatsapp", To: kenya, Type: "image", MediaURL: "https://example.com/a.jpg"})
	otherRecipient := f.mustSend(t, f.acme, textMsg(kenya2))
	otherChannel := f.mustSend(t, f.acme, &messaging.SendParams{Channel: "messenger", To: kenya, Type: "text", Text: "Hello"})
	otherWorkspace := f.mustSend(t, f.other, textMsg(kenya))

	if a1.MessageID == a2.MessageID {
		t.Fatalf("two sends got the same message id %s", a1.MessageID)
	}
	if a1.ConversationID != a2.ConversationID {
		t.Errorf("same recipient and channel: conversation ids %s and %s differ", a1.ConversationID, a2.ConversationID)
	}
	for name, r := range map[string]*messaging.SendResult{"recipient": otherRecipient, "channel": otherChannel, "workspace": otherWorkspace} {
		if r.ConversationID == a1.ConversationID {
			t.Errorf("another %s shares conversation id %s", name, a1.ConversationID)
		}
	}
	got, err := f.acme.Messages.Get(f.ctx, a2.MessageID)
	if err != nil {
		t.Fatal(err)
	}
	if got.ConversationID != a1.ConversationID {
		t.Errorf("Get conversation_id = %s, want %s", got.ConversationID, a1.ConversationID)
	}
}

func TestChannelUnavailable(t *testing.T) {
	t.Parallel()
	f := setup(t)
	tpl := f.mustTemplate(t, f.acme, approved("welcome", body("Welcome!")))
	if err := setChannel(f.ctx, f.svc, "acme", messaging.ChannelInstagram, false); err != nil {
		t.Fatalf("DisconnectChannel: %v", err)
	}
	ig := &messaging.SendParams{Channel: "instagram", To: "igsid_1", Type: "text", Text: "hi"}
	_, err := f.acme.Messages.Send(f.ctx, ig)
	wantError(t, err, messaging.CodeChannelUnavailable, "channel")
	if c := f.store.counts(); c.Messages != 0 {
		t.Fatalf("messages stored after channel_unavailable = %d, want 0", c.Messages)
	}
	// Other channels still work.
	f.mustSend(t, f.acme, textMsg(kenya))

	// Templates go over whatsapp only.
	if err := setChannel(f.ctx, f.svc, "acme", messaging.ChannelWhatsApp, false); err != nil {
		t.Fatal(err)
	}
	_, err = f.acme.Messages.SendTemplate(f.ctx, &messaging.SendTemplateParams{To: kenya, TemplateName: tpl.Name})
	wantError(t, err, messaging.CodeChannelUnavailable, "channel")
	if c := f.store.counts(); c.Messages != 1 {
		t.Fatalf("messages stored = %d, want 1", c.Messages)
	}
	w, err := f.svc.GetWorkspace(f.ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"messenger"}, w.Channels); d != "" {
		t.Errorf("channels after disconnects (-want +got):\n%s", d)
	}

	for _, ch := range []string{messaging.ChannelInstagram, messaging.ChannelWhatsApp, messaging.ChannelWhatsApp} {
		if err := setChannel(f.ctx, f.svc, "acme", ch, true); err != nil {
			t.Fatalf("ConnectChannel(%s): %v", ch, err)
		}
	}
	f.mustSend(t, f.acme, ig)
	if _, err := f.acme.Messages.SendTemplate(f.ctx, &messaging.SendTemplateParams{To: kenya, TemplateName: tpl.Name}); err != nil {
		t.Fatalf("SendTemplate after reconnect: %v", err)
	}
	w, err = f.svc.GetWorkspace(f.ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"instagram", "messenger", "whatsapp"}, w.Channels); d != "" {
		t.Errorf("channels after reconnect (-want +got):\n%s", d)
	}
}

func TestChannelSettingBadInputs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		ws      string
		channel string
		code    messaging.Code
		field   string
	}{
		{"unknown channel", "acme", "sms", messaging.CodeNotFound, ""},
		{"empty channel", "acme", "", messaging.CodeNotFound, ""},
		{"unknown workspace", "nope", "whatsapp", messaging.CodeNotFound, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := setup(t)
			wantError(t, setChannel(f.ctx, f.svc, tc.ws, tc.channel, false), tc.code, tc.field)
			wantError(t, setChannel(f.ctx, f.svc, tc.ws, tc.channel, true), tc.code, tc.field)
		})
	}
}

func TestSendUnknownWorkspace(t *testing.T) {
	t.Parallel()
	f := setup(t)
	_, err := f.svc.Workspace("ghost").Messages.Send(f.ctx, textMsg(kenya))
	wantError(t, err, messaging.CodeNotFound, "")
	if c := f.store.counts(); c.Messages != 0 {
		t.Errorf("messages stored = %d, want 0", c.Messages)
	}
}

func TestIdempotency(t *testing.T) {
	t.Parallel()

	t.Run("same key and request replays", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		p := textMsg(kenya)
		p.IdempotencyKey = "order-42"
		first := f.mustSend(t, f.acme, p)
		if first.Replayed {
			t.Fatalf("first send Replayed = true")
		}
		f.clock.Advance(1e9)
		again := *p
		second := f.mustSend(t, f.acme, &again)
		want := *first
		want.Replayed = true
		if d := cmp.Diff(&want, second); d != "" {
			t.Errorf("replayed result mismatch (-want +got):\n%s", d)
		}
		if c := f.store.counts(); c.Messages != 1 {
			t.Errorf("messages stored = %d, want 1", c.Messages)
		}
		m, err := f.acme.Messages.Get(f.ctx, first.MessageID)
		if err != nil {
			t.Fatal(err)
		}
		if !m.CreatedAt.Equal(t0) {
			t.Errorf("CreatedAt = %v, want the first send's %v", m.CreatedAt, t0)
		}
	})

	t.Run("same key different request conflicts", func(t *testing.T) {
		t.Parallel()
		tests := []struct {
			name   string
			change func(p *messaging.SendParams)
		}{
			{"text", func(p *messaging.SendParams) { p.Text = "Hello again" }},
			{"recipient", func(p *messaging.SendParams) { p.To = kenya2 }},
			{"channel", func(p *messaging.SendParams) { p.Channel = "messenger" }},
			{"type", func(p *messaging.SendParams) {
				p.Type, p.Text, p.MediaURL = "image", "", "https://example.com/a.jpg"
			}},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				f := setup(t)
				p := textMsg(kenya)
				p.IdempotencyKey = "k-1"
				first := f.mustSend(t, f.acme, p)
				q := *p
				tc.change(&q)
				res, err := f.acme.Messages.Send(f.ctx, &q)
				if res != nil {
					t.Errorf("result %+v returned with the conflict", res)
				}
				wantError(t, err, messaging.CodeConflict, "idempotency_key")
				if c := f.store.counts(); c.Messages != 1 {
					t.Errorf("messages stored = %d, want 1", c.Messages)
				}
				// The original request still replays.
				r := f.mustSend(t, f.acme, p)
				if r.MessageID != first.MessageID || !r.Replayed {
					t.Errorf("replay after conflict = %+v, want message %s replayed", r, first.MessageID)
				}
			})
		}
	})

	t.Run("key used by a send then a template send conflicts", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		f.mustTemplate(t, f.acme, approved("welcome", body("Welcome!")))
		p := textMsg(kenya)
		p.IdempotencyKey = "shared"
		f.mustSend(t, f.acme, p)
		_, err := f.acme.Messages.SendTemplate(f.ctx, &messaging.SendTemplateParams{To: kenya, TemplateName: "welcome", IdempotencyKey: "shared"})
		wantError(t, err, messaging.CodeConflict, "idempotency_key")
		if c := f.store.counts(); c.Messages != 1 {
			t.Errorf("messages stored = %d, want 1", c.Messages)
		}
	})

	t.Run("different keys and no key create new messages", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		ids := map[string]bool{}
		for _, key := range []string{"a", "b", "", ""} {
			p := textMsg(kenya)
			p.IdempotencyKey = key
			r := f.mustSend(t, f.acme, p)
			if r.Replayed {
				t.Errorf("key %q: Replayed = true", key)
			}
			ids[r.MessageID] = true
		}
		if len(ids) != 4 {
			t.Errorf("got %d distinct message ids, want 4", len(ids))
		}
	})

	t.Run("keys are per workspace", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		p := textMsg(kenya)
		p.IdempotencyKey = "same"
		a := f.mustSend(t, f.acme, p)
		q := *p
		o := f.mustSend(t, f.other, &q)
		if a.MessageID == o.MessageID || o.Replayed {
			t.Errorf("other workspace send = %+v, want a new message (acme's is %s)", o, a.MessageID)
		}
		if _, err := f.other.Messages.Get(f.ctx, o.MessageID); err != nil {
			t.Errorf("other's message: %v", err)
		}
	})

	t.Run("template send replays", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		f.mustTemplate(t, f.acme, approved("hello_name", body("Hello {{1}}")))
		p := &messaging.SendTemplateParams{To: kenya, TemplateName: "hello_name", IdempotencyKey: "t-1",
			Components: []messaging.SendComponent{{Type: "body", Parameters: []messaging.SendParameter{{Type: "text", Text: "Jane"}}}}}
		first, err := f.acme.Messages.SendTemplate(f.ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		// Language "" and "en" are the same request.
		q := *p
		q.Language = "en"
		second, err := f.acme.Messages.SendTemplate(f.ctx, &q)
		if err != nil {
			t.Fatal(err)
		}
		if second.MessageID != first.MessageID || !second.Replayed {
			t.Errorf("second = %+v, want replay of %s", second, first.MessageID)
		}
		r := q
		r.Components = []messaging.SendComponent{{Type: "body", Parameters: []messaging.SendParameter{{Type: "text", Text: "John"}}}}
		_, err = f.acme.Messages.SendTemplate(f.ctx, &r)
		wantError(t, err, messaging.CodeConflict, "idempotency_key")
		if c := f.store.counts(); c.Messages != 1 {
			t.Errorf("messages stored = %d, want 1", c.Messages)
		}
	})

	t.Run("concurrent identical sends", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		const n = 50
		results := make([]*messaging.SendResult, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Go(func() {
				<-start
				p := textMsg(kenya)
				p.IdempotencyKey = "burst"
				results[i], errs[i] = f.acme.Messages.Send(f.ctx, p)
			})
		}
		close(start)
		wg.Wait()
		ids := map[string]int{}
		fresh := 0
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("send %d: %v", i, errs[i])
			}
			ids[results[i].MessageID]++
			if !results[i].Replayed {
				fresh++
			}
		}
		if len(ids) != 1 {
			t.Errorf("got %d message ids, want 1: %v", len(ids), ids)
		}
		if fresh != 1 {
			t.Errorf("%d results have Replayed=false, want exactly 1", fresh)
		}
		if c := f.store.counts(); c.Messages != 1 {
			t.Errorf("messages stored = %d, want 1", c.Messages)
		}
	})
}

func TestErrorHelpers(t *testing.T) {
	t.Parallel()
	f := setup(t)
	_, err := f.acme.Messages.Get(f.ctx, "msg_missing")
	if !errors.Is(err, messaging.ErrNotFound) {
		t.Errorf("errors.Is(%v, ErrNotFound) = false", err)
	}
	if !errors.Is(err, &messaging.Error{Code: messaging.CodeNotFound}) {
		t.Errorf("errors.Is(%v, &Error{not_found}) = false", err)
	}
	if errors.Is(err, &messaging.Error{Code: messaging.CodeConflict}) {
		t.Errorf("errors.Is(%v, &Error{conflict}) = true", err)
	}
	if got := messaging.ErrorCode(errors.New("boom")); got != messaging.CodeInternal {
		t.Errorf("ErrorCode(plain error) = %s, want internal_error", got)
	}
}

// TestParseButtonIndex: a button's index is a number or, as Meta's
// examples write it, a string of digits; SendComponent's UnmarshalJSON
// applies the same rule.
func TestParseButtonIndex(t *testing.T) {
	t.Parallel()
	tests := []struct {
		raw     string
		want    int  // when ok and not nil
		null    bool // absent or null
		wantErr bool
	}{
		{raw: `0`, want: 0},
		{raw: `"0"`, want: 0},
		{raw: ` "9" `, want: 9},
		{raw: `2`, want: 2},
		{raw: ``, null: true},
		{raw: `null`, null: true},
		{raw: `"first"`, wantErr: true},
		{raw: `""`, wantErr: true},
		{raw: `"-1"`, wantErr: true},
		{raw: `"100"`, wantErr: true},
		{raw: `1.5`, wantErr: true},
		{raw: `true`, wantErr: true},
		{raw: `{}`, wantErr: true},
	}
	for _, tc := range tests {
		got, err := record.ParseButtonIndex(json.RawMessage(tc.raw))
		switch {
		case tc.wantErr:
			var me *messaging.Error
			if !errors.As(err, &me) || me.Code != messaging.CodeValidation || me.Field != "components.index" {
				t.Errorf("ParseButtonIndex(%s) = %v, %v; want a validation_error on components.index", tc.raw, got, err)
			}
		case err != nil:
			t.Errorf("ParseButtonIndex(%s): %v", tc.raw, err)
		case tc.null != (got == nil):
			t.Errorf("ParseButtonIndex(%s) = %v; want nil: %v", tc.raw, got, tc.null)
		case got != nil && *got != tc.want:
			t.Errorf("ParseButtonIndex(%s) = %d; want %d", tc.raw, *got, tc.want)
		}
	}
	var c messaging.SendComponent
	if err := json.Unmarshal([]byte(`{"type":"button","sub_type":"url","index":"0","parameters":[{"type":"text","text":"A-1"}]}`), &c); err != nil || c.Index == nil || *c.Index != 0 {
		t.Errorf(`SendComponent with "index": "0" = %+v, %v; want index 0`, c, err)
	}
}
