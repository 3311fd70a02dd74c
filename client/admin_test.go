package client_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/client"
	"github.com/ujumbe/messaging/httpapi"
	"github.com/ujumbe/messaging/sms"
)

const operatorToken = "op_test_token_0123456789abcdef"

// TestAdmin calls every operator route through AdminClient, and decodes
// the refusals of a wrong token and of unknown records.
func TestAdmin(t *testing.T) {
	e := setup(t, func(o *httpapi.Options) { o.OperatorToken = operatorToken })
	ctx := context.Background()
	a, err := client.NewAdmin(e.srv.URL, operatorToken, e.options(nil))
	if err != nil {
		t.Fatal(err)
	}
	ws, err := a.CreateWorkspace(ctx, &client.WorkspaceCreateParams{ID: "ws_new", Name: "New"})
	if err != nil || ws.ID != "ws_new" || ws.Name != "New" {
		t.Fatalf("create: %+v %v", ws, err)
	}
	if got, err := a.GetWorkspace(ctx, "ws_new"); err != nil || got.Name != "New" {
		t.Errorf("get: %+v %v", got, err)
	}
	var ids []string
	for w, err := range a.AllWorkspaces(ctx, &client.CursorParams{Limit: 1}) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, w.ID)
	}
	if len(ids) != 3 {
		t.Errorf("workspaces %v, want ws_a, ws_b and ws_new", ids)
	}
	k, err := a.CreateAPIKey(ctx, "ws_new", &client.APIKeyCreateParams{Name: "first", Scopes: messaging.AllScopes()})
	if err != nil {
		t.Fatal(err)
	}
	// The new key works on the workspace routes.
	if _, err := e.client(t, k.Key, nil).Contacts.List(ctx, nil); err != nil {
		t.Errorf("the new key: %v", err)
	}
	if _, err := e.svc.RecordInbound(ctx, &messaging.InboundMessage{WorkspaceID: e.A.ID, Channel: "whatsapp", From: "+254733000999",
		ProviderMessageID: "wamid.stop", Type: "text", Text: "STOP"}); err != nil {
		t.Fatal(err)
	}
	in, err := a.ClearOptOut(ctx, e.A.ID, &client.OptInParams{Channel: "whatsapp", To: "+254733000999"})
	if err != nil || !in.Changed || in.OptedOut {
		t.Errorf("opt-in: %+v %v", in, err)
	}

	acct, err := a.CreateSMSAccount(ctx, &client.SMSAccountCreateParams{PartnerID: "p2", Shortcodes: []string{"ACME"}, Credit: "5"})
	if err != nil || acct.APIKey == "" || acct.Credit != "5.00" {
		t.Fatalf("sms account: %+v %v", acct, err)
	}
	if got, err := a.GetSMSAccount(ctx, "p2"); err != nil || got.APIKey != "" {
		t.Errorf("get account: %+v %v (the apikey is shown once)", got, err)
	}
	if got, err := a.ApproveSender(ctx, "p2", "SHOP"); err != nil || len(got.Shortcodes) != 2 {
		t.Errorf("approve: %+v %v", got, err)
	}
	top, err := a.TopUp(ctx, "p2", sms.Credits(10), "INV-1")
	if err != nil || top.Balance != "15.00" || top.Replayed {
		t.Fatalf("top-up: %+v %v", top, err)
	}
	again, err := a.TopUp(ctx, "p2", sms.Credits(10), "INV-1")
	if err != nil || !again.Replayed || again.Seq != top.Seq {
		t.Errorf("the same top-up again: %+v %v, want the first, replayed", again, err)
	}
	n := 0
	for _, err := range a.AllLedger(ctx, "p2", &client.CursorParams{Limit: 1}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 2 {
		t.Errorf("%d ledger entries, want the opening credit and the top-up", n)
	}

	_, err = a.GetWorkspace(ctx, "ws_nope")
	if ce := apiError(t, err); ce.StatusCode != http.StatusNotFound || !errors.Is(err, messaging.ErrNotFound) {
		t.Errorf("unknown workspace: %v", err)
	}
	_, err = a.GetSMSAccount(ctx, "nope")
	if ce := apiError(t, err); ce.StatusCode != http.StatusNotFound {
		t.Errorf("unknown account: %v", err)
	}
	wrong, err := client.NewAdmin(e.srv.URL, "not-the-token-0123456789", e.options(nil))
	if err != nil {
		t.Fatal(err)
	}
	_, err = wrong.ListWorkspaces(ctx, nil)
	if ce := apiError(t, err); ce.StatusCode != http.StatusUnauthorized || ce.Code != messaging.CodeUnauthorized {
		t.Errorf("wrong token: %v", err)
	}
	if _, err := client.NewAdmin(e.srv.URL, "", nil); err == nil {
		t.Error("no token: no error")
	}
}
