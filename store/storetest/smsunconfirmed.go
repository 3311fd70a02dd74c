package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/sms"
)

// smsMark returns the stored UnconfirmedSince of message number n.
func smsMark(t *testing.T, s sms.Store, partner string, n int64) *time.Time {
	t.Helper()
	m, err := s.SMSMessageGet(context.Background(), partner, n)
	if err != nil {
		t.Fatalf("SMSMessageGet(%d): %v", n, err)
	}
	return m.UnconfirmedSince
}

// sameMark reports whether the marks a and b are both nil or equal.
func sameMark(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Equal(*b)
}

func markText(m *time.Time) string {
	if m == nil {
		return "none"
	}
	return m.UTC().Format(time.RFC3339Nano)
}

func ptr(t time.Time) *time.Time { return &t }

// testSMSClaimMarksUnconfirmed: the claim marks each claimed message as
// possibly handed over (UnconfirmedSince, when it has none or its mark is
// at or before RenewMarksBefore) and returns the marks as they were;
// a queued outcome with Unconfirmed keeps the mark, every other outcome
// clears it.
func testSMSClaimMarksUnconfirmed(t *testing.T, s sms.Store) {
	ctx := context.Background()
	smsAccount(t, s, "p1", sms.Credits(10))
	res := smsAccept(t, s, smsMessage("keep", "p1", sms.Credits(1), sms.StatusQueued, at(0)),
		smsMessage("release", "p1", sms.Credits(1), sms.StatusQueued, at(0)),
		smsMessage("fail", "p1", sms.Credits(1), sms.StatusQueued, at(0)))
	keep, release, fail := res[0].Number, res[1].Number, res[2].Number
	check := func(step string, n int64, want *time.Time) {
		t.Helper()
		if got := smsMark(t, s, "p1", n); !sameMark(got, want) {
			t.Errorf("%s: message %d stored mark %s, want %s", step, n, markText(got), markText(want))
		}
	}
	claim := func(step string, now time.Time, renew time.Time, token string, want map[int64]*time.Time) {
		t.Helper()
		got, err := s.SMSClaimDue(ctx, &sms.ClaimParams{Now: now, LeaseUntil: now.Add(time.Minute), Token: token, Limit: 10, RenewMarksBefore: renew})
		if err != nil {
			t.Fatalf("%s: SMSClaimDue: %v", step, err)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: claimed %v, want %d messages", step, smsIDs(got), len(want))
		}
		for _, m := range got {
			w, ok := want[m.Number]
			if !ok {
				t.Errorf("%s: claimed message %d, not expected", step, m.Number)
				continue
			}
			if !sameMark(m.UnconfirmedSince, w) {
				t.Errorf("%s: claimed message %d carries the mark %s, want the mark before the claim, %s", step, m.Number, markText(m.UnconfirmedSince), markText(w))
			}
		}
	}

	claim("first claim", at(1), time.Time{}, "t1", map[int64]*time.Time{keep: nil, release: nil, fail: nil})
	for _, n := range []int64{keep, release, fail} {
		check("after the first claim", n, ptr(at(1)))
	}
	errs, err := s.SMSComplete(ctx, []*sms.Completion{
		{Number: keep, Token: "t1", Status: sms.StatusQueued, RetryAt: at(10), Unconfirmed: true, At: at(2)},
		{Number: release, Token: "t1", Status: sms.StatusQueued, RetryAt: at(10), At: at(2)},
		{Number: fail, Token: "t1", Status: sms.StatusFailed, FailureReason: "refused", At: at(2)},
	})
	if err != nil || errors.Join(errs...) != nil {
		t.Fatalf("SMSComplete: %v %v", errs, err)
	}
	check("queued with Unconfirmed", keep, ptr(at(1)))
	check("released without Unconfirmed", release, nil)
	check("failed", fail, nil)

	// A mark after RenewMarksBefore is kept; a message without one gets
	// the claim's time.
	claim("second claim", at(10), at(0), "t2", map[int64]*time.Time{keep: ptr(at(1)), release: nil})
	check("second claim kept the mark", keep, ptr(at(1)))
	check("second claim marked", release, ptr(at(10)))
	errs, err = s.SMSComplete(ctx, []*sms.Completion{
		{Number: keep, Token: "t2", Status: sms.StatusQueued, RetryAt: at(20), Unconfirmed: true, Untried: true, At: at(11)},
		{Number: release, Token: "t2", Status: sms.StatusQueued, RetryAt: at(20), Unconfirmed: true, At: at(11)},
	})
	if err != nil || errors.Join(errs...) != nil {
		t.Fatalf("SMSComplete: %v %v", errs, err)
	}
	// A claim that handed nothing over (Untried) gives its attempt back.
	for n, want := range map[int64]int{keep: 1, release: 2} {
		if m, err := s.SMSMessageGet(ctx, "p1", n); err != nil || m.Attempts != want {
			t.Errorf("after the second claim's outcome: message %d has %v attempts (%v), want %d", n, m.Attempts, err, want)
		}
	}

	// A mark at or before RenewMarksBefore is replaced by Now; the claim
	// still returns it as it was.
	claim("third claim", at(20), at(5), "t3", map[int64]*time.Time{keep: ptr(at(1)), release: ptr(at(10))})
	check("third claim renewed the old mark", keep, ptr(at(20)))
	check("third claim kept the recent mark", release, ptr(at(10)))
	errs, err = s.SMSComplete(ctx, []*sms.Completion{
		{Number: keep, Token: "t3", Status: sms.StatusSent, GatewayMessageID: "gw-keep", NetworkID: "1", At: at(21)},
		{Number: release, Token: "t3", Status: sms.StatusQueued, RetryAt: at(30), Unconfirmed: true, At: at(21)},
	})
	if err != nil || errors.Join(errs...) != nil {
		t.Fatalf("SMSComplete: %v %v", errs, err)
	}
	check("sent", keep, nil)
	check("queued again with Unconfirmed", release, ptr(at(10)))
	// A lost claim changes nothing, the mark included.
	errs, err = s.SMSComplete(ctx, []*sms.Completion{{Number: release, Token: "t3", Status: sms.StatusQueued, RetryAt: at(40), At: at(22)}})
	if err != nil || len(errs) != 1 || !errors.Is(errs[0], driver.ErrStale) {
		t.Fatalf("SMSComplete of a lost claim: %v %v, want ErrStale", errs, err)
	}
	check("stale outcome", release, ptr(at(10)))
}

