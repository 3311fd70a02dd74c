package metaprovider_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/metaprovider"
	"github.com/ujumbe/messaging/provider/metaprovider/metatest"
	"github.com/ujumbe/messaging/store/memstore"
)

// TestServiceSendsWithTheConnection runs a Provider built without a
// SenderLookup under a Service: messaging.New hands it the connections, a
// send reaches the Graph API with the connection's phone-number id and
// token, templates are submitted and synchronised through the mock, and
// an expired token marks the connection.
func TestServiceSendsWithTheConnection(t *testing.T) {
	t.Parallel()
	mock := metatest.New()
	defer mock.Close()
	p, err := metaprovider.New(nil, &metaprovider.Options{BaseURL: mock.URL()})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := messaging.New(memstore.New(), p, &messaging.Options{Clock: func() time.Time { return now }, SecretKey: bytes.Repeat([]byte{5}, 32)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := svc.CreateWorkspace(ctx, &messaging.CreateWorkspaceParams{ID: "acme", Name: "Acme", Channels: messaging.Channels()}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Connect(ctx, &messaging.ConnectParams{WorkspaceID: "acme", Channel: messaging.ChannelWhatsApp,
		AccountID: phoneID, WABAID: wabaID, AccessToken: connTok}); err != nil {
		t.Fatal(err)
	}
	ws := svc.Workspace("acme")
	res, err := ws.Messages.Send(ctx, &messaging.SendParams{Channel: "whatsapp", To: "+254712345678", Type: "text", Text: "Habari"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.DispatchDue(ctx); err != nil {
		t.Fatal(err)
	}
	if m, err := ws.Messages.Get(ctx, res.MessageID); err != nil || m.Status != messaging.StatusSent {
		t.Fatalf("message = %+v, %v; want sent", m, err)
	}
	var sends []metatest.Request
	for _, r := range mock.Requests() {
		if r.Path == "/v21.0/"+phoneID+"/messages" {
			sends = append(sends, r)
		}
	}
	if len(sends) != 1 || sends[0].Authorization != "Bearer "+connTok {
		t.Fatalf("sends = %+v, want one with the connection's token", sends)
	}

	// A template created in WhatsApp Manager appears after a sync.
	mock.AddTemplate(wabaID, messaging.ProviderTemplate{Name: "from_manager", Language: "en", Category: messaging.CategoryUtility,
		Components: []messaging.TemplateComponent{{Type: "BODY", Text: "Hello {{1}}"}}})
	if _, err := svc.SyncTemplates(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	list, err := ws.Templates.List(ctx, nil)
	if err != nil || len(list) != 1 || list[0].Name != "from_manager" {
		t.Errorf("templates after sync = %+v, %v; want from_manager", list, err)
	}

	// An expired token fails the send for good and marks the connection.
	mock.ExpireToken(connTok)
	res, err = ws.Messages.Send(ctx, &messaging.SendParams{Channel: "whatsapp", To: "+254712345678", Type: "text", Text: "Again"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.DispatchDue(ctx); err != nil {
		t.Fatal(err)
	}
	if m, err := ws.Messages.Get(ctx, res.MessageID); err != nil || m.Status != messaging.StatusFailed {
		t.Errorf("message = %+v, %v; want failed", m, err)
	}
	c, err := svc.Connection(ctx, "acme", messaging.ChannelWhatsApp)
	if err != nil {
		t.Fatal(err)
	}
	if c.Status != messaging.ConnectionError || c.StatusReason == "" {
		t.Errorf("connection = %s %q, want error with the reason", c.Status, c.StatusReason)
	}
}
