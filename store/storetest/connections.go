package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
)

// connection returns a connection of ws on channel with every field set.
func connection(ws, channel, account, waba string, sec int) *messaging.ChannelConnection {
	synced, verified, tierAt, qualityAt := at(sec+1), at(sec), at(sec+2), at(sec+3)
	return &messaging.ChannelConnection{VerifiedAt: &verified, WorkspaceID: ws, Channel: channel, AccountID: account, WABAID: waba,
		DisplayPhoneNumber: "+2547000" + account, TokenSealed: []byte("sealed-" + ws + "-" + channel), TokenHint: "ab" + account,
		Status: record.ConnectionConnected, StatusReason: "fine", Generation: 42, TemplatesSyncedAt: &synced,
		TemplateSyncError: "last sync", Throughput: 200 + sec, MessagingTier: record.Tier10K, TierChangedAt: &tierAt,
		QualityRating: record.QualityYellow, QualityChangedAt: &qualityAt, CreatedAt: at(sec), UpdatedAt: at(sec)}
}

func mustPut(t *testing.T, s driver.Store, c *messaging.ChannelConnection) {
	t.Helper()
	if _, err := s.ConnectionPut(context.Background(), c); err != nil {
		t.Fatalf("ConnectionPut(%s/%s): %v", c.WorkspaceID, c.Channel, err)
	}
}

// putErr is the error of s.ConnectionPut(ctx, c).
func putErr(ctx context.Context, s driver.Store, c *messaging.ChannelConnection) error {
	_, err := s.ConnectionPut(ctx, c)
	return err
}

func mustConnection(t *testing.T, s driver.Store, ws, channel string) *messaging.ChannelConnection {
	t.Helper()
	c, err := s.ConnectionGet(context.Background(), ws, channel)
	if err != nil {
		t.Fatalf("ConnectionGet(%s/%s): %v", ws, channel, err)
	}
	return c
}

func wantConnection(t *testing.T, s driver.Store, what string, want *messaging.ChannelConnection) {
	t.Helper()
	if d := cmp.Diff(want, mustConnection(t, s, want.WorkspaceID, want.Channel)); d != "" {
		t.Errorf("%s: ConnectionGet (-want +got):\n%s", what, d)
	}
}

func wantChannels(t *testing.T, s driver.Store, ws string, want ...string) {
	t.Helper()
	w, err := s.WorkspaceGet(context.Background(), ws)
	if err != nil {
		t.Fatal(err)
	}
	if want == nil {
		want = []string{}
	}
	if d := cmp.Diff(want, w.Channels); d != "" {
		t.Errorf("channels of %s (-want +got):\n%s", ws, d)
	}
}

