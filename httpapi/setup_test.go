package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging/internal/testclock"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/httpapi"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/store/memstore"
)

// t0 is the fake clock's starting time; every fixture is created at t0.
var t0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// ts0 is t0 as the API writes it.
const ts0 = "2026-03-01T09:00:00.000Z"

// fakeClock is the one clock shared by the Service and the handler, so that
// key expiry, updatedAt and rate limits move only when a test advances it.
type fakeClock = testclock.Clock

// countingStore counts the messages and contacts actually created, so tests
// can assert that a refused or replayed request stored nothing.
type countingStore struct {
	driver.Store
	messages atomic.Int64
	contacts atomic.Int64
	media    atomic.Int64
	// contactGetHook, when set, runs before ContactGet; its error is
	// returned instead of the contact (it may also panic).
	contactGetHook atomic.Pointer[func() error]
}

func (s *countingStore) ContactGet(ctx context.Context, ws, id string) (*messaging.Contact, error) {
	if h := s.contactGetHook.Load(); h != nil {
		if err := (*h)(); err != nil {
			return nil, err
		}
	}
	return s.Store.ContactGet(ctx, ws, id)
}

func (s *countingStore) MessageCreate(ctx context.Context, m *messaging.Message) (*messaging.Message, bool, error) {
	stored, created, err := s.Store.MessageCreate(ctx, m)
	if err == nil && created {
		s.messages.Add(1)
	}
	return stored, created, err
}

func (s *countingStore) MediaCreate(ctx context.Context, m *messaging.UploadedMedia) error {
	err := s.Store.MediaCreate(ctx, m)
	if err == nil {
		s.media.Add(1)
	}
	return err
}

func (s *countingStore) ContactCreate(ctx context.Context, c *messaging.Contact) error {
	err := s.Store.ContactCreate(ctx, c)
	if err == nil {
		s.contacts.Add(1)
	}
	return err
}

// listingProvider is fakeprovider that also lists templates (a
// messaging.TemplateLister, as metaprovider is): it lists list.
type listingProvider struct {
	*fakeprovider.Provider
	list []*messaging.ProviderTemplate
}

func (p *listingProvider) ListTemplates(context.Context, *messaging.ChannelSender) ([]*messaging.ProviderTemplate, error) {
	return p.list, nil
}

// wsFixture is one workspace with its keys and records.
type wsFixture struct {
	ID string
	// Full holds every scope; FullID is its id.
	Full, FullID string
	// Only[s] holds only scope s; Without[s] holds every scope but s.
	Only, Without map[string]string
	Revoked       string
	// RevokedID is the id of the key Revoked.
	RevokedID string
	Expired   string
	// Approved is "order_update" (en, UTILITY, header text, body {{1}} {{2}}).
	Approved *messaging.Template
	// Welcome is "welcome" (en_US, MARKETING, no variables).
	Welcome *messaging.Template
	// Swahili is "karibu" (sw, MARKETING, body {{1}}).
	Swahili *messaging.Template
	// Pending is "spring_sale" (en, MARKETING), still under review.
	Pending *messaging.Template
	// Own is a template only this workspace has ("a_only" or "b_only").
	Own *messaging.Template
	// Contact has every field set; Contact2 has an email only.
	Contact, Contact2 *messaging.Contact
	// Message is a text message to +254712345678 on whatsapp.
	Message *messaging.SendResult
	// NewDraft creates a new draft template ("draft_1", "draft_2", ...:
	// UTILITY, en) and returns its id.
	NewDraft func() string
	// NewInbound records a new inbound document with media from
	// +254799000001 and returns its id.
	NewInbound func() string
	// NewUpload uploads a small JPEG for messages on whatsapp and returns
	// its id.
	NewUpload func() string
	// NewScheduled sends a text to +254712345678 on whatsapp scheduled an
	// hour ahead of the clock and returns its id: a message to cancel.
	NewScheduled func() string
	// Hook is a webhook endpoint (its receiver answers 500); Delivery is
	// the id of a pending delivery of it; NewHook creates another endpoint
	// and returns its id.
	Hook     *messaging.WebhookEndpoint
	Delivery string
	NewHook  func() string
}

