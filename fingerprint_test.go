package messaging_test

import (
	"testing"

	"github.com/ujumbe/messaging/record"

	"github.com/ujumbe/messaging"
)

// The request hash stored with a message sent under an idempotency key is
// compared with the hash of every later request under the key. It must not
// change between releases, or a retry after an upgrade would be refused as
// a different request: these literal values were computed by the release
// that introduced them and pin the canonical form, whatever happens to the
// JSON tags of the public types.
func TestRequestHashIsFrozen(t *testing.T) {
	t.Parallel()
	f := setup(t)
	// The sends are checked against the template before they are stored,
	// so the pinned requests go to two templates of the same name and
	// language (not part of the hash), each fitting its sends: acme's
	// has every kind of part, other's a body and a quick reply.
	f.mustTemplate(t, f.acme, approved("order_update", messaging.TemplateComponent{Type: "HEADER", Format: "DOCUMENT"},
		body("Order {{1}} is on its way"), buttons(messaging.TemplateButton{Type: "COPY_CODE", Example: "SAVE10"},
			quickReply("Yes"), urlButton("https://shop.example.com/{{1}}"))))
	f.mustTemplate(t, f.other, approved("order_update", header("Your order"), body("Order {{1}} is on its way"), buttons(quickReply("Yes"))))
	onOther := map[string]bool{"template in the default language": true, "template with an empty and a missing parameter list": true}
	sends := []struct {
		name string
		send func(key string) error
		want string
	}{
		{"text", func(key string) error {
			_, err := f.acme.Messages.Send(f.ctx, &messaging.SendParams{Channel: messaging.ChannelWhatsApp, To: "+254712345678",
				Type: record.TypeText, Text: "Hello, \"world\" <&> ü", IdempotencyKey: key})
			return err
		}, "a0fb95cf17e3f4dfc9f38c922ab2b7ebece6cf4c0ef7e04300b987dfe93f47bb"},
		{"image with caption", func(key string) error {
			_, err := f.acme.Messages.Send(f.ctx, &messaging.SendParams{Channel: messaging.ChannelMessenger, To: "psid_1",
				Type: record.TypeImage, MediaURL: "https://cdn.example.com/a.png?x=1&y=2", Caption: "A picture", IdempotencyKey: key})
			return err
		}, "37e7ac07cb46015478dce71209b99b314c89c427af794667e31fb120aba46c11"},
		{"document with filename", func(key string) error {
			_, err := f.acme.Messages.Send(f.ctx, &messaging.SendParams{Channel: messaging.ChannelWhatsApp, To: "+254712345678",
				Type: record.TypeDocument, MediaURL: "https://cdn.example.com/invoice.pdf", Filename: "invoice.pdf", IdempotencyKey: key})
			return err
		}, "0913d922e81dcf04b7a4e5370a08acf44aeb83e84bd6fae4ae220db531399132"},
		{"template in the default language", func(key string) error {
			_, err := f.other.Messages.SendTemplate(f.ctx, &messaging.SendTemplateParams{To: "+254712345678", TemplateName: "order_update",
				IdempotencyKey: key, Components: []messaging.SendComponent{{Type: "body", Parameters: []messaging.SendParameter{{Type: "text", Text: "A-1"}}}}})
			return err
		}, "72ab3e6272f8d4e4f7856d58d82a912f99c0b3db3402d13aa0bc7a505e9f7ee6"},
		{"template with every kind of component", func(key string) error {
			_, err := f.acme.Messages.SendTemplate(f.ctx, &messaging.SendTemplateParams{To: "+254712345678", TemplateName: "order_update", Language: "en",
				IdempotencyKey: key, Components: []messaging.SendComponent{
					{Type: "header", Parameters: []messaging.SendParameter{{Type: "document", Link: "https://cdn.example.com/r.pdf", Filename: "r.pdf"}}},
					{Type: "body", Parameters: []messaging.SendParameter{{Type: "text", Text: "A-1"}}},
					{Type: "button", SubType: "copy_code", Index: intPtr(0), Parameters: []messaging.SendParameter{{Type: "coupon_code", CouponCode: "SAVE10"}}},
					{Type: "button", SubType: "quick_reply", Index: intPtr(1), Parameters: []messaging.SendParameter{{Type: "payload", Payload: "yes"}}},
					{Type: "button", SubType: "url", Index: intPtr(2), Parameters: []messaging.SendParameter{{Type: "text", Text: "track/A-1"}}},
				}})
			return err
		}, "7d8898dccc2c2dfa0751dfc6660a2285068fa42d2560eba9622648cf22713cd5"},
		{"template with an empty and a missing parameter list", func(key string) error {
			_, err := f.other.Messages.SendTemplate(f.ctx, &messaging.SendTemplateParams{To: "+254712345678", TemplateName: "order_update", Language: "en",
				IdempotencyKey: key, Components: []messaging.SendComponent{
					{Type: "header", Parameters: []messaging.SendParameter{}},
					{Type: "body", Parameters: []messaging.SendParameter{{Type: "text", Text: "A-1"}}},
					{Type: "button", SubType: "quick_reply", Index: intPtr(0)},
				}})
			return err
		}, "158d94525738b571cf13708ee4cc4515e55a8420f88f31bb8362af2fbfb4d0da"},
		{"text to an Instagram scoped id", func(key string) error {
			_, err := f.acme.Messages.Send(f.ctx, &messaging.SendParams{Channel: messaging.ChannelInstagram, To: "igsid_42",
				Type: record.TypeText, Text: "x", IdempotencyKey: key})
			return err
		}, "43810ff96afaf951e042cb552efbdf9894fa0cfd7d7977d50fcdcb4368fd35bc"},
	}
	for _, tc := range sends {
		key := "pin-" + tc.name
		if err := tc.send(key); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		ws := "acme"
		if onOther[tc.name] {
			ws = "other"
		}
		m, err := f.store.MessageGetByIdempotencyKey(f.ctx, ws, key)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if m.RequestHash != tc.want {
			t.Errorf("%s: request hash %s, want %s", tc.name, m.RequestHash, tc.want)
		}
	}
}
