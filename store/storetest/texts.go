package storetest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging/sms"
)

// longText is an error text far longer than any limit the service puts on
// what it stores, of multi-byte runes: stores keep what they are given,
// whole, and leave limits to the service.
var longText = "[131000] " + strings.Repeat("Zugriff verweigert ✗ ", 200)

// testLongTextsKept: the last error of a released message, the failure
// reason of a status change and the last error of a webhook delivery come
// back exactly as long as they were written.
func testLongTextsKept(t *testing.T, s driver.Store) {
	ctx := context.Background()
	mustWorkspace(t, s, "a")
	if err := s.WebhookEndpointCreate(ctx, endpoint("a", "we_1", 1)); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"msg_1", "msg_2"} {
		if _, _, err := s.MessageCreate(ctx, queuedMessage("a", id, at(0))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.MessageClaim(ctx, &driver.MessageClaimParams{Owner: "w1", Now: at(1), Lease: time.Minute, Limit: 10}); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.MessageRelease(ctx, &driver.MessageReleaseParams{WorkspaceID: "a", ID: "msg_1", Owner: "w1", DueAt: at(5), LastError: longText}); err != nil || !ok {
		t.Fatalf("release: %v, %v", ok, err)
	}
	if m, err := s.MessageGet(ctx, "a", "msg_1"); err != nil || m.LastError != longText {
		t.Errorf("last error of a released message: %d bytes (err %v); want the %d written", len(m.LastError), err, len(longText))
	}
	after, changed, err := updateStatus(ctx, s, &driver.MessageStatusParams{WorkspaceID: "a", ID: "msg_2", From: []string{"queued"}, To: "failed",
		FailureReason: longText, At: at(2), Event: statusEvent("a", "msg_2", "queued", "failed", "evt_1", 2)})
	if err != nil || !changed || after.FailureReason != longText {
		t.Fatalf("failed with a long reason: changed %v, err %v, %d bytes of reason; want the %d written", changed, err, len(after.FailureReason), len(longText))
	}
	if m, err := s.MessageGet(ctx, "a", "msg_2"); err != nil || m.FailureReason != longText {
		t.Errorf("stored failure reason: %d bytes (err %v); want the %d written", len(m.FailureReason), err, len(longText))
	}
	ds, err := s.WebhookClaim(ctx, &driver.WebhookClaimParams{Owner: "h1", Now: at(3), Lease: time.Minute, Limit: 10})
	if err != nil || len(ds) != 1 {
		t.Fatalf("webhook claim: %d deliveries, %v; want 1", len(ds), err)
	}
	if err := s.WebhookRecord(ctx, &driver.WebhookRecordParams{ID: ds[0].ID, Owner: "h1", State: record.DeliveryPending, DueAt: at(10),
		LastStatus: 500, LastError: longText, At: at(4)}); err != nil {
		t.Fatal(err)
	}
	ds, err = s.WebhookClaim(ctx, &driver.WebhookClaimParams{Owner: "h2", Now: at(10), Lease: time.Minute, Limit: 10})
	if err != nil || len(ds) != 1 {
		t.Fatalf("webhook claim of the retry: %d deliveries, %v; want 1", len(ds), err)
	}
	if ds[0].LastError != longText {
		t.Errorf("last error of a delivery: %d bytes; want the %d written", len(ds[0].LastError), len(longText))
	}
}

// testSMSLongTextsKept: the failure reason of an SMS attempt comes back
// exactly as long as it was written.
func testSMSLongTextsKept(t *testing.T, s sms.Store) {
	ctx := context.Background()
	smsAccount(t, s, "a", sms.Credits(10))
	res, err := s.SMSAccept(ctx, []*sms.Message{smsMessage("m1", "a", sms.Credits(1), sms.StatusQueued, base)})
	if err != nil || res[0].Err != nil {
		t.Fatalf("accept: %v, %v", res, err)
	}
	ms, err := s.SMSClaimDue(ctx, &sms.ClaimParams{Now: base, LeaseUntil: at(60), Token: "t1", Limit: 10})
	if err != nil || len(ms) != 1 {
		t.Fatalf("claim: %d messages, %v; want 1", len(ms), err)
	}
	errs, err := s.SMSComplete(ctx, []*sms.Completion{{Number: ms[0].Number, Token: "t1", Status: sms.StatusQueued, RetryAt: at(5), FailureReason: longText, At: at(1)}})
	if err != nil || errs[0] != nil {
		t.Fatalf("complete: %v, %v", errs, err)
	}
	m, err := s.SMSMessageGet(ctx, "a", ms[0].Number)
	if err != nil || m.FailureReason != longText {
		t.Errorf("failure reason of an SMS: %d bytes (err %v); want the %d written", len(m.FailureReason), err, len(longText))
	}
}
