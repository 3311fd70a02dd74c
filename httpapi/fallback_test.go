package httpapi_test

import (
	"context"
	"testing"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/httpapi"
	"github.com/ujumbe/messaging/internal/testclock"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/sms"
	"github.com/ujumbe/messaging/sms/fakegateway"
	"github.com/ujumbe/messaging/store/memstore"
)

// fallbackOpSetup is opSetup with the SMS fallback wired: workspace acme
// has WhatsApp and the approved template hello; SMS account 1234 (sender
// ACME) exists, linked to no workspace.
func fallbackOpSetup(t *testing.T) *opEnv {
	t.Helper()
	ctx := context.Background()
	clk := testclock.New(t0)
	st := memstore.New()
	e := &opEnv{logs: &syncBuffer{}}
	var err error
	if e.sms, err = sms.New(st, fakegateway.New(nil), &sms.Options{Clock: clk.Now}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.sms.CreateAccount(ctx, &sms.CreateAccountParams{PartnerID: "1234", APIKey: "sms_0123456789abcdef0123456789abcdef",
		Senders: []string{"ACME"}, Credit: sms.Credits(10), TimeZone: "Africa/Nairobi"}); err != nil {
		t.Fatal(err)
	}
	if e.svc, err = messaging.New(st, fakeprovider.New(), &messaging.Options{Clock: clk.Now, SMSFallback: sms.NewFallback(e.sms)}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.CreateWorkspace(ctx, &messaging.CreateWorkspaceParams{ID: "acme", Name: "Acme", Channels: []string{messaging.ChannelWhatsApp}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Workspace("acme").Templates.Create(ctx, &messaging.TemplateCreateParams{Name: "hello", Category: record.CategoryUtility,
		Language: "en", Status: record.TemplateApproved, Components: []messaging.TemplateComponent{{Type: "BODY", Text: "Hello"}}}); err != nil {
		t.Fatal(err)
	}
	if _, e.acmeKy, err = e.svc.Workspace("acme").APIKeys.Create(ctx, &messaging.KeyCreateParams{Scopes: record.AllScopes()}); err != nil {
		t.Fatal(err)
	}
	e.h = httpapi.New(e.svc, &httpapi.Options{Clock: clk.Now, SMS: e.sms, OperatorToken: opToken})
	return e
}

// TestSMSFallbackREST: the operator links an SMS account to a workspace;
// a template send naming an account not linked is 400 on
// fallback.sms.partner_id and stores nothing; fallback is decoded
// strictly; a message shows its fallback.
func TestSMSFallbackREST(t *testing.T) {
	t.Parallel()
	e := fallbackOpSetup(t)
	send := `{"to":"+254712345678","template_name":"hello","fallback":{"sms":{"text":"Hello by SMS","partner_id":"1234","shortcode":"ACME","after":120}}}`

	st, _, v, _ := e.opCall(t, "POST", "/v1/messages/templates", "key", send)
	opExpect(t, "send through an account not linked", st, v, 400, "validation_error", "fallback.sms.partner_id")
	st, _, v, _ = e.opCall(t, "GET", "/v1/messages", "key", "")
	if items, _ := v["data"].([]any); st != 200 || len(items) != 0 {
		t.Fatalf("messages after the refusal: %d %v", st, v)
	}

	st, _, v, _ = e.opCall(t, "PUT", "/admin/v1/workspaces/acme/sms-accounts/9999", "op", "")
	opExpect(t, "link an unknown account", st, v, 404, "not_found", "")
	st, _, v, _ = e.opCall(t, "PUT", "/admin/v1/workspaces/acme/sms-accounts/1234", "op", "")
	opExpect(t, "link", st, v, 200, "", "")
	if v["linked"] != true || v["changed"] != true || v["partner_id"] != "1234" {
		t.Fatalf("link answer = %v", v)
	}
	st, _, v, _ = e.opCall(t, "PUT", "/admin/v1/workspaces/acme/sms-accounts/1234", "key", "")
	opExpect(t, "link with an API key", st, v, 401, "unauthorized", "")
	st, _, v, _ = e.opCall(t, "GET", "/admin/v1/workspaces/acme/sms-accounts", "op", "")
	if list, _ := v["sms_accounts"].([]any); st != 200 || len(list) != 1 || list[0] != "1234" {
		t.Fatalf("linked accounts = %d %v", st, v)
	}

	st, _, v, _ = e.opCall(t, "POST", "/v1/messages/templates", "key",
		`{"to":"+254712345678","template_name":"hello","fallback":{"sms":{"text":"x","partner_id":"1234","shortcode":"ACME","sender":"x"}}}`)
	opExpect(t, "unknown member of fallback.sms", st, v, 400, "validation_error", "")
	st, _, v, _ = e.opCall(t, "POST", "/v1/messages/templates", "key",
		`{"to":"+254712345678","template_name":"hello","fallback":{"sms":{"text":"Hello","partner_id":"1234","shortcode":"NOPE"}}}`)
	opExpect(t, "sender not approved", st, v, 400, "validation_error", "fallback.sms.shortcode")

	st, _, v, _ = e.opCall(t, "POST", "/v1/messages/templates", "key", send)
	if st != 201 {
		t.Fatalf("send: %d %v", st, v)
	}
	id, _ := v["message_id"].(string)
	st, _, v, _ = e.opCall(t, "GET", "/v1/messages/"+id, "key", "")
	fb, _ := v["fallback"].(map[string]any)
	sm, _ := fb["sms"].(map[string]any)
	if st != 200 || sm["status"] != "pending" || sm["partner_id"] != "1234" || sm["after"] != 120.0 || sm["due_at"] != "2026-03-01T09:02:00.000Z" {
		t.Fatalf("message = %d %v", st, v)
	}

	st, _, v, _ = e.opCall(t, "DELETE", "/admin/v1/workspaces/acme/sms-accounts/1234", "op", "")
	if st != 200 || v["linked"] != false || v["changed"] != true {
		t.Fatalf("unlink = %d %v", st, v)
	}
	st, _, v, _ = e.opCall(t, "GET", "/v1/audit-events", "key", "")
	if st != 200 || !containsAction(v, "sms_account.linked") || !containsAction(v, "sms_account.unlinked") {
		t.Fatalf("audit events = %v", v)
	}
}

// containsAction reports whether the audit page v holds an event of action.
func containsAction(v map[string]any, action string) bool {
	items, _ := v["data"].([]any)
	for _, it := range items {
		if m, _ := it.(map[string]any); m["action"] == action {
			return true
		}
	}
	return false
}
