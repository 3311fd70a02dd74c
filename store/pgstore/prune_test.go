package pgstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"
	"github.com/ujumbe/messaging/store/pgstore"
)

// workspaceWithEndpoint creates workspace a with the webhook endpoint
// we_1 (every event), created at at.
func workspaceWithEndpoint(t *testing.T, s *pgstore.Store, at time.Time) {
	t.Helper()
	ctx := context.Background()
	if err := s.WorkspaceCreate(ctx, &messaging.WorkspaceInfo{ID: "a", Name: "a", Channels: []string{}, CreatedAt: at}); err != nil {
		t.Fatal(err)
	}
	if err := s.WebhookEndpointCreate(ctx, &messaging.WebhookEndpoint{ID: "we_1", WorkspaceID: "a", URL: "https://hooks.example/1",
		SecretSealed: []byte("x"), CreatedAt: at}); err != nil {
		t.Fatal(err)
	}
}

// TestWebhookRecordPruneSkipsLockedRows: a record's prune of an
// endpoint's oldest finished deliveries skips those another transaction
// holds (deleting them itself), rather than waiting for its commit: every
// record prunes, and waiting serialized the records of all instances.
func TestWebhookRecordPruneSkipsLockedRows(t *testing.T) {
	ctx := context.Background()
	url := testURL(t)
	s := open(t, url, newSchema(t, url), 0)
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	workspaceWithEndpoint(t, s, at)
	for _, id := range []string{"msg_1", "msg_2", "msg_3"} {
		ev := &driver.EventRecord{ID: "evt_" + id, WorkspaceID: "a", MessageID: id, Type: messaging.EventMessageStatusUpdated, Payload: []byte("{}"), CreatedAt: at}
		if queued, err := s.WebhookQueueEvent(ctx, &driver.WebhookQueueParams{EndpointID: "we_1", Event: ev}); err != nil || !queued {
			t.Fatal(queued, err)
		}
	}
	ds, err := s.WebhookClaim(ctx, &driver.WebhookClaimParams{Owner: "h1", Now: at, Lease: time.Minute, Limit: 10})
	if err != nil || len(ds) != 3 {
		t.Fatalf("claim: %d, %v", len(ds), err)
	}
	recordDelivered := func(d *messaging.WebhookDelivery, keep int) error {
		return s.WebhookRecord(ctx, &driver.WebhookRecordParams{ID: d.ID, Owner: "h1", State: record.DeliveryDelivered, LastStatus: 200, At: at, Keep: keep})
	}
	for _, d := range ds[:2] {
		if err := recordDelivered(d, 10); err != nil {
			t.Fatal(err)
		}
	}
	// Another transaction holds the oldest finished delivery, as a
	// concurrent record's prune would.
	tx, err := s.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, "SELECT 1 FROM webhook_deliveries WHERE seq = $1 FOR UPDATE", ds[0].ID); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- recordDelivered(ds[2], 1) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Error("the record waited for another transaction's hold on a delivery its prune would delete")
		_ = tx.Rollback(ctx)
		<-done
	}
}
