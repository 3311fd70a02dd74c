package sms_test

import (
	"context"
	"testing"
	"time"

	"github.com/ujumbe/messaging/internal/metrictest"
	"github.com/ujumbe/messaging/sms"
	"github.com/ujumbe/messaging/sms/fakegateway"
)

// hangingSetup returns a service whose fake gateway accepts every call
// and, while *hang is true, never answers it; the lease is short (the
// call times out at half of it, in real time), the confirmation window
// the default.
func hangingSetup(t *testing.T, so *sms.Options, hang *bool) *env {
	t.Helper()
	if so == nil {
		so = &sms.Options{}
	}
	so.Lease = 100 * time.Millisecond
	so.BatchSize = 20
	return setup(t, &setupOpts{gw: &fakegateway.Options{Delay: 10 * time.Second, Hang: func(*sms.GatewayMessage) bool { return *hang }}, sms: so})
}

// sendBulk accepts n messages of the account, due now.
func (e *env) sendBulk(t *testing.T, n int) []int64 {
	t.Helper()
	items := make([]*sms.BulkItem, n)
	for i := range items {
		items[i] = &sms.BulkItem{PartnerID: partner, APIKey: apikey, Mobile: kenya, Message: "bulk", Shortcode: "ACME"}
	}
	res, err := e.svc.SendBulk(e.ctx, items)
	if err != nil {
		t.Fatal(err)
	}
	nums := make([]int64, n)
	for i, r := range res {
		if r.Code != sms.CodeSuccess {
			t.Fatalf("bulk item %d: %d %s", i, r.Code, r.Description)
		}
		nums[i] = r.MessageID
	}
	return nums
}

