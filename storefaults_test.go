package messaging_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/store/memstore"
)

// The storage-fault tests: a store whose claims or outcome writes fail. A
// failed claim must hand nothing over and make the worker back off; a
// failed outcome write must be retried while the lease holds, so that the
// provider (or the webhook endpoint) gets the work once. Time is the
// injected clock, and the workers wait through Options.Sleep, which moves
// it.

// errStorage is the storage fault the faulty store reports.
var errStorage = errors.New("storage fault: connection reset by peer")

// faultyStore wraps a store with switchable faults. A failing claim runs
// the real claim and then reports failure together with its rows: the
// worst a store can do, and what a claim whose commit failed once did.
type faultyStore struct {
	driver.Store
	mu             sync.Mutex
	failClaims     bool // MessageClaim
	bareFail       bool // a failing MessageClaim claims nothing
	failHookClaims bool // WebhookClaim
	failSent       int  // the next n writes of status sent fail
	failRecords    int  // the next n WebhookRecord calls fail
	claims         int
	hookClaims     int
	sentWrites     int
}

func (s *faultyStore) MessageClaim(ctx context.Context, p *driver.MessageClaimParams) ([]*messaging.Message, error) {
	s.mu.Lock()
	if s.failClaims && s.bareFail {
		s.claims++
		s.mu.Unlock()
		return nil, errStorage
	}
	s.mu.Unlock()
	rows, err := s.Store.MessageClaim(ctx, p)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.claims++
	if s.failClaims && err == nil {
		return rows, errStorage
	}
	return rows, err
}

func (s *faultyStore) WebhookClaim(ctx context.Context, p *driver.WebhookClaimParams) ([]*messaging.WebhookDelivery, error) {
	rows, err := s.Store.WebhookClaim(ctx, p)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hookClaims++
	if s.failHookClaims && err == nil {
		return rows, errStorage
	}
	return rows, err
}

// MessageUpdateStatuses fails a whole batch holding a change to sent
// while failSent lasts (each such batch takes one off failSent).
func (s *faultyStore) MessageUpdateStatuses(ctx context.Context, ps []*driver.MessageStatusParams) ([]driver.MessageStatusResult, error) {
	s.mu.Lock()
	fail := false
	for _, p := range ps {
		if p.To == messaging.StatusSent {
			s.sentWrites++
			fail = fail || s.failSent > 0
		}
	}
	if fail {
		s.failSent--
	}
	s.mu.Unlock()
	if fail {
		return nil, errStorage
	}
	return s.Store.MessageUpdateStatuses(ctx, ps)
}

func (s *faultyStore) WebhookRecord(ctx context.Context, p *driver.WebhookRecordParams) error {
	s.mu.Lock()
	fail := s.failRecords > 0
	if fail {
		s.failRecords--
	}
	s.mu.Unlock()
	if fail {
		return errStorage
	}
	return s.Store.WebhookRecord(ctx, p)
}

func (s *faultyStore) set(f func(s *faultyStore)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s)
}

func (s *faultyStore) get(f func(s *faultyStore) int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return f(s)
}

// sleeper is an Options.Sleep that advances the test clock instead of
// waiting. Once the clock reaches until (when set), it closes reached and
// waits for the worker to be stopped.
type sleeper struct {
	clock   *fakeClock
	mu      sync.Mutex
	waits   []time.Duration
	until   time.Time
	reached chan struct{}
	once    sync.Once
}

func newSleeper(clock *fakeClock, until time.Time) *sleeper {
	return &sleeper{clock: clock, until: until, reached: make(chan struct{})}
}

func (s *sleeper) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.waits = append(s.waits, d)
	s.mu.Unlock()
	s.clock.Advance(d)
	if !s.until.IsZero() && !s.clock.Now().Before(s.until) {
		s.once.Do(func() { close(s.reached) })
		<-ctx.Done()
		return ctx.Err()
	}
	return nil
}

func (s *sleeper) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.waits)
}

func (s *sleeper) last() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.waits[len(s.waits)-1]
}

// logCounter counts log records by message.
type logCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (l *logCounter) Enabled(context.Context, slog.Level) bool { return true }
func (l *logCounter) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.n[r.Message]++
	return nil
}
func (l *logCounter) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logCounter) WithGroup(string) slog.Handler      { return l }
func (l *logCounter) count(msg string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n[msg]
}

type storeFaultFixture struct {
	ctx   context.Context
	svc   *messaging.Service
	store *faultyStore
	clock *fakeClock
	sleep *sleeper
	prov  *scriptedProvider
	logs  *logCounter
	ws    *messaging.Workspace
	hooks *hookReceiver
}