// testSMSConfirm: SMSConfirm records a hand-over of unknown outcome (a
// marked message, queued or sending) as accepted under the upstream's id,
// clears the mark and the claim; it changes nothing for a message without
// a mark or one whose outcome was recorded; ErrNotFound for no message.
func testSMSConfirm(t *testing.T, s sms.Store) {
	ctx := context.Background()
	smsAccount(t, s, "p1", sms.Credits(10))
	smsAccount(t, s, "p2", sms.Credits(10))
	res := smsAccept(t, s, smsMessage("waiting", "p1", sms.Credits(1), sms.StatusQueued, at(0)),
		smsMessage("claimed", "p2", sms.Credits(1), sms.StatusQueued, at(0)),
		smsMessage("later", "p1", sms.Credits(1), sms.StatusQueued, at(100)))
	waiting, claimed, later := res[0].Number, res[1].Number, res[2].Number
	if got := smsClaim(t, s, at(1), "t1", 10); len(got) != 2 {
		t.Fatalf("claimed %v, want 2", smsIDs(got))
	}
	errs, err := s.SMSComplete(ctx, []*sms.Completion{{Number: waiting, Token: "t1", Status: sms.StatusQueued, RetryAt: at(300), Unconfirmed: true,
		FailureReason: "unknown", At: at(2)}})
	if err != nil || errors.Join(errs...) != nil {
		t.Fatalf("SMSComplete: %v %v", errs, err)
	}

	// Never claimed: nothing to confirm.
	m, ok, err := s.SMSConfirm(ctx, &sms.ConfirmParams{Number: later, GatewayMessageID: "gw-x", At: at(3)})
	if err != nil || ok || m == nil || m.Number != later || m.Status != sms.StatusQueued || m.GatewayMessageID != "" {
		t.Fatalf("SMSConfirm of an unmarked message: %+v, %v, %v; want it unchanged and false", m, ok, err)
	}
	// Queued, waiting for its window.
	m, ok, err = s.SMSConfirm(ctx, &sms.ConfirmParams{Number: waiting, GatewayMessageID: "gw-w", NetworkID: "7", At: at(3)})
	if err != nil || !ok {
		t.Fatalf("SMSConfirm of a waiting message: %v, %v; want true", ok, err)
	}
	if m.Status != sms.StatusSent || m.GatewayMessageID != "gw-w" || m.NetworkID != "7" || m.SentAt == nil || !m.SentAt.Equal(at(3)) ||
		m.UnconfirmedSince != nil || m.FailureReason != "" || m.PartnerID != "p1" {
		t.Errorf("confirmed message %+v", m)
	}
	if got, err := s.SMSMessageGet(ctx, "p1", waiting); err != nil || got.Status != sms.StatusSent || got.UnconfirmedSince != nil {
		t.Errorf("stored after SMSConfirm: %+v, %v", got, err)
	}
	if got, err := s.SMSMessageByGatewayID(ctx, "gw-w"); err != nil || got.Number != waiting {
		t.Errorf("SMSMessageByGatewayID(gw-w): %+v, %v", got, err)
	}
	// Once recorded, a second confirmation changes nothing.
	m, ok, err = s.SMSConfirm(ctx, &sms.ConfirmParams{Number: waiting, GatewayMessageID: "gw-other", At: at(4)})
	if err != nil || ok || m.GatewayMessageID != "gw-w" || !m.SentAt.Equal(at(3)) {
		t.Errorf("second SMSConfirm: %+v, %v, %v; want the first id kept and false", m, ok, err)
	}
	// Sending under a claim (of another account): confirmed, the network
	// kept when none is given, and the claim's own outcome is stale.
	m, ok, err = s.SMSConfirm(ctx, &sms.ConfirmParams{Number: claimed, GatewayMessageID: "gw-c", At: at(5)})
	if err != nil || !ok || m.Status != sms.StatusSent || m.ClaimToken != "" || m.NetworkID != "254" || m.PartnerID != "p2" {
		t.Fatalf("SMSConfirm of a claimed message: %+v, %v, %v", m, ok, err)
	}
	errs, err = s.SMSComplete(ctx, []*sms.Completion{{Number: claimed, Token: "t1", Status: sms.StatusSent, GatewayMessageID: "gw-late", At: at(6)}})
	if err != nil || len(errs) != 1 || !errors.Is(errs[0], driver.ErrStale) {
		t.Errorf("SMSComplete after SMSConfirm: %v, %v; want ErrStale", errs, err)
	}
	if got := smsClaim(t, s, at(1000), "t2", 10); len(got) != 1 || got[0].Number != later {
		t.Errorf("claim after the confirmations: %v, want only the unconfirmed one", smsIDs(got))
	}
	if _, _, err := s.SMSConfirm(ctx, &sms.ConfirmParams{Number: 1 << 40, GatewayMessageID: "gw-n", At: at(7)}); !errors.Is(err, messaging.ErrNotFound) {
		t.Errorf("SMSConfirm of no message: %v, want ErrNotFound", err)
	}
}