// channelToken is the access token of the valid PUT /v1/channels/{channel}
// request (its last 4 characters are its hint, "Lm3b").
const channelToken = "EAAGtestchanneltokenQ7w2Zr5Kx9Lm3b"

// env is a Service on memstore and fakeprovider, served by the handler.
type env struct {
	clock *fakeClock
	store *countingStore
	svc   *messaging.Service
	h     *httpapi.Handler
	A, B  *wsFixture
	// remote is the RemoteAddr of requests made with do.
	remote string
	// hookURL is a webhook receiver on loopback that answers 500.
	hookURL string
	// fake is the provider when it is fakeprovider (setup, setupOn) or
	// wraps it.
	fake fakeReceiver
}

// fakeReceiver is fakeprovider's simulation of inbound messages.
type fakeReceiver interface {
	SetSink(fakeprovider.Sink)
	Receive(context.Context, *messaging.InboundMessage) (*messaging.Message, error)
}

// setup builds two workspaces A and B (all channels) with keys, templates,
// contacts and a message each, and the handler over them. opts may adjust
// the handler options; the clock is always the shared fake clock.
func setup(t testing.TB, opts ...func(*httpapi.Options)) *env {
	t.Helper()
	return setupOn(t, memstore.New(), nil, opts...)
}

// setupOn is setup on store, with the service options svcOpts (nil for
// defaults; the clock is always the shared fake clock).
func setupOn(t testing.TB, store driver.Store, svcOpts *messaging.Options, opts ...func(*httpapi.Options)) *env {
	t.Helper()
	return setupWith(t, store, fakeprovider.New(), svcOpts, opts...)
}

// setupWith is setupOn with the provider prov.
func setupWith(t testing.TB, store driver.Store, prov messaging.Provider, svcOpts *messaging.Options, opts ...func(*httpapi.Options)) *env {
	t.Helper()
	e := &env{clock: testclock.New(t0), remote: "192.0.2.10:4321"}
	e.store = &countingStore{Store: store}
	var so messaging.Options
	if svcOpts != nil {
		so = *svcOpts
	}
	so.Clock = e.clock.Now
	if so.SecretKey == nil {
		// Channel credentials are stored sealed (PUT /v1/channels).
		so.SecretKey = bytes.Repeat([]byte{7}, 32)
	}
	so.Webhooks.AllowLoopback = true
	hooks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusInternalServerError) }))
	t.Cleanup(hooks.Close)
	e.hookURL = hooks.URL
	svc, err := messaging.New(e.store, prov, &so)
	if err != nil {
		t.Fatal(err)
	}
	e.svc = svc
	if fp, ok := prov.(fakeReceiver); ok {
		// The fake records the inbound messages of NewInbound as received,
		// so that it marks them read (POST /v1/messages/{id}/read).
		fp.SetSink(svc)
		e.fake = fp
	}
	e.A = e.workspace(t, "ws_a", "a_only", "+254712345678", "amina@example.com")
	e.B = e.workspace(t, "ws_b", "b_only", "+254722000111", "zawadi@example.com")
	o := &httpapi.Options{Clock: e.clock.Now}
	for _, f := range opts {
		f(o)
	}
	o.Clock = e.clock.Now
	e.h = httpapi.New(svc, o)
	return e
}

