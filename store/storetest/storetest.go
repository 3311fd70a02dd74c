// Package storetest is the conformance suite every driver.Store passes.
// A store's own test calls Run with a constructor of fresh, empty stores:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) driver.Store { return memstore.New() })
//	}
package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ujumbe/messaging/store/driver"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
)

// Run runs the conformance suite. newStore must return a new, empty store;
// Run closes it when the test ends.
func Run(t *testing.T, newStore func(t *testing.T) driver.Store) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, s driver.Store)
	}{
		{"Workspaces", testWorkspaces},
		{"WorkspaceList", testWorkspaceList},
		{"WorkspaceSettings", testWorkspaceSettings},
		{"WorkspaceUnconfirmedSends", testWorkspaceUnconfirmedSends},
		{"APIKeys", testAPIKeys},
		{"APIKeyTouch", testAPIKeyTouch},
		{"ContactRoundTrip", testContactRoundTrip},
		{"ContactDedup", testContactDedup},
		{"ContactDedupConcurrent", testContactDedupConcurrent},
		{"ContactUpdate", testContactUpdate},
		{"ContactList", testContactList},
		{"ContactSearch", testContactSearch},
		{"ContactSearchEdges", testContactSearchEdges},
		{"Templates", testTemplates},
		{"TemplateUpdateDelete", testTemplateUpdateDelete},
		{"Connections", testConnections},
		{"AuditEvents", testAuditEvents},
		{"Sessions", testSessions},
		{"SessionSweep", testSessionSweep},
		{"SessionDeleteAll", testSessionDeleteAll},
		{"APIKeyListOrder", testAPIKeyListOrder},
		{"WebhookSeqGrows", testWebhookSeqGrows},
		{"ConnectionUpdate", testConnectionUpdate},
		{"ConnectionHealth", testConnectionHealth},
		{"ConnectionPutConcurrent", testConnectionPutConcurrent},
		{"ConnectionClaims", testConnectionClaims},
		{"Leases", testLeases},
		{"LeaseConcurrent", testLeaseConcurrent},
		{"Messages", testMessages},
		{"MessageIdempotencyConcurrent", testMessageIdempotencyConcurrent},
		{"MessageOptedOut", testMessageOptedOut},
		{"MessageStatus", testMessageStatus},
		{"MessageUpdateStatuses", testMessageUpdateStatuses},
		{"MessageHistory", testMessageHistory},
		{"MessageList", testMessageList},
		{"MessageHourlyCounts", testMessageHourlyCounts},
		{"ConversationList", testConversationList},
		{"MessageReceive", testMessageReceive},
		{"MessageContent", testMessageContent},
		{"OutboundContent", testOutboundContent},
		{"MessageMarkRead", testMessageMarkRead},
		{"Media", testMedia},
		{"WebhookQueueEvent", testWebhookQueueEvent},
		{"Suppressions", testSuppressions},
		{"ContactsByPhone", testContactsByPhone},
		{"MessageClaim", testMessageClaim},
		{"MessageClaimConcurrent", testMessageClaimConcurrent},
		{"MessageScheduled", testMessageScheduled},
		{"MessageCancel", testMessageCancel},
		{"MessageCancelClaimRace", testMessageCancelClaimRace},
		{"MessageUnconfirmed", testMessageUnconfirmed},
		{"MessageQueueStats", testMessageQueueStats},
		{"TraceParentRoundTrip", testTraceParentRoundTrip},
		{"DeliveryTraceParent", testDeliveryTraceParent},
		{"Ping", testPing},
		{"WebhookOutbox", testWebhookOutbox},
		{"CancellationTruth", testCancellationTruth},
		{"WebhookEndpointUpdate", testWebhookEndpointUpdate},
		{"WebhookRecordGone", testWebhookRecordGone},
		{"WebhookEndpointManage", testWebhookEndpointManage},
		{"WebhookEventFilter", testWebhookEventFilter},
		{"WebhookDeliveryHistory", testWebhookDeliveryHistory},
		{"WebhookRecordTest", testWebhookRecordTest},
		{"PendingReports", testPendingReports},
		{"PendingReportExpiry", testPendingReportExpiry},
		{"PendingReportLimit", testPendingReportLimit},
		{"PendingReportConcurrent", testPendingReportConcurrent},
		{"LongTextsKept", testLongTextsKept},
		{"ContextCanceled", testContextCanceled},
		{"ZeroTimesRoundTrip", testZeroTimesRoundTrip},
		{"MessageFallbacks", testMessageFallbacks},
		{"MessageFallbackClaimConcurrent", testMessageFallbackClaimConcurrent},
		{"WorkspaceSMSAccounts", testWorkspaceSMSAccounts},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			t.Cleanup(func() { _ = s.Close() })
			tc.fn(t, s)
		})
	}
}

// base is a timestamp with nanoseconds, to prove times round-trip exactly.
var base = time.Date(2026, 3, 4, 5, 6, 7, 123456789, time.UTC)

func at(sec int) time.Time { return base.Add(time.Duration(sec) * time.Second) }

func mustWorkspace(t *testing.T, s driver.Store, id string, channels ...string) {
	t.Helper()
	if channels == nil {
		channels = []string{}
	}
	if err := s.WorkspaceCreate(context.Background(), &messaging.WorkspaceInfo{ID: id, Name: "WS " + id, Channels: channels, CreatedAt: base}); err != nil {
		t.Fatalf("WorkspaceCreate(%s): %v", id, err)
	}
}

func wantErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s: got error %v, want %v", what, err, want)
	}
}

func testWorkspaces(t *testing.T, s driver.Store) {
	ctx := context.Background()
	mustWorkspace(t, s, "a", "whatsapp")
	wantErr(t, "duplicate workspace", s.WorkspaceCreate(ctx, &messaging.WorkspaceInfo{ID: "a", CreatedAt: base}), messaging.ErrConflict)
	_, err := s.WorkspaceGet(ctx, "missing")
	wantErr(t, "missing workspace", err, messaging.ErrNotFound)

	for _, p := range []driver.ChannelParams{
		{WorkspaceID: "a", Channel: "messenger", Connected: true},
		{WorkspaceID: "a", Channel: "instagram", Connected: true},
		{WorkspaceID: "a", Channel: "instagram", Connected: true},
		{WorkspaceID: "a", Channel: "whatsapp", Connected: false},
		{WorkspaceID: "a", Channel: "whatsapp", Connected: false},
	} {
		p.At = base
		if err := s.WorkspaceSetChannel(ctx, &p); err != nil {
			t.Fatalf("WorkspaceSetChannel(%+v): %v", p, err)
		}
	}
	got, err := s.WorkspaceGet(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	want := &messaging.WorkspaceInfo{ID: "a", Name: "WS a", Channels: []string{"instagram", "messenger"}, CreatedAt: base}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("WorkspaceGet (-want +got):\n%s", d)
	}
	wantErr(t, "channel of missing workspace", s.WorkspaceSetChannel(ctx, &driver.ChannelParams{WorkspaceID: "zz", Channel: "whatsapp", Connected: true, At: base}), messaging.ErrNotFound)
}

func testAPIKeys(t *testing.T, s driver.Store) {
	ctx := context.Background()
	mustWorkspace(t, s, "a")
	mustWorkspace(t, s, "b")
	exp, used := at(3600), at(-5)
	// key_1 has a name (not ASCII) and a last use, which round-trip;
	// key_2 and key_3 have neither.
	k1 := &messaging.APIKey{ID: "key_1", WorkspaceID: "a", Name: "Mpesa bridge – prod ✓", Prefix: "mk_abcdefgh_", Hash: []byte("hash-1-------------------------!"),
		Scopes: []string{"read:contacts", "write:contacts"}, ExpiresAt: &exp, CreatedAt: at(1), LastUsedAt: &used}
	k2 := &messaging.APIKey{ID: "key_2", WorkspaceID: "b", Prefix: "mk_abcdefgh_", Hash: []byte("hash-2-------------------------!"), Scopes: []string{"read:messages"}, CreatedAt: at(2)}
	k3 := &messaging.APIKey{ID: "key_3", WorkspaceID: "a", Prefix: "mk_other___", Hash: []byte("hash-3-------------------------!"), Scopes: []string{"read:messages"}, CreatedAt: at(3)}
	for _, k := range []*messaging.APIKey{k1, k2, k3} {
		if err := s.APIKeyCreate(ctx, k); err != nil {
			t.Fatalf("APIKeyCreate(%s): %v", k.ID, err)
		}
	}
	dup := *k3
	dup.ID = "key_4"
	wantErr(t, "duplicate key hash", s.APIKeyCreate(ctx, &dup), messaging.ErrConflict)
	orphan := *k3
	orphan.ID, orphan.WorkspaceID, orphan.Hash = "key_5", "missing", []byte("hash-5")
	wantErr(t, "key of missing workspace", s.APIKeyCreate(ctx, &orphan), messaging.ErrNotFound)

	// byPrefix returns the keys of a prefix by id; their order is not part
	// of the contract.
	byPrefix := func(prefix string) []*messaging.APIKey {
		t.Helper()
		got, err := s.APIKeysByPrefix(ctx, prefix)
		if err != nil {
			t.Fatalf("APIKeysByPrefix(%s): %v", prefix, err)
		}
		slices.SortFunc(got, func(a, b *messaging.APIKey) int { return strings.Compare(a.ID, b.ID) })
		return got
	}
	if d := cmp.Diff([]*messaging.APIKey{k1, k2}, byPrefix("mk_abcdefgh_")); d != "" {
		t.Errorf("APIKeysByPrefix (-want +got):\n%s", d)
	}
	list, err := s.APIKeyList(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]*messaging.APIKey{k1, k3}, list); d != "" {
		t.Errorf("APIKeyList (-want +got):\n%s", d)
	}

	wantErr(t, "revoke key of other workspace", s.APIKeyRevoke(ctx, &driver.APIKeyRevokeParams{WorkspaceID: "b", ID: "key_1", At: at(10)}), messaging.ErrNotFound)
	wantErr(t, "revoke missing key", s.APIKeyRevoke(ctx, &driver.APIKeyRevokeParams{WorkspaceID: "a", ID: "key_9", At: at(10)}), messaging.ErrNotFound)
	if err := s.APIKeyRevoke(ctx, &driver.APIKeyRevokeParams{WorkspaceID: "a", ID: "key_1", At: at(10)}); err != nil {
		t.Fatal(err)
	}
	if err := s.APIKeyRevoke(ctx, &driver.APIKeyRevokeParams{WorkspaceID: "a", ID: "key_1", At: at(20)}); err != nil {
		t.Fatalf("revoking twice: %v", err)
	}
	// A revoked key is still returned, with its first revocation time; key_2
	// is untouched by the revocation of key_1.
	revoked1 := *k1
	rev := at(10)
	revoked1.RevokedAt = &rev
	if d := cmp.Diff([]*messaging.APIKey{&revoked1, k2}, byPrefix("mk_abcdefgh_")); d != "" {
		t.Errorf("APIKeysByPrefix after revoking key_1 twice (-want +got):\n%s", d)
	}

	// APIKeyUpdate replaces scopes and expiry, of a revoked key too, and
	// nothing else; a nil ExpiresAt clears the expiry.
	wantErr(t, "update key of other workspace", s.APIKeyUpdate(ctx, &driver.APIKeyUpdateParams{WorkspaceID: "b", ID: "key_1", Scopes: []string{"read:messages"}}), messaging.ErrNotFound)
	wantErr(t, "update missing key", s.APIKeyUpdate(ctx, &driver.APIKeyUpdateParams{WorkspaceID: "a", ID: "key_9", Scopes: []string{"read:messages"}}), messaging.ErrNotFound)
	newExp := at(7200)
	if err := s.APIKeyUpdate(ctx, &driver.APIKeyUpdateParams{WorkspaceID: "a", ID: "key_1", Scopes: []string{"read:messages"}, ExpiresAt: &newExp}); err != nil {
		t.Fatal(err)
	}
	if err := s.APIKeyUpdate(ctx, &driver.APIKeyUpdateParams{WorkspaceID: "a", ID: "key_3", Scopes: []string{"read:contacts", "read:templates"}}); err != nil {
		t.Fatal(err)
	}
	want1, want3 := *k1, *k3
	want1.Scopes, want1.ExpiresAt, want1.RevokedAt = []string{"read:messages"}, &newExp, &rev
	want3.Scopes = []string{"read:contacts", "read:templates"}
	list, err = s.APIKeyList(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]*messaging.APIKey{&want1, &want3}, list); d != "" {
		t.Errorf("APIKeyList after APIKeyUpdate (-want +got):\n%s", d)
	}
	if err := s.APIKeyUpdate(ctx, &driver.APIKeyUpdateParams{WorkspaceID: "a", ID: "key_1", Scopes: []string{"read:messages"}}); err != nil {
		t.Fatal(err)
	}
	// key_1 lost its expiry (still revoked); key_2 is untouched by updates
	// of other keys.
	want1.ExpiresAt = nil
	if d := cmp.Diff([]*messaging.APIKey{&want1, k2}, byPrefix("mk_abcdefgh_")); d != "" {
		t.Errorf("APIKeysByPrefix after APIKeyUpdate (-want +got):\n%s", d)
	}
}

