package messaging_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/store/memstore"
	"github.com/ujumbe/messaging/webhooksig"
)

// Tests of paths of the webhook sender and the dispatcher that no other
// test reaches: a delivery that times out, a sealed secret that cannot be
// opened, a deleted endpoint, and a dispatcher whose claims fail.

// hookRecStore wraps a store and keeps the deliveries claimed and the
// outcomes recorded, as the store got them.
type hookRecStore struct {
	driver.Store
	mu      sync.Mutex
	claimed []messaging.WebhookDelivery
	records []driver.WebhookRecordParams
}

func (s *hookRecStore) WebhookClaim(ctx context.Context, p *driver.WebhookClaimParams) ([]*messaging.WebhookDelivery, error) {
	rows, err := s.Store.WebhookClaim(ctx, p)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range rows {
		s.claimed = append(s.claimed, *d)
	}
	return rows, err
}

func (s *hookRecStore) WebhookRecord(ctx context.Context, p *driver.WebhookRecordParams) error {
	s.mu.Lock()
	s.records = append(s.records, *p)
	s.mu.Unlock()
	return s.Store.WebhookRecord(ctx, p)
}

// outcome is what a test checks of a recorded delivery outcome.
type outcome struct {
	State      string
	LastStatus int
	LastError  string
	DueAt      time.Time
}

func (s *hookRecStore) outcomes() []outcome {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []outcome
	for _, r := range s.records {
		o := outcome{State: r.State, LastStatus: r.LastStatus, LastError: r.LastError}
		if r.State == record.DeliveryPending {
			o.DueAt = r.DueAt
		}
		out = append(out, o)
	}
	return out
}

func (s *hookRecStore) attempts() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []int
	for _, d := range s.claimed {
		out = append(out, d.Attempts)
	}
	return out
}

// hangingReceiver does not answer its first hang requests (it waits until
// the client gives up) and answers 200 to the others, which it records.
type hangingReceiver struct {
	mu      sync.Mutex
	hang    int
	tries   int
	got     []http.Header
	bodies  [][]byte
	release chan struct{}
}

func (r *hangingReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	b, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	r.tries++
	if r.hang > 0 {
		r.hang--
		r.mu.Unlock()
		select {
		case <-req.Context().Done():
		case <-r.release:
		}
		return
	}
	r.got = append(r.got, req.Header.Clone())
	r.bodies = append(r.bodies, b)
	r.mu.Unlock()
}

