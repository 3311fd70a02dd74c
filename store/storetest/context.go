package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
)

// Every store method called with a context that is already cancelled
// returns an error that errors.Is matches with context.Canceled, and does
// nothing: no write of it is stored, even in part.

// canceledCall is one store method called with a cancelled context.
type canceledCall struct {
	name string
	call func(ctx context.Context) error
}

// checkCanceled runs every call with a context cancelled before the call
// and reports each one that does not return context.Canceled.
func checkCanceled(t *testing.T, calls []canceledCall) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range calls {
		if err := c.call(ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context: error %v, want context.Canceled", c.name, err)
		}
	}
}

// storeState is what the live reads of testContextCanceled see; the
// cancelled calls must leave it unchanged.
type storeState struct {
	Workspace       *messaging.WorkspaceInfo
	NewWorkspace    bool
	Keys            []*messaging.APIKey
	Contacts        []*messaging.Contact
	Templates       []*messaging.Template
	Message         *messaging.Message
	NewMessage      bool
	Endpoints       []*messaging.WebhookEndpoint
	Deliveries      []*messaging.WebhookDelivery
	MessageByIdem   *messaging.Message
	MessageByProvID *messaging.Message
	Connections     []*messaging.ChannelConnection
	Session         *driver.StoredSession
	NewSession      bool
}

func readState(t *testing.T, s driver.Store) storeState {
	t.Helper()
	ctx := context.Background()
	var st storeState
	var err error
	check := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	exists := func(what string, err error) bool {
		t.Helper()
		if err != nil && !errors.Is(err, messaging.ErrNotFound) {
			t.Fatalf("%s: %v", what, err)
		}
		return err == nil
	}
	st.Workspace, err = s.WorkspaceGet(ctx, "a")
	check("WorkspaceGet", err)
	_, err = s.WorkspaceGet(ctx, "b")
	st.NewWorkspace = exists("WorkspaceGet(b)", err)
	st.Keys, err = s.APIKeyList(ctx, "a")
	check("APIKeyList", err)
	st.Contacts, _, err = s.ContactList(ctx, &driver.ContactListParams{WorkspaceID: "a", Limit: 100})
	check("ContactList", err)
	st.Templates, err = s.TemplateList(ctx, &driver.TemplateListParams{WorkspaceID: "a"})
	check("TemplateList", err)
	st.Message, err = s.MessageGet(ctx, "a", "msg_1")
	check("MessageGet", err)
	_, err = s.MessageGet(ctx, "a", "msg_3")
	st.NewMessage = exists("MessageGet(msg_3)", err)
	st.Endpoints, err = s.WebhookEndpointList(ctx, "a")
	check("WebhookEndpointList", err)
	if len(st.Endpoints) > 0 {
		st.Deliveries, err = s.WebhookDeliveryList(ctx, &driver.WebhookDeliveryListParams{WorkspaceID: "a", EndpointID: st.Endpoints[0].ID, Limit: 100})
		check("WebhookDeliveryList", err)
	}
	st.MessageByIdem, err = s.MessageGetByIdempotencyKey(ctx, "a", "idem-1")
	check("MessageGetByIdempotencyKey", err)
	st.MessageByProvID, err = s.MessageGetByProviderID(ctx, "wamid.2")
	check("MessageGetByProviderID", err)
	st.Connections, err = s.ConnectionList(ctx, &driver.ConnectionListParams{})
	check("ConnectionList", err)
	st.Session, err = s.SessionGet(ctx, sessionHash(1))
	check("SessionGet", err)
	_, err = s.SessionGet(ctx, sessionHash(2))
	st.NewSession = exists("SessionGet(2)", err)
	return st
}

