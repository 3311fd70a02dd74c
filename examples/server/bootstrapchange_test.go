package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ujumbe/messaging/store/driver"

	"github.com/google/go-cmp/cmp"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/httpapi"
	"github.com/ujumbe/messaging/internal/testclock"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/store/sqlitestore"
)

const (
	liveKey  = "acme_live_0123456789abcdef0123456789abcdef"
	liveLine = `{"key": "acme_live_0123456789abcdef0123456789abcdef", "scopes": ["read:messages", "write:messages", "read:templates", "read:contacts", "write:contacts"]}`
)

// bootServer is one start of the example server on a SQLite file: a service,
// its REST handler, and the outcome of applying the bootstrap file.
type bootServer struct {
	svc *messaging.Service
	st  driver.Store
	h   http.Handler
}

// start opens the database db with a new service (as a restart does),
// applies body as the bootstrap file and returns the server and the
// outcome of the apply.
func start(t *testing.T, db string, clock *testclock.Clock, body string) (*bootServer, error) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlitestore.Open(ctx, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	svc, err := messaging.New(st, fakeprovider.New(), &messaging.Options{SecretKey: make([]byte, 32), Webhooks: messaging.WebhookOptions{AllowLoopback: true}, Clock: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	f, err := loadBootstrap(writeFile(t, body))
	if err != nil {
		t.Fatal(err)
	}
	err = applyBootstrap(ctx, svc, st, f, nil)
	return &bootServer{svc: svc, st: st, h: httpapi.New(svc, &httpapi.Options{Clock: clock.Now})}, err
}

// call serves one request with key and returns its status and error code.
func (s *bootServer) call(t *testing.T, method, path, key string, body any) (int, string) {
	t.Helper()
	var b []byte
	if body != nil {
		var err error
		if b, err = json.Marshal(body); err != nil {
			t.Fatal(err)
		}
	}
	r := httptest.NewRequest(method, path, bytes.NewReader(b))
	r.Header.Set("X-API-Key", key)
	if body != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	s.h.ServeHTTP(rec, r)
	var env struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(rec.Body.Bytes(), &env)
	return rec.Code, env.Error.Code
}

var textSend = map[string]any{"channel": "whatsapp", "to": "+254712345678", "type": "text", "text": "hi"}

// templateSend is the send_example of the bootstrap file's template.
func templateSend(t *testing.T, s *bootServer) *messaging.SendTemplateParams {
	t.Helper()
	tpl, err := s.st.TemplateGetByName(context.Background(), &driver.TemplateGetByNameParams{WorkspaceID: "acme", Name: "order_shipped", Language: "en"})
	if err != nil {
		t.Fatal(err)
	}
	return messaging.SendExample(tpl)
}

// TestBootstrapChangesApplyOnRestart: what the file says of a record that
// exists holds after the restart: narrowed scopes forbid the lost scope, a
// past expires_at and revoked: true refuse the key, a template status of
// disabled stops its sends, a new webhook secret replaces the old one.
func TestBootstrapChangesApplyOnRestart(t *testing.T) {
	db := filepath.Join(t.TempDir(), "messaging.db")
	clock := testclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	s, err := start(t, db, clock, goodBootstrap)
	if err != nil {
		t.Fatal(err)
	}
	if code, ec := s.call(t, "POST", "/v1/messages", liveKey, textSend); code != 201 {
		t.Fatalf("send before the change: %d %s", code, ec)
	}
	if code, ec := s.call(t, "POST", "/v1/messages/templates", liveKey, templateSend(t, s)); code != 201 {
		t.Fatalf("template send before the change: %d %s", code, ec)
	}

	// Narrowed scopes.
	narrowed := strings.Replace(goodBootstrap, liveLine, `{"key": "`+liveKey+`", "scopes": ["read:templates"]}`, 1)
	s, err = start(t, db, clock, narrowed)
	if err != nil {
		t.Fatalf("restart with narrowed scopes: %v", err)
	}
	if code, ec := s.call(t, "POST", "/v1/messages", liveKey, textSend); code != 403 || ec != "forbidden" {
		t.Errorf("send with a scope the file took away: %d %s, want 403 forbidden", code, ec)
	}
	if code, ec := s.call(t, "GET", "/v1/templates", liveKey, nil); code != 200 {
		t.Errorf("the scope the file kept: %d %s, want 200", code, ec)
	}

	// An expires_at in the past.
	expired := strings.Replace(goodBootstrap, liveLine, `{"key": "`+liveKey+`", "scopes": ["read:templates"], "expires_at": "2025-12-31T23:59:59Z"}`, 1)
	s, err = start(t, db, clock, expired)
	if err != nil {
		t.Fatalf("restart with a past expires_at: %v", err)
	}
	if code, ec := s.call(t, "GET", "/v1/templates", liveKey, nil); code != 401 || ec != "invalid_api_key" {
		t.Errorf("key past its new expires_at: %d %s, want 401 invalid_api_key", code, ec)
	}

	// Expiry removed again, then revoked.
	s, err = start(t, db, clock, narrowed)
	if err != nil {
		t.Fatal(err)
	}
	if code, ec := s.call(t, "GET", "/v1/templates", liveKey, nil); code != 200 {
		t.Errorf("key whose expires_at the file removed: %d %s, want 200", code, ec)
	}
	revoked := strings.Replace(goodBootstrap, liveLine, `{"key": "`+liveKey+`", "scopes": ["read:templates"], "revoked": true}`, 1)
	s, err = start(t, db, clock, revoked)
	if err != nil {
		t.Fatalf("restart with revoked: %v", err)
	}
	if code, ec := s.call(t, "GET", "/v1/templates", liveKey, nil); code != 401 || ec != "invalid_api_key" {
		t.Errorf("revoked key: %d %s, want 401 invalid_api_key", code, ec)
	}

	// Template disabled (and a fresh key to send with).
	const other = "acme_other_0123456789abcdef0123456789abcdef"
	disabled := strings.Replace(revoked, `"status": "approved"`, `"status": "disabled"`, 1)
	disabled = strings.Replace(disabled, `"api_keys": [`, `"api_keys": [{"key": "`+other+`", "scopes": ["read:messages", "write:messages", "read:templates"]}, `, 1)
	s, err = start(t, db, clock, disabled)
	if err != nil {
		t.Fatalf("restart with the template disabled: %v", err)
	}
	if code, ec := s.call(t, "POST", "/v1/messages/templates", other, templateSend(t, s)); code != 404 || ec != "template_not_found" {
		t.Errorf("send of the template the file disabled: %d %s, want 404 template_not_found", code, ec)
	}

	// A new webhook secret replaces the old one.
	newSecret := "whsec_bmV3LXNlY3JldC1uZXctc2VjcmV0LW5ldy1zZWNyZXQ="
	rotated := strings.Replace(disabled, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", newSecret, 1)
	s, err = start(t, db, clock, rotated)
	if err != nil {
		t.Fatalf("restart with a new webhook secret: %v", err)
	}
	hooks, err := s.svc.Workspace("acme").Webhooks.List(context.Background())
	if err != nil || len(hooks) != 1 {
		t.Fatalf("endpoints %v, %v", hooks, err)
	}
	if ok, err := s.svc.WebhookEndpointHasSecret(hooks[0], newSecret); !ok || err != nil {
		t.Errorf("the endpoint does not have the file's new secret (%v)", err)
	}
}

// TestBootstrapRefusesForbiddenChangeWhole: a file asking for a change the
// library's rules refuse (a disabled template approved again, a revoked key
// working again, an edited template) is refused whole, naming the JSON
// path, and nothing of it is written, not even its allowed changes.
func TestBootstrapRefusesForbiddenChangeWhole(t *testing.T) {
	disabledFile := strings.Replace(goodBootstrap, `"status": "approved"`, `"status": "disabled"`, 1)
	narrow := func(body string) string {
		return strings.Replace(body, liveLine, `{"key": "`+liveKey+`", "scopes": ["read:templates"]}`, 1)
	}
	for _, tc := range []struct {
		name, first, second, wantErr string
	}{
		{"disabled template approved again", disabledFile, narrow(goodBootstrap),
			"workspaces[0].templates[0].status: the template \"order_shipped\" (en) is disabled, and the review rules do not allow moving it from disabled to approved"},
		{"approved template back to pending", goodBootstrap, narrow(strings.Replace(goodBootstrap, `"status": "approved"`, `"status": "pending"`, 1)),
			"workspaces[0].templates[0].status: the template \"order_shipped\" (en) is approved, and the review rules do not allow moving it from approved to pending"},
		{"revoked key working again", goodBootstrap, narrow(strings.Replace(goodBootstrap, `"scopes": ["read:contacts"], "revoked": true`, `"scopes": ["read:contacts"]`, 1)),
			"workspaces[0].api_keys[1].revoked: the key was revoked and revocation is final"},
		{"template edited", goodBootstrap, narrow(strings.Replace(goodBootstrap, "has shipped.", "is on its way.", 1)),
			"workspaces[0].templates[0].components: differ from those of the submitted template"},
		{"template category changed", goodBootstrap, narrow(strings.Replace(goodBootstrap, `"UTILITY"`, `"MARKETING"`, 1)),
			"workspaces[0].templates[0].category: differs from the submitted template"},
		{"workspace renamed", goodBootstrap, narrow(strings.Replace(goodBootstrap, `"Acme Ltd"`, `"Acme Limited"`, 1)),
			"workspaces[0].name: differs from the name \"Acme Ltd\" of the existing workspace"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "messaging.db")
			clock := testclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			s, err := start(t, db, clock, tc.first)
			if err != nil {
				t.Fatal(err)
			}
			before := snap(t, s.svc, s.st)
			s, err = start(t, db, clock, tc.second)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
			if after := snap(t, s.svc, s.st); !equalSnap(before, after) {
				t.Errorf("a refused file changed the store:\nbefore %+v\nafter  %+v", before, after)
			}
			if code, ec := s.call(t, "POST", "/v1/messages", liveKey, textSend); code != 201 {
				t.Errorf("the allowed change of a refused file (narrowed scopes) was applied: send %d %s", code, ec)
			}
		})
	}
}

func equalSnap(a, b snapshot) bool {
	j1, _ := json.Marshal(a)
	j2, _ := json.Marshal(b)
	return bytes.Equal(j1, j2)
}

// TestBootstrapOutsideWindow: outside_window in the file sets the
// workspace's policy at creation and on a later start, a file without it
// leaves the policy alone, and an unknown policy refuses the file.
func TestBootstrapOutsideWindow(t *testing.T) {
	db := filepath.Join(t.TempDir(), "db.sqlite")
	clock := testclock.New(time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC))
	policy := func(s *bootServer) string {
		t.Helper()
		w, err := s.svc.GetWorkspace(context.Background(), "acme")
		if err != nil {
			t.Fatal(err)
		}
		return w.OutsideWindow
	}
	file := func(extra string) string {
		return `{"workspaces": [{"id": "acme", "name": "Acme", "channels": ["whatsapp"]` + extra + `, "api_keys": [` + liveLine + `]}]}`
	}
	for _, c := range []struct {
		extra, want string
	}{
		{`, "outside_window": "reject"`, "reject"},
		{``, "reject"},
		{`, "outside_window": "provider"`, ""},
	} {
		s, err := start(t, db, clock, file(c.extra))
		if err != nil {
			t.Fatalf("%s: %v", c.extra, err)
		}
		if got := policy(s); got != c.want {
			t.Errorf("file with %q: policy %q, want %q", c.extra, got, c.want)
		}
		if c.want == "reject" {
			if status, code := s.call(t, "POST", "/v1/messages", liveKey, map[string]any{"channel": "whatsapp", "to": "+254712345678", "type": "text", "text": "hi"}); status != 422 || code != "outside_customer_service_window" {
				t.Errorf("send under reject: %d %s", status, code)
			}
		}
	}
	if _, err := start(t, db, clock, file(`, "outside_window": "sometimes"`)); err == nil || !strings.Contains(err.Error(), "outside_window") {
		t.Errorf("unknown policy: err = %v; want one naming outside_window", err)
	}
}

