package messaging_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/store/memstore"
	"github.com/ujumbe/messaging/store/sqlitestore"
)

// scriptedProvider answers each send with the next scripted result for its
// recipient (the last one repeats), and counts sends per message.
type scriptedProvider struct {
	metaChannels
	mu      sync.Mutex
	script  map[string][]error // by recipient; nil error = success
	calls   map[string]int     // by message id
	block   chan struct{}      // when non-nil, sends wait on it (or ctx)
	started chan string
	n       atomic.Int64
}

func newScripted() *scriptedProvider {
	return &scriptedProvider{script: map[string][]error{}, calls: map[string]int{}}
}

func (p *scriptedProvider) Send(ctx context.Context, _ *messaging.ChannelSender, m *messaging.Message) (*messaging.SendReceipt, error) {
	if p.started != nil {
		p.started <- m.ID
	}
	if p.block != nil {
		select {
		case <-p.block:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	p.mu.Lock()
	p.calls[m.ID]++
	s := p.script[m.To]
	var err error
	if len(s) > 0 {
		err = s[0]
		if len(s) > 1 {
			p.script[m.To] = s[1:]
		}
	}
	p.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return &messaging.SendReceipt{ProviderMessageID: fmt.Sprintf("wamid.%d", p.n.Add(1))}, nil
}

func (p *scriptedProvider) callsOf(id string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls[id]
}

type dispatchFixture struct {
	ctx   context.Context
	svc   *messaging.Service
	store driver.Store
	clock *fakeClock
	prov  *scriptedProvider
	ws    *messaging.Workspace
}

func setupDispatch(t *testing.T, store driver.Store, opts messaging.DispatchOptions) *dispatchFixture {
	t.Helper()
	f := &dispatchFixture{ctx: context.Background(), store: store, clock: newFakeClock(t0), prov: newScripted()}
	if opts.PerSenderRate == 0 {
		opts.PerSenderRate = -1
	}
	svc, err := messaging.New(store, f.prov, &messaging.Options{Clock: f.clock.Now, Dispatch: opts})
	if err != nil {
		t.Fatal(err)
	}
	f.svc = svc
	if _, err := svc.CreateWorkspace(f.ctx, &messaging.CreateWorkspaceParams{ID: "acme", Channels: svc.Channels()}); err != nil && messaging.ErrorCode(err) != messaging.CodeConflict {
		t.Fatal(err)
	}
	f.ws = svc.Workspace("acme")
	return f
}

func (f *dispatchFixture) send(t *testing.T, to string) string {
	t.Helper()
	res, err := f.ws.Messages.Send(f.ctx, &messaging.SendParams{Channel: "whatsapp", To: to, Type: "text", Text: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	return res.MessageID
}

func (f *dispatchFixture) get(t *testing.T, id string) *messaging.Message {
	t.Helper()
	m, err := f.ws.Messages.Get(f.ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func (f *dispatchFixture) dispatch(t *testing.T) int {
	t.Helper()
	n, err := f.svc.DispatchDue(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestDispatchOutcomes(t *testing.T) {
	t.Parallel()
	perm := func(code, text string) error { return &messaging.SendError{Code: code, Text: text} }
	retry := func(code, text string) error { return &messaging.SendError{Code: code, Text: text, Retryable: true} }
	tests := []struct {
		name       string
		script     []error
		wantStatus string
		wantReason string
		// wantRetry is the expected wait before the next attempt (+-20 %),
		// when the message is released for a retry.
		wantRetry time.Duration
	}{
		{"accepted", nil, "sent", "", 0},
		{"undeliverable is permanent", []error{perm("131026", "Message undeliverable")}, "failed", "[131026] Message undeliverable", 0},
		{"template missing parameter", []error{perm("131008", "Required parameter is missing")}, "failed", "[131008] Required parameter is missing", 0},
		{"unknown template", []error{perm("132001", "Template name does not exist in the translation")}, "failed", "[132001] Template name does not exist in the translation", 0},
		{"throttled 130429 retries", []error{retry("130429", "Rate limit hit")}, "queued", "", time.Second},
		{"pair rate 131056 retries", []error{retry("131056", "Pair rate limit hit")}, "queued", "", time.Second},
		{"retry-after wins over backoff", []error{&messaging.SendError{Code: "429", Text: "Too many requests", Retryable: true, RetryAfter: 30 * time.Second}}, "queued", "", 30 * time.Second},
		{"network error retries", []error{errors.New("dial tcp: connection refused")}, "queued", "", time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := setupDispatch(t, memstore.New(), messaging.DispatchOptions{})
			f.prov.script["+254712345678"] = append(tc.script, nil) // a retry succeeds
			id := f.send(t, "+254712345678")
			if n := f.dispatch(t); n != 1 {
				t.Fatalf("dispatched %d, want 1", n)
			}
			m := f.get(t, id)
			if m.Status != tc.wantStatus || m.FailureReason != tc.wantReason {
				t.Fatalf("status %q reason %q; want %q %q", m.Status, m.FailureReason, tc.wantStatus, tc.wantReason)
			}
			raw, _ := f.store.MessageGet(f.ctx, "acme", id)
			switch {
			case tc.wantStatus == "sent":
				if raw.ProviderMessageID == "" {
					t.Error("sent message has no provider message id")
				}
			case tc.wantRetry > 0:
				wait := raw.DueAt.Sub(t0)
				if lo, hi := time.Duration(float64(tc.wantRetry)*0.79), time.Duration(float64(tc.wantRetry)*1.21); wait < lo || wait > hi {
					t.Errorf("retry in %v, want %v +-20%%", wait, tc.wantRetry)
				}
				if raw.LastError == "" || raw.LeaseOwner != "" {
					t.Errorf("released message: last error %q, lease owner %q", raw.LastError, raw.LeaseOwner)
				}
				if n := f.dispatch(t); n != 0 {
					t.Errorf("a message waiting for its retry was dispatched early (%d)", n)
				}
				f.clock.Advance(tc.wantRetry * 2)
				if n := f.dispatch(t); n != 1 {
					t.Errorf("the retry was not dispatched when due (%d)", n)
				}
				if m := f.get(t, id); m.Status != "sent" {
					t.Errorf("after a successful retry status is %q", m.Status)
				}
			}
		})
	}
}

func TestDispatchGivesUpAfterMaxAttempts(t *testing.T) {
	t.Parallel()
	f := setupDispatch(t, memstore.New(), messaging.DispatchOptions{MaxAttempts: 4, InitialBackoff: time.Second, MaxBackoff: time.Minute})
	f.prov.script["+254712345678"] = []error{&messaging.SendError{Code: "131000", Text: "Something went wrong", Retryable: true}}
	id := f.send(t, "+254712345678")
	var waits []time.Duration
	for range 10 {
		f.dispatch(t)
		raw, _ := f.store.MessageGet(f.ctx, "acme", id)
		if raw.Status != "queued" {
			break
		}
		waits = append(waits, raw.DueAt.Sub(f.clock.Now()))
		f.clock.Advance(raw.DueAt.Sub(f.clock.Now()))
	}
	m := f.get(t, id)
	if m.Status != "failed" || m.FailureReason != "[131000] Something went wrong" {
		t.Fatalf("after retries: %q %q", m.Status, m.FailureReason)
	}
	if got := f.prov.callsOf(id); got != 4 {
		t.Errorf("provider called %d times, want MaxAttempts = 4", got)
	}
	// Backoff doubles: about 1 s, 2 s, 4 s.
	for i, w := range waits {
		base := time.Second << i
		if w < base*79/100 || w > base*121/100 {
			t.Errorf("wait %d = %v, want %v +-20%%", i, w, base)
		}
	}
}

func TestDispatchGivesUpAfterMaxAge(t *testing.T) {
	t.Parallel()
	f := setupDispatch(t, memstore.New(), messaging.DispatchOptions{MaxAge: time.Hour, InitialBackoff: 40 * time.Minute, MaxBackoff: 40 * time.Minute})
	f.prov.script["+254712345678"] = []error{errors.New("connection reset")}
	id := f.send(t, "+254712345678")
	f.dispatch(t) // attempt 1 at t0, retry in ~40 min
	f.clock.Advance(50 * time.Minute)
	f.dispatch(t) // attempt 2 at 50 min, retry in ~40 min
	f.clock.Advance(50 * time.Minute)
	f.dispatch(t) // attempt 3 at 100 min > MaxAge: failed
	m := f.get(t, id)
	if m.Status != "failed" || m.FailureReason != "[unreachable] The channel provider could not be reached" {
		t.Fatalf("status %q reason %q", m.Status, m.FailureReason)
	}
}

func TestDispatchEventsAndFailedStatusCarryReason(t *testing.T) {
	t.Parallel()
	f := setupDispatch(t, memstore.New(), messaging.DispatchOptions{})
	var mu sync.Mutex
	var got []string
	f.svc.Subscribe(func(_ context.Context, e *messaging.Event) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, e.Data.(messaging.StatusEventData).PreviousStatus+">"+e.Data.(messaging.StatusEventData).Status+" "+e.Data.(messaging.StatusEventData).FailureReason)
	})
	f.prov.script["+254712340000"] = []error{&messaging.SendError{Code: "131026", Text: "Message undeliverable"}}
	f.send(t, "+254712345678")
	f.send(t, "+254712340000")
	f.dispatch(t)
	mu.Lock()
	defer mu.Unlock()
	want := map[string]bool{"queued>sent ": true, "queued>failed [131026] Message undeliverable": true}
	if len(got) != 2 || !want[got[0]] || !want[got[1]] || got[0] == got[1] {
		t.Errorf("events %q, want one queued>sent and one queued>failed with reason", got)
	}
}

// TestDispatchSurvivesKill kills a dispatcher mid-batch (its context is
// cancelled while sends are in flight), then starts a new Service on the same
// SQLite file: every message reaches a final state, none is lost, and the
// only messages handed to the provider twice are the ones in flight at the
// kill.
func TestDispatchSurvivesKill(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "db.sqlite")
	ctx := context.Background()
	st1, err := sqlitestore.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	f1 := setupDispatch(t, st1, messaging.DispatchOptions{Workers: 4, SenderInFlight: 4, Lease: time.Minute, SendTimeout: 30 * time.Second, PollInterval: time.Millisecond})
	const n = 40
	ids := make([]string, n)
	for i := range n {
		ids[i] = f1.send(t, fmt.Sprintf("+2547123456%02d", i))
	}
	// Every send hangs until the kill.
	f1.prov.started = make(chan string, n)
	f1.prov.block = make(chan struct{})
	runCtx, kill := context.WithCancel(ctx)
	if err := f1.svc.Start(runCtx); err != nil {
		t.Fatal(err)
	}
	inFlight := map[string]bool{}
	for range 4 { // all four workers are mid-send
		inFlight[<-f1.prov.started] = true
	}
	kill()
	if err := f1.svc.Close(ctx); err != nil {
		t.Fatal(err)
	}
	st1.Close()
	close(f1.prov.started) // Close returned: no send runs any more
	for id := range f1.prov.started {
		inFlight[id] = true
	}
	if len(inFlight) != 4 || f1.prov.n.Load() != 0 {
		t.Fatalf("before the kill %d messages were handed over and %d completed; want 4 and 0", len(inFlight), f1.prov.n.Load())
	}

	st2, err := sqlitestore.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	f2 := setupDispatch(t, st2, messaging.DispatchOptions{Workers: 4, Lease: time.Minute, SendTimeout: 30 * time.Second})
	f2.clock.Advance(2 * time.Minute) // the dead dispatcher's leases run out
	f2.dispatch(t)
	// The messages the dead dispatcher claimed may have been sent: they
	// wait for a confirmation until the window ends, then go out again.
	f2.clock.Advance(5 * time.Minute)
	f2.dispatch(t)
	for _, id := range ids {
		m, err := f2.ws.Messages.Get(ctx, id)
		if err != nil {
			t.Fatalf("message %s lost: %v", id, err)
		}
		if m.Status != "sent" {
			t.Errorf("message %s is %s after restart, want sent", id, m.Status)
		}
	}
	if got := f2.prov.n.Load(); got != n {
		t.Errorf("the new dispatcher sent %d messages, want all %d (none had completed before the kill)", got, n)
	}
	for _, id := range ids {
		handed, want := f2.prov.callsOf(id), 1
		if inFlight[id] {
			handed++
			want = 2
		}
		if handed != want {
			t.Errorf("message %s handed to the provider %d times, want %d (in flight at the kill: %v)", id, handed, want, inFlight[id])
		}
	}
}

func TestDispatchStartCloseDrains(t *testing.T) {
	t.Parallel()
	f := setupDispatch(t, memstore.New(), messaging.DispatchOptions{Workers: 3, SenderInFlight: 3, PollInterval: time.Millisecond})
	f.prov.started = make(chan string, 10)
	f.prov.block = make(chan struct{})
	ids := []string{f.send(t, "+254712345601"), f.send(t, "+254712345602"), f.send(t, "+254712345603")}
	if err := f.svc.Start(f.ctx); err != nil {
		t.Fatal(err)
	}
	if err := f.svc.Start(f.ctx); err == nil {
		t.Error("Start twice succeeded")
	}
	for range 3 {
		<-f.prov.started
	}
	closed := make(chan error)
	go func() { closed <- f.svc.Close(context.Background()) }()
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) while sends were in flight", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(f.prov.block) // let the in-flight sends finish
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if m := f.get(t, id); m.Status != "sent" {
			t.Errorf("%s: %s after a draining Close, want sent", id, m.Status)
		}
	}
}

func TestDispatchPacingPerSender(t *testing.T) {
	t.Parallel()
	// 50 messages per second with a burst of 50: 150 messages need at least
	// 2 s of real time. Only this lower bound is asserted.
	f := setupDispatch(t, memstore.New(), messaging.DispatchOptions{Workers: 16, PerSenderRate: 50})
	for i := range 150 {
		f.send(t, fmt.Sprintf("+254712345%03d", i))
	}
	start := time.Now()
	if n := f.dispatch(t); n != 150 {
		t.Fatalf("dispatched %d", n)
	}
	if el := time.Since(start); el < 1900*time.Millisecond {
		t.Errorf("150 messages at 50/s took %v, want at least 2 s", el)
	}
}

// TestDispatchLeavesAMessageItsLeaseNoLongerCovers claims two messages for
// one worker; the first send takes longer than the lease minus
// SendTimeout, so the second is not sent on that claim (another claim could
// take it before its send ended): it is put back untried and sent by the
// next claim, under a lease of its own.
func TestDispatchLeavesAMessageItsLeaseNoLongerCovers(t *testing.T) {
	t.Parallel()
	f := setupDispatch(t, memstore.New(), messaging.DispatchOptions{Workers: 1, BatchSize: 2, Lease: time.Minute, SendTimeout: 30 * time.Second})
	f.prov.block, f.prov.started = make(chan struct{}), make(chan string, 4)
	first, second := f.send(t, "+254700000001"), f.send(t, "+254700000002")
	done := make(chan int, 1)
	go func() { done <- f.dispatch(t) }()
	if got := <-f.prov.started; got != first {
		t.Fatalf("first send: %s, want %s", got, first)
	}
	f.clock.Advance(30*time.Second + time.Millisecond) // 29.999 s of the second's lease left
	close(f.prov.block)
	<-done
	raw, _ := f.store.MessageGet(f.ctx, "acme", second)
	if n := f.prov.callsOf(second); n != 1 || raw.Status != messaging.StatusSent || raw.Attempts != 1 {
		t.Fatalf("second message: %d sends, %s, %d attempts; want one send on a claim of its own, sent, 1 attempt (the first claim's taken back)", n, raw.Status, raw.Attempts)
	}
	if n := f.prov.callsOf(first); n != 1 {
		t.Errorf("first message: %d sends, want 1", n)
	}
}
