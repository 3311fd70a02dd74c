package messaging_test

import (
	"testing"

	"github.com/ujumbe/messaging"
)

// TestGoCallersMeetTheTextRule: a Go program calling the library directly
// gets the same validation error as a REST caller for a NUL or invalid
// UTF-8 anywhere in its parameters (PostgreSQL cannot store either, so
// without the rule it met an internal error there), naming the field, and
// nothing is written. An id that holds such text is not found.
func TestGoCallersMeetTheTextRule(t *testing.T) {
	f := setup(t)
	ws := f.acme
	f.mustTemplate(t, ws, approved("promo", body("Use code {{1}}")))
	nul, bad := "a\x00b", "a\xffb"
	for _, tc := range []struct {
		name  string
		call  func() error
		field string
	}{
		{"send text", func() error {
			p := textMsg("+254712345678")
			p.Text = nul
			_, err := ws.Messages.Send(f.ctx, p)
			return err
		}, "text"},
		{"send media url", func() error {
			_, err := ws.Messages.Send(f.ctx, &messaging.SendParams{Channel: "whatsapp", To: "+254712345678", Type: "image", MediaURL: "https://x.example/a.png" + nul})
			return err
		}, "media_url"},
		{"template parameter", func() error {
			_, err := ws.Messages.SendTemplate(f.ctx, &messaging.SendTemplateParams{To: "+254712345678", TemplateName: "promo", Language: "en",
				Components: []messaging.SendComponent{{Type: "body", Parameters: []messaging.SendParameter{{Type: "text", Text: "x"}, {Type: "coupon_code", CouponCode: nul}}}}})
			return err
		}, "components[0].parameters[1].coupon_code"},
		{"template name", func() error {
			_, err := ws.Messages.SendTemplate(f.ctx, &messaging.SendTemplateParams{To: "+254712345678", TemplateName: bad, Language: "en"})
			return err
		}, "template_name"},
		{"contact notes", func() error {
			_, err := ws.Contacts.Create(f.ctx, &messaging.ContactCreateParams{FirstName: "Ann", Phone: "+254712345678", Notes: nul})
			return err
		}, "notes"},
		{"contact update tags", func() error {
			tags := []string{"vip", bad}
			_, err := ws.Contacts.Update(f.ctx, "ct_x", &messaging.ContactUpdateParams{Tags: &tags})
			return err
		}, "tags[1]"},
		{"template create", func() error {
			p := approved("x"+nul, body("Hi"))
			_, err := ws.Templates.Create(f.ctx, p)
			return err
		}, "name"},
		{"workspace", func() error {
			_, err := f.svc.CreateWorkspace(f.ctx, &messaging.CreateWorkspaceParams{ID: "w" + nul, Name: "W"})
			return err
		}, "id"},
		{"provider status", func() error {
			_, err := f.svc.ApplyProviderStatus(f.ctx, &messaging.ProviderStatus{ProviderMessageID: "wamid." + nul, Status: "delivered"})
			return err
		}, "providerMessageID"},
	} {
		before := f.store.counts()
		err := tc.call()
		t.Run(tc.name, func(t *testing.T) { wantError(t, err, messaging.CodeValidation, tc.field) })
		if after := f.store.counts(); after != before {
			t.Errorf("%s: wrote %+v -> %+v", tc.name, before, after)
		}
	}
	for name, get := range map[string]func() error{
		"message":  func() error { _, err := ws.Messages.Get(f.ctx, "msg_"+nul); return err },
		"contact":  func() error { _, err := ws.Contacts.Get(f.ctx, "ct_"+nul); return err },
		"template": func() error { _, err := ws.Templates.Get(f.ctx, "tpl_"+bad); return err },
	} {
		if c := messaging.ErrorCode(get()); c != messaging.CodeNotFound {
			t.Errorf("get %s with a NUL id: %s, want not_found", name, c)
		}
	}
}