// TestBootstrapUnconfirmedSends: unconfirmed_sends in the file sets the
// workspace's policy at creation and on a later start, a file without it
// leaves the policy alone, and an unknown policy refuses the file naming
// its JSON path.
func TestBootstrapUnconfirmedSends(t *testing.T) {
	db := filepath.Join(t.TempDir(), "db.sqlite")
	clock := testclock.New(time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC))
	policy := func(s *bootServer) string {
		t.Helper()
		w, err := s.svc.GetWorkspace(context.Background(), "acme")
		if err != nil {
			t.Fatal(err)
		}
		return w.UnconfirmedSends
	}
	file := func(extra string) string {
		return `{"workspaces": [{"id": "acme", "name": "Acme", "channels": ["whatsapp"]` + extra + `, "api_keys": [` + liveLine + `]}]}`
	}
	for _, c := range []struct {
		extra, want string
	}{
		{`, "unconfirmed_sends": "fail"`, "fail"},
		{``, "fail"},
		{`, "outside_window": "reject"`, "fail"},
		{`, "unconfirmed_sends": "resend"`, ""},
	} {
		s, err := start(t, db, clock, file(c.extra))
		if err != nil {
			t.Fatalf("%s: %v", c.extra, err)
		}
		if got := policy(s); got != c.want {
			t.Errorf("file with %q: policy %q, want %q", c.extra, got, c.want)
		}
	}
	if _, err := start(t, db, clock, file(`, "unconfirmed_sends": "twice"`)); err == nil || !strings.Contains(err.Error(), "workspaces[0]") ||
		!strings.Contains(err.Error(), "unconfirmed_sends") {
		t.Errorf("unknown policy: err = %v; want one naming workspaces[0] and unconfirmed_sends", err)
	}
}

