package messaging_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ujumbe/messaging/record"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/webhooksig"
)

// hookEndpoint returns the only endpoint of the fixture.
func (f *hookFixture) endpoint(t *testing.T) *messaging.WebhookEndpoint {
	t.Helper()
	eps, err := f.svc.Workspace("acme").Webhooks.List(f.ctx)
	if err != nil || len(eps) != 1 {
		t.Fatalf("Webhooks.List = %d, %v", len(eps), err)
	}
	return eps[0]
}

// statusEvents makes one message.status_updated event (queued>sent) for the
// endpoint of f.
func (f *hookFixture) statusEvent(t *testing.T) {
	t.Helper()
	f.send(t, "+254712345678")
	f.dispatch(t)
}

// TestWebhookRotationOverlap: after a rotation, deliveries carry two
// signatures for 24 h, each verifiable with one of the secrets; after that
// only the new secret signs.
func TestWebhookRotationOverlap(t *testing.T) {
	t.Parallel()
	f := setupHooks(t, true)
	e := f.endpoint(t)
	rotated, secret, err := f.svc.Workspace("acme").Webhooks.RotateSecret(f.ctx, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(secret, "whsec_") || secret == f.secret {
		t.Fatalf("rotated secret %q", secret)
	}
	if want := f.clock.Now().Add(24 * time.Hour); rotated.PreviousSecretExpiresAt == nil || !rotated.PreviousSecretExpiresAt.Equal(want) {
		t.Errorf("PreviousSecretExpiresAt = %v, want %v", rotated.PreviousSecretExpiresAt, want)
	}
	f.statusEvent(t)
	if n := f.deliver(t); n != 1 {
		t.Fatalf("delivered %d", n)
	}
	h, body := f.rcv.got[0], f.rcv.bodies[0]
	sigs := strings.Fields(h.Get("webhook-signature"))
	if len(sigs) != 2 {
		t.Fatalf("webhook-signature during the overlap = %q, want two signatures", h.Get("webhook-signature"))
	}
	for i, s := range []string{secret, f.secret} {
		one := h.Clone()
		one.Set("webhook-signature", sigs[i])
		if err := webhooksig.Verify(s, one, body, f.clock.Now(), 0); err != nil {
			t.Errorf("signature %d does not verify with secret %d: %v", i, i, err)
		}
	}

	f.clock.Advance(24*time.Hour + time.Second)
	f.statusEvent(t)
	if n := f.deliver(t); n != 1 {
		t.Fatalf("delivered %d after the overlap", n)
	}
	h, body = f.rcv.got[1], f.rcv.bodies[1]
	if sigs := strings.Fields(h.Get("webhook-signature")); len(sigs) != 1 {
		t.Errorf("webhook-signature after the overlap = %q, want one signature", h.Get("webhook-signature"))
	}
	if err := webhooksig.Verify(secret, h, body, f.clock.Now(), 0); err != nil {
		t.Errorf("after the overlap the new secret does not verify: %v", err)
	}
	if err := webhooksig.Verify(f.secret, h, body, f.clock.Now(), 0); err == nil {
		t.Error("after the overlap the old secret still verifies")
	}
	if ok, err := f.svc.WebhookEndpointHasSecret(f.endpoint(t), secret); !ok || err != nil {
		t.Errorf("WebhookEndpointHasSecret(new) = %v, %v", ok, err)
	}
}

// TestWebhookUpdateSecret: Update with a Secret the caller chose signs
// with it alone at once (a rotation's previous secret stops too), enables
// a disabled endpoint unless Enabled says false, and is audited as a
// rotation (and as an update when other fields change); a malformed
// secret is a validation error naming secret that changes nothing.
func TestWebhookUpdateSecret(t *testing.T) {
	t.Parallel()
	f := setupHooks(t, true)
	hooks := f.svc.Workspace("acme").Webhooks
	e := f.endpoint(t)
	off := false
	if _, _, err := hooks.RotateSecret(f.ctx, e.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := hooks.Update(f.ctx, e.ID, &messaging.WebhookUpdateParams{Enabled: &off}); err != nil {
		t.Fatal(err)
	}
	bad := "whsec_c2hvcnQ="
	_, err := hooks.Update(f.ctx, e.ID, &messaging.WebhookUpdateParams{Secret: &bad})
	wantError(t, err, messaging.CodeValidation, "secret")
	if got := f.endpoint(t); got.DisabledAt == nil {
		t.Error("a refused secret enabled the endpoint")
	}
	chosen := "whsec_" + strings.Repeat("QUJD", 8)
	got, err := hooks.Update(f.ctx, e.ID, &messaging.WebhookUpdateParams{Secret: &chosen})
	if err != nil {
		t.Fatal(err)
	}
	if got.DisabledAt != nil || got.DisabledReason != "" || got.PreviousSecretExpiresAt != nil {
		t.Errorf("after a chosen secret: disabled %v (%q), previous secret until %v; want enabled, no previous secret", got.DisabledAt, got.DisabledReason, got.PreviousSecretExpiresAt)
	}
	f.statusEvent(t)
	if n := f.deliver(t); n != 1 {
		t.Fatalf("delivered %d", n)
	}
	h, body := f.rcv.got[0], f.rcv.bodies[0]
	if sigs := strings.Fields(h.Get("webhook-signature")); len(sigs) != 1 {
		t.Errorf("webhook-signature = %q, want one signature", h.Get("webhook-signature"))
	}
	if err := webhooksig.Verify(chosen, h, body, f.clock.Now(), 0); err != nil {
		t.Errorf("the chosen secret does not verify: %v", err)
	}
	desc := "kept off"
	got, err = hooks.Update(f.ctx, e.ID, &messaging.WebhookUpdateParams{Secret: &chosen, Enabled: &off, Description: &desc})
	if err != nil || got.DisabledAt == nil || got.Description != desc {
		t.Fatalf("secret with enabled false: %+v, %v; want disabled, described", got, err)
	}
	evs, _, err := f.svc.AuditEvents(f.ctx, "acme", "", 10)
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, ev := range evs[:4] {
		actions = append(actions, ev.Action)
	}
	want := []string{record.AuditWebhookRotated, record.AuditWebhookUpdated, record.AuditWebhookRotated, record.AuditWebhookUpdated}
	if d := cmp.Diff(want, actions); d != "" {
		t.Errorf("audit, newest first (-want +got):\n%s", d)
	}
}

// TestEditWebhookEndpoint: url, events, description and enabled change;
// bad values are validation errors naming their field; another workspace's
// endpoint is not found; the changes are audited as updates and the
// rotation as a rotation, without secrets.
func TestEditWebhookEndpoint(t *testing.T) {
	t.Parallel()
	f := setupHooks(t, false)
	e := f.endpoint(t)
	if _, err := f.svc.CreateWorkspace(f.ctx, &messaging.CreateWorkspaceParams{ID: "other", Channels: f.svc.Channels()}); err != nil {
		t.Fatal(err)
	}
	str := func(s string) *string { return &s }
	list := func(s ...string) *[]string { return &s }
	no := false
	for _, tc := range []struct {
		name  string
		p     messaging.WebhookUpdateParams
		field string
		in    string
	}{
		{"nothing", messaging.WebhookUpdateParams{}, "body", ""},
		{"unknown event", messaging.WebhookUpdateParams{Events: list("message.status_updated", "message.deleted")}, "events", "message.deleted"},
		{"long description", messaging.WebhookUpdateParams{Description: str(strings.Repeat("é", 501))}, "description", "500"},
		{"loopback url", messaging.WebhookUpdateParams{URL: str("http://127.0.0.1:8080/hook")}, "url", "loopback"},
		{"localhost url", messaging.WebhookUpdateParams{URL: str("http://localhost/hook")}, "url", "loopback"},
		{"private url", messaging.WebhookUpdateParams{URL: str("https://10.0.0.7/hook")}, "url", "private"},
		{"metadata url", messaging.WebhookUpdateParams{URL: str("http://169.254.169.254/latest")}, "url", "private"},
		{"ftp url", messaging.WebhookUpdateParams{URL: str("ftp://hooks.example/x")}, "url", "http"},
	} {
		p := tc.p
		_, err := f.svc.Workspace("acme").Webhooks.Update(f.ctx, e.ID, &p)
		var me *messaging.Error
		if !errors.As(err, &me) || me.Code != messaging.CodeValidation || me.Field != tc.field || !strings.Contains(me.Message, tc.in) {
			t.Errorf("%s: error %v; want a validation error on %s mentioning %q", tc.name, err, tc.field, tc.in)
		}
	}
	_, err := f.svc.Workspace("other").Webhooks.Update(f.ctx, e.ID, &messaging.WebhookUpdateParams{Enabled: &no})
	if messaging.ErrorCode(err) != messaging.CodeNotFound {
		t.Errorf("edit in another workspace: %v, want not_found", err)
	}
	if _, _, err := f.svc.Workspace("other").Webhooks.RotateSecret(f.ctx, e.ID); messaging.ErrorCode(err) != messaging.CodeNotFound {
		t.Errorf("rotate in another workspace: %v, want not_found", err)
	}
	if _, err := f.svc.Workspace("other").Webhooks.Get(f.ctx, e.ID); messaging.ErrorCode(err) != messaging.CodeNotFound {
		t.Errorf("get in another workspace: %v, want not_found", err)
	}

	got, err := f.svc.Workspace("acme").Webhooks.Update(f.ctx, e.ID, &messaging.WebhookUpdateParams{
		URL: str("https://hooks.example/v2"), Events: list("webhook.test", "message.status_updated", "webhook.test"), Description: str("orders"), Enabled: &no})
	if err != nil {
		t.Fatal(err)
	}
	now := f.clock.Now()
	want := *e
	want.URL, want.Events, want.Description, want.DisabledAt, want.DisabledReason = "https://hooks.example/v2", []string{"message.status_updated", "webhook.test"}, "orders", &now, record.DisabledByOperator
	if d := cmp.Diff(&want, got); d != "" {
		t.Errorf("edited endpoint (-want +got):\n%s", d)
	}
	if _, _, err := f.svc.Workspace("acme").Webhooks.RotateSecret(f.ctx, e.ID); err != nil {
		t.Fatal(err)
	}
	evs, _, err := f.svc.AuditEvents(f.ctx, "acme", "", 10)
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, ev := range evs {
		actions = append(actions, ev.Action+" "+ev.Target)
		if b, _ := json.Marshal(ev); strings.Contains(string(b), "whsec_") {
			t.Errorf("audit event holds a secret: %s", b)
		}
	}
	wantActions := []string{record.AuditWebhookRotated + " " + e.ID, record.AuditWebhookUpdated + " " + e.ID, record.AuditWebhookCreated + " " + e.ID}
	if d := cmp.Diff(wantActions, actions[:3]); d != "" {
		t.Errorf("audit (-want +got):\n%s", d)
	}
}

// TestWebhookDisabledAndFiltered: a disabled endpoint gets nothing until
// enabled; an endpoint that does not subscribe to message.status_updated
// gets none of those events.
func TestWebhookDisabledAndFiltered(t *testing.T) {
	t.Parallel()
	f := setupHooks(t, true)
	e := f.endpoint(t)
	off, on := false, true
	f.statusEvent(t) // queued before the endpoint is disabled
	if _, err := f.svc.Workspace("acme").Webhooks.Update(f.ctx, e.ID, &messaging.WebhookUpdateParams{Enabled: &off}); err != nil {
		t.Fatal(err)
	}
	f.statusEvent(t)
	if n := f.deliver(t); n != 0 || f.rcv.count() != 0 {
		t.Fatalf("a disabled endpoint got %d deliveries", n)
	}
	ds, _, err := f.svc.Workspace("acme").Webhooks.Deliveries(f.ctx, e.ID, "", 0)
	if err != nil || len(ds) != 1 || ds[0].State != record.DeliveryFailed || ds[0].LastError != "endpoint disabled" {
		t.Fatalf("deliveries of the disabled endpoint = %+v, %v; want the one queued before, failed", ds, err)
	}
	_, err = f.svc.Workspace("acme").Webhooks.Redeliver(f.ctx, e.ID, messaging.WebhookDeliveryID(ds[0]))
	if messaging.ErrorCode(err) != messaging.CodeConflict {
		t.Errorf("redeliver to a disabled endpoint: %v, want conflict", err)
	}
	if _, err := f.svc.Workspace("acme").Webhooks.Redeliver(f.ctx, e.ID, "whd_999999"); messaging.ErrorCode(err) != messaging.CodeNotFound {
		t.Errorf("redeliver an unknown delivery of a disabled endpoint: %v, want not_found", err)
	}
	list := []string{messaging.EventWebhookTest}
	if _, err := f.svc.Workspace("acme").Webhooks.Update(f.ctx, e.ID, &messaging.WebhookUpdateParams{Enabled: &on, Events: &list}); err != nil {
		t.Fatal(err)
	}
	f.statusEvent(t)
	if n := f.deliver(t); n != 0 {
		t.Errorf("an endpoint subscribed to webhook.test only got %d status events", n)
	}
	list = nil
	if _, err := f.svc.Workspace("acme").Webhooks.Update(f.ctx, e.ID, &messaging.WebhookUpdateParams{Events: &list}); err != nil {
		t.Fatal(err)
	}
	f.statusEvent(t)
	if n := f.deliver(t); n != 1 || f.rcv.count() != 1 {
		t.Errorf("enabled for every event: %d delivered, want 1", n)
	}
	// The failed delivery is redelivered now that the endpoint is enabled.
	d, err := f.svc.Workspace("acme").Webhooks.Redeliver(f.ctx, e.ID, messaging.WebhookDeliveryID(ds[0]))
	if err != nil || d.State != record.DeliveryPending || !d.DueAt.Equal(f.clock.Now()) {
		t.Fatalf("redeliver: %+v, %v; want pending, due now", d, err)
	}
	if n := f.deliver(t); n != 1 || f.rcv.count() != 2 {
		t.Errorf("redelivered: %d attempted, %d received; want 1 and 2", n, f.rcv.count())
	}
	for _, id := range []string{"whd_x", "42", "whd_999999", ""} {
		if _, err := f.svc.Workspace("acme").Webhooks.Redeliver(f.ctx, e.ID, id); messaging.ErrorCode(err) != messaging.CodeNotFound {
			t.Errorf("redeliver %q: %v, want not_found", id, err)
		}
	}
}

// TestListWebhookDeliveries: newest first, with cursors; delivered ones
// carry their delivery time; bad cursors and limits name their field.
func TestListWebhookDeliveries(t *testing.T) {
	t.Parallel()
	f := setupHooks(t, true, 500, 200)
	e := f.endpoint(t)
	for range 3 {
		f.statusEvent(t)
	}
	f.deliver(t) // the first answered 500, the others 200
	var all []*messaging.WebhookDelivery
	cursor := ""
	for range 5 {
		page, next, err := f.svc.Workspace("acme").Webhooks.Deliveries(f.ctx, e.ID, cursor, 2)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, page...)
		if cursor = next; cursor == "" {
			break
		}
	}
	if len(all) != 3 || !(all[0].Seq > all[1].Seq && all[1].Seq > all[2].Seq) {
		t.Fatalf("pages = %d deliveries, want 3 newest first", len(all))
	}
	// Deliveries of different messages go out concurrently: which one
	// met the 500 is not fixed, so look it up.
	var failed, delivered []*messaging.WebhookDelivery
	for _, d := range all {
		if d.State == record.DeliveryPending {
			failed = append(failed, d)
		} else {
			delivered = append(delivered, d)
		}
	}
	if len(failed) != 1 || failed[0].LastStatus != 500 || failed[0].LastError != "endpoint answered 500" || failed[0].DeliveredAt != nil {
		t.Errorf("want one delivery pending after its 500, got %+v", failed)
	}
	for _, d := range delivered {
		if d.State != record.DeliveryDelivered || d.DeliveredAt == nil || !d.DeliveredAt.Equal(f.clock.Now()) || d.Payload != nil || d.LastStatus != 200 {
			t.Errorf("a delivered delivery = %+v", d)
		}
	}
	for _, tc := range []struct {
		cursor string
		limit  int
		field  string
	}{{"abc", 10, "cursor"}, {"-1", 10, "cursor"}, {"", 101, "limit"}, {"", -1, "limit"}} {
		_, _, err := f.svc.Workspace("acme").Webhooks.Deliveries(f.ctx, e.ID, tc.cursor, tc.limit)
		var me *messaging.Error
		if !errors.As(err, &me) || me.Field != tc.field {
			t.Errorf("cursor %q limit %d: %v; want a validation error on %s", tc.cursor, tc.limit, err, tc.field)
		}
	}
	if _, _, err := f.svc.Workspace("nope").Webhooks.Deliveries(f.ctx, e.ID, "", 0); messaging.ErrorCode(err) != messaging.CodeNotFound {
		t.Errorf("list in another workspace: %v, want not_found", err)
	}
}

// TestTestWebhookEndpoint: a signed webhook.test event is sent now, and the
// receiver's status and the latency on the service's clock are returned;
// an address the guard refuses is an answer with an error. Each test is
// listed in the endpoint's deliveries, marked Test, delivered or failed.
func TestTestWebhookEndpoint(t *testing.T) {
	t.Parallel()
	f := setupHooks(t, true)
	var got *http.Request
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r
		body = make([]byte, r.ContentLength)
		_, _ = r.Body.Read(body)
		f.clock.Advance(150 * time.Millisecond)
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(srv.Close)
	e := f.endpoint(t)
	url := srv.URL + "/test"
	if _, err := f.svc.Workspace("acme").Webhooks.Update(f.ctx, e.ID, &messaging.WebhookUpdateParams{URL: &url}); err != nil {
		t.Fatal(err)
	}
	sentAt := f.clock.Now()
	res, err := f.svc.Workspace("acme").Webhooks.Test(f.ctx, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(&messaging.WebhookTestResult{StatusCode: 202, Latency: 150 * time.Millisecond}, res); d != "" {
		t.Errorf("result (-want +got):\n%s", d)
	}
	if err := webhooksig.Verify(f.secret, got.Header, body, sentAt, 0); err != nil {
		t.Errorf("the test event does not verify: %v", err)
	}
	var ev struct {
		ID, Type string
		Data     struct {
			EndpointID string `json:"endpoint_id"`
		}
	}
	if err := json.Unmarshal(body, &ev); err != nil || ev.Type != messaging.EventWebhookTest || ev.Data.EndpointID != e.ID || ev.ID != got.Header.Get("webhook-id") {
		t.Errorf("test event %s (%v)", body, err)
	}
	ds, _, err := f.svc.Workspace("acme").Webhooks.Deliveries(f.ctx, e.ID, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	answered := f.clock.Now()
	want := []*messaging.WebhookDelivery{{EndpointID: e.ID, WorkspaceID: "acme", EventID: ev.ID, EventType: messaging.EventWebhookTest,
		State: record.DeliveryDelivered, Attempts: 1, DueAt: answered, LastStatus: 202, LastAttemptAt: &answered, DeliveredAt: &answered,
		CreatedAt: sentAt, Test: true}}
	if d := cmp.Diff(want, ds, cmpopts.IgnoreFields(messaging.WebhookDelivery{}, "ID", "Seq")); d != "" {
		t.Errorf("deliveries after a test (-want +got):\n%s", d)
	}
	if _, err := f.svc.Workspace("nope").Webhooks.Test(f.ctx, e.ID); messaging.ErrorCode(err) != messaging.CodeNotFound {
		t.Errorf("test in another workspace: %v, want not_found", err)
	}

	strict := setupHooks(t, false) // its endpoint is on loopback
	res, err = strict.svc.Workspace("acme").Webhooks.Test(strict.ctx, strict.endpoint(t).ID)
	if err != nil || res.StatusCode != 0 || !strings.Contains(res.Error, "loopback") || strict.rcv.count() != 0 {
		t.Errorf("test of a refused address: %+v, %v; want an answer with the guard's error and nothing sent", res, err)
	}
	ds, _, err = strict.svc.Workspace("acme").Webhooks.Deliveries(strict.ctx, strict.endpoint(t).ID, "", 0)
	if err != nil || len(ds) != 1 || !ds[0].Test || ds[0].State != record.DeliveryFailed || ds[0].LastError != res.Error || ds[0].DeliveredAt != nil {
		t.Errorf("deliveries after a refused test = %+v, %v; want one failed test with the guard's error", ds, err)
	}
}
