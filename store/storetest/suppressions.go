package storetest

import (
	"context"
	"slices"
	"testing"

	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging"
)

// testSuppressions: an opt-out is stored per channel and queues its
// event; the same state again, a stale change and an opt-in of a
// recipient never opted out change nothing and queue nothing; an opt-in
// clears it; lists are by recipient, in the workspace only.
func testSuppressions(t *testing.T, s driver.Store) {
	ctx := context.Background()
	mustWorkspace(t, s, "a")
	mustWorkspace(t, s, "b")
	if err := s.WebhookEndpointCreate(ctx, endpoint("a", "we_1", 1)); err != nil {
		t.Fatal(err)
	}
	n := 0
	set := func(ws, channel, to string, out bool, sec int) bool {
		t.Helper()
		n++
		id := "evt_" + string(rune('a'+n))
		changed, err := s.SuppressionSet(ctx, &driver.SuppressionSetParams{
			Suppression: &messaging.Suppression{WorkspaceID: ws, Channel: channel, Recipient: to, OptedOut: out, Source: "keyword", MessageID: "msg_" + id, UpdatedAt: at(sec)},
			Event:       &driver.EventRecord{ID: id, WorkspaceID: ws, MessageID: "msg_" + id, Type: messaging.EventContactOptedOut, Payload: []byte(`{}`), CreatedAt: at(sec)},
		})
		if err != nil {
			t.Fatal(err)
		}
		return changed
	}
	const p = "+254700000001"
	steps := []struct {
		name    string
		channel string
		out     bool
		sec     int
		changed bool
	}{
		{"opt-in never opted out", "whatsapp", false, 1, false},
		{"opt-out", "whatsapp", true, 2, true},
		{"opt-out again", "whatsapp", true, 3, false},
		{"stale opt-in", "whatsapp", false, 1, false},
		{"other channel", "messenger", true, 4, true},
		{"opt-in", "whatsapp", false, 5, true},
		{"stale opt-out", "whatsapp", true, 4, false},
		{"opt-out at the same time", "whatsapp", true, 5, true},
	}
	for _, st := range steps {
		if got := set("a", st.channel, p, st.out, st.sec); got != st.changed {
			t.Errorf("%s: changed %v, want %v", st.name, got, st.changed)
		}
	}
	if got := len(claimAll(t, s, "h1", at(30))); got != 4 {
		t.Errorf("%d deliveries queued, want 4 (one per change)", got)
	}
	list, err := s.SuppressionList(ctx, &driver.SuppressionListParams{WorkspaceID: "a", Recipients: []string{p, "+254700000002"}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, sup := range list {
		if sup.Recipient != p || sup.WorkspaceID != "a" || sup.Source != "keyword" || !sup.OptedOut {
			t.Errorf("listed %+v", sup)
		}
		got = append(got, sup.Channel+"@"+sup.UpdatedAt.Sub(at(0)).String())
	}
	slices.Sort(got)
	if want := []string{"messenger@4s", "whatsapp@5s"}; !slices.Equal(got, want) {
		t.Errorf("listed %v, want %v", got, want)
	}
	if list, err := s.SuppressionList(ctx, &driver.SuppressionListParams{WorkspaceID: "b", Recipients: []string{p}}); err != nil || len(list) != 0 {
		t.Errorf("workspace b lists %v, %v", list, err)
	}
	_, err = s.SuppressionSet(ctx, &driver.SuppressionSetParams{Suppression: &messaging.Suppression{WorkspaceID: "nope", Channel: "whatsapp", Recipient: p, OptedOut: true, UpdatedAt: at(1)}})
	wantErr(t, "SuppressionSet in a missing workspace", err, messaging.ErrNotFound)
}
