package sms_test

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ujumbe/messaging/store/driver"

	"github.com/google/go-cmp/cmp"

	"github.com/ujumbe/messaging/internal/testlog"
	"github.com/ujumbe/messaging/sms"
	"github.com/ujumbe/messaging/store/memstore"
)

// lines returns the logged lines that contain msg.
func logLines(l *testlog.Buffer, msg string) []string {
	var out []string
	for line := range strings.Lines(l.String()) {
		if strings.Contains(line, msg) {
			out = append(out, strings.TrimSpace(line))
		}
	}
	return out
}

// scriptGateway wraps a gateway: resize, when set, changes the results of
// Send; reports, when set, answers DeliveryReport in turn (the last one
// again once they run out). It counts the calls of both.
type scriptGateway struct {
	sms.Gateway
	resize  func([]sms.GatewayResult) []sms.GatewayResult
	reports []*sms.Report

	mu          sync.Mutex
	sends       int
	reportCalls int
	refs        [][]string // the References of each Send
}

func (g *scriptGateway) Send(ctx context.Context, msgs []*sms.GatewayMessage) ([]sms.GatewayResult, error) {
	res, err := g.Gateway.Send(ctx, msgs)
	g.mu.Lock()
	defer g.mu.Unlock()
	g.sends++
	var refs []string
	for _, m := range msgs {
		refs = append(refs, m.Reference)
	}
	g.refs = append(g.refs, refs)
	if err == nil && g.resize != nil {
		res = g.resize(res)
	}
	return res, err
}

func (g *scriptGateway) DeliveryReport(ctx context.Context, id string) (*sms.Report, error) {
	g.mu.Lock()
	g.reportCalls++
	n := g.reportCalls
	g.mu.Unlock()
	if g.reports == nil {
		return g.Gateway.DeliveryReport(ctx, id)
	}
	r := *g.reports[min(n, len(g.reports))-1]
	return &r, nil
}

func (g *scriptGateway) counts() (sends, reports int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.sends, g.reportCalls
}

// pathEnv is an env whose service (svc) hands over to gw, a scriptGateway
// around the fake gateway, and logs to logs.
type pathEnv struct {
	*env
	gw   *scriptGateway
	logs *testlog.Buffer
	svc  *sms.SMS
}

// setupPath returns a pathEnv on store st (nil: a fresh memstore). o, when
// set, are the service's options; its Clock and Logger are replaced.
func setupPath(t *testing.T, st sms.Store, gw *scriptGateway, o *sms.Options) *pathEnv {
	t.Helper()
	if st == nil {
		st = memstore.New()
	}
	e := setup(t, &setupOpts{store: st})
	gw.Gateway = e.gw
	so := sms.Options{}
	if o != nil {
		so = *o
	}
	logs := &testlog.Buffer{}
	so.Clock = e.clk.Now
	so.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	svc, err := sms.New(e.store, gw, &so)
	if err != nil {
		t.Fatal(err)
	}
	return &pathEnv{env: e, gw: gw, logs: logs, svc: svc}
}

// msgState is what the scheduler decided for a stored message.
type msgState struct {
	Status, FailureReason, ClaimToken string
	Attempts                          int
	DueAt                             time.Time
	Sent                              bool // has a gateway message id
}

func (p *pathEnv) state(t *testing.T, number int64) msgState {
	t.Helper()
	m, err := p.store.SMSMessageGet(p.ctx, partner, number)
	if err != nil {
		t.Fatal(err)
	}
	return msgState{Status: m.Status, FailureReason: m.FailureReason, ClaimToken: m.ClaimToken, Attempts: m.Attempts, DueAt: m.DueAt, Sent: m.GatewayMessageID != ""}
}

func (p *pathEnv) sendN(t *testing.T, n int) []int64 {
	t.Helper()
	var out []int64
	for i := range n {
		res, err := p.svc.Send(p.ctx, &sms.SendParams{PartnerID: partner, APIKey: apikey, Mobile: kenya, Shortcode: "ACME", Message: "m" + strconv.Itoa(i)})
		if err != nil {
			t.Fatalf("Send: %v", err)
		}
		out = append(out, res.Number)
	}
	return out
}