// testConnections: a connection round-trips every field, a replacement
// counts its generation and keeps CreatedAt, puts connect the channel, an
// account or WABA id of another workspace's live connection is refused,
// the list filters and orders, and disconnecting keeps the row.
func testConnections(t *testing.T, s driver.Store) {
	ctx := context.Background()
	mustWorkspace(t, s, "a")
	mustWorkspace(t, s, "b")
	mustWorkspace(t, s, "c")

	_, err := s.ConnectionGet(ctx, "a", "whatsapp")
	wantErr(t, "connection never put", err, messaging.ErrNotFound)
	wantErr(t, "connection of a missing workspace", putErr(ctx, s, connection("zz", "whatsapp", "100", "W0", 1)), messaging.ErrNotFound)
	if cs, err := s.ConnectionList(ctx, &driver.ConnectionListParams{}); err != nil || len(cs) != 0 {
		t.Fatalf("ConnectionList after a put for a missing workspace: %v, %v; want none", cs, err)
	}

	a1 := connection("a", "whatsapp", "111", "W1", 1)
	mustPut(t, s, a1)
	if a1.Generation != 1 {
		t.Errorf("first put: Generation %d, want 1", a1.Generation)
	}
	want := connection("a", "whatsapp", "111", "W1", 1)
	want.Generation = 1
	wantConnection(t, s, "first put", want)
	// The store keeps its own copy and returns copies.
	a1.TokenSealed[0] = 'X'
	mustConnection(t, s, "a", "whatsapp").TokenSealed[1] = 'Y'
	wantConnection(t, s, "after the caller changed its token and a returned one", want)
	wantChannels(t, s, "a", "whatsapp")

	// A replacement: new credentials and state, no sync yet; CreatedAt of
	// the first put is kept.
	a2 := connection("a", "whatsapp", "112", "W1", 50)
	a2.TokenSealed, a2.TokenHint, a2.Status, a2.StatusReason = []byte("sealed-second"), "zz99", record.ConnectionError, "checking"
	a2.TemplatesSyncedAt, a2.TemplateSyncError = nil, ""
	mustPut(t, s, a2)
	if a2.Generation != 2 || !a2.CreatedAt.Equal(at(1)) {
		t.Errorf("second put: Generation %d, CreatedAt %v; want 2 and the first put's %v", a2.Generation, a2.CreatedAt, at(1))
	}
	want = connection("a", "whatsapp", "112", "W1", 50)
	want.TokenSealed, want.TokenHint, want.Status, want.StatusReason = []byte("sealed-second"), "zz99", record.ConnectionError, "checking"
	want.TemplatesSyncedAt, want.TemplateSyncError = nil, ""
	want.Generation, want.CreatedAt = 2, at(1)
	wantConnection(t, s, "replacement", want)
	// The same workspace may put its own account again.
	a3 := connection("a", "whatsapp", "112", "W1", 51)
	mustPut(t, s, a3)
	want = connection("a", "whatsapp", "112", "W1", 51)
	want.Generation, want.CreatedAt = 3, at(1)
	wantConnection(t, s, "second replacement", want)

	mustPut(t, s, connection("a", "messenger", "P1", "", 2))
	mustPut(t, s, connection("b", "whatsapp", "221", "W2", 3))
	mustPut(t, s, connection("b", "instagram", "I1", "", 4))
	wantChannels(t, s, "a", "messenger", "whatsapp")
	wantChannels(t, s, "b", "instagram", "whatsapp")

	// Another workspace's live account or WABA id is refused, and nothing
	// of the refused put is stored.
	wantErr(t, "another workspace's account id", putErr(ctx, s, connection("c", "whatsapp", "112", "W9", 5)), messaging.ErrConflict)
	wantErr(t, "another workspace's WABA id", putErr(ctx, s, connection("c", "whatsapp", "999", "W1", 5)), messaging.ErrConflict)
	_, err = s.ConnectionGet(ctx, "c", "whatsapp")
	wantErr(t, "refused connection", err, messaging.ErrNotFound)
	wantChannels(t, s, "c")
	// The account id of another channel, and an empty WABA id, are not a
	// clash.
	mustPut(t, s, connection("c", "instagram", "112", "", 6))
	mustPut(t, s, connection("c", "messenger", "P9", "", 7))

	key := func(cs []*messaging.ChannelConnection) []string {
		out := []string{}
		for _, c := range cs {
			out = append(out, c.WorkspaceID+"/"+c.Channel)
		}
		return out
	}
	list := func(p driver.ConnectionListParams, want ...string) {
		t.Helper()
		got, err := s.ConnectionList(ctx, &p)
		if err != nil {
			t.Fatal(err)
		}
		if want == nil {
			want = []string{}
		}
		if d := cmp.Diff(want, key(got)); d != "" {
			t.Errorf("ConnectionList(%+v) (-want +got):\n%s", p, d)
		}
		for _, c := range got {
			if d := cmp.Diff(mustConnection(t, s, c.WorkspaceID, c.Channel), c); d != "" {
				t.Errorf("ConnectionList(%+v) entry differs from ConnectionGet (-get +list):\n%s", p, d)
			}
		}
	}
	list(driver.ConnectionListParams{}, "a/messenger", "a/whatsapp", "b/instagram", "b/whatsapp", "c/instagram", "c/messenger")
	list(driver.ConnectionListParams{WorkspaceID: "b"}, "b/instagram", "b/whatsapp")
	list(driver.ConnectionListParams{Channel: "whatsapp"}, "a/whatsapp", "b/whatsapp")
	list(driver.ConnectionListParams{AccountID: "112"}, "a/whatsapp", "c/instagram")
	list(driver.ConnectionListParams{AccountID: "112", Channel: "instagram"}, "c/instagram")
	list(driver.ConnectionListParams{WABAID: "W2"}, "b/whatsapp")
	list(driver.ConnectionListParams{Status: record.ConnectionConnected}, "a/messenger", "a/whatsapp", "b/instagram", "b/whatsapp", "c/instagram", "c/messenger")
	list(driver.ConnectionListParams{Status: record.ConnectionDisconnected})

	// Connecting a connected channel leaves its connection alone;
	// disconnecting marks it disconnected and keeps it.
	before := mustConnection(t, s, "b", "whatsapp")
	if err := s.WorkspaceSetChannel(ctx, &driver.ChannelParams{WorkspaceID: "b", Channel: "whatsapp", Connected: true, At: at(59)}); err != nil {
		t.Fatal(err)
	}
	wantConnection(t, s, "after connecting again", before)
	if err := s.WorkspaceSetChannel(ctx, &driver.ChannelParams{WorkspaceID: "b", Channel: "whatsapp", Connected: false, At: at(60)}); err != nil {
		t.Fatal(err)
	}
	got := mustConnection(t, s, "b", "whatsapp")
	if got.Status != record.ConnectionDisconnected {
		t.Errorf("after WorkspaceSetChannel(false): Status %q, want %q", got.Status, record.ConnectionDisconnected)
	}
	got.Status, got.UpdatedAt = before.Status, before.UpdatedAt
	if d := cmp.Diff(before, got); d != "" {
		t.Errorf("WorkspaceSetChannel(false) changed more than the state (-before +after):\n%s", d)
	}
	wantChannels(t, s, "b", "instagram")
	list(driver.ConnectionListParams{Status: record.ConnectionDisconnected}, "b/whatsapp")
	// Disconnecting a channel without a connection creates none.
	if err := s.WorkspaceSetChannel(ctx, &driver.ChannelParams{WorkspaceID: "b", Channel: "telegram", Connected: false, At: at(60)}); err != nil {
		t.Fatal(err)
	}
	_, err = s.ConnectionGet(ctx, "b", "telegram")
	wantErr(t, "disconnected channel without a connection", err, messaging.ErrNotFound)

	// b's disconnected account and WABA id are free for c; b cannot take
	// them back while c holds them.
	mustPut(t, s, connection("c", "whatsapp", "221", "W2", 61))
	wantErr(t, "reconnecting an account another workspace took", putErr(ctx, s, connection("b", "whatsapp", "221", "W2", 62)), messaging.ErrConflict)
	got = mustConnection(t, s, "b", "whatsapp")
	if got.Status != record.ConnectionDisconnected || got.Generation != 1 {
		t.Errorf("refused reconnection changed the connection: %+v", got)
	}
	wantChannels(t, s, "b", "instagram")
	// With a new account b reconnects: the row is replaced, the channel
	// connected.
	mustPut(t, s, connection("b", "whatsapp", "223", "W3", 63))
	got = mustConnection(t, s, "b", "whatsapp")
	if got.Status != record.ConnectionConnected || got.Generation != 2 || !got.CreatedAt.Equal(at(3)) {
		t.Errorf("reconnection: %+v; want connected, generation 2, created at(3)", got)
	}
	wantChannels(t, s, "b", "instagram", "whatsapp")
	// The workspace's own WABA id on another of its channels is no clash.
	mustPut(t, s, connection("a", "instagram", "IA", "W1", 64))
}

