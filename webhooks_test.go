package messaging_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ujumbe/messaging/internal/defaults"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/store/memstore"
	"github.com/ujumbe/messaging/webhooksig"
)

// The Standard Webhooks specification's published test vector.
const (
	vectorSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	vectorID     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	vectorTS     = 1614265330
	vectorBody   = `{"test": 2432232314}`
	vectorSig    = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func TestSignWebhookStandardVector(t *testing.T) {
	t.Parallel()
	got, err := webhooksig.Sign(vectorSecret, vectorID, time.Unix(vectorTS, 0), []byte(vectorBody))
	if err != nil || got != vectorSig {
		t.Fatalf("SignWebhook = %q, %v; want %q", got, err, vectorSig)
	}
}

func TestVerifyWebhook(t *testing.T) {
	t.Parallel()
	at := time.Unix(vectorTS, 0)
	hdr := func(id, ts, sig string) http.Header {
		h := http.Header{}
		h.Set("webhook-id", id)
		h.Set("webhook-timestamp", ts)
		h.Set("webhook-signature", sig)
		return h
	}
	tests := []struct {
		name   string
		secret string
		h      http.Header
		body   string
		now    time.Time
		ok     bool
	}{
		{"vector", vectorSecret, hdr(vectorID, "1614265330", vectorSig), vectorBody, at, true},
		{"one of several signatures", vectorSecret, hdr(vectorID, "1614265330", "v1,AAAA "+vectorSig), vectorBody, at.Add(4 * time.Minute), true},
		{"altered body", vectorSecret, hdr(vectorID, "1614265330", vectorSig), `{"test": 2432232315}`, at, false},
		{"other id", vectorSecret, hdr("msg_other", "1614265330", vectorSig), vectorBody, at, false},
		{"other timestamp", vectorSecret, hdr(vectorID, "1614265331", vectorSig), vectorBody, at, false},
		{"too old", vectorSecret, hdr(vectorID, "1614265330", vectorSig), vectorBody, at.Add(6 * time.Minute), false},
		{"too new", vectorSecret, hdr(vectorID, "1614265330", vectorSig), vectorBody, at.Add(-6 * time.Minute), false},
		{"wrong version", vectorSecret, hdr(vectorID, "1614265330", "v2,"+strings.TrimPrefix(vectorSig, "v1,")), vectorBody, at, false},
		{"missing signature", vectorSecret, hdr(vectorID, "1614265330", ""), vectorBody, at, false},
		{"other secret", "whsec_" + strings.Repeat("A", 32), hdr(vectorID, "1614265330", vectorSig), vectorBody, at, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := webhooksig.Verify(tc.secret, tc.h, []byte(tc.body), tc.now, 0)
			if (err == nil) != tc.ok {
				t.Errorf("VerifyWebhook = %v, want ok=%v", err, tc.ok)
			}
		})
	}
	if err := webhooksig.Verify("not-a-secret", hdr(vectorID, "1614265330", vectorSig), []byte(vectorBody), at, 0); err == nil {
		t.Error("a malformed secret verified")
	}
}

// receiver is a webhook endpoint that answers with the scripted statuses
// (the last repeats) and records what it received.
type receiver struct {
	mu       sync.Mutex
	statuses []int
	got      []http.Header
	bodies   [][]byte
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	b, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, req.Header.Clone())
	r.bodies = append(r.bodies, b)
	st := 200
	if len(r.statuses) > 0 {
		st = r.statuses[0]
		if len(r.statuses) > 1 {
			r.statuses = r.statuses[1:]
		}
	}
	w.WriteHeader(st)
}

func (r *receiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.bodies)
}

type hookFixture struct {
	*dispatchFixture
	rcv    *receiver
	srv    *httptest.Server
	secret string
}

