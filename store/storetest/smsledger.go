package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/sms"
)

func smsLedger(t *testing.T, s sms.Store, partnerID string, before int64, limit int) []*sms.LedgerEntry {
	t.Helper()
	got, err := s.SMSLedger(context.Background(), &sms.LedgerParams{PartnerID: partnerID, Before: before, Limit: limit})
	if err != nil {
		t.Fatalf("SMSLedger(%s): %v", partnerID, err)
	}
	return got
}

func smsTopUp(t *testing.T, s sms.Store, partnerID, ref string, amount sms.Credit, sec int) (e, prev *sms.LedgerEntry) {
	t.Helper()
	e, prev, err := s.SMSCreditAdd(context.Background(), &sms.CreditAddParams{PartnerID: partnerID, Amount: amount, Reference: ref, Max: sms.MaxCredit, At: at(sec)})
	if err != nil {
		t.Fatalf("SMSCreditAdd(%s, %q): %v", partnerID, ref, err)
	}
	return e, prev
}

// testSMSLedgerRecordsEveryChange: the opening credit, a top-up, the
// charge of each accepted message (not of one refused for credit) and the
// refund of a failed message are entries of the account's ledger, newest
// first, each with the balance after it; they add up to the credit; pages
// follow Before; another account's entries never show.
func testSMSLedgerRecordsEveryChange(t *testing.T, s sms.Store) {
	ctx := context.Background()
	smsAccount(t, s, "a", sms.Credits(2))
	smsAccount(t, s, "b", 0)
	e, prev := smsTopUp(t, s, "a", "inv-1", sms.Credits(1), 1)
	if prev != nil || e == nil || e.Balance != sms.Credits(3) || e.Kind != sms.LedgerTopUp || e.Reference != "inv-1" || e.Seq == 0 {
		t.Fatalf("top-up: entry %+v, prev %+v; want a top_up of balance 3.00", e, prev)
	}
	smsTopUp(t, s, "b", "inv-1", sms.Credits(7), 1)
	m1, m2, m3 := smsMessage("l1", "a", sms.Credits(1), sms.StatusQueued, at(2)), smsMessage("l2", "a", sms.Credits(1), sms.StatusQueued, at(2)), smsMessage("l3", "a", sms.Credits(5), sms.StatusQueued, at(2))
	m1.CreatedAt, m2.CreatedAt, m3.CreatedAt = at(2), at(2), at(2)
	res := smsAccept(t, s, m1, m2, m3)
	if res[2].Err == nil {
		t.Fatalf("the third message was accepted with credit 1.00 left: %+v", res)
	}
	claimed := smsClaim(t, s, at(3), "tok", 10)
	if len(claimed) != 2 {
		t.Fatalf("claimed %d messages, want 2", len(claimed))
	}
	if _, err := s.SMSComplete(ctx, []*sms.Completion{
		{Number: res[0].Number, Token: "tok", Status: sms.StatusSent, GatewayMessageID: "gw", At: at(4)},
		{Number: res[1].Number, Token: "tok", Status: sms.StatusFailed, FailureReason: "refused", At: at(4)},
	}); err != nil {
		t.Fatal(err)
	}
	got := smsLedger(t, s, "a", 0, 10)
	want := []*sms.LedgerEntry{
		{PartnerID: "a", Kind: sms.LedgerRefund, Amount: sms.Credits(1), Balance: sms.Credits(2), MessageNumber: res[1].Number, At: at(4)},
		{PartnerID: "a", Kind: sms.LedgerCharge, Amount: -sms.Credits(1), Balance: sms.Credits(1), MessageNumber: res[1].Number, At: at(2)},
		{PartnerID: "a", Kind: sms.LedgerCharge, Amount: -sms.Credits(1), Balance: sms.Credits(2), MessageNumber: res[0].Number, At: at(2)},
		{PartnerID: "a", Kind: sms.LedgerTopUp, Amount: sms.Credits(1), Balance: sms.Credits(3), Reference: "inv-1", At: at(1)},
		{PartnerID: "a", Kind: sms.LedgerOpening, Amount: sms.Credits(2), Balance: sms.Credits(2), At: base},
	}
	if d := cmp.Diff(want, got, cmpopts.IgnoreFields(sms.LedgerEntry{}, "Seq")); d != "" {
		t.Fatalf("ledger of a (-want +got):\n%s", d)
	}
	var total sms.Credit
	for i, e := range got {
		total += e.Amount
		if i > 0 && e.Seq >= got[i-1].Seq {
			t.Errorf("entry %d has Seq %d after %d: want newest (highest Seq) first", i, e.Seq, got[i-1].Seq)
		}
	}
	if c := smsCredit(t, s, "a"); total != c {
		t.Errorf("the ledger adds up to %s, the credit is %s", total, c)
	}
	page := smsLedger(t, s, "a", got[1].Seq, 2)
	if d := cmp.Diff(got[2:4], page); d != "" {
		t.Errorf("page before Seq %d, limit 2 (-want +got):\n%s", got[1].Seq, d)
	}
	if b := smsLedger(t, s, "b", 0, 10); len(b) != 1 || b[0].Amount != sms.Credits(7) {
		t.Errorf("ledger of b: %+v; want its one top-up (no opening entry for a zero credit)", b)
	}
	if n := smsLedger(t, s, "missing", 0, 10); len(n) != 0 {
		t.Errorf("ledger of a missing account: %+v", n)
	}
}