// testConnectionUpdate: an update applies only to the generation it names;
// a sync outcome and a state are applied separately.
func testConnectionUpdate(t *testing.T, s driver.Store) {
	ctx := context.Background()
	mustWorkspace(t, s, "a")
	mustPut(t, s, connection("a", "whatsapp", "111", "W1", 1))
	mustPut(t, s, connection("a", "whatsapp", "111", "W1", 2))
	want := connection("a", "whatsapp", "111", "W1", 2)
	want.Generation, want.CreatedAt = 2, at(1)

	update := func(p driver.ConnectionUpdateParams, wantOK bool) {
		t.Helper()
		p.WorkspaceID, p.Channel = "a", "whatsapp"
		ok, err := s.ConnectionUpdate(ctx, &p)
		if err != nil {
			t.Fatalf("ConnectionUpdate(%+v): %v", p, err)
		}
		if ok != wantOK {
			t.Errorf("ConnectionUpdate(%+v) = %v, want %v", p, ok, wantOK)
		}
	}
	update(driver.ConnectionUpdateParams{Generation: 1, Status: record.ConnectionError, StatusReason: "old token", At: at(10)}, false)
	wantConnection(t, s, "stale generation", want)
	if ok, err := s.ConnectionUpdate(ctx, &driver.ConnectionUpdateParams{WorkspaceID: "a", Channel: "messenger", Generation: 1,
		Status: record.ConnectionError, At: at(10)}); ok || (err != nil && !errors.Is(err, messaging.ErrNotFound)) {
		t.Errorf("ConnectionUpdate of a missing connection = %v, %v; want false", ok, err)
	}

	update(driver.ConnectionUpdateParams{Generation: 2, Status: record.ConnectionError, StatusReason: "token expired", At: at(11)}, true)
	want.Status, want.StatusReason, want.UpdatedAt = record.ConnectionError, "token expired", at(11)
	wantConnection(t, s, "state", want)

	synced := at(12)
	update(driver.ConnectionUpdateParams{Generation: 2, SyncedAt: &synced, At: at(12)}, true)
	want.TemplatesSyncedAt, want.TemplateSyncError, want.UpdatedAt = &synced, "", at(12)
	wantConnection(t, s, "successful sync (state kept, error cleared)", want)

	update(driver.ConnectionUpdateParams{Generation: 2, SyncError: "graph down", At: at(13)}, true)
	want.TemplateSyncError, want.UpdatedAt = "graph down", at(13)
	wantConnection(t, s, "failed sync (synced time kept)", want)

	synced2 := at(14)
	update(driver.ConnectionUpdateParams{Generation: 2, SyncedAt: &synced2, Status: record.ConnectionConnected, At: at(14)}, true)
	want.TemplatesSyncedAt, want.TemplateSyncError, want.Status, want.StatusReason, want.UpdatedAt = &synced2, "", record.ConnectionConnected, "", at(14)
	wantConnection(t, s, "sync and state together", want)
	kept := synced2
	want.TemplatesSyncedAt = &kept
	synced2 = at(99) // the store keeps its own copy
	wantConnection(t, s, "after the caller changed its SyncedAt", want)

	// A late verdict never revives a disconnected connection.
	if err := s.WorkspaceSetChannel(ctx, &driver.ChannelParams{WorkspaceID: "a", Channel: "whatsapp", Connected: false, At: at(15)}); err != nil {
		t.Fatal(err)
	}
	update(driver.ConnectionUpdateParams{Generation: 2, Status: record.ConnectionError, StatusReason: "late", At: at(16)}, false)
	c, err := s.ConnectionGet(ctx, "a", "whatsapp")
	if err != nil || c.Status != record.ConnectionDisconnected {
		t.Errorf("after a late verdict on a disconnected connection: %+v, %v; want disconnected", c, err)
	}
}

