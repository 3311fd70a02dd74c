package messaging_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ujumbe/messaging/internal/defaults"
	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/store/memstore"
)

// hangFixture is a Service on memstore whose fake provider accepts sends
// and, after HangNext, does not answer them (the send times out after
// 20 ms of real time); the fake never reports on its own.
type hangFixture struct {
	ctx   context.Context
	svc   *messaging.Service
	store driver.Store
	clock *fakeClock
	prov  *fakeprovider.Provider
	ws    *messaging.Workspace
}

const testConfirmWindow = 5 * time.Minute

func setupHang(t *testing.T, store driver.Store) *hangFixture {
	t.Helper()
	f := &hangFixture{ctx: context.Background(), store: store, clock: newFakeClock(t0)}
	f.prov = fakeprovider.NewWithOptions(&fakeprovider.Options{Clock: f.clock.Now, DeliveredAfter: -1})
	svc, err := messaging.New(store, f.prov, &messaging.Options{Clock: f.clock.Now, Sleep: newSleeper(f.clock, time.Time{}).sleep,
		Dispatch: messaging.DispatchOptions{PerSenderRate: -1, SendTimeout: 20 * time.Millisecond, Lease: time.Minute, ConfirmWindow: testConfirmWindow}})
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

func (f *hangFixture) send(t *testing.T) string {
	t.Helper()
	res, err := f.ws.Messages.Send(f.ctx, &messaging.SendParams{Channel: "whatsapp", To: "+254712345678", Type: "text", Text: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	return res.MessageID
}

func (f *hangFixture) dispatch(t *testing.T) {
	t.Helper()
	if _, err := f.svc.DispatchDue(f.ctx); err != nil {
		t.Fatal(err)
	}
}

func (f *hangFixture) stored(t *testing.T, id string) *messaging.Message {
	t.Helper()
	m, err := f.store.MessageGet(f.ctx, "acme", id)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// requests counts the provider's requests for message id.
func (f *hangFixture) requests(id string) int {
	n := 0
	for _, m := range f.prov.Sent() {
		if m.ID == id {
			n++
		}
	}
	return n
}

// report applies the provider's report of the k-th accepted send (from 1)
// with the message id it echoes.
func (f *hangFixture) report(t *testing.T, id string, k int, status string) (bool, error) {
	t.Helper()
	return f.svc.ApplyProviderStatus(f.ctx, &messaging.ProviderStatus{ProviderMessageID: fakeID(k), Status: status, WorkspaceID: "acme", MessageID: id})
}

func fakeID(k int) string { return fmt.Sprintf("wamid.fake.%06d", k) }

// TestUnknownOutcomeConfirmedByReport: the provider accepts the message
// and answers after the timeout; its status report, carrying our message
// id, records the message sent with the provider's id, and nothing is sent
// again, before or after the confirmation window.
func TestUnknownOutcomeConfirmedByReport(t *testing.T) {
	t.Parallel()
	f := setupHang(t, memstore.New())
	f.prov.HangNext(1)
	id := f.send(t)
	f.dispatch(t)
	m := f.stored(t, id)
	if m.Status != messaging.StatusQueued || m.UnconfirmedSince == nil || !m.DueAt.Equal(t0.Add(testConfirmWindow)) {
		t.Fatalf("after the unanswered send: %s, mark %v, due %v; want queued, marked, due at the window's end", m.Status, m.UnconfirmedSince, m.DueAt)
	}
	f.clock.Advance(time.Minute)
	if changed, err := f.report(t, id, 1, messaging.StatusSent); err != nil || !changed {
		t.Fatalf("the correlated report: %v, %v; want applied", changed, err)
	}
	m = f.stored(t, id)
	if m.Status != messaging.StatusSent || m.ProviderMessageID != fakeID(1) {
		t.Fatalf("after the report: %s %q; want sent with %q", m.Status, m.ProviderMessageID, fakeID(1))
	}
	f.clock.Advance(2 * testConfirmWindow)
	f.dispatch(t)
	if n := f.requests(id); n != 1 {
		t.Errorf("%d provider requests; want 1", n)
	}
	// The delivered report that follows finds the message by its id.
	if changed, err := f.svc.ApplyProviderStatus(f.ctx, &messaging.ProviderStatus{ProviderMessageID: fakeID(1), Status: messaging.StatusDelivered}); err != nil || !changed {
		t.Errorf("delivered: %v, %v", changed, err)
	}
}

// TestUnknownOutcomeResentOnceAfterTheWindow: with no report, nothing is
// sent before the window ends, and one resend after it (policy resend,
// the default). A confirmation of the first send arriving after the
// resend is not applied.
func TestUnknownOutcomeResentOnceAfterTheWindow(t *testing.T) {
	t.Parallel()
	f := setupHang(t, memstore.New())
	f.prov.HangNext(1)
	id := f.send(t)
	f.dispatch(t)
	f.clock.Advance(testConfirmWindow - time.Millisecond)
	f.dispatch(t)
	if n := f.requests(id); n != 1 {
		t.Fatalf("%d requests before the window ended; want 1", n)
	}
	f.clock.Advance(time.Millisecond)
	f.dispatch(t)
	m := f.stored(t, id)
	if n := f.requests(id); n != 2 || m.Status != messaging.StatusSent || m.ProviderMessageID != fakeID(2) {
		t.Fatalf("after the window: %d requests, %s %q; want 2, sent with %q", n, m.Status, m.ProviderMessageID, fakeID(2))
	}
	if changed, err := f.report(t, id, 1, messaging.StatusDelivered); err != nil || changed {
		t.Errorf("a late confirmation of the first send: %v, %v; want not applied", changed, err)
	}
	if m := f.stored(t, id); m.ProviderMessageID != fakeID(2) || m.Status != messaging.StatusSent {
		t.Errorf("after the late confirmation: %s %q; want sent with %q", m.Status, m.ProviderMessageID, fakeID(2))
	}
}

// TestLeaseEndsWhileSentWriteFails: the provider answered, the store
// refused the sent write for the whole lease; the next claim sends nothing
// before the window ends, and the report confirms the first send.
func TestLeaseEndsWhileSentWriteFails(t *testing.T) {
	t.Parallel()
	f := setupStoreFaults(t, 0)
	ids := f.send(t, 1)
	f.store.set(func(s *faultyStore) { s.failSent = 1 << 30 })
	if _, err := f.svc.DispatchDue(f.ctx); err != nil {
		t.Fatal(err)
	}
	f.store.set(func(s *faultyStore) { s.failSent = 0 })
	f.clock.Advance(time.Minute) // the lease has ended
	for range 3 {
		if _, err := f.svc.DispatchDue(f.ctx); err != nil {
			t.Fatal(err)
		}
		if n := f.prov.callsOf(ids[0]); n != 1 {
			t.Fatalf("%d provider calls within the window; want 1", n)
		}
		f.clock.Advance(time.Minute)
	}
	if changed, err := f.svc.ApplyProviderStatus(f.ctx, &messaging.ProviderStatus{ProviderMessageID: "wamid.1", Status: messaging.StatusDelivered, WorkspaceID: "acme", MessageID: ids[0]}); err != nil || !changed {
		t.Fatalf("the correlated report: %v, %v", changed, err)
	}
	f.clock.Advance(time.Hour)
	if _, err := f.svc.DispatchDue(f.ctx); err != nil {
		t.Fatal(err)
	}
	m, _ := f.store.MessageGet(f.ctx, "acme", ids[0])
	if n := f.prov.callsOf(ids[0]); n != 1 || m.Status != messaging.StatusDelivered || m.ProviderMessageID != "wamid.1" {
		t.Errorf("%d calls, %s %q; want 1, delivered with wamid.1", n, m.Status, m.ProviderMessageID)
	}
}

// TestCrashBeforeTheAnswer: a claim whose dispatcher died (its lease runs
// out with no outcome) leaves the mark; the next dispatcher sends nothing
// within the window, then resends once.
func TestCrashBeforeTheAnswer(t *testing.T) {
	t.Parallel()
	f := setupHang(t, memstore.New())
	id := f.send(t)
	if got, err := f.store.MessageClaim(f.ctx, &driver.MessageClaimParams{Owner: "dead", Now: f.clock.Now(), Lease: time.Minute, Limit: 1}); err != nil || len(got) != 1 {
		t.Fatalf("the dead dispatcher's claim: %v, %v", got, err)
	}
	f.clock.Advance(time.Minute)
	f.dispatch(t)
	if n := f.requests(id); n != 0 {
		t.Fatalf("%d requests after a dead claim, within the window; want 0", n)
	}
	f.clock.Advance(testConfirmWindow)
	f.dispatch(t)
	if n, m := f.requests(id), f.stored(t, id); n != 1 || m.Status != messaging.StatusSent || m.Attempts != 2 {
		t.Errorf("after the window: %d requests, %s, %d attempts; want 1, sent, 2 (the dead claim's and this one)", n, m.Status, m.Attempts)
	}
}

// gateProvider answers every send at once, except those of workspace
// "slow", which wait for release (or their context).
type gateProvider struct {
	metaChannels
	release chan struct{}
	mu      sync.Mutex
	sends   map[string]int // by workspace
	errs    map[string][]error
	n       atomic.Int64
}

func (p *gateProvider) Send(ctx context.Context, _ *messaging.ChannelSender, m *messaging.Message) (*messaging.SendReceipt, error) {
	p.mu.Lock()
	p.sends[m.WorkspaceID]++
	var err error
	if q := p.errs[m.WorkspaceID]; len(q) > 0 {
		err, p.errs[m.WorkspaceID] = q[0], q[1:]
	}
	p.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if m.WorkspaceID == "slow" {
		select {
		case <-p.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return &messaging.SendReceipt{ProviderMessageID: fmt.Sprintf("wamid.g%d", p.n.Add(1))}, nil
}

func (p *gateProvider) count(ws string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sends[ws]
}

func setupGate(t *testing.T, opts messaging.DispatchOptions, workspaces ...string) (*messaging.Service, *gateProvider, *fakeClock) {
	t.Helper()
	clock := newFakeClock(t0)
	prov := &gateProvider{release: make(chan struct{}), sends: map[string]int{}, errs: map[string][]error{}}
	opts.PerSenderRate = -1
	svc, err := messaging.New(memstore.New(), prov, &messaging.Options{Clock: clock.Now, Dispatch: opts})
	if err != nil {
		t.Fatal(err)
	}
	for _, ws := range workspaces {
		if _, err := svc.CreateWorkspace(context.Background(), &messaging.CreateWorkspaceParams{ID: ws, Channels: svc.Channels()}); err != nil {
			t.Fatal(err)
		}
	}
	return svc, prov, clock
}

func sendN(t *testing.T, svc *messaging.Service, ws string, n int) {
	t.Helper()
	for range n {
		if _, err := svc.Workspace(ws).Messages.Send(context.Background(), &messaging.SendParams{Channel: "whatsapp", To: "+254712345678", Type: "text", Text: "hi"}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestThrottledSenderIsPaused: a 429 with Retry-After pauses every send
// of that sender (not only the refused message) until the time asked;
// other senders go on.
func TestThrottledSenderIsPaused(t *testing.T) {
	t.Parallel()
	svc, prov, clock := setupGate(t, messaging.DispatchOptions{Workers: 1}, "acme", "other")
	prov.errs["acme"] = []error{&messaging.SendError{Code: "130429", Text: "Rate limit hit", Retryable: true, Throttled: true, RetryAfter: time.Minute}}
	sendN(t, svc, "acme", 5)
	sendN(t, svc, "other", 2)
	if _, err := svc.DispatchDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	if a, o := prov.count("acme"), prov.count("other"); a != 1 || o != 2 {
		t.Fatalf("during the pause: %d requests of the throttled sender (want 1), %d of the other (want 2)", a, o)
	}
	clock.Advance(time.Minute)
	if _, err := svc.DispatchDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	if a := prov.count("acme"); a != 6 {
		t.Errorf("after the pause: %d requests of the throttled sender; want 6 (the refused one again and the other four)", a)
	}
}

// TestHangingSenderLeavesWorkers: a sender whose provider hangs holds at
// most SenderInFlight workers; another sender's messages go out meanwhile.
func TestHangingSenderLeavesWorkers(t *testing.T) {
	t.Parallel()
	svc, prov, _ := setupGate(t, messaging.DispatchOptions{Workers: 4, SenderInFlight: 2, SenderBusyDelay: time.Millisecond, SendTimeout: 30 * time.Second}, "slow", "fast")
	sendN(t, svc, "slow", 8)
	sendN(t, svc, "fast", 4)
	done := make(chan error, 1)
	go func() { _, err := svc.DispatchDue(context.Background()); done <- err }()
	deadline := time.After(10 * time.Second)
	for prov.count("fast") < 4 {
		select {
		case <-deadline:
			t.Fatalf("the other sender sent %d of 4 while the hanging one held %d sends", prov.count("fast"), prov.count("slow"))
		case <-time.After(time.Millisecond):
		}
	}
	if n := prov.count("slow"); n > 2 {
		t.Errorf("the hanging sender has %d sends in flight; want at most 2", n)
	}
	close(prov.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestUnknownOutcomeFailsUnderPolicyFail: with the workspace policy fail,
// a send whose outcome stays unknown through the window fails with
// [unconfirmed] and is not sent again.
func TestUnknownOutcomeFailsUnderPolicyFail(t *testing.T) {
	t.Parallel()
	f := setupHang(t, memstore.New())
	fail := record.UnconfirmedFail
	if _, err := f.svc.SetWorkspaceSettings(f.ctx, "acme", &messaging.WorkspaceSettings{UnconfirmedSends: &fail}); err != nil {
		t.Fatal(err)
	}
	f.prov.HangNext(1)
	id := f.send(t)
	f.dispatch(t)
	f.clock.Advance(testConfirmWindow)
	f.dispatch(t)
	m := f.stored(t, id)
	want := "[" + defaults.ProviderCodeUnconfirmed + "] The provider did not confirm the send within 5m0s; it may or may not have reached the recipient"
	if n := f.requests(id); n != 1 || m.Status != messaging.StatusFailed || m.FailureReason != want {
		t.Fatalf("after the window: %d requests, %s %q; want 1, failed %q", n, m.Status, m.FailureReason, want)
	}
	// A confirmation after the failure is not applied.
	if changed, err := f.report(t, id, 1, messaging.StatusDelivered); err != nil || changed {
		t.Errorf("a late confirmation: %v, %v; want not applied", changed, err)
	}
}

// readHookStore runs a hook once, after the first call of the wrapped method
// it is set on, to change the store between a read and a write.
type readHookStore struct {
	driver.Store
	mu            sync.Mutex
	onWorkspace   func()
	onMessageRead func()
}

func (s *readHookStore) take(f *func()) func() {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := *f
	*f = nil
	return h
}

func (s *readHookStore) WorkspaceGet(ctx context.Context, id string) (*messaging.WorkspaceInfo, error) {
	w, err := s.Store.WorkspaceGet(ctx, id)
	if h := s.take(&s.onWorkspace); h != nil {
		h()
	}
	return w, err
}

func (s *readHookStore) MessageGet(ctx context.Context, ws, id string) (*messaging.Message, error) {
	m, err := s.Store.MessageGet(ctx, ws, id)
	if h := s.take(&s.onMessageRead); h != nil {
		h()
	}
	return m, err
}

// TestConfirmationWinsOverTheUnconfirmedFailure: a report that confirms
// the send just as the window ends (after the dispatcher read the message,
// before it writes the failure) stays: the message is sent, not failed.
func TestConfirmationWinsOverTheUnconfirmedFailure(t *testing.T) {
	t.Parallel()
	hs := &readHookStore{Store: memstore.New()}
	f := setupHang(t, hs)
	fail := record.UnconfirmedFail
	if _, err := f.svc.SetWorkspaceSettings(f.ctx, "acme", &messaging.WorkspaceSettings{UnconfirmedSends: &fail}); err != nil {
		t.Fatal(err)
	}
	f.prov.HangNext(1)
	id := f.send(t)
	f.dispatch(t)
	f.clock.Advance(testConfirmWindow)
	hs.mu.Lock()
	hs.onWorkspace = func() { // the dispatcher reads the policy: the report lands
		if _, err := f.report(t, id, 1, messaging.StatusSent); err != nil {
			t.Error(err)
		}
	}
	hs.mu.Unlock()
	f.dispatch(t)
	if m := f.stored(t, id); m.Status != messaging.StatusSent || m.ProviderMessageID != fakeID(1) {
		t.Errorf("%s %q %q; want sent with %q", m.Status, m.FailureReason, m.ProviderMessageID, fakeID(1))
	}
}

// TestLateConfirmationDoesNotReplaceTheResend: a report of the first send
// that is read while the message is still queued, and written after the
// resend recorded its own id, leaves the resend's id.
func TestLateConfirmationDoesNotReplaceTheResend(t *testing.T) {
	t.Parallel()
	hs := &readHookStore{Store: memstore.New()}
	f := setupHang(t, hs)
	id := f.send(t)
	hs.mu.Lock()
	hs.onMessageRead = func() { // between the report's read and its write, the resend's answer
		if _, err := f.svc.UpdateStatus(f.ctx, &messaging.StatusUpdate{WorkspaceID: "acme", MessageID: id, Status: messaging.StatusSent, ProviderMessageID: "wamid.resend"}); err != nil {
			t.Error(err)
		}
	}
	hs.mu.Unlock()
	if changed, err := f.report(t, id, 1, messaging.StatusDelivered); err != nil || changed {
		t.Errorf("the first send's report: %v, %v; want not applied", changed, err)
	}
	if m := f.stored(t, id); m.ProviderMessageID != "wamid.resend" || m.Status != messaging.StatusSent {
		t.Errorf("%s %q; want sent with the resend's id", m.Status, m.ProviderMessageID)
	}
}
