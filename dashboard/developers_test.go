package dashboard_test

import (
	"bytes"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ujumbe/messaging/record"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/webhooksig"
)

// setupDev is the fixture of setup with webhook deliveries allowed to
// reach loopback (the test receivers listen there).
func setupDev(t *testing.T) *fixture {
	t.Helper()
	return setupWith(t, fixtureOptions{loopback: true})
}

// setupDevLogged is setupDev with the service's and the dashboard's logs,
// at every level, written to logs.
func setupDevLogged(t *testing.T, logs io.Writer) *fixture {
	t.Helper()
	return setupWith(t, fixtureOptions{logs: logs, loopback: true})
}

// devLogs collects log lines written from several goroutines.
type devLogs struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *devLogs) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(b)
}

func (l *devLogs) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// devReceiver is a webhook receiver answering status and keeping what it
// got.
type devReceiver struct {
	mu      sync.Mutex
	status  int
	headers []http.Header
	bodies  [][]byte
	srv     *httptest.Server
}

func newDevReceiver(t *testing.T, status int) *devReceiver {
	t.Helper()
	rcv := &devReceiver{status: status}
	rcv.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rcv.mu.Lock()
		rcv.headers, rcv.bodies = append(rcv.headers, r.Header.Clone()), append(rcv.bodies, b)
		st := rcv.status
		rcv.mu.Unlock()
		w.WriteHeader(st)
	}))
	t.Cleanup(rcv.srv.Close)
	return rcv
}

func (rcv *devReceiver) count() int {
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	return len(rcv.bodies)
}

// shownSecret returns the secret the page shows once, failing unless it
// shows exactly one, and unless it appears exactly once in the page.
func shownSecret(t *testing.T, r response) string {
	t.Helper()
	m := regexp.MustCompile(`<code id="new-secret">([^<]+)</code>`).FindAllStringSubmatch(r.body, -1)
	if len(m) != 1 {
		t.Fatalf("page (status %d) shows %d secrets, want 1:\n%s", r.status, len(m), r.body)
	}
	secret := html.UnescapeString(m[0][1])
	if n := strings.Count(html.UnescapeString(r.body), secret); n != 1 {
		t.Errorf("the secret appears %d times in the page, want once", n)
	}
	r.wantContains(t, "will not be shown again", `data-copy="new-secret" hidden`)
	return secret
}

// wantNoSecret fails when the page holds secret, escaped or not.
func wantNoSecret(t *testing.T, what string, r response, secret string) {
	t.Helper()
	if r.status != http.StatusOK {
		t.Errorf("%s answered %d, want 200", what, r.status)
	}
	if strings.Contains(html.UnescapeString(r.body), secret) || strings.Contains(r.body, secret) {
		t.Errorf("%s shows the secret again", what)
	}
	if strings.Contains(r.body, `id="new-secret"`) {
		t.Errorf("%s has a secret box", what)
	}
}

// TestDevAPIKeyLifecycle: a key created through the form is shown once
// and works; the list shows it without the key; revoking it through the
// form makes the library refuse it at once.
func TestDevAPIKeyLifecycle(t *testing.T) {
	f := setup(t)
	f.as = "acme"
	if r := f.get("/w/acme/developers"); r.status != http.StatusOK {
		t.Fatalf("developers page answered %d:\n%s", r.status, r.body)
	} else {
		r.wantContains(t, "No API keys yet.", `value="read:messages"`, "send messages", `value="manage:webhooks"`, `placeholder="YYYY-MM-DD HH:MM"`)
	}
	r := f.post("/w/acme/developers/keys", url.Values{"name": {"billing service"}, "scopes": {record.ScopeWriteMessages, record.ScopeReadMessages}})
	if r.status != http.StatusCreated {
		t.Fatalf("create key answered %d, want 201:\n%s", r.status, r.body)
	}
	key := shownSecret(t, r)
	p, err := f.svc.Authenticate(f.ctx, key)
	if err != nil {
		t.Fatalf("the key shown does not authenticate: %v", err)
	}
	if diff := cmp.Diff([]string{record.ScopeReadMessages, record.ScopeWriteMessages}, p.Scopes); p.WorkspaceID != "acme" || diff != "" {
		t.Errorf("principal of the new key: workspace %q, scopes (-want +got):\n%s", p.WorkspaceID, diff)
	}
	events, _, err := f.svc.AuditEvents(f.ctx, "acme", "", 10)
	if err != nil || len(events) == 0 || events[0].Action != record.AuditKeyCreated || events[0].Actor != "dashboard:ann" || events[0].Target != p.KeyID {
		t.Errorf("latest audit event = %+v, %v; want the key created by dashboard:ann", events, err)
	}

	list := f.get("/w/acme/developers")
	wantNoSecret(t, "the developers page after creation", list, key)
	list.wantContains(t, "billing service", messaging.KeyLookupID(key), "<code>read:messages</code>", "<code>write:messages</code>",
		`badge st-active`, `data-confirm="Revoke the API key billing service?`)
	wantNoSecret(t, "the keys page after creation", f.get("/w/acme/developers/keys"), key)

	r = f.post("/w/acme/developers/keys/"+p.KeyID+"/revoke", nil)
	if r.status != http.StatusSeeOther || r.location != "/dashboard/w/acme/developers#keys" {
		t.Fatalf("revoke answered %d to %q, want 303 to the keys", r.status, r.location)
	}
	if _, err := f.svc.Authenticate(f.ctx, key); messaging.ErrorCode(err) != messaging.CodeInvalidAPIKey {
		t.Errorf("Authenticate after revoking through the form = %v, want invalid_api_key", err)
	}
	list = f.get("/w/acme/developers")
	list.wantContains(t, `badge st-revoked`)
	if strings.Contains(list.body, "/keys/"+p.KeyID+"/revoke") {
		t.Error("a revoked key is still offered to revoke")
	}
}