// TestBootstrapKeywords: opt_out_keywords and opt_in_keywords in the file
// replace the workspace's lists (stored folded), a file without them
// leaves the lists alone, an empty list restores the defaults, and a bad
// list refuses the file naming the keyword's JSON path.
func TestBootstrapKeywords(t *testing.T) {
	db := filepath.Join(t.TempDir(), "db.sqlite")
	clock := testclock.New(time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC))
	lists := func(s *bootServer) [2][]string {
		t.Helper()
		w, err := s.svc.GetWorkspace(context.Background(), "acme")
		if err != nil {
			t.Fatal(err)
		}
		return [2][]string{w.OptOutKeywords, w.OptInKeywords}
	}
	file := func(extra string) string {
		return `{"workspaces": [{"id": "acme", "name": "Acme", "channels": ["whatsapp"]` + extra + `, "api_keys": [` + liveLine + `]}]}`
	}
	for _, c := range []struct {
		extra string
		want  [2][]string
	}{
		{`, "opt_out_keywords": ["Halt", "basta ya"], "opt_in_keywords": ["resume"]`, [2][]string{{"HALT", "BASTAYA"}, {"RESUME"}}},
		{``, [2][]string{{"HALT", "BASTAYA"}, {"RESUME"}}},
		{`, "opt_in_keywords": []`, [2][]string{{"HALT", "BASTAYA"}, nil}},
	} {
		s, err := start(t, db, clock, file(c.extra))
		if err != nil {
			t.Fatalf("%s: %v", c.extra, err)
		}
		if d := cmp.Diff(c.want, lists(s)); d != "" {
			t.Errorf("file with %q (-want +got):\n%s", c.extra, d)
		}
	}
	for _, c := range []struct{ extra, path string }{
		{`, "opt_out_keywords": ["A", "a"]`, "workspaces[0].opt_out_keywords[1]"},
		{`, "opt_in_keywords": ["halt"]`, "workspaces[0].opt_in_keywords[0]"},
	} {
		if _, err := start(t, db, clock, file(c.extra)); err == nil || !strings.Contains(err.Error(), c.path+":") {
			t.Errorf("file with %s: err = %v; want one naming %s", c.extra, err, c.path)
		}
	}
}
