package messaging_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ujumbe/messaging/store/driver"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/store/memstore"
)

const undeliverable = "[131026] Message undeliverable"

// applyStatus applies a status update to message id of acme, failing the
// test on error. A failed status carries provider code 131026.
func (f *fixture) applyStatus(t *testing.T, id, status string) bool {
	t.Helper()
	u := &messaging.StatusUpdate{WorkspaceID: "acme", MessageID: id, Status: status}
	if status == messaging.StatusFailed {
		u.ProviderCode, u.ProviderText = "131026", "Message undeliverable"
	}
	changed, err := f.svc.UpdateStatus(f.ctx, u)
	if err != nil {
		t.Fatalf("UpdateStatus(%s): %v", status, err)
	}
	return changed
}

func TestStatusRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// before are the updates applied first; each must change the status.
		before []string
		update string
		// changed is whether update changes the status; want is the final
		// status and reason the final failure_reason.
		changed bool
		want    string
		reason  string
	}{
		{"queued to sent", nil, "sent", true, "sent", ""},
		{"queued to delivered", nil, "delivered", true, "delivered", ""},
		{"queued to read", nil, "read", true, "read", ""},
		{"sent to delivered", []string{"sent"}, "delivered", true, "delivered", ""},
		{"sent to read", []string{"sent"}, "read", true, "read", ""},
		{"delivered to read", []string{"sent", "delivered"}, "read", true, "read", ""},
		{"failed from queued", nil, "failed", true, "failed", undeliverable},
		{"failed from sent", []string{"sent"}, "failed", true, "failed", undeliverable},
		{"failed from delivered", []string{"sent", "delivered"}, "failed", true, "failed", undeliverable},
		{"sent again", []string{"sent"}, "sent", false, "sent", ""},
		{"sent after delivered", []string{"sent", "delivered"}, "sent", false, "delivered", ""},
		{"delivered after read", []string{"sent", "read"}, "delivered", false, "read", ""},
		{"sent after read", []string{"read"}, "sent", false, "read", ""},
		{"read again", []string{"read"}, "read", false, "read", ""},
		{"failed after read", []string{"sent", "delivered", "read"}, "failed", false, "read", ""},
		{"read after failed", []string{"failed"}, "read", false, "failed", undeliverable},
		{"delivered after failed", []string{"sent", "failed"}, "delivered", false, "failed", undeliverable},
		{"sent after failed", []string{"failed"}, "sent", false, "failed", undeliverable},
		{"failed again", []string{"failed"}, "failed", false, "failed", undeliverable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := setup(t)
			res := f.mustSend(t, f.acme, textMsg(kenya))
			prev := messaging.StatusQueued
			for i, s := range tc.before {
				f.clock.Advance(time.Minute)
				if !f.applyStatus(t, res.MessageID, s) {
					t.Fatalf("setup update %s did not change the status", s)
				}
				evs := f.events.take()
				if len(evs) != 1 || evs[0].Data.(messaging.StatusEventData).Status != s || evs[0].Data.(messaging.StatusEventData).PreviousStatus != prev {
					t.Fatalf("setup update %d (%s): events %+v, want one %s event from %s", i, s, evs, s, prev)
				}
				prev = s
			}
			before, err := f.acme.Messages.Get(f.ctx, res.MessageID)
			if err != nil {
				t.Fatal(err)
			}
			f.clock.Advance(time.Hour)
			now := f.clock.Now()

			changed := f.applyStatus(t, res.MessageID, tc.update)
			if changed != tc.changed {
				t.Errorf("changed = %v, want %v", changed, tc.changed)
			}
			got, err := f.acme.Messages.Get(f.ctx, res.MessageID)
			if err != nil {
				t.Fatal(err)
			}
			wantUpdated := before.UpdatedAt
			if tc.changed {
				wantUpdated = now
			}
			type view struct {
				Status, FailureReason string
				UpdatedAt             time.Time
			}
			if d := cmp.Diff(view{tc.want, tc.reason, wantUpdated}, view{got.Status, got.FailureReason, got.UpdatedAt}); d != "" {
				t.Errorf("message after update (-want +got):\n%s", d)
			}

			evs := f.events.take()
			if !tc.changed {
				if len(evs) != 0 {
					t.Errorf("got %d events for an ignored update, want 0: %+v", len(evs), evs[0])
				}
				return
			}
			if len(evs) != 1 {
				t.Fatalf("got %d events, want 1", len(evs))
			}
			ev := evs[0]
			if ev.ID == "" {
				t.Error("event has no id")
			}
			want := &messaging.Event{ID: ev.ID, Type: messaging.EventMessageStatusUpdated, CreatedAt: now, WorkspaceID: "acme", MessageID: res.MessageID,
				Data: messaging.StatusEventData{MessageID: res.MessageID, ConversationID: res.ConversationID, Channel: "whatsapp",
					To: kenya, Status: tc.want, PreviousStatus: before.Status, FailureReason: tc.reason, UpdatedAt: now}}
			if d := cmp.Diff(want, ev); d != "" {
				t.Errorf("event (-want +got):\n%s", d)
			}
		})
	}
}

