package sms_test

import (
	"testing"

	"github.com/ujumbe/messaging/sms"
)

// TestAddTopUp: a top-up adds once per reference; a repeat with the same
// amount answers the first top-up, with another amount it is a conflict
// naming reference; bad amounts and references, overflow and a missing
// account are refused naming the field, and a refused top-up adds nothing.
func TestAddTopUp(t *testing.T) {
	e := setup(t, nil)
	res, err := e.svc.AddTopUp(e.ctx, &sms.TopUpParams{PartnerID: partner, Amount: sms.Credits(5), Reference: "inv-1"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Replayed || res.Entry.Balance != sms.Credits(105) || res.Entry.Kind != sms.LedgerTopUp || res.Entry.Reference != "inv-1" {
		t.Fatalf("first top-up: %+v %+v", res, res.Entry)
	}
	again, err := e.svc.AddTopUp(e.ctx, &sms.TopUpParams{PartnerID: partner, Amount: sms.Credits(5), Reference: "inv-1"})
	if err != nil {
		t.Fatal(err)
	}
	if !again.Replayed || *again.Entry != *res.Entry {
		t.Errorf("repeat: %+v %+v; want the first entry, replayed", again, again.Entry)
	}
	_, err = e.svc.AddTopUp(e.ctx, &sms.TopUpParams{PartnerID: partner, Amount: sms.Credits(6), Reference: "inv-1"})
	wantCode(t, "same reference, other amount", err, sms.CodeIdempotencyConflict, "reference")

	for _, tc := range []struct {
		name  string
		p     *sms.TopUpParams
		code  int
		field string
	}{
		{"zero", &sms.TopUpParams{PartnerID: partner, Amount: 0, Reference: "r"}, sms.CodeUnsupportedDataType, "amount"},
		{"negative", &sms.TopUpParams{PartnerID: partner, Amount: -1, Reference: "r"}, sms.CodeUnsupportedDataType, "amount"},
		{"overflow", &sms.TopUpParams{PartnerID: partner, Amount: sms.MaxCredit, Reference: "r"}, sms.CodeUnsupportedDataType, "amount"},
		{"no reference", &sms.TopUpParams{PartnerID: partner, Amount: 1}, sms.CodeUnsupportedDataType, "reference"},
		{"reference with a space", &sms.TopUpParams{PartnerID: partner, Amount: 1, Reference: "a b"}, sms.CodeUnsupportedDataType, "reference"},
		{"missing account", &sms.TopUpParams{PartnerID: "missing", Amount: 1, Reference: "r"}, sms.CodeNotFound, "partnerID"},
	} {
		_, err := e.svc.AddTopUp(e.ctx, tc.p)
		wantCode(t, tc.name, err, tc.code, tc.field)
	}
	if b := e.balance(t); b != sms.Credits(105) {
		t.Errorf("balance %s after refused top-ups, want 105.00", b)
	}
	// TopUp (no reference) is refused above MaxCredit too.
	if _, err := e.svc.TopUp(e.ctx, partner, sms.MaxCredit); err == nil {
		t.Error("TopUp above MaxCredit succeeded")
	}
}

// TestLedger: the ledger pages newest first with a cursor; a bad cursor or
// limit names its field; a missing account is not found.
func TestLedger(t *testing.T) {
	e := setup(t, nil)
	for _, ref := range []string{"a", "b", "c"} {
		if _, err := e.svc.AddTopUp(e.ctx, &sms.TopUpParams{PartnerID: partner, Amount: sms.Credits(1), Reference: ref}); err != nil {
			t.Fatal(err)
		}
	}
	e.send(t, &sms.SendParams{Mobile: kenya, Message: "hi", Shortcode: "ACME"})
	page, next, err := e.svc.Ledger(e.ctx, partner, "", 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(page) != 2 || page[0].Kind != sms.LedgerCharge || page[0].Amount != -sms.Credits(1) || page[1].Reference != "c" || next == "" {
		t.Fatalf("first page %+v %+v next %q", page[0], page[1], next)
	}
	rest, next2, err := e.svc.Ledger(e.ctx, partner, next, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(rest) != 3 || rest[0].Reference != "b" || rest[2].Kind != sms.LedgerOpening || next2 != "" {
		t.Errorf("second page: %d entries, next %q", len(rest), next2)
	}
	_, _, err = e.svc.Ledger(e.ctx, partner, "x", 10)
	wantCode(t, "bad cursor", err, sms.CodeUnsupportedDataType, "cursor")
	_, _, err = e.svc.Ledger(e.ctx, partner, "", sms.MaxLedgerPage+1)
	wantCode(t, "big limit", err, sms.CodeUnsupportedDataType, "limit")
	_, _, err = e.svc.Ledger(e.ctx, "missing", "", 10)
	wantCode(t, "missing account", err, sms.CodeNotFound, "partnerID")
}
