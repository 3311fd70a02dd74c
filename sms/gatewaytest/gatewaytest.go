// Package gatewaytest is the conformance suite of sms.Gateway
// implementations, in the style of testing/slogtest: one function, Run,
// that every gateway's tests call.
//
// The suite asserts the contract documented on sms.Gateway:
//
//   - Send returns one result per message, in order, and no error for the
//     call when the upstream answered: zero messages give zero results;
//   - an accepted message's result has a MessageID and no Err, and the ids
//     of distinct messages are distinct, within a call and across calls;
//   - a refused message's result has no MessageID and an Err that is a
//     *sms.GatewayError with the upstream's code, description and
//     retryability (sms.Retryable agrees with it);
//   - DeliveryReport, by the id Send gave, answers sms.ErrNoReport until
//     the upstream has a report, then the report of that very message, its
//     Status the sms.DeliveryStatus of its Description; an id the upstream
//     never gave is an error, not a report;
//   - Balance answers the upstream's credit;
//   - with a cancelled context every method fails with an error wrapping
//     context.Canceled, and Send's error is for the whole call (no results,
//     retryable), so that every message is retried.
//
// The upstream is simulated: Run gives the constructor an Upstream whose
// rules (refused numbers, delivery outcomes, report delay, balance, clock)
// the gateway's upstream must follow. A simulator (sms/fakegateway) is
// configured from it; an HTTP adapter (sms/advantagateway) is pointed at a
// mock server that answers by these rules. Ordering is observable because
// refusals and delivery outcomes depend on the message, and the suite's
// batches are not palindromes of outcomes, so a result or an id given to
// the wrong message (a reversed, shifted or short list) shows.
//
// A gateway's test calls it like this:
//
//	func TestConformance(t *testing.T) {
//		gatewaytest.Run(t, func(t *testing.T, up *gatewaytest.Upstream) sms.Gateway {
//			return fakegateway.New(&fakegateway.Options{Clock: up.Now, Delay: gatewaytest.ReportDelay, ...})
//		})
//	}
package gatewaytest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ujumbe/messaging/sms"
)

// Mobile numbers with a rule of the simulated upstream. Every other number
// is accepted.
const (
	// MobileInvalid is refused as an invalid mobile number (1003, permanent).
	MobileInvalid = "254700001003"
	// MobileLowCredit is refused for low credits (1004, retryable).
	MobileLowCredit = "254700001004"
	// MobileAbsent is accepted and its delivery report is
	// AbsentSubscriber. So is that of any number ending in 0000.
	MobileAbsent = "254712340000"
)

// ReportDelay is the time from the hand-over of a message to its final
// delivery report on the Upstream's clock.
const ReportDelay = 5 * time.Second

// Balance is the service's credit at the simulated upstream: 545.50.
const Balance = sms.Credit(54550)

// Upstream is the simulated upstream behind one gateway under test. Its
// methods are safe for concurrent use (a mock server's handler calls them).
type Upstream struct {
	mu  sync.Mutex
	now time.Time
}

// newUpstream returns an Upstream whose clock starts at a whole second.
func newUpstream() *Upstream {
	return &Upstream{now: time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)}
}

// Now is the upstream's clock. Only the suite advances it.
func (u *Upstream) Now() time.Time {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.now
}

func (u *Upstream) advance(d time.Duration) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.now = u.now.Add(d)
}

// Refusal returns the upstream's refusal of a message to mobile, or nil if
// it accepts it. Each call returns a new error.
func (u *Upstream) Refusal(mobile string) *sms.GatewayError {
	switch mobile {
	case MobileInvalid:
		return &sms.GatewayError{Code: 1003, Description: "Invalid mobile number"}
	case MobileLowCredit:
		return &sms.GatewayError{Code: 1004, Description: "Low bulk credits", Retryable: true}
	}
	return nil
}

// Report returns the delivery report of a message to mobile accepted at
// acceptedAt, or nil while there is none yet (before ReportDelay has
// passed on the upstream's clock). A number ending in 0000 is
// AbsentSubscriber, every other DeliveredToTerminal, at acceptedAt plus
// ReportDelay.
func (u *Upstream) Report(mobile string, acceptedAt time.Time) *sms.Report {
	at := acceptedAt.Add(ReportDelay)
	if u.Now().Before(at) {
		return nil
	}
	desc := sms.DeliveredToTerminal
	if strings.HasSuffix(mobile, "0000") {
		desc = sms.DeliveryAbsentSubscriber
	}
	return &sms.Report{Status: sms.DeliveryStatus(desc), Description: desc, Time: at.UTC()}
}

// Balance returns the service's credit at the upstream, the constant
// Balance.
func (u *Upstream) Balance() sms.Credit { return Balance }

