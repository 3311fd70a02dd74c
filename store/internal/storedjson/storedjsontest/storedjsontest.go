// Package storedjsontest holds the values whose stored JSON is pinned, and
// the check of the SQL stores' TestStoredEncodingIsPinned: databases
// written by earlier versions must read back, so the stored form never
// follows the API's JSON tags. The values hold what the encoding must keep
// apart: a nil and an empty list, characters JSON escapes, omitted empty
// fields.
package storedjsontest

import (
	"context"
	"testing"
	"time"

	"github.com/ujumbe/messaging/store/driver"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
)

// TemplateComponents returns the template components stored as
// TemplateJSON.
func TemplateComponents() []messaging.TemplateComponent {
	return []messaging.TemplateComponent{
		{Type: "HEADER", Format: "TEXT", Text: "Order {{1}}"},
		{Type: "BODY", Text: "Hi {{1}}, <é> & ✓", Buttons: []messaging.TemplateButton{}},
		{Type: "BUTTONS", Buttons: []messaging.TemplateButton{
			{Type: "URL", Text: "Track", URL: "https://x.example/t/{{1}}"},
			{Type: "PHONE_NUMBER", Text: "Call", PhoneNumber: "+254700000000"},
			{Type: "COPY_CODE", Example: "CODE1"},
			{Type: "QUICK_REPLY", Text: "Stop"},
		}},
	}
}

// SendComponents returns the send components stored as SendJSON.
func SendComponents() []messaging.SendComponent {
	return []messaging.SendComponent{
		{Type: "header", Parameters: []messaging.SendParameter{{Type: "document", Link: "https://x.example/f.pdf", Filename: "f.pdf"}}},
		{Type: "body", Parameters: []messaging.SendParameter{{Type: "text", Text: "A&B <é>"}, {Type: "image", Link: "https://x.example/i.png"}}},
		{Type: "button", SubType: "url", Index: new(0), Parameters: []messaging.SendParameter{{Type: "text", Text: "T1"}}},
		{Type: "button", SubType: "copy_code", Index: new(1), Parameters: []messaging.SendParameter{{Type: "coupon_code", CouponCode: "C1"}}},
		{Type: "button", SubType: "quick_reply", Index: new(2), Parameters: []messaging.SendParameter{{Type: "payload", Payload: "P1"}}},
		{Type: "body", Parameters: []messaging.SendParameter{}},
		{Type: "body"},
	}
}

// The stored JSON of TemplateComponents and SendComponents.
const (
	TemplateJSON = `[{"type":"HEADER","format":"TEXT","text":"Order {{1}}","buttons":null},{"type":"BODY","text":"Hi {{1}}, \u003cé\u003e \u0026 ✓","buttons":[]},{"type":"BUTTONS","buttons":[{"type":"URL","text":"Track","url":"https://x.example/t/{{1}}"},{"type":"PHONE_NUMBER","text":"Call","phone_number":"+254700000000"},{"type":"COPY_CODE","example":"CODE1"},{"type":"QUICK_REPLY","text":"Stop"}]}]`
	SendJSON     = `[{"type":"header","parameters":[{"type":"document","link":"https://x.example/f.pdf","filename":"f.pdf"}]},{"type":"body","parameters":[{"type":"text","text":"A\u0026B \u003cé\u003e"},{"type":"image","link":"https://x.example/i.png"}]},{"type":"button","sub_type":"url","index":0,"parameters":[{"type":"text","text":"T1"}]},{"type":"button","sub_type":"copy_code","index":1,"parameters":[{"type":"coupon_code","coupon_code":"C1"}]},{"type":"button","sub_type":"quick_reply","index":2,"parameters":[{"type":"payload","payload":"P1"}]},{"type":"body","parameters":[]},{"type":"body","parameters":null}]`
)

// CheckPinned stores a template and a message whose components are
// TemplateComponents and SendComponents in s, a store with no workspace
// "a", and checks that their stored JSON is TemplateJSON and SendJSON and
// that they read back unchanged. stored reads the components column of the
// row id of table: what the database holds, and whether it is want (a store
// may compare otherwise than byte for byte).
func CheckPinned(t *testing.T, s driver.Store, stored func(table, id, want string) (got string, same bool, err error)) {
	t.Helper()
	ctx := context.Background()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	if err := s.WorkspaceCreate(ctx, &messaging.WorkspaceInfo{ID: "a", Name: "A", Channels: []string{}, CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	tpl := &messaging.Template{ID: "tpl_1", WorkspaceID: "a", Name: "n", Category: "UTILITY", Language: "en", Status: "PENDING",
		Components: TemplateComponents(), CreatedAt: t0, UpdatedAt: t0}
	if err := s.TemplateCreate(ctx, tpl); err != nil {
		t.Fatal(err)
	}
	msg := &messaging.Message{ID: "msg_1", WorkspaceID: "a", Channel: "whatsapp", To: "+254712345678", Direction: "outbound",
		Status: "queued", Type: "template", TemplateName: "n", Language: "en", Components: SendComponents(),
		CreatedAt: t0, UpdatedAt: t0, DueAt: t0}
	if _, _, err := s.MessageCreate(ctx, msg); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ what, table, id, want string }{
		{"template components", "templates", "tpl_1", TemplateJSON},
		{"message components", "messages", "msg_1", SendJSON},
	} {
		got, same, err := stored(c.table, c.id, c.want)
		if err != nil {
			t.Fatal(err)
		}
		if !same {
			t.Errorf("stored %s:\n got %s\nwant %s", c.what, got, c.want)
		}
	}
	gotTpl, err := s.TemplateGet(ctx, "a", "tpl_1")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(TemplateComponents(), gotTpl.Components); d != "" {
		t.Errorf("template components read back (-want +got):\n%s", d)
	}
	gotMsg, err := s.MessageGet(ctx, "a", "msg_1")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(SendComponents(), gotMsg.Components); d != "" {
		t.Errorf("message components read back (-want +got):\n%s", d)
	}
}
