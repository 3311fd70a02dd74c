package client_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/client"
	"github.com/ujumbe/messaging/httpapi"
	"github.com/ujumbe/messaging/internal/testclock"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/sms"
	"github.com/ujumbe/messaging/sms/fakegateway"
	"github.com/ujumbe/messaging/store/memstore"
)

// t0 is the fake clock's starting time.
var t0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

const (
	smsPartner = "acme-sms"
	smsKey     = "smsk_test_0123456789abcdefghij"
	// smsCallbacks is the workspace of the SMS accounts' callbacks.
	smsCallbacks = "ws_sms_callbacks"
)

// faultStore counts the messages created and can make a message read fail
// (with an unexpected error, or ErrUnavailable).
type faultStore struct {
	driver.Store
	created atomic.Int64
	getErr  atomic.Pointer[error]
}

func (s *faultStore) MessageCreate(ctx context.Context, m *messaging.Message) (*messaging.Message, bool, error) {
	stored, created, err := s.Store.MessageCreate(ctx, m)
	if err == nil && created {
		s.created.Add(1)
	}
	return stored, created, err
}

func (s *faultStore) MessageGet(ctx context.Context, ws, id string) (*messaging.Message, error) {
	if e := s.getErr.Load(); e != nil {
		return nil, *e
	}
	return s.Store.MessageGet(ctx, ws, id)
}

// fixture is a workspace's keys and records.
type fixture struct {
	ID string
	// Key holds every scope; Revoked is revoked; Only[s] holds only s.
	Key, Revoked string
	Only         map[string]string
	KeyID        string
	Template     *messaging.Template
	Contact      *messaging.Contact
	Message      *messaging.SendResult
	Hook         *messaging.WebhookEndpoint
	HookSecret   string
	Delivery     string
}

// env is a Service on memstore with the SMS API, served by httpapi over
// httptest, with two workspaces A and B.
type env struct {
	clock *testclock.Clock
	store *faultStore
	svc   *messaging.Service
	sms   *sms.SMS
	srv   *httptest.Server
	A, B  *fixture
	// hooks receives webhook deliveries: the last one is kept.
	hooks *hookReceiver
	// hooksURL is the root URL of hooks.
	hooksURL string
	// fake is the provider, which records the messages it receives (its
	// Receive), uploads and read marks.
	fake *fakeprovider.Provider
}

// hookReceiver is a webhook endpoint that answers 204 and keeps the
// deliveries it got.
type hookReceiver struct {
	mu  sync.Mutex
	got []delivery
}

type delivery struct {
	path   string
	header http.Header
	body   []byte
}

func (h *hookReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	h.mu.Lock()
	h.got = append(h.got, delivery{r.URL.Path, r.Header.Clone(), b})
	h.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (h *hookReceiver) last(t *testing.T) delivery {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.got) == 0 {
		t.Fatal("no webhook delivery received")
	}
	return h.got[len(h.got)-1]
}

// setup builds the env; opts adjust the handler's options.
func setup(t testing.TB, opts ...func(*httpapi.Options)) *env {
	t.Helper()
	ctx := context.Background()
	e := &env{clock: testclock.New(t0), store: &faultStore{Store: memstore.New()}, hooks: &hookReceiver{}}
	hooks := httptest.NewServer(e.hooks)
	t.Cleanup(hooks.Close)
	e.hooksURL = hooks.URL
	so := &messaging.Options{Clock: e.clock.Now, SecretKey: bytes.Repeat([]byte{7}, 32)}
	so.Webhooks.AllowLoopback = true
	e.fake = fakeprovider.NewWithOptions(&fakeprovider.Options{Clock: e.clock.Now})
	svc, err := messaging.New(e.store, e.fake, so)
	if err != nil {
		t.Fatal(err)
	}
	e.svc = svc
	e.fake.SetSink(svc)
	s, err := sms.New(e.store.Store.(sms.Store), fakegateway.New(&fakegateway.Options{Clock: e.clock.Now, Delay: 10 * time.Second}), &sms.Options{Clock: e.clock.Now,
		Callbacks: &sms.CallbackOptions{Service: svc, WorkspaceID: smsCallbacks}})
	if err != nil {
		t.Fatal(err)
	}
	e.sms = s
	if _, _, err := s.CreateAccount(ctx, &sms.CreateAccountParams{PartnerID: smsPartner, APIKey: smsKey, Senders: []string{"ACME"}, Credit: sms.Credits(3)}); err != nil {
		t.Fatal(err)
	}
	e.A = e.workspace(t, "ws_a", "+254712345678", hooks.URL+"/a")
	e.B = e.workspace(t, "ws_b", "+254722000111", hooks.URL+"/b")
	o := &httpapi.Options{SMS: s, DisableRateLimits: true}
	for _, f := range opts {
		f(o)
	}
	o.Clock = e.clock.Now
	e.srv = httptest.NewServer(httpapi.New(svc, o))
	t.Cleanup(e.srv.Close)
	return e
}