// testAPIKeyTouch: APIKeyTouch sets LastUsedAt, never moves it back, and
// leaves alone a key of another workspace, a missing key and every other
// field and key.
func testAPIKeyTouch(t *testing.T, s driver.Store) {
	ctx := context.Background()
	mustWorkspace(t, s, "a")
	mustWorkspace(t, s, "b")
	k1 := &messaging.APIKey{ID: "key_1", WorkspaceID: "a", Name: "one", Prefix: "mk_touch____", Hash: []byte("hash-t1"), Scopes: []string{"read:messages"}, CreatedAt: at(1)}
	k2 := &messaging.APIKey{ID: "key_2", WorkspaceID: "b", Prefix: "mk_touch____", Hash: []byte("hash-t2"), Scopes: []string{"read:messages"}, CreatedAt: at(2)}
	for _, k := range []*messaging.APIKey{k1, k2} {
		if err := s.APIKeyCreate(ctx, k); err != nil {
			t.Fatalf("APIKeyCreate(%s): %v", k.ID, err)
		}
	}
	touch := func(ws, id string, sec int) {
		t.Helper()
		if err := s.APIKeyTouch(ctx, &driver.APIKeyTouchParams{WorkspaceID: ws, ID: id, At: at(sec)}); err != nil {
			t.Fatalf("APIKeyTouch(%s, %s, %d): %v", ws, id, sec, err)
		}
	}
	check := func(what string, want1, want2 *time.Time) {
		t.Helper()
		w1, w2 := *k1, *k2
		w1.LastUsedAt, w2.LastUsedAt = want1, want2
		got, err := s.APIKeysByPrefix(ctx, "mk_touch____")
		if err != nil {
			t.Fatal(err)
		}
		slices.SortFunc(got, func(a, b *messaging.APIKey) int { return strings.Compare(a.ID, b.ID) })
		if d := cmp.Diff([]*messaging.APIKey{&w1, &w2}, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", what, d)
		}
	}
	touch("b", "key_1", 10) // another workspace's key: no change, no error
	touch("a", "key_9", 10) // a missing key: no error
	check("after touching a key of another workspace and a missing key", nil, nil)
	touch("a", "key_1", 60)
	t60 := at(60)
	check("after the first touch", &t60, nil)
	touch("a", "key_1", 30) // an older use recorded late
	check("after an older touch", &t60, nil)
	touch("a", "key_1", 120)
	t120 := at(120)
	check("after a later touch", &t120, nil)
	list, err := s.APIKeyList(ctx, "a")
	if err != nil || len(list) != 1 || list[0].LastUsedAt == nil || !list[0].LastUsedAt.Equal(t120) {
		t.Errorf("APIKeyList after touches: %v, %v; want key_1 last used at %v", list, err, t120)
	}
}

