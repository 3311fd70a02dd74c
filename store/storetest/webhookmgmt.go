package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
)

// claimAll claims every delivery due at now for owner.
func claimAll(t *testing.T, s driver.Store, owner string, now time.Time) []*messaging.WebhookDelivery {
	t.Helper()
	ds, err := s.WebhookClaim(context.Background(), &driver.WebhookClaimParams{Owner: owner, Now: now, Lease: time.Minute, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

func listDeliveries(t *testing.T, s driver.Store, ws, endpointID string, before int64, limit int) []*messaging.WebhookDelivery {
	t.Helper()
	ds, err := s.WebhookDeliveryList(context.Background(), &driver.WebhookDeliveryListParams{WorkspaceID: ws, EndpointID: endpointID, Before: before, Limit: limit})
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

func eventIDs(ds []*messaging.WebhookDelivery) []string {
	out := []string{}
	for _, d := range ds {
		out = append(out, d.EndpointID+"/"+d.EventID)
	}
	return out
}

func tp(sec int) *time.Time { t := at(sec); return &t }

// testWebhookEndpointManage: an endpoint is read by id in its workspace
// only; its URL, events and description change; a rotation keeps the
// replaced secret as the previous one, which claims carry; disabling by
// the operator fails its pending deliveries, queues nothing new and claims
// nothing of it (not even a delivery queued again), until it is enabled.
func testWebhookEndpointManage(t *testing.T, s driver.Store) {
	ctx := context.Background()
	mustWorkspace(t, s, "a")
	mustWorkspace(t, s, "b")
	if err := s.WebhookEndpointCreate(ctx, endpoint("a", "we_1", 1)); err != nil {
		t.Fatal(err)
	}
	got, err := s.WebhookEndpointGet(ctx, "a", "we_1")
	if d := cmp.Diff(endpoint("a", "we_1", 1), got); d != "" || err != nil {
		t.Errorf("WebhookEndpointGet (-want +got):\n%s %v", d, err)
	}
	_, err = s.WebhookEndpointGet(ctx, "b", "we_1")
	wantErr(t, "get endpoint of other workspace", err, messaging.ErrNotFound)
	_, err = s.WebhookEndpointGet(ctx, "a", "we_9")
	wantErr(t, "get missing endpoint", err, messaging.ErrNotFound)

	update := func(p driver.WebhookEndpointUpdateParams) *messaging.WebhookEndpoint {
		t.Helper()
		p.WorkspaceID, p.ID = "a", "we_1"
		e, err := s.WebhookEndpointUpdate(ctx, &p)
		if err != nil {
			t.Fatal(err)
		}
		stored, err := s.WebhookEndpointGet(ctx, "a", "we_1")
		if d := cmp.Diff(stored, e); d != "" || err != nil {
			t.Errorf("WebhookEndpointUpdate returned another endpoint than is stored (-stored +returned):\n%s %v", d, err)
		}
		return e
	}
	url, desc, events := "https://hooks.example/v2", "orders service", []string{messaging.EventMessageStatusUpdated, messaging.EventWebhookTest}
	want := endpoint("a", "we_1", 1)
	want.URL, want.Description, want.Events = url, desc, events
	if d := cmp.Diff(want, update(driver.WebhookEndpointUpdateParams{URL: &url, Description: &desc, Events: &events})); d != "" {
		t.Errorf("after changing url, description and events (-want +got):\n%s", d)
	}
	none := []string{}
	if e := update(driver.WebhookEndpointUpdateParams{Events: &none}); e.Events != nil || e.URL != url {
		t.Errorf("after setting no events: %+v; want Events nil (every type), the rest kept", e)
	}

	// Rotations: the replaced secret is the previous one until its expiry;
	// a secret set without PreviousUntil clears it.
	e := update(driver.WebhookEndpointUpdateParams{SecretSealed: []byte("s2"), PreviousUntil: tp(100)})
	if string(e.SecretSealed) != "s2" || string(e.PreviousSecretSealed) != "sealed-we_1" || e.PreviousSecretExpiresAt == nil || !e.PreviousSecretExpiresAt.Equal(at(100)) {
		t.Errorf("after a rotation: secret %q previous %q until %v; want s2, sealed-we_1 until %v", e.SecretSealed, e.PreviousSecretSealed, e.PreviousSecretExpiresAt, at(100))
	}
	e = update(driver.WebhookEndpointUpdateParams{SecretSealed: []byte("s3"), PreviousUntil: tp(200)})
	if string(e.PreviousSecretSealed) != "s2" || !e.PreviousSecretExpiresAt.Equal(at(200)) {
		t.Errorf("after a second rotation: previous %q until %v; want s2 until %v", e.PreviousSecretSealed, e.PreviousSecretExpiresAt, at(200))
	}
	if _, _, err := s.MessageCreate(ctx, queuedMessage("a", "msg_1", at(0))); err != nil {
		t.Fatal(err)
	}
	statusChange(t, s, "a", "msg_1", "queued", "sent", "evt_1", 10)
	ds := claimAll(t, s, "h1", at(11))
	if len(ds) != 1 || string(ds[0].Secret) != "s3" || string(ds[0].PreviousSecret) != "s2" || ds[0].PreviousSecretExpiresAt == nil || !ds[0].PreviousSecretExpiresAt.Equal(at(200)) {
		t.Fatalf("claim during a rotation's overlap = %+v; want one delivery with secret s3 and previous s2 until %v", ds, at(200))
	}
	if err := s.WebhookRecord(ctx, &driver.WebhookRecordParams{ID: ds[0].ID, Owner: "h1", State: record.DeliveryPending, DueAt: at(30), LastStatus: 500, At: at(12), Keep: 10}); err != nil {
		t.Fatal(err)
	}
	if e := update(driver.WebhookEndpointUpdateParams{SecretSealed: []byte("s4")}); e.PreviousSecretSealed != nil || e.PreviousSecretExpiresAt != nil {
		t.Errorf("a secret set without PreviousUntil kept the previous secret: %+v", e)
	}

	// Disabled by the operator.
	off, on := false, true
	e = update(driver.WebhookEndpointUpdateParams{Enabled: &off, At: at(50)})
	if e.DisabledAt == nil || !e.DisabledAt.Equal(at(50)) || e.DisabledReason != record.DisabledByOperator {
		t.Errorf("disabled: DisabledAt %v reason %q; want %v, %q", e.DisabledAt, e.DisabledReason, at(50), record.DisabledByOperator)
	}
	if e := update(driver.WebhookEndpointUpdateParams{Enabled: &off, At: at(60)}); !e.DisabledAt.Equal(at(50)) {
		t.Errorf("disabling a disabled endpoint moved DisabledAt to %v; want %v kept", e.DisabledAt, at(50))
	}
	hist := listDeliveries(t, s, "a", "we_1", 0, 10)
	if len(hist) != 1 || hist[0].State != record.DeliveryFailed || hist[0].LastError != "endpoint disabled" || hist[0].LeaseOwner != "" {
		t.Errorf("the pending delivery of an endpoint disabled: %+v; want failed, endpoint disabled", hist)
	}
	statusChange(t, s, "a", "msg_1", "sent", "delivered", "evt_2", 61)
	if _, err := s.WebhookRedeliver(ctx, &driver.WebhookRedeliverParams{WorkspaceID: "a", EndpointID: "we_1", ID: hist[0].ID, Now: at(62)}); err != nil {
		t.Fatal(err)
	}
	if ds := claimAll(t, s, "h2", at(10_000)); len(ds) != 0 {
		t.Errorf("claimed %v of a disabled endpoint", eventIDs(ds))
	}
	if hist := listDeliveries(t, s, "a", "we_1", 0, 10); len(hist) != 1 {
		t.Errorf("an event was queued for a disabled endpoint: %v", eventIDs(hist))
	}
	e = update(driver.WebhookEndpointUpdateParams{Enabled: &on})
	if e.DisabledAt != nil || e.DisabledReason != "" {
		t.Errorf("enabled: DisabledAt %v reason %q; want both cleared", e.DisabledAt, e.DisabledReason)
	}
	if ds := claimAll(t, s, "h3", at(10_000)); len(eventIDs(ds)) != 1 || ds[0].EventID != "evt_1" {
		t.Errorf("claim after enabling = %v; want the delivery queued again, we_1/evt_1", eventIDs(ds))
	}
	_, err = s.WebhookEndpointUpdate(ctx, &driver.WebhookEndpointUpdateParams{WorkspaceID: "b", ID: "we_1", Enabled: &off, At: at(70)})
	wantErr(t, "disable endpoint of other workspace", err, messaging.ErrNotFound)
	if e, _ := s.WebhookEndpointGet(ctx, "a", "we_1"); e.DisabledAt != nil {
		t.Error("an update in another workspace disabled the endpoint")
	}
}

// testWebhookEventFilter: an event is queued only for the endpoints that
// subscribe to its type (or to every type).
func testWebhookEventFilter(t *testing.T, s driver.Store) {
	ctx := context.Background()
	mustWorkspace(t, s, "a")
	all, test, status := endpoint("a", "we_all", 1), endpoint("a", "we_test", 2), endpoint("a", "we_status", 3)
	test.Events = []string{messaging.EventWebhookTest}
	status.Events = []string{messaging.EventMessageStatusUpdated, messaging.EventWebhookTest}
	for _, e := range []*messaging.WebhookEndpoint{all, test, status} {
		if err := s.WebhookEndpointCreate(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := s.WebhookEndpointGet(ctx, "a", "we_status"); got == nil || !cmp.Equal(got.Events, status.Events) {
		t.Errorf("stored events = %+v; want %v", got, status.Events)
	}
	for _, id := range []string{"msg_1", "msg_2"} {
		if _, _, err := s.MessageCreate(ctx, queuedMessage("a", id, at(0))); err != nil {
			t.Fatal(err)
		}
	}
	statusChange(t, s, "a", "msg_1", "queued", "sent", "evt_1", 10)
	other := statusEvent("a", "msg_2", "queued", "sent", "evt_2", 11)
	other.Type = "message.other"
	if _, changed, err := updateStatus(ctx, s, &driver.MessageStatusParams{WorkspaceID: "a", ID: "msg_2", From: []string{"queued"}, To: "sent", At: at(11), Event: other}); err != nil || !changed {
		t.Fatal(changed, err)
	}
	got := eventIDs(claimAll(t, s, "h1", at(20)))
	wantIDs := []string{"we_all/evt_1", "we_all/evt_2", "we_status/evt_1"}
	if d := cmp.Diff(wantIDs, slices.Sorted(slices.Values(got))); d != "" {
		t.Errorf("deliveries queued by event type (-want +got):\n%s", d)
	}
	for _, d := range listDeliveries(t, s, "a", "we_all", 0, 10) {
		if want := map[string]string{"evt_1": messaging.EventMessageStatusUpdated, "evt_2": "message.other"}[d.EventID]; d.EventType != want {
			t.Errorf("delivery of %s has EventType %q, want %q", d.EventID, d.EventType, want)
		}
	}
}

// testWebhookDeliveryHistory: finished deliveries are kept with their
// outcome and listed newest first with paging, in their workspace only;
// the oldest finished ones beyond Keep are deleted; a delivery is queued
// again whatever its state, except while leased.
func testWebhookDeliveryHistory(t *testing.T, s driver.Store) {
	ctx := context.Background()
	mustWorkspace(t, s, "a")
	mustWorkspace(t, s, "b")
	if err := s.WebhookEndpointCreate(ctx, endpoint("a", "we_1", 1)); err != nil {
		t.Fatal(err)
	}
	ids := []string{"msg_1", "msg_2", "msg_3", "msg_4", "msg_5"}
	for i, id := range ids {
		if _, _, err := s.MessageCreate(ctx, queuedMessage("a", id, at(0))); err != nil {
			t.Fatal(err)
		}
		statusChange(t, s, "a", id, "queued", "sent", "evt_"+id[4:], 10+i)
	}
	byEvent := map[string]*messaging.WebhookDelivery{}
	for _, d := range claimAll(t, s, "h1", at(20)) {
		byEvent[d.EventID] = d
	}
	if len(byEvent) != 5 {
		t.Fatalf("claimed %d deliveries, want 5", len(byEvent))
	}
	recordRow := func(ev, owner, state string, status int, due, now, keep int) {
		t.Helper()
		err := s.WebhookRecord(ctx, &driver.WebhookRecordParams{ID: byEvent[ev].ID, Owner: owner, State: state, DueAt: at(due), LastStatus: status,
			LastError: map[bool]string{true: "endpoint answered 500"}[status == 500], At: at(now), Keep: keep})
		if err != nil {
			t.Fatal(err)
		}
	}
	recordRow("evt_1", "h1", record.DeliveryDelivered, 200, 0, 21, 10)
	recordRow("evt_2", "h1", record.DeliveryFailed, 500, 0, 22, 10)
	recordRow("evt_3", "h1", record.DeliveryPending, 500, 40, 23, 10)
	recordRow("evt_4", "h1", record.DeliveryDelivered, 204, 0, 24, 10)

	list := listDeliveries(t, s, "a", "we_1", 0, 10)
	if d := cmp.Diff([]string{"we_1/evt_5", "we_1/evt_4", "we_1/evt_3", "we_1/evt_2", "we_1/evt_1"}, eventIDs(list)); d != "" {
		t.Fatalf("deliveries newest first (-want +got):\n%s", d)
	}
	for _, d := range list {
		want := *byEvent[d.EventID]
		want.URL, want.Secret, want.PreviousSecret, want.PreviousSecretExpiresAt, want.Payload = "", nil, nil, nil, nil
		switch d.EventID {
		case "evt_1":
			want.State, want.LastStatus, want.LeaseOwner, want.LastAttemptAt, want.DeliveredAt, want.DueAt = record.DeliveryDelivered, 200, "", tp(21), tp(21), d.DueAt
		case "evt_2":
			want.State, want.LastStatus, want.LastError, want.LeaseOwner, want.LastAttemptAt, want.DueAt = record.DeliveryFailed, 500, "endpoint answered 500", "", tp(22), d.DueAt
		case "evt_3":
			want.LastStatus, want.LastError, want.LeaseOwner, want.LastAttemptAt, want.DueAt = 500, "endpoint answered 500", "", tp(23), at(40)
		case "evt_4":
			want.State, want.LastStatus, want.LeaseOwner, want.LastAttemptAt, want.DeliveredAt, want.DueAt = record.DeliveryDelivered, 204, "", tp(24), tp(24), d.DueAt
		}
		if d := cmp.Diff(&want, d); d != "" {
			t.Errorf("listed delivery (-want +got):\n%s", d)
		}
	}
	page1 := listDeliveries(t, s, "a", "we_1", 0, 2)
	page2 := listDeliveries(t, s, "a", "we_1", page1[1].Seq, 2)
	page3 := listDeliveries(t, s, "a", "we_1", page2[1].Seq, 2)
	if d := cmp.Diff([][]string{{"we_1/evt_5", "we_1/evt_4"}, {"we_1/evt_3", "we_1/evt_2"}, {"we_1/evt_1"}}, [][]string{eventIDs(page1), eventIDs(page2), eventIDs(page3)}); d != "" {
		t.Errorf("pages of 2 (-want +got):\n%s", d)
	}
	_, err := s.WebhookDeliveryList(ctx, &driver.WebhookDeliveryListParams{WorkspaceID: "b", EndpointID: "we_1", Limit: 10})
	wantErr(t, "list deliveries of an endpoint of another workspace", err, messaging.ErrNotFound)
	_, err = s.WebhookDeliveryList(ctx, &driver.WebhookDeliveryListParams{WorkspaceID: "a", EndpointID: "we_9", Limit: 10})
	wantErr(t, "list deliveries of a missing endpoint", err, messaging.ErrNotFound)

	// Redelivery.
	redeliver := func(ev string, now int) (*messaging.WebhookDelivery, error) {
		return s.WebhookRedeliver(ctx, &driver.WebhookRedeliverParams{WorkspaceID: "a", EndpointID: "we_1", ID: byEvent[ev].ID, Now: at(now)})
	}
	_, err = redeliver("evt_5", 30) // h1's lease runs to +80 s
	wantErr(t, "redeliver a leased delivery", err, messaging.ErrConflict)
	d, err := redeliver("evt_1", 30)
	if err != nil {
		t.Fatal(err)
	}
	if d.State != record.DeliveryPending || !d.DueAt.Equal(at(30)) || d.DeliveredAt != nil || d.Attempts != 1 || d.LastStatus != 200 || d.EventID != "evt_1" {
		t.Errorf("redelivered delivery = %+v; want pending, due %v, not delivered, its attempts and last status kept", d, at(30))
	}
	if d, err := redeliver("evt_2", 30); err != nil || d.State != record.DeliveryPending {
		t.Errorf("redeliver a failed delivery: %+v, %v", d, err)
	}
	if _, err := redeliver("evt_3", 30); err != nil {
		t.Errorf("redeliver a pending delivery not leased: %v", err)
	}
	for _, tc := range []driver.WebhookRedeliverParams{
		{WorkspaceID: "b", EndpointID: "we_1", ID: byEvent["evt_1"].ID, Now: at(30)},
		{WorkspaceID: "a", EndpointID: "we_9", ID: byEvent["evt_1"].ID, Now: at(30)},
		{WorkspaceID: "a", EndpointID: "we_1", ID: 1 << 40, Now: at(30)},
	} {
		_, err := s.WebhookRedeliver(ctx, &tc)
		wantErr(t, "redeliver "+tc.WorkspaceID+"/"+tc.EndpointID, err, messaging.ErrNotFound)
	}
	got := map[string]*messaging.WebhookDelivery{}
	for _, d := range claimAll(t, s, "h2", at(30)) {
		got[d.EventID] = d
	}
	if len(got) != 3 || got["evt_1"] == nil || got["evt_1"].Attempts != 2 || got["evt_2"] == nil || got["evt_3"] == nil {
		t.Errorf("claim after redeliveries = %v; want evt_1 (second attempt), evt_2 and evt_3 due now", got)
	}
	// The lease of evt_5 ended: it may be queued again.
	if _, err := redeliver("evt_5", 81); err != nil {
		t.Errorf("redeliver a delivery whose lease ended: %v", err)
	}

	// Keep: recording evt_1 with Keep 2 leaves the 2 finished deliveries of
	// largest Seq, evt_4 and evt_2: evt_1, finished last, goes.
	byEvent["evt_1"], byEvent["evt_2"] = got["evt_1"], got["evt_2"]
	recordRow("evt_2", "h2", record.DeliveryDelivered, 200, 0, 31, 10)
	recordRow("evt_1", "h2", record.DeliveryDelivered, 200, 0, 32, 2)
	if d := cmp.Diff([]string{"we_1/evt_5", "we_1/evt_4", "we_1/evt_3", "we_1/evt_2"}, eventIDs(listDeliveries(t, s, "a", "we_1", 0, 10))); d != "" {
		t.Errorf("after keeping 2 finished deliveries (-want +got):\n%s", d)
	}

	// A 410 disables the endpoint as gone and fails its pending deliveries.
	byEvent["evt_3"] = got["evt_3"]
	if err := s.WebhookRecord(ctx, &driver.WebhookRecordParams{ID: byEvent["evt_3"].ID, Owner: "h2", State: record.DeliveryFailed, LastStatus: 410,
		DisableEndpoint: true, At: at(33), Keep: 10}); err != nil {
		t.Fatal(err)
	}
	if e, _ := s.WebhookEndpointGet(ctx, "a", "we_1"); e.DisabledAt == nil || e.DisabledReason != record.DisabledGone {
		t.Errorf("after a 410: %+v; want disabled, reason %q", e, record.DisabledGone)
	}
	for _, d := range listDeliveries(t, s, "a", "we_1", 0, 10) {
		if d.State == record.DeliveryPending {
			t.Errorf("delivery %s of an endpoint gone is still pending", d.EventID)
		}
	}
}

// testWebhookRecordTest: a test event is recorded as a finished delivery
// of its endpoint, marked Test (other deliveries are not), delivered or
// failed with its one attempt, whether the endpoint is enabled or not; it
// is listed with the others, never claimed unless redelivered (then with
// its payload), and pruned like them; an endpoint of another workspace or
// none is ErrNotFound.
func testWebhookRecordTest(t *testing.T, s driver.Store) {
	ctx := context.Background()
	mustWorkspace(t, s, "a")
	mustWorkspace(t, s, "b")
	if err := s.WebhookEndpointCreate(ctx, endpoint("a", "we_1", 1)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.MessageCreate(ctx, queuedMessage("a", "msg_1", at(0))); err != nil {
		t.Fatal(err)
	}
	statusChange(t, s, "a", "msg_1", "queued", "sent", "evt_1", 10)
	testEvent := func(id string, sec int) *driver.EventRecord {
		return &driver.EventRecord{ID: id, WorkspaceID: "a", Type: messaging.EventWebhookTest, Payload: []byte(`{"id":"` + id + `"}`), CreatedAt: at(sec)}
	}
	recordRow := func(ws, endpointID, id string, sec int, state string, status int, lastErr string, keep int) (*messaging.WebhookDelivery, error) {
		ev := testEvent(id, sec)
		ev.WorkspaceID = ws
		return s.WebhookRecordTest(ctx, &driver.WebhookRecordTestParams{EndpointID: endpointID, Event: ev, State: state,
			LastStatus: status, LastError: lastErr, At: at(sec + 1), Keep: keep})
	}
	ok, err := recordRow("a", "we_1", "evt_t1", 20, record.DeliveryDelivered, 200, "", 10)
	if err != nil {
		t.Fatal(err)
	}
	want := &messaging.WebhookDelivery{ID: ok.Seq, Seq: ok.Seq, EndpointID: "we_1", WorkspaceID: "a", EventID: "evt_t1", EventType: messaging.EventWebhookTest,
		State: record.DeliveryDelivered, Attempts: 1, DueAt: at(21), LastStatus: 200, LastAttemptAt: tp(21), DeliveredAt: tp(21), CreatedAt: at(20), Test: true}
	if d := cmp.Diff(want, ok); d != "" {
		t.Errorf("recorded test delivery (-want +got):\n%s", d)
	}
	off := false
	if _, err := s.WebhookEndpointUpdate(ctx, &driver.WebhookEndpointUpdateParams{WorkspaceID: "a", ID: "we_1", Enabled: &off, At: at(25)}); err != nil {
		t.Fatal(err)
	}
	failed, err := recordRow("a", "we_1", "evt_t2", 30, record.DeliveryFailed, 0, "connection refused", 10)
	if err != nil {
		t.Fatalf("record a test of a disabled endpoint: %v", err)
	}
	if failed.State != record.DeliveryFailed || failed.DeliveredAt != nil || failed.LastError != "connection refused" || !failed.Test || failed.Seq <= ok.Seq {
		t.Errorf("failed test delivery = %+v; want failed, not delivered, its error, Test, after the first", failed)
	}
	list := listDeliveries(t, s, "a", "we_1", 0, 10)
	if d := cmp.Diff([]string{"we_1/evt_t2", "we_1/evt_t1", "we_1/evt_1"}, eventIDs(list)); d != "" {
		t.Fatalf("deliveries with the tests (-want +got):\n%s", d)
	}
	if d := cmp.Diff(want, list[1]); d != "" {
		t.Errorf("listed test delivery (-want +got):\n%s", d)
	}
	if list[2].Test {
		t.Errorf("an event's delivery is listed as a test: %+v", list[2])
	}
	for _, tc := range []struct{ ws, endpoint string }{{"b", "we_1"}, {"a", "we_9"}} {
		_, err := recordRow(tc.ws, tc.endpoint, "evt_tx", 40, record.DeliveryDelivered, 200, "", 10)
		wantErr(t, "record a test of "+tc.ws+"/"+tc.endpoint, err, messaging.ErrNotFound)
	}
	on := true
	if _, err := s.WebhookEndpointUpdate(ctx, &driver.WebhookEndpointUpdateParams{WorkspaceID: "a", ID: "we_1", Enabled: &on}); err != nil {
		t.Fatal(err)
	}
	// Nothing is claimable: the tests are finished, and disabling the
	// endpoint failed evt_1.
	if ds := claimAll(t, s, "h1", at(50)); len(ds) != 0 {
		t.Errorf("claim = %v; want none", eventIDs(ds))
	}
	if _, err := s.WebhookRedeliver(ctx, &driver.WebhookRedeliverParams{WorkspaceID: "a", EndpointID: "we_1", ID: ok.ID, Now: at(60)}); err != nil {
		t.Fatal(err)
	}
	ds := claimAll(t, s, "h2", at(60))
	if len(ds) != 1 || ds[0].EventID != "evt_t1" || string(ds[0].Payload) != `{"id":"evt_t1"}` || !ds[0].Test || ds[0].Attempts != 2 {
		t.Errorf("claim after redelivering a test = %+v; want evt_t1 with its payload, Test, second attempt", ds)
	}
	// Keep 1: the newest finished delivery alone is kept.
	if _, err := recordRow("a", "we_1", "evt_t3", 70, record.DeliveryDelivered, 204, "", 1); err != nil {
		t.Fatal(err)
	}
	var finished []string
	for _, d := range listDeliveries(t, s, "a", "we_1", 0, 10) {
		if d.State != record.DeliveryPending {
			finished = append(finished, d.EventID)
		}
	}
	if d := cmp.Diff([]string{"evt_t3"}, finished); d != "" {
		t.Errorf("finished deliveries after a test recorded with Keep 1 (-want +got):\n%s", d)
	}
}
