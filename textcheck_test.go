package messaging_test

import (
	"strings"
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
		{"template event owner", func() error {
			_, err := f.svc.ApplyTemplateEvent(f.ctx, &messaging.TemplateEvent{OwnerID: "5678" + nul, Event: "APPROVED", Name: "promo", Language: "en"})
			return err
		}, "ownerID"},
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

// TestChannelCredentialsMeetTheTextRule: the text rule checks the
// credentials of Channels.Connect before their channel's rules, naming
// each field as the management API does (its name in the channel's spec,
// or access_token), and nothing is written.
func TestChannelCredentialsMeetTheTextRule(t *testing.T) {
	f := setup(t)
	ws := f.acme
	for _, tc := range []struct {
		name   string
		fields map[string]string
		token  string
		want   string
	}{
		{"NUL in the account id", map[string]string{"phone_number_id": "1234\x00", "waba_id": "5678"}, "token-0123456789",
			"phone_number_id: must not contain NUL characters (\\u0000)"},
		{"owner id not UTF-8", map[string]string{"phone_number_id": "1234", "waba_id": "56\xff78"}, "token-0123456789",
			"waba_id: must be valid UTF-8"},
		{"display number with NUL", map[string]string{"phone_number_id": "1234", "waba_id": "5678", "display_phone_number": "+254712345678\x00"},
			"token-0123456789", "display_phone_number: must not contain NUL characters (\\u0000)"},
		{"token not UTF-8", map[string]string{"phone_number_id": "1234", "waba_id": "5678"}, "token-0123456789\xff",
			"access_token: must be valid UTF-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := f.store.counts()
			_, err := ws.Channels.Connect(f.ctx, "whatsapp", &messaging.ChannelCredentials{Fields: tc.fields, AccessToken: tc.token})
			field, _, _ := strings.Cut(tc.want, ":")
			if e := wantError(t, err, messaging.CodeValidation, field); e.Message != tc.want {
				t.Errorf("message %q, want %q", e.Message, tc.want)
			}
			if after := f.store.counts(); after != before {
				t.Errorf("wrote %+v -> %+v", before, after)
			}
		})
	}
}