func setupHooks(t *testing.T, allowPrivate bool, statuses ...int) *hookFixture {
	t.Helper()
	f := &hookFixture{dispatchFixture: &dispatchFixture{ctx: context.Background(), store: memstore.New(), clock: newFakeClock(t0), prov: newScripted()},
		rcv: &receiver{statuses: statuses}}
	f.srv = httptest.NewServer(f.rcv)
	t.Cleanup(f.srv.Close)
	key := make([]byte, 32)
	svc, err := messaging.New(f.store, f.prov, &messaging.Options{Clock: f.clock.Now, SecretKey: key,
		Dispatch: messaging.DispatchOptions{PerSenderRate: -1}, Webhooks: messaging.WebhookOptions{AllowLoopback: allowPrivate}})
	if err != nil {
		t.Fatal(err)
	}
	f.svc = svc
	if _, err := svc.CreateWorkspace(f.ctx, &messaging.CreateWorkspaceParams{ID: "acme", Channels: svc.Channels()}); err != nil {
		t.Fatal(err)
	}
	f.ws = svc.Workspace("acme")
	// The receiver listens on loopback: without allowPrivate it is created
	// through a service that allows it, to test the guard at connect time.
	if _, f.secret, err = createAnyWebhook(f.store, "acme", f.srv.URL+"/hook"); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *hookFixture) deliver(t *testing.T) int {
	t.Helper()
	n, err := f.svc.DeliverWebhooksDue(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestWebhookDeliveriesSignedAndOrdered(t *testing.T) {
	t.Parallel()
	f := setupHooks(t, true)
	id := f.send(t, "+254712345678")
	f.dispatch(t)
	for _, st := range []string{"delivered", "read"} {
		m, _ := f.store.MessageGet(f.ctx, "acme", id)
		if _, err := f.svc.ApplyProviderStatus(f.ctx, &messaging.ProviderStatus{ProviderMessageID: m.ProviderMessageID, Status: st}); err != nil {
			t.Fatal(err)
		}
	}
	// One event per message is in flight at a time, so three rounds.
	total := 0
	for range 5 {
		total += f.deliver(t)
	}
	if total != 3 || f.rcv.count() != 3 {
		t.Fatalf("delivered %d (received %d), want 3", total, f.rcv.count())
	}
	var seen []string
	for i, h := range f.rcv.got {
		if err := webhooksig.Verify(f.secret, h, f.rcv.bodies[i], f.clock.Now(), 0); err != nil {
			t.Errorf("delivery %d does not verify: %v", i, err)
		}
		var ev struct {
			ID, Type  string
			CreatedAt string `json:"created_at"`
			Data      struct {
				MessageID      string `json:"message_id"`
				ConversationID string `json:"conversation_id"`
				Channel, To    string
				Status         string
				PreviousStatus string `json:"previous_status"`
				UpdatedAt      string `json:"updated_at"`
			}
		}
		if err := json.Unmarshal(f.rcv.bodies[i], &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Type != "message.status_updated" || ev.ID != h.Get("webhook-id") || ev.Data.MessageID != id || ev.Data.To != "+254712345678" ||
			ev.Data.Channel != "whatsapp" || ev.Data.ConversationID == "" || ev.CreatedAt == "" || ev.Data.UpdatedAt == "" {
			t.Errorf("payload %d: %s", i, f.rcv.bodies[i])
		}
		seen = append(seen, ev.Data.PreviousStatus+">"+ev.Data.Status)
	}
	if got := strings.Join(seen, " "); got != "queued>sent sent>delivered delivered>read" {
		t.Errorf("events arrived as %q, want in order", got)
	}
}

func TestWebhookRetriesOnFailureWithSchedule(t *testing.T) {
	t.Parallel()
	f := setupHooks(t, true, 500, 503, 200)
	f.send(t, "+254712345678")
	f.dispatch(t)
	if n := f.deliver(t); n != 1 {
		t.Fatalf("first attempt: %d", n)
	}
	if n := f.deliver(t); n != 0 {
		t.Fatalf("retried before its time (%d)", n)
	}
	f.clock.Advance(5 * time.Second) // first retry after 5 s
	if n := f.deliver(t); n != 1 {
		t.Fatalf("no retry after 5 s (%d)", n)
	}
	f.clock.Advance(4 * time.Minute)
	if n := f.deliver(t); n != 0 {
		t.Fatalf("second retry before 5 min (%d)", n)
	}
	f.clock.Advance(time.Minute)
	if n := f.deliver(t); n != 1 {
		t.Fatalf("no retry after 5 min (%d)", n)
	}
	f.clock.Advance(24 * time.Hour)
	if n := f.deliver(t); n != 0 {
		t.Errorf("a delivered event was sent again (%d)", n)
	}
	if f.rcv.count() != 3 {
		t.Errorf("receiver got %d attempts, want 3", f.rcv.count())
	}
	// Every attempt carries the same id and body, signed afresh.
	for i := range f.rcv.got {
		if f.rcv.got[i].Get("webhook-id") != f.rcv.got[0].Get("webhook-id") || string(f.rcv.bodies[i]) != string(f.rcv.bodies[0]) {
			t.Errorf("attempt %d differs from the first", i)
		}
		if err := webhooksig.Verify(f.secret, f.rcv.got[i], f.rcv.bodies[i], time.Unix(mustInt(t, f.rcv.got[i].Get("webhook-timestamp")), 0), 0); err != nil {
			t.Errorf("attempt %d: %v", i, err)
		}
	}
}

func mustInt(t *testing.T, s string) int64 {
	t.Helper()
	var n int64
	if err := json.Unmarshal([]byte(s), &n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestWebhookGivesUpAfterSchedule(t *testing.T) {
	t.Parallel()
	f := setupHooks(t, true, 500)
	f.send(t, "+254712345678")
	f.dispatch(t)
	attempts := 0
	for range 20 {
		attempts += f.deliver(t)
		f.clock.Advance(11 * time.Hour)
	}
	if want := len(defaults.DefaultWebhookSchedule()) + 1; attempts != want {
		t.Errorf("%d attempts, want %d (one plus one per retry of the schedule)", attempts, want)
	}
}

func TestWebhookGoneDisablesEndpoint(t *testing.T) {
	t.Parallel()
	f := setupHooks(t, true, 410)
	f.send(t, "+254712345678")
	f.send(t, "+254712345679")
	f.dispatch(t)
	if n := f.deliver(t); n != 2 {
		t.Fatalf("attempted %d, want 2", n)
	}
	eps, _ := f.svc.Workspace("acme").Webhooks.List(f.ctx)
	if len(eps) != 1 || eps[0].DisabledAt == nil {
		t.Fatalf("after 410 the endpoint is %+v, want disabled", eps)
	}
	f.send(t, "+254712345670")
	f.dispatch(t)
	f.clock.Advance(time.Hour)
	if n := f.deliver(t); n != 0 {
		t.Errorf("a disabled endpoint got %d more attempts", n)
	}
}

func TestWebhookRefusesPrivateAddressesByDefault(t *testing.T) {
	t.Parallel()
	f := setupHooks(t, false) // the receiver listens on loopback
	f.send(t, "+254712345678")
	f.dispatch(t)
	if n := f.deliver(t); n != 1 {
		t.Fatalf("attempted %d", n)
	}
	if f.rcv.count() != 0 {
		t.Error("a delivery reached a loopback address with AllowPrivate off")
	}
}

func TestWebhookDoesNotFollowRedirects(t *testing.T) {
	t.Parallel()
	f := setupHooks(t, true, http.StatusTemporaryRedirect, 200)
	f.send(t, "+254712345678")
	f.dispatch(t)
	f.deliver(t)
	if f.rcv.count() != 1 {
		t.Fatalf("receiver saw %d requests, want 1 (the redirect is not followed)", f.rcv.count())
	}
	f.clock.Advance(5 * time.Second)
	f.deliver(t) // the redirect counted as a failure: retried
	if f.rcv.count() != 2 {
		t.Errorf("a redirect was not retried as a failure")
	}
}

func TestWebhookEndpointValidation(t *testing.T) {
	t.Parallel()
	f := setupHooks(t, true)
	for _, tc := range []struct {
		name  string
		p     messaging.WebhookCreateParams
		field string
	}{
		{"relative url", messaging.WebhookCreateParams{URL: "/hook"}, "url"},
		{"ftp url", messaging.WebhookCreateParams{URL: "ftp://x.example/hook"}, "url"},
		{"secret without prefix", messaging.WebhookCreateParams{URL: "https://x.example", Secret: "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}, "secret"},
		{"short secret", messaging.WebhookCreateParams{URL: "https://x.example", Secret: "whsec_c2hvcnQ="}, "secret"},
	} {
		_, _, err := f.svc.Workspace("acme").Webhooks.Create(f.ctx, &tc.p)
		var e *messaging.Error
		if !errors.As(err, &e) || e.Code != messaging.CodeValidation || e.Field != tc.field {
			t.Errorf("%s: error %v, want validation_error on %s", tc.name, err, tc.field)
		}
	}
	_, _, err := f.svc.Workspace("nope").Webhooks.Create(f.ctx, &messaging.WebhookCreateParams{URL: "https://x.example"})
	if messaging.ErrorCode(err) != messaging.CodeNotFound {
		t.Errorf("endpoint of a missing workspace: %v", err)
	}
	// The secret is stored sealed, never in clear.
	eps, _ := f.svc.Workspace("acme").Webhooks.List(f.ctx)
	if strings.Contains(string(eps[0].SecretSealed), strings.TrimPrefix(f.secret, "whsec_")) {
		t.Error("the webhook secret is stored in clear")
	}
	noKey, _ := messaging.New(memstore.New(), f.prov, nil)
	if _, _, err := noKey.Workspace("acme").Webhooks.Create(f.ctx, &messaging.WebhookCreateParams{URL: "https://x.example"}); err == nil {
		t.Error("created an endpoint without a SecretKey to seal its secret")
	}
}
