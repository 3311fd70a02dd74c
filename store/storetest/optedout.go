package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/store/driver"
)

// testMessageOptedOut: MessageCreate refuses a message to a recipient who
// opted out of its channel (an *OptedOutError with the time, nothing
// stored), but answers a repeated idempotency key with the message it
// holds, sends on another channel, and sends again after an opt-in; a
// received message from the recipient is stored.
func testMessageOptedOut(t *testing.T, s driver.Store) {
	ctx := context.Background()
	mustWorkspace(t, s, "a")
	const to = "+254700000009"
	msg := func(id, channel, key string) *messaging.Message {
		m := queuedMessage("a", id, at(0))
		m.To, m.Channel, m.IdempotencyKey = to, channel, key
		return m
	}
	if _, created, err := s.MessageCreate(ctx, msg("msg_before", "whatsapp", "k1")); err != nil || !created {
		t.Fatalf("before the opt-out: created %v, %v", created, err)
	}
	setOptOut := func(out bool, sec int) {
		t.Helper()
		if _, err := s.SuppressionSet(ctx, &driver.SuppressionSetParams{Suppression: &messaging.Suppression{
			WorkspaceID: "a", Channel: "whatsapp", Recipient: to, OptedOut: out, Source: "keyword", MessageID: "msg_in", UpdatedAt: at(sec)}}); err != nil {
			t.Fatal(err)
		}
	}
	setOptOut(true, 5)

	_, created, err := s.MessageCreate(ctx, msg("msg_refused", "whatsapp", "k2"))
	var optedOut *driver.OptedOutError
	if !errors.As(err, &optedOut) || created {
		t.Fatalf("after the opt-out: created %v, err %v; want an *OptedOutError", created, err)
	}
	if !optedOut.At.Equal(at(5)) {
		t.Errorf("OptedOutError.At = %v, want %v", optedOut.At, at(5))
	}
	if _, err := s.MessageGet(ctx, "a", "msg_refused"); !errors.Is(err, messaging.ErrNotFound) {
		t.Errorf("the refused message was stored: %v", err)
	}
	if _, _, err := s.MessageCreate(ctx, msg("msg_nokey", "whatsapp", "")); !errors.As(err, &optedOut) {
		t.Errorf("after the opt-out, with no idempotency key: %v, want an *OptedOutError", err)
	}
	stored, created, err := s.MessageCreate(ctx, msg("msg_repeat", "whatsapp", "k1"))
	if err != nil || created || stored.ID != "msg_before" {
		t.Errorf("a repeated key after the opt-out: %+v, created %v, %v; want the message it holds", stored, created, err)
	}
	if _, created, err := s.MessageCreate(ctx, msg("msg_messenger", "messenger", "")); err != nil || !created {
		t.Errorf("on another channel: created %v, %v", created, err)
	}
	in := msg("msg_inbound", "whatsapp", "")
	in.Direction, in.Status = "inbound", "delivered"
	if _, created, err := s.MessageReceive(ctx, &driver.MessageReceiveParams{Message: in}); err != nil || !created {
		t.Errorf("a message received from the opted-out recipient: created %v, %v", created, err)
	}

	setOptOut(false, 6)
	if _, created, err := s.MessageCreate(ctx, msg("msg_after", "whatsapp", "k3")); err != nil || !created {
		t.Errorf("after the opt-in: created %v, %v", created, err)
	}
}