// Run runs the suite. newGateway returns a fresh gateway whose upstream
// follows up's rules; it is called once per subtest.
func Run(t *testing.T, newGateway func(t *testing.T, up *Upstream) sms.Gateway) {
	t.Helper()
	s := &suite{newGateway: newGateway}
	t.Run("SendNone", s.sendNone)
	for _, n := range []int{1, 3, 20} {
		t.Run(fmt.Sprintf("SendAccepted/%d", n), func(t *testing.T) { s.sendAccepted(t, n) })
	}
	t.Run("SendMixedInOrder", s.sendMixed)
	t.Run("SendOneRefused", s.sendOneRefused)
	t.Run("IDsDistinctAcrossCalls", s.idsAcrossCalls)
	t.Run("DeliveryReports", s.deliveryReports)
	t.Run("DeliveryReportUnknownID", s.unknownID)
	t.Run("Balance", s.balance)
	t.Run("CanceledContext", s.canceled)
}

type suite struct {
	newGateway func(t *testing.T, up *Upstream) sms.Gateway
}

func (s *suite) gateway(t *testing.T) (sms.Gateway, *Upstream) {
	t.Helper()
	up := newUpstream()
	return s.newGateway(t, up), up
}

// messages returns a message per mobile, with distinct references and
// numbers starting at first.
func messages(first int64, mobiles ...string) []*sms.GatewayMessage {
	out := make([]*sms.GatewayMessage, len(mobiles))
	for i, m := range mobiles {
		n := first + int64(i)
		out[i] = &sms.GatewayMessage{Reference: fmt.Sprintf("sms_gwt_%d", n), Number: n, Mobile: m, Text: fmt.Sprintf("Hello %d", n), Sender: "ACME"}
	}
	return out
}

// outcome is a GatewayResult reduced to what the contract fixes.
type outcome struct {
	// Accepted: a MessageID and no Err.
	Accepted bool
	// Refusal is Err when it is a *sms.GatewayError.
	Refusal *sms.GatewayError
	// Retryable is sms.Retryable(Err) for a refusal.
	Retryable bool
	// Other describes anything else: an Err that is not a
	// *sms.GatewayError, or a MessageID next to an Err.
	Other string
}

func reduce(rs []sms.GatewayResult) []outcome {
	out := make([]outcome, len(rs))
	for i, r := range rs {
		switch {
		case r.Err == nil && r.MessageID != "":
			out[i].Accepted = true
		case r.Err == nil:
			out[i].Other = "no MessageID and no Err"
		default:
			var ge *sms.GatewayError
			if errors.As(r.Err, &ge) {
				c := *ge
				out[i].Refusal = &c
			} else {
				out[i].Other = "error " + r.Err.Error()
			}
			out[i].Retryable = sms.Retryable(r.Err)
			if r.MessageID != "" {
				out[i].Other += fmt.Sprintf(" with MessageID %q", r.MessageID)
			}
		}
	}
	return out
}

// want returns the outcomes the upstream's rules give msgs.
func want(up *Upstream, msgs []*sms.GatewayMessage) []outcome {
	out := make([]outcome, len(msgs))
	for i, m := range msgs {
		if r := up.Refusal(m.Mobile); r != nil {
			out[i] = outcome{Refusal: r, Retryable: r.Retryable}
		} else {
			out[i].Accepted = true
		}
	}
	return out
}

// send calls Send and checks the results against the upstream's rules.
func send(t *testing.T, g sms.Gateway, up *Upstream, msgs []*sms.GatewayMessage) []sms.GatewayResult {
	t.Helper()
	res, err := g.Send(context.Background(), msgs)
	if err != nil {
		t.Fatalf("Send of %d messages: error for the call: %v", len(msgs), err)
	}
	if d := cmp.Diff(want(up, msgs), reduce(res)); d != "" {
		t.Errorf("Send of %d messages (mobiles %v): results, one per message in order (-want +got):\n%s", len(msgs), mobiles(msgs), d)
	}
	return res
}

func mobiles(msgs []*sms.GatewayMessage) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.Mobile
	}
	return out
}

// distinctIDs fails if two accepted results share an id.
func distinctIDs(t *testing.T, res []sms.GatewayResult) {
	t.Helper()
	seen := map[string]int{}
	for i, r := range res {
		if r.MessageID == "" {
			continue
		}
		if j, ok := seen[r.MessageID]; ok {
			t.Errorf("results %d and %d, distinct messages, share the MessageID %q", j, i, r.MessageID)
		}
		seen[r.MessageID] = i
	}
}

func (s *suite) sendNone(t *testing.T) {
	g, _ := s.gateway(t)
	res, err := g.Send(context.Background(), nil)
	if err != nil || len(res) != 0 {
		t.Errorf("Send of no messages = %d results, %v; want none and no error", len(res), err)
	}
}

