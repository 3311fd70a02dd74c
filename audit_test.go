package messaging_test

import (
	"strings"
	"testing"

	"github.com/ujumbe/messaging/record"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/fakeprovider"
)

func TestAuditRecordsManagementChanges(t *testing.T) {
	t.Parallel()
	f := newLifeFixture(t, fakeprovider.New())
	ctx := messaging.WithActor(f.ctx, "key_admin")
	k, plain, err := f.svc.Workspace("acme").APIKeys.Create(ctx, &messaging.KeyCreateParams{Scopes: []string{record.ScopeReadMessages}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Workspace("acme").APIKeys.Revoke(ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := connect(ctx, f.svc, waConnect("acme", "1234", "99", "EAAGsecret-token")); err != nil {
		t.Fatal(err)
	}
	tpl, err := f.svc.Workspace("acme").Templates.Create(ctx, &messaging.TemplateCreateParams{Name: "hello", Category: "UTILITY", Language: "en",
		Components: []messaging.TemplateComponent{body("Hi")}})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.svc.Workspace("acme").Templates.Delete(ctx, tpl.ID); err != nil {
		t.Fatal(err)
	}
	e, secret, err := f.svc.Workspace("acme").Webhooks.Create(ctx, &messaging.WebhookCreateParams{URL: "https://example.com/hook"})
	if err != nil {
		t.Fatal(err)
	}
	// A change that fails is not recorded.
	if _, err := f.svc.Workspace("acme").APIKeys.Revoke(ctx, "key_missing"); err == nil {
		t.Fatal("revoking a missing key succeeded")
	}
	events, next, err := f.svc.AuditEvents(f.ctx, "acme", "", 0)
	if err != nil || next != "" {
		t.Fatalf("AuditEvents = %v, %q, %v", events, next, err)
	}
	type row struct{ Actor, Action, Target string }
	var got []row
	for _, ev := range events {
		got = append(got, row{ev.Actor, ev.Action, ev.Target})
		for _, s := range []string{plain, secret, "EAAGsecret-token"} {
			if strings.Contains(ev.Target+ev.Actor+ev.Action, s) {
				t.Errorf("audit event %+v holds a secret", ev)
			}
		}
	}
	want := []row{
		{"key_admin", record.AuditWebhookCreated, e.ID},
		{"key_admin", record.AuditTemplateDeleted, tpl.ID},
		{"key_admin", record.AuditTemplateSubmitted, tpl.ID},
		{"key_admin", record.AuditTemplateCreated, tpl.ID},
		{"key_admin", record.AuditChannelConnected, "whatsapp"},
		{"key_admin", record.AuditKeyRevoked, k.ID},
		{"key_admin", record.AuditKeyCreated, k.ID},
		{"library", record.AuditWorkspaceCreated, "acme"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("audit events, newest first (-want +got):\n%s", d)
	}
	// Paging: two at a time reaches every event once.
	var all []string
	for cursor := ""; ; {
		page, n, err := f.svc.AuditEvents(f.ctx, "acme", cursor, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range page {
			all = append(all, ev.ID)
		}
		if n == "" {
			break
		}
		cursor = n
	}
	if len(all) != len(want) {
		t.Errorf("paged through %d events, want %d", len(all), len(want))
	}
	for _, tc := range []struct {
		cursor string
		limit  int
		field  string
	}{{"abc", 10, "cursor"}, {"-5", 10, "cursor"}, {"", 101, "limit"}, {"", -1, "limit"}} {
		_, _, err := f.svc.AuditEvents(f.ctx, "acme", tc.cursor, tc.limit)
		wantError(t, err, messaging.CodeValidation, tc.field)
	}
}