// TestDevAPIKeyExpiry: the expiry of the form is read as UTC; the list
// shows the key expired once the clock passes it, when the library
// refuses it.
func TestDevAPIKeyExpiry(t *testing.T) {
	f := setup(t)
	r := f.post("/w/acme/developers/keys", url.Values{"name": {"short"}, "scopes": {record.ScopeReadContacts}, "expires_at": {"2026-11-24T12:00"}})
	if r.status != http.StatusCreated {
		t.Fatalf("create key answered %d:\n%s", r.status, r.body)
	}
	key := shownSecret(t, r)
	keys, err := f.svc.Workspace("acme").APIKeys.List(f.ctx)
	if err != nil || len(keys) != 1 {
		t.Fatalf("keys = %v, %v", keys, err)
	}
	if want := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC); keys[0].ExpiresAt == nil || !keys[0].ExpiresAt.Equal(want) {
		t.Errorf("ExpiresAt = %v, want %v", keys[0].ExpiresAt, want)
	}
	f.clock.Advance(time.Minute)
	if _, err := f.svc.Authenticate(f.ctx, key); err != nil {
		t.Fatal(err)
	}
	if err := f.svc.Close(f.ctx); err != nil { // waits for the recording of the use
		t.Fatal(err)
	}
	f.get("/w/acme/developers").wantContains(t, "2026-11-24 12:00:00 UTC", `<td class="when">2026-11-24 10:31:00 UTC</td>`, `badge st-active`)
	f.clock.Advance(2 * time.Hour)
	f.get("/w/acme/developers").wantContains(t, `badge st-expired`)
	if _, err := f.svc.Authenticate(f.ctx, key); messaging.ErrorCode(err) != messaging.CodeInvalidAPIKey {
		t.Errorf("Authenticate after expiry = %v, want invalid_api_key", err)
	}
}

// TestDevAPIKeyValidation: the library's refusals are shown next to their
// field at 422, no key is made and no key is shown.
func TestDevAPIKeyValidation(t *testing.T) {
	f := setup(t)
	tests := []struct {
		name  string
		form  url.Values
		field string
		want  string
	}{
		{"no scope", url.Values{"name": {"k"}}, "scopes", "must hold at least one scope"},
		{"unknown scope", url.Values{"name": {"k"}, "scopes": {"read:messages", "admin:all"}}, "scopes", "unknown scope &#34;admin:all&#34;"},
		{"expiry in the past", url.Values{"name": {"k"}, "scopes": {"read:messages"}, "expires_at": {"2026-11-24T10:00"}}, "expires", "must be in the future"},
		{"expiry not a time", url.Values{"name": {"k"}, "scopes": {"read:messages"}, "expires_at": {"tomorrow"}}, "expires", "must be a date and time"},
		{"name with a control character", url.Values{"name": {"a\x01b"}, "scopes": {"read:messages"}}, "name", "must not hold control characters"},
		{"name too long", url.Values{"name": {strings.Repeat("n", 101)}, "scopes": {"read:messages"}}, "name", "name: "},
	}
	for _, tt := range tests {
		r := f.post("/w/acme/developers/keys", tt.form)
		if r.status != http.StatusUnprocessableEntity {
			t.Errorf("%s: answered %d, want 422", tt.name, r.status)
			continue
		}
		errRe := regexp.MustCompile(`<p class="error" id="key-` + tt.field + `-err">([^<]*)</p>`)
		m := errRe.FindStringSubmatch(r.body)
		if m == nil || !strings.Contains(m[1], tt.want) {
			t.Errorf("%s: error next to %s = %q, want it to hold %q", tt.name, tt.field, m, tt.want)
		}
		if !strings.Contains(r.body, `aria-describedby="key-`+tt.field) {
			t.Errorf("%s: the error is not linked to its field", tt.name)
		}
		if strings.Contains(r.body, `id="new-secret"`) {
			t.Errorf("%s: a key is shown", tt.name)
		}
	}
	if keys, err := f.svc.Workspace("acme").APIKeys.List(f.ctx); err != nil || len(keys) != 0 {
		t.Errorf("refused forms stored %d keys (%v)", len(keys), err)
	}
	// The form keeps what was typed.
	r := f.post("/w/acme/developers/keys", url.Values{"name": {"kept"}, "scopes": {"write:contacts"}, "expires_at": {"2020-01-01T00:00"}})
	r.wantContains(t, `value="kept"`, `value="write:contacts" checked`, `value="2020-01-01T00:00"`)
}

