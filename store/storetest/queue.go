package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
)

// testMessageQueueStats checks the dispatch queue figures: every queued
// message is counted, only those due at Now are due, a leased message is
// not due until its lease ends, sent messages are not counted, and a
// workspace sees only its own.
func testMessageQueueStats(t *testing.T, s messaging.Store) {
	ctx := context.Background()
	stats := func(ws string, now time.Time) *messaging.MessageQueueStats {
		t.Helper()
		st, err := s.MessageQueueStats(ctx, &messaging.MessageQueueStatsParams{WorkspaceID: ws, Now: now})
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
	if _, err := s.MessageClaim(ctx, &messaging.MessageClaimParams{Owner: "w", Now: at(10), Lease: time.Minute, Limit: 2}); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(&messaging.MessageQueueStats{Queued: 4, Due: 1, OldestDueAt: tp(5)}, stats("", at(10))); d != "" {
		t.Errorf("after a claim (-want +got):\n%s", d)
	}
	// A message that leaves the queue is no longer counted.
	if _, _, err := updateStatus(ctx, s, &messaging.MessageStatusParams{WorkspaceID: "a", ID: "msg_1",
		From: []string{messaging.StatusQueued}, To: messaging.StatusSent, At: at(11)}); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(&messaging.MessageQueueStats{Queued: 3}, stats("", at(10))); d != "" {
		t.Errorf("after msg_1 was sent (-want +got):\n%s", d)
	}
}

// testTraceParentRoundTrip checks that the trace context stored with a
// message comes back from every read, including a claim.
func testTraceParentRoundTrip(t *testing.T, s messaging.Store) {
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
	claimed, err := s.MessageClaim(ctx, &messaging.MessageClaimParams{Owner: "w", Now: at(2), Lease: time.Minute, Limit: 1})
	if err != nil || len(claimed) != 1 {
		t.Fatalf("claim: %v, %v", claimed, err)
	}
	if claimed[0].TraceParent != tp {
		t.Errorf("MessageClaim: TraceParent %q, want %q", claimed[0].TraceParent, tp)
	}
}

// testPing checks that an open store answers Ping, and that Ping honours a
// done context.
func testPing(t *testing.T, s messaging.Store) {
	if err := s.Ping(context.Background()); err != nil {
		t.Fatalf("Ping of an open store: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Ping(ctx); err == nil {
		t.Error("Ping with a cancelled context answered nil")
	}
}
