package client_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/client"
	"github.com/ujumbe/messaging/httpapi"
	"github.com/ujumbe/messaging/internal/testclock"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/sms"
	"github.com/ujumbe/messaging/sms/fakegateway"
	"github.com/ujumbe/messaging/store/memstore"
)

// TestSMSFallback: the operator links an SMS account with AdminClient; a
// template sent with Fallback shows it on the message, and an account
// not linked is refused on fallback.sms.partner_id.
func TestSMSFallback(t *testing.T) {
	ctx := context.Background()
	clk := testclock.New(t0)
	st := memstore.New()
	s, err := sms.New(st, fakegateway.New(nil), &sms.Options{Clock: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.CreateAccount(ctx, &sms.CreateAccountParams{PartnerID: smsPartner, APIKey: smsKey, Senders: []string{"ACME"}, Credit: sms.Credits(3)}); err != nil {
		t.Fatal(err)
	}
	svc, err := messaging.New(st, fakeprovider.New(), &messaging.Options{Clock: clk.Now, SMSFallback: sms.NewFallback(s)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateWorkspace(ctx, &messaging.CreateWorkspaceParams{ID: "ws_a", Name: "A", Channels: []string{messaging.ChannelWhatsApp}}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Workspace("ws_a").Templates.Create(ctx, &messaging.TemplateCreateParams{Name: "hello", Category: record.CategoryUtility,
		Language: "en", Status: record.TemplateApproved, Components: []messaging.TemplateComponent{{Type: "BODY", Text: "Hello"}}}); err != nil {
		t.Fatal(err)
	}
	_, key, err := svc.Workspace("ws_a").APIKeys.Create(ctx, &messaging.KeyCreateParams{Scopes: record.AllScopes()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(httpapi.New(svc, &httpapi.Options{Clock: clk.Now, SMS: s, OperatorToken: operatorToken, DisableRateLimits: true}))
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := client.NewAdmin(srv.URL, operatorToken, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := &client.SendTemplateParams{To: "+254712345678", TemplateName: "hello",
		Fallback: &client.Fallback{SMS: &client.SMSFallback{Text: "Hello by SMS", PartnerID: smsPartner, Shortcode: "ACME", After: 300}}}
	_, err = c.Messages.SendTemplate(ctx, p)
	if e := apiError(t, err); e.Field != "fallback.sms.partner_id" {
		t.Fatalf("send through an account not linked: %v, want fallback.sms.partner_id", err)
	}
	link, err := admin.LinkSMSAccount(ctx, "ws_a", smsPartner)
	if err != nil || !link.Linked || !link.Changed {
		t.Fatalf("LinkSMSAccount = %+v, %v", link, err)
	}
	links, err := admin.WorkspaceSMSAccounts(ctx, "ws_a")
	if err != nil || len(links.SMSAccounts) != 1 || links.SMSAccounts[0] != smsPartner {
		t.Fatalf("WorkspaceSMSAccounts = %+v, %v", links, err)
	}
	res, err := c.Messages.SendTemplate(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	m, err := c.Messages.Get(ctx, res.MessageID)
	if err != nil {
		t.Fatal(err)
	}
	if f := m.Fallback; f == nil || f.SMS.Status != "pending" || f.SMS.After != 300 || f.SMS.DueAt == nil || !f.SMS.DueAt.Equal(t0.Add(300e9)) {
		t.Fatalf("message fallback = %+v", m.Fallback)
	}
	if link, err := admin.UnlinkSMSAccount(ctx, "ws_a", smsPartner); err != nil || link.Linked || !link.Changed {
		t.Fatalf("UnlinkSMSAccount = %+v, %v", link, err)
	}
}