// devCreateEndpoint creates an endpoint through the form and returns its
// id and secret.
func devCreateEndpoint(t *testing.T, f *fixture, form url.Values) (id, secret string) {
	t.Helper()
	r := f.post("/w/acme/developers/webhooks", form)
	if r.status != http.StatusCreated {
		t.Fatalf("create endpoint answered %d, want 201:\n%s", r.status, r.body)
	}
	secret = shownSecret(t, r)
	eps, err := f.svc.Workspace("acme").Webhooks.List(f.ctx)
	if err != nil || len(eps) == 0 {
		t.Fatalf("endpoints = %v, %v", eps, err)
	}
	e := eps[len(eps)-1]
	for _, x := range eps {
		if x.CreatedAt.After(e.CreatedAt) || x.URL == form.Get("url") {
			e = x
		}
	}
	if ok, err := f.svc.WebhookEndpointHasSecret(e, secret); err != nil || !ok {
		t.Fatalf("the secret shown is not the endpoint's: %v, %v", ok, err)
	}
	return e.ID, secret
}

// TestDevEndpointSecrets: an endpoint's secret is shown once on creation
// and once on rotation, never on a later page; the rotation says how long
// the old secret keeps signing.
func TestDevEndpointSecrets(t *testing.T) {
	f := setupDev(t)
	rcv := newDevReceiver(t, http.StatusOK)
	id, secret := devCreateEndpoint(t, f, url.Values{"url": {rcv.srv.URL + "/hook"}, "events": {messaging.EventMessageStatusUpdated},
		"description": {"Order updates"}})
	e, err := f.svc.Workspace("acme").Webhooks.Get(f.ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{messaging.EventMessageStatusUpdated}, e.Events); diff != "" || e.Description != "Order updates" {
		t.Errorf("stored endpoint: description %q, events (-want +got):\n%s", e.Description, diff)
	}
	list := f.get("/w/acme/developers")
	wantNoSecret(t, "the developers page", list, secret)
	list.wantContains(t, rcv.srv.URL+"/hook", "Order updates", "badge st-enabled", "/developers/webhooks/"+id+`"`)
	page := f.get("/w/acme/developers/webhooks/" + id)
	wantNoSecret(t, "the endpoint's page", page, secret)
	page.wantContains(t, rcv.srv.URL+"/hook", "No deliveries yet", `value="message.status_updated" checked`)

	r := f.post("/w/acme/developers/webhooks/"+id+"/rotate-secret", nil)
	if r.status != http.StatusOK {
		t.Fatalf("rotate answered %d:\n%s", r.status, r.body)
	}
	rotated := shownSecret(t, r)
	if rotated == secret {
		t.Fatal("rotation showed the old secret")
	}
	r.wantContains(t, "The previous secret keeps signing deliveries, beside the new one, for 24 hours (until 2026-11-25 10:30:00 UTC)")
	e, _ = f.svc.Workspace("acme").Webhooks.Get(f.ctx, id)
	if ok, err := f.svc.WebhookEndpointHasSecret(e, rotated); err != nil || !ok {
		t.Errorf("the rotated secret shown is not the endpoint's: %v, %v", ok, err)
	}
	page = f.get("/w/acme/developers/webhooks/" + id)
	wantNoSecret(t, "the endpoint's page after rotation", page, rotated)
	wantNoSecret(t, "the endpoint's page after rotation", page, secret)
	page.wantContains(t, "signs beside the current one until 2026-11-25 10:30:00 UTC")
}

// TestDevEndpointTest: the test event's outcome is shown: the receiver's
// status code, or why there was no answer; each test is in the delivery
// log, marked test, delivered or failed.
func TestDevEndpointTest(t *testing.T) {
	f := setupDev(t)
	rcv := newDevReceiver(t, http.StatusNoContent)
	id, secret := devCreateEndpoint(t, f, url.Values{"url": {rcv.srv.URL + "/hook"}})
	r := f.post("/w/acme/developers/webhooks/"+id+"/test", nil)
	if r.status != http.StatusOK {
		t.Fatalf("test answered %d:\n%s", r.status, r.body)
	}
	r.wantContains(t, `class="notice test-result"`, "answered the test event with HTTP <strong>204</strong>",
		`<code>webhook.test</code> <span class="badge">test</span>`, `<span class="badge st-delivered">delivered</span>`)
	wantNoSecret(t, "the test's answer", r, secret)
	if rcv.count() != 1 {
		t.Fatalf("the receiver got %d requests, want 1", rcv.count())
	}
	var ev struct{ Type string }
	if err := json.Unmarshal(rcv.bodies[0], &ev); err != nil || ev.Type != messaging.EventWebhookTest {
		t.Errorf("test event type %q (%v), want webhook.test", ev.Type, err)
	}
	if err := webhooksig.Verify(secret, rcv.headers[0], rcv.bodies[0], f.clock.Now(), 0); err != nil {
		t.Errorf("the test event does not verify with the endpoint's secret: %v", err)
	}

	rcv.mu.Lock()
	rcv.status = http.StatusInternalServerError
	rcv.mu.Unlock()
	r = f.post("/w/acme/developers/webhooks/"+id+"/test", nil)
	r.wantContains(t, `class="problem test-result"`, "HTTP <strong>500</strong>", "A receiver should answer 2xx",
		`<span class="badge st-failed">failed</span>`)

	rcv.srv.Close()
	r = f.post("/w/acme/developers/webhooks/"+id+"/test", nil)
	r.wantContains(t, `class="problem test-result"`, "The test event got no answer: connection failed")
}

