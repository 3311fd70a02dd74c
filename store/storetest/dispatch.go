package storetest

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
)

func queuedMessage(ws, id string, due time.Time) *messaging.Message {
	return &messaging.Message{ID: id, WorkspaceID: ws, ConversationID: "conv", Channel: "whatsapp", To: "+254712345678",
		Direction: "outbound", Status: "queued", Type: "text", Text: "hi", CreatedAt: due, UpdatedAt: due, DueAt: due}
}

func claimIDs(ms []*messaging.Message) []string {
	out := []string{}
	for _, m := range ms {
		out = append(out, m.ID)
	}
	sort.Strings(out) // which messages were claimed matters, not their order
	return out
}

func testMessageClaim(t *testing.T, s driver.Store) {
	ctx := context.Background()
	mustWorkspace(t, s, "a")
	mustWorkspace(t, s, "b")
	for _, m := range []*messaging.Message{
		queuedMessage("a", "msg_3", at(3)),
		queuedMessage("a", "msg_1", at(1)),
		queuedMessage("b", "msg_2", at(2)),
		queuedMessage("a", "msg_9", at(90)), // not due yet
	} {
		if _, _, err := s.MessageCreate(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	sent := queuedMessage("a", "msg_s", at(0))
	sent.Status = "sent"
	if _, _, err := s.MessageCreate(ctx, sent); err != nil {
		t.Fatal(err)
	}

	got, err := s.MessageClaim(ctx, &driver.MessageClaimParams{Owner: "w1", Now: at(10), Lease: time.Minute, Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"msg_1", "msg_2"}, claimIDs(got)); d != "" {
		t.Fatalf("first claim, oldest due first (-want +got):\n%s", d)
	}
	for _, m := range got {
		if m.LeaseOwner != "w1" || m.Attempts != 1 || !m.DueAt.Equal(at(70)) {
			t.Errorf("claimed %s: owner %q attempts %d due %v; want w1, 1, %v", m.ID, m.LeaseOwner, m.Attempts, m.DueAt, at(70))
		}
	}
	got, _ = s.MessageClaim(ctx, &driver.MessageClaimParams{Owner: "w2", Now: at(10), Lease: time.Minute, Limit: 10})
	if d := cmp.Diff([]string{"msg_3"}, claimIDs(got)); d != "" {
		t.Errorf("second claim sees only unleased due messages (-want +got):\n%s", d)
	}

	// A released message is due again at its new time, with its error kept.
	ok, err := s.MessageRelease(ctx, &driver.MessageReleaseParams{WorkspaceID: "a", ID: "msg_1", Owner: "w1", DueAt: at(20), LastError: "[131000] Something went wrong"})
	if err != nil || !ok {
		t.Fatalf("release by owner: %v, %v", ok, err)
	}
	if ok, _ := s.MessageRelease(ctx, &driver.MessageReleaseParams{WorkspaceID: "a", ID: "msg_3", Owner: "w1", DueAt: at(20)}); ok {
		t.Error("a worker released a message leased by another")
	}
	_, err = s.MessageRelease(ctx, &driver.MessageReleaseParams{WorkspaceID: "b", ID: "msg_1", Owner: "w1", DueAt: at(20)})
	wantErr(t, "release in other workspace", err, messaging.ErrNotFound)
	m, _ := s.MessageGet(ctx, "a", "msg_1")
	if m.LeaseOwner != "" || !m.DueAt.Equal(at(20)) || m.LastError != "[131000] Something went wrong" {
		t.Errorf("after release: %+v", m)
	}
	got, _ = s.MessageClaim(ctx, &driver.MessageClaimParams{Owner: "w3", Now: at(19), Lease: time.Minute, Limit: 10})
	if len(got) != 0 {
		t.Errorf("claimed %v before their due time", claimIDs(got))
	}
	got, _ = s.MessageClaim(ctx, &driver.MessageClaimParams{Owner: "w3", Now: at(20), Lease: time.Minute, Limit: 10})
	if d := cmp.Diff([]string{"msg_1"}, claimIDs(got)); d != "" || got[0].Attempts != 2 {
		t.Errorf("reclaim after release (-want +got):\n%s attempts=%v", d, got)
	}

	// An expired lease (the worker died) makes the message claimable again.
	got, _ = s.MessageClaim(ctx, &driver.MessageClaimParams{Owner: "w4", Now: at(71), Lease: time.Minute, Limit: 10})
	if d := cmp.Diff([]string{"msg_2", "msg_3"}, claimIDs(got)); d != "" {
		t.Errorf("claim after leases ran out (-want +got):\n%s", d)
	}
	// A status change ends the lease and takes the message out of the queue.
	after, changed, err := updateStatus(ctx, s, &driver.MessageStatusParams{WorkspaceID: "b", ID: "msg_2", From: []string{"queued"}, To: "sent", ProviderMessageID: "wamid.2", At: at(72)})
	if err != nil || !changed || after.LeaseOwner != "" {
		t.Fatalf("sent: %+v %v %v", after, changed, err)
	}
	got, _ = s.MessageClaim(ctx, &driver.MessageClaimParams{Owner: "w5", Now: at(1000), Lease: time.Minute, Limit: 10})
	if d := cmp.Diff([]string{"msg_1", "msg_3", "msg_9"}, claimIDs(got)); d != "" {
		t.Errorf("sent messages are never claimed (-want +got):\n%s", d)
	}

	byID, err := s.MessageGetByProviderID(ctx, "wamid.2")
	if err != nil || byID.ID != "msg_2" || byID.WorkspaceID != "b" {
		t.Errorf("MessageGetByProviderID = %+v, %v", byID, err)
	}
	_, err = s.MessageGetByProviderID(ctx, "wamid.none")
	wantErr(t, "unknown provider id", err, messaging.ErrNotFound)
	_, err = s.MessageGetByProviderID(ctx, "")
	wantErr(t, "empty provider id", err, messaging.ErrNotFound)
}

// testMessageUnconfirmed checks the possibly-sent mark: the claim that
// begins a hand-over sets UnconfirmedSince when it is not set, a later
// claim keeps the first mark, a release sets it as told, and a status
// change clears it.
func testMessageUnconfirmed(t *testing.T, s driver.Store) {
	ctx := context.Background()
	mustWorkspace(t, s, "a")
	for _, id := range []string{"msg_u1", "msg_u2"} {
		if _, _, err := s.MessageCreate(ctx, queuedMessage("a", id, at(1))); err != nil {
			t.Fatal(err)
		}
	}
	unconfirmed := func(id string) *time.Time {
		t.Helper()
		m, err := s.MessageGet(ctx, "a", id)
		if err != nil {
			t.Fatal(err)
		}
		return m.UnconfirmedSince
	}
	wantMark := func(what string, got *time.Time, want time.Time) {
		t.Helper()
		if got == nil || !got.Equal(want) {
			t.Errorf("%s: UnconfirmedSince = %v, want %v", what, got, want)
		}
	}
	if got := unconfirmed("msg_u1"); got != nil {
		t.Errorf("a new message is marked unconfirmed since %v", got)
	}
	claimed, err := s.MessageClaim(ctx, &driver.MessageClaimParams{Owner: "w1", Now: at(10), Lease: time.Minute, Limit: 10})
	if err != nil || len(claimed) != 2 {
		t.Fatalf("claim: %d, %v", len(claimed), err)
	}
	for _, m := range claimed {
		wantMark("the claimed copy of "+m.ID, m.UnconfirmedSince, at(10))
		wantMark("the stored "+m.ID, unconfirmed(m.ID), at(10))
	}
	// The lease runs out with no outcome recorded: the next claim keeps the
	// first mark, so it knows the message may have been sent.
	claimed, _ = s.MessageClaim(ctx, &driver.MessageClaimParams{Owner: "w2", Now: at(80), Lease: time.Minute, Limit: 10})
	if len(claimed) != 2 {
		t.Fatalf("claim after the lease: %d messages", len(claimed))
	}
	for _, m := range claimed {
		wantMark("claimed again "+m.ID, m.UnconfirmedSince, at(10))
	}
	// A release waiting for confirmation keeps a mark; one after a refusal
	// clears it.
	mark := at(10)
	if ok, err := s.MessageRelease(ctx, &driver.MessageReleaseParams{WorkspaceID: "a", ID: "msg_u1", Owner: "w2", DueAt: at(310), Unconfirmed: &mark}); err != nil || !ok {
		t.Fatalf("release keeping the mark: %v, %v", ok, err)
	}
	wantMark("released unconfirmed", unconfirmed("msg_u1"), at(10))
	if m, _ := s.MessageGet(ctx, "a", "msg_u1"); m.Attempts != 2 {
		t.Errorf("released without Untried: attempts %d, want the two claims", m.Attempts)
	}
	if ok, err := s.MessageRelease(ctx, &driver.MessageReleaseParams{WorkspaceID: "a", ID: "msg_u2", Owner: "w2", DueAt: at(90), LastError: "[131000] x"}); err != nil || !ok {
		t.Fatalf("release clearing the mark: %v, %v", ok, err)
	}
	if got := unconfirmed("msg_u2"); got != nil {
		t.Errorf("released after a refusal: UnconfirmedSince = %v, want none", got)
	}
	claimed, _ = s.MessageClaim(ctx, &driver.MessageClaimParams{Owner: "w3", Now: at(90), Lease: time.Minute, Limit: 10})
	if len(claimed) != 1 || claimed[0].ID != "msg_u2" {
		t.Fatalf("claim at 90: %v", claimIDs(claimed))
	}
	wantMark("a fresh hand-over after a refusal", claimed[0].UnconfirmedSince, at(90))
	// A claim that handed nothing over gives its attempt back.
	if ok, err := s.MessageRelease(ctx, &driver.MessageReleaseParams{WorkspaceID: "a", ID: "msg_u2", Owner: "w3", DueAt: at(90), Untried: true}); err != nil || !ok {
		t.Fatalf("untried release: %v, %v", ok, err)
	}
	if m, _ := s.MessageGet(ctx, "a", "msg_u2"); m.Attempts != 2 || m.UnconfirmedSince != nil {
		t.Errorf("after an untried release: attempts %d (want 2, the third claim taken back), mark %v", m.Attempts, m.UnconfirmedSince)
	}
	claimed, _ = s.MessageClaim(ctx, &driver.MessageClaimParams{Owner: "w3", Now: at(90), Lease: time.Minute, Limit: 10})
	if len(claimed) != 1 || claimed[0].Attempts != 3 {
		t.Fatalf("claim again at 90: %v", claimed)
	}
	// Recording the outcome clears the mark.
	after, changed, err := updateStatus(ctx, s, &driver.MessageStatusParams{WorkspaceID: "a", ID: "msg_u2", From: []string{"queued"}, To: "sent", ProviderMessageID: "wamid.u2", At: at(91)})
	if err != nil || !changed {
		t.Fatalf("sent: %v %v", changed, err)
	}
	if after.UnconfirmedSince != nil || unconfirmed("msg_u2") != nil {
		t.Errorf("sent, UnconfirmedSince = %v / %v, want none", after.UnconfirmedSince, unconfirmed("msg_u2"))
	}
}

func testMessageClaimConcurrent(t *testing.T, s driver.Store) {
	ctx := context.Background()
	mustWorkspace(t, s, "a")
	const n = 200
	for i := range n {
		if _, _, err := s.MessageCreate(ctx, queuedMessage("a", fmt.Sprintf("msg_%03d", i), at(i%7))); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	var all []string
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				got, err := s.MessageClaim(ctx, &driver.MessageClaimParams{Owner: fmt.Sprintf("w%d", w), Now: at(10), Lease: time.Hour, Limit: 7})
				if err != nil {
					t.Error(err)
					return
				}
				if len(got) == 0 {
					return
				}
				mu.Lock()
				all = append(all, claimIDs(got)...)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	sort.Strings(all)
	if len(all) != n || len(slices.Compact(slices.Clone(all))) != n {
		t.Errorf("8 concurrent claimers took %d claims of %d distinct messages; want each of %d exactly once", len(all), len(slices.Compact(all)), n)
	}
}

func endpoint(ws, id string, sec int) *messaging.WebhookEndpoint {
	return &messaging.WebhookEndpoint{ID: id, WorkspaceID: ws, URL: "https://hooks.example/" + id, SecretSealed: []byte("sealed-" + id), CreatedAt: at(sec)}
}

// statusEvent is the event record of a status change of a message.
func statusEvent(ws, id, from, to, evID string, sec int) *driver.EventRecord {
	return &driver.EventRecord{ID: evID, WorkspaceID: ws, MessageID: id, Type: "message.status_updated",
		Payload: []byte(`{"id":"` + evID + `","prev":"` + from + `","now":"` + to + `"}`), CreatedAt: at(sec)}
}

// statusChange moves a message to status and queues an event for it.
func statusChange(t *testing.T, s driver.Store, ws, id, from, to, evID string, sec int) {
	t.Helper()
	_, changed, err := updateStatus(context.Background(), s, &driver.MessageStatusParams{
		WorkspaceID: ws, ID: id, From: []string{from}, To: to, At: at(sec),
		Event: statusEvent(ws, id, from, to, evID, sec),
	})
	if err != nil || !changed {
		t.Fatalf("status %s->%s: changed=%v err=%v", from, to, changed, err)
	}
}

func testWebhookOutbox(t *testing.T, s driver.Store) {
	ctx := context.Background()
	mustWorkspace(t, s, "a")
	mustWorkspace(t, s, "b")
	for _, e := range []*messaging.WebhookEndpoint{endpoint("a", "we_1", 1), endpoint("a", "we_2", 2), endpoint("b", "we_3", 3)} {
		if err := s.WebhookEndpointCreate(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	wantErr(t, "endpoint of missing workspace", s.WebhookEndpointCreate(ctx, endpoint("zz", "we_9", 1)), messaging.ErrNotFound)
	list, err := s.WebhookEndpointList(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]*messaging.WebhookEndpoint{endpoint("a", "we_1", 1), endpoint("a", "we_2", 2)}, list); d != "" {
		t.Errorf("WebhookEndpointList (-want +got):\n%s", d)
	}

	for _, m := range []*messaging.Message{queuedMessage("a", "msg_1", at(0)), queuedMessage("a", "msg_2", at(0))} {
		if _, _, err := s.MessageCreate(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	statusChange(t, s, "a", "msg_1", "queued", "sent", "evt_1", 10)
	statusChange(t, s, "a", "msg_1", "sent", "delivered", "evt_2", 11)
	statusChange(t, s, "a", "msg_2", "queued", "sent", "evt_3", 12)
	// An ignored change queues nothing.
	_, changed, _ := updateStatus(ctx, s, &driver.MessageStatusParams{WorkspaceID: "a", ID: "msg_1", From: []string{"queued"}, To: "sent", At: at(13),
		Event: statusEvent("a", "msg_1", "queued", "sent", "evt_ignored_1", 13)})
	if changed {
		t.Fatal("status moved backwards")
	}
	// Nor does one of a message without pending deliveries, where the
	// claims below would find it first.
	if _, _, err := s.MessageCreate(ctx, queuedMessage("a", "msg_3", at(0))); err != nil {
		t.Fatal(err)
	}
	_, changed, _ = updateStatus(ctx, s, &driver.MessageStatusParams{WorkspaceID: "a", ID: "msg_3", From: []string{"sent"}, To: "delivered", At: at(13),
		Event: statusEvent("a", "msg_3", "sent", "delivered", "evt_ignored_3", 13)})
	if changed {
		t.Fatal("status changed from a status it did not have")
	}

	type key struct{ Endpoint, Event string }
	claim := func(owner string, now time.Time) map[key]*messaging.WebhookDelivery {
		t.Helper()
		ds, err := s.WebhookClaim(ctx, &driver.WebhookClaimParams{Owner: owner, Now: now, Lease: time.Minute, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		out := map[key]*messaging.WebhookDelivery{}
		for _, d := range ds {
			out[key{d.EndpointID, d.EventID}] = d
		}
		return out
	}
	got := claim("h1", at(20))
	for k := range got {
		if strings.HasPrefix(k.Event, "evt_ignored") {
			t.Errorf("the event of an unchanged status was queued for %s", k.Endpoint)
		}
	}
	// Per endpoint and message, only the first pending event is claimable:
	// evt_2 waits for evt_1.
	want := []key{{"we_1", "evt_1"}, {"we_1", "evt_3"}, {"we_2", "evt_1"}, {"we_2", "evt_3"}}
	var gotKeys []key
	for k := range got {
		gotKeys = append(gotKeys, k)
	}
	sort.Slice(gotKeys, func(i, j int) bool {
		return gotKeys[i].Endpoint+gotKeys[i].Event < gotKeys[j].Endpoint+gotKeys[j].Event
	})
	if d := cmp.Diff(want, gotKeys); d != "" {
		t.Fatalf("first claim (-want +got):\n%s", d)
	}
	d1 := got[key{"we_1", "evt_1"}]
	if d1.URL != "https://hooks.example/we_1" || string(d1.Secret) != "sealed-we_1" || string(d1.Payload) != `{"id":"evt_1","prev":"queued","now":"sent"}` ||
		d1.MessageID != "msg_1" || d1.WorkspaceID != "a" || d1.Attempts != 1 || d1.LeaseOwner != "h1" {
		t.Errorf("delivery we_1/evt_1 = %+v", d1)
	}
	if len(claim("h2", at(21))) != 0 {
		t.Error("leased deliveries were claimed twice")
	}

	// we_1/evt_1 delivered: evt_2 becomes claimable for we_1 only.
	if err := s.WebhookRecord(ctx, &driver.WebhookRecordParams{ID: d1.ID, Owner: "h1", State: record.DeliveryDelivered, LastStatus: 200, At: at(22)}); err != nil {
		t.Fatal(err)
	}
	// we_2/evt_1 failed with a retry at +5 s: evt_2 of we_2 keeps waiting.
	d2 := got[key{"we_2", "evt_1"}]
	if err := s.WebhookRecord(ctx, &driver.WebhookRecordParams{ID: d2.ID, Owner: "h1", State: record.DeliveryPending, DueAt: at(27), LastStatus: 500, LastError: "endpoint answered 500", At: at(22)}); err != nil {
		t.Fatal(err)
	}
	// A record by a worker that does not hold the lease changes nothing: the
	// delivery stays h1's until its lease ends, then is claimed again as it
	// was (checked after the 410 below).
	d3 := got[key{"we_1", "evt_3"}]
	if err := s.WebhookRecord(ctx, &driver.WebhookRecordParams{ID: d3.ID, Owner: "intruder", State: record.DeliveryDelivered, LastStatus: 200, At: at(22)}); err != nil {
		t.Fatal(err)
	}
	got = claim("h3", at(23))
	if _, ok := got[key{"we_1", "evt_2"}]; !ok || len(got) != 1 {
		t.Errorf("after delivering evt_1 to we_1, claim = %v; want only we_1/evt_2", got)
	}
	got = claim("h3", at(27))
	if d, ok := got[key{"we_2", "evt_1"}]; !ok || len(got) != 1 || d.Attempts != 2 {
		t.Errorf("retry due at +5 s: claim = %v; want we_2/evt_1 on its second attempt", got)
	}

	// 410: the endpoint is disabled and its pending deliveries are dropped.
	if err := s.WebhookRecord(ctx, &driver.WebhookRecordParams{ID: got[key{"we_2", "evt_1"}].ID, Owner: "h3", State: record.DeliveryFailed, LastStatus: 410, DisableEndpoint: true, At: at(28)}); err != nil {
		t.Fatal(err)
	}
	list, _ = s.WebhookEndpointList(ctx, "a")
	if len(list) != 2 || list[1].DisabledAt == nil || !list[1].DisabledAt.Equal(at(28)) || list[0].DisabledAt != nil {
		t.Errorf("after 410 endpoints = %+v; want we_2 disabled at %v", list, at(28))
	}
	// h1's lease of we_1/evt_3 ended at +80 s; h3's of we_1/evt_2 lasts to
	// +83 s. The intruder's record left we_1/evt_3 pending and untouched.
	got = claim("h4", at(81))
	want3 := *d3
	want3.Attempts, want3.LeaseOwner, want3.DueAt = 2, "h4", at(141)
	if d := cmp.Diff(map[key]*messaging.WebhookDelivery{{"we_1", "evt_3"}: &want3}, got); d != "" {
		t.Errorf("claim after h1's lease ended, following a record by a worker without the lease (-want +got):\n%s", d)
	}
	got = claim("h4", at(10_000))
	for k := range got {
		if k.Endpoint == "we_2" {
			t.Errorf("a disabled endpoint still has a pending delivery %v", k)
		}
	}
	// A disabled endpoint gets no new deliveries.
	statusChange(t, s, "a", "msg_2", "sent", "read", "evt_4", 30)
	got = claim("h5", at(10_000))
	if _, ok := got[key{"we_2", "evt_4"}]; ok {
		t.Error("a disabled endpoint was given a new event")
	}

	wantErr(t, "delete endpoint of other workspace", s.WebhookEndpointDelete(ctx, "b", "we_1"), messaging.ErrNotFound)
	if err := s.WebhookEndpointDelete(ctx, "a", "we_1"); err != nil {
		t.Fatal(err)
	}
	list, _ = s.WebhookEndpointList(ctx, "a")
	if len(list) != 1 || list[0].ID != "we_2" {
		t.Errorf("after delete: %+v", list)
	}
	if got := claim("h6", at(1_000_000)); len(got) != 0 {
		t.Errorf("deliveries of deleted or disabled endpoints remain: %v", got)
	}
}

func testWebhookEndpointUpdate(t *testing.T, s driver.Store) {
	ctx := context.Background()
	mustWorkspace(t, s, "a")
	mustWorkspace(t, s, "b")
	disabled := endpoint("a", "we_1", 1)
	off := at(5)
	disabled.DisabledAt = &off
	for _, e := range []*messaging.WebhookEndpoint{disabled, endpoint("a", "we_2", 2), endpoint("b", "we_3", 3)} {
		if err := s.WebhookEndpointCreate(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	_, err := s.WebhookEndpointUpdate(ctx, &driver.WebhookEndpointUpdateParams{WorkspaceID: "b", ID: "we_1", SecretSealed: []byte("x")})
	wantErr(t, "update endpoint of other workspace", err, messaging.ErrNotFound)
	_, err = s.WebhookEndpointUpdate(ctx, &driver.WebhookEndpointUpdateParams{WorkspaceID: "a", ID: "we_9", SecretSealed: []byte("x")})
	wantErr(t, "update missing endpoint", err, messaging.ErrNotFound)

	// A pending delivery of we_2 is kept and claimed with the new secret.
	if _, _, err := s.MessageCreate(ctx, queuedMessage("a", "msg_1", at(0))); err != nil {
		t.Fatal(err)
	}
	statusChange(t, s, "a", "msg_1", "queued", "sent", "evt_1", 10)
	on := true
	for _, id := range []string{"we_1", "we_2"} {
		if _, err := s.WebhookEndpointUpdate(ctx, &driver.WebhookEndpointUpdateParams{WorkspaceID: "a", ID: id, SecretSealed: []byte("new-" + id), Enabled: &on}); err != nil {
			t.Fatal(err)
		}
	}
	list, err := s.WebhookEndpointList(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	want1, want2 := endpoint("a", "we_1", 1), endpoint("a", "we_2", 2)
	want1.SecretSealed, want2.SecretSealed = []byte("new-we_1"), []byte("new-we_2")
	if d := cmp.Diff([]*messaging.WebhookEndpoint{want1, want2}, list); d != "" {
		t.Errorf("WebhookEndpointList after update (-want +got):\n%s", d)
	}
	if other, _ := s.WebhookEndpointList(ctx, "b"); len(other) != 1 || string(other[0].SecretSealed) != "sealed-we_3" {
		t.Errorf("endpoint of workspace b changed: %+v", other)
	}
	ds, err := s.WebhookClaim(ctx, &driver.WebhookClaimParams{Owner: "h1", Now: at(20), Lease: time.Minute, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 1 || ds[0].EndpointID != "we_2" || string(ds[0].Secret) != "new-we_2" {
		t.Errorf("claim after update = %+v; want the pending delivery of we_2 with its new secret", ds)
	}
	// The endpoint enabled again gets the next events.
	statusChange(t, s, "a", "msg_1", "sent", "delivered", "evt_2", 30)
	ds, err = s.WebhookClaim(ctx, &driver.WebhookClaimParams{Owner: "h2", Now: at(40), Lease: time.Minute, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 1 || ds[0].EndpointID != "we_1" || ds[0].EventID != "evt_2" {
		t.Errorf("claim after re-enabling = %+v; want evt_2 for we_1 (we_2's evt_2 waits behind evt_1)", ds)
	}
}

// testWebhookRecordGone records outcomes of deliveries that are no longer
// there: already finished, of a deleted endpoint, or never known. The
// answer is the one for a record by a worker whose lease ended: nil, and
// nothing changes (a finished delivery does not come back).
func testWebhookRecordGone(t *testing.T, s driver.Store) {
	ctx := context.Background()
	mustWorkspace(t, s, "a")
	for _, e := range []*messaging.WebhookEndpoint{endpoint("a", "we_1", 1), endpoint("a", "we_2", 2)} {
		if err := s.WebhookEndpointCreate(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := s.MessageCreate(ctx, queuedMessage("a", "msg_1", at(0))); err != nil {
		t.Fatal(err)
	}
	statusChange(t, s, "a", "msg_1", "queued", "sent", "evt_1", 10)
	ds, err := s.WebhookClaim(ctx, &driver.WebhookClaimParams{Owner: "h1", Now: at(20), Lease: time.Minute, Limit: 10})
	if err != nil || len(ds) != 2 {
		t.Fatalf("WebhookClaim: %d deliveries, error %v; want 2", len(ds), err)
	}
	byEndpoint := map[string]*messaging.WebhookDelivery{}
	for _, d := range ds {
		byEndpoint[d.EndpointID] = d
	}
	done, orphan := byEndpoint["we_1"], byEndpoint["we_2"]
	recordRow := func(what string, id int64, state string) {
		t.Helper()
		err := s.WebhookRecord(ctx, &driver.WebhookRecordParams{ID: id, Owner: "h1", State: state, DueAt: at(30), LastStatus: 500, LastError: "again", At: at(21)})
		if err != nil {
			t.Errorf("WebhookRecord of %s: %v, want nil (the lease is gone)", what, err)
		}
	}
	recordRow("a delivery", done.ID, record.DeliveryDelivered)
	recordRow("a delivery already delivered", done.ID, record.DeliveryPending)
	recordRow("a delivery already delivered", done.ID, record.DeliveryFailed)
	if err := s.WebhookEndpointDelete(ctx, "a", "we_2"); err != nil {
		t.Fatal(err)
	}
	recordRow("a delivery of a deleted endpoint", orphan.ID, record.DeliveryPending)
	recordRow("an unknown delivery", done.ID+orphan.ID+1000, record.DeliveryPending)
	if got, err := s.WebhookClaim(ctx, &driver.WebhookClaimParams{Owner: "h2", Now: at(1000), Lease: time.Minute, Limit: 10}); err != nil || len(got) != 0 {
		t.Errorf("claim after records of finished and deleted deliveries: %+v, error %v; want nothing", got, err)
	}
}
