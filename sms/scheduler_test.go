package sms_test

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ujumbe/messaging/sms"
	"github.com/ujumbe/messaging/sms/fakegateway"
	"github.com/ujumbe/messaging/store/memstore"
	"github.com/ujumbe/messaging/store/sqlitestore"
)

func TestScheduledMessageGoesOutWhenDue(t *testing.T) {
	t.Parallel()
	e := setup(t, nil)
	res := e.send(t, &sms.SendParams{Message: "later", TimeToSend: "2026-03-04 13:02"}) // 10:02 UTC
	if n := e.runDue(t); n != 0 {
		t.Fatalf("RunDue at 10:00 handed over %d, want 0", n)
	}
	e.clk.Add(119 * time.Second)
	if n := e.runDue(t); n != 0 || len(e.gw.Sent()) != 0 {
		t.Fatalf("RunDue at 10:01:59 handed over %d, want 0", n)
	}
	e.clk.Add(time.Second)
	if n := e.runDue(t); n != 1 {
		t.Fatalf("RunDue at 10:02 handed over %d, want 1", n)
	}
	sent := e.gw.Sent()
	if len(sent) != 1 || sent[0].Text != "later" || sent[0].Reference != res.ID || sent[0].Number != res.Number || sent[0].Sender != "ACME" {
		t.Fatalf("gateway got %+v", sent)
	}
	if n := e.runDue(t); n != 0 || len(e.gw.Sent()) != 1 {
		t.Errorf("a sent message was handed over again")
	}
	m, _ := e.store.SMSMessageGet(e.ctx, partner, res.Number)
	if m.Status != sms.StatusSent || m.GatewayMessageID == "" || m.SentAt == nil || !m.SentAt.Equal(base.Add(2*time.Minute)) {
		t.Errorf("stored message %+v", m)
	}
}

func TestScheduledMessageSurvivesRestart(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "sms.db")
	open := func() *sqlitestore.Store {
		st, err := sqlitestore.Open(context.Background(), path, nil)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	st1 := open()
	e1 := setup(t, &setupOpts{store: st1})
	res := e1.send(t, &sms.SendParams{Message: "survivor", TimeToSend: strconv.FormatInt(base.Add(90*time.Second).Unix(), 10)})
	imm := e1.send(t, &sms.SendParams{Message: "claimed then crashed"})
	// The first process claims the immediate message, then dies before
	// handing it over (its lease is one minute).
	claimed, err := st1.SMSClaimDue(e1.ctx, &sms.ClaimParams{Now: base, LeaseUntil: base.Add(time.Minute), Token: "dead", Limit: 10})
	if err != nil || len(claimed) != 1 || claimed[0].Number != imm.Number {
		t.Fatalf("claim by the first process: %v, %v", claimed, err)
	}
	if err := st1.Close(); err != nil {
		t.Fatal(err)
	}

	st2 := open()
	t.Cleanup(func() { _ = st2.Close() })
	e2 := setup(t, &setupOpts{store: st2})
	e2.clk.Add(59 * time.Second)
	if n := e2.runDue(t); n != 0 {
		t.Fatalf("after restart at +59s: %d handed over, want 0 (the lease holds, the schedule is later)", n)
	}
	// At +60s the dead claimer's lease ran out, but it may have handed
	// the message over: its confirmation window (5 minutes from its claim)
	// runs, so the new process does not hand it over again yet.
	e2.clk.Add(time.Second)
	e2.runDue(t)
	if sent := e2.gw.Given(); len(sent) != 0 {
		t.Fatalf("at +60s the gateway got %+v; want nothing before the confirmation window ends", sent)
	}
	e2.clk.Add(30 * time.Second)
	e2.runDue(t)
	if sent := e2.gw.Given(); len(sent) != 1 || sent[0].Text != "survivor" || sent[0].Reference != res.ID {
		t.Fatalf("at +90s the gateway got %+v; want the scheduled one only", sent)
	}
	e2.clk.Add(5*time.Minute - 91*time.Second)
	e2.runDue(t)
	if n := len(e2.gw.Given()); n != 1 {
		t.Fatalf("at 5 min - 1 s the gateway got %d messages; want still 1", n)
	}
	// No report came: the default policy hands it over once more.
	e2.clk.Add(time.Second)
	e2.runDue(t)
	sent := e2.gw.Given()
	if len(sent) != 2 || sent[1].Text != "claimed then crashed" || sent[1].Number != imm.Number {
		t.Errorf("gateway got %+v", sent)
	}
	e2.clk.Add(10 * time.Second)
	r, err := e2.svc.DeliveryReport(e2.ctx, &sms.ReportParams{APIKey: apikey, PartnerID: partner, MessageID: res.ProviderMessageID})
	if err != nil || !r.Delivered() {
		t.Errorf("report after restart: %+v, %v", r, err)
	}
	// Two messages of 1 credit each, no refund.
	if b := e2.balance(t); b != sms.Credits(98) {
		t.Errorf("balance %s, want 98.00", b)
	}
}