func (e *env) message(t *testing.T, n int64) *sms.Message {
	t.Helper()
	m, err := e.store.SMSMessageGet(e.ctx, partner, n)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestHungBulkIsNotHandedOverAgainAndItsReportConfirmsIt: an upstream
// that accepts a bulk and never answers gets no second hand-over of its
// items within the confirmation window; its later reports, carrying the
// clientsmsid, record them as sent under the ids it gave, and nothing is
// handed over after the window either.
func TestHungBulkIsNotHandedOverAgainAndItsReportConfirmsIt(t *testing.T) {
	t.Parallel()
	hang := true
	rd := metrictest.New(t)
	e := hangingSetup(t, &sms.Options{MeterProvider: rd.Provider}, &hang)
	nums := e.sendBulk(t, 5)
	e.runDue(t)
	if got := len(e.gw.Given()); got != 5 {
		t.Fatalf("first hand-over: the gateway got %d messages, want 5", got)
	}
	for _, n := range nums {
		if m := e.message(t, n); m.Status != sms.StatusQueued || m.UnconfirmedSince == nil || m.GatewayMessageID != "" {
			t.Fatalf("message %d after the hung call: status %s mark %v id %q; want queued, marked, no id", n, m.Status, m.UnconfirmedSince, m.GatewayMessageID)
		}
	}
	hang = false
	// The lease ran out long ago; within the window nothing goes again.
	for _, d := range []time.Duration{time.Second, time.Minute, 3*time.Minute + 58*time.Second} {
		e.clk.Add(d)
		e.runDue(t)
		if got := len(e.gw.Given()); got != 5 {
			t.Fatalf("at +%v the gateway got %d messages, want still 5", e.clk.Now().Sub(base), got)
		}
	}
	reports := e.gw.Unanswered()
	if len(reports) != 5 {
		t.Fatalf("%d unanswered reports, want 5", len(reports))
	}
	for _, r := range reports {
		if err := e.svc.ApplyUpstreamReport(e.ctx, r); err != nil {
			t.Fatalf("ApplyUpstreamReport(%+v): %v", r, err)
		}
	}
	for i, n := range nums {
		m := e.message(t, n)
		if m.Status != sms.StatusSent || m.GatewayMessageID != reports[i].GatewayMessageID || m.UnconfirmedSince != nil ||
			m.Report == nil || m.Report.Description != sms.DeliverySentToNetwork {
			t.Errorf("message %d after its report: %+v; want sent under %s with the report", n, m, reports[i].GatewayMessageID)
		}
	}
	e.clk.Add(time.Hour)
	e.runDue(t)
	if got := len(e.gw.Given()); got != 5 {
		t.Errorf("after the window the gateway got %d messages, want still 5", got)
	}
	acct := sms.AttrAccount.String(partner)
	s := rd.Collect(t)
	if u, c := s.Sum(sms.MetricUnconfirmed, acct), s.Sum(sms.MetricConfirmed, acct); u != 5 || c != 5 {
		t.Errorf("unconfirmed %v, confirmed %v; want 5 and 5", u, c)
	}
	if b := e.balance(t); b != sms.Credits(95) {
		t.Errorf("balance %s, want 95.00", b)
	}
}

// TestUnconfirmedResendOnceAfterTheWindow: with no report, the default
// policy hands each message over exactly once more when the window ends;
// a report of the first hand-over arriving after that is counted as a
// late confirmation and not applied.
func TestUnconfirmedResendOnceAfterTheWindow(t *testing.T) {
	t.Parallel()
	hang := true
	rd := metrictest.New(t)
	e := hangingSetup(t, &sms.Options{MeterProvider: rd.Provider}, &hang)
	nums := e.sendBulk(t, 3)
	e.runDue(t)
	hang = false
	e.clk.Add(sms.DefaultConfirmWindow - time.Nanosecond)
	e.runDue(t)
	if got := len(e.gw.Given()); got != 3 {
		t.Fatalf("just before the window's end the gateway got %d, want 3", got)
	}
	e.clk.Add(time.Nanosecond)
	e.runDue(t)
	given := e.gw.Given()
	if len(given) != 6 {
		t.Fatalf("after the window the gateway got %d messages, want 6 (each once more)", len(given))
	}
	for i, n := range nums {
		if given[3+i].Number != n {
			t.Errorf("resend %d is message %d, want %d", i, given[3+i].Number, n)
		}
		if m := e.message(t, n); m.Status != sms.StatusSent || m.UnconfirmedSince != nil {
			t.Errorf("message %d after the resend: %s, mark %v; want sent, no mark", n, m.Status, m.UnconfirmedSince)
		}
	}
	e.clk.Add(time.Hour)
	e.runDue(t)
	if got := len(e.gw.Given()); got != 6 {
		t.Errorf("later the gateway got %d messages, want still 6", got)
	}
	// The first hand-over's report comes after the resend: logged and
	// counted, not applied.
	first := e.gw.Unanswered()[0]
	first.GatewayMessageID = "upstream-copy-1"
	want := e.message(t, nums[0]).GatewayMessageID
	if err := e.svc.ApplyUpstreamReport(e.ctx, first); err != nil {
		t.Fatal(err)
	}
	if m := e.message(t, nums[0]); m.GatewayMessageID != want || m.Report != nil {
		t.Errorf("after a late confirmation: id %q report %+v; want %q kept and no report", m.GatewayMessageID, m.Report, want)
	}
	if got := rd.Collect(t).Sum(sms.MetricLateConfirmations, sms.AttrAccount.String(partner)); got != 1 {
		t.Errorf("late confirmations %v, want 1", got)
	}
}

// TestUnconfirmedFailPolicy: with UnconfirmedFail and no report, the
// messages fail when the window ends, with ReasonUnconfirmed, and their
// credit is refunded; nothing is handed over again.
func TestUnconfirmedFailPolicy(t *testing.T) {
	t.Parallel()
	hang := true
	e := hangingSetup(t, &sms.Options{UnconfirmedPolicy: sms.UnconfirmedFail}, &hang)
	nums := e.sendBulk(t, 2)
	e.runDue(t)
	hang = false
	if b := e.balance(t); b != sms.Credits(98) {
		t.Fatalf("balance %s, want 98.00", b)
	}
	e.clk.Add(sms.DefaultConfirmWindow)
	e.runDue(t)
	if got := len(e.gw.Given()); got != 2 {
		t.Errorf("the gateway got %d messages, want 2 (no resend)", got)
	}
	for _, n := range nums {
		if m := e.message(t, n); m.Status != sms.StatusFailed || m.FailureReason != sms.ReasonUnconfirmed || m.UnconfirmedSince != nil {
			t.Errorf("message %d: %s %q mark %v; want failed with ReasonUnconfirmed", n, m.Status, m.FailureReason, m.UnconfirmedSince)
		}
	}
	if b := e.balance(t); b != sms.Credits(100) {
		t.Errorf("balance %s, want 100.00 (refunded)", b)
	}
}

// TestLeaseRanOutAfterClaimHandsNothingOverInTheWindow: a claimer that
// died after its claim (the claim made, nothing recorded) leaves the
// message to a new scheduler that hands nothing over before the window
// of that claim ends.
func TestLeaseRanOutAfterClaimHandsNothingOverInTheWindow(t *testing.T) {
	t.Parallel()
	e := setup(t, nil)
	res := e.send(t, &sms.SendParams{Message: "claimed, then the process died"})
	if _, err := e.store.SMSClaimDue(e.ctx, &sms.ClaimParams{Now: base, LeaseUntil: base.Add(sms.DefaultLease), Token: "dead", Limit: 10}); err != nil {
		t.Fatal(err)
	}
	// A new scheduler on the same store and gateway.
	svc, err := sms.New(e.store, e.gw, &sms.Options{Clock: e.clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []time.Duration{sms.DefaultLease, time.Minute, 2*time.Minute + 59*time.Second} {
		e.clk.Add(d)
		if _, err := svc.RunDue(e.ctx); err != nil {
			t.Fatal(err)
		}
		if got := len(e.gw.Given()); got != 0 {
			t.Fatalf("at +%v the gateway got %d messages, want 0 before the window ends", e.clk.Now().Sub(base), got)
		}
	}
	e.clk.Add(time.Second)
	if _, err := svc.RunDue(e.ctx); err != nil {
		t.Fatal(err)
	}
	if got := e.gw.Given(); len(got) != 1 || got[0].Reference != res.ID {
		t.Errorf("after the window the gateway got %+v, want the message once", got)
	}
}

// throttling answers its first call with a throttling error for every
// message, then passes calls to the fake gateway.
type throttling struct {
	sms.Gateway
	calls int
}

func (g *throttling) Send(ctx context.Context, msgs []*sms.GatewayMessage) ([]sms.GatewayResult, error) {
	g.calls++
	if g.calls == 1 {
		return nil, &sms.GatewayError{Code: 429, Description: "HTTP 429", Retryable: true, Throttled: true, RetryAfter: 2 * time.Minute}
	}
	return g.Gateway.Send(ctx, msgs)
}

// TestThrottlingPausesEveryHandOver: a throttling answer pauses the whole
// hand-over for the time asked: a message accepted meanwhile waits too,
// and all go out together when the pause ends.
func TestThrottlingPausesEveryHandOver(t *testing.T) {
	t.Parallel()
	var th *throttling
	e := setup(t, &setupOpts{wrap: func(g sms.Gateway) sms.Gateway { th = &throttling{Gateway: g}; return th }})
	first := e.send(t, &sms.SendParams{Message: "first"})
	e.runDue(t)
	if m := e.message(t, first.Number); m.Status != sms.StatusQueued || !m.DueAt.Equal(base.Add(2*time.Minute)) || m.UnconfirmedSince != nil {
		t.Fatalf("throttled message: %s due %s mark %v; want queued until +2m, no mark", m.Status, m.DueAt, m.UnconfirmedSince)
	}
	e.clk.Add(30 * time.Second)
	second := e.send(t, &sms.SendParams{Message: "second"})
	if n := e.runDue(t); n != 0 || th.calls != 1 {
		t.Fatalf("during the pause: %d claimed, %d calls; want 0 and 1", n, th.calls)
	}
	e.clk.Add(90 * time.Second)
	e.runDue(t)
	if got := e.gw.Given(); len(got) != 2 {
		t.Fatalf("after the pause the gateway got %+v, want both", got)
	}
	for _, n := range []int64{first.Number, second.Number} {
		if m := e.message(t, n); m.Status != sms.StatusSent {
			t.Errorf("message %d: %s, want sent", n, m.Status)
		}
	}
}