// TestGatewayResultCountMismatchRetriesBatch: a gateway that answers a
// batch of two with one result or with three is not trusted for any of
// them: both messages go back to the queue for a retry after the first
// backoff (10 s), with the mismatch as reason and no refund, and are sent
// on the retry.
func TestGatewayResultCountMismatchRetriesBatch(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		results int
	}{{"fewer", 1}, {"more", 3}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			broken := true
			gw := &scriptGateway{resize: func(r []sms.GatewayResult) []sms.GatewayResult {
				if !broken {
					return r
				}
				if tc.results < len(r) {
					return r[:tc.results]
				}
				return append(r, make([]sms.GatewayResult, tc.results-len(r))...)
			}}
			p := setupPath(t, nil, gw, nil)
			nums := p.sendN(t, 2)
			n, err := p.svc.RunDue(p.ctx)
			if err != nil || n != 2 {
				t.Fatalf("RunDue: %d, %v; want 2, nil", n, err)
			}
			// The answer cannot be read: the outcome is unknown, so the
			// messages wait for the confirmation window.
			reason := "hand-over outcome unknown: " + sms.ErrUnknownOutcome.Error() + ": the gateway returned " + strconv.Itoa(tc.results) + " results for 2 messages"
			want := msgState{Status: sms.StatusQueued, FailureReason: reason, Attempts: 1, DueAt: base.Add(sms.DefaultConfirmWindow)}
			for _, num := range nums {
				if d := cmp.Diff(want, p.state(t, num)); d != "" {
					t.Errorf("message %d after a batch of 2 got %d results (-want +got):\n%s", num, tc.results, d)
				}
			}
			if b := p.balance(t); b != sms.Credits(98) {
				t.Errorf("balance %s, want 98.00 (nothing refunded, nothing failed)", b)
			}
			if got := logLines(p.logs, "sms: batch handed to gateway"); len(got) != 1 || !strings.Contains(got[0], "sent=0 retry=2 failed=0") {
				t.Errorf("batch log %q, want one line with sent=0 retry=2 failed=0", got)
			}

			broken = false
			p.clk.Add(sms.DefaultConfirmWindow)
			if n, err := p.svc.RunDue(p.ctx); err != nil || n != 2 {
				t.Fatalf("RunDue at the retry: %d, %v; want 2, nil", n, err)
			}
			want = msgState{Status: sms.StatusSent, Attempts: 2, DueAt: base.Add(sms.DefaultConfirmWindow + sms.DefaultLease), Sent: true}
			for _, num := range nums {
				if d := cmp.Diff(want, p.state(t, num)); d != "" {
					t.Errorf("message %d after the retry (-want +got):\n%s", num, d)
				}
			}
		})
	}
}

// TestOutcomeWriteFailingUntilLeaseEnd: when every write of the outcomes
// fails, the scheduler retries it (its waits move the injected clock) up to
// the lease's end, logs the failure once and RunDue reports it. The
// messages stay claimed (nobody hands them over again) until the lease
// ends; then they are claimed again and handed over with the same
// References, and recorded once the store works.
func TestOutcomeWriteFailingUntilLeaseEnd(t *testing.T) {
	t.Parallel()
	st := &completeFaultStore{Store: memstore.New(), fails: 1 << 30}
	var clk *clock
	var mu sync.Mutex
	sleeps := 0
	gw := &scriptGateway{}
	p := setupPath(t, st, gw, &sms.Options{Sleep: func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		sleeps++
		mu.Unlock()
		clk.Add(d)
		return ctx.Err()
	}})
	clk = p.clk
	nums := p.sendN(t, 2)
	leaseEnd := base.Add(sms.DefaultLease)

	n, err := p.svc.RunDue(p.ctx)
	if n != 2 || err == nil || err.Error() != "complete: storage fault: connection reset by peer" {
		t.Fatalf("RunDue: %d, %v; want 2 and the store's error", n, err)
	}
	now := p.clk.Now()
	// The waits are at most 5 s + 20 %: the last attempt is within 6 s of
	// the lease's end, and none is after it.
	if now.After(leaseEnd) || now.Before(leaseEnd.Add(-6*time.Second)) {
		t.Errorf("the retries ended at +%v; want within 6 s before the lease's end (+%v)", now.Sub(base), sms.DefaultLease)
	}
	st.mu.Lock()
	writes := st.calls
	st.mu.Unlock()
	if writes < 2 || writes != sleeps+1 {
		t.Errorf("%d writes and %d waits; want retries, one wait between two writes", writes, sleeps)
	}
	failed := logLines(p.logs, "sms: recording outcomes failed")
	if len(failed) != 1 || !strings.Contains(failed[0], "attempts="+strconv.Itoa(writes)) || !strings.Contains(failed[0], "connection reset by peer") {
		t.Errorf("failure log %q, want one line with attempts=%d and the store's error", failed, writes)
	}
	want := msgState{Status: sms.StatusSending, Attempts: 1, DueAt: leaseEnd}
	for _, num := range nums {
		got := p.state(t, num)
		if got.ClaimToken == "" {
			t.Errorf("message %d lost its claim", num)
		}
		got.ClaimToken = ""
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("message %d after the failed writes (-want +got):\n%s", num, d)
		}
	}

	// Until the lease ends nobody hands them over again.
	p.clk.Add(leaseEnd.Add(-time.Nanosecond).Sub(p.clk.Now()))
	if n, err := p.svc.RunDue(p.ctx); n != 0 || err != nil {
		t.Errorf("RunDue just before the lease's end: %d, %v; want 0, nil", n, err)
	}
	if sends, _ := gw.counts(); sends != 1 {
		t.Errorf("gateway Send called %d times before the lease ended; want 1", sends)
	}

	// At the lease's end they are claimed again but not handed over: the
	// first hand-over's outcome was never recorded, so its confirmation
	// window runs. After it they are handed over once more with the same
	// References (the default policy), and recorded.
	st.mu.Lock()
	st.fails = 0
	st.mu.Unlock()
	p.clk.Add(time.Nanosecond)
	if n, err := p.svc.RunDue(p.ctx); n != 2 || err != nil {
		t.Fatalf("RunDue at the lease's end: %d, %v; want 2 claimed, nil", n, err)
	}
	if sends, _ := gw.counts(); sends != 1 {
		t.Errorf("gateway Send called %d times in the confirmation window; want 1", sends)
	}
	p.clk.Add(base.Add(sms.DefaultConfirmWindow).Sub(p.clk.Now()))
	if n, err := p.svc.RunDue(p.ctx); n != 2 || err != nil {
		t.Fatalf("RunDue at the window's end: %d, %v; want 2, nil", n, err)
	}
	gw.mu.Lock()
	refs := gw.refs
	gw.mu.Unlock()
	if len(refs) != 2 || !cmp.Equal(refs[0], refs[1]) {
		t.Errorf("References handed over %q; want the same batch twice", refs)
	}
	// Two hand-overs: the claim that only waited for the window took its
	// attempt back.
	want = msgState{Status: sms.StatusSent, Attempts: 2, DueAt: base.Add(sms.DefaultConfirmWindow + sms.DefaultLease), Sent: true}
	for _, num := range nums {
		if d := cmp.Diff(want, p.state(t, num)); d != "" {
			t.Errorf("message %d after the second hand-over (-want +got):\n%s", num, d)
		}
	}
	if b := p.balance(t); b != sms.Credits(98) {
		t.Errorf("balance %s, want 98.00", b)
	}
}