// testConnectionHealth: the throughput, quality rating and messaging tier
// of a connection are changed by ConnectionUpdate (the health only from the
// values it names, each changed time moving only when its value changes)
// and by ConnectionVerified, and never round-trip lost.
func testConnectionHealth(t *testing.T, s driver.Store) {
	ctx := context.Background()
	mustWorkspace(t, s, "a")
	c := connection("a", "whatsapp", "111", "W1", 1)
	c.Throughput, c.MessagingTier, c.TierChangedAt, c.QualityRating, c.QualityChangedAt = 0, "", nil, "", nil
	mustPut(t, s, c)
	want := *c
	wantConnection(t, s, "put without health", &want)

	update := func(what string, p driver.ConnectionUpdateParams, wantOK bool) {
		t.Helper()
		p.WorkspaceID, p.Channel, p.Generation = "a", "whatsapp", 1
		ok, err := s.ConnectionUpdate(ctx, &p)
		if err != nil || ok != wantOK {
			t.Fatalf("%s: ConnectionUpdate = %v, %v; want %v", what, ok, err, wantOK)
		}
	}
	update("throughput", driver.ConnectionUpdateParams{Throughput: 500, At: at(10)}, true)
	want.Throughput, want.UpdatedAt = 500, at(10)
	wantConnection(t, s, "throughput", &want)

	update("first report", driver.ConnectionUpdateParams{Health: &driver.ConnectionHealth{QualityRating: record.QualityGreen,
		MessagingTier: record.Tier1K}, At: at(11)}, true)
	t11 := at(11)
	want.QualityRating, want.QualityChangedAt, want.MessagingTier, want.TierChangedAt, want.UpdatedAt = record.QualityGreen, &t11, record.Tier1K, &t11, at(11)
	wantConnection(t, s, "first report", &want)

	// A report read from older values changes nothing.
	update("stale report", driver.ConnectionUpdateParams{Health: &driver.ConnectionHealth{QualityRating: record.QualityRed,
		MessagingTier: record.Tier250}, At: at(12)}, false)
	wantConnection(t, s, "stale report", &want)

	// Only the tier changes: the quality's time stays.
	update("tier upgrade", driver.ConnectionUpdateParams{Health: &driver.ConnectionHealth{QualityRating: record.QualityGreen,
		MessagingTier: record.Tier10K, FromQualityRating: record.QualityGreen, FromMessagingTier: record.Tier1K}, At: at(13)}, true)
	t13 := at(13)
	want.MessagingTier, want.TierChangedAt, want.UpdatedAt = record.Tier10K, &t13, at(13)
	wantConnection(t, s, "tier upgrade", &want)

	// An empty value keeps the stored one.
	update("quality only", driver.ConnectionUpdateParams{Health: &driver.ConnectionHealth{QualityRating: record.QualityYellow,
		FromQualityRating: record.QualityGreen, FromMessagingTier: record.Tier10K}, At: at(14)}, true)
	t14 := at(14)
	want.QualityRating, want.QualityChangedAt, want.UpdatedAt = record.QualityYellow, &t14, at(14)
	wantConnection(t, s, "quality only", &want)

	// A verification's report: the unchanged tier keeps its time.
	if _, err := s.ConnectionVerified(ctx, &driver.ConnectionVerifiedParams{WorkspaceID: "a", Channel: "whatsapp", Generation: 1,
		QualityRating: record.QualityRed, MessagingTier: record.Tier10K, At: at(15)}); err != nil {
		t.Fatal(err)
	}
	t15 := at(15)
	want.QualityRating, want.QualityChangedAt, want.UpdatedAt, want.VerifiedAt, want.Status, want.StatusReason = record.QualityRed, &t15, at(15), &t15, record.ConnectionConnected, ""
	wantConnection(t, s, "verified with a report", &want)
	if _, err := s.ConnectionVerified(ctx, &driver.ConnectionVerifiedParams{WorkspaceID: "a", Channel: "whatsapp", Generation: 1, At: at(16)}); err != nil {
		t.Fatal(err)
	}
	t16 := at(16)
	want.UpdatedAt, want.VerifiedAt = at(16), &t16
	wantConnection(t, s, "verified without a report", &want)
}