func TestUpdateStatusBadInputs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		u     func(id string) *messaging.StatusUpdate
		code  messaging.Code
		field string
	}{
		{"unknown status", func(id string) *messaging.StatusUpdate {
			return &messaging.StatusUpdate{WorkspaceID: "acme", MessageID: id, Status: "bounced"}
		}, messaging.CodeValidation, "status"},
		{"empty status", func(id string) *messaging.StatusUpdate {
			return &messaging.StatusUpdate{WorkspaceID: "acme", MessageID: id}
		}, messaging.CodeValidation, "status"},
		{"back to queued", func(id string) *messaging.StatusUpdate {
			return &messaging.StatusUpdate{WorkspaceID: "acme", MessageID: id, Status: "queued"}
		}, messaging.CodeValidation, "status"},
		{"status wrong case", func(id string) *messaging.StatusUpdate {
			return &messaging.StatusUpdate{WorkspaceID: "acme", MessageID: id, Status: "SENT"}
		}, messaging.CodeValidation, "status"},
		{"failed without provider code", func(id string) *messaging.StatusUpdate {
			return &messaging.StatusUpdate{WorkspaceID: "acme", MessageID: id, Status: "failed", ProviderText: "oops"}
		}, messaging.CodeValidation, "provider_code"},
		{"unknown message", func(string) *messaging.StatusUpdate {
			return &messaging.StatusUpdate{WorkspaceID: "acme", MessageID: "msg_missing", Status: "sent"}
		}, messaging.CodeNotFound, ""},
		{"message of another workspace", func(id string) *messaging.StatusUpdate {
			return &messaging.StatusUpdate{WorkspaceID: "other", MessageID: id, Status: "sent"}
		}, messaging.CodeNotFound, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := setup(t)
			res := f.mustSend(t, f.acme, textMsg(kenya))
			f.clock.Advance(time.Minute)
			changed, err := f.svc.UpdateStatus(f.ctx, tc.u(res.MessageID))
			if changed {
				t.Error("changed = true with an error")
			}
			wantError(t, err, tc.code, tc.field)
			m, err := f.acme.Messages.Get(f.ctx, res.MessageID)
			if err != nil {
				t.Fatal(err)
			}
			if m.Status != "queued" || !m.UpdatedAt.Equal(t0) {
				t.Errorf("message is %s updated %v, want queued and unchanged", m.Status, m.UpdatedAt)
			}
			if evs := f.events.take(); len(evs) != 0 {
				t.Errorf("got %d events, want 0", len(evs))
			}
		})
	}
}

func TestUpdateStatusRecordsProviderMessageID(t *testing.T) {
	t.Parallel()
	f := setup(t)
	res := f.mustSend(t, f.acme, textMsg(kenya))
	changed, err := f.svc.UpdateStatus(f.ctx, &messaging.StatusUpdate{WorkspaceID: "acme", MessageID: res.MessageID,
		Status: "sent", ProviderMessageID: "wamid.ABC"})
	if err != nil || !changed {
		t.Fatalf("UpdateStatus = %v, %v", changed, err)
	}
	m, err := f.acme.Messages.Get(f.ctx, res.MessageID)
	if err != nil {
		t.Fatal(err)
	}
	if m.ProviderMessageID != "wamid.ABC" {
		t.Errorf("ProviderMessageID = %q, want wamid.ABC", m.ProviderMessageID)
	}
}