func (e *env) workspace(t testing.TB, id, own, phone, email string) *wsFixture {
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
	// Messenger is connected with credentials, which POST
	// /v1/channels/{channel}/verify verifies again.
	page := "3000003"
	if id != "ws_a" {
		page = "4000004"
	}
	_, err = e.svc.Workspace(id).Channels.Connect(ctx, messaging.ChannelMessenger, &messaging.ChannelCredentials{Fields: map[string]string{"page_id": page}, AccessToken: channelToken})
	must(err)
	f := &wsFixture{ID: id, Only: map[string]string{}, Without: map[string]string{}}
	key := func(scopes []string, exp *time.Time) (*messaging.APIKey, string) {
		t.Helper()
		k, plain, err := e.svc.Workspace(id).APIKeys.Create(ctx, &messaging.KeyCreateParams{Scopes: scopes, ExpiresAt: exp})
		must(err)
		return k, plain
	}
	fk, full := key(record.AllScopes(), nil)
	f.Full, f.FullID = full, fk.ID
	for _, s := range record.AllScopes() {
		_, f.Only[s] = key([]string{s}, nil)
		_, f.Without[s] = key(slices.DeleteFunc(record.AllScopes(), func(x string) bool { return x == s }), nil)
	}
	// The revoked key holds manage:keys alone, so that any key that may
	// manage keys may revoke it again (a key revokes only keys whose
	// scopes it holds).
	rk, plain := key([]string{record.ScopeManageKeys}, nil)
	_, err = e.svc.Workspace(id).APIKeys.Revoke(ctx, rk.ID)
	must(err)
	f.Revoked, f.RevokedID = plain, rk.ID
	// A key cannot be created expired: it is created live, then its
	// expiry is moved into the past.
	future, past := t0.Add(time.Hour), t0.Add(-time.Hour)
	ek, expired := key(record.AllScopes(), &future)
	_, err = e.svc.Workspace(id).APIKeys.Update(ctx, ek.ID, &messaging.KeyUpdateParams{Scopes: record.AllScopes(), ExpiresAt: &past})
	must(err)
	f.Expired = expired

	tpl := func(status string, p messaging.TemplateCreateParams) *messaging.Template {
		t.Helper()
		p.Status = status
		tt, err := e.svc.Workspace(id).Templates.Create(ctx, &p)
		must(err)
		return tt
	}
	f.Approved = tpl(record.TemplateApproved, messaging.TemplateCreateParams{Name: "order_update", Category: record.CategoryUtility, Language: "en",
		Components: []messaging.TemplateComponent{
			{Type: "HEADER", Format: "TEXT", Text: "Order update"},
			{Type: "BODY", Text: "Hi {{1}}, your order {{2}} has shipped."},
		}})
	f.Welcome = tpl(record.TemplateApproved, messaging.TemplateCreateParams{Name: "welcome", Category: record.CategoryMarketing, Language: "en_US",
		Components: []messaging.TemplateComponent{{Type: "BODY", Text: "Welcome to Ujumbe!"}}})
	f.Swahili = tpl(record.TemplateApproved, messaging.TemplateCreateParams{Name: "karibu", Category: record.CategoryMarketing, Language: "sw",
		Components: []messaging.TemplateComponent{{Type: "BODY", Text: "Karibu {{1}}!"}}})
	f.Pending = tpl(record.TemplatePending, messaging.TemplateCreateParams{Name: "spring_sale", Category: record.CategoryMarketing, Language: "en",
		Components: []messaging.TemplateComponent{{Type: "BODY", Text: "Spring sale: 20% off"}}})
	f.Own = tpl(record.TemplateApproved, messaging.TemplateCreateParams{Name: own, Category: record.CategoryUtility, Language: "en",
		Components: []messaging.TemplateComponent{{Type: "BODY", Text: "Only in " + id}}})

	c, err := e.svc.Workspace(id).Contacts.Create(ctx, &messaging.ContactCreateParams{
		FirstName: "Amina", LastName: "Odhiambo", Phone: phone, Email: email, Company: "Ujumbe Ltd",
		JobTitle: "CTO", Website: "https://ujumbe.example.com", Notes: "met at expo", Tags: []string{"vip", "nairobi"},
		Lifecycle: record.LifecycleCustomer,
	})
	must(err)
	f.Contact = c
	c2, err := e.svc.Workspace(id).Contacts.Create(ctx, &messaging.ContactCreateParams{FirstName: "Brian", Email: "brian." + email})
	must(err)
	f.Contact2 = c2
	m, err := e.svc.Workspace(id).Messages.Send(ctx, &messaging.SendParams{Channel: "whatsapp", To: "+254712345678", Type: "text", Text: "hello from " + id})
	must(err)
	f.Message = m
	var drafts atomic.Int64
	f.NewDraft = func() string {
		n := drafts.Add(1)
		d, err := e.svc.Workspace(id).Templates.Create(ctx, &messaging.TemplateCreateParams{Name: fmt.Sprintf("draft_%d", n),
			Category: record.CategoryUtility, Language: "en", Status: record.TemplateDraft,
			Components: []messaging.TemplateComponent{{Type: "BODY", Text: "Draft {{1}}"}}})
		if err != nil {
			panic(fmt.Sprintf("setup %s: a draft: %v", id, err))
		}
		return d.ID
	}
	var inbound atomic.Int64
	f.NewInbound = func() string {
		in := &messaging.InboundMessage{WorkspaceID: id, Channel: "whatsapp", From: "+254799000001",
			ProviderMessageID: fmt.Sprintf("wamid.%s.in%d", id, inbound.Add(1)), Type: "document",
			Content: &messaging.InboundContent{Media: &record.InboundMedia{ProviderMediaID: "m1", MimeType: "application/pdf"}}}
		receive := e.svc.RecordInbound
		if e.fake != nil {
			receive = e.fake.Receive
		}
		m, err := receive(ctx, in)
		if err != nil {
			panic(fmt.Sprintf("setup %s: an inbound message: %v", id, err))
		}
		return m.ID
	}
	var scheduled atomic.Int64
	f.NewScheduled = func() string {
		at := e.clock.Now().Add(time.Hour)
		r, err := e.svc.Workspace(id).Messages.Send(ctx, &messaging.SendParams{Channel: "whatsapp", To: "+254712345678", Type: "text",
			Text: fmt.Sprintf("later %d", scheduled.Add(1)), SendAt: &at})
		if err != nil {
			panic(fmt.Sprintf("setup %s: a scheduled message: %v", id, err))
		}
		return r.MessageID
	}
	f.NewUpload = func() string {
		u, err := e.svc.Workspace(id).MediaUploads.Upload(ctx, &messaging.MediaUploadParams{MimeType: "image/jpeg", Body: bytes.NewReader(jpegBytes(100))})
		if err != nil {
			panic(fmt.Sprintf("setup %s: an upload: %v", id, err))
		}
		return u.ID
	}
	n := 0
	f.NewHook = func() string {
		n++
		h, _, err := e.svc.Workspace(id).Webhooks.Create(ctx, &messaging.WebhookCreateParams{URL: fmt.Sprintf("%s/%s/%d", e.hookURL, id, n)})
		must(err)
		return h.ID
	}
	f.Hook, err = e.svc.Workspace(id).Webhooks.Get(ctx, f.NewHook())
	must(err)
	hm, err := e.svc.Workspace(id).Messages.Send(ctx, &messaging.SendParams{Channel: "whatsapp", To: "+254712345678", Type: "text", Text: "an event for " + id})
	must(err)
	_, err = e.svc.UpdateStatus(ctx, &messaging.StatusUpdate{WorkspaceID: id, MessageID: hm.MessageID, Status: messaging.StatusRead})
	must(err)
	ds, _, err := e.svc.Workspace(id).Webhooks.Deliveries(ctx, f.Hook.ID, "", 1)
	must(err)
	if len(ds) != 1 {
		t.Fatalf("setup %s: %d webhook deliveries, want 1", id, len(ds))
	}
	f.Delivery = messaging.WebhookDeliveryID(ds[0])
	return f
}

