package client_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ujumbe/messaging/client"
)

// TestScheduledSendAndCancel: SendParams.SendAt reaches the server (the
// message reads back with it), Cancel cancels it, and a second Cancel is
// an *Error conflict naming status.
func TestScheduledSendAndCancel(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	c := e.client(t, e.A.Key, nil)
	at := e.clock.Now().Add(3 * 24 * time.Hour).In(time.FixedZone("EAT", 3*3600))
	r, err := c.Messages.Send(ctx, &client.SendParams{Channel: "whatsapp", To: "+254712345678", Type: "text", Text: "later", SendAt: &at})
	if err != nil {
		t.Fatal(err)
	}
	m, err := c.Messages.Get(ctx, r.MessageID)
	if err != nil {
		t.Fatal(err)
	}
	if m.Status != "queued" || m.SendAt == nil || !m.SendAt.Equal(at) {
		t.Fatalf("scheduled message: status %s send_at %v; want queued, %v", m.Status, m.SendAt, at)
	}
	if m, err = c.Messages.Cancel(ctx, r.MessageID); err != nil || m.Status != "canceled" {
		t.Fatalf("Cancel: %+v, %v", m, err)
	}
	_, err = c.Messages.Cancel(ctx, r.MessageID)
	var ce *client.Error
	if !errors.As(err, &ce) || ce.StatusCode != 409 || ce.Code != client.CodeConflict || ce.Field != "status" {
		t.Fatalf("second Cancel: %v; want a 409 conflict naming status", err)
	}
	past := e.clock.Now().Add(-time.Hour)
	_, err = c.Messages.SendTemplate(ctx, &client.SendTemplateParams{To: "+254712345678", TemplateName: "x", SendAt: &past})
	if !errors.As(err, &ce) || ce.Code != client.CodeValidation || ce.Field != "send_at" {
		t.Fatalf("template send with a past send_at: %v; want validation_error naming send_at", err)
	}
}