func (s *suite) sendAccepted(t *testing.T, n int) {
	g, up := s.gateway(t)
	// Every third number, from the first, ends in 0000: its report shows
	// whether its id is the one of its own message, and a reversed or
	// shifted list of results does not match the pattern.
	ms := make([]string, n)
	for i := range ms {
		ms[i] = fmt.Sprintf("2547120%05d", i+1)
		if i%3 == 0 {
			ms[i] = fmt.Sprintf("25471%03d0000", i+1)
		}
	}
	msgs := messages(1, ms...)
	acceptedAt := up.Now()
	res := send(t, g, up, msgs)
	distinctIDs(t, res)
	if t.Failed() {
		return
	}
	up.advance(ReportDelay)
	checkReports(t, g, up, msgs, res, acceptedAt)
}

// checkReports checks that the report of each result's id is the report of
// its own message, accepted at acceptedAt.
func checkReports(t *testing.T, g sms.Gateway, up *Upstream, msgs []*sms.GatewayMessage, res []sms.GatewayResult, acceptedAt time.Time) {
	t.Helper()
	for i, r := range res {
		rep, err := g.DeliveryReport(context.Background(), r.MessageID)
		if err != nil {
			t.Errorf("DeliveryReport of message %d (%s, id %q): %v", i, msgs[i].Mobile, r.MessageID, err)
			continue
		}
		if d := cmp.Diff(up.Report(msgs[i].Mobile, acceptedAt), rep); d != "" {
			t.Errorf("DeliveryReport of message %d (%s, id %q), the report of that message (-want +got):\n%s", i, msgs[i].Mobile, r.MessageID, d)
		}
		if rep.Status != sms.DeliveryStatus(rep.Description) {
			t.Errorf("DeliveryReport of message %d: Status %d, want DeliveryStatus(%q) = %d", i, rep.Status, rep.Description, sms.DeliveryStatus(rep.Description))
		}
	}
}

func (s *suite) sendMixed(t *testing.T) {
	g, up := s.gateway(t)
	// Not a palindrome: reversed or shifted results do not match.
	res := send(t, g, up, messages(1, MobileInvalid, "254712000002", MobileLowCredit, MobileAbsent, "254712000005", "254712000006"))
	distinctIDs(t, res)
}

func (s *suite) sendOneRefused(t *testing.T) {
	g, up := s.gateway(t)
	send(t, g, up, messages(1, MobileInvalid))
	send(t, g, up, messages(2, MobileLowCredit))
}

func (s *suite) idsAcrossCalls(t *testing.T) {
	g, up := s.gateway(t)
	a := send(t, g, up, messages(1, "254712000001", "254712000002"))
	b := send(t, g, up, messages(3, "254712000003"))
	c := send(t, g, up, messages(4, "254712000004", "254712000005"))
	distinctIDs(t, append(append(a, b...), c...))
}

func (s *suite) deliveryReports(t *testing.T) {
	g, up := s.gateway(t)
	ctx := context.Background()
	// Not a palindrome of outcomes: reversed ids give other reports.
	msgs := messages(1, MobileAbsent, "254712000002", "254712350000", "254712000004", "254712000005")
	acceptedAt := up.Now()
	res := send(t, g, up, msgs)
	if t.Failed() {
		return
	}
	for i, r := range res {
		if rep, err := g.DeliveryReport(ctx, r.MessageID); !errors.Is(err, sms.ErrNoReport) {
			t.Errorf("DeliveryReport of message %d (%s) before the upstream has one = %+v, %v; want sms.ErrNoReport", i, msgs[i].Mobile, rep, err)
		}
	}
	up.advance(ReportDelay)
	checkReports(t, g, up, msgs, res, acceptedAt)
}

func (s *suite) unknownID(t *testing.T) {
	g, up := s.gateway(t)
	send(t, g, up, messages(1, "254712000001"))
	up.advance(ReportDelay)
	rep, err := g.DeliveryReport(context.Background(), "gatewaytest-never-given")
	if err == nil || rep != nil {
		t.Errorf("DeliveryReport of an id never given = %+v, %v; want an error and no report", rep, err)
	}
}

func (s *suite) balance(t *testing.T) {
	g, up := s.gateway(t)
	if b, err := g.Balance(context.Background()); err != nil || b != up.Balance() {
		t.Errorf("Balance = %s, %v; want %s", b, err, up.Balance())
	}
}

func (s *suite) canceled(t *testing.T) {
	g, _ := s.gateway(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := g.Send(ctx, messages(1, "254712000001", "254712000002"))
	if !errors.Is(err, context.Canceled) || res != nil || !sms.Retryable(err) {
		t.Errorf("Send with a cancelled context = %d results, %v; want no results and a retryable error wrapping context.Canceled", len(res), err)
	}
	if rep, err := g.DeliveryReport(ctx, "1"); !errors.Is(err, context.Canceled) || rep != nil {
		t.Errorf("DeliveryReport with a cancelled context = %+v, %v; want an error wrapping context.Canceled", rep, err)
	}
	if b, err := g.Balance(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Balance with a cancelled context = %s, %v; want an error wrapping context.Canceled", b, err)
	}
}
