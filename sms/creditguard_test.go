package sms_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ujumbe/messaging/internal/testlog"
	"github.com/ujumbe/messaging/sms"
)

// prepaidUpstream wraps the fake gateway with the service's own credit at
// the upstream: each accepted message spends 1.00 of it, and once it is
// spent the upstream refuses messages with 1004 (low credits), as a
// prepaid upstream does.
type prepaidUpstream struct {
	sms.Gateway
	mu         sync.Mutex
	credit     sms.Credit
	balanceErr error
	checks     int // Balance calls
	sends      int // messages given to Send
}

func (u *prepaidUpstream) setCredit(c sms.Credit) {
	u.mu.Lock()
	u.credit = c
	u.mu.Unlock()
}

func (u *prepaidUpstream) Send(ctx context.Context, msgs []*sms.GatewayMessage) ([]sms.GatewayResult, error) {
	res, err := u.Gateway.Send(ctx, msgs)
	if err != nil {
		return nil, err
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	u.sends += len(msgs)
	for i := range res {
		if u.credit < sms.Credits(1) {
			res[i] = sms.GatewayResult{Err: &sms.GatewayError{Code: sms.CodeLowCredit, Description: "Low bulk credits", Retryable: true}}
			continue
		}
		u.credit -= sms.Credits(1)
	}
	return res, nil
}

func (u *prepaidUpstream) Balance(ctx context.Context) (sms.Credit, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.checks++
	return u.credit, u.balanceErr
}

func (u *prepaidUpstream) counts() (checks, sends int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.checks, u.sends
}

// guardSetup is setup with the prepaid upstream (credit opening) and the
// guard's options; logs go to the returned buffer.
func guardSetup(t *testing.T, opening sms.Credit, o sms.Options) (*env, *prepaidUpstream, *testlog.Buffer) {
	t.Helper()
	up := &prepaidUpstream{credit: opening}
	logs := &testlog.Buffer{}
	o.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	e := setup(t, &setupOpts{sms: &o, wrap: func(g sms.Gateway) sms.Gateway { up.Gateway = g; return up }})
	return e, up, logs
}

func (e *env) sendN(t *testing.T, n int) []*sms.SendResult {
	t.Helper()
	var out []*sms.SendResult
	for range n {
		out = append(out, e.send(t, &sms.SendParams{}))
	}
	return out
}

func (e *env) stored(t *testing.T, r *sms.SendResult) *sms.Message {
	t.Helper()
	m, err := e.store.SMSMessageGet(e.ctx, partner, r.Number)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestCreditGuardReportsOnSchedule(t *testing.T) {
	t.Parallel()
	e, up, logs := guardSetup(t, sms.Credits(50), sms.Options{UpstreamCreditFloor: sms.Credits(10)})
	if _, _, at := e.svc.UpstreamCredit(); !at.IsZero() {
		t.Errorf("credit read before the scheduler ran: at %s", at)
	}
	e.sendN(t, 1)
	e.runDue(t)
	c, low, at := e.svc.UpstreamCredit()
	if checks, _ := up.counts(); checks != 1 || c != sms.Credits(50) || low || !at.Equal(base) {
		t.Fatalf("after the first run: %d checks, credit %s low %v at %s; want one check, 50.00 not low at %s", checks, c, low, at, base)
	}
	const warning = "upstream credit below the floor"
	// The checks follow the schedule (5 minutes), not the claims.
	for _, step := range []struct {
		advance time.Duration
		credit  sms.Credit
		checks  int
		low     bool
		warned  int
	}{
		{time.Minute, sms.Credits(5), 1, false, 0},
		{4*time.Minute - time.Second, sms.Credits(5), 1, false, 0},
		{time.Second, sms.Credits(5), 2, true, 1},
		{5 * time.Minute, sms.Credits(4), 3, true, 1}, // still low: no second warning
		{5 * time.Minute, sms.Credits(10), 4, false, 1},
		{5 * time.Minute, sms.Credits(9), 5, true, 2}, // a new crossing warns again
	} {
		up.setCredit(step.credit)
		e.clk.Add(step.advance)
		res := e.sendN(t, 1)
		e.runDue(t)
		checks, _ := up.counts()
		c, low, _ := e.svc.UpstreamCredit()
		if checks != step.checks || low != step.low || strings.Count(logs.String(), warning) != step.warned {
			t.Errorf("at %s with %s upstream: %d checks, low %v (credit %s), %d warnings; want %d, %v, %d",
				e.clk.Now().Sub(base), step.credit, checks, low, c, strings.Count(logs.String(), warning), step.checks, step.low, step.warned)
		}
		// Without PauseBelowFloor the guard only reports: messages go.
		if m := e.stored(t, res[0]); m.Attempts != 1 || e.svc.HandOverPaused() {
			t.Errorf("at %s: message attempts %d, paused %v; want handed over", e.clk.Now().Sub(base), m.Attempts, e.svc.HandOverPaused())
		}
	}
}

func TestCreditGuardPausesAndResumes(t *testing.T) {
	t.Parallel()
	e, up, _ := guardSetup(t, sms.Credits(12), sms.Options{UpstreamCreditFloor: sms.Credits(10), PauseBelowFloor: true})
	first := e.sendN(t, 5)
	if n := e.runDue(t); n != 5 {
		t.Fatalf("handed over %d, want 5", n)
	}
	// The upstream credit is 7 now; the next check finds it low.
	held := e.sendN(t, 3)
	e.clk.Add(5 * time.Minute)
	if n := e.runDue(t); n != 0 {
		t.Errorf("handed over %d below the floor, want 0", n)
	}
	if !e.svc.HandOverPaused() {
		t.Error("HandOverPaused = false below the floor")
	}
	e.clk.Add(5 * time.Minute)
	if n := e.runDue(t); n != 0 {
		t.Errorf("handed over %d still below the floor, want 0", n)
	}
	for _, r := range held {
		if m := e.stored(t, r); m.Status != sms.StatusQueued || m.Attempts != 0 {
			t.Errorf("held message: %s after %d attempts; want queued, untouched", m.Status, m.Attempts)
		}
	}
	if b := e.balance(t); b != sms.Credits(100-8) {
		t.Errorf("account balance %s, want 92.00: each message debited once", b)
	}
	if _, sends := up.counts(); sends != 5 {
		t.Errorf("the upstream got %d messages, want the 5 before the pause", sends)
	}
	// A top-up at the upstream is seen at the next check.
	up.setCredit(sms.Credits(100))
	e.clk.Add(4 * time.Minute)
	if n := e.runDue(t); n != 0 {
		t.Errorf("handed over %d before the next check, want 0", n)
	}
	e.clk.Add(time.Minute)
	if n := e.runDue(t); n != 3 {
		t.Errorf("handed over %d after the top-up, want 3", n)
	}
	for _, r := range append(first, held...) {
		if m := e.stored(t, r); m.Status != sms.StatusSent || m.Attempts != 1 {
			t.Errorf("message %d: %s after %d attempts; want sent at the first", r.Number, m.Status, m.Attempts)
		}
	}
	if _, sends := up.counts(); sends != 8 || e.svc.HandOverPaused() {
		t.Errorf("the upstream got %d messages (want 8); paused %v", sends, e.svc.HandOverPaused())
	}
}

func TestCreditGuardChecksAfterLowCreditRefusal(t *testing.T) {
	t.Parallel()
	e, up, _ := guardSetup(t, sms.Credits(11), sms.Options{UpstreamCreditFloor: sms.Credits(10), PauseBelowFloor: true, UpstreamCreditCheckEvery: time.Hour})
	e.runDue(t)     // first check: 11.00, above the floor
	up.setCredit(0) // spent elsewhere
	res := e.sendN(t, 1)
	e.clk.Add(time.Second)
	e.runDue(t)
	m := e.stored(t, res[0])
	if m.Status != sms.StatusQueued || m.FailureReason != "[1004] Low bulk credits" || m.Attempts != 1 {
		t.Fatalf("refused message: %s after %d attempts (%q)", m.Status, m.Attempts, m.FailureReason)
	}
	// The refusal makes the next claim read the credit, an hour early.
	e.runDue(t)
	if checks, _ := up.counts(); checks != 2 || !e.svc.HandOverPaused() {
		t.Fatalf("after a 1004: %d checks, paused %v; want a second check and a pause", checks, e.svc.HandOverPaused())
	}
	e.clk.Add(30 * time.Minute) // past the retry time
	if n := e.runDue(t); n != 0 {
		t.Errorf("handed over %d while paused, want 0", n)
	}
	if m := e.stored(t, res[0]); m.Attempts != 1 {
		t.Errorf("attempts %d while paused, want 1", m.Attempts)
	}
	up.setCredit(sms.Credits(50))
	e.clk.Add(30 * time.Minute)
	if n := e.runDue(t); n != 1 {
		t.Errorf("handed over %d after the top-up, want 1", n)
	}
	if m := e.stored(t, res[0]); m.Status != sms.StatusSent || m.Attempts != 2 {
		t.Errorf("after the top-up: %s after %d attempts; want sent at the second", m.Status, m.Attempts)
	}
}

func TestCreditGuardBalanceFailures(t *testing.T) {
	t.Parallel()
	e, up, logs := guardSetup(t, sms.Credits(5), sms.Options{UpstreamCreditFloor: sms.Credits(10), PauseBelowFloor: true})
	up.balanceErr = errors.New("getbalance: connection refused")
	res := e.sendN(t, 1)
	if n := e.runDue(t); n != 1 {
		t.Errorf("handed over %d when the credit was never read, want 1", n)
	}
	e.clk.Add(5 * time.Minute)
	e.sendN(t, 1)
	e.runDue(t)
	if n := strings.Count(logs.String(), "reading the upstream credit failed"); n != 1 {
		t.Errorf("%d warnings for two failed checks in a row, want 1", n)
	}
	if _, _, at := e.svc.UpstreamCredit(); !at.IsZero() || e.svc.HandOverPaused() {
		t.Errorf("failed checks changed the state: at %s, paused %v", at, e.svc.HandOverPaused())
	}
	if m := e.stored(t, res[0]); m.Status != sms.StatusSent {
		t.Errorf("message %s, want sent", m.Status)
	}
	// Once low and paused, a failing check keeps the pause.
	up.mu.Lock()
	up.balanceErr, up.credit = nil, sms.Credits(5)
	up.mu.Unlock()
	e.clk.Add(5 * time.Minute)
	e.runDue(t)
	up.mu.Lock()
	up.balanceErr, up.credit = errors.New("timeout"), sms.Credits(100)
	up.mu.Unlock()
	e.clk.Add(5 * time.Minute)
	e.sendN(t, 1)
	if n := e.runDue(t); n != 0 || !e.svc.HandOverPaused() {
		t.Errorf("a failed check while paused: handed over %d, paused %v; want 0, paused", n, e.svc.HandOverPaused())
	}
}

func TestCreditGuardOffNeverReadsTheBalance(t *testing.T) {
	t.Parallel()
	e, up, _ := guardSetup(t, 0, sms.Options{PauseBelowFloor: true})
	e.sendN(t, 2)
	e.runDue(t)
	if checks, sends := up.counts(); checks != 0 || sends != 2 {
		t.Errorf("without a floor: %d balance reads and %d messages; want 0 and 2", checks, sends)
	}
}