// testSMSTopUpReference: a top-up whose reference the account used
// already changes nothing and returns the first one as prev, whatever its
// amount; references are scoped to accounts; top-ups without a reference
// are never taken for one another.
func testSMSTopUpReference(t *testing.T, s sms.Store) {
	smsAccount(t, s, "a", 0)
	smsAccount(t, s, "b", 0)
	first, _ := smsTopUp(t, s, "a", "pay-9", sms.Credits(5), 1)
	for _, amount := range []sms.Credit{sms.Credits(5), sms.Credits(6)} {
		e, prev := smsTopUp(t, s, "a", "pay-9", amount, 2)
		if e != nil || prev == nil || *prev != *first {
			t.Errorf("repeat of pay-9 with %s: entry %+v, prev %+v; want nil and the first %+v", amount, e, prev, first)
		}
	}
	if c := smsCredit(t, s, "a"); c != sms.Credits(5) {
		t.Errorf("credit after repeats %s, want 5.00", c)
	}
	if e, prev := smsTopUp(t, s, "b", "pay-9", sms.Credits(1), 3); e == nil || prev != nil {
		t.Errorf("pay-9 in another account: entry %+v, prev %+v; want a new top-up", e, prev)
	}
	smsTopUp(t, s, "a", "", sms.Credits(1), 4)
	if e, prev := smsTopUp(t, s, "a", "", sms.Credits(1), 5); e == nil || prev != nil {
		t.Errorf("a second top-up without reference: entry %+v, prev %+v; want a new top-up", e, prev)
	}
	if c := smsCredit(t, s, "a"); c != sms.Credits(7) {
		t.Errorf("credit %s, want 7.00", c)
	}
	if n := len(smsLedger(t, s, "a", 0, 10)); n != 3 {
		t.Errorf("a has %d ledger entries, want 3", n)
	}
}

// testSMSTopUpOverflow: a top-up that would take the credit above Max is
// ErrCreditOverflow and changes nothing; up to Max exactly is allowed; a
// missing account is ErrNotFound.
func testSMSTopUpOverflow(t *testing.T, s sms.Store) {
	ctx := context.Background()
	smsAccount(t, s, "a", sms.MaxCredit-100)
	_, _, err := s.SMSCreditAdd(ctx, &sms.CreditAddParams{PartnerID: "a", Amount: 101, Reference: "big", Max: sms.MaxCredit, At: at(1)})
	wantErr(t, "a top-up above Max", err, sms.ErrCreditOverflow)
	if c := smsCredit(t, s, "a"); c != sms.MaxCredit-100 {
		t.Errorf("credit %s after a refused top-up, want %s", c, sms.MaxCredit-100)
	}
	if n := len(smsLedger(t, s, "a", 0, 10)); n != 1 {
		t.Errorf("%d ledger entries after a refused top-up, want the opening one", n)
	}
	// The refused reference is free.
	if e, _ := smsTopUp(t, s, "a", "big", 100, 2); e == nil || e.Balance != sms.MaxCredit {
		t.Errorf("a top-up to Max exactly: %+v", e)
	}
	_, _, err = s.SMSCreditAdd(ctx, &sms.CreditAddParams{PartnerID: "missing", Amount: 1, Reference: "x", Max: sms.MaxCredit, At: at(1)})
	wantErr(t, "a top-up of a missing account", err, messaging.ErrNotFound)
}

