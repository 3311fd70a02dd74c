package dashboard_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ujumbe/messaging/record"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/dashboard"
	"github.com/ujumbe/messaging/internal/testclock"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/sms"
	"github.com/ujumbe/messaging/store/memstore"
)

// t0 is the fixture's start time.
var t0 = time.Date(2026, 11, 24, 10, 30, 0, 0, time.UTC)

// fixture is a dashboard over a Service on memstore with a fake clock,
// the workspaces "acme" (every channel) and "other", and a test login:
// the viewer is the one registered under the X-Viewer header's value.
type fixture struct {
	t       *testing.T
	ctx     context.Context
	svc     *messaging.Service
	clock   *testclock.Clock
	prov    *fakeprovider.Provider
	srv     *httptest.Server
	viewers map[string]*dashboard.Viewer
	// as is the X-Viewer sent by get and post.
	as string
}

func setup(t *testing.T) *fixture {
	t.Helper()
	return setupWith(t, fixtureOptions{})
}

// fixtureOptions vary the fixture.
type fixtureOptions struct {
	// logs, when set, receives the service's and the dashboard's logs at
	// every level.
	logs io.Writer
	// sms, when set, mounts the SMS pages over an sms.SMS built by it on
	// the fixture's store.
	sms func(f *fixture, store *memstore.Store) *sms.SMS
	// smsAccounts are the SMS accounts of the viewer "acme".
	smsAccounts []string
	// loopback lets webhook deliveries reach loopback addresses (the test
	// receivers listen there).
	loopback bool
	// viewer, when set, is the viewer of every request, with or without
	// X-Viewer (a browser sends none).
	viewer string
	// fallback, when set, is the service's SMS fallback, built by it on
	// the fixture's store.
	fallback func(f *fixture, store *memstore.Store) messaging.SMSFallback
}

// setupWith is setup with o. The dispatcher is not paced.
func setupWith(t *testing.T, o fixtureOptions) *fixture {
	t.Helper()
	f := &fixture{t: t, ctx: context.Background(), clock: testclock.New(t0), prov: fakeprovider.New(),
		viewers: map[string]*dashboard.Viewer{
			"op":   {Name: "op", Operator: true},
			"acme": {Name: "ann", Workspaces: []string{"acme"}, SMSAccounts: o.smsAccounts},
		}, as: "op"}
	logs := o.logs
	if logs == nil {
		logs = io.Discard
	}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	store := memstore.New()
	t.Cleanup(func() { _ = store.Close() })
	var fallback messaging.SMSFallback
	if o.fallback != nil {
		fallback = o.fallback(f, store)
	}
	svc, err := messaging.New(store, f.prov, &messaging.Options{Clock: f.clock.Now, SecretKey: make([]byte, 32),
		Dispatch: messaging.DispatchOptions{PerSenderRate: -1}, Webhooks: messaging.WebhookOptions{AllowLoopback: o.loopback}, Logger: logger,
		SMSFallback: fallback, SMSFallbackSweep: -1})
	if err != nil {
		t.Fatal(err)
	}
	f.svc = svc
	for _, ws := range []*messaging.CreateWorkspaceParams{
		{ID: "acme", Name: "Acme Ltd", Channels: svc.Channels()},
		{ID: "other", Name: "Other Ltd", Channels: []string{messaging.ChannelWhatsApp}},
	} {
		if _, err := svc.CreateWorkspace(f.ctx, ws); err != nil {
			t.Fatal(err)
		}
	}
	opts := &dashboard.Options{
		Authenticate: func(r *http.Request) (*dashboard.Viewer, error) {
			if o.viewer != "" {
				return f.viewers[o.viewer], nil
			}
			return f.viewers[r.Header.Get("X-Viewer")], nil
		},
		Logger: logger,
	}
	if o.sms != nil {
		opts.SMS = o.sms(f, store)
	}
	dash, err := dashboard.New(svc, opts)
	if err != nil {
		t.Fatal(err)
	}
	f.srv = httptest.NewServer(dash)
	t.Cleanup(f.srv.Close)
	return f
}

// response is a page as fetched.
type response struct {
	status   int
	body     string
	location string
}

func (f *fixture) do(req *http.Request) response {
	f.t.Helper()
	req.Header.Set("X-Viewer", f.as)
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		f.t.Fatal(err)
	}
	return response{status: res.StatusCode, body: string(b), location: res.Header.Get("Location")}
}

// get fetches path (under the dashboard's prefix) as f.as.
func (f *fixture) get(path string) response {
	f.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, f.srv.URL+"/dashboard/"+strings.TrimPrefix(path, "/"), nil)
	return f.do(req)
}

// post sends a form to path as f.as, from the dashboard's own origin.
func (f *fixture) post(path string, form url.Values) response {
	f.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, f.srv.URL+"/dashboard/"+strings.TrimPrefix(path, "/"), strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", f.srv.URL)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	return f.do(req)
}

// wantContains fails unless every part is in the body.
func (r response) wantContains(t *testing.T, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(r.body, p) {
			t.Errorf("page (status %d) lacks %q", r.status, p)
		}
	}
}

func TestSignedOutIsRefused(t *testing.T) {
	f := setup(t)
	f.as = "nobody"
	if r := f.get("/w/acme/overview"); r.status != http.StatusUnauthorized {
		t.Errorf("overview without a viewer answered %d; want 401", r.status)
	}
}