// ws returns the fixture of "A" or "B".
func (e *env) ws(name string) *wsFixture {
	if name == "B" {
		return e.B
	}
	return e.A
}

// keyOf resolves a key name of the scenario tables: "" (no header), "A",
// "B", "A.revoked", "A.expired", "A.only:<scope>", "A.without:<scope>", or
// "raw:<literal key>".
func (e *env) keyOf(t *testing.T, name string) string {
	t.Helper()
	if name == "" {
		return ""
	}
	if k, ok := strings.CutPrefix(name, "raw:"); ok {
		return k
	}
	wsName, rest, _ := strings.Cut(name, ".")
	f := e.ws(wsName)
	switch {
	case rest == "":
		return f.Full
	case rest == "revoked":
		return f.Revoked
	case rest == "expired":
		return f.Expired
	case strings.HasPrefix(rest, "only:"):
		return f.Only[strings.TrimPrefix(rest, "only:")]
	case strings.HasPrefix(rest, "without:"):
		return f.Without[strings.TrimPrefix(rest, "without:")]
	}
	t.Fatalf("unknown key name %q", name)
	return ""
}

// expand replaces the placeholders <A.contact>, <A.contact2>, <A.message>,
// <A.template>, <A.pending>, <A.own>, <A.phone>, <A.key> (the id of the
// full key) (and the same for B) by fixture values.
func (e *env) expand(s string) string {
	var pairs []string
	for _, n := range []string{"A", "B"} {
		f := e.ws(n)
		pairs = append(pairs,
			"<"+n+".contact>", f.Contact.ID, "<"+n+".contact2>", f.Contact2.ID,
			"<"+n+".message>", f.Message.MessageID, "<"+n+".template>", f.Approved.ID,
			"<"+n+".pending>", f.Pending.ID, "<"+n+".own>", f.Own.ID,
			"<"+n+".phone>", f.Contact.Phone, "<"+n+".key>", f.FullID)
	}
	return strings.NewReplacer(pairs...).Replace(s)
}