func TestRetryThenFailRefunds(t *testing.T) {
	t.Parallel()
	attempts := 0
	e := setup(t, &setupOpts{
		gw:  &fakegateway.Options{Fail: func(*sms.GatewayMessage) error { attempts++; return errors.New("connection reset") }},
		sms: &sms.Options{MaxAttempts: 3, RetryBackoff: 10 * time.Second},
	})
	res := e.send(t, &sms.SendParams{})
	if b := e.balance(t); b != sms.Credits(99) {
		t.Fatalf("balance after send %s", b)
	}
	e.runDue(t) // attempt 1 fails: retry at +10s
	e.clk.Add(9 * time.Second)
	if n := e.runDue(t); n != 0 {
		t.Errorf("retried %d before the backoff", n)
	}
	e.clk.Add(time.Second)
	e.runDue(t) // attempt 2 fails: retry 20 s later
	e.clk.Add(19 * time.Second)
	if n := e.runDue(t); n != 0 {
		t.Errorf("retried %d before the doubled backoff", n)
	}
	e.clk.Add(time.Second)
	e.runDue(t) // attempt 3 fails: out of attempts
	if attempts != 3 {
		t.Errorf("gateway asked %d times, want 3", attempts)
	}
	m, _ := e.store.SMSMessageGet(e.ctx, partner, res.Number)
	if m.Status != sms.StatusFailed || m.FailureReason != "connection reset" || m.Attempts != 3 {
		t.Errorf("message after 3 failures: %+v", m)
	}
	if b := e.balance(t); b != sms.Credits(100) {
		t.Errorf("balance %s, want the credit refunded (100.00)", b)
	}
	e.clk.Add(time.Hour)
	if n := e.runDue(t); n != 0 {
		t.Errorf("a failed message was handed over again")
	}
	r, err := report(t, e, res.ProviderMessageID)
	if err != nil || r.Description != "DeliveryImpossible" || r.Status != 4 {
		t.Errorf("report of a failed message: %+v, %v", r, err)
	}
}

func TestPermanentGatewayErrorFailsAtOnce(t *testing.T) {
	t.Parallel()
	e := setup(t, &setupOpts{gw: &fakegateway.Options{Fail: func(m *sms.GatewayMessage) error {
		if m.Text == "blocked" {
			return &sms.GatewayError{Code: 1001, Description: "Invalid sender id"}
		}
		return nil
	}}})
	bad := e.send(t, &sms.SendParams{Message: "blocked"})
	good := e.send(t, &sms.SendParams{Message: "fine"})
	if n := e.runDue(t); n != 2 {
		t.Fatalf("handed over %d, want 2 in one batch", n)
	}
	if e.gw.Calls() != 1 {
		t.Errorf("gateway called %d times for 2 due messages, want 1", e.gw.Calls())
	}
	mb, _ := e.store.SMSMessageGet(e.ctx, partner, bad.Number)
	mg, _ := e.store.SMSMessageGet(e.ctx, partner, good.Number)
	if mb.Status != sms.StatusFailed || mb.FailureReason != "[1001] Invalid sender id" || mb.Attempts != 1 {
		t.Errorf("refused message: %+v", mb)
	}
	if mg.Status != sms.StatusSent {
		t.Errorf("the good message of the same batch: %+v", mg)
	}
	if b := e.balance(t); b != sms.Credits(99) {
		t.Errorf("balance %s, want 99.00 (the refused one refunded)", b)
	}
}

func TestRetryAfterIsHonoured(t *testing.T) {
	t.Parallel()
	fail := true
	e := setup(t, &setupOpts{gw: &fakegateway.Options{Fail: func(*sms.GatewayMessage) error {
		if fail {
			return &sms.GatewayError{Code: 4090, Description: "Internal Error. Try again after 5 minutes", Retryable: true, RetryAfter: 5 * time.Minute}
		}
		return nil
	}}})
	res := e.send(t, &sms.SendParams{})
	e.runDue(t)
	fail = false
	e.clk.Add(5*time.Minute - time.Second)
	if n := e.runDue(t); n != 0 {
		t.Errorf("retried before Retry-After")
	}
	e.clk.Add(time.Second)
	if n := e.runDue(t); n != 1 {
		t.Errorf("not retried at Retry-After")
	}
	m, _ := e.store.SMSMessageGet(e.ctx, partner, res.Number)
	if m.Status != sms.StatusSent || m.Attempts != 2 {
		t.Errorf("message %+v, want sent on attempt 2", m)
	}
}