// TestWorkspaceVisibility: a viewer sees only their workspaces, in the
// switcher and by path; another workspace is a 404 that does not say it
// exists.
func TestWorkspaceVisibility(t *testing.T) {
	f := setup(t)
	f.as = "acme"
	r := f.get("/workspaces")
	r.wantContains(t, "Acme Ltd")
	if strings.Contains(r.body, "Other Ltd") {
		t.Error("a viewer of acme sees the workspace other in the list")
	}
	if strings.Contains(r.body, "Create a workspace") {
		t.Error("a viewer who is not an operator is offered to create a workspace")
	}
	if r := f.get("/w/other/overview"); r.status != http.StatusNotFound {
		t.Errorf("another workspace's overview answered %d; want 404", r.status)
	}
	if r := f.get("/"); r.status != http.StatusSeeOther || r.location != "/dashboard/w/acme/" {
		t.Errorf("home answered %d to %q; want 303 to the only workspace", r.status, r.location)
	}
	if r := f.get("/workspaces?open=other"); r.status == http.StatusSeeOther {
		t.Error("the switcher opened a workspace the viewer may not see")
	}
	if r := f.post("/workspaces", url.Values{"name": {"Mine"}}); r.status != http.StatusForbidden {
		t.Errorf("a non-operator creating a workspace got %d; want 403", r.status)
	}
}

// TestCreateWorkspace: the operator creates a workspace; a bad id is shown
// next to its field with the library's message, and nothing is created.
func TestCreateWorkspace(t *testing.T) {
	f := setup(t)
	r := f.post("/workspaces", url.Values{"name": {"New Co"}, "id": {"bad id!"}})
	if r.status != http.StatusUnprocessableEntity {
		t.Fatalf("bad id answered %d; want 422", r.status)
	}
	r.wantContains(t, `class="error"`, "id: ")
	if _, err := f.svc.GetWorkspace(f.ctx, "bad id!"); messaging.ErrorCode(err) != messaging.CodeNotFound {
		t.Errorf("the refused workspace exists: %v", err)
	}
	r = f.post("/workspaces", url.Values{"name": {"New Co"}, "id": {"newco"}})
	if r.status != http.StatusSeeOther || r.location != "/dashboard/w/newco/" {
		t.Fatalf("create answered %d to %q; want 303 to the new workspace", r.status, r.location)
	}
	if info, err := f.svc.GetWorkspace(f.ctx, "newco"); err != nil || info.Name != "New Co" {
		t.Errorf("created workspace = %+v, %v", info, err)
	}
	events, _, err := f.svc.AuditEvents(f.ctx, "newco", "", 10)
	if err != nil || len(events) != 1 || events[0].Action != record.AuditWorkspaceCreated || events[0].Actor != "dashboard:op" {
		t.Errorf("audit events = %+v, %v; want one workspace.created by dashboard:op", events, err)
	}
}

// TestCrossOriginFormRefused: a form posted from another site is refused
// before it changes anything.
func TestCrossOriginFormRefused(t *testing.T) {
	f := setup(t)
	req, _ := http.NewRequest(http.MethodPost, f.srv.URL+"/dashboard/workspaces", strings.NewReader("name=Evil&id=evil"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	req.Header.Set("Origin", "https://evil.example")
	if r := f.do(req); r.status != http.StatusForbidden {
		t.Errorf("cross-site form answered %d; want 403", r.status)
	}
	if _, err := f.svc.GetWorkspace(f.ctx, "evil"); messaging.ErrorCode(err) != messaging.CodeNotFound {
		t.Errorf("the cross-site form created a workspace: %v", err)
	}
}

// TestOverview: the chart counts the last 24 hours' messages by status,
// and a channel in error is listed.
func TestOverview(t *testing.T) {
	f := setup(t)
	ws := f.svc.Workspace("acme")
	for range 3 {
		if _, err := ws.Messages.Send(f.ctx, &messaging.SendParams{Channel: "whatsapp", To: "+254712345678", Type: "text", Text: "hi"}); err != nil {
			t.Fatal(err)
		}
	}
	f.clock.Advance(2 * time.Second)
	f.get("/w/acme/overview").wantContains(t, `id="queue-depth">3<`, "3 due now, the oldest waiting 2s")
	if _, err := f.svc.DispatchDue(f.ctx); err != nil {
		t.Fatal(err)
	}
	r := f.get("/w/acme/overview")
	if r.status != http.StatusOK {
		t.Fatalf("overview answered %d:\n%s", r.status, r.body)
	}
	r.wantContains(t, `id="queue-depth">0<`, `<span class="n">3</span> sent`, `<span class="n">0</span> queued`, "10:00–11:00 UTC: 3 sent", "<svg")
}

// TestFavicon: every page names the dashboard's icon, which is served, so
// a browser never asks for a /favicon.ico the server does not have.
func TestFavicon(t *testing.T) {
	f := setup(t)
	r := f.get("/w/acme/overview")
	m := regexp.MustCompile(`<link rel="icon" type="image/svg\+xml" href="/dashboard/([^"]+)">`).FindStringSubmatch(r.body)
	if m == nil {
		t.Fatalf("the overview names no icon:\n%s", r.body)
	}
	res, err := http.Get(f.srv.URL + "/dashboard/" + m[1])
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "image/svg+xml") || !strings.Contains(string(body), "<svg") {
		t.Errorf("the icon %s: %d %q", m[1], res.StatusCode, res.Header.Get("Content-Type"))
	}
}
