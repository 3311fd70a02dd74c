// Package fakegateway is a deterministic sms.Gateway for tests, examples and
// the example server. It accepts every message (unless Options.Fail says
// otherwise), records what it was given, and answers delivery reports from
// the message id alone, so its reports survive a restart of the process:
//
//   - before Options.Delay has passed since the hand-over (by the injected
//     clock) there is no report (sms.ErrNoReport);
//   - after it, a number ending in 0000 is AbsentSubscriber and every other
//     number DeliveredToTerminal, at the hand-over time plus Delay.
//
// Message ids look like "fk-<unix milliseconds>-<D or A>-<sequence>". A
// message handed over twice with the same Reference gets the same id and is
// recorded once in Sent, as an upstream with idempotency would do; Given
// lists every hand-over, repeats included.
//
// Options.Hang makes it accept a call's messages and then not answer
// until the call's context ends, as an upstream whose answer is lost;
// Unanswered returns the reports it would push for them, each carrying
// the message's client reference (its Number) and the id it gave.
package fakegateway

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ujumbe/messaging/internal/defaults"
	"github.com/ujumbe/messaging/sms"
)

var _ sms.Gateway = (*Gateway)(nil)

// Options configure a Gateway. A nil *Options means all defaults.
type Options struct {
	// Clock returns the current time. Default: time.Now.
	Clock func() time.Time
	// Delay is the time from the hand-over to the final delivery report.
	// Default 0: the report is there at once.
	Delay time.Duration
	// Balance is what Balance answers. Default 0.
	Balance sms.Credit
	// Fail, when set, is asked about each message; a non-nil error is that
	// message's result (a *sms.GatewayError, or any error for a retryable
	// failure) and the message is not recorded.
	Fail func(m *sms.GatewayMessage) error
	// Hang, when set, is asked about each call's messages; when it says
	// true for one of them, the call accepts the messages as usual and
	// then never answers: it waits until its context ends and returns the
	// context's error. Default nil: every call answers.
	Hang func(m *sms.GatewayMessage) bool
}

// Gateway is the fake gateway. It is safe for concurrent use.
type Gateway struct {
	o     Options
	mu    sync.Mutex
	seq   int64
	calls int
	sent  []sms.GatewayMessage
	given []sms.GatewayMessage
	byRef map[string]string
	// unanswered are the reports of the messages accepted by calls that
	// did not answer, in order.
	unanswered []*sms.UpstreamReport
}

// New returns a Gateway.
func New(opts *Options) *Gateway {
	o := defaults.Of(opts)
	o.Clock = defaults.Clock(o.Clock)
	return &Gateway{o: o, byRef: map[string]string{}}
}

// Send implements sms.Gateway.
func (g *Gateway) Send(ctx context.Context, msgs []*sms.GatewayMessage) ([]sms.GatewayResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out, hang := g.accept(msgs)
	if hang {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return out, nil
}

// accept records msgs and answers them; hang reports whether Options.Hang
// asked for the call not to be answered.
func (g *Gateway) accept(msgs []*sms.GatewayMessage) (out []sms.GatewayResult, hang bool) {
	now := g.o.Clock()
	g.mu.Lock()
	defer g.mu.Unlock()
	g.calls++
	for _, m := range msgs {
		hang = hang || (g.o.Hang != nil && g.o.Hang(m))
	}
	out = make([]sms.GatewayResult, len(msgs))
	for i, m := range msgs {
		if g.o.Fail != nil {
			if err := g.o.Fail(m); err != nil {
				out[i].Err = err
				continue
			}
		}
		g.given = append(g.given, *m)
		if id, ok := g.byRef[m.Reference]; ok && m.Reference != "" {
			out[i].MessageID = id
			continue
		}
		g.seq++
		outcome := "D"
		if strings.HasSuffix(m.Mobile, "0000") {
			outcome = "A"
		}
		id := fmt.Sprintf("fk-%d-%s-%d", now.UnixMilli(), outcome, g.seq)
		if m.Reference != "" {
			g.byRef[m.Reference] = id
		}
		g.sent = append(g.sent, *m)
		out[i].MessageID = id
	}
	if hang {
		for i, m := range msgs {
			if out[i].Err == nil {
				g.unanswered = append(g.unanswered, &sms.UpstreamReport{GatewayMessageID: out[i].MessageID,
					ClientRef: strconv.FormatInt(m.Number, 10), Report: &sms.Report{Status: sms.DeliveryStatus(sms.DeliverySentToNetwork),
						Description: sms.DeliverySentToNetwork, Time: now}})
			}
		}
	}
	return out, hang
}

// Given returns copies of every message handed over so far, in order,
// repeats of a Reference included.
func (g *Gateway) Given() []sms.GatewayMessage {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]sms.GatewayMessage{}, g.given...)
}

// Unanswered returns the reports the upstream would push for the
// messages it accepted in calls it did not answer (see Options.Hang): a
// SentToNetwork report at the hand-over time, carrying the id it gave and
// the message's Number as the client reference, in order.
func (g *Gateway) Unanswered() []*sms.UpstreamReport {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]*sms.UpstreamReport, len(g.unanswered))
	for i, r := range g.unanswered {
		c, rep := *r, *r.Report
		c.Report = &rep
		out[i] = &c
	}
	return out
}

// DeliveryReport implements sms.Gateway. An id this package did not make is
// an error.
func (g *Gateway) DeliveryReport(ctx context.Context, id string) (*sms.Report, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	parts := strings.Split(id, "-")
	if len(parts) != 4 || parts[0] != "fk" || (parts[2] != "D" && parts[2] != "A") {
		return nil, fmt.Errorf("fakegateway: unknown message id %q", id)
	}
	ms, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return nil, fmt.Errorf("fakegateway: unknown message id %q", id)
	}
	at := time.UnixMilli(ms).UTC().Add(g.o.Delay)
	if g.o.Clock().Before(at) {
		return nil, sms.ErrNoReport
	}
	desc := sms.DeliveredToTerminal
	if parts[2] == "A" {
		desc = sms.DeliveryAbsentSubscriber
	}
	return &sms.Report{Status: sms.DeliveryStatus(desc), Description: desc, Time: at}, nil
}

// Balance implements sms.Gateway.
func (g *Gateway) Balance(ctx context.Context) (sms.Credit, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	return g.o.Balance, nil
}

// Sent returns copies of the messages accepted so far, in order.
func (g *Gateway) Sent() []sms.GatewayMessage {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]sms.GatewayMessage{}, g.sent...)
}

// Calls returns how many times Send was called.
func (g *Gateway) Calls() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.calls
}
