package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/store/driver"
)

// scheduledMessage is a queued message accepted at at(0) and scheduled
// for sendAt: its DueAt is its SendAt, as the service sets it.
func scheduledMessage(ws, id string, sendAt time.Time) *messaging.Message {
	m := queuedMessage(ws, id, at(0))
	m.SendAt, m.DueAt = &sendAt, sendAt
	return m
}

// testMessageScheduled: a message's SendAt round-trips exactly (and stays
// nil for one sent at once), and a scheduled message is not claimed
// before its DueAt, three days on, and is claimed at it.
func testMessageScheduled(t *testing.T, s driver.Store) {
	ctx := context.Background()
	mustWorkspace(t, s, "a")
	sendAt := base.Add(72*time.Hour + 5*time.Nanosecond)
	if _, _, err := s.MessageCreate(ctx, scheduledMessage("a", "msg_later", sendAt)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.MessageCreate(ctx, queuedMessage("a", "msg_now", at(0))); err != nil {
		t.Fatal(err)
	}
	got, err := s.MessageGet(ctx, "a", "msg_later")
	if err != nil {
		t.Fatal(err)
	}
	if got.SendAt == nil || !got.SendAt.Equal(sendAt) || !got.DueAt.Equal(sendAt) {
		t.Fatalf("scheduled message read back with send_at %v, due %v; want both %v", got.SendAt, got.DueAt, sendAt)
	}
	if now, _ := s.MessageGet(ctx, "a", "msg_now"); now.SendAt != nil {
		t.Errorf("a message sent at once read back with send_at %v; want nil", now.SendAt)
	}
	// The lease outlasts the scheduled time: msg_now stays leased.
	claimed, err := s.MessageClaim(ctx, &driver.MessageClaimParams{Owner: "w1", Now: at(10), Lease: 100 * time.Hour, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"msg_now"}, claimIDs(claimed)); d != "" {
		t.Fatalf("claim before send_at (-want +got):\n%s", d)
	}
	st, err := s.MessageQueueStats(ctx, &driver.MessageQueueStatsParams{WorkspaceID: "a", Now: sendAt.Add(-time.Nanosecond)})
	if err != nil {
		t.Fatal(err)
	}
	if st.Queued != 2 || st.Due != 0 {
		t.Errorf("queue stats just before send_at: queued %d due %d; want 2 (one scheduled, one leased) and 0", st.Queued, st.Due)
	}
	claimed, _ = s.MessageClaim(ctx, &driver.MessageClaimParams{Owner: "w1", Now: sendAt.Add(-time.Nanosecond), Lease: time.Minute, Limit: 10})
	if len(claimed) != 0 {
		t.Fatalf("claim a nanosecond before send_at took %v", claimIDs(claimed))
	}
	claimed, _ = s.MessageClaim(ctx, &driver.MessageClaimParams{Owner: "w1", Now: sendAt, Lease: time.Minute, Limit: 10})
	if d := cmp.Diff([]string{"msg_later"}, claimIDs(claimed)); d != "" {
		t.Fatalf("claim at send_at (-want +got):\n%s", d)
	}
	if c := claimed[0]; c.SendAt == nil || !c.SendAt.Equal(sendAt) {
		t.Errorf("claimed scheduled message has send_at %v; want %v", c.SendAt, sendAt)
	}
}

// cancelParams is a cancel of message id of ws at at(sec), as the service
// asks it.
func cancelParams(ws, id string, sec int) *driver.MessageStatusParams {
	return &driver.MessageStatusParams{WorkspaceID: ws, ID: id, From: []string{messaging.StatusQueued}, To: messaging.StatusCanceled,
		Unclaimed: true, At: at(sec), Event: statusEvent(ws, id, "queued", "canceled", "evt_c_"+id, sec)}
}

// testMessageCancel: a change with Unclaimed moves a queued message no
// worker holds, queues its event, and leaves alone one that is leased or
// whose hand-over is unconfirmed; a canceled message is never claimed.
func testMessageCancel(t *testing.T, s driver.Store) {
	ctx := context.Background()
	mustWorkspace(t, s, "a")
	mustWorkspace(t, s, "b")
	if err := s.WebhookEndpointCreate(ctx, endpoint("a", "wh_1", 0)); err != nil {
		t.Fatal(err)
	}
	for _, m := range []*messaging.Message{
		scheduledMessage("a", "msg_sched", at(3600)),
		queuedMessage("a", "msg_leased", at(1)),
		queuedMessage("a", "msg_unconf", at(2)),
		queuedMessage("a", "msg_untried", at(3)),
	} {
		if _, _, err := s.MessageCreate(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	claimed, err := s.MessageClaim(ctx, &driver.MessageClaimParams{Owner: "w1", Now: at(10), Lease: time.Minute, Limit: 10})
	if err != nil || len(claimed) != 3 {
		t.Fatalf("claim: %v, %v", claimIDs(claimed), err)
	}
	// One put back with its outcome unknown (maybe sent), one put back
	// untried (the mark cleared), one still leased.
	unconf := at(10)
	if ok, err := s.MessageRelease(ctx, &driver.MessageReleaseParams{WorkspaceID: "a", ID: "msg_unconf", Owner: "w1", DueAt: at(20), Unconfirmed: &unconf}); !ok || err != nil {
		t.Fatalf("release unconfirmed: %v, %v", ok, err)
	}
	if ok, err := s.MessageRelease(ctx, &driver.MessageReleaseParams{WorkspaceID: "a", ID: "msg_untried", Owner: "w1", DueAt: at(20), Untried: true}); !ok || err != nil {
		t.Fatalf("release untried: %v, %v", ok, err)
	}

	rs, err := s.MessageUpdateStatuses(ctx, []*driver.MessageStatusParams{
		cancelParams("a", "msg_sched", 11), cancelParams("a", "msg_leased", 11), cancelParams("a", "msg_unconf", 11),
		cancelParams("a", "msg_untried", 11), cancelParams("b", "msg_sched", 11),
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []struct {
		changed bool
		status  string
	}{{true, "canceled"}, {false, "queued"}, {false, "queued"}, {true, "canceled"}} {
		r := rs[i]
		if r.Err != nil || r.Changed != want.changed || r.Message == nil || r.Message.Status != want.status {
			t.Errorf("cancel %d: changed %v, err %v, message %+v; want changed %v, status %s", i, r.Changed, r.Err, r.Message, want.changed, want.status)
		}
	}
	if !rs[0].Queued {
		t.Error("the cancel queued no delivery of its event for the subscribed endpoint")
	}
	if rs[1].Queued || rs[2].Queued {
		t.Error("a cancel that changed nothing queued its event")
	}
	wantErr(t, "cancel in another workspace", rs[4].Err, messaging.ErrNotFound)
	if leased, _ := s.MessageGet(ctx, "a", "msg_leased"); leased.LeaseOwner != "w1" {
		t.Errorf("a refused cancel changed the lease: owner %q", leased.LeaseOwner)
	}
	c := rs[0].Message
	if len(c.History) != 1 || c.History[0].Status != "canceled" || !c.History[0].At.Equal(at(11)) || !c.UpdatedAt.Equal(at(11)) {
		t.Errorf("canceled message: history %+v updated %v", c.History, c.UpdatedAt)
	}
	// A second cancel changes nothing.
	if after, changed, err := updateStatus(ctx, s, cancelParams("a", "msg_sched", 12)); err != nil || changed || after.Status != "canceled" {
		t.Errorf("second cancel: changed %v err %v status %v", changed, err, after)
	}
	// Canceled messages are never claimed, whatever the time.
	claimed, _ = s.MessageClaim(ctx, &driver.MessageClaimParams{Owner: "w2", Now: at(100000), Lease: time.Minute, Limit: 10})
	for _, m := range claimed {
		if m.ID == "msg_sched" || m.ID == "msg_untried" {
			t.Errorf("claimed canceled message %s", m.ID)
		}
	}
}

// testMessageCancelClaimRace: a cancel and a concurrent claim of the same
// due messages: each message is either canceled or claimed, never both,
// never neither.
func testMessageCancelClaimRace(t *testing.T, s driver.Store) {
	ctx := context.Background()
	mustWorkspace(t, s, "a")
	const n = 60
	for i := range n {
		if _, _, err := s.MessageCreate(ctx, queuedMessage("a", fmt.Sprintf("msg_%03d", i), at(i%5))); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	claimedBy := map[string]bool{}
	canceled := map[string]bool{}
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				got, err := s.MessageClaim(ctx, &driver.MessageClaimParams{Owner: fmt.Sprintf("w%d", w), Now: at(10), Lease: time.Hour, Limit: 3})
				if err != nil {
					t.Error(err)
					return
				}
				if len(got) == 0 {
					return
				}
				mu.Lock()
				for _, m := range got {
					claimedBy[m.ID] = true
				}
				mu.Unlock()
			}
		}()
	}
	for c := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := c; i < n; i += 3 {
				id := fmt.Sprintf("msg_%03d", i)
				_, changed, err := updateStatus(ctx, s, cancelParams("a", id, 10))
				if err != nil {
					t.Error(err)
					return
				}
				if changed {
					mu.Lock()
					canceled[id] = true
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	for i := range n {
		id := fmt.Sprintf("msg_%03d", i)
		m, err := s.MessageGet(ctx, "a", id)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case claimedBy[id] && canceled[id]:
			t.Errorf("%s was both claimed and canceled (status %s, owner %q)", id, m.Status, m.LeaseOwner)
		case !claimedBy[id] && !canceled[id]:
			t.Errorf("%s was neither claimed nor canceled (status %s)", id, m.Status)
		case canceled[id] && m.Status != messaging.StatusCanceled:
			t.Errorf("%s: cancel reported a change, status is %s", id, m.Status)
		case claimedBy[id] && (m.Status != messaging.StatusQueued || m.LeaseOwner == ""):
			t.Errorf("%s: claimed, but status %s owner %q", id, m.Status, m.LeaseOwner)
		}
	}
}
