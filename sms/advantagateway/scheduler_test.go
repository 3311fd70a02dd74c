package advantagateway_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ujumbe/messaging/sms"
	"github.com/ujumbe/messaging/sms/advantagateway"
	"github.com/ujumbe/messaging/sms/advantagateway/advantatest"
	"github.com/ujumbe/messaging/store/memstore"
)

// schedClock is a settable clock.
type schedClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *schedClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *schedClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// schedEnv is the SMS service with its scheduler handing over to the
// gateway pointed at the mock upstream.
type schedEnv struct {
	ctx   context.Context
	clk   *schedClock
	up    *advantatest.Upstream
	gw    *advantagateway.Gateway
	store *memstore.Store
	svc   *sms.SMS
}

const (
	svcPartner = "acct1"
	svcKey     = "sms_0123456789abcdef0123456789abcdef"
)

func schedSetup(t testing.TB, credit sms.Credit, o sms.Options) *schedEnv {
	t.Helper()
	e := &schedEnv{ctx: context.Background(), clk: &schedClock{t: time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)}, store: memstore.New()}
	e.up = advantatest.New(&advantatest.Options{PartnerID: partner, APIKey: key, Credit: credit})
	srv := httptest.NewServer(e.up)
	t.Cleanup(srv.Close)
	g, err := advantagateway.New(&advantagateway.Options{BaseURL: srv.URL, PartnerID: partner, APIKey: key, HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	e.gw = g
	o.Clock = e.clk.Now
	if o.Lease == 0 {
		o.Lease = 400 * time.Millisecond // the gateway call times out after 200 ms
	}
	e.svc, err = sms.New(e.store, g, &o)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.svc.CreateAccount(e.ctx, &sms.CreateAccountParams{PartnerID: svcPartner, APIKey: svcKey, Senders: []string{"ACME"}, Credit: sms.Credits(100)}); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *schedEnv) send(t testing.TB, n int) []*sms.SendResult {
	t.Helper()
	var out []*sms.SendResult
	for i := range n {
		r, err := e.svc.Send(e.ctx, &sms.SendParams{PartnerID: svcPartner, APIKey: svcKey, Mobile: "25471234567" + string(rune('0'+i)), Message: "Hello", Shortcode: "ACME"})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

func (e *schedEnv) message(t testing.TB, r *sms.SendResult) *sms.Message {
	t.Helper()
	m, err := e.store.SMSMessageGet(e.ctx, svcPartner, r.Number)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestSchedulerRetriesBadUpstreamAnswers: an upstream answering HTML, a
// 200 without responses, a 503 or nothing at all leaves each message
// queued, never sent without an upstream id. A 503 is a refusal: the
// retry follows the backoff. An answer that may hide an acceptance (a 200
// that cannot be read, no answer) leaves the outcome unknown: the message
// keeps its mark and waits for the confirmation window before it goes
// again. The retry goes through once the upstream answers properly.
func TestSchedulerRetriesBadUpstreamAnswers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		label   string
		failure advantatest.Failure
		n       int
		reason  string
		unknown bool
	}{
		{"HTML to one message", advantatest.FailHTML, 1, "not the expected JSON", true},
		{"HTML to a bulk", advantatest.FailHTML, 3, "not the expected JSON", true},
		{"200 without responses to one message", advantatest.FailNoResponses, 1, "has no responses", true},
		{"200 without responses to a bulk", advantatest.FailNoResponses, 2, "has no responses", true},
		{"503 HTML", advantatest.FailUnavailable, 2, "[503]", false},
		{"no answer", advantatest.FailHang, 1, "deadline exceeded", true},
	} {
		t.Run(tc.label, func(t *testing.T) {
			t.Parallel()
			e := schedSetup(t, sms.Credits(10), sms.Options{})
			e.up.Fail(advantagateway.PathSendBulk, tc.failure)
			res := e.send(t, tc.n)
			if _, err := e.svc.RunDue(e.ctx); err != nil {
				t.Fatal(err)
			}
			for _, r := range res {
				m := e.message(t, r)
				if m.Status != sms.StatusQueued || m.GatewayMessageID != "" || m.Attempts != 1 || !strings.Contains(m.FailureReason, tc.reason) ||
					(m.UnconfirmedSince != nil) != tc.unknown {
					t.Errorf("after the bad answer: %s, gateway id %q, %d attempts, reason %q, mark %v; want queued without an id, reason with %q, marked %v",
						m.Status, m.GatewayMessageID, m.Attempts, m.FailureReason, m.UnconfirmedSince, tc.reason, tc.unknown)
				}
			}
			wait := time.Minute
			if tc.unknown {
				e.clk.Add(time.Minute)
				if _, err := e.svc.RunDue(e.ctx); err != nil {
					t.Fatal(err)
				}
				if got := e.up.Requests(advantagateway.PathSendBulk); got != 1 {
					t.Fatalf("in the confirmation window: %d sendbulk requests, want 1", got)
				}
				wait = sms.DefaultConfirmWindow - time.Minute
			}
			e.clk.Add(wait)
			if n, err := e.svc.RunDue(e.ctx); err != nil || n != tc.n {
				t.Fatalf("retry: RunDue = %d, %v", n, err)
			}
			accepted := map[string]bool{}
			for _, m := range e.up.Messages() {
				if m.Code == 200 {
					accepted[m.MessageID] = true
				}
			}
			for _, r := range res {
				m := e.message(t, r)
				if m.Status != sms.StatusSent || !accepted[m.GatewayMessageID] || m.Attempts != 2 {
					t.Errorf("after the retry: %s, gateway id %q (accepted upstream: %v), %d attempts; want sent with the upstream's id at the second",
						m.Status, m.GatewayMessageID, accepted[m.GatewayMessageID], m.Attempts)
				}
			}
		})
	}
}

// TestSchedulerHungBulkConfirmedByPushedReport: an upstream that accepts
// a bulk and never answers is not handed it again within the
// confirmation window; its pushed reports, carrying the clientsmsid,
// record the messages as sent under the ids it gave, and it never sees
// them twice.
func TestSchedulerHungBulkConfirmedByPushedReport(t *testing.T) {
	t.Parallel()
	e := schedSetup(t, sms.Credits(10), sms.Options{})
	e.up.Fail(advantagateway.PathSendBulk, advantatest.FailAcceptHang)
	res := e.send(t, 3)
	if _, err := e.svc.RunDue(e.ctx); err != nil {
		t.Fatal(err)
	}
	e.clk.Add(4 * time.Minute)
	if _, err := e.svc.RunDue(e.ctx); err != nil {
		t.Fatal(err)
	}
	up := e.up.Messages()
	if len(up) != 3 || e.up.Requests(advantagateway.PathSendBulk) != 1 {
		t.Fatalf("the upstream got %d messages in %d requests; want 3 in 1", len(up), e.up.Requests(advantagateway.PathSendBulk))
	}
	for _, m := range up {
		body := e.up.ReportBody(m.MessageID, &sms.Report{Status: 32, Description: sms.DeliveredToTerminal})
		ur, err := e.gw.ParseDeliveryReport(body)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.svc.ApplyUpstreamReport(e.ctx, ur); err != nil {
			t.Fatalf("ApplyUpstreamReport(%s): %v", body, err)
		}
	}
	for i, r := range res {
		m := e.message(t, r)
		if m.Status != sms.StatusSent || m.GatewayMessageID != up[i].MessageID || m.Report == nil || !m.Report.Delivered() {
			t.Errorf("message %s after its report: %s under %q, report %+v; want sent under %s, delivered", r.ProviderMessageID, m.Status, m.GatewayMessageID, m.Report, up[i].MessageID)
		}
	}
	e.clk.Add(time.Hour)
	if _, err := e.svc.RunDue(e.ctx); err != nil {
		t.Fatal(err)
	}
	if got := len(e.up.Messages()); got != 3 {
		t.Errorf("the upstream got %d messages in all, want 3", got)
	}
	if c := e.up.Credit(); c != sms.Credits(7) {
		t.Errorf("upstream credit %s, want 7.00 (charged once each)", c)
	}
}

// TestSchedulerPausesOnUpstreamLowCredit: the upstream's 1004, through the
// real gateway, makes the guard read the balance, pause, and resume after
// a top-up at the upstream.
func TestSchedulerPausesOnUpstreamLowCredit(t *testing.T) {
	t.Parallel()
	e := schedSetup(t, sms.Credits(2), sms.Options{UpstreamCreditFloor: sms.Credits(1), PauseBelowFloor: true, UpstreamCreditCheckEvery: time.Hour})
	res := e.send(t, 3)
	if _, err := e.svc.RunDue(e.ctx); err != nil {
		t.Fatal(err)
	}
	if m := e.message(t, res[2]); m.Status != sms.StatusQueued || !strings.HasPrefix(m.FailureReason, "[1004]") {
		t.Fatalf("third message: %s (%q), want queued after a 1004", m.Status, m.FailureReason)
	}
	if _, err := e.svc.RunDue(e.ctx); err != nil {
		t.Fatal(err)
	}
	if c, low, _ := e.svc.UpstreamCredit(); !low || c != 0 || !e.svc.HandOverPaused() || e.up.Requests(advantagateway.PathGetBalance) != 2 {
		t.Fatalf("after the 1004: credit %s low %v paused %v, %d getbalance; want 0.00 low and paused after a second getbalance",
			c, low, e.svc.HandOverPaused(), e.up.Requests(advantagateway.PathGetBalance))
	}
	e.clk.Add(30 * time.Minute)
	if n, _ := e.svc.RunDue(e.ctx); n != 0 || len(e.up.Messages()) != 3 {
		t.Errorf("while paused: handed over %d, upstream got %d messages; want 0 and 3", n, len(e.up.Messages()))
	}
	e.up.TopUp(sms.Credits(10))
	e.clk.Add(30 * time.Minute)
	if n, _ := e.svc.RunDue(e.ctx); n != 1 {
		t.Errorf("after the top-up: handed over %d, want 1", n)
	}
	if m := e.message(t, res[2]); m.Status != sms.StatusSent || m.Attempts != 2 {
		t.Errorf("third message after the top-up: %s after %d attempts", m.Status, m.Attempts)
	}
}
