package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
)

// testMessageQueueStats checks the dispatch queue figures: every queued
// message is counted, only those due at Now are due, a leased message is
// not due until its lease ends, sent messages are not counted, and a
// workspace sees only its own.
func testMessageQueueStats(t *testing.T, s driver.Store) {
	ctx := context.Background()
	stats := func(ws string, now time.Time) *messaging.MessageQueueStats {
		t.Helper()
		st, err := s.MessageQueueStats(ctx, &driver.MessageQueueStatsParams{WorkspaceID: ws, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	tp := func(sec int) *time.Time { v := at(sec); return &v }
	if d := cmp.Diff(&messaging.MessageQueueStats{}, stats("", at(0))); d != "" {
		t.Errorf("empty store (-want +got):\n%s", d)
	}
	mustWorkspace(t, s, "a")
	mustWorkspace(t, s, "b")
	for _, m := range []*messaging.Message{
		queuedMessage("a", "msg_1", at(5)),
		queuedMessage("a", "msg_2", at(3)),
		queuedMessage("b", "msg_3", at(1)),
		queuedMessage("a", "msg_4", at(50)), // a retry, not due yet
	} {
		if _, _, err := s.MessageCreate(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	sent := queuedMessage("a", "msg_s", at(0))
	sent.Status = messaging.StatusSent
	if _, _, err := s.MessageCreate(ctx, sent); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		ws   string
		now  time.Time
		want *messaging.MessageQueueStats
	}{
		{"all, at 10", "", at(10), &messaging.MessageQueueStats{Queued: 4, Due: 3, OldestDueAt: tp(1)}},
		{"all, before any is due", "", at(0), &messaging.MessageQueueStats{Queued: 4}},
		{"all, due at exactly now", "", at(3), &messaging.MessageQueueStats{Queued: 4, Due: 2, OldestDueAt: tp(1)}},
		{"workspace a", "a", at(10), &messaging.MessageQueueStats{Queued: 3, Due: 2, OldestDueAt: tp(3)}},
		{"workspace b", "b", at(10), &messaging.MessageQueueStats{Queued: 1, Due: 1, OldestDueAt: tp(1)}},
		{"unknown workspace", "zz", at(10), &messaging.MessageQueueStats{}},
	} {
		if d := cmp.Diff(tc.want, stats(tc.ws, tc.now)); d != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, d)
		}
	}
	// A claim leases the two oldest: they stay queued but are not due
	// until their lease ends.
	if _, err := s.MessageClaim(ctx, &driver.MessageClaimParams{Owner: "w", Now: at(10), Lease: time.Minute, Limit: 2}); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(&messaging.MessageQueueStats{Queued: 4, Due: 1, OldestDueAt: tp(5)}, stats("", at(10))); d != "" {
		t.Errorf("after a claim (-want +got):\n%s", d)
	}
	// A message that leaves the queue is no longer counted.
	if _, _, err := updateStatus(ctx, s, &driver.MessageStatusParams{WorkspaceID: "a", ID: "msg_1",
		From: []string{messaging.StatusQueued}, To: messaging.StatusSent, At: at(11)}); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(&messaging.MessageQueueStats{Queued: 3}, stats("", at(10))); d != "" {
		t.Errorf("after msg_1 was sent (-want +got):\n%s", d)
	}
}

// testTraceParentRoundTrip checks that the trace context stored with a
// message comes back from every read, including a claim.
func testTraceParentRoundTrip(t *testing.T, s driver.Store) {
	ctx := context.Background()
	mustWorkspace(t, s, "a")
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	m := queuedMessage("a", "msg_t", at(1))
	m.TraceParent = tp
	if _, _, err := s.MessageCreate(ctx, m); err != nil {
		t.Fatal(err)
	}
	got, err := s.MessageGet(ctx, "a", "msg_t")
	if err != nil {
		t.Fatal(err)
	}
	if got.TraceParent != tp {
		t.Errorf("MessageGet: TraceParent %q, want %q", got.TraceParent, tp)
	}
	claimed, err := s.MessageClaim(ctx, &driver.MessageClaimParams{Owner: "w", Now: at(2), Lease: time.Minute, Limit: 1})
	if err != nil || len(claimed) != 1 {
		t.Fatalf("claim: %v, %v", claimed, err)
	}
	if claimed[0].TraceParent != tp {
		t.Errorf("MessageClaim: TraceParent %q, want %q", claimed[0].TraceParent, tp)
	}
}

// testPing checks that an open store answers Ping, and that Ping honours a
// done context.
func testPing(t *testing.T, s driver.Store) {
	if err := s.Ping(context.Background()); err != nil {
		t.Fatalf("Ping of an open store: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Ping(ctx); err == nil {
		t.Error("Ping with a cancelled context answered nil")
	}
}

// testDeliveryTraceParent checks that the trace context of an event
// (EventRecord.TraceParent) is kept on each of its deliveries, however the
// event was queued (a status change in a batch, WebhookQueueEvent, a test
// event), and comes back from a claim, a listing and a redelivery; an
// event without one has deliveries without one.
func testDeliveryTraceParent(t *testing.T, s driver.Store) {
	ctx := context.Background()
	mustWorkspace(t, s, "a")
	for i, id := range []string{"we_1", "we_2"} {
		if err := s.WebhookEndpointCreate(ctx, endpoint("a", id, i)); err != nil {
			t.Fatal(err)
		}
	}
	const tp1 = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	const tp2 = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	for _, id := range []string{"msg_1", "msg_2"} {
		if _, _, err := s.MessageCreate(ctx, queuedMessage("a", id, at(0))); err != nil {
			t.Fatal(err)
		}
	}
	traced := statusEvent("a", "msg_1", "queued", "sent", "evt_1", 10)
	traced.TraceParent = tp1
	rs, err := s.MessageUpdateStatuses(ctx, []*driver.MessageStatusParams{
		{WorkspaceID: "a", ID: "msg_1", From: []string{"queued"}, To: "sent", At: at(10), Event: traced},
		{WorkspaceID: "a", ID: "msg_2", From: []string{"queued"}, To: "sent", At: at(10), Event: statusEvent("a", "msg_2", "queued", "sent", "evt_2", 10)},
	})
	if err != nil || !rs[0].Changed || !rs[1].Changed {
		t.Fatalf("status changes: %+v, %v", rs, err)
	}
	pushed := &driver.EventRecord{ID: "evt_3", WorkspaceID: "a", MessageID: "sms_1", Type: "sms.delivery_report",
		Payload: []byte(`{"id":"evt_3"}`), CreatedAt: at(11), TraceParent: tp2}
	if queued, err := s.WebhookQueueEvent(ctx, &driver.WebhookQueueParams{EndpointID: "we_1", Event: pushed}); err != nil || !queued {
		t.Fatalf("WebhookQueueEvent: %v, %v", queued, err)
	}
	want := map[string]string{"we_1/evt_1": tp1, "we_2/evt_1": tp1, "we_1/evt_2": "", "we_2/evt_2": "", "we_1/evt_3": tp2}
	traces := func(ds []*messaging.WebhookDelivery) map[string]string {
		got := map[string]string{}
		for _, d := range ds {
			got[d.EndpointID+"/"+d.EventID] = d.TraceParent
		}
		return got
	}
	claimed := claimAll(t, s, "h1", at(20))
	if d := cmp.Diff(want, traces(claimed)); d != "" {
		t.Errorf("trace parents of the claimed deliveries, by endpoint/event (-want +got):\n%s", d)
	}
	listed := append(listDeliveries(t, s, "a", "we_1", 0, 10), listDeliveries(t, s, "a", "we_2", 0, 10)...)
	if d := cmp.Diff(want, traces(listed)); d != "" {
		t.Errorf("trace parents of the listed deliveries (-want +got):\n%s", d)
	}
	// A delivery that is redelivered keeps it.
	var first *messaging.WebhookDelivery
	for _, d := range claimed {
		if d.EndpointID == "we_1" && d.EventID == "evt_1" {
			first = d
		}
	}
	if first == nil {
		t.Fatal("the delivery of evt_1 to we_1 was not claimed")
	}
	if err := s.WebhookRecord(ctx, &driver.WebhookRecordParams{ID: first.ID, Owner: "h1", State: record.DeliveryDelivered,
		LastStatus: 200, At: at(21), Keep: 10}); err != nil {
		t.Fatal(err)
	}
	again, err := s.WebhookRedeliver(ctx, &driver.WebhookRedeliverParams{WorkspaceID: "a", EndpointID: "we_1", ID: first.ID, Now: at(22)})
	if err != nil || again.TraceParent != tp1 {
		t.Fatalf("redelivery: %+v, %v; want trace parent %s", again, err, tp1)
	}
	var reclaimed []*messaging.WebhookDelivery
	for _, d := range claimAll(t, s, "h2", at(100)) {
		if d.ID == first.ID {
			reclaimed = append(reclaimed, d)
		}
	}
	if len(reclaimed) != 1 || reclaimed[0].TraceParent != tp1 {
		t.Errorf("the redelivered delivery claimed again: %+v; want trace parent %s", reclaimed, tp1)
	}
	// A test event's record keeps it too.
	test := &driver.EventRecord{ID: "evt_t", WorkspaceID: "a", Type: "webhook.test", Payload: []byte(`{}`), CreatedAt: at(30), TraceParent: tp2}
	rec, err := s.WebhookRecordTest(ctx, &driver.WebhookRecordTestParams{EndpointID: "we_2", Event: test, State: record.DeliveryDelivered,
		LastStatus: 200, At: at(30), Keep: 10})
	if err != nil || rec.TraceParent != tp2 {
		t.Errorf("test event record: %+v, %v; want trace parent %s", rec, err, tp2)
	}
}