// setupStoreFaults builds a service on a faulty memstore whose workers
// sleep through the injected clock until until (zero: never stop).
func setupStoreFaults(t *testing.T, until time.Duration) *storeFaultFixture {
	t.Helper()
	clock := newFakeClock(t0)
	f := &storeFaultFixture{ctx: context.Background(), store: &faultyStore{Store: memstore.New()}, clock: clock,
		prov: newScripted(), logs: &logCounter{n: map[string]int{}}, hooks: &hookReceiver{mode: "up"}}
	f.sleep = newSleeper(clock, time.Time{})
	if until > 0 {
		f.sleep.until = t0.Add(until)
	}
	srv := httptest.NewServer(f.hooks)
	t.Cleanup(srv.Close)
	svc, err := messaging.New(f.store, f.prov, &messaging.Options{Clock: clock.Now, Sleep: f.sleep.sleep, Logger: slog.New(f.logs),
		// The sleeper moves the clock by every back-off, days in a test
		// whose claims fail for a few seconds: MaxAge must not expire the
		// messages meanwhile.
		SecretKey: make([]byte, 32), Dispatch: messaging.DispatchOptions{PerSenderRate: -1, Lease: time.Minute, MaxAge: 365 * 24 * time.Hour},
		Webhooks: messaging.WebhookOptions{AllowLoopback: true}})
	if err != nil {
		t.Fatal(err)
	}
	f.svc = svc
	if _, err := svc.CreateWorkspace(f.ctx, &messaging.CreateWorkspaceParams{ID: "acme", Channels: svc.Channels()}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.Workspace("acme").Webhooks.Create(f.ctx, &messaging.WebhookCreateParams{URL: srv.URL + "/hooks"}); err != nil {
		t.Fatal(err)
	}
	f.ws = svc.Workspace("acme")
	return f
}

func (f *storeFaultFixture) send(t *testing.T, n int) []string {
	t.Helper()
	var ids []string
	for i := range n {
		res, err := f.ws.Messages.Send(f.ctx, &messaging.SendParams{Channel: "whatsapp", To: "+25471234560" + string(rune('0'+i)), Type: "text", Text: "hi"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.MessageID)
	}
	return ids
}

// runUntilReached starts the background workers, waits until the sleeper
// has moved the clock to its end, and stops them.
func (f *storeFaultFixture) runUntilReached(t *testing.T) {
	t.Helper()
	if err := f.svc.Start(f.ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-f.sleep.reached:
	case <-time.After(20 * time.Second):
		t.Error("the worker never waited through Options.Sleep: it does not back off after a failed claim")
	}
	ctx, cancel := context.WithTimeout(f.ctx, 20*time.Second)
	defer cancel()
	if err := f.svc.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

func (f *storeFaultFixture) providerCalls(ids []string) int {
	n := 0
	for _, id := range ids {
		n += f.prov.callsOf(id)
	}
	return n
}

// checkBackoff checks the pace of a worker whose every claim failed for a
// minute of clock time: a growing wait up to the cap, so a dozen claims at
// most instead of one per poll (300) or a spin, and one log line per step.
func checkBackoff(t *testing.T, what string, claims int, sl *sleeper, logged int) {
	t.Helper()
	if claims < 3 || claims > 15 {
		t.Errorf("%s: %d failed claims in a minute; want a backoff (about 11: 0.25 s doubling to 10 s)", what, claims)
	}
	if last := sl.last(); last < 8*time.Second || last > 12*time.Second {
		t.Errorf("%s: last wait %v; want the cap of about 10 s", what, last)
	}
	if logged != claims {
		t.Errorf("%s: %d log lines for %d failed claims; want one per back-off step", what, logged, claims)
	}
}

// TestFailedClaimHandsNothingOver: a claim that reports failure (here with
// the rows it claimed, as a claim whose commit failed once did) hands none
// of them to the provider, and the dispatcher backs off instead of
// claiming again at once. When claims work again, each message is sent
// once: after the confirmation window, since the failed claims marked the
// rows they took possibly sent.
func TestFailedClaimHandsNothingOver(t *testing.T) {
	t.Parallel()
	f := setupStoreFaults(t, time.Minute)
	ids := f.send(t, 4)
	f.store.set(func(s *faultyStore) { s.failClaims = true })
	f.runUntilReached(t)
	if n := f.providerCalls(ids); n != 0 {
		t.Errorf("provider got %d messages from failed claims; want 0", n)
	}
	checkBackoff(t, "dispatcher", f.store.get(func(s *faultyStore) int { return s.claims }), f.sleep,
		f.logs.count("dispatcher: claim failed; backing off"))

	f.store.set(func(s *faultyStore) { s.failClaims = false })
	f.clock.Advance(2 * time.Minute) // the memstore leases of the failed claims end
	if _, err := f.svc.DispatchDue(f.ctx); err != nil {
		t.Fatal(err)
	}
	if n := f.providerCalls(ids); n != 0 {
		t.Errorf("the provider got %d messages within the confirmation window of the failed claims; want 0", n)
	}
	f.clock.Advance(5 * time.Minute)
	if _, err := f.svc.DispatchDue(f.ctx); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if n := f.prov.callsOf(id); n != 1 {
			t.Errorf("%s handed to the provider %d times; want 1", id, n)
		}
	}
}

// TestFailedWebhookClaimDeliversNothing: the same for the webhook sender,
// which used to claim again at once after a failure.
func TestFailedWebhookClaimDeliversNothing(t *testing.T) {
	t.Parallel()
	f := setupStoreFaults(t, time.Minute)
	f.send(t, 3)
	if _, err := f.svc.DispatchDue(f.ctx); err != nil { // sent: one event each
		t.Fatal(err)
	}
	f.store.set(func(s *faultyStore) { s.failHookClaims = true })
	f.runUntilReached(t)
	f.hooks.mu.Lock()
	got := len(f.hooks.bodies)
	f.hooks.mu.Unlock()
	if got != 0 {
		t.Errorf("%d webhook deliveries from failed claims; want 0", got)
	}
	checkBackoff(t, "webhooks", f.store.get(func(s *faultyStore) int { return s.hookClaims }), f.sleep,
		f.logs.count("webhooks: claim failed; backing off"))

	f.store.set(func(s *faultyStore) { s.failHookClaims = false })
	f.clock.Advance(2 * time.Minute)
	if _, err := f.svc.DeliverWebhooksDue(f.ctx); err != nil {
		t.Fatal(err)
	}
	f.hooks.mu.Lock()
	defer f.hooks.mu.Unlock()
	seen := map[string]int{}
	for _, h := range f.hooks.headers {
		seen[h.Get("webhook-id")]++
	}
	if len(seen) != 3 {
		t.Errorf("%d events delivered after recovery; want 3", len(seen))
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("event %s delivered %d times; want 1", id, n)
		}
	}
}

// TestFailedSentWriteIsRetried: when recording sent fails three times, the
// write is retried (with a growing wait) and the provider gets the message
// once; nothing is handed over again after the lease.
func TestFailedSentWriteIsRetried(t *testing.T) {
	t.Parallel()
	f := setupStoreFaults(t, 0)
	ids := f.send(t, 1)
	f.store.set(func(s *faultyStore) { s.failSent = 3 })
	if _, err := f.svc.DispatchDue(f.ctx); err != nil {
		t.Fatal(err)
	}
	m, err := f.ws.Messages.Get(f.ctx, ids[0])
	if err != nil {
		t.Fatal(err)
	}
	if m.Status != messaging.StatusSent || !strings.HasPrefix(m.ProviderMessageID, "wamid.") {
		t.Fatalf("after three failed writes: status %s provider id %q; want sent with the provider's id", m.Status, m.ProviderMessageID)
	}
	if w := f.store.get(func(s *faultyStore) int { return s.sentWrites }); w != 4 {
		t.Errorf("%d writes of sent; want 4 (three failures, one success)", w)
	}
	if n := f.sleep.count(); n != 3 {
		t.Errorf("%d waits between the writes; want 3", n)
	}
	f.clock.Advance(10 * time.Minute)
	if _, err := f.svc.DispatchDue(f.ctx); err != nil {
		t.Fatal(err)
	}
	if n := f.prov.callsOf(ids[0]); n != 1 {
		t.Errorf("provider got the message %d times; want 1", n)
	}
	if n := f.logs.count("dispatcher: recording sent failed"); n != 0 {
		t.Errorf("%d failure lines for a write that succeeded on retry", n)
	}
}

// TestSentWriteFailingForTheWholeLease: when the store refuses the write
// for the whole lease, the retries stop when the lease ends (and are
// logged once); only then may the message be handed over again: the
// at-least-once window the README states.
func TestSentWriteFailingForTheWholeLease(t *testing.T) {
	t.Parallel()
	f := setupStoreFaults(t, 0)
	ids := f.send(t, 1)
	f.store.set(func(s *faultyStore) { s.failSent = 1 << 30 })
	if _, err := f.svc.DispatchDue(f.ctx); err != nil {
		t.Fatal(err)
	}
	if elapsed := f.clock.Now().Sub(t0); elapsed > time.Minute {
		t.Errorf("retried for %v; want no longer than the lease (1 min)", elapsed)
	} else if elapsed < 50*time.Second {
		t.Errorf("retried for only %v of a 1 min lease", elapsed)
	}
	if n := f.logs.count("dispatcher: recording sent failed"); n != 1 {
		t.Errorf("%d failure lines; want 1", n)
	}
	if n := f.prov.callsOf(ids[0]); n != 1 {
		t.Errorf("provider calls during the lease = %d; want 1", n)
	}
}

// TestFailedWebhookRecordIsRetried: a delivery whose outcome write fails
// twice is recorded on the third attempt and not delivered again.
func TestFailedWebhookRecordIsRetried(t *testing.T) {
	t.Parallel()
	f := setupStoreFaults(t, 0)
	f.send(t, 1)
	if _, err := f.svc.DispatchDue(f.ctx); err != nil {
		t.Fatal(err)
	}
	f.store.set(func(s *faultyStore) { s.failRecords = 2 })
	if _, err := f.svc.DeliverWebhooksDue(f.ctx); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(10 * time.Minute)
	if _, err := f.svc.DeliverWebhooksDue(f.ctx); err != nil {
		t.Fatal(err)
	}
	f.hooks.mu.Lock()
	defer f.hooks.mu.Unlock()
	if len(f.hooks.bodies) != 1 {
		t.Errorf("%d deliveries of one event; want 1", len(f.hooks.bodies))
	}
}
