package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ujumbe/messaging/store/driver"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/store/memstore"
)

const goodBootstrap = `{
  "workspaces": [{
    "id": "acme", "name": "Acme Ltd",
    "channels": ["whatsapp", "instagram", "messenger"],
    "api_keys": [
      {"key": "acme_live_0123456789abcdef0123456789abcdef", "scopes": ["read:messages", "write:messages", "read:templates", "read:contacts", "write:contacts"]},
      {"key": "acme_old_0123456789abcdef0123456789abcdef", "scopes": ["read:contacts"], "revoked": true},
      {"key": "acme_exp_0123456789abcdef0123456789abcdef", "scopes": ["read:contacts"], "expires_at": "2020-01-01T00:00:00Z"}
    ],
    "templates": [{
      "name": "order_shipped", "category": "UTILITY", "language": "en", "status": "approved",
      "components": [
        {"type": "HEADER", "format": "TEXT", "text": "Order update"},
        {"type": "BODY", "text": "Hi {{1}}, your order {{2}} has shipped."},
        {"type": "FOOTER", "text": "Reply STOP to opt out"},
        {"type": "BUTTONS", "buttons": [{"type": "URL", "text": "Track", "url": "https://example.com/track/{{1}}"}]}
      ]
    }],
    "webhooks": [{"url": "http://127.0.0.1:9999/hook", "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}]
  }],
  "sms_accounts": [{"partnerID": "1234", "apikey": "sms_0123456789abcdef0123456789abcdef", "shortcodes": ["ACME"], "credit": 100, "timezone": "Africa/Nairobi"}]
}`

func writeFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "bootstrap.json")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func newService(t *testing.T) (*messaging.Service, *memstore.Store) {
	t.Helper()
	st := memstore.New()
	svc, err := messaging.New(st, fakeprovider.New(), &messaging.Options{SecretKey: make([]byte, 32), Webhooks: messaging.WebhookOptions{AllowLoopback: true}, Clock: func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	return svc, st
}

// snapshot captures what the bootstrap stores, for comparing two runs.
type snapshot struct {
	Channels  []string
	Keys      []string
	Templates []string
	Webhooks  []string
}

func snap(t *testing.T, svc *messaging.Service, st driver.Store) snapshot {
	t.Helper()
	ctx := context.Background()
	ws, err := svc.GetWorkspace(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	keys, _ := svc.Workspace("acme").APIKeys.List(ctx)
	var s snapshot
	s.Channels = ws.Channels
	for _, k := range keys {
		s.Keys = append(s.Keys, k.ID+" "+k.Prefix+" revoked="+boolStr(k.RevokedAt != nil))
	}
	hooks, _ := svc.Workspace("acme").Webhooks.List(ctx)
	for _, h := range hooks {
		s.Webhooks = append(s.Webhooks, h.ID+" "+h.URL)
	}
	tpls, _ := st.TemplateList(ctx, &driver.TemplateListParams{WorkspaceID: "acme"})
	for _, tp := range tpls {
		s.Templates = append(s.Templates, tp.ID+" "+tp.Name+" "+tp.Status)
	}
	return s
}

func boolStr(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func TestBootstrapAppliesIdempotently(t *testing.T) {
	ctx := context.Background()
	svc, st := newService(t)
	f, err := loadBootstrap(writeFile(t, goodBootstrap))
	if err != nil {
		t.Fatal(err)
	}
	if err := applyBootstrap(ctx, svc, st, f, nil); err != nil {
		t.Fatalf("first apply: %v", err)
	}
	first := snap(t, svc, st)
	if err := applyBootstrap(ctx, svc, st, f, nil); err != nil {
		t.Fatalf("second apply: %v", err)
	}
	if d := cmp.Diff(first, snap(t, svc, st)); d != "" {
		t.Errorf("second apply changed the store (-first +second):\n%s", d)
	}
	// The key whose expires_at has passed is not created: it could never
	// authenticate, and CreateAPIKey refuses a past expiry.
	if len(first.Keys) != 2 || len(first.Templates) != 1 || len(first.Channels) != 3 || len(first.Webhooks) != 1 {
		t.Fatalf("applied %+v; want 2 keys, 1 template, 3 channels, 1 webhook", first)
	}

	for _, tc := range []struct {
		key  string
		want messaging.Code
	}{
		{"acme_live_0123456789abcdef0123456789abcdef", ""},
		{"acme_old_0123456789abcdef0123456789abcdef", messaging.CodeInvalidAPIKey},
		{"acme_exp_0123456789abcdef0123456789abcdef", messaging.CodeInvalidAPIKey},
	} {
		p, err := svc.Authenticate(ctx, tc.key)
		if tc.want == "" {
			if err != nil || p.WorkspaceID != "acme" || len(p.Scopes) != 5 {
				t.Errorf("Authenticate(%s) = %+v, %v; want acme with 5 scopes", tc.key[:12], p, err)
			}
		} else if messaging.ErrorCode(err) != tc.want {
			t.Errorf("Authenticate(%s) error %v, want %s", tc.key[:12], err, tc.want)
		}
	}
}

func TestBootstrapRefusesBadFileAndAppliesNothing(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name, body, wantErr string
	}{
		{"short key", strings.Replace(goodBootstrap, "acme_exp_0123456789abcdef0123456789abcdef", "short", 1),
			"workspaces[0].api_keys[2].key: must be 20 to 128 visible ASCII characters"},
		{"unknown scope", strings.Replace(goodBootstrap, `["read:contacts"], "revoked"`, `["read:everything"], "revoked"`, 1),
			"workspaces[0].api_keys[1].scopes: unknown scope"},
		{"bad template name", strings.Replace(goodBootstrap, `"order_shipped"`, `"Order-Shipped"`, 1),
			"workspaces[0].templates[0].name: must hold only lowercase"},
		{"variable gap", strings.Replace(goodBootstrap, "Hi {{1}}, your", "Hi {{1}} {{4}}, your", 1),
			"workspaces[0].templates[0].components[1].text: variables must be numbered"},
		{"bad channel", strings.Replace(goodBootstrap, `"messenger"]`, `"telegram"]`, 1),
			"workspaces[0].channels[2]: must be whatsapp, instagram or messenger"},
		{"bad status", strings.Replace(goodBootstrap, `"status": "approved"`, `"status": "live"`, 1),
			"workspaces[0].templates[0].status: must be one of"},
		{"bad webhook secret", strings.Replace(goodBootstrap, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "hunter2", 1),
			"workspaces[0].webhooks[0].secret: must be whsec_"},
		{"bad webhook url", strings.Replace(goodBootstrap, "http://127.0.0.1:9999/hook", "127.0.0.1:9999", 1),
			"workspaces[0].webhooks[0].url: must be an absolute http or https URL"},
		{"unknown field", strings.Replace(goodBootstrap, `"name": "Acme Ltd"`, `"nmae": "Acme Ltd"`, 1),
			`unknown field "nmae"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc, st := newService(t)
			f, err := loadBootstrap(writeFile(t, tc.body))
			if err == nil {
				err = applyBootstrap(ctx, svc, st, f, nil)
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
			if _, err := svc.GetWorkspace(ctx, "acme"); messaging.ErrorCode(err) != messaging.CodeNotFound {
				t.Errorf("a refused bootstrap created the workspace (err %v)", err)
			}
		})
	}
}

func TestBootstrapRefusesKeyOfAnotherWorkspace(t *testing.T) {
	ctx := context.Background()
	svc, st := newService(t)
	if _, err := svc.CreateWorkspace(ctx, &messaging.CreateWorkspaceParams{ID: "other"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.Workspace("other").APIKeys.Create(ctx, &messaging.KeyCreateParams{Scopes: []string{"read:contacts"}, Key: "acme_live_0123456789abcdef0123456789abcdef"}); err != nil {
		t.Fatal(err)
	}
	f, err := loadBootstrap(writeFile(t, goodBootstrap))
	if err != nil {
		t.Fatal(err)
	}
	err = applyBootstrap(ctx, svc, st, f, nil)
	if err == nil || !strings.Contains(err.Error(), "workspaces[0].api_keys[0].key: already belongs to another workspace") {
		t.Fatalf("error %v", err)
	}
	if _, err := svc.GetWorkspace(ctx, "acme"); messaging.ErrorCode(err) != messaging.CodeNotFound {
		t.Errorf("refused bootstrap created the workspace")
	}
}