// devStatusEvents sends n messages and dispatches them: each makes one
// message.status_updated event.
func devStatusEvents(t *testing.T, f *fixture, n int) {
	t.Helper()
	ws := f.svc.Workspace("acme")
	for range n {
		if _, err := ws.Messages.Send(f.ctx, &messaging.SendParams{Channel: "whatsapp", To: "+254712345678", Type: "text", Text: "hi"}); err != nil {
			t.Fatal(err)
		}
	}
	f.clock.Advance(2 * time.Second)
	if _, err := f.svc.DispatchDue(f.ctx); err != nil {
		t.Fatal(err)
	}
}

// TestDevDeliveryLog: the log lists a delivery with its event type,
// status code, attempts and state; redeliver queues it again; disabled
// endpoints refuse it with the library's reason.
func TestDevDeliveryLog(t *testing.T) {
	f := setupDev(t)
	rcv := newDevReceiver(t, http.StatusOK)
	id, _ := devCreateEndpoint(t, f, url.Values{"url": {rcv.srv.URL + "/hook"}})
	devStatusEvents(t, f, 1)
	if n, err := f.svc.DeliverWebhooksDue(f.ctx); err != nil || n != 1 {
		t.Fatalf("DeliverWebhooksDue = %d, %v", n, err)
	}
	ds, _, err := f.svc.Workspace("acme").Webhooks.Deliveries(f.ctx, id, "", 10)
	if err != nil || len(ds) != 1 {
		t.Fatalf("deliveries = %v, %v", ds, err)
	}
	did := messaging.WebhookDeliveryID(ds[0])
	page := f.get("/w/acme/developers/webhooks/" + id)
	page.wantContains(t, "<code>message.status_updated</code>", did, `badge st-delivered`, "HTTP 200", "<td>1</td>",
		`/developers/webhooks/`+id+`/deliveries/`+did+`/redeliver"`)

	r := f.post("/w/acme/developers/webhooks/"+id+"/deliveries/"+did+"/redeliver", nil)
	if r.status != http.StatusSeeOther || r.location != "/dashboard/w/acme/developers/webhooks/"+id {
		t.Fatalf("redeliver answered %d to %q, want 303 to the endpoint", r.status, r.location)
	}
	ds, _, _ = f.svc.Workspace("acme").Webhooks.Deliveries(f.ctx, id, "", 10)
	if len(ds) != 1 || ds[0].State != record.DeliveryPending {
		t.Fatalf("after redeliver the delivery is %+v, want pending", ds)
	}
	f.get("/w/acme/developers/webhooks/"+id).wantContains(t, `badge st-pending`)
	if n, err := f.svc.DeliverWebhooksDue(f.ctx); err != nil || n != 1 || rcv.count() != 2 {
		t.Fatalf("after redeliver DeliverWebhooksDue = %d, %v; receiver got %d, want 2", n, err, rcv.count())
	}
	f.get("/w/acme/developers/webhooks/"+id).wantContains(t, `badge st-delivered`, "<td>2</td>")

	// Disable through the form: the redeliver is refused with the
	// library's reason, then enable again.
	r = f.post("/w/acme/developers/webhooks/"+id+"/enabled", url.Values{"enabled": {"false"}})
	if r.status != http.StatusSeeOther {
		t.Fatalf("disable answered %d:\n%s", r.status, r.body)
	}
	if e, _ := f.svc.Workspace("acme").Webhooks.Get(f.ctx, id); e.DisabledAt == nil || e.DisabledReason != record.DisabledByOperator {
		t.Fatalf("after disable the endpoint is %+v", e)
	}
	f.get("/w/acme/developers").wantContains(t, "badge st-disabled", "disabled by hand")
	r = f.post("/w/acme/developers/webhooks/"+id+"/deliveries/"+did+"/redeliver", nil)
	if r.status != http.StatusConflict {
		t.Errorf("redeliver at a disabled endpoint answered %d, want 409", r.status)
	}
	r.wantContains(t, "is disabled; enable it before redelivering", `name="enabled" value="true"`)
	if r := f.post("/w/acme/developers/webhooks/"+id+"/enabled", url.Values{"enabled": {"true"}}); r.status != http.StatusSeeOther {
		t.Fatalf("enable answered %d", r.status)
	}
	if e, _ := f.svc.Workspace("acme").Webhooks.Get(f.ctx, id); e.DisabledAt != nil {
		t.Errorf("after enable the endpoint is disabled: %+v", e)
	}
	if r := f.post("/w/acme/developers/webhooks/"+id+"/deliveries/whd_999/redeliver", nil); r.status != http.StatusNotFound {
		t.Errorf("redeliver of an unknown delivery answered %d, want 404", r.status)
	}
}

