package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/ujumbe/messaging/store/driver"
)

// testWebhookSeqGrows: a later event's delivery has a larger Seq than an
// earlier one's (the contract of WebhookDelivery.Seq), whatever the
// messages.
func testWebhookSeqGrows(t *testing.T, s driver.Store) {
	ctx := context.Background()
	mustWorkspace(t, s, "a")
	if err := s.WebhookEndpointCreate(ctx, endpoint("a", "we_1", 1)); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"msg_1", "msg_2", "msg_3"} {
		if _, _, err := s.MessageCreate(ctx, queuedMessage("a", id, at(0))); err != nil {
			t.Fatal(err)
		}
	}
	statusChange(t, s, "a", "msg_2", "queued", "sent", "evt_1", 10)
	statusChange(t, s, "a", "msg_1", "queued", "sent", "evt_2", 11)
	statusChange(t, s, "a", "msg_3", "queued", "sent", "evt_3", 12)
	ds, err := s.WebhookClaim(ctx, &driver.WebhookClaimParams{Owner: "w", Now: at(20), Lease: time.Minute, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	seq := map[string]int64{}
	for _, d := range ds {
		seq[d.EventID] = d.Seq
	}
	if len(seq) != 3 || !(seq["evt_1"] < seq["evt_2"] && seq["evt_2"] < seq["evt_3"]) {
		t.Errorf("delivery Seq by event = %v, want them growing in the order the events were queued", seq)
	}
}