func TestRunDueBatches(t *testing.T) {
	t.Parallel()
	e := setup(t, nil)
	var items []*sms.BulkItem
	for i := range 20 {
		items = append(items, bulkItem(kenya, strconv.Itoa(i)))
	}
	for range 2 {
		if _, err := e.svc.SendBulk(e.ctx, items); err != nil {
			t.Fatal(err)
		}
	}
	for range 5 {
		e.send(t, &sms.SendParams{})
	}
	if n := e.runDue(t); n != 45 {
		t.Errorf("RunDue handed over %d, want 45", n)
	}
	if c := e.gw.Calls(); c != 3 {
		t.Errorf("gateway called %d times for 45 messages, want 3 batches of at most 20", c)
	}
	if len(e.gw.Sent()) != 45 {
		t.Errorf("gateway recorded %d messages", len(e.gw.Sent()))
	}
}

func TestStartSendsImmediatelyAndCloseStops(t *testing.T) {
	t.Parallel()
	// A long poll interval: only the wake-up of an immediate send can make
	// the message go out within the test's deadline.
	e := setup(t, &setupOpts{sms: &sms.Options{PollInterval: time.Hour}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := e.svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.Start(ctx); err == nil {
		t.Error("a second Start succeeded")
	}
	e.send(t, &sms.SendParams{Message: "now"})
	deadline := time.Now().Add(10 * time.Second)
	for len(e.gw.Sent()) == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if len(e.gw.Sent()) != 1 {
		t.Fatalf("the scheduler did not hand the message over")
	}
	cctx, ccancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer ccancel()
	if err := e.svc.Close(cctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := e.svc.Close(cctx); err != nil {
		t.Errorf("second Close: %v", err)
	}
	// Once closed, nothing is handed over.
	e.send(t, &sms.SendParams{Message: "after close"})
	if len(e.gw.Sent()) != 1 {
		t.Errorf("a message went out after Close")
	}
	// It can start again.
	if err := e.svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.Close(cctx); err != nil {
		t.Fatal(err)
	}
}

// schedulerStore records the claims of the scheduler (every claim whose
// context is not the test's, which RunDue uses) and signals each one.
type schedulerStore struct {
	sms.Store
	testCtx context.Context
	claimed chan struct{}

	mu     sync.Mutex
	claims int
	ctx    context.Context // of the scheduler's last claim
}

func (s *schedulerStore) SMSClaimDue(ctx context.Context, p *sms.ClaimParams) ([]*sms.Message, error) {
	if ctx != s.testCtx {
		s.mu.Lock()
		s.claims++
		s.ctx = ctx
		s.mu.Unlock()
		defer func() {
			select {
			case s.claimed <- struct{}{}:
			default:
			}
		}()
	}
	return s.Store.SMSClaimDue(ctx, p)
}

func (s *schedulerStore) schedulerClaims() (int, context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.claims, s.ctx
}

// TestCloseStopsScheduler: once Close returned, the scheduler is gone: the
// context of its claims and hand-overs is done, and a message sent (which
// would wake a running scheduler) and due afterwards is not claimed by it
// but left to RunDue.
func TestCloseStopsScheduler(t *testing.T) {
	t.Parallel()
	st := &schedulerStore{Store: memstore.New(), testCtx: context.Background(), claimed: make(chan struct{}, 1)}
	e := setup(t, &setupOpts{store: st, sms: &sms.Options{PollInterval: time.Hour}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := e.svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-st.claimed:
	case <-time.After(10 * time.Second):
		t.Fatal("the started scheduler did not claim within 10 s")
	}
	cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer ccancel()
	if err := e.svc.Close(cctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	claims, sctx := st.schedulerClaims()
	if sctx.Err() == nil {
		t.Error("after Close the scheduler's context is still live: the scheduler was not stopped")
	}
	res := e.send(t, &sms.SendParams{Message: "after close"})
	e.clk.Add(time.Minute)
	if n := e.runDue(t); n != 1 {
		t.Errorf("RunDue after Close handed over %d, want the message sent after Close", n)
	}
	if after, _ := st.schedulerClaims(); after != claims {
		t.Errorf("the scheduler claimed %d times after Close", after-claims)
	}
	if sent := e.gw.Sent(); len(sent) != 1 || sent[0].Reference != res.ID {
		t.Errorf("gateway got %+v, want only the message sent after Close", sent)
	}
}