// hookService is a service over store, on the fake clock, that seals
// webhook secrets with key (nil: none) and delivers with o.
func hookService(t *testing.T, store driver.Store, clock *fakeClock, prov messaging.Provider, key []byte, o messaging.WebhookOptions) *messaging.Service {
	t.Helper()
	o.AllowLoopback = true
	svc, err := messaging.New(store, prov, &messaging.Options{Clock: clock.Now, SecretKey: key,
		Dispatch: messaging.DispatchOptions{PerSenderRate: -1}, Webhooks: o})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// TestWebhookTimeoutIsRetried: an endpoint that does not answer within
// WebhookOptions.Timeout costs one attempt, recorded as a failure with the
// error "timeout" and due again after the first wait of the schedule; the
// retry then delivers it, signed.
func TestWebhookTimeoutIsRetried(t *testing.T) {
	t.Parallel()
	rcv := &hangingReceiver{hang: 1, release: make(chan struct{})}
	srv := httptest.NewServer(rcv)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(rcv.release) }) // runs before srv.Close
	ctx := context.Background()
	clock := newFakeClock(t0)
	store := &hookRecStore{Store: memstore.New()}
	svc := hookService(t, store, clock, newScripted(), make([]byte, 32), messaging.WebhookOptions{Timeout: 100 * time.Millisecond})
	if _, err := svc.CreateWorkspace(ctx, &messaging.CreateWorkspaceParams{ID: "acme", Channels: svc.Channels()}); err != nil {
		t.Fatal(err)
	}
	_, secret, err := svc.Workspace("acme").Webhooks.Create(ctx, &messaging.WebhookCreateParams{URL: srv.URL + "/hook"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Workspace("acme").Messages.Send(ctx, textMsg("+254712345678")); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.DispatchDue(ctx); err != nil { // sent: one event
		t.Fatal(err)
	}

	start := time.Now()
	if n, err := svc.DeliverWebhooksDue(ctx); n != 1 || err != nil {
		t.Fatalf("DeliverWebhooksDue = %d, %v; want 1, nil", n, err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the attempt took %v; Timeout is 100 ms", d)
	}
	want := []outcome{{State: record.DeliveryPending, LastError: "timeout", DueAt: t0.Add(5 * time.Second)}}
	if d := cmp.Diff(want, store.outcomes()); d != "" {
		t.Fatalf("outcome of the attempt that timed out (-want +got):\n%s", d)
	}
	clock.Advance(5*time.Second - time.Millisecond)
	if n, err := svc.DeliverWebhooksDue(ctx); n != 0 || err != nil {
		t.Fatalf("before its due time: DeliverWebhooksDue = %d, %v; want 0, nil", n, err)
	}
	clock.Advance(time.Millisecond)
	if n, err := svc.DeliverWebhooksDue(ctx); n != 1 || err != nil {
		t.Fatalf("at its due time: DeliverWebhooksDue = %d, %v; want 1, nil", n, err)
	}
	want = append(want, outcome{State: record.DeliveryDelivered, LastStatus: 200})
	if d := cmp.Diff(want, store.outcomes()); d != "" {
		t.Errorf("outcomes (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]int{1, 2}, store.attempts()); d != "" {
		t.Errorf("attempts of the claims (-want +got):\n%s", d)
	}
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	if rcv.tries != 2 || len(rcv.got) != 1 {
		t.Fatalf("receiver saw %d requests, answered %d; want 2, 1", rcv.tries, len(rcv.got))
	}
	if err := webhooksig.Verify(secret, rcv.got[0], rcv.bodies[0], clock.Now(), 0); err != nil {
		t.Errorf("the retry does not verify: %v", err)
	}
}

// TestWebhookUnsealFailurePostsNothing: a service that cannot open the
// sealed secret of an endpoint (another SecretKey, or none, over the same
// store) posts nothing: the attempt is recorded as failed with the unseal
// error and scheduled for a retry, which a service with the right key then
// delivers, signed.
func TestWebhookUnsealFailurePostsNothing(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		key     []byte
		wantErr string
	}{
		{"other key", bytes.Repeat([]byte{1}, 32), "cipher: message authentication failed"},
		{"no key", nil, "messaging: cannot unseal webhook secret"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := setupHooks(t, true)
			f.send(t, "+254712345678")
			f.dispatch(t) // sent: one event
			rec := &hookRecStore{Store: f.store}
			other := hookService(t, rec, f.clock, f.prov, tc.key, messaging.WebhookOptions{})
			if n, err := other.DeliverWebhooksDue(f.ctx); n != 1 || err != nil {
				t.Fatalf("DeliverWebhooksDue with the wrong key = %d, %v; want 1, nil", n, err)
			}
			if n := f.rcv.count(); n != 0 {
				t.Fatalf("the endpoint got %d requests from a service that cannot open its secret; want 0", n)
			}
			want := []outcome{{State: record.DeliveryPending, LastError: tc.wantErr, DueAt: t0.Add(5 * time.Second)}}
			if d := cmp.Diff(want, rec.outcomes()); d != "" {
				t.Fatalf("outcome (-want +got):\n%s", d)
			}
			f.clock.Advance(5 * time.Second)
			if n := f.deliver(t); n != 1 {
				t.Fatalf("the service with the right key delivered %d; want 1 (the delivery was lost)", n)
			}
			f.rcv.mu.Lock()
			defer f.rcv.mu.Unlock()
			if len(f.rcv.got) != 1 {
				t.Fatalf("the endpoint got %d requests; want 1", len(f.rcv.got))
			}
			if err := webhooksig.Verify(f.secret, f.rcv.got[0], f.rcv.bodies[0], f.clock.Now(), 0); err != nil {
				t.Errorf("the delivery does not verify: %v", err)
			}
		})
	}
}

// TestDeleteWebhookEndpoint: deleting an endpoint removes it and its
// pending deliveries: nothing more is attempted or posted to it, while
// another endpoint of the workspace still gets every event.
func TestDeleteWebhookEndpoint(t *testing.T) {
	t.Parallel()
	f := setupHooks(t, true)
	other := &receiver{}
	srv := httptest.NewServer(other)
	t.Cleanup(srv.Close)
	kept, _, err := f.svc.Workspace("acme").Webhooks.Create(f.ctx, &messaging.WebhookCreateParams{URL: srv.URL + "/other"})
	if err != nil {
		t.Fatal(err)
	}
	eps, err := f.svc.Workspace("acme").Webhooks.List(f.ctx)
	if err != nil || len(eps) != 2 {
		t.Fatalf("Webhooks.List = %d, %v; want 2", len(eps), err)
	}
	gone := eps[0].ID
	if gone == kept.ID {
		gone = eps[1].ID
	}
	id := f.send(t, "+254712345678")
	f.dispatch(t) // sent: one event for each endpoint
	if _, err := f.svc.Workspace("acme").Webhooks.Delete(f.ctx, gone); err != nil {
		t.Fatal(err)
	}
	eps, err = f.svc.Workspace("acme").Webhooks.List(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range eps {
		ids = append(ids, e.ID)
	}
	if d := cmp.Diff([]string{kept.ID}, ids); d != "" {
		t.Errorf("endpoints after the delete (-want +got):\n%s", d)
	}
	m, err := f.store.MessageGet(f.ctx, "acme", id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.ApplyProviderStatus(f.ctx, &messaging.ProviderStatus{ProviderMessageID: m.ProviderMessageID, Status: "delivered"}); err != nil {
		t.Fatal(err)
	}
	total := 0
	for range 4 {
		total += f.deliver(t)
		f.clock.Advance(24 * time.Hour)
	}
	if total != 2 || other.count() != 2 {
		t.Errorf("%d attempted, %d received by the kept endpoint; want 2, 2 (sent, delivered)", total, other.count())
	}
	if n := f.rcv.count(); n != 0 {
		t.Errorf("the deleted endpoint got %d requests; want 0", n)
	}
	if _, err := f.svc.Workspace("acme").Webhooks.Delete(f.ctx, gone); messaging.ErrorCode(err) != messaging.CodeNotFound {
		t.Errorf("deleting it again: %v; want not_found", err)
	}
}

// TestDispatchClaimFailure: a claim that fails makes DispatchDue return an
// internal error and hands nothing over; Start backs off through
// Options.Sleep while the claims fail and sends each message once when the
// store recovers. The failing claim first returns the rows it claimed (the
// worst a store can do); under Start it claims nothing, so that no lease
// has to run out (a clock jump past the lease of a message in flight would
// rightly send it again). The rows of the first failing claim carry the
// claim's possibly-sent mark, so they go out once the confirmation window
// has passed.
func TestDispatchClaimFailure(t *testing.T) {
	t.Parallel()
	f := setupStoreFaults(t, 0)
	ids := f.send(t, 3)
	f.store.set(func(s *faultyStore) { s.failClaims = true })
	n, err := f.svc.DispatchDue(f.ctx)
	if n != 0 || messaging.ErrorCode(err) != messaging.CodeInternal || !errors.Is(err, errStorage) {
		t.Fatalf("DispatchDue with a failing claim = %d, %v; want 0 and an internal error wrapping the storage fault", n, err)
	}
	if n := f.providerCalls(ids); n != 0 {
		t.Fatalf("a failed claim handed %d messages to the provider; want 0", n)
	}

	f.clock.Advance(2 * time.Minute) // the leases of the failed claim end
	f.store.set(func(s *faultyStore) { s.bareFail = true })
	if err := f.svc.Start(f.ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.svc.Close(context.Background()) })
	waitFor(t, "three back-off waits through Options.Sleep", func() bool { return f.sleep.count() >= 3 })
	if n := f.providerCalls(ids); n != 0 {
		t.Fatalf("failed claims under Start handed %d messages to the provider; want 0", n)
	}
	if got := f.logs.count("dispatcher: claim failed; backing off"); got < 3 {
		t.Errorf("%d back-off log lines; want at least 3", got)
	}
	f.store.set(func(s *faultyStore) { s.failClaims = false })
	// The marks of the first claim (at t0) wait for the confirmation window.
	// The back-offs moved the clock; a jump from beyond the window would
	// pass the lease of a resend in flight, rightly sending it again.
	if d := t0.Add(5 * time.Minute).Sub(f.clock.Now()); d > 0 {
		f.clock.Advance(d)
	}
	waitFor(t, "every message sent after the store recovered", func() bool {
		for _, id := range ids {
			m, err := f.store.MessageGet(f.ctx, "acme", id)
			if err != nil || m.Status != messaging.StatusSent {
				return false
			}
		}
		return true
	})
	for _, id := range ids {
		if n := f.prov.callsOf(id); n != 1 {
			t.Errorf("%s handed to the provider %d times; want 1", id, n)
		}
	}
	if got := f.logs.count("dispatcher: claims succeed again"); got != 1 {
		t.Errorf("%d recovery log lines; want 1", got)
	}
}

// waitFor waits up to 10 s for cond, which must come true.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within 10 s: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