func contact(ws, id string, sec int, first, last, phone, email string) *messaging.Contact {
	full := first
	if last != "" {
		full += " " + last
	}
	return &messaging.Contact{
		ID: id, WorkspaceID: ws, FirstName: first, LastName: last, FullName: full,
		Phone: phone, Email: email, EmailKey: lower(email), Source: "api", Tags: []string{},
		Version: 1, CreatedAt: at(sec), UpdatedAt: at(sec),
	}
}

func lower(s string) string { return driver.SearchFold(s) }

func testContactRoundTrip(t *testing.T, s driver.Store) {
	ctx := context.Background()
	mustWorkspace(t, s, "a")
	mustWorkspace(t, s, "b")
	c := contact("a", "ct_1", 1, "Amina", "Otieno", "+254712345678", "Amina@Example.com")
	c.Company, c.JobTitle, c.Website, c.Notes = "Acme", "CTO", "https://acme.example", "met at expo; said \"hi\" ' %_"
	c.Tags, c.Lifecycle = []string{"vip", "kenya"}, "customer"
	if err := s.ContactCreate(ctx, c); err != nil {
		t.Fatal(err)
	}
	c.Tags[0] = "mutated after create"
	got, err := s.ContactGet(ctx, "a", "ct_1")
	if err != nil {
		t.Fatal(err)
	}
	want := contact("a", "ct_1", 1, "Amina", "Otieno", "+254712345678", "Amina@Example.com")
	want.Company, want.JobTitle, want.Website, want.Notes = "Acme", "CTO", "https://acme.example", "met at expo; said \"hi\" ' %_"
	want.Tags, want.Lifecycle = []string{"vip", "kenya"}, "customer"
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("ContactGet (-want +got):\n%s", d)
	}
	_, err = s.ContactGet(ctx, "b", "ct_1")
	wantErr(t, "contact of another workspace", err, messaging.ErrNotFound)
	_, err = s.ContactGet(ctx, "a", "ct_missing")
	wantErr(t, "missing contact", err, messaging.ErrNotFound)
	wantErr(t, "contact in missing workspace", s.ContactCreate(ctx, contact("zz", "ct_2", 1, "X", "", "+254712345679", "")), messaging.ErrNotFound)
}

func testContactDedup(t *testing.T, s driver.Store) {
	ctx := context.Background()
	mustWorkspace(t, s, "a")
	mustWorkspace(t, s, "b")
	if err := s.ContactCreate(ctx, contact("a", "ct_1", 1, "A", "", "+254712345678", "a@example.com")); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "same phone", s.ContactCreate(ctx, contact("a", "ct_2", 2, "B", "", "+254712345678", "")), messaging.ErrConflict)
	wantErr(t, "same email, other case", s.ContactCreate(ctx, contact("a", "ct_3", 3, "C", "", "", "A@EXAMPLE.COM")), messaging.ErrConflict)
	for _, c := range []*messaging.Contact{
		contact("b", "ct_4", 4, "D", "", "+254712345678", "a@example.com"), // other workspace
		contact("a", "ct_5", 5, "E", "", "", "e@example.com"),              // empty phone twice is fine
		contact("a", "ct_6", 6, "F", "", "", "f@example.com"),
		contact("a", "ct_7", 7, "G", "", "+254712345670", ""), // empty email twice is fine
		contact("a", "ct_8", 8, "H", "", "+254712345671", ""),
	} {
		if err := s.ContactCreate(ctx, c); err != nil {
			t.Errorf("ContactCreate(%s): %v", c.ID, err)
		}
	}
	page, total, err := s.ContactList(ctx, &driver.ContactListParams{WorkspaceID: "a", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if total != 5 || len(page) != 5 {
		t.Errorf("workspace a holds %d contacts (page %d), want 5: a refused create stored something", total, len(page))
	}
}

func testContactDedupConcurrent(t *testing.T, s driver.Store) {
	ctx := context.Background()
	mustWorkspace(t, s, "a")
	const n = 20
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.ContactCreate(ctx, contact("a", fmt.Sprintf("ct_%02d", i), i, "Same", "", "+254712345678", fmt.Sprintf("p%d@example.com", i)))
		}()
	}
	wg.Wait()
	var ok, conflict int
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case errors.Is(err, messaging.ErrConflict):
			conflict++
		default:
			t.Errorf("unexpected error: %v", err)
		}
	}
	if ok != 1 || conflict != n-1 {
		t.Errorf("%d concurrent creates with one phone: %d created, %d conflicts; want 1 and %d", n, ok, conflict, n-1)
	}
	_, total, _ := s.ContactList(ctx, &driver.ContactListParams{WorkspaceID: "a", Limit: 100})
	if total != 1 {
		t.Errorf("stored %d contacts, want 1", total)
	}
}