// TestDevDeliveryLogPaging: the log shows 25 deliveries a page, newest
// first, with a link to the older ones; a redeliver from a later page
// comes back to it.
func TestDevDeliveryLogPaging(t *testing.T) {
	f := setupDev(t)
	rcv := newDevReceiver(t, http.StatusOK)
	id, _ := devCreateEndpoint(t, f, url.Values{"url": {rcv.srv.URL + "/hook"}})
	devStatusEvents(t, f, 27)
	all, _, err := f.svc.Workspace("acme").Webhooks.Deliveries(f.ctx, id, "", 100)
	if err != nil || len(all) != 27 {
		t.Fatalf("deliveries = %d, %v", len(all), err)
	}
	first := f.get("/w/acme/developers/webhooks/" + id)
	if n := strings.Count(first.body, "/redeliver\""); n != 25 {
		t.Errorf("first page lists %d deliveries, want 25", n)
	}
	first.wantContains(t, messaging.WebhookDeliveryID(all[0])+"/redeliver", `data-refresh=`)
	m := regexp.MustCompile(`href="/dashboard/w/acme/developers/webhooks/` + id + `\?cursor=([0-9]+)">Older</a>`).FindStringSubmatch(first.body)
	if m == nil {
		t.Fatalf("first page has no link to older deliveries:\n%s", first.body)
	}
	second := f.get("/w/acme/developers/webhooks/" + id + "?cursor=" + m[1])
	if n := strings.Count(second.body, "/redeliver\""); n != 2 {
		t.Errorf("second page lists %d deliveries, want 2", n)
	}
	second.wantContains(t, messaging.WebhookDeliveryID(all[26])+"/redeliver", ">Newest</a>", `name="cursor" value="`+m[1]+`"`)
	if strings.Contains(second.body, "Older</a>") {
		t.Error("the last page links to older deliveries")
	}
	r := f.post("/w/acme/developers/webhooks/"+id+"/deliveries/"+messaging.WebhookDeliveryID(all[26])+"/redeliver", url.Values{"cursor": {m[1]}})
	if want := "/dashboard/w/acme/developers/webhooks/" + id + "?cursor=" + m[1]; r.status != http.StatusSeeOther || r.location != want {
		t.Errorf("redeliver from page 2 answered %d to %q, want 303 to %q", r.status, r.location, want)
	}
	if r := f.get("/w/acme/developers/webhooks/" + id + "?cursor=nope"); r.status != http.StatusBadRequest {
		t.Errorf("a bad cursor answered %d, want 400", r.status)
	}
}

// TestDevEndpointValidation: bad URLs (loopback where the deployment
// refuses it), unknown events and long descriptions are shown next to
// their field; nothing is stored.
func TestDevEndpointValidation(t *testing.T) {
	f := setup(t) // the fixture's service refuses loopback endpoints
	tests := []struct {
		name  string
		form  url.Values
		field string
		want  string
	}{
		{"loopback", url.Values{"url": {"http://127.0.0.1:9/hook"}}, "url", "loopback address"},
		{"localhost", url.Values{"url": {"http://localhost/hook"}}, "url", "loopback address"},
		{"private", url.Values{"url": {"http://10.0.0.1/hook"}}, "url", "private"},
		{"not http", url.Values{"url": {"ftp://example.com/hook"}}, "url", "url: "},
		{"no url", url.Values{}, "url", "url: "},
		{"unknown event", url.Values{"url": {"https://example.com/hook"}, "events": {"message.deleted"}}, "events", "unknown event type"},
		{"long description", url.Values{"url": {"https://example.com/hook"}, "description": {strings.Repeat("d", 501)}}, "desc", "description: "},
	}
	for _, tt := range tests {
		r := f.post("/w/acme/developers/webhooks", tt.form)
		if r.status != http.StatusUnprocessableEntity {
			t.Errorf("%s: answered %d, want 422", tt.name, r.status)
			continue
		}
		m := regexp.MustCompile(`<p class="error" id="hook-` + tt.field + `-err">([^<]*)</p>`).FindStringSubmatch(r.body)
		if m == nil || !strings.Contains(m[1], tt.want) {
			t.Errorf("%s: error next to %s = %q, want it to hold %q", tt.name, tt.field, m, tt.want)
		}
		// A dashboard user is told what to do, never a Go identifier.
		if m != nil && strings.Contains(m[1], "Options") {
			t.Errorf("%s: the error names a Go option: %q", tt.name, m[1])
		}
		if strings.Contains(r.body, `id="new-secret"`) {
			t.Errorf("%s: a secret is shown", tt.name)
		}
	}
	if eps, err := f.svc.Workspace("acme").Webhooks.List(f.ctx); err != nil || len(eps) != 0 {
		t.Errorf("refused forms stored %d endpoints (%v)", len(eps), err)
	}
}

