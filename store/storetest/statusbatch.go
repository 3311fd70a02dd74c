package storetest

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
)

// testMessageUpdateStatuses checks that a batch of status changes makes
// each as a batch of one makes it (testMessageStatus): in order (two changes of one
// message see each other), each a compare-and-set on its From, each event
// queued only with its change and only for a subscribed endpoint, a
// missing message failing only its own change, and a batch that fails
// (a cancelled context) storing nothing.
func testMessageUpdateStatuses(t *testing.T, s driver.Store) {
	ctx := context.Background()
	mustWorkspace(t, s, "a")
	mustWorkspace(t, s, "b")
	if err := s.WebhookEndpointCreate(ctx, endpoint("a", "we_1", 1)); err != nil {
		t.Fatal(err)
	}
	sent := queuedMessage("a", "msg_4", at(0))
	sent.Status = "sent"
	for _, m := range []*messaging.Message{queuedMessage("a", "msg_1", at(0)), queuedMessage("a", "msg_2", at(0)),
		queuedMessage("b", "msg_3", at(0)), sent, queuedMessage("a", "msg_5", at(0))} {
		if _, _, err := s.MessageCreate(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	change := func(ws, id string, from []string, to, evID string, sec int) *driver.MessageStatusParams {
		return &driver.MessageStatusParams{WorkspaceID: ws, ID: id, From: from, To: to, At: at(sec),
			Event: statusEvent(ws, id, from[0], to, evID, sec)}
	}
	first := change("a", "msg_1", []string{"queued"}, "sent", "evt_1", 10)
	first.ProviderMessageID = "wamid.1"
	failed := change("a", "msg_2", []string{"queued", "sent", "delivered"}, "failed", "evt_2", 12)
	failed.FailureReason = "[131026] Message undeliverable"
	ps := []*driver.MessageStatusParams{
		first,
		change("a", "msg_1", []string{"sent"}, "delivered", "evt_1b", 11), // sees the change before it
		failed, // from one of several statuses
		change("b", "msg_3", []string{"queued"}, "sent", "evt_3", 13),       // no endpoint in b
		change("a", "msg_4", []string{"queued"}, "sent", "evt_ignored", 14), // already sent
		change("a", "msg_missing", []string{"queued"}, "sent", "evt_missing", 15),
		change("b", "msg_1", []string{"queued"}, "sent", "evt_other_ws", 16), // another workspace's id
	}
	got, err := s.MessageUpdateStatuses(ctx, ps)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(ps) {
		t.Fatalf("%d results for %d changes", len(got), len(ps))
	}
	type outcome struct {
		Status   string
		Changed  bool
		NotFound bool
		Queued   bool // deliveries of its event
	}
	var outcomes []outcome
	for _, r := range got {
		o := outcome{Changed: r.Changed, NotFound: errors.Is(r.Err, messaging.ErrNotFound), Queued: r.Queued}
		if r.Err != nil && !o.NotFound {
			t.Errorf("result error %v, want nil or ErrNotFound", r.Err)
		}
		if r.Message != nil {
			o.Status = r.Message.Status
		}
		outcomes = append(outcomes, o)
	}
	want := []outcome{{"sent", true, false, true}, {"delivered", true, false, true}, {"failed", true, false, true},
		{"sent", true, false, false}, // no endpoint in b
		{"sent", false, false, false}, {"", false, true, false}, {"", false, true, false}}
	if d := cmp.Diff(want, outcomes); d != "" {
		t.Fatalf("results (-want +got):\n%s", d)
	}
	// Each result is the message as stored after its change; the last
	// change of msg_1 is what is stored.
	for _, i := range []int{1, 2, 3, 4} {
		m, err := s.MessageGet(ctx, ps[i].WorkspaceID, ps[i].ID)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(m, got[i].Message); d != "" {
			t.Errorf("result %d is not the stored message (-stored +result):\n%s", i, d)
		}
	}
	m1 := got[1].Message
	if m1.ProviderMessageID != "wamid.1" || !m1.UpdatedAt.Equal(at(11)) || m1.LeaseOwner != "" ||
		!cmp.Equal([]record.StatusChange{{Status: "sent", At: at(10)}, {Status: "delivered", At: at(11)}}, m1.History) {
		t.Errorf("msg_1 after two changes: %+v", m1)
	}
	if got[2].Message.FailureReason != "[131026] Message undeliverable" {
		t.Errorf("failure reason %q", got[2].Message.FailureReason)
	}
	if untouched, err := s.MessageGet(ctx, "a", "msg_5"); err != nil || untouched.Status != "queued" || len(untouched.History) != 0 {
		t.Errorf("a message outside the batch: %+v, %v", untouched, err)
	}

	// The events of the changes made, and only those, were queued for
	// the endpoint of a.
	// One delivery each: a duplicate fails.
	ds := listDeliveries(t, s, "a", "we_1", 0, 100)
	queued := eventIDs(ds)
	slices.Sort(queued)
	if d := cmp.Diff([]string{"we_1/evt_1", "we_1/evt_1b", "we_1/evt_2"}, queued); d != "" {
		t.Errorf("queued deliveries of we_1, endpoint/event (-want +got):\n%s", d)
	}
	messageOf := map[string]string{"evt_1": "msg_1", "evt_1b": "msg_1", "evt_2": "msg_2"}
	for _, d := range ds {
		if d.MessageID != messageOf[d.EventID] {
			t.Errorf("delivery of %s: message %q, want %q", d.EventID, d.MessageID, messageOf[d.EventID])
		}
	}

	// A batch that fails stores none of its changes.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.MessageUpdateStatuses(cctx, []*driver.MessageStatusParams{change("a", "msg_5", []string{"queued"}, "sent", "evt_5", 20)}); err == nil {
		t.Error("a batch under a cancelled context succeeded")
	}
	if m, err := s.MessageGet(ctx, "a", "msg_5"); err != nil || m.Status != "queued" {
		t.Errorf("a failed batch changed msg_5: %+v, %v", m, err)
	}
}