// testConnectionPutConcurrent: workspaces putting the same WABA id at the
// same time: exactly one gets it.
func testConnectionPutConcurrent(t *testing.T, s driver.Store) {
	const n = 8
	for i := range n {
		mustWorkspace(t, s, fmt.Sprintf("w%d", i))
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = putErr(context.Background(), s, connection(fmt.Sprintf("w%d", i), "whatsapp", fmt.Sprint(500+i), "WSAME", i))
		}()
	}
	wg.Wait()
	won := 0
	for i, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, messaging.ErrConflict):
			t.Errorf("put %d: %v, want nil or ErrConflict", i, err)
		}
	}
	cs, err := s.ConnectionList(context.Background(), &driver.ConnectionListParams{WABAID: "WSAME"})
	if err != nil {
		t.Fatal(err)
	}
	if won != 1 || len(cs) != 1 {
		t.Errorf("%d puts succeeded and %d connections hold the WABA id; want 1 and 1", won, len(cs))
	}
}

// testTemplateUpdateDelete: an update replaces a template in one of the
// states it names (CreatedAt kept), refuses a name and language of another
// template; a delete removes it.
func testTemplateUpdateDelete(t *testing.T, s driver.Store) {
	ctx := context.Background()
	mustWorkspace(t, s, "a")
	mustWorkspace(t, s, "b")
	t1 := &messaging.Template{ID: "tpl_1", WorkspaceID: "a", Name: "welcome", Language: "en", Category: record.CategoryUtility,
		Status: record.TemplateDraft, Components: []messaging.TemplateComponent{{Type: "BODY", Text: "Hi {{1}}"}}, CreatedAt: at(1), UpdatedAt: at(1)}
	t2 := &messaging.Template{ID: "tpl_2", WorkspaceID: "a", Name: "promo", Language: "en", Category: record.CategoryMarketing,
		Status: record.TemplateApproved, Components: []messaging.TemplateComponent{{Type: "BODY", Text: "Sale"}},
		Quality: "GREEN", ProviderTemplateID: "1234567", CreatedAt: at(2), UpdatedAt: at(2)}
	for _, tp := range []*messaging.Template{t1, t2} {
		if err := s.TemplateCreate(ctx, tp); err != nil {
			t.Fatal(err)
		}
	}
	wantTemplate := func(what string, want *messaging.Template) {
		t.Helper()
		got, err := s.TemplateGet(ctx, want.WorkspaceID, want.ID)
		if err != nil {
			t.Fatalf("%s: TemplateGet: %v", what, err)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s: TemplateGet (-want +got):\n%s", what, d)
		}
	}
	wantTemplate("created with provider id and quality", t2)

	upd := &messaging.Template{ID: "tpl_1", WorkspaceID: "a", Name: "welcome_v2", Language: "sw", Category: record.CategoryMarketing,
		Status: record.TemplatePending, StatusReason: "submitted",
		Components: []messaging.TemplateComponent{{Type: "HEADER", Format: "TEXT", Text: "Karibu"}, {Type: "BODY", Text: "Habari {{1}}"}},
		Quality:    "YELLOW", ProviderTemplateID: "987654", CreatedAt: at(90), UpdatedAt: at(5)}
	if err := s.TemplateUpdate(ctx, &driver.TemplateUpdateParams{Template: upd, From: []string{record.TemplateDraft}}); err != nil {
		t.Fatal(err)
	}
	want := *upd
	want.CreatedAt = at(1)
	wantTemplate("updated", &want)
	got, err := s.TemplateGetByName(ctx, &driver.TemplateGetByNameParams{WorkspaceID: "a", Name: "welcome_v2", Language: "sw"})
	if err != nil || got.ID != "tpl_1" || got.ProviderTemplateID != "987654" || got.Quality != "YELLOW" {
		t.Errorf("TemplateGetByName after the update: %+v, %v", got, err)
	}

	again := want
	again.Name, again.UpdatedAt = "welcome_v3", at(6)
	wantErr(t, "update from a state not in From", s.TemplateUpdate(ctx, &driver.TemplateUpdateParams{Template: &again,
		From: []string{record.TemplateDraft}}), driver.ErrStale)
	wantTemplate("after the stale update", &want)
	clash := want
	clash.Name, clash.Language = "promo", "en"
	wantErr(t, "update to another template's name and language", s.TemplateUpdate(ctx, &driver.TemplateUpdateParams{Template: &clash,
		From: []string{record.TemplatePending}}), messaging.ErrConflict)
	wantTemplate("after the refused update", &want)
	other := want
	other.WorkspaceID = "b"
	wantErr(t, "update of another workspace's template", s.TemplateUpdate(ctx, &driver.TemplateUpdateParams{Template: &other,
		From: []string{record.TemplatePending}}), messaging.ErrNotFound)
	missing := want
	missing.ID = "tpl_9"
	wantErr(t, "update of a missing template", s.TemplateUpdate(ctx, &driver.TemplateUpdateParams{Template: &missing,
		From: []string{record.TemplatePending}}), messaging.ErrNotFound)
	wantTemplate("after the updates of other templates", &want)
	// An update that keeps the name and language does not clash with
	// itself.
	want.Status, want.Quality, want.UpdatedAt = record.TemplateApproved, "RED", at(7)
	if err := s.TemplateUpdate(ctx, &driver.TemplateUpdateParams{Template: &want, From: []string{record.TemplatePending}}); err != nil {
		t.Fatalf("update keeping the name and language: %v", err)
	}
	wantTemplate("updated again", &want)

	all, err := s.TemplateList(ctx, &driver.TemplateListParams{WorkspaceID: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]*messaging.Template{t2, &want}, all); d != "" {
		t.Errorf("TemplateList with no status (-want +got):\n%s", d)
	}

	wantErr(t, "delete of another workspace's template", s.TemplateDelete(ctx, "b", "tpl_1"), messaging.ErrNotFound)
	wantTemplate("after a delete in another workspace", &want)
	if err := s.TemplateDelete(ctx, "a", "tpl_1"); err != nil {
		t.Fatal(err)
	}
	_, err = s.TemplateGet(ctx, "a", "tpl_1")
	wantErr(t, "deleted template", err, messaging.ErrNotFound)
	wantErr(t, "second delete", s.TemplateDelete(ctx, "a", "tpl_1"), messaging.ErrNotFound)
	wantTemplate("the other template after the delete", t2)
	// The name and language of a deleted template are free again.
	again.ID, again.Name, again.Language = "tpl_3", "welcome_v2", "sw"
	if err := s.TemplateCreate(ctx, &again); err != nil {
		t.Errorf("creating a template with a deleted one's name: %v", err)
	}
}

