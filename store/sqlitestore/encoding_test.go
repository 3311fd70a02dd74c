package sqlitestore

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/sms"
)

// Fixed values whose stored JSON is pinned: databases written by earlier
// versions must read back, so the stored form never follows the API's
// JSON tags. They hold what the encoding must keep apart: a nil and an
// empty list, characters JSON escapes, omitted empty fields.
var (
	pinnedTemplateComponents = []messaging.TemplateComponent{
		{Type: "HEADER", Format: "TEXT", Text: "Order {{1}}"},
		{Type: "BODY", Text: "Hi {{1}}, <é> & ✓", Buttons: []messaging.TemplateButton{}},
		{Type: "BUTTONS", Buttons: []messaging.TemplateButton{
			{Type: "URL", Text: "Track", URL: "https://x.example/t/{{1}}"},
			{Type: "PHONE_NUMBER", Text: "Call", PhoneNumber: "+254700000000"},
			{Type: "COPY_CODE", Example: "CODE1"},
			{Type: "QUICK_REPLY", Text: "Stop"},
		}},
	}
	pinnedSendComponents = []messaging.SendComponent{
		{Type: "header", Parameters: []messaging.SendParameter{{Type: "document", Link: "https://x.example/f.pdf", Filename: "f.pdf"}}},
		{Type: "body", Parameters: []messaging.SendParameter{{Type: "text", Text: "A&B <é>"}, {Type: "image", Link: "https://x.example/i.png"}}},
		{Type: "button", SubType: "url", Index: new(0), Parameters: []messaging.SendParameter{{Type: "text", Text: "T1"}}},
		{Type: "button", SubType: "copy_code", Index: new(1), Parameters: []messaging.SendParameter{{Type: "coupon_code", CouponCode: "C1"}}},
		{Type: "button", SubType: "quick_reply", Index: new(2), Parameters: []messaging.SendParameter{{Type: "payload", Payload: "P1"}}},
		{Type: "body", Parameters: []messaging.SendParameter{}},
		{Type: "body"},
	}
)

// The stored JSON of pinnedTemplateComponents and pinnedSendComponents.
const (
	pinnedTemplateJSON = `[{"type":"HEADER","format":"TEXT","text":"Order {{1}}","buttons":null},{"type":"BODY","text":"Hi {{1}}, \u003cé\u003e \u0026 ✓","buttons":[]},{"type":"BUTTONS","buttons":[{"type":"URL","text":"Track","url":"https://x.example/t/{{1}}"},{"type":"PHONE_NUMBER","text":"Call","phone_number":"+254700000000"},{"type":"COPY_CODE","example":"CODE1"},{"type":"QUICK_REPLY","text":"Stop"}]}]`
	pinnedSendJSON     = `[{"type":"header","parameters":[{"type":"document","link":"https://x.example/f.pdf","filename":"f.pdf"}]},{"type":"body","parameters":[{"type":"text","text":"A\u0026B \u003cé\u003e"},{"type":"image","link":"https://x.example/i.png"}]},{"type":"button","sub_type":"url","index":0,"parameters":[{"type":"text","text":"T1"}]},{"type":"button","sub_type":"copy_code","index":1,"parameters":[{"type":"coupon_code","coupon_code":"C1"}]},{"type":"button","sub_type":"quick_reply","index":2,"parameters":[{"type":"payload","payload":"P1"}]},{"type":"body","parameters":[]},{"type":"body","parameters":null}]`
)

// TestStoredEncodingIsPinned: the JSON a store writes for nested values is
// byte for byte what earlier versions wrote, and reads back unchanged.
func TestStoredEncodingIsPinned(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "db.sqlite"))
	ctx := context.Background()
	if err := s.WorkspaceCreate(ctx, &messaging.WorkspaceInfo{ID: "a", Name: "A", Channels: []string{}, CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	tpl := &messaging.Template{ID: "tpl_1", WorkspaceID: "a", Name: "n", Category: "UTILITY", Language: "en", Status: "PENDING",
		Components: pinnedTemplateComponents, CreatedAt: t0, UpdatedAt: t0}
	if err := s.TemplateCreate(ctx, tpl); err != nil {
		t.Fatal(err)
	}
	msg := &messaging.Message{ID: "msg_1", WorkspaceID: "a", Channel: "whatsapp", To: "+254712345678", Direction: "outbound",
		Status: "queued", Type: "template", TemplateName: "n", Language: "en", Components: pinnedSendComponents,
		CreatedAt: t0, UpdatedAt: t0, DueAt: t0}
	if _, _, err := s.MessageCreate(ctx, msg); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ what, query, want string }{
		{"template components", `SELECT components FROM templates WHERE id = 'tpl_1'`, pinnedTemplateJSON},
		{"message components", `SELECT components FROM messages WHERE id = 'msg_1'`, pinnedSendJSON},
	} {
		var got string
		if err := s.r.QueryRowContext(ctx, c.query).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("stored %s:\n got %s\nwant %s", c.what, got, c.want)
		}
	}
	gotTpl, err := s.TemplateGet(ctx, "a", "tpl_1")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(pinnedTemplateComponents, gotTpl.Components); d != "" {
		t.Errorf("template components read back (-want +got):\n%s", d)
	}
	gotMsg, err := s.MessageGet(ctx, "a", "msg_1")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(pinnedSendComponents, gotMsg.Components); d != "" {
		t.Errorf("message components read back (-want +got):\n%s", d)
	}
}

// TestStoredIdempotencyResultsArePinned: the results of a keyed SMS accept
// are stored in their own compact form, byte for byte as earlier versions
// stored them, and read back unchanged.
func TestStoredIdempotencyResultsArePinned(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "db.sqlite"))
	ctx := context.Background()
	if err := s.SMSAccountCreate(ctx, &sms.Account{PartnerID: "p", KeyHash: []byte("h"), Senders: []string{"ACME"},
		Credit: sms.Credits(1), TimeZone: "UTC", CostPerSegment: sms.Credits(1), CreatedAt: t0, UpdatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	msg := func(id string) *sms.Message {
		return &sms.Message{ID: id, PartnerID: "p", Mobile: "254712345678", Text: "hi", Sender: "ACME", Encoding: sms.EncodingGSM7,
			Segments: 1, Cost: sms.Credits(1), Status: sms.StatusQueued, DueAt: t0, CreatedAt: t0, UpdatedAt: t0}
	}
	rec := &sms.Idempotency{PartnerID: "p", Key: "k", RequestHash: []byte("h"), Answer: []byte("{}"), CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}
	res, _, err := s.SMSAcceptIdempotent(ctx, &sms.AcceptIdempotentParams{Record: rec, Messages: []*sms.Message{msg("sms_1"), msg("sms_2")}})
	if err != nil {
		t.Fatal(err)
	}
	var got string
	if err := s.r.QueryRowContext(ctx, `SELECT results FROM sms_idempotency WHERE partner_id = 'p' AND idem_key = 'k'`).Scan(&got); err != nil {
		t.Fatal(err)
	}
	if want := `[{"n":1,"b":0},{"n":0,"b":0,"r":true}]`; got != want {
		t.Errorf("stored results:\n got %s\nwant %s", got, want)
	}
	back, err := s.SMSIdempotencyGet(ctx, &sms.IdempotencyGetParams{PartnerID: "p", Key: "k", Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(res, back.Results, cmpopts.EquateErrors()); d != "" {
		t.Errorf("results read back (-want +got):\n%s", d)
	}
}