func testContactUpdate(t *testing.T, s driver.Store) {
	ctx := context.Background()
	mustWorkspace(t, s, "a")
	mustWorkspace(t, s, "b")
	c1 := contact("a", "ct_1", 1, "A", "", "+254712345678", "a@example.com")
	c2 := contact("a", "ct_2", 2, "B", "", "+254712345679", "b@example.com")
	for _, c := range []*messaging.Contact{c1, c2} {
		if err := s.ContactCreate(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	upd := *c1
	upd.LastName, upd.FullName, upd.Tags, upd.Lifecycle, upd.Phone = "Zed", "A Zed", []string{"x"}, "lead", ""
	upd.Version, upd.UpdatedAt = 2, at(50)
	if err := s.ContactUpdate(ctx, &driver.ContactReplaceParams{Contact: &upd, PrevVersion: 1}); err != nil {
		t.Fatal(err)
	}
	got, _ := s.ContactGet(ctx, "a", "ct_1")
	if d := cmp.Diff(&upd, got); d != "" {
		t.Errorf("after update (-want +got):\n%s", d)
	}
	stale := upd
	stale.Version = 2
	wantErr(t, "stale version", s.ContactUpdate(ctx, &driver.ContactReplaceParams{Contact: &stale, PrevVersion: 1}), driver.ErrStale)

	clash := *c2
	clash.Email, clash.EmailKey, clash.Version = "A@example.com", "a@example.com", 2
	wantErr(t, "update to another contact's email", s.ContactUpdate(ctx, &driver.ContactReplaceParams{Contact: &clash, PrevVersion: 1}), messaging.ErrConflict)
	got2, _ := s.ContactGet(ctx, "a", "ct_2")
	if d := cmp.Diff(c2, got2); d != "" {
		t.Errorf("refused update changed the contact (-want +got):\n%s", d)
	}
	// The freed phone of ct_1 can now be taken.
	take := *c2
	take.Phone, take.Version = "+254712345678", 2
	if err := s.ContactUpdate(ctx, &driver.ContactReplaceParams{Contact: &take, PrevVersion: 1}); err != nil {
		t.Errorf("taking a freed phone: %v", err)
	}
	other := upd
	other.WorkspaceID, other.Version = "b", 3
	wantErr(t, "update from another workspace", s.ContactUpdate(ctx, &driver.ContactReplaceParams{Contact: &other, PrevVersion: 2}), messaging.ErrNotFound)
}

func ids(cs []*messaging.Contact) []string {
	out := []string{}
	for _, c := range cs {
		out = append(out, c.ID)
	}
	return out
}

func testContactList(t *testing.T, s driver.Store) {
	ctx := context.Background()
	mustWorkspace(t, s, "a")
	mustWorkspace(t, s, "b")
	// ct_3 and ct_4 share a timestamp: the tie is broken by id, descending.
	for _, c := range []*messaging.Contact{
		contact("a", "ct_1", 1, "A", "", "+254712345601", ""),
		contact("a", "ct_2", 2, "B", "", "+254712345602", ""),
		contact("a", "ct_4", 3, "D", "", "+254712345604", ""),
		contact("a", "ct_3", 3, "C", "", "+254712345603", ""),
		contact("a", "ct_5", 5, "E", "", "+254712345605", ""),
		contact("b", "ct_6", 9, "F", "", "+254712345606", ""),
	} {
		if err := s.ContactCreate(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		offset, limit int
		want          []string
	}{
		{0, 2, []string{"ct_5", "ct_4"}},
		{2, 2, []string{"ct_3", "ct_2"}},
		{4, 2, []string{"ct_1"}},
		{5, 2, []string{}},
		{0, 100, []string{"ct_5", "ct_4", "ct_3", "ct_2", "ct_1"}},
	} {
		got, total, err := s.ContactList(ctx, &driver.ContactListParams{WorkspaceID: "a", Offset: tc.offset, Limit: tc.limit})
		if err != nil {
			t.Fatal(err)
		}
		if total != 5 {
			t.Errorf("offset %d: total %d, want 5", tc.offset, total)
		}
		if d := cmp.Diff(tc.want, ids(got)); d != "" {
			t.Errorf("offset %d limit %d (-want +got):\n%s", tc.offset, tc.limit, d)
		}
	}
}

func testContactSearch(t *testing.T, s driver.Store) {
	ctx := context.Background()
	mustWorkspace(t, s, "a")
	mustWorkspace(t, s, "b")
	for _, c := range []*messaging.Contact{
		contact("a", "ct_1", 1, "Amina", "Otieno", "+254712345678", "amina@example.com"),
		contact("a", "ct_2", 2, "Otis", "Redding", "+14155550123", "otis@soul.example"),
		contact("a", "ct_3", 3, "Émile", "Zola", "", "e.zola@example.fr"),
		contact("a", "ct_4", 4, "100%", "Match_Co", "", "pct@example.com"),
		contact("b", "ct_5", 5, "Amina", "Elsewhere", "+254712345678", "amina@example.com"),
	} {
		if err := s.ContactCreate(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		q    string
		want []string
	}{
		{"am", []string{"ct_1"}},
		{"AMINA", []string{"ct_1"}},
		{"ot", []string{"ct_2", "ct_1"}}, // first name Otis, last name Otieno
		{"amina ot", []string{"ct_1"}},   // full name
		{"otis@", []string{"ct_2"}},
		{"émile", []string{"ct_3"}},
		{"ÉMILE", []string{"ct_3"}},
		{"+2547", []string{"ct_1"}},
		{"2547", []string{"ct_1"}},
		{"1415", []string{"ct_2"}},
		{"%", []string{}}, // a literal percent, not a wildcard
		{"_", []string{}},
		{"100%", []string{"ct_4"}},
		{"match_", []string{"ct_4"}},
		{"zz", []string{}},
		{"mina", []string{}}, // prefix, not substring
	} {
		search, digits := driver.ContactSearchQuery(tc.q)
		got, total, err := s.ContactList(ctx, &driver.ContactListParams{WorkspaceID: "a", Search: search, PhoneDigits: digits, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(tc.want, ids(got)); d != "" {
			t.Errorf("search %q (-want +got):\n%s", tc.q, d)
		}
		if total != len(tc.want) {
			t.Errorf("search %q: total %d, want %d", tc.q, total, len(tc.want))
		}
	}
}

// testContactSearchEdges covers prefixes whose range ends are special: a
// last rune at the top of the code space and just below the surrogates.
func testContactSearchEdges(t *testing.T, s driver.Store) {
	ctx := context.Background()
	mustWorkspace(t, s, "a")
	names := []string{"a\U0010FFFF", "a\U0010FFFFb", "ab", "x\uD7FF", "x\uD7FFy", "x\uE000"}
	for i, n := range names {
		c := &messaging.Contact{ID: fmt.Sprintf("ct_%d", i), WorkspaceID: "a", FirstName: n, FullName: n, Email: fmt.Sprintf("c%d@example.com", i),
			EmailKey: fmt.Sprintf("c%d@example.com", i), Tags: []string{}, Version: 1}
		if err := s.ContactCreate(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		q    string
		want int
	}{{"a\U0010FFFF", 2}, {"a", 3}, {"x\uD7FF", 2}, {"x", 3}, {"\U0010FFFF", 0}} {
		_, total, err := s.ContactList(ctx, &driver.ContactListParams{WorkspaceID: "a", Search: tc.q, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if total != tc.want {
			t.Errorf("search %q: %d matches, want %d", tc.q, total, tc.want)
		}
	}
}

func testTemplates(t *testing.T, s driver.Store) {
	ctx := context.Background()
	mustWorkspace(t, s, "a")
	mustWorkspace(t, s, "b")
	mk := func(id, name, lang, cat, status string) *messaging.Template {
		return &messaging.Template{ID: id, WorkspaceID: "a", Name: name, Language: lang, Category: cat, Status: status,
			Components: []messaging.TemplateComponent{
				{Type: "HEADER", Format: "TEXT", Text: "Hi"},
				{Type: "BODY", Text: "Hello {{1}}", Examples: []string{"Ann"}},
				{Type: "BUTTONS", Buttons: []messaging.TemplateButton{{Type: "URL", Text: "Go", URL: "https://x.example/{{1}}"}}},
			}, CreatedAt: at(1), UpdatedAt: at(1)}
	}
	t1 := mk("tpl_1", "order_shipped", "en", "UTILITY", "approved")
	t2 := mk("tpl_2", "order_shipped", "en_US", "UTILITY", "approved")
	t3 := mk("tpl_3", "promo", "sw", "MARKETING", "pending")
	// A media header keeps its sample's upload id.
	t3.Components[0] = messaging.TemplateComponent{Type: "HEADER", Format: "IMAGE", ExampleMedia: "med_1"}
	t4 := mk("tpl_4", "alpha", "en", "MARKETING", "approved")
	// Within a name the list is ordered by language, whatever the ids.
	t0 := mk("tpl_0", "order_shipped", "zu", "UTILITY", "pending")
	for _, tp := range []*messaging.Template{t1, t2, t3, t4, t0} {
		if err := s.TemplateCreate(ctx, tp); err != nil {
			t.Fatal(err)
		}
	}
	wantErr(t, "same name and language", s.TemplateCreate(ctx, mk("tpl_5", "order_shipped", "en", "UTILITY", "pending")), messaging.ErrConflict)
	got, err := s.TemplateGet(ctx, "a", "tpl_1")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(t1, got); d != "" {
		t.Errorf("TemplateGet (-want +got):\n%s", d)
	}
	if got, err := s.TemplateGet(ctx, "a", "tpl_3"); err != nil || !cmp.Equal(t3, got) {
		t.Errorf("TemplateGet(tpl_3, a media header) = %v, %v; want (-want +got):\n%s", got, err, cmp.Diff(t3, got))
	}
	_, err = s.TemplateGet(ctx, "b", "tpl_1")
	wantErr(t, "template of other workspace", err, messaging.ErrNotFound)
	got, err = s.TemplateGetByName(ctx, &driver.TemplateGetByNameParams{WorkspaceID: "a", Name: "order_shipped", Language: "en_US"})
	if err != nil || got.ID != "tpl_2" {
		t.Errorf("TemplateGetByName(en_US) = %v, %v; want tpl_2", got, err)
	}
	_, err = s.TemplateGetByName(ctx, &driver.TemplateGetByNameParams{WorkspaceID: "a", Name: "order_shipped", Language: "EN"})
	wantErr(t, "language differs in case", err, messaging.ErrNotFound)
	_, err = s.TemplateGetByName(ctx, &driver.TemplateGetByNameParams{WorkspaceID: "b", Name: "order_shipped", Language: "en"})
	wantErr(t, "by name in other workspace", err, messaging.ErrNotFound)

	tids := func(ts []*messaging.Template) []string {
		out := []string{}
		for _, x := range ts {
			out = append(out, x.ID)
		}
		return out
	}
	for _, tc := range []struct {
		p    driver.TemplateListParams
		want []string
	}{
		{driver.TemplateListParams{WorkspaceID: "a"}, []string{"tpl_4", "tpl_1", "tpl_2", "tpl_0", "tpl_3"}},
		{driver.TemplateListParams{WorkspaceID: "a", Status: "approved"}, []string{"tpl_4", "tpl_1", "tpl_2"}},
		{driver.TemplateListParams{WorkspaceID: "a", Status: "approved", Category: "MARKETING"}, []string{"tpl_4"}},
		{driver.TemplateListParams{WorkspaceID: "a", Language: "en"}, []string{"tpl_4", "tpl_1"}},
		{driver.TemplateListParams{WorkspaceID: "b"}, []string{}},
	} {
		got, err := s.TemplateList(ctx, &tc.p)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(tc.want, tids(got)); d != "" {
			t.Errorf("TemplateList(%+v) (-want +got):\n%s", tc.p, d)
		}
	}

	upd, err := s.TemplateSetStatus(ctx, &driver.TemplateStatusParams{WorkspaceID: "a", ID: "tpl_3", From: []string{"pending"}, To: "rejected", Reason: "bad", At: at(9)})
	if err != nil {
		t.Fatal(err)
	}
	if upd.Status != "rejected" || upd.StatusReason != "bad" || !upd.UpdatedAt.Equal(at(9)) {
		t.Errorf("TemplateSetStatus returned %+v", upd)
	}
	_, err = s.TemplateSetStatus(ctx, &driver.TemplateStatusParams{WorkspaceID: "a", ID: "tpl_3", From: []string{"pending"}, To: "approved", At: at(10)})
	wantErr(t, "status not in From", err, driver.ErrStale)
	_, err = s.TemplateSetStatus(ctx, &driver.TemplateStatusParams{WorkspaceID: "b", ID: "tpl_1", From: []string{"approved"}, To: "paused", At: at(10)})
	wantErr(t, "status of other workspace", err, messaging.ErrNotFound)
	got, _ = s.TemplateGet(ctx, "a", "tpl_3")
	if got.Status != "rejected" {
		t.Errorf("refused transition changed status to %s", got.Status)
	}
}

func message(ws, id, key, hash string) *messaging.Message {
	idx := 0
	return &messaging.Message{
		ID: id, WorkspaceID: ws, ConversationID: "conv_" + ws, Channel: "whatsapp", To: "+254712345678",
		Direction: "outbound", Status: "queued", Type: "template", TemplateName: "t", Language: "en",
		Components: []messaging.SendComponent{
			{Type: "body", Parameters: []messaging.SendParameter{{Type: "text", Text: "x"}}},
			{Type: "button", SubType: "url", Index: &idx, Parameters: []messaging.SendParameter{{Type: "text", Text: "y"}}},
		},
		IdempotencyKey: key, RequestHash: hash, CreatedAt: at(1), UpdatedAt: at(1),
	}
}

func testMessages(t *testing.T, s driver.Store) {
	ctx := context.Background()
	mustWorkspace(t, s, "a")
	mustWorkspace(t, s, "b")
	m1 := message("a", "msg_1", "", "")
	m1.Type, m1.Text, m1.TemplateName, m1.Language, m1.Components = "text", "héllo 👋", "", "", nil
	stored, created, err := s.MessageCreate(ctx, m1)
	if err != nil || !created {
		t.Fatalf("MessageCreate = %v, %v", created, err)
	}
	if d := cmp.Diff(m1, stored); d != "" {
		t.Errorf("MessageCreate returned (-want +got):\n%s", d)
	}
	got, err := s.MessageGet(ctx, "a", "msg_1")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(m1, got); d != "" {
		t.Errorf("MessageGet (-want +got):\n%s", d)
	}
	_, err = s.MessageGet(ctx, "b", "msg_1")
	wantErr(t, "message of other workspace", err, messaging.ErrNotFound)

	m2 := message("a", "msg_2", "key-1", "h1")
	if _, created, err := s.MessageCreate(ctx, m2); err != nil || !created {
		t.Fatalf("MessageCreate(m2) = %v, %v", created, err)
	}
	got, _ = s.MessageGet(ctx, "a", "msg_2")
	if d := cmp.Diff(m2, got); d != "" {
		t.Errorf("template message round trip (-want +got):\n%s", d)
	}
	again := message("a", "msg_3", "key-1", "h2")
	stored, created, err = s.MessageCreate(ctx, again)
	if err != nil || created || stored.ID != "msg_2" || stored.RequestHash != "h1" {
		t.Errorf("repeated key: got %v created=%v err=%v; want msg_2 with hash h1, created=false", stored, created, err)
	}
	_, err = s.MessageGet(ctx, "a", "msg_3")
	wantErr(t, "message refused by idempotency", err, messaging.ErrNotFound)
	byKey, err := s.MessageGetByIdempotencyKey(ctx, "a", "key-1")
	if err != nil || byKey.ID != "msg_2" || byKey.RequestHash != "h1" {
		t.Errorf("MessageGetByIdempotencyKey = %+v, %v; want msg_2", byKey, err)
	}
	for _, k := range [][2]string{{"a", "key-2"}, {"a", ""}, {"zz", "key-1"}} {
		_, err = s.MessageGetByIdempotencyKey(ctx, k[0], k[1])
		wantErr(t, "unknown idempotency key "+k[0]+"/"+k[1], err, messaging.ErrNotFound)
	}
	other := message("b", "msg_4", "key-1", "h1")
	if _, created, err := s.MessageCreate(ctx, other); err != nil || !created {
		t.Errorf("same key in another workspace: created=%v err=%v, want a new message", created, err)
	}
	_, _, err = s.MessageCreate(ctx, message("zz", "msg_5", "", ""))
	wantErr(t, "message in missing workspace", err, messaging.ErrNotFound)
}

func testMessageIdempotencyConcurrent(t *testing.T, s driver.Store) {
	ctx := context.Background()
	mustWorkspace(t, s, "a")
	const n = 50
	var wg sync.WaitGroup
	got := make([]string, n)
	createdN := make([]bool, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m, c, err := s.MessageCreate(ctx, message("a", fmt.Sprintf("msg_%02d", i), "same-key", "h"))
			errs[i], createdN[i] = err, c
			if m != nil {
				got[i] = m.ID
			}
		}()
	}
	wg.Wait()
	var created int
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("create %d: %v", i, errs[i])
		}
		if createdN[i] {
			created++
		}
		if got[i] != got[0] {
			t.Errorf("create %d returned %s, create 0 returned %s", i, got[i], got[0])
		}
	}
	if created != 1 {
		t.Errorf("%d concurrent creates with one key created %d messages, want 1", n, created)
	}
}

func testMessageStatus(t *testing.T, s driver.Store) {
	ctx := context.Background()
	mustWorkspace(t, s, "a")
	mustWorkspace(t, s, "b")
	if _, _, err := s.MessageCreate(ctx, message("a", "msg_1", "", "")); err != nil {
		t.Fatal(err)
	}
	before, err := s.MessageGet(ctx, "a", "msg_1")
	if err != nil || before.Status != "queued" {
		t.Fatalf("before: %+v, %v", before, err)
	}
	after, changed, err := updateStatus(ctx, s, &driver.MessageStatusParams{
		WorkspaceID: "a", ID: "msg_1", From: []string{"queued"}, To: "sent", ProviderMessageID: "wamid.1", At: at(5),
	})
	if err != nil || !changed || after.Status != "sent" || after.ProviderMessageID != "wamid.1" || !after.UpdatedAt.Equal(at(5)) {
		t.Fatalf("queued->sent: after=%+v changed=%v err=%v", after, changed, err)
	}
	// A refused change returns the message as it is, unchanged.
	before, err = s.MessageGet(ctx, "a", "msg_1")
	if err != nil {
		t.Fatal(err)
	}
	after, changed, err = updateStatus(ctx, s, &driver.MessageStatusParams{
		WorkspaceID: "a", ID: "msg_1", From: []string{"queued"}, To: "sent", At: at(6),
	})
	if err != nil || changed || after.Status != "sent" || !after.UpdatedAt.Equal(at(5)) || before.Status != "sent" {
		t.Errorf("refused transition: before=%+v after=%+v changed=%v err=%v", before, after, changed, err)
	}
	if d := cmp.Diff(before, after); err == nil && d != "" {
		t.Errorf("refused transition: the result is not the message as it was (-stored +result):\n%s", d)
	}
	after, changed, err = updateStatus(ctx, s, &driver.MessageStatusParams{
		WorkspaceID: "a", ID: "msg_1", From: []string{"queued", "sent"}, To: "failed", FailureReason: "[131026] Message undeliverable", At: at(7),
	})
	if err != nil || !changed || after.FailureReason != "[131026] Message undeliverable" || after.ProviderMessageID != "wamid.1" {
		t.Errorf("sent->failed: after=%+v changed=%v err=%v", after, changed, err)
	}
	got, _ := s.MessageGet(ctx, "a", "msg_1")
	if d := cmp.Diff(after, got); d != "" {
		t.Errorf("stored after update (-want +got):\n%s", d)
	}
	_, _, err = updateStatus(ctx, s, &driver.MessageStatusParams{WorkspaceID: "b", ID: "msg_1", From: []string{"failed"}, To: "sent", At: at(8)})
	wantErr(t, "status of other workspace", err, messaging.ErrNotFound)
}

// updateStatus makes the one change p with MessageUpdateStatuses (a batch
// of one) and returns its result: the message after it, whether it
// changed, and its error (the batch's, or the change's ErrNotFound).
func updateStatus(ctx context.Context, s driver.Store, p *driver.MessageStatusParams) (*messaging.Message, bool, error) {
	rs, err := s.MessageUpdateStatuses(ctx, []*driver.MessageStatusParams{p})
	if err != nil {
		return nil, false, err
	}
	if len(rs) != 1 {
		return nil, false, fmt.Errorf("%d results for one change", len(rs))
	}
	return rs[0].Message, rs[0].Changed, rs[0].Err
}
