package sms_test

import (
	"strings"
	"testing"

	"github.com/ujumbe/messaging/sms"
)

// TestGoCallersMeetTheTextRule: a Go program calling the SMS service
// directly gets 1009 naming the field for a NUL or invalid UTF-8 in any
// text (PostgreSQL cannot store either), before anything is charged; in a
// bulk only that item is refused.
func TestGoCallersMeetTheTextRule(t *testing.T) {
	t.Parallel()
	e := setup(t, nil)
	for _, tc := range []struct {
		name  string
		p     sms.SendParams
		field string
	}{
		{"message", sms.SendParams{Message: "a\x00b"}, "message"},
		{"shortcode", sms.SendParams{Shortcode: "AC\xffME"}, "shortcode"},
		{"partnerID", sms.SendParams{PartnerID: partner + "\x00"}, "partnerID"},
		{"timeToSend", sms.SendParams{TimeToSend: "2026-03-05 10:00\x00"}, "timeToSend"},
	} {
		p := tc.p
		if p.PartnerID == "" {
			p.PartnerID = partner
		}
		p.APIKey, p.Mobile = apikey, kenya
		if p.Shortcode == "" {
			p.Shortcode = "ACME"
		}
		if p.Message == "" {
			p.Message = "Hello"
		}
		_, err := e.svc.Send(e.ctx, &p)
		wantCode(t, tc.name, err, sms.CodeUnsupportedDataType, tc.field)
	}
	res, err := e.svc.SendBulk(e.ctx, []*sms.BulkItem{
		{PartnerID: partner, APIKey: apikey, Mobile: kenya, Message: "ok", Shortcode: "ACME"},
		{PartnerID: partner, APIKey: apikey, Mobile: kenya, Message: "bad\x00", Shortcode: "ACME"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Code != sms.CodeSuccess {
		t.Errorf("the good item was refused: %d %s", res[0].Code, res[0].Description)
	}
	if res[1].Code != sms.CodeUnsupportedDataType || !strings.HasPrefix(res[1].Description, "Unsupported data type: message:") {
		t.Errorf("the item with a NUL: %d %q; want 1009 naming message", res[1].Code, res[1].Description)
	}
	if b := e.balance(t); b != sms.Credits(99) {
		t.Errorf("balance %s; want 99.00 (only the good item charged)", b)
	}
}