// TestDevEditAndDeleteEndpoint: the settings form changes the endpoint
// and shows a refused URL next to its field, changing nothing; delete
// removes it.
func TestDevEditAndDeleteEndpoint(t *testing.T) {
	f := setupDev(t)
	e, _, err := f.svc.Workspace("acme").Webhooks.Create(f.ctx, &messaging.WebhookCreateParams{URL: "https://example.com/a"})
	if err != nil {
		t.Fatal(err)
	}
	base := "/w/acme/developers/webhooks/" + e.ID
	r := f.post(base+"/edit", url.Values{"url": {"http://10.1.2.3/b"}, "description": {"changed"}})
	if r.status != http.StatusUnprocessableEntity {
		t.Fatalf("edit with a private URL answered %d", r.status)
	}
	r.wantContains(t, `id="edit-url-err"`, "private", `value="http://10.1.2.3/b"`)
	if got, _ := f.svc.Workspace("acme").Webhooks.Get(f.ctx, e.ID); got.URL != "https://example.com/a" || got.Description != "" {
		t.Errorf("a refused edit changed the endpoint: %+v", got)
	}
	r = f.post(base+"/edit", url.Values{"url": {"https://example.com/b"}, "description": {"changed"}, "events": {messaging.EventWebhookTest}})
	if r.status != http.StatusSeeOther || r.location != "/dashboard"+base {
		t.Fatalf("edit answered %d to %q", r.status, r.location)
	}
	got, _ := f.svc.Workspace("acme").Webhooks.Get(f.ctx, e.ID)
	if diff := cmp.Diff([]string{messaging.EventWebhookTest}, got.Events); got.URL != "https://example.com/b" || got.Description != "changed" || diff != "" {
		t.Errorf("edited endpoint %+v, events (-want +got):\n%s", got, diff)
	}
	f.get(base).wantContains(t, `value="https://example.com/b"`, `data-confirm="Delete this endpoint`)

	r = f.post(base+"/delete", nil)
	if r.status != http.StatusSeeOther || r.location != "/dashboard/w/acme/developers#webhooks" {
		t.Fatalf("delete answered %d to %q", r.status, r.location)
	}
	if _, err := f.svc.Workspace("acme").Webhooks.Get(f.ctx, e.ID); messaging.ErrorCode(err) != messaging.CodeNotFound {
		t.Errorf("after delete Webhooks.Get = %v, want not found", err)
	}
	if r := f.get(base); r.status != http.StatusNotFound {
		t.Errorf("a deleted endpoint's page answered %d, want 404", r.status)
	}
}

// TestDevOtherWorkspace: the ids of another workspace's keys and
// endpoints are not found through this workspace's pages, and nothing of
// them changes.
func TestDevOtherWorkspace(t *testing.T) {
	f := setupDev(t)
	rcv := newDevReceiver(t, http.StatusOK)
	k, key, err := f.svc.Workspace("other").APIKeys.Create(f.ctx, &messaging.KeyCreateParams{Name: "theirs", Scopes: []string{record.ScopeReadMessages}})
	if err != nil {
		t.Fatal(err)
	}
	e, _, err := f.svc.Workspace("other").Webhooks.Create(f.ctx, &messaging.WebhookCreateParams{URL: rcv.srv.URL + "/theirs"})
	if err != nil {
		t.Fatal(err)
	}
	base := "/w/acme/developers/webhooks/" + e.ID
	for _, c := range []struct {
		what string
		r    func() response
	}{
		{"endpoint page", func() response { return f.get(base) }},
		{"revoke", func() response { return f.post("/w/acme/developers/keys/"+k.ID+"/revoke", nil) }},
		{"edit", func() response { return f.post(base+"/edit", url.Values{"url": {"https://example.com/x"}}) }},
		{"disable", func() response { return f.post(base+"/enabled", url.Values{"enabled": {"false"}}) }},
		{"rotate", func() response { return f.post(base+"/rotate-secret", nil) }},
		{"test", func() response { return f.post(base+"/test", nil) }},
		{"redeliver", func() response { return f.post(base+"/deliveries/whd_1/redeliver", nil) }},
		{"delete", func() response { return f.post(base+"/delete", nil) }},
	} {
		if r := c.r(); r.status != http.StatusNotFound {
			t.Errorf("%s of another workspace's record answered %d, want 404", c.what, r.status)
		}
	}
	if _, err := f.svc.Authenticate(f.ctx, key); err != nil {
		t.Errorf("another workspace's key stopped working: %v", err)
	}
	got, err := f.svc.Workspace("other").Webhooks.Get(f.ctx, e.ID)
	if err != nil || got.URL != e.URL || got.DisabledAt != nil || got.PreviousSecretExpiresAt != nil {
		t.Errorf("another workspace's endpoint changed: %+v, %v", got, err)
	}
	if rcv.count() != 0 {
		t.Errorf("another workspace's endpoint got %d test events", rcv.count())
	}
	if list := f.get("/w/acme/developers"); strings.Contains(list.body, "theirs") {
		t.Error("acme's developers page lists another workspace's key or endpoint")
	}
	f.as = "acme"
	if r := f.get("/w/other/developers"); r.status != http.StatusNotFound {
		t.Errorf("a viewer of acme opening other's developers page got %d, want 404", r.status)
	}
}