func TestSubscribeUnsubscribe(t *testing.T) {
	t.Parallel()
	f := setup(t)
	var second eventLog
	unsubscribe := f.svc.Subscribe(second.add)
	a := f.mustSend(t, f.acme, textMsg(kenya))
	f.applyStatus(t, a.MessageID, "sent")
	unsubscribe()
	f.applyStatus(t, a.MessageID, "delivered")
	if n := len(second.take()); n != 1 {
		t.Errorf("unsubscribed listener got %d events, want 1", n)
	}
	if n := len(f.events.take()); n != 2 {
		t.Errorf("subscribed listener got %d events, want 2", n)
	}
}

// racingStore moves a message's status by another path once the
// dispatcher has claimed it and before the service's first status write
// reaches the store, as a provider report arriving while the dispatcher
// sends would. (The race runs after the claim, not inside the status
// write: a status change made from inside a write of the status batch
// would wait for that write.)
type racingStore struct {
	driver.Store
	race    func()
	raced   atomic.Bool
	updates atomic.Int64
}

func (s *racingStore) MessageClaim(ctx context.Context, p *driver.MessageClaimParams) ([]*messaging.Message, error) {
	ms, err := s.Store.MessageClaim(ctx, p)
	if err == nil && len(ms) > 0 && s.updates.Load() == 0 && s.race != nil && s.raced.CompareAndSwap(false, true) {
		s.race()
	}
	return ms, err
}

func (s *racingStore) MessageUpdateStatuses(ctx context.Context, ps []*driver.MessageStatusParams) ([]driver.MessageStatusResult, error) {
	s.updates.Add(int64(len(ps)))
	return s.Store.MessageUpdateStatuses(ctx, ps)
}

// TestStatusMovedMeanwhile: the dispatcher records its outcome from its
// claimed copy (queued). When the status moved meanwhile, the change is
// decided again on the status as it is: a failure still applies from
// sent, and a sent after delivered is ignored, without error, as always.
func TestStatusMovedMeanwhile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// sendErr is the provider's answer; moved is the status the
		// message reaches meanwhile.
		sendErr error
		moved   string
		// want is the final status and reason; events the statuses
		// announced, each with its previous status.
		want, reason string
		events       [][2]string
		// updates counts the status writes that reached the store.
		updates int64
	}{
		{"failure after sent", &messaging.SendError{Code: "131026", Text: "Message undeliverable"}, messaging.StatusSent,
			messaging.StatusFailed, undeliverable, [][2]string{{"sent", "queued"}, {"failed", "sent"}}, 3},
		{"sent after delivered", nil, messaging.StatusDelivered,
			messaging.StatusDelivered, "", [][2]string{{"delivered", "queued"}}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			store := &racingStore{Store: memstore.New()}
			f := setupDispatch(t, store, messaging.DispatchOptions{})
			var events eventLog
			t.Cleanup(f.svc.Subscribe(events.add))
			f.prov.script[kenya] = []error{tc.sendErr}
			id := f.send(t, kenya)
			store.race = func() {
				if _, err := f.svc.UpdateStatus(f.ctx, &messaging.StatusUpdate{WorkspaceID: "acme", MessageID: id, Status: tc.moved}); err != nil {
					t.Errorf("UpdateStatus(%s): %v", tc.moved, err)
				}
			}
			if _, err := f.svc.DispatchDue(f.ctx); err != nil {
				t.Fatal(err)
			}
			m := f.get(t, id)
			if m.Status != tc.want || m.FailureReason != tc.reason {
				t.Errorf("status %s, reason %q; want %s, %q", m.Status, m.FailureReason, tc.want, tc.reason)
			}
			var got [][2]string
			for _, e := range events.take() {
				got = append(got, [2]string{e.Data.(messaging.StatusEventData).Status, e.Data.(messaging.StatusEventData).PreviousStatus})
			}
			if d := cmp.Diff(tc.events, got); d != "" {
				t.Errorf("events (-want +got):\n%s", d)
			}
			if n := store.updates.Load(); n != tc.updates {
				t.Errorf("%d status writes; want %d", n, tc.updates)
			}
		})
	}
}