// testLeases: a lease is taken when free or expired, renewed by its owner,
// refused to others while it runs.
func testLeases(t *testing.T, s driver.Store) {
	ctx := context.Background()
	acquire := func(name, owner string, now, until int, want bool) {
		t.Helper()
		ok, err := s.LeaseAcquire(ctx, &driver.LeaseParams{Name: name, Owner: owner, Now: at(now), Until: at(until)})
		if err != nil {
			t.Fatalf("LeaseAcquire(%s, %s, %d): %v", name, owner, now, err)
		}
		if ok != want {
			t.Errorf("LeaseAcquire(%s, %s, now %d, until %d) = %v, want %v", name, owner, now, until, ok, want)
		}
	}
	acquire("sync:W1", "h1", 0, 60, true)   // free
	acquire("sync:W1", "h2", 30, 90, false) // held
	acquire("sync:W2", "h2", 30, 90, true)  // another lease
	acquire("sync:W1", "h1", 30, 120, true) // renewed
	acquire("sync:W1", "h2", 100, 160, false)
	acquire("sync:W1", "h2", 120, 180, true) // expired at its end
	acquire("sync:W1", "h1", 121, 200, false)
	acquire("sync:W2", "h1", 89, 150, false)
	acquire("sync:W2", "h1", 91, 150, true)
}