// TestDevSecretsNotLogged: neither the service nor the dashboard logs a
// key or a signing secret while they are created, used, rotated, tested
// and revoked, even when the receiver fails.
func TestDevSecretsNotLogged(t *testing.T) {
	logs := &devLogs{}
	f := setupDevLogged(t, logs)
	rcv := newDevReceiver(t, http.StatusInternalServerError)
	r := f.post("/w/acme/developers/keys", url.Values{"name": {"k"}, "scopes": {record.ScopeReadMessages}})
	key := shownSecret(t, r)
	p, err := f.svc.Authenticate(f.ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	f.post("/w/acme/developers/keys/"+p.KeyID+"/revoke", nil)
	id, secret := devCreateEndpoint(t, f, url.Values{"url": {rcv.srv.URL + "/hook"}})
	rotated := shownSecret(t, f.post("/w/acme/developers/webhooks/"+id+"/rotate-secret", nil))
	f.post("/w/acme/developers/webhooks/"+id+"/test", nil)
	devStatusEvents(t, f, 1)
	// Every attempt fails: after the schedule's last the delivery fails
	// for good, which is logged.
	for range 10 {
		if _, err := f.svc.DeliverWebhooksDue(f.ctx); err != nil {
			t.Fatal(err)
		}
		f.clock.Advance(11 * time.Hour)
	}
	if err := f.svc.Close(f.ctx); err != nil {
		t.Fatal(err)
	}
	got := logs.String()
	if got == "" {
		t.Fatal("nothing was logged: the test cannot tell")
	}
	for what, s := range map[string]string{"the API key": key, "the signing secret": secret, "the rotated secret": rotated} {
		raw := strings.TrimPrefix(strings.TrimPrefix(s, "whsec_"), "mk_")
		if strings.Contains(got, raw) {
			t.Errorf("the logs hold %s", what)
		}
	}
}

// TestDevCrossOriginRevokeRefused: a revoke posted from another site is
// refused and the key keeps working.
func TestDevCrossOriginRevokeRefused(t *testing.T) {
	f := setup(t)
	k, key, err := f.svc.Workspace("acme").APIKeys.Create(f.ctx, &messaging.KeyCreateParams{Name: "k", Scopes: []string{record.ScopeReadMessages}})
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, f.srv.URL+"/dashboard/w/acme/developers/keys/"+k.ID+"/revoke", nil)
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	req.Header.Set("Origin", "https://evil.example")
	if r := f.do(req); r.status != http.StatusForbidden {
		t.Errorf("cross-site revoke answered %d, want 403", r.status)
	}
	if _, err := f.svc.Authenticate(f.ctx, key); err != nil {
		t.Errorf("the cross-site revoke revoked the key: %v", err)
	}
}

// TestDevEveryEventDescribed: each event type an endpoint may subscribe to
// is offered with a sentence saying when it is sent.
func TestDevEveryEventDescribed(t *testing.T) {
	f := setupDev(t)
	body := f.get("/w/acme/developers").body
	for _, e := range messaging.WebhookEventTypes() {
		if !strings.Contains(body, "<code>"+e+"</code> <span class=\"muted\">— ") {
			t.Errorf("event %s is offered without a description", e)
		}
	}
}