// request is one HTTP request of a test.
type request struct {
	method, path string
	// key is sent as X-API-Key when not empty.
	key string
	// headers are added (Add) after the defaults; a header set to the
	// single value "-" is removed.
	headers http.Header
	// body: nil for none, a string (placeholders expanded) or []byte (raw).
	body any
}

// response is a recorded response.
type response struct {
	status int
	header http.Header
	body   []byte
	env    *envelope
}

type envelope struct {
	Error struct {
		Code       string `json:"code"`
		Message    string `json:"message"`
		StatusCode int    `json:"statusCode"`
		RequestID  string `json:"request_id"`
		Docs       string `json:"docs"`
		Field      string `json:"field"`
	} `json:"error"`
}

// hdr builds headers from name, value pairs (repeats add values).
func hdr(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

// newRequest builds the *http.Request of rq.
func (e *env) newRequest(rq request) *http.Request {
	var body io.Reader
	hasBody := false
	switch b := rq.body.(type) {
	case nil:
	case string:
		body, hasBody = strings.NewReader(e.expand(b)), true
	case []byte:
		body, hasBody = bytes.NewReader(b), true
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			panic(err)
		}
		body, hasBody = bytes.NewReader(raw), true
	}
	r := httptest.NewRequest(rq.method, e.expand(rq.path), body)
	r.RemoteAddr = e.remote
	if hasBody {
		r.Header.Set("Content-Type", "application/json")
	}
	if rq.key != "" {
		r.Header.Set("X-API-Key", rq.key)
	}
	for k, vs := range rq.headers {
		if len(vs) == 1 && vs[0] == "-" {
			r.Header.Del(k)
			continue
		}
		r.Header.Del(k)
		for _, v := range vs {
			r.Header.Add(k, v)
		}
	}
	return r
}

// do serves rq and checks the invariants every response must hold.
func (e *env) do(t *testing.T, rq request) *response {
	t.Helper()
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, e.newRequest(rq))
	res := &response{status: rec.Code, header: rec.Result().Header, body: rec.Body.Bytes()}
	checkInvariants(t, rq.method+" "+rq.path, res)
	return res
}

// doRaw serves rq without the invariant checks (for configurations that
// intentionally drop the rate limit headers, and for concurrent use).
func (e *env) doRaw(rq request) *response {
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, e.newRequest(rq))
	return &response{status: rec.Code, header: rec.Result().Header, body: rec.Body.Bytes()}
}

// call is do with a key name (see keyOf) and an optional body.
func (e *env) call(t *testing.T, method, path, keyName string, body any) *response {
	t.Helper()
	return e.do(t, request{method: method, path: path, key: e.keyOf(t, keyName), body: body})
}

