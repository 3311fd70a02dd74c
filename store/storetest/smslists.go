package storetest

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging/sms"
)

// testSMSAccountList: accounts come in PartnerID order (byte-wise), after
// After, at most Limit, with their senders; paging by the last id lists
// each account once.
func testSMSAccountList(t *testing.T, s sms.Store) {
	ctx := context.Background()
	if got, err := s.SMSAccountList(ctx, &sms.AccountListParams{Limit: 10}); err != nil || len(got) != 0 {
		t.Fatalf("SMSAccountList of an empty store = %v, %v; want none", got, err)
	}
	for _, id := range []string{"b", "a", "B", "a-1", "c"} {
		smsAccount(t, s, id, sms.Credits(int64(len(id))))
	}
	if _, err := s.SMSAccountUpdate(ctx, &sms.AccountUpdate{PartnerID: "c", AddSenders: []string{"ZED"}, At: at(1)}); err != nil {
		t.Fatal(err)
	}
	var ids []string
	after := ""
	for range 10 {
		page, err := s.SMSAccountList(ctx, &sms.AccountListParams{After: after, Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		if len(page) > 2 {
			t.Fatalf("a page of limit 2 has %d accounts", len(page))
		}
		if len(page) == 0 {
			break
		}
		for _, a := range page {
			ids = append(ids, a.PartnerID)
			if a.PartnerID == "c" && !cmp.Equal(a.Senders, []string{"ACME", "ZED"}) {
				t.Errorf("listed account c has senders %v; want [ACME ZED]", a.Senders)
			}
			if a.PartnerID == "a-1" && a.Credit != sms.Credits(3) {
				t.Errorf("listed account a-1 has credit %s; want 3.00", a.Credit)
			}
		}
		after = page[len(page)-1].PartnerID
	}
	if d := cmp.Diff([]string{"B", "a", "a-1", "b", "c"}, ids); d != "" {
		t.Errorf("accounts over the pages (-want +got):\n%s", d)
	}
}

// testSMSMessageList: an account's messages come newest (highest Number)
// first, below Before, at most Limit, with their reports; another
// account's messages never show.
func testSMSMessageList(t *testing.T, s sms.Store) {
	ctx := context.Background()
	smsAccount(t, s, "a", sms.Credits(100))
	smsAccount(t, s, "b", sms.Credits(100))
	var numbers []int64 // of a, oldest first
	for i := range 5 {
		res := smsAccept(t, s, smsMessage("la"+string(rune('0'+i)), "a", sms.Credits(1), sms.StatusQueued, at(0)),
			smsMessage("lb"+string(rune('0'+i)), "b", sms.Credits(1), sms.StatusQueued, at(0)))
		numbers = append(numbers, res[0].Number)
	}
	report := &sms.Report{Status: 1, Description: sms.DeliveredToTerminal, NetworkID: "254", Time: at(9)}
	if _, err := s.SMSReportSave(ctx, &sms.ReportSaveParams{PartnerID: "a", Number: numbers[3], Report: report}); err != nil {
		t.Fatal(err)
	}
	list := func(before int64, limit int) []int64 {
		t.Helper()
		got, err := s.SMSMessageList(ctx, &sms.MessageListParams{PartnerID: "a", Before: before, Limit: limit})
		if err != nil {
			t.Fatal(err)
		}
		var ns []int64
		for _, m := range got {
			if m.PartnerID != "a" {
				t.Errorf("message %d of account %s listed for a", m.Number, m.PartnerID)
			}
			if m.Number == numbers[3] && (m.Report == nil || !cmp.Equal(*m.Report, *report)) {
				t.Errorf("listed message %d has report %+v; want %+v", m.Number, m.Report, report)
			}
			ns = append(ns, m.Number)
		}
		return ns
	}
	if d := cmp.Diff([]int64{numbers[4], numbers[3]}, list(0, 2)); d != "" {
		t.Errorf("first page (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]int64{numbers[2], numbers[1], numbers[0]}, list(numbers[3], 10)); d != "" {
		t.Errorf("page before %d (-want +got):\n%s", numbers[3], d)
	}
	if got, err := s.SMSMessageList(ctx, &sms.MessageListParams{PartnerID: "missing", Limit: 10}); err != nil || len(got) != 0 {
		t.Errorf("messages of an unknown account = %v, %v; want none", got, err)
	}
}
