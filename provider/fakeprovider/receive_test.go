package fakeprovider_test

import (
	"context"
	"testing"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/fakeprovider"
)

// inboundSink records what Receive hands it.
type inboundSink struct {
	got []*messaging.InboundMessage
}

func (s *inboundSink) ApplyProviderStatus(context.Context, *messaging.ProviderStatus) (bool, error) {
	return true, nil
}

func (s *inboundSink) RecordInbound(_ context.Context, in *messaging.InboundMessage) (*messaging.Message, error) {
	s.got = append(s.got, in)
	return &messaging.Message{ID: "msg_" + in.ProviderMessageID, To: in.From, Channel: in.Channel, Type: in.Type, Text: in.Text}, nil
}

// TestReceive: the message reaches the Sink with sequential provider ids
// and defaults (whatsapp, text), a given id is kept, and it opens the
// sender's customer-service window; without an inbound Sink it is an
// error, not a panic.
func TestReceive(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := fakeprovider.NewWithOptions(&fakeprovider.Options{IDPrefix: "wamid.t.", CustomerServiceWindow: true})
	if _, err := p.Receive(ctx, &messaging.InboundMessage{WorkspaceID: "w", From: "+254712345678", Text: "hi"}); err == nil {
		t.Error("Receive without a Sink succeeded")
	}
	sink := &inboundSink{}
	p.SetSink(sink)
	for _, in := range []*messaging.InboundMessage{
		{WorkspaceID: "w", From: "+254712345678", Text: "hi"},
		{WorkspaceID: "w", From: "+254712345678", Text: "again"},
		{WorkspaceID: "w", Channel: "messenger", From: "psid-1", Text: "yo", ProviderMessageID: "mid.1"},
	} {
		if _, err := p.Receive(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	var ids []string
	for _, in := range sink.got {
		ids = append(ids, in.Channel+"/"+in.Type+"/"+in.ProviderMessageID)
	}
	want := []string{"whatsapp/text/wamid.t.in.000001", "whatsapp/text/wamid.t.in.000002", "messenger/text/mid.1"}
	if len(ids) != 3 || ids[0] != want[0] || ids[1] != want[1] || ids[2] != want[2] {
		t.Errorf("received %v, want %v", ids, want)
	}
	// The window is open: a free-form WhatsApp message is accepted.
	if _, err := p.Send(ctx, nil, &messaging.Message{ID: "m1", WorkspaceID: "w", Channel: "whatsapp", To: "+254712345678", Type: "text", Text: "reply"}); err != nil {
		t.Errorf("reply inside the window refused: %v", err)
	}
}
