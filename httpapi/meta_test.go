package httpapi_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ujumbe/messaging/store/driver"

	"github.com/google/go-cmp/cmp"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/httpapi"
	"github.com/ujumbe/messaging/internal/testlog"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/provider/metaprovider"
	"github.com/ujumbe/messaging/store/memstore"
)

const (
	metaSecret   = "app-secret-0123456789abcdef"
	metaVerify   = "verify-me-please"
	metaPNID     = "106540352242922"
	metaPageID   = "PAGE_1"
	metaIGID     = "17841405822304914"
	metaWS       = "ws_meta"
	metaCustomer = "+254712345678"
)

// metaStore counts created messages and can fail provider-id lookups.
type metaStore struct {
	driver.Store
	created atomic.Int64
	broken  atomic.Bool
}

func (s *metaStore) MessageCreate(ctx context.Context, m *messaging.Message) (*messaging.Message, bool, error) {
	stored, created, err := s.Store.MessageCreate(ctx, m)
	if err == nil && created {
		s.created.Add(1)
	}
	return stored, created, err
}

func (s *metaStore) MessageGetByProviderID(ctx context.Context, id string) (*messaging.Message, error) {
	if s.broken.Load() {
		return nil, errors.New("disk I/O error")
	}
	return s.Store.MessageGetByProviderID(ctx, id)
}

type metaEnv struct {
	svc   *messaging.Service
	store *metaStore
	h     http.Handler
	log   *testlog.Buffer
}

// fakeLike is what the fake provider (and a test provider embedding it)
// is.
type fakeLike interface {
	messaging.Provider
	messaging.ChannelProvider
	messaging.ConnectionVerifier
	messaging.TemplateManager
	messaging.MediaFetcher
	messaging.MediaUploader
	messaging.TemplateSampleUploader
	messaging.ReadMarker
	fakeReceiver
}

// withMetaWebhook is a fake provider with the receiver of Meta's webhooks
// that a metaprovider configured with a webhook offers: the tests send
// with the simulator and receive Meta's webhooks.
type withMetaWebhook struct {
	fakeLike
	meta *metaprovider.Provider
}

func (p *withMetaWebhook) Receiver(svc *messaging.Service, host *messaging.ReceiverHost) *messaging.Receiver {
	return p.meta.Receiver(svc, host)
}

// metaHooked returns p with the receiver of Meta's webhooks configured by
// hook.
func metaHooked(t testing.TB, p fakeLike, hook *metaprovider.WebhookOptions) messaging.Provider {
	t.Helper()
	meta, err := metaprovider.New(&metaprovider.Options{Webhook: hook})
	if err != nil {
		t.Fatal(err)
	}
	return &withMetaWebhook{fakeLike: p, meta: meta}
}

// metaSetup is metaSetupWith the fake provider with the receiver of Meta's
// webhooks configured by cfg (nil: the secret, the verify token and the
// three accounts of metaWS).
func metaSetup(t testing.TB, cfg *metaprovider.WebhookOptions, opts ...func(*httpapi.Options)) *metaEnv {
	t.Helper()
	if cfg == nil {
		cfg = &metaprovider.WebhookOptions{VerifyToken: metaVerify, AppSecret: metaSecret,
			Accounts: map[string]string{metaPNID: metaWS, metaPageID: metaWS, metaIGID: metaWS}}
	}
	return metaSetupWith(t, metaHooked(t, fakeprovider.New(), cfg), opts...)
}