// reclaimStore lets another claimer ("other") take the first message of a
// batch just before its outcomes are written, as when the lease ran out
// while the scheduler waited for the gateway.
type reclaimStore struct {
	sms.Store
	mu        sync.Mutex
	completes int
}

func (s *reclaimStore) SMSComplete(ctx context.Context, cs []*sms.Completion) ([]error, error) {
	s.mu.Lock()
	s.completes++
	first := s.completes == 1
	s.mu.Unlock()
	if first {
		late := base.Add(sms.DefaultLease)
		if _, err := s.Store.SMSClaimDue(ctx, &sms.ClaimParams{Now: late, LeaseUntil: late.Add(time.Hour), Token: "other", Limit: 1}); err != nil {
			return nil, err
		}
	}
	return s.Store.SMSComplete(ctx, cs)
}

// TestLostClaimOutcomeIsDropped: an outcome the store refuses with
// ErrStale (another claimer took the message) is logged and dropped: the
// message stays with the other claimer unchanged, the rest of the batch is
// recorded, the write is not retried and RunDue reports no error.
func TestLostClaimOutcomeIsDropped(t *testing.T) {
	t.Parallel()
	st := &reclaimStore{Store: memstore.New()}
	p := setupPath(t, st, &scriptGateway{}, nil)
	nums := p.sendN(t, 2)
	if n, err := p.svc.RunDue(p.ctx); n != 2 || err != nil {
		t.Fatalf("RunDue: %d, %v; want 2, nil", n, err)
	}
	if st.completes != 1 {
		t.Errorf("SMSComplete called %d times; want 1 (a lost claim is not retried)", st.completes)
	}
	lost := msgState{Status: sms.StatusSending, ClaimToken: "other", Attempts: 2, DueAt: base.Add(sms.DefaultLease + time.Hour)}
	if d := cmp.Diff(lost, p.state(t, nums[0])); d != "" {
		t.Errorf("the re-claimed message (-want +got):\n%s", d)
	}
	kept := msgState{Status: sms.StatusSent, Attempts: 1, DueAt: base.Add(sms.DefaultLease), Sent: true}
	if d := cmp.Diff(kept, p.state(t, nums[1])); d != "" {
		t.Errorf("the other message of the batch (-want +got):\n%s", d)
	}
	want := []string{"number=" + strconv.FormatInt(nums[0], 10) + " err=\"" + driver.ErrStale.Error() + "\""}
	var got []string
	for _, line := range logLines(p.logs, "sms: outcome not recorded: the claim was lost") {
		if !strings.Contains(line, "level=WARN") {
			t.Errorf("lost-claim log %q is not a warning", line)
		}
		got = append(got, line[strings.Index(line, "number="):])
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("lost-claim logs (-want +got):\n%s", d)
	}
	if failed := logLines(p.logs, "recording outcomes failed"); len(failed) != 0 {
		t.Errorf("a lost claim was logged as a failed write: %q", failed)
	}
	if b := p.balance(t); b != sms.Credits(98) {
		t.Errorf("balance %s, want 98.00", b)
	}
}

