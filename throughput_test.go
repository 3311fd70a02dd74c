package messaging_test

import (
	"context"
	"testing"
	"time"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/store/memstore"
)

// TestDispatchPacedByConnectionThroughput: a sender with a connection is
// paced at that connection's throughput, not at DispatchOptions.
// PerSenderRate: with a throughput of 1 message a second, one of two due
// messages is handed over at once and the other waits its turn (put back,
// untried, when the claim's context ends first); the same messages on a
// sender without a connection go at PerSenderRate.
func TestDispatchPacedByConnectionThroughput(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	prov := fakeprovider.New()
	svc, err := messaging.New(memstore.New(), prov, &messaging.Options{SecretKey: make([]byte, 32), Dispatch: messaging.DispatchOptions{PerSenderRate: 1000, Workers: 4}})
	if err != nil {
		t.Fatal(err)
	}
	for _, ws := range []string{"acme", "other"} {
		if _, err := svc.CreateWorkspace(ctx, &messaging.CreateWorkspaceParams{ID: ws, Name: ws, Channels: svc.Channels()}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := connect(ctx, svc, waConnect("acme", "106540352242922", "102290129340398", "EAAGacme")); err != nil {
		t.Fatal(err)
	}
	one := 1
	if _, err := svc.Workspace("acme").Channels.Update(ctx, messaging.ChannelWhatsApp, &messaging.ChannelUpdate{Throughput: &one}); err != nil {
		t.Fatal(err)
	}
	for _, ws := range []string{"acme", "acme", "other", "other"} {
		if _, err := svc.Workspace(ws).Messages.Send(ctx, &messaging.SendParams{Channel: "whatsapp", To: "+254712345678", Type: "text", Text: "hi"}); err != nil {
			t.Fatal(err)
		}
	}
	// The deadline comes long before acme's second turn (a second away):
	// the limiter refuses at once rather than wait.
	dctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if _, err := svc.DispatchDue(dctx); err != nil && dctx.Err() == nil {
		t.Fatal(err)
	}
	by := map[string]int{}
	for _, m := range prov.Sent() {
		by[m.WorkspaceID]++
	}
	if by["acme"] != 1 || by["other"] != 2 {
		t.Errorf("handed over by workspace: %v; want acme 1 (its connection's 1/s), other 2 (PerSenderRate)", by)
	}
}