// metaSetupWith serves a service over prov, with the workspaces metaWS
// and ws_other, through httpapi with opts.
func metaSetupWith(t testing.TB, prov messaging.Provider, opts ...func(*httpapi.Options)) *metaEnv {
	t.Helper()
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	e := &metaEnv{store: &metaStore{Store: memstore.New()}, log: &testlog.Buffer{}}
	svc, err := messaging.New(e.store, prov, &messaging.Options{Clock: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	e.svc = svc
	for _, ws := range []string{metaWS, "ws_other"} {
		if _, err := svc.CreateWorkspace(t.Context(), &messaging.CreateWorkspaceParams{ID: ws, Name: ws, Channels: svc.Channels()}); err != nil {
			t.Fatal(err)
		}
	}
	o := &httpapi.Options{Logger: slog.New(slog.NewTextHandler(e.log, nil))}
	for _, f := range opts {
		f(o)
	}
	e.h = httpapi.New(svc, o)
	return e
}

// sent creates an outbound message in metaWS and records it as sent with
// provider id pid, as the dispatcher would.
func (e *metaEnv) sent(t testing.TB, channel, to, pid string) *messaging.Message {
	t.Helper()
	ctx := t.Context()
	res, err := e.svc.Workspace(metaWS).Messages.Send(ctx, &messaging.SendParams{Channel: channel, To: to, Type: "text", Text: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.UpdateStatus(ctx, &messaging.StatusUpdate{WorkspaceID: metaWS, MessageID: res.MessageID, Status: "sent", ProviderMessageID: pid}); err != nil {
		t.Fatal(err)
	}
	return e.get(t, res.MessageID)
}

func (e *metaEnv) get(t testing.TB, id string) *messaging.Message {
	t.Helper()
	m, err := e.svc.Workspace(metaWS).Messages.Get(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func metaSign(secret, body string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(body))
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// post sends body to the receiver, signed with the app secret unless
// headers say otherwise (a nil value removes the signature).
func (e *metaEnv) post(t testing.TB, path, body string, sig ...string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest("POST", path, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	if sig == nil {
		r.Header.Set("X-Hub-Signature-256", metaSign(metaSecret, body))
	}
	for _, s := range sig {
		r.Header.Add("X-Hub-Signature-256", s)
	}
	w := httptest.NewRecorder()
	e.h.ServeHTTP(w, r)
	return w
}

type metaAnswer struct {
	Statuses int `json:"statuses"`
	Messages int `json:"messages"`
	Ignored  int `json:"ignored"`
}

func (e *metaEnv) postOK(t *testing.T, body string) metaAnswer {
	t.Helper()
	w := e.post(t, "/webhooks/meta", body)
	if w.Code != 200 {
		t.Fatalf("POST = %d %s, want 200", w.Code, w.Body)
	}
	var a metaAnswer
	if err := json.Unmarshal(w.Body.Bytes(), &a); err != nil {
		t.Fatalf("answer %s: %v", w.Body, err)
	}
	return a
}

// waStatuses is a WhatsApp notification carrying statuses.
func waStatuses(statuses ...string) string {
	return fmt.Sprintf(`{"object":"whatsapp_business_account","entry":[{"id":"102290129340398","changes":[{"value":{
		"messaging_product":"whatsapp","metadata":{"display_phone_number":"15550783881","phone_number_id":%q},
		"statuses":[%s]},"field":"messages"}]}]}`, metaPNID, strings.Join(statuses, ","))
}

func waStatus(id, status string) string {
	return fmt.Sprintf(`{"id":%q,"status":%q,"timestamp":"1750263773","recipient_id":"254712345678",
		"pricing":{"billable":true,"pricing_model":"PMP","category":"utility"}}`, id, status)
}

func TestMetaHandshake(t *testing.T) {
	t.Parallel()
	e := metaSetup(t, nil)
	noToken := metaSetup(t, &metaprovider.WebhookOptions{AppSecret: metaSecret})
	for _, c := range []struct {
		name   string
		env    *metaEnv
		query  url.Values
		status int
	}{
		{"valid", e, url.Values{"hub.mode": {"subscribe"}, "hub.verify_token": {metaVerify}, "hub.challenge": {"1158201444"}}, 200},
		{"wrong token", e, url.Values{"hub.mode": {"subscribe"}, "hub.verify_token": {"verify-me-pleasE"}, "hub.challenge": {"1158201444"}}, 403},
		{"token prefix", e, url.Values{"hub.mode": {"subscribe"}, "hub.verify_token": {"verify-me"}, "hub.challenge": {"1"}}, 403},
		{"no token", e, url.Values{"hub.mode": {"subscribe"}, "hub.challenge": {"1"}}, 403},
		{"wrong mode", e, url.Values{"hub.mode": {"unsubscribe"}, "hub.verify_token": {metaVerify}, "hub.challenge": {"1"}}, 403},
		{"no challenge", e, url.Values{"hub.mode": {"subscribe"}, "hub.verify_token": {metaVerify}}, 403},
		{"huge challenge", e, url.Values{"hub.mode": {"subscribe"}, "hub.verify_token": {metaVerify}, "hub.challenge": {strings.Repeat("9", 10000)}}, 403},
		{"no token configured", noToken, url.Values{"hub.mode": {"subscribe"}, "hub.verify_token": {""}, "hub.challenge": {"1"}}, 403},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			c.env.h.ServeHTTP(w, httptest.NewRequest("GET", "/webhooks/meta?"+c.query.Encode(), nil))
			if w.Code != c.status {
				t.Fatalf("status = %d (%s), want %d", w.Code, w.Body, c.status)
			}
			if c.status == 200 {
				if w.Body.String() != "1158201444" || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
					t.Errorf("answer = %q (%s), want the challenge as text/plain", w.Body, w.Header().Get("Content-Type"))
				}
				return
			}
			if strings.Contains(w.Body.String(), "1158201444") {
				t.Error("a refused handshake echoed the challenge")
			}
			var env struct {
				Error struct{ Code string } `json:"error"`
			}
			if json.Unmarshal(w.Body.Bytes(), &env) != nil || env.Error.Code != "forbidden" {
				t.Errorf("body = %s, want the forbidden envelope", w.Body)
			}
		})
	}
	w := httptest.NewRecorder()
	e.h.ServeHTTP(w, httptest.NewRequest("PUT", "/webhooks/meta", nil))
	if w.Code != 405 || w.Header().Get("Allow") != "GET, POST" {
		t.Errorf("PUT = %d Allow %q, want 405 with Allow GET, POST", w.Code, w.Header().Get("Allow"))
	}
}

func TestMetaSignature(t *testing.T) {
	t.Parallel()
	e := metaSetup(t, nil)
	m := e.sent(t, "whatsapp", metaCustomer, "wamid.SIG")
	body := waStatuses(waStatus("wamid.SIG", "delivered"))
	good := metaSign(metaSecret, body)
	for _, c := range []struct {
		name string
		body string
		sig  []string
	}{
		{"missing", body, []string{}},
		{"empty", body, []string{""}},
		{"other secret", body, []string{metaSign("another-secret", body)}},
		{"sha1 form", body, []string{strings.Replace(good, "sha256=", "sha1=", 1)}},
		{"bare hex", body, []string{strings.TrimPrefix(good, "sha256=")}},
		{"truncated", body, []string{good[:len(good)-2]}},
		{"not hex", body, []string{"sha256=" + strings.Repeat("zz", 32)}},
		{"body changed after signing", strings.Replace(body, "delivered", "read", 1), []string{good}},
		{"two headers", body, []string{good, good}},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := e.post(t, "/webhooks/meta", c.body, c.sig...)
			if w.Code != 401 {
				t.Fatalf("status = %d (%s), want 401", w.Code, w.Body)
			}
			var env struct {
				Error struct{ Code string } `json:"error"`
			}
			if json.Unmarshal(w.Body.Bytes(), &env) != nil || env.Error.Code != "unauthorized" {
				t.Errorf("body = %s, want the unauthorized envelope", w.Body)
			}
			if got := e.get(t, m.ID).Status; got != "sent" {
				t.Errorf("status = %s after a refused notification, want sent", got)
			}
		})
	}

	// An empty AppSecret refuses everything, even a body "signed" with it.
	open := metaSetup(t, &metaprovider.WebhookOptions{VerifyToken: metaVerify})
	om := open.sent(t, "whatsapp", metaCustomer, "wamid.SIG")
	if w := open.post(t, "/webhooks/meta", body, metaSign("", body)); w.Code != 401 {
		t.Errorf("empty AppSecret: status = %d, want 401", w.Code)
	}
	if got := open.get(t, om.ID).Status; got != "sent" {
		t.Errorf("empty AppSecret: status = %s, want sent", got)
	}

	// The valid signature applies it; upper-case hex is the same signature.
	upper := "sha256=" + strings.ToUpper(strings.TrimPrefix(good, "sha256="))
	if w := e.post(t, "/webhooks/meta", body, upper); w.Code != 200 {
		t.Fatalf("valid signature: status = %d (%s)", w.Code, w.Body)
	}
	if got := e.get(t, m.ID).Status; got != "delivered" {
		t.Errorf("status = %s, want delivered", got)
	}
}

func TestMetaBadBodies(t *testing.T) {
	t.Parallel()
	e := metaSetup(t, nil, func(o *httpapi.Options) { o.MaxBodyBytes = 2048 })
	for _, c := range []struct {
		name   string
		body   string
		status int
	}{
		{"not JSON", `{"object":`, 400},
		{"array", `[1,2]`, 400},
		{"wrong types", `{"object":"whatsapp_business_account","entry":{"id":1}}`, 400},
		{"empty object", `{}`, 200},
		{"null entry", `{"object":"page","entry":null}`, 200},
		{"null items", `{"object":"whatsapp_business_account","entry":[null,{"changes":[null,{"value":{"statuses":[null],"messages":[null]}}]}]}`, 200},
		{"over the size limit", `{"object":"page","pad":"` + strings.Repeat("x", 4096) + `"}`, 413},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := e.post(t, "/webhooks/meta", c.body)
			if w.Code != c.status {
				t.Errorf("status = %d (%s), want %d", w.Code, w.Body, c.status)
			}
		})
	}
}

