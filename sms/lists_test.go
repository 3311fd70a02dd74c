package sms_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging/sms"
)

// TestAccountsListing: every account in partnerID order over pages; a bad limit
// or cursor names its field.
func TestAccountsListing(t *testing.T) {
	e := setup(t, nil)
	for _, id := range []string{"zeta", "alpha", "5678"} {
		if _, _, err := e.svc.CreateAccount(e.ctx, &sms.CreateAccountParams{PartnerID: id}); err != nil {
			t.Fatal(err)
		}
	}
	var ids []string
	cursor := ""
	for range 10 {
		page, next, err := e.svc.Accounts(e.ctx, cursor, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range page {
			ids = append(ids, a.PartnerID)
		}
		if cursor = next; cursor == "" {
			break
		}
	}
	if d := cmp.Diff([]string{"1234", "5678", "alpha", "zeta"}, ids); d != "" {
		t.Errorf("accounts over the pages (-want +got):\n%s", d)
	}
	_, _, err := e.svc.Accounts(e.ctx, "", MaxListPagePlusOne)
	wantCode(t, "limit too large", err, sms.CodeUnsupportedDataType, "limit")
	_, _, err = e.svc.Accounts(e.ctx, "not a cursor!", 0)
	wantCode(t, "bad cursor", err, sms.CodeUnsupportedDataType, "cursor")
}

// MaxListPagePlusOne is one more than the largest page.
const MaxListPagePlusOne = sms.MaxListPage + 1

// TestMessages: an account's messages newest first over pages, with the
// delivery report known for each (scheduled, delivered once fetched,
// none yet for a queued one); another account's messages never show.
func TestMessages(t *testing.T) {
	e := setup(t, nil)
	first := e.send(t, &sms.SendParams{Message: "first"})
	e.clk.Add(time.Second)
	e.runDue(t)
	e.clk.Add(time.Minute) // past the fake gateway's delay
	if _, err := e.svc.DeliveryReport(e.ctx, &sms.ReportParams{APIKey: apikey, PartnerID: partner, MessageID: first.ProviderMessageID}); err != nil {
		t.Fatal(err)
	}
	second := e.send(t, &sms.SendParams{Message: "second"})
	nairobi, err := time.LoadLocation("Africa/Nairobi") // the account's zone
	if err != nil {
		t.Fatal(err)
	}
	third := e.send(t, &sms.SendParams{Message: "third", TimeToSend: e.clk.Now().Add(time.Hour).In(nairobi).Format("2006-01-02 15:04")})
	if _, _, err := e.svc.CreateAccount(e.ctx, &sms.CreateAccountParams{PartnerID: "other", Senders: []string{"ACME"}, Credit: sms.Credits(5)}); err != nil {
		t.Fatal(err)
	}

	page, next, err := e.svc.Messages(e.ctx, partner, "", 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(page) != 2 || next == "" {
		t.Fatalf("first page: %d messages, next %q", len(page), next)
	}
	rest, next2, err := e.svc.Messages(e.ctx, partner, next, 2)
	if err != nil || next2 != "" {
		t.Fatalf("second page: %v, next %q", err, next2)
	}
	var got []string
	for _, m := range append(page, rest...) {
		desc := "none"
		if r := m.KnownReport(); r != nil {
			desc = r.Description
		}
		got = append(got, strconv.FormatInt(m.Number, 10)+" "+m.Text+" "+m.Status+" "+desc)
	}
	want := []string{
		third.ProviderMessageID + " third scheduled " + sms.DeliveryScheduled,
		second.ProviderMessageID + " second queued none",
		first.ProviderMessageID + " first sent " + sms.DeliveredToTerminal,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("messages (-want +got):\n%s", d)
	}
	if other, _, err := e.svc.Messages(e.ctx, "other", "", 0); err != nil || len(other) != 0 {
		t.Errorf("messages of another account: %d, %v; want none", len(other), err)
	}
	_, _, err = e.svc.Messages(e.ctx, "missing", "", 0)
	wantCode(t, "missing account", err, sms.CodeNotFound, "partnerID")
	_, _, err = e.svc.Messages(e.ctx, partner, "-3", 0)
	wantCode(t, "bad cursor", err, sms.CodeUnsupportedDataType, "cursor")
	_, _, err = e.svc.Messages(e.ctx, partner, "", -1)
	wantCode(t, "bad limit", err, sms.CodeUnsupportedDataType, "limit")
}
