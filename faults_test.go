package messaging_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/provider/metaprovider"
	"github.com/ujumbe/messaging/store/memstore"
	"github.com/ujumbe/messaging/webhooksig"
)

// The fault tests: a channel provider that misbehaves, a webhook receiver
// that is down. Time is the injected clock; the only real waits are the
// provider's timeouts, which are what is being tested.

// graphBehaviour is how the fake Graph API answers one request.
type graphBehaviour func(w http.ResponseWriter, r *http.Request)

var (
	graphOK graphBehaviour = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"messaging_product":"whatsapp","contacts":[{"input":"+254712345678","wa_id":"254712345678"}],"messages":[{"id":"wamid.OK"}]}`)
	}
	// graphHang never answers; the caller's timeout ends the request.
	graphHang graphBehaviour = func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(time.Minute):
		}
	}
	// graphDrop closes the connection without an answer.
	graphDrop graphBehaviour = func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
	}
)

// graphStatus answers status with a Graph error body (code 0: a body that
// is not JSON) and optional headers.
func graphStatus(status, code int, message string, header ...string) graphBehaviour {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.WriteHeader(status)
		if code == 0 {
			_, _ = io.WriteString(w, "<html>upstream trouble</html>")
			return
		}
		_, _ = fmt.Fprintf(w, `{"error":{"message":%q,"type":"OAuthException","code":%d,"fbtrace_id":"AbC"}}`, message, code)
	}
}

// graphServer answers each request with the next behaviour of its script
// (the last one repeats) and counts requests.
type graphServer struct {
	mu     sync.Mutex
	script []graphBehaviour
	hits   int
}

func (g *graphServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body) // then the server notices a client that hangs up
	g.mu.Lock()
	b := g.script[0]
	if len(g.script) > 1 {
		g.script = g.script[1:]
	}
	g.hits++
	g.mu.Unlock()
	b(w, r)
}

func (g *graphServer) count() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.hits
}

// faultFixture is a Service dispatching through metaprovider to a Graph
// API stand-in, on memstore, with the injected clock.
type faultFixture struct {
	*dispatchFixture
	graph *graphServer
}

const faultSendTimeout = 300 * time.Millisecond

func setupFaults(t *testing.T, script ...graphBehaviour) *faultFixture {
	t.Helper()
	g := &graphServer{script: script}
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	f := &faultFixture{dispatchFixture: &dispatchFixture{ctx: context.Background(), store: memstore.New(), clock: newFakeClock(t0)}, graph: g}
	meta, err := metaprovider.New(&metaprovider.Options{BaseURL: srv.URL, Clock: f.clock.Now, HTTPClient: &http.Client{}})
	if err != nil {
		t.Fatal(err)
	}
	prov := fixedSender{meta, &messaging.ChannelSender{AccountID: "106540352242922", AccessToken: "EAAG-secret-token"}}
	svc, err := messaging.New(f.store, prov, &messaging.Options{Clock: f.clock.Now, Dispatch: messaging.DispatchOptions{
		SendTimeout: faultSendTimeout, Lease: time.Minute, MaxAttempts: 4, InitialBackoff: time.Second, MaxBackoff: time.Minute, PerSenderRate: -1,
	}})
	if err != nil {
		t.Fatal(err)
	}
	f.svc = svc
	if _, err := svc.CreateWorkspace(f.ctx, &messaging.CreateWorkspaceParams{ID: "acme", Channels: svc.Channels()}); err != nil {
		t.Fatal(err)
	}
	f.ws = svc.Workspace("acme")
	return f
}

// fixedSender is a provider that sends every message as one sender,
// whatever the workspace's connections: the workspaces of the fault tests
// are connected without credentials.
type fixedSender struct {
	*metaprovider.Provider
	sender *messaging.ChannelSender
}

func (p fixedSender) Send(ctx context.Context, _ *messaging.ChannelSender, m *messaging.Message) (*messaging.SendReceipt, error) {
	return p.Provider.Send(ctx, p.sender, m)
}

// stored returns the message as the store holds it (with its dispatch
// fields).
func (f *dispatchFixture) stored(t *testing.T, id string) *messaging.Message {
	t.Helper()
	m, err := f.store.MessageGet(f.ctx, "acme", id)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestProviderFaults sends one message through each misbehaving Graph API
// and drives the dispatcher with the clock until the message is final: it
// is retried per policy (never before its due time, Retry-After honoured),
// ends sent or failed with the provider's reason, and is never left queued.
func TestProviderFaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		script []graphBehaviour
		// lastError is the error recorded after the first failed attempt.
		lastError string
		// firstRetry is the least wait before the second attempt.
		firstRetry   time.Duration
		wantStatus   string
		wantReason   string
		wantRequests int
		// extraClaims counts the claims that handed nothing over and are
		// still counted in Attempts: the one that fails a message after
		// its confirmation window.
		extraClaims int
	}{
		// A timeout is an unknown outcome: the message waits for the
		// confirmation window (5 min) before it is sent again.
		{name: "timeout twice, then accepted", script: []graphBehaviour{graphHang, graphHang, graphOK},
			lastError: "[" + metaprovider.CodeOutcomeUnknown + "] no answer from the Graph API", firstRetry: 5 * time.Minute,
			wantStatus: "sent", wantRequests: 3},
		{name: "500 twice, then accepted", script: []graphBehaviour{graphStatus(500, 0, ""), graphStatus(500, 1, "An unknown error occurred"), graphOK},
			lastError: "[500] Internal Server Error", firstRetry: 800 * time.Millisecond, wantStatus: "sent", wantRequests: 3},
		{name: "429 with Retry-After, then accepted", script: []graphBehaviour{graphStatus(429, 130429, "Rate limit hit", "Retry-After", "120"), graphOK},
			lastError: "[130429] Rate limit hit", firstRetry: 120 * time.Second, wantStatus: "sent", wantRequests: 2},
		{name: "429 with an HTTP-date Retry-After", script: []graphBehaviour{graphStatus(429, 4, "Application request limit reached", "Retry-After", t0.Add(10*time.Minute).Format(http.TimeFormat)), graphOK},
			lastError: "[4] Application request limit reached", firstRetry: 10 * time.Minute, wantStatus: "sent", wantRequests: 2},
		// The connection dropped after the request was written: Meta may
		// have taken it, so this too waits for the confirmation window.
		{name: "dropped connection, then accepted", script: []graphBehaviour{graphDrop, graphOK},
			lastError: "[" + metaprovider.CodeOutcomeUnknown + "] no answer from the Graph API", firstRetry: 5 * time.Minute, wantStatus: "sent", wantRequests: 2},
		{name: "503 for ever", script: []graphBehaviour{graphStatus(503, 2, "Service temporarily unavailable")},
			lastError: "[2] Service temporarily unavailable", firstRetry: 800 * time.Millisecond,
			wantStatus: "failed", wantReason: "[2] Service temporarily unavailable", wantRequests: 4},
		{name: "timeouts for ever", script: []graphBehaviour{graphHang},
			lastError: "[" + metaprovider.CodeOutcomeUnknown + "] no answer from the Graph API", firstRetry: 5 * time.Minute,
			wantStatus: "failed", wantReason: "[unconfirmed] The provider did not confirm the send within 5m0s; it may or may not have reached the recipient", wantRequests: 4, extraClaims: 1},
		{name: "refused for good", script: []graphBehaviour{graphStatus(400, 131026, "Message undeliverable")},
			wantStatus: "failed", wantReason: "[131026] Message undeliverable", wantRequests: 1},
		// Accepted without an id: Meta may have taken it, so each answer
		// waits for the confirmation window; none comes here.
		{name: "accepted without a message id", script: []graphBehaviour{func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, `{"messages":[]}`) }},
			lastError: "[" + metaprovider.CodeInvalidResponse + "] the Graph API answered 200 without a message id", firstRetry: 5 * time.Minute,
			wantStatus: "failed", wantReason: "[unconfirmed] The provider did not confirm the send within 5m0s; it may or may not have reached the recipient", wantRequests: 4, extraClaims: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := setupFaults(t, tc.script...)
			id := f.send(t, "+254712345678")
			var reasons []string
			for round := 0; ; round++ {
				if round > 10 {
					t.Fatalf("still %s after %d rounds", f.stored(t, id).Status, round)
				}
				// A claim after a confirmation window puts the message back
				// to be claimed afresh: two claims in one round.
				if n := f.dispatch(t); n != 1 && n != 2 {
					t.Fatalf("round %d: dispatched %d, want 1 (2 after a confirmation window)", round, n)
				}
				m := f.stored(t, id)
				if m.Status != "queued" {
					break
				}
				if m.LeaseOwner != "" && !m.DueAt.After(f.clock.Now()) {
					t.Fatalf("round %d: queued under a lease that does not end", round)
				}
				reasons = append(reasons, m.LastError)
				wait := m.DueAt.Sub(f.clock.Now())
				if round == 0 && wait < tc.firstRetry {
					t.Errorf("first retry due in %v, want at least %v", wait, tc.firstRetry)
				}
				// Nothing is claimed before the retry is due.
				f.clock.Advance(wait - time.Millisecond)
				if n := f.dispatch(t); n != 0 {
					t.Fatalf("round %d: %d claimed %v before the retry was due", round, n, time.Millisecond)
				}
				f.clock.Advance(time.Millisecond)
			}
			m := f.stored(t, id)
			if m.Status != tc.wantStatus || m.FailureReason != tc.wantReason {
				t.Errorf("ended %s %q, want %s %q", m.Status, m.FailureReason, tc.wantStatus, tc.wantReason)
			}
			if tc.lastError != "" && (len(reasons) == 0 || !strings.HasPrefix(reasons[0], tc.lastError)) {
				t.Errorf("error after the first attempt %q, want %q...", reasons, tc.lastError)
			}
			if got := f.graph.count(); got != tc.wantRequests || m.Attempts != tc.wantRequests+tc.extraClaims {
				t.Errorf("%d requests to the Graph API, %d attempts recorded; want %d", got, m.Attempts, tc.wantRequests)
			}
			for _, r := range append(reasons, m.FailureReason) {
				if strings.Contains(r, "EAAG-secret-token") {
					t.Errorf("the access token leaked into %q", r)
				}
			}
			// Through the API the failure reads as the spec says.
			got := f.get(t, id)
			if got.Status != tc.wantStatus || got.FailureReason != tc.wantReason {
				t.Errorf("Messages.Get: %s %q", got.Status, got.FailureReason)
			}
		})
	}
}

// TestProviderHangsThenDispatcherDies: a dispatcher killed while the
// provider hangs leaves the message leased, not lost; nobody claims it
// before the lease ends, and the claim after it sends nothing before the
// confirmation window ends (the first request may have reached the
// provider); with no confirmation, the resend goes out after the window.
func TestProviderHangsThenDispatcherDies(t *testing.T) {
	t.Parallel()
	f := setupFaults(t, graphHang, graphOK)
	id := f.send(t, "+254712345678")
	runCtx, kill := context.WithCancel(f.ctx)
	if err := f.svc.Start(runCtx); err != nil {
		t.Fatal(err)
	}
	for f.graph.count() == 0 { // wait until the send is in flight
		time.Sleep(time.Millisecond)
	}
	kill()
	if err := f.svc.Close(f.ctx); err != nil {
		t.Fatal(err)
	}
	m := f.stored(t, id)
	if m.Status != "queued" || m.LeaseOwner == "" || !m.DueAt.After(f.clock.Now()) {
		t.Fatalf("after the kill: %s, lease %q until %v", m.Status, m.LeaseOwner, m.DueAt)
	}
	// Another Service on the same store: not before the lease ends.
	f2 := &dispatchFixture{ctx: f.ctx, store: f.store, clock: f.clock, ws: f.ws}
	prov := fakeprovider.New()
	svc2, err := messaging.New(f.store, prov, &messaging.Options{Clock: f.clock.Now, Dispatch: messaging.DispatchOptions{PerSenderRate: -1}})
	if err != nil {
		t.Fatal(err)
	}
	f2.svc = svc2
	f.clock.Advance(time.Minute - time.Millisecond)
	if n := f2.dispatch(t); n != 0 {
		t.Fatalf("claimed %d before the lease ended", n)
	}
	f.clock.Advance(time.Millisecond)
	if n := f2.dispatch(t); n != 1 {
		t.Fatalf("claimed %d after the lease ended, want 1", n)
	}
	if m := f.stored(t, id); m.Status != "queued" || len(prov.Sent()) != 0 || m.UnconfirmedSince == nil {
		t.Fatalf("after the lease: %s, %d sends, mark %v; want queued, none, marked", m.Status, len(prov.Sent()), m.UnconfirmedSince)
	}
	f.clock.Advance(5 * time.Minute)
	f2.dispatch(t)
	if m := f.stored(t, id); m.Status != "sent" || m.LeaseOwner != "" || len(prov.Sent()) != 1 {
		t.Errorf("after the confirmation window: %s, lease %q, %d sends; want sent once", m.Status, m.LeaseOwner, len(prov.Sent()))
	}
}

// TestFakeProviderFailNext: scripted provider errors are retried per
// policy (a RetryAfter longer than the backoff wins) or fail the message at
// once, through the fake provider every example and test uses.
func TestFakeProviderFailNext(t *testing.T) {
	t.Parallel()
	store := memstore.New()
	clock := newFakeClock(t0)
	prov := fakeprovider.NewWithOptions(&fakeprovider.Options{Clock: clock.Now, DeliveredAfter: -1})
	svc, err := messaging.New(store, prov, &messaging.Options{Clock: clock.Now, Dispatch: messaging.DispatchOptions{PerSenderRate: -1, MaxAttempts: 3}})
	if err != nil {
		t.Fatal(err)
	}
	f := &dispatchFixture{ctx: context.Background(), store: store, clock: clock, svc: svc}
	if _, err := svc.CreateWorkspace(f.ctx, &messaging.CreateWorkspaceParams{ID: "acme", Channels: svc.Channels()}); err != nil {
		t.Fatal(err)
	}
	f.ws = svc.Workspace("acme")

	// A rate limit with a RetryAfter of 30 s, then success.
	prov.FailNext(&messaging.SendError{Code: "130429", Text: "Rate limit hit", Retryable: true, RetryAfter: 30 * time.Second})
	id := f.send(t, "+254712345678")
	f.dispatch(t)
	if m := f.stored(t, id); m.Status != "queued" || m.DueAt.Sub(clock.Now()) < 30*time.Second || m.LastError != "[130429] Rate limit hit" {
		t.Fatalf("after the rate limit: %s due in %v, %q", m.Status, m.DueAt.Sub(clock.Now()), m.LastError)
	}
	clock.Advance(29 * time.Second)
	if n := f.dispatch(t); n != 0 {
		t.Fatalf("retried %d before Retry-After", n)
	}
	clock.Advance(time.Second)
	f.dispatch(t)
	if m := f.stored(t, id); m.Status != "sent" || m.Attempts != 2 {
		t.Fatalf("after the retry: %s, %d attempts", m.Status, m.Attempts)
	}

	// A permanent refusal fails at once; retryable errors that never end
	// fail after MaxAttempts with the last error.
	prov.FailNext(&messaging.SendError{Code: "131051", Text: "Unsupported message type"})
	perm := f.send(t, "+254712345679")
	f.dispatch(t)
	if m := f.get(t, perm); m.Status != "failed" || m.FailureReason != "[131051] Unsupported message type" {
		t.Errorf("permanent error: %s %q", m.Status, m.FailureReason)
	}
	prov.FailNext(errors.New("boom"), errors.New("boom"), errors.New("boom"))
	flaky := f.send(t, "+254712345670")
	for range 3 {
		f.dispatch(t)
		clock.Advance(time.Hour)
	}
	if m := f.get(t, flaky); m.Status != "failed" || m.FailureReason != "[unreachable] The channel provider could not be reached" {
		t.Errorf("after MaxAttempts: %s %q", m.Status, m.FailureReason)
	}
}

// hookReceiver is a webhook endpoint that is down (the connection is
// dropped), failing (503) or up, and records what it received when up.
type hookReceiver struct {
	mu      sync.Mutex
	mode    string // "down", "503" or "up"
	tries   int
	headers []http.Header
	bodies  [][]byte
}

func (r *hookReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	b, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tries++
	switch r.mode {
	case "down":
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			conn.Close()
		}
	case "503":
		w.WriteHeader(http.StatusServiceUnavailable)
	default:
		r.headers = append(r.headers, req.Header.Clone())
		r.bodies = append(r.bodies, b)
	}
}

func (r *hookReceiver) set(mode string) {
	r.mu.Lock()
	r.mode = mode
	r.mu.Unlock()
}

// TestWebhookReceiverDown: while the receiver is down and then failing,
// every event of 20 messages (sent, delivered, and read or failed) is
// retried on the schedule; when it comes back, every event arrives exactly
// once, validly signed at the time of its delivery, each message's events
// in order. Nothing is lost.
func TestWebhookReceiverDown(t *testing.T) {
	t.Parallel()
	rcv := &hookReceiver{mode: "down"}
	srv := httptest.NewServer(rcv)
	t.Cleanup(srv.Close)
	store := memstore.New()
	clock := newFakeClock(t0)
	prov := newScripted()
	svc, err := messaging.New(store, prov, &messaging.Options{Clock: clock.Now, SecretKey: make([]byte, 32),
		Dispatch: messaging.DispatchOptions{PerSenderRate: -1}, Webhooks: messaging.WebhookOptions{AllowLoopback: true}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := svc.CreateWorkspace(ctx, &messaging.CreateWorkspaceParams{ID: "acme", Channels: svc.Channels()}); err != nil {
		t.Fatal(err)
	}
	_, secret, err := svc.Workspace("acme").Webhooks.Create(ctx, &messaging.WebhookCreateParams{URL: srv.URL + "/hooks"})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var published []string // event ids, as published in process
	unsubscribe := svc.Subscribe(func(_ context.Context, ev *messaging.Event) {
		mu.Lock()
		published = append(published, ev.ID)
		mu.Unlock()
	})
	defer unsubscribe()
	ws := svc.Workspace("acme")
	const n = 20
	for i := range n {
		if _, err := ws.Messages.Send(ctx, &messaging.SendParams{Channel: "whatsapp", To: fmt.Sprintf("+2547123456%02d", i), Type: "text", Text: "hi"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := svc.DispatchDue(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		m, err := store.MessageGetByProviderID(ctx, "wamid."+strconv.Itoa(i+1))
		if err != nil {
			t.Fatal(err)
		}
		updates := []messaging.ProviderStatus{{ProviderMessageID: m.ProviderMessageID, Status: "delivered"}, {ProviderMessageID: m.ProviderMessageID, Status: "read"}}
		if i%5 == 0 {
			updates[1] = messaging.ProviderStatus{ProviderMessageID: m.ProviderMessageID, Status: "failed", Code: "131026", Text: "Message undeliverable"}
		}
		for _, u := range updates {
			if _, err := svc.ApplyProviderStatus(ctx, &u); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(published) != 3*n {
		t.Fatalf("%d events published, want %d", len(published), 3*n)
	}
	deliver := func() int {
		t.Helper()
		total := 0
		for {
			k, err := svc.DeliverWebhooksDue(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if k == 0 {
				return total
			}
			total += k
		}
	}
	// Down for the first two attempts, failing for the third: each
	// attempt tries the first event of every message (later events wait
	// behind it), and nothing is tried before the schedule says.
	for i, step := range []struct {
		mode string
		wait time.Duration
	}{{"down", 0}, {"down", 5 * time.Second}, {"503", 5 * time.Minute}} {
		rcv.set(step.mode)
		clock.Advance(step.wait)
		if got := deliver(); got != n {
			t.Fatalf("attempt %d (%s): %d deliveries attempted, want %d", i+1, step.mode, got, n)
		}
		if got := deliver(); got != 0 {
			t.Fatalf("attempt %d: %d more attempted before the next retry", i+1, got)
		}
	}
	rcv.set("up")
	clock.Advance(30 * time.Minute)
	if got := deliver(); got != 3*n {
		t.Fatalf("after the receiver came back: %d delivered, want %d", got, 3*n)
	}
	clock.Advance(48 * time.Hour)
	if got := deliver(); got != 0 {
		t.Errorf("%d deliveries after all were delivered", got)
	}
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	if rcv.tries != 3*n+3*n {
		t.Errorf("receiver saw %d requests, want %d (3 failed rounds of %d, then %d)", rcv.tries, 6*n, n, 3*n)
	}
	var received []string
	last := map[string]string{} // message id -> last status received
	order := map[string]int{"sent": 1, "delivered": 2, "read": 3, "failed": 3}
	for i, h := range rcv.headers {
		ts, _ := strconv.ParseInt(h.Get("webhook-timestamp"), 10, 64)
		if ts != clock.Now().Add(-48*time.Hour).Unix() {
			t.Errorf("delivery %d signed at %d, not at its delivery", i, ts)
		}
		if err := webhooksig.Verify(secret, h, rcv.bodies[i], time.Unix(ts, 0), 0); err != nil {
			t.Errorf("delivery %d does not verify: %v", i, err)
		}
		var ev struct {
			ID   string
			Data struct {
				MessageID string `json:"message_id"`
				Status    string
			}
		}
		if err := json.Unmarshal(rcv.bodies[i], &ev); err != nil {
			t.Fatal(err)
		}
		if ev.ID != h.Get("webhook-id") {
			t.Errorf("delivery %d: webhook-id %q, payload id %q", i, h.Get("webhook-id"), ev.ID)
		}
		if order[ev.Data.Status] <= order[last[ev.Data.MessageID]] {
			t.Errorf("message %s: %s arrived after %s", ev.Data.MessageID, ev.Data.Status, last[ev.Data.MessageID])
		}
		last[ev.Data.MessageID] = ev.Data.Status
		received = append(received, ev.ID)
	}
	slices.Sort(received)
	slices.Sort(published)
	if !slices.Equal(received, published) {
		t.Errorf("received %d events, published %d: not the same set (lost or duplicated)", len(received), len(published))
	}
}