func (e *env) workspace(t testing.TB, id, phone, hookURL string) *fixture {
	t.Helper()
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("setup %s: %v", id, err)
		}
	}
	_, err := e.svc.CreateWorkspace(ctx, &messaging.CreateWorkspaceParams{ID: id, Name: "Workspace " + id, Channels: e.svc.Channels()})
	must(err)
	f := &fixture{ID: id, Only: map[string]string{}}
	k, plain, err := e.svc.Workspace(id).APIKeys.Create(ctx, &messaging.KeyCreateParams{Name: "full", Scopes: record.AllScopes()})
	must(err)
	f.Key, f.KeyID = plain, k.ID
	for _, s := range record.AllScopes() {
		_, f.Only[s], err = e.svc.Workspace(id).APIKeys.Create(ctx, &messaging.KeyCreateParams{Name: "only " + s, Scopes: []string{s}})
		must(err)
	}
	rk, plain, err := e.svc.Workspace(id).APIKeys.Create(ctx, &messaging.KeyCreateParams{Name: "revoked", Scopes: record.AllScopes()})
	must(err)
	_, err = e.svc.Workspace(id).APIKeys.Revoke(ctx, rk.ID)
	must(err)
	f.Revoked = plain
	f.Template, err = e.svc.Workspace(id).Templates.Create(ctx, &messaging.TemplateCreateParams{
		Name: "order_update", Category: record.CategoryUtility, Language: "en", Status: record.TemplateApproved,
		Components: []messaging.TemplateComponent{{Type: "BODY", Text: "Hi {{1}}, your order {{2}} has shipped.", Examples: []string{"Amina", "A-1001"}}},
	})
	must(err)
	f.Contact, err = e.svc.Workspace(id).Contacts.Create(ctx, &messaging.ContactCreateParams{FirstName: "Amina", LastName: "Odhiambo", Phone: phone})
	must(err)
	f.Message, err = e.svc.Workspace(id).Messages.Send(ctx, &messaging.SendParams{Channel: "whatsapp", To: phone, Type: "text", Text: "hello from " + id})
	must(err)
	f.Hook, f.HookSecret, err = e.svc.Workspace(id).Webhooks.Create(ctx, &messaging.WebhookCreateParams{URL: hookURL})
	must(err)
	_, err = e.svc.UpdateStatus(ctx, &messaging.StatusUpdate{WorkspaceID: id, MessageID: f.Message.MessageID, Status: messaging.StatusSent})
	must(err)
	ds, _, err := e.svc.Workspace(id).Webhooks.Deliveries(ctx, f.Hook.ID, "", 1)
	must(err)
	if len(ds) != 1 {
		t.Fatalf("setup %s: %d webhook deliveries, want 1", id, len(ds))
	}
	f.Delivery = messaging.WebhookDeliveryID(ds[0])
	return f
}

// sleeps records the waits of a client's retries and moves the clock.
type sleeps struct {
	mu    sync.Mutex
	clock *testclock.Clock
	waits []time.Duration
}

func (s *sleeps) Sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.waits = append(s.waits, d)
	s.mu.Unlock()
	if s.clock != nil {
		s.clock.Advance(d)
	}
	return ctx.Err()
}

func (s *sleeps) all() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}

// options are client options that never sleep for real, with the jitter
// in the middle (factor 1).
func (e *env) options(sl *sleeps) *client.Options {
	if sl == nil {
		sl = &sleeps{}
	}
	return &client.Options{Sleep: sl.Sleep, Jitter: func() float64 { return 0.5 }}
}

// client returns a client of the env's server with key.
func (e *env) client(t testing.TB, key string, opts *client.Options) *client.Client {
	t.Helper()
	if opts == nil {
		opts = e.options(nil)
	}
	c, err := client.New(e.srv.URL, key, opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// apiError returns err as a *client.Error, failing the test otherwise.
func apiError(t *testing.T, err error) *client.Error {
	t.Helper()
	var ce *client.Error
	if !errors.As(err, &ce) {
		t.Fatalf("error %v (%T) is not a *client.Error", err, err)
	}
	return ce
}
