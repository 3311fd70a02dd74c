package messaging_test

import (
	"testing"

	"github.com/ujumbe/messaging"
)

// A repeated request answers as the first did, even after the channel was
// disconnected or the template paused in between.
func TestReplayAfterChannelOrTemplateChange(t *testing.T) {
	t.Parallel()
	f := setup(t)
	text := &messaging.SendParams{Channel: "whatsapp", To: "+254712345678", Type: "text", Text: "hi", IdempotencyKey: "k-text"}
	first := f.mustSend(t, f.acme, text)
	tpl := f.mustTemplate(t, f.acme, &messaging.TemplateCreateParams{Name: "promo", Category: "MARKETING", Language: "en", Status: "approved",
		Components: []messaging.TemplateComponent{{Type: "BODY", Text: "Sale today"}}})
	tsend := &messaging.SendTemplateParams{To: "+254712345678", TemplateName: "promo", Language: "en", IdempotencyKey: "k-tpl"}
	firstTpl, err := f.acme.Messages.SendTemplate(f.ctx, tsend)
	if err != nil {
		t.Fatal(err)
	}
	if err := setChannel(f.ctx, f.svc, "acme", "whatsapp", false); err != nil {
		t.Fatal(err)
	}
	if _, err := f.acme.Templates.SetStatus(f.ctx, tpl.ID, "paused", "quality"); err != nil {
		t.Fatal(err)
	}
	before := f.store.counts()

	again, err := f.acme.Messages.Send(f.ctx, text)
	if err != nil || !again.Replayed || again.MessageID != first.MessageID {
		t.Errorf("text replay after disconnect = %+v, %v; want the original, replayed", again, err)
	}
	againTpl, err := f.acme.Messages.SendTemplate(f.ctx, tsend)
	if err != nil || !againTpl.Replayed || againTpl.MessageID != firstTpl.MessageID {
		t.Errorf("template replay after pause = %+v, %v; want the original, replayed", againTpl, err)
	}
	changed := *text
	changed.Text = "other"
	if _, err := f.acme.Messages.Send(f.ctx, &changed); messaging.ErrorCode(err) != messaging.CodeConflict {
		t.Errorf("same key, other request: %v, want conflict", err)
	}
	// A new key still meets the channel check.
	fresh := *text
	fresh.IdempotencyKey = "k-new"
	if _, err := f.acme.Messages.Send(f.ctx, &fresh); messaging.ErrorCode(err) != messaging.CodeChannelUnavailable {
		t.Errorf("new key on a disconnected channel: %v, want channel_unavailable", err)
	}
	if got := f.store.counts(); got != before {
		t.Errorf("replays stored something: %+v -> %+v", before, got)
	}
}