// testSMSConcurrentTopUps: concurrent top-ups with one reference add once.
func testSMSConcurrentTopUps(t *testing.T, s sms.Store) {
	smsAccount(t, s, "a", 0)
	var wg sync.WaitGroup
	var mu sync.Mutex
	added := 0
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e, _, err := s.SMSCreditAdd(context.Background(), &sms.CreditAddParams{PartnerID: "a", Amount: sms.Credits(3), Reference: "once", Max: sms.MaxCredit, At: at(i)})
			if err != nil {
				errs <- fmt.Errorf("SMSCreditAdd %d: %w", i, err)
				return
			}
			if e != nil {
				mu.Lock()
				added++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if !errors.Is(err, messaging.ErrUnavailable) {
			t.Error(err)
		}
	}
	if c := smsCredit(t, s, "a"); added != 1 || c != sms.Credits(3) {
		t.Errorf("%d of 8 concurrent top-ups with one reference added; credit %s; want 1 and 3.00", added, c)
	}
}

// testSMSAcceptLargeBatch: in batches of several sizes, up to more than a
// bulk request's, from two accounts, one of whose credit runs out
// half-way, each accepted message is stored under the number of its
// result, in the batch's order, and has one charge of its cost with the
// balance of its result; a refused message is neither stored nor charged.
func testSMSAcceptLargeBatch(t *testing.T, s sms.Store) {
	ctx := context.Background()
	smsAccount(t, s, "a", sms.Credits(1000))
	smsAccount(t, s, "b", sms.Credits(20))
	want := map[string][]*sms.LedgerEntry{}
	var last int64
	refused := 0
	for _, size := range []int{1, 7, 20, 45} {
		var msgs []*sms.Message
		for i := range size {
			partner := "a"
			if i%3 == 1 {
				partner = "b"
			}
			m := smsMessage(fmt.Sprintf("big-%d-%02d", size, i), partner, sms.Credits(int64(1+i%4)), sms.StatusQueued, at(i))
			m.CreatedAt = at(i)
			msgs = append(msgs, m)
		}
		res := smsAccept(t, s, msgs...)
		for i, m := range msgs {
			r := res[i]
			if r.Err != nil {
				refused++
				if !errors.Is(r.Err, sms.ErrInsufficientCredit) || r.Number != 0 {
					t.Errorf("%s: %+v, want accepted or ErrInsufficientCredit without number", m.ID, r)
				}
				continue
			}
			if r.Number <= last {
				t.Errorf("%s: number %d after %d: want numbers in the batch's order", m.ID, r.Number, last)
			}
			last = r.Number
			got, err := s.SMSMessageGet(ctx, m.PartnerID, r.Number)
			if err != nil {
				t.Fatalf("SMSMessageGet(%s, %d): %v", m.PartnerID, r.Number, err)
			}
			if got.ID != m.ID || got.ClientSMSID != m.ClientSMSID || got.Cost != m.Cost || got.Text != m.Text {
				t.Errorf("message %d is %s (%s, cost %s), want %s (%s, cost %s)", r.Number, got.ID, got.ClientSMSID, got.Cost, m.ID, m.ClientSMSID, m.Cost)
			}
			want[m.PartnerID] = append([]*sms.LedgerEntry{{PartnerID: m.PartnerID, Kind: sms.LedgerCharge, Amount: -m.Cost,
				Balance: r.Balance, MessageNumber: r.Number, At: m.CreatedAt}}, want[m.PartnerID]...)
		}
	}
	if refused == 0 || len(want["b"]) == 0 {
		t.Fatalf("%d messages refused, %d of b's accepted: want some of b's refused, not all", refused, len(want["b"]))
	}
	for _, p := range []string{"a", "b"} {
		got := smsLedger(t, s, p, 0, 200)
		if len(got) > 0 {
			got = got[:len(got)-1] // the opening entry
		}
		if d := cmp.Diff(want[p], got, cmpopts.IgnoreFields(sms.LedgerEntry{}, "Seq")); d != "" {
			t.Errorf("charges of %s, newest first (-want +got):\n%s", p, d)
		}
	}
}