// TestDevAPIKeyEdit: a key's page changes its scopes and expiry through
// APIKeys.Update (audited), which the next Authenticate obeys;
// refusals are shown next to their field at 422 and change nothing; a
// revoked key offers no form; another workspace's key is not found.
func TestDevAPIKeyEdit(t *testing.T) {
	f := setup(t)
	f.as = "acme"
	exp := t0.Add(time.Hour)
	k, key, err := f.svc.Workspace("acme").APIKeys.Create(f.ctx, &messaging.KeyCreateParams{Name: "billing", Scopes: []string{record.ScopeReadMessages}, ExpiresAt: &exp})
	if err != nil {
		t.Fatal(err)
	}
	page := "/w/acme/developers/keys/" + k.ID
	f.get("/w/acme/developers").wantContains(t, `href="/dashboard`+page+`"`)
	r := f.get(page)
	if r.status != http.StatusOK {
		t.Fatalf("key page answered %d:\n%s", r.status, r.body)
	}
	r.wantContains(t, k.Prefix, `value="read:messages" checked`, `value="`+exp.UTC().Format("2006-01-02 15:04:05")+`"`, `action="/dashboard`+page+`/edit"`)
	wantNoSecret(t, "the key page", r, key)

	// Refusals change nothing.
	for _, c := range []struct {
		name, field, want string
		form              url.Values
	}{
		{"no scope", "scopes", "must hold at least one scope", url.Values{}},
		{"unknown scope", "scopes", "unknown scope", url.Values{"scopes": {"admin:all"}}},
		{"expiry not a time", "expires", "must be a date and time", url.Values{"scopes": {"read:messages"}, "expires_at": {"soon"}}},
	} {
		r := f.post(page+"/edit", c.form)
		m := regexp.MustCompile(`<p class="error" id="edit-` + c.field + `-err">([^<]*)</p>`).FindStringSubmatch(r.body)
		if r.status != http.StatusUnprocessableEntity || m == nil || !strings.Contains(m[1], c.want) {
			t.Errorf("%s: answered %d, error %q; want 422 with %q next to %s", c.name, r.status, m, c.want, c.field)
		}
	}
	if got, err := f.svc.Workspace("acme").APIKeys.Get(f.ctx, k.ID); err != nil || !slices.Equal(got.Scopes, []string{record.ScopeReadMessages}) || got.ExpiresAt == nil {
		t.Errorf("after refused edits the key is %+v, %v; want it unchanged", got, err)
	}

	// New scopes and no expiry.
	r = f.post(page+"/edit", url.Values{"scopes": {record.ScopeWriteMessages, record.ScopeReadMessages}, "expires_at": {""}})
	if r.status != http.StatusSeeOther || r.location != "/dashboard/w/acme/developers#keys" {
		t.Fatalf("edit answered %d to %q, want 303 to the keys:\n%s", r.status, r.location, r.body)
	}
	p, err := f.svc.Authenticate(f.ctx, key)
	if err != nil || !slices.Equal(p.Scopes, []string{record.ScopeReadMessages, record.ScopeWriteMessages}) {
		t.Errorf("after the edit the key authenticates as %+v, %v; want both message scopes", p, err)
	}
	if got, _ := f.svc.Workspace("acme").APIKeys.Get(f.ctx, k.ID); got.ExpiresAt != nil {
		t.Errorf("after clearing the expiry it is %v", got.ExpiresAt)
	}
	events, _, err := f.svc.AuditEvents(f.ctx, "acme", "", 10)
	if err != nil || len(events) == 0 || events[0].Action != record.AuditKeyUpdated || events[0].Actor != "dashboard:ann" || events[0].Target != k.ID {
		t.Errorf("latest audit event = %+v, %v; want the key updated by dashboard:ann", events, err)
	}

	// An expiry already passed expires the key now.
	if r := f.post(page+"/edit", url.Values{"scopes": {"read:messages"}, "expires_at": {"2026-11-24T10:00:00"}}); r.status != http.StatusSeeOther {
		t.Fatalf("edit with a past expiry answered %d:\n%s", r.status, r.body)
	}
	if _, err := f.svc.Authenticate(f.ctx, key); messaging.ErrorCode(err) != messaging.CodeInvalidAPIKey {
		t.Errorf("Authenticate after a past expiry = %v, want invalid_api_key", err)
	}

	// A revoked key has no form; another workspace's key is not found.
	if _, err := f.svc.Workspace("acme").APIKeys.Revoke(f.ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	if r := f.get(page); r.status != http.StatusOK || strings.Contains(r.body, "/edit") {
		t.Errorf("revoked key page answered %d, with an edit form: %v", r.status, strings.Contains(r.body, "/edit"))
	}
	ok, _, err := f.svc.Workspace("other").APIKeys.Create(f.ctx, &messaging.KeyCreateParams{Scopes: []string{record.ScopeReadMessages}})
	if err != nil {
		t.Fatal(err)
	}
	if r := f.get("/w/acme/developers/keys/" + ok.ID); r.status != http.StatusNotFound {
		t.Errorf("another workspace's key through acme answered %d, want 404", r.status)
	}
	// Not found whether the edit would be stored or refused.
	for _, form := range []url.Values{
		{"scopes": {"write:messages"}},
		{},
		{"scopes": {"write:messages"}, "expires_at": {"soon"}},
	} {
		if r := f.post("/w/acme/developers/keys/"+ok.ID+"/edit", form); r.status != http.StatusNotFound {
			t.Errorf("editing another workspace's key with %v answered %d, want 404", form, r.status)
		}
	}
	if got, _ := f.svc.Workspace("other").APIKeys.Get(f.ctx, ok.ID); !slices.Equal(got.Scopes, []string{record.ScopeReadMessages}) {
		t.Errorf("the other workspace's key has scopes %v", got.Scopes)
	}
}
