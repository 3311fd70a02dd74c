package dashboard_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/sms"
	"github.com/ujumbe/messaging/sms/fakegateway"
	"github.com/ujumbe/messaging/store/memstore"
)

// TestMessageSMSFallback: the page of a template send with an SMS
// fallback shows it, pending, then with its SMS once WhatsApp failed it
// as undeliverable.
func TestMessageSMSFallback(t *testing.T) {
	f := setupWith(t, fixtureOptions{fallback: func(f *fixture, store *memstore.Store) messaging.SMSFallback {
		s, err := sms.New(store, fakegateway.New(&fakegateway.Options{Clock: f.clock.Now}), &sms.Options{Clock: f.clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.CreateAccount(f.ctx, &sms.CreateAccountParams{PartnerID: "1234", APIKey: "sms_0123456789abcdef0123456789abcdef",
			Senders: []string{"ACME"}, Credit: sms.Credits(10), TimeZone: "Africa/Nairobi"}); err != nil {
			t.Fatal(err)
		}
		return sms.NewFallback(s)
	}})
	f.prov.SetSink(f.svc)
	ws := f.svc.Workspace("acme")
	if _, err := ws.Templates.Create(f.ctx, &messaging.TemplateCreateParams{Name: "hello", Category: record.CategoryUtility, Language: "en",
		Status: record.TemplateApproved, Components: []messaging.TemplateComponent{{Type: "BODY", Text: "Hello"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.LinkSMSAccount(f.ctx, "acme", "1234"); err != nil {
		t.Fatal(err)
	}
	res, err := ws.Messages.SendTemplate(f.ctx, &messaging.SendTemplateParams{To: "+254712340000", TemplateName: "hello", Language: "en",
		Fallback: &messaging.FallbackParams{SMS: &messaging.SMSFallbackParams{Text: "Hello by SMS", PartnerID: "1234", Shortcode: "ACME"}}})
	if err != nil {
		t.Fatal(err)
	}
	r := f.get("/w/acme/messages/" + res.MessageID)
	if !strings.Contains(r.body, `<dd id="msg-fallback"><span class="badge">pending</span> through SMS account <code>1234</code>`) ||
		!strings.Contains(r.body, "if not delivered by") {
		t.Fatalf("the page does not show the pending fallback: %s", r.body)
	}
	f.dispatch()
	f.clock.Advance(time.Second)
	if _, err := f.prov.Flush(f.ctx); err != nil {
		t.Fatal(err)
	}
	m, err := ws.Messages.Get(f.ctx, res.MessageID)
	if err != nil || m.Fallback == nil || m.Fallback.SMSMessageID == "" {
		t.Fatalf("message = %+v, %v; want its SMS sent", m, err)
	}
	r = f.get("/w/acme/messages/" + res.MessageID)
	if !strings.Contains(r.body, `<span class="badge">queued</span>`) || !strings.Contains(r.body, "SMS <code>"+m.Fallback.SMSMessageID+"</code>") {
		t.Fatalf("the page does not show the SMS: %s", r.body)
	}
}