// testContextCanceled calls every method of driver.Store with a
// cancelled context: each returns context.Canceled, and none of the writes
// (claims, records and takes included) changes anything.
func testContextCanceled(t *testing.T, s driver.Store) {
	ctx := context.Background()
	mustWorkspace(t, s, "a", "whatsapp")
	exp := at(3600)
	key := &messaging.APIKey{ID: "key_1", WorkspaceID: "a", Prefix: "mk_abcdefgh_", Hash: []byte("hash-1-------------------------!"),
		Scopes: []string{"read:contacts"}, ExpiresAt: &exp, CreatedAt: at(1)}
	if err := s.APIKeyCreate(ctx, key); err != nil {
		t.Fatal(err)
	}
	if err := s.ContactCreate(ctx, contact("a", "ct_1", 1, "Amina", "Otieno", "+254712000001", "amina@example.com")); err != nil {
		t.Fatal(err)
	}
	tpl := &messaging.Template{ID: "tpl_1", WorkspaceID: "a", Name: "order_shipped", Language: "en", Category: "UTILITY", Status: "pending",
		Components: []messaging.TemplateComponent{{Type: "BODY", Text: "Hello {{1}}"}}, CreatedAt: at(1), UpdatedAt: at(1)}
	if err := s.TemplateCreate(ctx, tpl); err != nil {
		t.Fatal(err)
	}
	m1 := queuedMessage("a", "msg_1", at(0))
	m1.IdempotencyKey, m1.RequestHash = "idem-1", "hash-1"
	m2 := queuedMessage("a", "msg_2", at(0))
	m2.Status, m2.ProviderMessageID = messaging.StatusSent, "wamid.2"
	for _, m := range []*messaging.Message{m1, m2} {
		if _, _, err := s.MessageCreate(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.WebhookEndpointCreate(ctx, endpoint("a", "we_1", 1)); err != nil {
		t.Fatal(err)
	}
	statusChange(t, s, "a", "msg_2", messaging.StatusSent, messaging.StatusDelivered, "evt_1", 2)
	ds, err := s.WebhookClaim(ctx, &driver.WebhookClaimParams{Owner: "h1", Now: at(10), Lease: time.Minute, Limit: 10})
	if err != nil || len(ds) != 1 {
		t.Fatalf("WebhookClaim: %d deliveries, error %v; want 1", len(ds), err)
	}
	d := ds[0]
	save(t, s, report("wamid.9", messaging.StatusDelivered, 5), 0, 10)
	mustPut(t, s, connection("a", "whatsapp", "111", "W1", 1))
	mustSession(t, s, storedSession(1, 60, "a"))
	if ok, err := s.LeaseAcquire(ctx, &driver.LeaseParams{Name: "sync", Owner: "h1", Now: at(0), Until: at(60)}); !ok || err != nil {
		t.Fatalf("LeaseAcquire: %v, %v", ok, err)
	}

	before := readState(t, s)
	// The claims are made at a time when, had they changed anything, the
	// live claims below would find nothing: msg_1 is due, d's lease ended.
	later := at(100)
	ws := func(ctx context.Context, id string) error { _, err := s.WorkspaceGet(ctx, id); return err }
	checkCanceled(t, []canceledCall{
		{"WorkspaceCreate", func(ctx context.Context) error {
			return s.WorkspaceCreate(ctx, &messaging.WorkspaceInfo{ID: "b", Channels: []string{}, CreatedAt: base})
		}},
		{"WorkspaceGet", func(ctx context.Context) error { return ws(ctx, "a") }},
		{"WorkspaceList", func(ctx context.Context) error {
			_, err := s.WorkspaceList(ctx, &driver.WorkspaceListParams{Limit: 10})
			return err
		}},
		{"WorkspaceSetChannel", func(ctx context.Context) error {
			return s.WorkspaceSetChannel(ctx, &driver.ChannelParams{WorkspaceID: "a", Channel: "messenger", Connected: true, At: at(3)})
		}},
		{"APIKeyCreate", func(ctx context.Context) error {
			return s.APIKeyCreate(ctx, &messaging.APIKey{ID: "key_2", WorkspaceID: "a", Prefix: "mk_abcdefgh_", Hash: []byte("hash-2"), Scopes: []string{}, CreatedAt: at(3)})
		}},
		{"APIKeysByPrefix", func(ctx context.Context) error { _, err := s.APIKeysByPrefix(ctx, "mk_abcdefgh_"); return err }},
		{"APIKeyList", func(ctx context.Context) error { _, err := s.APIKeyList(ctx, "a"); return err }},
		{"APIKeyRevoke", func(ctx context.Context) error {
			return s.APIKeyRevoke(ctx, &driver.APIKeyRevokeParams{WorkspaceID: "a", ID: "key_1", At: at(3)})
		}},
		{"APIKeyUpdate", func(ctx context.Context) error {
			return s.APIKeyUpdate(ctx, &driver.APIKeyUpdateParams{WorkspaceID: "a", ID: "key_1", Scopes: []string{"read:messages"}})
		}},
		{"APIKeyTouch", func(ctx context.Context) error {
			return s.APIKeyTouch(ctx, &driver.APIKeyTouchParams{WorkspaceID: "a", ID: "key_1", At: at(3)})
		}},
		{"ContactCreate", func(ctx context.Context) error {
			return s.ContactCreate(ctx, contact("a", "ct_2", 3, "Baraka", "Mwangi", "+254712000002", "baraka@example.com"))
		}},
		{"ContactGet", func(ctx context.Context) error { _, err := s.ContactGet(ctx, "a", "ct_1"); return err }},
		{"ContactUpdate", func(ctx context.Context) error {
			c := contact("a", "ct_1", 1, "Amina", "Wanjiru", "+254712000001", "amina@example.com")
			c.Version, c.UpdatedAt = 2, at(3)
			return s.ContactUpdate(ctx, &driver.ContactReplaceParams{Contact: c, PrevVersion: 1})
		}},
		{"ContactList", func(ctx context.Context) error {
			_, _, err := s.ContactList(ctx, &driver.ContactListParams{WorkspaceID: "a", Search: "ami", Limit: 10})
			return err
		}},
		{"TemplateCreate", func(ctx context.Context) error {
			t2 := *tpl
			t2.ID, t2.Name = "tpl_2", "promo"
			return s.TemplateCreate(ctx, &t2)
		}},
		{"TemplateGet", func(ctx context.Context) error { _, err := s.TemplateGet(ctx, "a", "tpl_1"); return err }},
		{"TemplateGetByName", func(ctx context.Context) error {
			_, err := s.TemplateGetByName(ctx, &driver.TemplateGetByNameParams{WorkspaceID: "a", Name: "order_shipped", Language: "en"})
			return err
		}},
		{"TemplateList", func(ctx context.Context) error {
			_, err := s.TemplateList(ctx, &driver.TemplateListParams{WorkspaceID: "a"})
			return err
		}},
		{"TemplateSetStatus", func(ctx context.Context) error {
			_, err := s.TemplateSetStatus(ctx, &driver.TemplateStatusParams{WorkspaceID: "a", ID: "tpl_1", From: []string{"pending"}, To: "approved", At: at(3)})
			return err
		}},
		{"TemplateUpdate", func(ctx context.Context) error {
			t2 := *tpl
			t2.Name, t2.ProviderTemplateID, t2.UpdatedAt = "order_sent", "123", at(3)
			return s.TemplateUpdate(ctx, &driver.TemplateUpdateParams{Template: &t2, From: []string{"pending"}})
		}},
		{"TemplateDelete", func(ctx context.Context) error { return s.TemplateDelete(ctx, "a", "tpl_1") }},
		{"ConnectionPut", func(ctx context.Context) error {
			return putErr(ctx, s, connection("a", "messenger", "P1", "", 3))
		}},
		{"ConnectionPut (replace)", func(ctx context.Context) error {
			return putErr(ctx, s, connection("a", "whatsapp", "112", "W2", 3))
		}},
		{"ConnectionGet", func(ctx context.Context) error { _, err := s.ConnectionGet(ctx, "a", "whatsapp"); return err }},
		{"ConnectionList", func(ctx context.Context) error {
			_, err := s.ConnectionList(ctx, &driver.ConnectionListParams{})
			return err
		}},
		{"ConnectionUpdate", func(ctx context.Context) error {
			_, err := s.ConnectionUpdate(ctx, &driver.ConnectionUpdateParams{WorkspaceID: "a", Channel: "whatsapp", Generation: 1,
				Status: record.ConnectionError, StatusReason: "expired", At: at(3)})
			return err
		}},
		{"LeaseAcquire", func(ctx context.Context) error {
			_, err := s.LeaseAcquire(ctx, &driver.LeaseParams{Name: "sync", Owner: "h2", Now: later, Until: at(200)})
			return err
		}},
		{"MessageCreate", func(ctx context.Context) error {
			_, _, err := s.MessageCreate(ctx, queuedMessage("a", "msg_3", at(0)))
			return err
		}},
		{"MessageGet", func(ctx context.Context) error { _, err := s.MessageGet(ctx, "a", "msg_1"); return err }},
		{"MessageGetByIdempotencyKey", func(ctx context.Context) error {
			_, err := s.MessageGetByIdempotencyKey(ctx, "a", "idem-1")
			return err
		}},
		{"MessageGetByProviderID", func(ctx context.Context) error { _, err := s.MessageGetByProviderID(ctx, "wamid.2"); return err }},
		{"MessageUpdateStatuses", func(ctx context.Context) error {
			_, _, err := updateStatus(ctx, s, &driver.MessageStatusParams{WorkspaceID: "a", ID: "msg_1",
				From: []string{messaging.StatusQueued}, To: messaging.StatusSent, ProviderMessageID: "wamid.1", At: at(3),
				Event: statusEvent("a", "msg_1", messaging.StatusQueued, messaging.StatusSent, "evt_2", 3)})
			return err
		}},
		{"MessageClaim", func(ctx context.Context) error {
			_, err := s.MessageClaim(ctx, &driver.MessageClaimParams{Owner: "x", Now: later, Lease: time.Minute, Limit: 10})
			return err
		}},
		{"MessageRelease", func(ctx context.Context) error {
			_, err := s.MessageRelease(ctx, &driver.MessageReleaseParams{WorkspaceID: "a", ID: "msg_1", DueAt: at(3)})
			return err
		}},
		{"PendingReportSave", func(ctx context.Context) error {
			_, err := s.PendingReportSave(ctx, &driver.PendingReportSaveParams{Report: report("wamid.9", messaging.StatusRead, 6), NotBefore: at(0), Limit: 10})
			return err
		}},
		{"PendingReportTake", func(ctx context.Context) error {
			_, err := s.PendingReportTake(ctx, &driver.PendingReportTakeParams{ProviderMessageIDs: []string{"wamid.9"}, NotBefore: at(0)})
			return err
		}},
		{"WebhookEndpointCreate", func(ctx context.Context) error { return s.WebhookEndpointCreate(ctx, endpoint("a", "we_2", 3)) }},
		{"WebhookEndpointList", func(ctx context.Context) error { _, err := s.WebhookEndpointList(ctx, "a"); return err }},
		{"WebhookEndpointGet", func(ctx context.Context) error { _, err := s.WebhookEndpointGet(ctx, "a", "we_1"); return err }},
		{"WebhookEndpointUpdate", func(ctx context.Context) error {
			off := false
			_, err := s.WebhookEndpointUpdate(ctx, &driver.WebhookEndpointUpdateParams{WorkspaceID: "a", ID: "we_1", SecretSealed: []byte("sealed-new"), Enabled: &off, At: at(3)})
			return err
		}},
		{"WebhookDeliveryList", func(ctx context.Context) error {
			_, err := s.WebhookDeliveryList(ctx, &driver.WebhookDeliveryListParams{WorkspaceID: "a", EndpointID: "we_1", Limit: 10})
			return err
		}},
		{"WebhookRedeliver", func(ctx context.Context) error {
			_, err := s.WebhookRedeliver(ctx, &driver.WebhookRedeliverParams{WorkspaceID: "a", EndpointID: "we_1", ID: d.ID, Now: later})
			return err
		}},
		{"WebhookEndpointDelete", func(ctx context.Context) error { return s.WebhookEndpointDelete(ctx, "a", "we_1") }},
		{"WebhookClaim", func(ctx context.Context) error {
			_, err := s.WebhookClaim(ctx, &driver.WebhookClaimParams{Owner: "x", Now: later, Lease: time.Minute, Limit: 10})
			return err
		}},
		{"WebhookRecord", func(ctx context.Context) error {
			return s.WebhookRecord(ctx, &driver.WebhookRecordParams{ID: d.ID, Owner: "h1", State: record.DeliveryDelivered, LastStatus: 200, At: at(11)})
		}},
		{"SessionCreate", func(ctx context.Context) error { return s.SessionCreate(ctx, storedSession(2, 60)) }},
		{"SessionGet", func(ctx context.Context) error { _, err := s.SessionGet(ctx, sessionHash(1)); return err }},
		{"SessionDelete", func(ctx context.Context) error { return s.SessionDelete(ctx, sessionHash(1)) }},
		{"SessionSweep", func(ctx context.Context) error {
			_, err := s.SessionSweep(ctx, &driver.SessionSweepParams{Before: later, Limit: 10})
			return err
		}},
	})

	if diff := cmp.Diff(before, readState(t, s)); diff != "" {
		t.Errorf("calls with a cancelled context changed the store (-before +after):\n%s", diff)
	}
	// Had the cancelled take of the expired lease counted, h2 would hold it.
	if ok, err := s.LeaseAcquire(ctx, &driver.LeaseParams{Name: "sync", Owner: "h3", Now: later, Until: at(200)}); !ok || err != nil {
		t.Errorf("LeaseAcquire after a cancelled one: %v, %v; want the expired lease taken", ok, err)
	}
	if got := take(t, s, "wamid.9", 0); len(got) != 1 || got[0].Status != messaging.StatusDelivered {
		t.Errorf("pending reports after a cancelled save and take: %+v; want the one saved before", got)
	}
	ms, err := s.MessageClaim(ctx, &driver.MessageClaimParams{Owner: "h2", Now: later, Lease: time.Minute, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 1 || ms[0].ID != "msg_1" || ms[0].Attempts != 1 {
		t.Errorf("claim after a cancelled claim: %+v; want msg_1 on its first attempt", ms)
	}
	ds, err = s.WebhookClaim(ctx, &driver.WebhookClaimParams{Owner: "h2", Now: later, Lease: time.Minute, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 1 || ds[0].ID != d.ID || ds[0].Attempts != 2 || string(ds[0].Secret) != "sealed-we_1" {
		t.Errorf("webhook claim after a cancelled claim and record: %+v; want evt_1 to we_1 on its second attempt", ds)
	}
}

// testZeroTimesRoundTrip stores a workspace with a zero CreatedAt and no
// channels: it reads back with a zero time and an empty, non-nil list.
func testZeroTimesRoundTrip(t *testing.T, s driver.Store) {
	ctx := context.Background()
	if err := s.WorkspaceCreate(ctx, &messaging.WorkspaceInfo{ID: "a"}); err != nil {
		t.Fatal(err)
	}
	w, err := s.WorkspaceGet(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if !w.CreatedAt.IsZero() || w.Channels == nil || len(w.Channels) != 0 {
		t.Errorf("got %+v, want zero CreatedAt and non-nil empty Channels", w)
	}
}