func TestMetaStoreFailureAsksForRetry(t *testing.T) {
	t.Parallel()
	e := metaSetup(t, nil)
	m := e.sent(t, "whatsapp", metaCustomer, "wamid.RETRY")
	body := waStatuses(waStatus("wamid.RETRY", "delivered"))
	e.store.broken.Store(true)
	w := e.post(t, "/webhooks/meta", body)
	if w.Code != 500 || strings.Contains(w.Body.String(), "disk I/O") {
		t.Fatalf("status = %d (%s), want 500 without internal detail", w.Code, w.Body)
	}
	e.store.broken.Store(false)
	e.postOK(t, body) // Meta's retry
	if got := e.get(t, m.ID).Status; got != "delivered" {
		t.Errorf("status = %s, want delivered", got)
	}
}

// TestMetaErrorsAndLimits: the receiver's refusals are answered with the
// envelope and the request's correlation id; refusals of verification
// spend the client address's unauthenticated rate limit, other refusals
// do not; the receiver's log lines carry the correlation id.
func TestMetaErrorsAndLimits(t *testing.T) {
	t.Parallel()
	e := metaSetup(t, nil, func(o *httpapi.Options) {
		o.MaxBodyBytes = 64
		o.RateLimits = map[string]int{"unauthenticated": 2}
	})
	type answer struct {
		Status                  int
		Code, RequestID         string
		Limit, Remaining, Allow string
	}
	do := func(id, method, target, body string, sig ...string) answer {
		t.Helper()
		r := httptest.NewRequest(method, target, strings.NewReader(body))
		r.Header.Set("X-Correlation-ID", id)
		if sig == nil {
			r.Header.Set("X-Hub-Signature-256", metaSign(metaSecret, body))
		}
		w := httptest.NewRecorder()
		e.h.ServeHTTP(w, r)
		var env struct {
			Error struct {
				Code      string `json:"code"`
				RequestID string `json:"request_id"`
			} `json:"error"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &env); err != nil {
			t.Errorf("%s: body %q: %v", id, w.Body, err)
		}
		return answer{w.Code, env.Error.Code, env.Error.RequestID,
			w.Header().Get("X-RateLimit-Limit"), w.Header().Get("X-RateLimit-Remaining"), w.Header().Get("Allow")}
	}
	got := []answer{
		do("corr-put", "PUT", "/webhooks/meta", ""),
		do("corr-large", "POST", "/webhooks/meta", `{"pad":"`+strings.Repeat("x", 64)+`"}`),
		do("corr-json", "POST", "/webhooks/meta", `{"object":`),
		do("corr-unsigned", "POST", "/webhooks/meta", `{}`, "sha256=00"),
		do("corr-token", "GET", "/webhooks/meta?hub.mode=subscribe&hub.verify_token=x&hub.challenge=1", ""),
		do("corr-limited", "POST", "/webhooks/meta", `{}`, "sha256=00"),
	}
	want := []answer{
		{Status: 405, Code: "method_not_allowed", RequestID: "corr-put", Allow: "GET, POST"},
		{Status: 413, Code: "payload_too_large", RequestID: "corr-large"},
		{Status: 400, Code: "validation_error", RequestID: "corr-json"},
		{Status: 401, Code: "unauthorized", RequestID: "corr-unsigned", Limit: "2", Remaining: "1"},
		{Status: 403, Code: "forbidden", RequestID: "corr-token", Limit: "2", Remaining: "0"},
		{Status: 429, Code: "rate_limit_exceeded", RequestID: "corr-limited", Limit: "2", Remaining: "0"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("answers (-want +got):\n%s", diff)
	}

	r := httptest.NewRequest("POST", "/webhooks/meta", strings.NewReader(`{"object":"user"}`))
	r.Header.Set("X-Correlation-ID", "corr-log")
	r.Header.Set("X-Hub-Signature-256", metaSign(metaSecret, `{"object":"user"}`))
	e.h.ServeHTTP(httptest.NewRecorder(), r)
	if !strings.Contains(e.log.String(), `msg="meta webhook: ignored a notification of an unknown object" correlation_id=corr-log object=user`) {
		t.Errorf("the ignored notification was not logged with its correlation id:\n%s", e.log)
	}
}

func TestMetaMounting(t *testing.T) {
	t.Parallel()
	// Without a provider offering it there is no receiver.
	plain := metaSetupWith(t, fakeprovider.New())
	w := httptest.NewRecorder()
	plain.h.ServeHTTP(w, httptest.NewRequest("GET", "/webhooks/meta?hub.mode=subscribe&hub.verify_token="+metaVerify+"&hub.challenge=1", nil))
	if w.Code != 404 {
		t.Errorf("without Meta: status = %d, want 404", w.Code)
	}

	custom := metaSetup(t, &metaprovider.WebhookOptions{Path: "/hooks/facebook", VerifyToken: metaVerify, AppSecret: metaSecret})
	w = httptest.NewRecorder()
	custom.h.ServeHTTP(w, httptest.NewRequest("GET", "/hooks/facebook?hub.mode=subscribe&hub.verify_token="+metaVerify+"&hub.challenge=42", nil))
	if w.Code != 200 || w.Body.String() != "42" {
		t.Errorf("custom path: %d %s", w.Code, w.Body)
	}

	// A path colliding with the API is refused without panicking, and the
	// API keeps working.
	for _, p := range []string{"/v1/messages", "/", "/v1/messages/{id}", "webhooks", "/a/../b", "/x y"} {
		bad := metaSetup(t, &metaprovider.WebhookOptions{Path: p, VerifyToken: metaVerify, AppSecret: metaSecret})
		w = httptest.NewRecorder()
		bad.h.ServeHTTP(w, httptest.NewRequest("POST", "/v1/messages", strings.NewReader(`{}`)))
		if w.Code != 401 {
			t.Errorf("Path %q: POST /v1/messages = %d, want 401 (the API untouched)", p, w.Code)
		}
		if !strings.Contains(bad.log.String(), "not mounted") {
			t.Errorf("Path %q: refusal not logged", p)
		}
	}
}
