package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ujumbe/messaging/record"

	"github.com/google/go-cmp/cmp"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/client"
	"github.com/ujumbe/messaging/httpapi"
	"github.com/ujumbe/messaging/sms"
)

const operatorToken = "op_test_token_0123456789abcdef"

// setupAdmin is setup with operatorToken as the operator token, and an
// AdminClient calling with it.
func setupAdmin(t *testing.T) (*env, *client.AdminClient) {
	t.Helper()
	e := setup(t, func(o *httpapi.Options) { o.OperatorToken = operatorToken })
	a, err := client.NewAdmin(e.srv.URL, operatorToken, e.options(nil))
	if err != nil {
		t.Fatal(err)
	}
	return e, a
}

// wantNotFound fails the test unless err is the API's not_found: a
// *client.Error of status 404 that matches client.CodeNotFound.
func wantNotFound(t *testing.T, what string, err error) {
	t.Helper()
	if ce := apiError(t, err); ce.StatusCode != http.StatusNotFound || !errors.Is(err, &client.Error{Code: client.CodeNotFound}) {
		t.Errorf("%s: %v", what, err)
	}
}

// TestAdmin calls every operator route through AdminClient, and decodes
// the refusals of a wrong token and of unknown records.
func TestAdmin(t *testing.T) {
	e, a := setupAdmin(t)
	ctx := context.Background()
	for range 2 {
		if _, _, err := e.svc.StartSession(ctx, &messaging.SessionParams{Subject: "operator", Operator: true}); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := a.EndAllSessions(ctx); err != nil || n != 2 {
		t.Errorf("EndAllSessions = %d, %v; want 2", n, err)
	}
	if n, err := a.EndAllSessions(ctx); err != nil || n != 0 {
		t.Errorf("EndAllSessions again = %d, %v; want 0", n, err)
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
	// One page by hand: a cursor, then nil on the last page.
	p1, err := a.ListWorkspaces(ctx, &client.CursorParams{Limit: 2})
	if err != nil || len(p1.Data) != 2 || p1.NextCursor == nil || *p1.NextCursor == "" {
		t.Fatalf("workspaces page 1: %+v %v", p1, err)
	}
	if p2, err := a.ListWorkspaces(ctx, &client.CursorParams{Cursor: *p1.NextCursor, Limit: 2}); err != nil || len(p2.Data) != 1 || p2.NextCursor != nil {
		t.Errorf("workspaces page 2: %+v %v; want ws_new and a nil cursor", p2, err)
	}
	k, err := a.CreateAPIKey(ctx, "ws_new", &client.APIKeyCreateParams{Name: "first", Scopes: record.AllScopes()})
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
	top, err := a.TopUp(ctx, "p2", client.Credits(10), "INV-1")
	if err != nil || top.Balance != "15.00" || top.Replayed {
		t.Fatalf("top-up: %+v %v", top, err)
	}
	again, err := a.TopUp(ctx, "p2", client.Credits(10), "INV-1")
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
	if lp, err := a.Ledger(ctx, "p2", nil); err != nil || len(lp.Data) != 2 || lp.NextCursor != nil {
		t.Errorf("ledger: %+v %v; want both entries and a nil cursor", lp, err)
	}

	_, err = a.GetWorkspace(ctx, "ws_nope")
	wantNotFound(t, "unknown workspace", err)
	_, err = a.GetSMSAccount(ctx, "nope")
	wantNotFound(t, "unknown account", err)
	wrong, err := client.NewAdmin(e.srv.URL, "not-the-token-0123456789", e.options(nil))
	if err != nil {
		t.Fatal(err)
	}
	_, err = wrong.ListWorkspaces(ctx, nil)
	if ce := apiError(t, err); ce.StatusCode != http.StatusUnauthorized || ce.Code != client.CodeUnauthorized {
		t.Errorf("wrong token: %v", err)
	}
	if _, err := client.NewAdmin(e.srv.URL, "", nil); err == nil {
		t.Error("no token: no error")
	}
}

// TestAdminSettings changes a workspace's outside_window with
// UpdateWorkspace (and sees a free-form send refused after it), registers
// an SMS account's callback with SetSMSCallback (its secret shown once,
// and verifying the sms.delivery_report event it receives), and decodes
// the refusals of bad values and unknown records.
func TestAdminSettings(t *testing.T) {
	e, a := setupAdmin(t)
	ctx := context.Background()
	if ws, err := a.CreateWorkspace(ctx, &client.WorkspaceCreateParams{ID: "ws_strict", OutsideWindow: "reject"}); err != nil || ws.OutsideWindow != "reject" {
		t.Errorf("create with reject: %+v %v", ws, err)
	}
	if ws, err := a.GetWorkspace(ctx, e.A.ID); err != nil || ws.OutsideWindow != "provider" {
		t.Fatalf("A before: %+v %v, want the default provider", ws, err)
	}
	ca := e.client(t, e.A.Key, nil)
	free := &client.SendParams{Channel: "whatsapp", To: e.A.Contact.Phone, Type: "text", Text: "hi"}
	if _, err := ca.Messages.Send(ctx, free); err != nil {
		t.Fatalf("free-form send under provider: %v", err)
	}
	ws, err := a.UpdateWorkspace(ctx, e.A.ID, &client.WorkspaceUpdateParams{OutsideWindow: "reject"})
	if err != nil || ws.ID != e.A.ID || ws.OutsideWindow != "reject" || len(ws.Channels) != 3 {
		t.Fatalf("update: %+v %v", ws, err)
	}
	if got, err := a.GetWorkspace(ctx, e.A.ID); err != nil || got.OutsideWindow != "reject" {
		t.Errorf("A after: %+v %v", got, err)
	}
	_, err = ca.Messages.Send(ctx, free)
	if ce := apiError(t, err); ce.StatusCode != http.StatusUnprocessableEntity || ce.Code != client.CodeOutsideWindow || ce.Field != "to" ||
		!errors.Is(err, &client.Error{Code: client.CodeOutsideWindow}) {
		t.Errorf("free-form send under reject: %v, want 422 outside_customer_service_window on to", err)
	}
	// B is not changed by A's setting.
	if got, err := a.GetWorkspace(ctx, e.B.ID); err != nil || got.OutsideWindow != "provider" {
		t.Errorf("B after A's update: %+v %v", got, err)
	}
	_, err = a.UpdateWorkspace(ctx, e.A.ID, &client.WorkspaceUpdateParams{OutsideWindow: "sometimes"})
	if ce := apiError(t, err); ce.StatusCode != http.StatusBadRequest || ce.Code != client.CodeValidation || ce.Field != "outside_window" {
		t.Errorf("a bad outside_window: %v", err)
	}
	_, err = a.UpdateWorkspace(ctx, "ws_nope", &client.WorkspaceUpdateParams{OutsideWindow: "reject"})
	wantNotFound(t, "update an unknown workspace", err)
	if _, err := a.UpdateWorkspace(ctx, e.A.ID, nil); err == nil {
		t.Error("update without params: no error")
	}
	if _, err := a.UpdateWorkspace(ctx, "", &client.WorkspaceUpdateParams{OutsideWindow: "reject"}); err == nil {
		t.Error("update without an id: no error")
	}

	// The SMS callback: none yet, then set with a generated secret.
	_, err = a.GetSMSCallback(ctx, smsPartner)
	wantNotFound(t, "no callback yet", err)
	url := e.hooksURL + "/sms"
	cb, err := a.SetSMSCallback(ctx, smsPartner, &client.SMSCallbackParams{URL: url})
	if err != nil || cb.PartnerID != smsPartner || cb.URL != url || !strings.HasPrefix(cb.Secret, "whsec_") {
		t.Fatalf("set callback: %+v %v", cb, err)
	}
	got, err := a.GetSMSCallback(ctx, smsPartner)
	if err != nil || *got != (client.SMSCallback{PartnerID: smsPartner, URL: url}) {
		t.Errorf("get callback: %+v %v, want the URL and no secret", got, err)
	}
	_, err = a.SetSMSCallback(ctx, smsPartner, &client.SMSCallbackParams{URL: "ftp://example.com/dlr"})
	if ce := apiError(t, err); ce.StatusCode != http.StatusBadRequest || ce.Code != client.CodeValidation || ce.Field != "url" {
		t.Errorf("a bad URL: %v", err)
	}
	_, err = a.SetSMSCallback(ctx, "nope", &client.SMSCallbackParams{URL: url})
	wantNotFound(t, "callback of an unknown account", err)
	_, err = a.GetSMSCallback(ctx, "nope")
	wantNotFound(t, "callback of an unknown account", err)
	if _, err := a.SetSMSCallback(ctx, smsPartner, nil); err == nil {
		t.Error("set callback without params: no error")
	}

	// A delivered SMS: its report reaches the callback, signed with the
	// secret shown once.
	s, err := client.NewSMS(e.srv.URL, smsPartner, smsKey, e.options(nil))
	if err != nil {
		t.Fatal(err)
	}
	sent, err := s.Send(ctx, &client.SMSSendParams{Mobile: "254712345678", Message: "Hello", Shortcode: "ACME"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.sms.RunDue(ctx); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(11 * time.Second)
	if _, err := s.DeliveryReport(ctx, &client.SMSReportParams{MessageID: sent.ProviderMessageID}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.DeliverWebhooksDue(ctx); err != nil {
		t.Fatal(err)
	}
	var ds []delivery
	e.hooks.mu.Lock()
	for _, d := range e.hooks.got {
		if d.path == "/sms" {
			ds = append(ds, d)
		}
	}
	e.hooks.mu.Unlock()
	if len(ds) != 1 {
		t.Fatalf("%d deliveries to the callback, want 1", len(ds))
	}
	ev, err := client.ParseWebhook(cb.Secret, ds[0].header, ds[0].body, e.clock.Now())
	if err != nil || ev.Type != sms.EventDeliveryReport {
		t.Fatalf("callback delivery: %+v %v", ev, err)
	}
	var rep sms.DeliveryReportEvent
	if err := json.Unmarshal(ev.Data, &rep); err != nil || rep.PartnerID != smsPartner || rep.MessageID != sent.ProviderMessageID || !rep.Delivered {
		t.Errorf("report event: %+v %v", rep, err)
	}
}

// TestAdminKeywords sets a workspace's keyword lists at creation and with
// UpdateWorkspace (which leaves outside_window when it is not given),
// restores the defaults with an empty list, and decodes the refusal of a
// bad list naming the keyword's field.
func TestAdminKeywords(t *testing.T) {
	_, a := setupAdmin(t)
	ctx := context.Background()
	ws, err := a.CreateWorkspace(ctx, &client.WorkspaceCreateParams{ID: "ws_kw", OutsideWindow: "reject", OptOutKeywords: []string{"halt", "basta ya"}})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([][]string{{"HALT", "BASTAYA"}, {"START", "UNSTOP", "ANZA"}}, [][]string{ws.OptOutKeywords, ws.OptInKeywords}); d != "" {
		t.Errorf("created (-want +got):\n%s", d)
	}
	ws, err = a.UpdateWorkspace(ctx, "ws_kw", &client.WorkspaceUpdateParams{OptOutKeywords: &[]string{}, OptInKeywords: &[]string{"resume"}})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([][]string{record.OptOutKeywords(), {"RESUME"}}, [][]string{ws.OptOutKeywords, ws.OptInKeywords}); d != "" {
		t.Errorf("updated (-want +got):\n%s", d)
	}
	if ws.OutsideWindow != "reject" {
		t.Errorf("outside_window = %q after an update of the keywords; want reject kept", ws.OutsideWindow)
	}
	_, err = a.UpdateWorkspace(ctx, "ws_kw", &client.WorkspaceUpdateParams{OptOutKeywords: &[]string{"A", "B", " a "}})
	if ce := apiError(t, err); ce.StatusCode != http.StatusBadRequest || ce.Code != client.CodeValidation || ce.Field != "opt_out_keywords[2]" {
		t.Errorf("a duplicate keyword: %v; want 400 naming opt_out_keywords[2]", err)
	}
}