// TestFinalReportServedFromStore: a non-final report is asked from the
// gateway on every request; once a final one is stored, later requests
// are answered from the store without asking the gateway.
func TestFinalReportServedFromStore(t *testing.T) {
	t.Parallel()
	at := base.Add(30 * time.Second)
	gw := &scriptGateway{reports: []*sms.Report{
		{Description: sms.DeliverySentToNetwork, Time: base.Add(5 * time.Second)},
		{Description: sms.DeliveredToTerminal, Time: at},
		{Description: sms.DeliveryImpossible, Time: base.Add(time.Hour)}, // never asked
	}}
	p := setupPath(t, nil, gw, nil)
	num := p.sendN(t, 1)[0]
	id := strconv.FormatInt(num, 10)
	if n, err := p.svc.RunDue(p.ctx); n != 1 || err != nil {
		t.Fatalf("RunDue: %d, %v", n, err)
	}
	ask := func() *sms.DeliveryReport {
		t.Helper()
		r, err := p.svc.DeliveryReport(p.ctx, &sms.ReportParams{APIKey: apikey, PartnerID: partner, MessageID: id})
		if err != nil {
			t.Fatalf("DeliveryReport: %v", err)
		}
		return r
	}
	if r := ask(); r.Description != sms.DeliverySentToNetwork {
		t.Fatalf("first report %q, want SentToNetwork", r.Description)
	}
	if r := ask(); r.Description != sms.DeliveredToTerminal {
		t.Fatalf("second report %q, want DeliveredToTerminal (a non-final report is asked again)", r.Description)
	}
	if _, calls := gw.counts(); calls != 2 {
		t.Fatalf("gateway asked %d times for two reports before the final one; want 2", calls)
	}
	final := ask()
	for range 3 {
		p.clk.Add(time.Hour)
		if d := cmp.Diff(final, ask()); d != "" {
			t.Errorf("a later report differs from the stored final one (-want +got):\n%s", d)
		}
	}
	if _, calls := gw.counts(); calls != 2 {
		t.Errorf("gateway asked %d times in all; want 2 (a stored final report is served from the store)", calls)
	}
	if final.Status != 32 || !final.Time.Equal(at) || final.TAT != 30*time.Second {
		t.Errorf("stored final report %+v, want DeliveredToTerminal at +30s", final)
	}
}

// blockingGateway holds every Send until its context ends, then reports
// the context's error on returned.
type blockingGateway struct {
	sms.Gateway
	entered  chan struct{}
	returned chan error
}

func (g *blockingGateway) Send(ctx context.Context, _ []*sms.GatewayMessage) ([]sms.GatewayResult, error) {
	g.entered <- struct{}{}
	<-ctx.Done()
	g.returned <- ctx.Err()
	return nil, ctx.Err()
}

// TestCloseDeadlineCancelsTheBatch: when Close's context ends before the
// batch in flight is handed over, Close cancels the batch (the gateway
// call's context ends), waits for the scheduler to stop, and returns the
// context's error; the message stays queued for another claim.
func TestCloseDeadlineCancelsTheBatch(t *testing.T) {
	t.Parallel()
	e := setup(t, nil)
	gw := &blockingGateway{Gateway: e.gw, entered: make(chan struct{}, 1), returned: make(chan error, 1)}
	svc, err := sms.New(e.store, gw, &sms.Options{Clock: e.clk.Now, PollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	res, err := svc.Send(e.ctx, &sms.SendParams{PartnerID: partner, APIKey: apikey, Mobile: kenya, Shortcode: "ACME", Message: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-gw.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the started scheduler did not hand the message over within 10 s")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	closed := make(chan error, 1)
	go func() { closed <- svc.Close(ctx) }()
	select {
	case err := <-closed:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Close with an ended context = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close with an ended context hangs: the batch in flight was not cancelled")
	}
	select {
	case gerr := <-gw.returned:
		if !errors.Is(gerr, context.Canceled) {
			t.Errorf("the gateway call ended with %v, want context.Canceled", gerr)
		}
	default:
		t.Error("Close returned while the gateway call still ran")
	}
	m, err := e.store.SMSMessageGet(e.ctx, partner, res.Number)
	if err != nil {
		t.Fatal(err)
	}
	if m.Status != sms.StatusQueued || m.GatewayMessageID != "" {
		t.Errorf("message after a cancelled batch: status %s, gateway id %q; want queued without one", m.Status, m.GatewayMessageID)
	}
}