// testLeaseConcurrent: owners taking one free lease at the same time:
// exactly one holds it.
func testLeaseConcurrent(t *testing.T, s driver.Store) {
	const owners = 8
	for round := range 5 {
		name := fmt.Sprintf("lease-%d", round)
		var wg sync.WaitGroup
		var mu sync.Mutex
		won := 0
		start := make(chan struct{})
		for i := range owners {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				ok, err := s.LeaseAcquire(context.Background(), &driver.LeaseParams{Name: name, Owner: fmt.Sprintf("h%d", i), Now: at(0), Until: at(60)})
				if err != nil {
					t.Errorf("LeaseAcquire: %v", err)
				}
				if ok {
					mu.Lock()
					won++
					mu.Unlock()
				}
			}()
		}
		close(start)
		wg.Wait()
		if won != 1 {
			t.Errorf("round %d: %d owners hold the lease, want 1", round, won)
		}
	}
}

// testConnectionClaims: a connection the provider has not verified claims
// nothing and sends nothing; a verified one takes its account from every
// unverified claim or connection in error, which are superseded and
// returned; a connected, verified one is never taken; ConnectionVerified
// applies only to the generation it names.
func testConnectionClaims(t *testing.T, s driver.Store) {
	ctx := context.Background()
	for _, ws := range []string{"a", "b", "c", "d"} {
		mustWorkspace(t, s, ws)
	}
	pending := func(ws, account, waba string, sec int) *messaging.ChannelConnection {
		c := connection(ws, "whatsapp", account, waba, sec)
		c.Status, c.StatusReason, c.VerifiedAt = record.ConnectionPending, "provider unreachable", nil
		return c
	}
	// Two unverified claims of one account: neither reserves it, neither
	// connects its channel.
	for _, c := range []*messaging.ChannelConnection{pending("a", "700", "W7", 1), pending("b", "700", "W7", 2)} {
		if sup, err := s.ConnectionPut(ctx, c); err != nil || len(sup) != 0 {
			t.Fatalf("unverified put of %s: superseded %v, %v; want none, nil", c.WorkspaceID, sup, err)
		}
	}
	wantChannels(t, s, "a")
	wantChannels(t, s, "b")

	// c proves control: it takes the account, a and b are superseded.
	sup, err := s.ConnectionPut(ctx, connection("c", "whatsapp", "700", "W7", 3))
	if err != nil {
		t.Fatalf("verified put: %v", err)
	}
	wantA, wantB := pending("a", "700", "W7", 1), pending("b", "700", "W7", 2)
	for _, w := range []*messaging.ChannelConnection{wantA, wantB} {
		w.Generation, w.Status, w.StatusReason, w.UpdatedAt = 1, record.ConnectionError, record.ReasonSuperseded, at(3)
	}
	if d := cmp.Diff([]*messaging.ChannelConnection{wantA, wantB}, sup); d != "" {
		t.Errorf("superseded by the verified put (-want +got):\n%s", d)
	}
	wantConnection(t, s, "superseded a", wantA)
	wantConnection(t, s, "superseded b", wantB)
	wantChannels(t, s, "c", "whatsapp")

	// a's credentials are proven later: c holds the account, connected,
	// so a's verification is a conflict and changes nothing.
	_, err = s.ConnectionVerified(ctx, &driver.ConnectionVerifiedParams{WorkspaceID: "a", Channel: "whatsapp", Generation: 1, At: at(4)})
	wantErr(t, "verifying an account another workspace holds", err, messaging.ErrConflict)
	wantConnection(t, s, "a after the refused verification", wantA)
	wantChannels(t, s, "a")
	// The WABA is held too: another account of it is refused.
	wantErr(t, "verified put of a held WABA", putErr(ctx, s, connection("d", "whatsapp", "701", "W7", 4)), messaging.ErrConflict)
	_, err = s.ConnectionGet(ctx, "d", "whatsapp")
	wantErr(t, "the refused put stored nothing", err, messaging.ErrNotFound)

	// A verification names its generation and a live connection.
	_, err = s.ConnectionVerified(ctx, &driver.ConnectionVerifiedParams{WorkspaceID: "b", Channel: "whatsapp", Generation: 2, At: at(5)})
	wantErr(t, "verifying another generation", err, driver.ErrStale)
	_, err = s.ConnectionVerified(ctx, &driver.ConnectionVerifiedParams{WorkspaceID: "d", Channel: "messenger", Generation: 1, At: at(5)})
	wantErr(t, "verifying a missing connection", err, messaging.ErrNotFound)

	// c's token is refused (error): it keeps the account until another
	// workspace proves control; b's verification then takes it, with the
	// provider's display number, and supersedes c (a, superseded already,
	// is left as it is).
	if ok, err := s.ConnectionUpdate(ctx, &driver.ConnectionUpdateParams{WorkspaceID: "c", Channel: "whatsapp", Generation: 1,
		Status: record.ConnectionError, StatusReason: "[190] expired", At: at(6)}); !ok || err != nil {
		t.Fatalf("ConnectionUpdate of c: %v, %v", ok, err)
	}
	if ws, err := s.ConnectionList(ctx, &driver.ConnectionListParams{Channel: "whatsapp", AccountID: "700"}); err != nil || len(holders(ws)) != 1 || holders(ws)[0] != "c" {
		t.Errorf("holders after c's error: %v, %v; want [c]", holders(ws), err)
	}
	sup, err = s.ConnectionVerified(ctx, &driver.ConnectionVerifiedParams{WorkspaceID: "b", Channel: "whatsapp", Generation: 1,
		DisplayPhoneNumber: "+254700000999", At: at(7)})
	if err != nil {
		t.Fatalf("ConnectionVerified of b: %v", err)
	}
	wantC := connection("c", "whatsapp", "700", "W7", 3)
	wantC.Generation, wantC.Status, wantC.StatusReason, wantC.VerifiedAt, wantC.UpdatedAt = 1, record.ConnectionError, record.ReasonSuperseded, nil, at(7)
	if d := cmp.Diff([]*messaging.ChannelConnection{wantC}, sup); d != "" {
		t.Errorf("superseded by b's verification (-want +got):\n%s", d)
	}
	verified := at(7)
	wantB.Status, wantB.StatusReason, wantB.VerifiedAt, wantB.UpdatedAt, wantB.DisplayPhoneNumber = record.ConnectionConnected, "", &verified, at(7), "+254700000999"
	wantConnection(t, s, "b after its verification", wantB)
	wantConnection(t, s, "a left as it was", wantA)
	wantChannels(t, s, "b", "whatsapp")
	wantChannels(t, s, "c")
	if ws, err := s.ConnectionList(ctx, &driver.ConnectionListParams{Channel: "whatsapp", AccountID: "700"}); err != nil || len(holders(ws)) != 1 || holders(ws)[0] != "b" {
		t.Errorf("holders after b's verification: %v, %v; want [b]", holders(ws), err)
	}
	// A verdict read from another state changes nothing: ConnectionUpdate
	// and ConnectionVerified name the status (and reason) they expect.
	if ok, err := s.ConnectionUpdate(ctx, &driver.ConnectionUpdateParams{WorkspaceID: "b", Channel: "whatsapp", Generation: 1,
		Status: record.ConnectionError, StatusReason: "late", FromStatus: record.ConnectionPending, FromReason: "provider unreachable", At: at(8)}); ok || err != nil {
		t.Errorf("ConnectionUpdate from a status b no longer has: %v, %v; want false, nil", ok, err)
	}
	if ok, err := s.ConnectionUpdate(ctx, &driver.ConnectionUpdateParams{WorkspaceID: "b", Channel: "whatsapp", Generation: 1,
		Status: record.ConnectionError, StatusReason: "late", FromStatus: record.ConnectionConnected, FromReason: "other", At: at(8)}); ok || err != nil {
		t.Errorf("ConnectionUpdate from a reason b no longer has: %v, %v; want false, nil", ok, err)
	}
	_, err = s.ConnectionVerified(ctx, &driver.ConnectionVerifiedParams{WorkspaceID: "b", Channel: "whatsapp", Generation: 1,
		FromStatus: record.ConnectionPending, At: at(8)})
	wantErr(t, "ConnectionVerified from a status b no longer has", err, driver.ErrStale)
	wantConnection(t, s, "b after verdicts on an older state", wantB)
	// Verifying the holder again keeps it and supersedes nothing.
	if sup, err := s.ConnectionVerified(ctx, &driver.ConnectionVerifiedParams{WorkspaceID: "b", Channel: "whatsapp", Generation: 1,
		FromStatus: record.ConnectionConnected, At: at(8)}); err != nil || len(sup) != 0 {
		t.Errorf("verifying the holder again: %v, %v; want none, nil", sup, err)
	}
	// An unverified put replaces b's proven credentials: b no longer holds
	// the account and its channel stops sending.
	mustPut(t, s, pending("b", "700", "W7", 9))
	wantChannels(t, s, "b")
}

// holders are the workspaces of the connections in cs that hold their
// account.
func holders(cs []*messaging.ChannelConnection) []string {
	var out []string
	for _, c := range cs {
		if c.Holds() {
			out = append(out, c.WorkspaceID)
		}
	}
	return out
}
