package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/ujumbe/messaging/store/driver"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
)

// FailingOwner is the owner prefix of the claims that RunClaimFaults makes
// fail: a store under RunClaimFaults is arranged (by a trigger, a deferred
// constraint or a hook) so that the transaction of a message or webhook
// claim whose owner begins with FailingOwner fails when it commits, after
// its statements ran and returned their rows.
const FailingOwner = "failcommit"

// RunClaimFaults checks that a claim whose transaction fails returns no work
// and leaves nothing behind: the dispatcher and the webhook sender act on
// whatever a claim returns, so rows from a claim that did not commit would
// be sent although nobody holds their lease. newStore must return a new,
// empty store in which claims by an owner beginning with FailingOwner fail
// at commit (see FailingOwner); RunClaimFaults closes it when the test ends.
func RunClaimFaults(t *testing.T, newStore func(t *testing.T) driver.Store) {
	t.Helper()
	t.Run("ClaimCommitFails", func(t *testing.T) {
		s := newStore(t)
		t.Cleanup(func() { _ = s.Close() })
		testClaimCommitFails(t, s)
	})
}

func testClaimCommitFails(t *testing.T, s driver.Store) {
	ctx := context.Background()
	mustWorkspace(t, s, "a")
	if err := s.WebhookEndpointCreate(ctx, endpoint("a", "we_1", 1)); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"msg_1", "msg_2", "msg_3", "msg_h"} {
		if _, _, err := s.MessageCreate(ctx, queuedMessage("a", id, at(0))); err != nil {
			t.Fatal(err)
		}
	}
	// msg_h becomes sent, which queues one webhook delivery.
	statusChange(t, s, "a", "msg_h", "queued", "sent", "evt_1", 1)

	claimMsgs := func(owner string) ([]*messaging.Message, error) {
		return s.MessageClaim(ctx, &driver.MessageClaimParams{Owner: owner, Now: at(10), Lease: time.Minute, Limit: 10})
	}
	claimHooks := func(owner string) ([]*messaging.WebhookDelivery, error) {
		return s.WebhookClaim(ctx, &driver.WebhookClaimParams{Owner: owner, Now: at(10), Lease: time.Minute, Limit: 10})
	}

	for i := range 2 {
		got, err := claimMsgs(FailingOwner + "-m")
		if err == nil || got != nil {
			t.Fatalf("message claim %d whose commit fails = %d messages (%v), %v; want nil and an error", i, len(got), claimIDs(got), err)
		}
		hooks, err := claimHooks(FailingOwner + "-h")
		if err == nil || hooks != nil {
			t.Fatalf("webhook claim %d whose commit fails = %d deliveries, %v; want nil and an error", i, len(hooks), err)
		}
	}

	// Nothing of the failed claims stayed: the next claim gets everything,
	// as a first attempt, under its own lease.
	got, err := claimMsgs("w1")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"msg_1", "msg_2", "msg_3"}, claimIDs(got)); d != "" {
		t.Fatalf("claim after failed claims (-want +got):\n%s", d)
	}
	for _, m := range got {
		if m.Attempts != 1 || m.LeaseOwner != "w1" {
			t.Errorf("%s after failed claims: attempts %d owner %q; want 1, w1", m.ID, m.Attempts, m.LeaseOwner)
		}
	}
	hooks, err := claimHooks("w1")
	if err != nil {
		t.Fatal(err)
	}
	if len(hooks) != 1 || hooks[0].Attempts != 1 || hooks[0].EventID != "evt_1" {
		t.Fatalf("webhook claim after failed claims = %+v; want evt_1 as first attempt", hooks)
	}
}