var (
	timestampRe = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$`)
	// statusOfCode is the spec's code table plus the two REST-layer codes.
	statusOfCode = map[string]int{
		"unauthorized": 401, "invalid_api_key": 401, "forbidden": 403, "not_found": 404,
		"conflict": 409, "validation_error": 400, "channel_unavailable": 422,
		"template_not_found": 404, "rate_limit_exceeded": 429, "internal_error": 500,
		"method_not_allowed": 405, "payload_too_large": 413, "recipient_opted_out": 422, "outside_customer_service_window": 422,
	}
)

// checkInvariants checks what every response carries: a correlation id,
// rate limit headers, a JSON body, the error envelope on errors (request_id
// equal to the correlation id, statusCode equal to the status, docs a
// root-relative link), Retry-After on 429, Allow on 405, UTC timestamps,
// and never a 500.
func checkInvariants(t *testing.T, what string, r *response) {
	t.Helper()
	cid := r.header.Get("X-Correlation-ID")
	if cid == "" {
		t.Errorf("%s: no X-Correlation-ID header", what)
	}
	lim, err1 := strconv.Atoi(r.header.Get("X-RateLimit-Limit"))
	rem, err2 := strconv.Atoi(r.header.Get("X-RateLimit-Remaining"))
	if err1 != nil || err2 != nil || lim < 1 || rem < 0 || rem > lim {
		t.Errorf("%s: X-RateLimit-Limit %q, X-RateLimit-Remaining %q: want integers 0 <= remaining <= limit",
			what, r.header.Get("X-RateLimit-Limit"), r.header.Get("X-RateLimit-Remaining"))
	}
	if r.status == 200 && strings.HasSuffix(what, "/media") {
		return // the bytes of a message's media, of their own type
	}
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("%s: Content-Type %q, want application/json", what, ct)
	}
	if r.status == 500 {
		t.Errorf("%s: status 500: %s", what, r.body)
	}
	var anyBody any
	if err := json.Unmarshal(r.body, &anyBody); err != nil {
		t.Fatalf("%s: body is not JSON: %v: %q", what, err, r.body)
	}
	checkTimestamps(t, what, "", anyBody)
	if r.status >= 400 {
		dec := json.NewDecoder(bytes.NewReader(r.body))
		dec.DisallowUnknownFields()
		var env envelope
		if err := dec.Decode(&env); err != nil {
			t.Fatalf("%s: status %d: body is not the error envelope: %v: %s", what, r.status, err, r.body)
		}
		r.env = &env
		e := env.Error
		if e.Code == "" || e.Message == "" {
			t.Errorf("%s: envelope without code or message: %s", what, r.body)
		}
		if e.StatusCode != r.status {
			t.Errorf("%s: error.statusCode %d, HTTP status %d", what, e.StatusCode, r.status)
		}
		if want, ok := statusOfCode[e.Code]; !ok || want != r.status {
			t.Errorf("%s: code %q with status %d; the code table says %d", what, e.Code, r.status, want)
		}
		if e.RequestID == "" || e.RequestID != cid {
			t.Errorf("%s: error.request_id %q, X-Correlation-ID %q: want equal and non-empty", what, e.RequestID, cid)
		}
		if e.Docs != "/v1/errors/"+e.Code {
			t.Errorf("%s: error.docs %q, want /v1/errors/%s", what, e.Docs, e.Code)
		}
	}
	if r.status == 429 {
		if n, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || n < 1 {
			t.Errorf("%s: 429 with Retry-After %q, want whole seconds >= 1", what, r.header.Get("Retry-After"))
		}
		if rem != 0 {
			t.Errorf("%s: 429 with X-RateLimit-Remaining %d, want 0", what, rem)
		}
	}
	if r.status == 405 && r.header.Get("Allow") == "" {
		t.Errorf("%s: 405 without Allow", what)
	}
}

// checkTimestamps checks that every string member whose name says it is a
// time (created_at, updatedAt, ...) is ISO 8601 UTC ending in Z.
func checkTimestamps(t *testing.T, what, name string, v any) {
	t.Helper()
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			checkTimestamps(t, what, k, c)
		}
	case []any:
		for _, c := range x {
			checkTimestamps(t, what, name, c)
		}
	case string:
		if strings.HasSuffix(name, "_at") || strings.HasSuffix(name, "At") {
			if !timestampRe.MatchString(x) {
				t.Errorf("%s: %s = %q is not an ISO 8601 UTC timestamp ending in Z", what, name, x)
			}
		}
	}
}

// object decodes a JSON object body.
func (r *response) object(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v: %s", err, r.body)
	}
	return m
}

// array decodes a JSON array body.
func (r *response) array(t *testing.T) []any {
	t.Helper()
	var a []any
	if err := json.Unmarshal(r.body, &a); err != nil {
		t.Fatalf("body is not a JSON array: %v: %s", err, r.body)
	}
	return a
}

// expect checks status, error code and field of r.
func expect(t *testing.T, r *response, status int, code, field string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d; body %s", r.status, status, r.body)
	}
	if code == "" && field == "" {
		return
	}
	if r.env == nil {
		t.Fatalf("want error %q, got body %s", code, r.body)
	}
	if r.env.Error.Code != code {
		t.Errorf("error.code %q, want %q (%s)", r.env.Error.Code, code, r.env.Error.Message)
	}
	if field != "" && r.env.Error.Field != field {
		t.Errorf("error.field %q, want %q (%s)", r.env.Error.Field, field, r.env.Error.Message)
	}
}

// routePath turns a route pattern into a concrete path on workspace f's
// records.
func routePath(rt httpapi.Route, f *wsFixture) string {
	var id string
	switch {
	case rt.Name() == "PATCH /v1/templates/{id}" || rt.Name() == "DELETE /v1/templates/{id}" || rt.Name() == "POST /v1/templates/{id}/submit":
		id = f.NewDraft()
	case rt.Name() == "GET /v1/messages/{id}/media" || rt.Name() == "POST /v1/messages/{id}/read":
		id = f.NewInbound()
	case rt.Name() == "GET /v1/media/{id}":
		id = f.NewUpload()
	case rt.Name() == "POST /v1/messages/{id}/cancel":
		id = f.NewScheduled()
	case strings.HasPrefix(rt.Pattern, "/v1/messages/"):
		id = f.Message.MessageID
	case strings.HasPrefix(rt.Pattern, "/v1/conversations/"):
		id = f.Message.ConversationID
	case strings.HasPrefix(rt.Pattern, "/v1/templates/"):
		id = f.Approved.ID
	case strings.HasPrefix(rt.Pattern, "/v1/contacts/"):
		id = f.Contact.ID
	case strings.HasPrefix(rt.Pattern, "/v1/errors/"):
		id = "not_found"
	case strings.HasPrefix(rt.Pattern, "/v1/api-keys/"):
		// Revoking a revoked key again is a success that changes nothing,
		// so the request can be repeated.
		id = f.RevokedID
	case strings.HasPrefix(rt.Pattern, "/v1/webhooks/"):
		id = f.Hook.ID
	}
	channel := "whatsapp"
	switch {
	case rt.Method == "DELETE":
		channel = "instagram" // whatsapp stays connected for the sends
	case rt.Name() == "POST /v1/channels/{channel}/verify", rt.Name() == "PATCH /v1/channels/{channel}":
		channel = "messenger" // connected with credentials by the setup
	}
	return strings.NewReplacer("{id}", id, "{channel}", channel, "{delivery_id}", f.Delivery).Replace(rt.Pattern)
}

// validRequest returns a request that succeeds on rt for workspace f, with
// the success status. n makes bodies unique where the route needs it.
func validRequest(t *testing.T, rt httpapi.Route, f *wsFixture, n int) (request, int) {
	t.Helper()
	rq := request{method: rt.Method, path: strings.Replace(routePath(rt, f), "{code}", "not_found", 1)}
	switch rt.Name() {
	case "POST /v1/messages":
		rq.body = fmt.Sprintf(`{"channel":"whatsapp","to":"+254712345678","type":"text","text":"hello %d"}`, n)
		return rq, 201
	case "POST /v1/messages/{id}/read":
		rq.body = `{"typing":true}`
		return rq, 200
	case "POST /v1/messages/{id}/cancel":
		return rq, 200
	case "POST /v1/media":
		rq.body = uploadBody(t, map[string]string{"type": "image/jpeg"}, "a.jpg", jpegBytes(64+n))
		rq.headers = http.Header{"Content-Type": {uploadContentType}}
		return rq, 201
	case "GET /v1/media/{id}":
		return rq, 200
	case "POST /v1/messages/templates":
		rq.body = fmt.Sprintf(`{"to":"+254712345678","template_name":"order_update","language":"en","components":[{"type":"body","parameters":[{"type":"text","text":"Amina"},{"type":"text","text":"A-%d"}]}]}`, n)
		return rq, 201
	case "POST /v1/contacts":
		rq.body = fmt.Sprintf(`{"firstName":"New","email":"new%d@example.com"}`, n)
		return rq, 201
	case "PATCH /v1/contacts/{id}":
		rq.body = fmt.Sprintf(`{"company":"Acme %d"}`, n)
		return rq, 200
	case "POST /v1/templates":
		rq.body = fmt.Sprintf(`{"name":"new_template_%d","category":"UTILITY","language":"en","components":[{"type":"BODY","text":"Hello {{1}}"}]}`, n)
		return rq, 201
	case "PATCH /v1/templates/{id}":
		rq.body = `{"category":"MARKETING"}`
		return rq, 200
	case "POST /v1/templates/{id}/submit":
		rq.body = `{}`
		return rq, 200
	case "DELETE /v1/templates/{id}", "GET /v1/channels", "DELETE /v1/channels/{channel}":
		return rq, 200
	case "POST /v1/channels/{channel}/verify":
		rq.body = `{}`
		return rq, 200
	case "PATCH /v1/channels/{channel}":
		rq.body = fmt.Sprintf(`{"throughput":%d}`, 100+n)
		return rq, 200
	case "POST /v1/templates/sync":
		// fakeprovider does not list templates: the sync's answer in
		// this setup (see TestTemplateSync for a provider that does).
		rq.body = `{}`
		return rq, 409
	case "PUT /v1/channels/{channel}":
		acct := "1000001"
		if f.ID != "ws_a" {
			acct = "2000002"
		}
		rq.body = fmt.Sprintf(`{"phone_number_id":%q,"waba_id":%q,"access_token":%q}`, acct, acct+"9", channelToken)
		return rq, 200
	case "POST /v1/api-keys":
		rq.body = fmt.Sprintf(`{"name":"key %d","scopes":["manage:keys"]}`, n)
		return rq, 201
	case "GET /v1/api-keys", "GET /v1/api-keys/{id}", "DELETE /v1/api-keys/{id}", "GET /v1/audit-events":
		return rq, 200
	case "POST /v1/webhooks":
		rq.body = fmt.Sprintf(`{"url":"https://hooks.example.com/%d","events":["message.status_updated"]}`, n)
		return rq, 201
	case "PATCH /v1/webhooks/{id}":
		rq.body = fmt.Sprintf(`{"description":"orders %d"}`, n)
		return rq, 200
	case "DELETE /v1/webhooks/{id}":
		rq.path = "/v1/webhooks/" + f.NewHook()
		return rq, 200
	case "POST /v1/webhooks/{id}/rotate-secret", "POST /v1/webhooks/{id}/test":
		return rq, 200
	case "POST /v1/webhooks/{id}/deliveries/{delivery_id}/redeliver":
		return rq, 202
	case "GET /v1/messages/{id}", "GET /v1/messages/{id}/media", "GET /v1/messages", "GET /v1/conversations", "GET /v1/conversations/{id}/messages", "GET /v1/templates", "GET /v1/templates/{id}", "GET /v1/contacts",
		"GET /v1/contacts/{id}", "GET /v1/openapi.json", "GET /v1/errors/{code}",
		"GET /v1/webhooks", "GET /v1/webhooks/{id}", "GET /v1/webhooks/{id}/deliveries":
		return rq, 200
	}
	t.Fatalf("route %s has no valid request in the test table: add one", rt.Name())
	return rq, 0
}

// scopedRoutes returns the routes that need an API key.
func scopedRoutes() []httpapi.Route {
	var out []httpapi.Route
	for _, rt := range httpapi.Routes() {
		if rt.Scopes != nil {
			out = append(out, rt)
		}
	}
	return out
}
