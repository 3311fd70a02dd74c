package sms_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ujumbe/messaging/internal/metrictest"
	"github.com/ujumbe/messaging/sms"
)

// refusing is a gateway that refuses the messages to some mobiles: for
// good (1001) or for now (1004, retryable).
type refusing struct {
	sms.Gateway
	never, later string
}

func (g *refusing) Send(ctx context.Context, msgs []*sms.GatewayMessage) ([]sms.GatewayResult, error) {
	res, err := g.Gateway.Send(ctx, msgs)
	for i, m := range msgs {
		switch m.Mobile {
		case g.never:
			res[i] = sms.GatewayResult{Err: &sms.GatewayError{Code: 1001, Description: "Invalid mobile"}}
		case g.later:
			res[i] = sms.GatewayResult{Err: &sms.GatewayError{Code: 1004, Description: "Low bulk credits", Retryable: true}}
		}
	}
	return res, err
}

// TestSMSMetrics: accepting counts messages, segments and credit per
// account; the hand-over counts sent, failed and retried messages; the
// queue gauges show what waits. No attribute holds a mobile or a text.
func TestSMSMetrics(t *testing.T) {
	t.Parallel()
	rd := metrictest.New(t)
	e := setup(t, &setupOpts{sms: &sms.Options{MeterProvider: rd.Provider},
		wrap: func(g sms.Gateway) sms.Gateway {
			return &refusing{Gateway: g, never: "254700000001", later: "254700000002"}
		}})
	long := strings.Repeat("a", 161) // two GSM-7 parts
	e.send(t, &sms.SendParams{Message: long})
	e.send(t, &sms.SendParams{Mobile: "254700000001", Message: "Refused for good"})
	e.send(t, &sms.SendParams{Mobile: "254700000002", Message: "Refused for now"})
	acct := sms.AttrAccount.String(partner)
	s := rd.Collect(t)
	for _, tc := range []struct {
		name      string
		got, want float64
	}{
		{"accepted", s.Sum(sms.MetricAccepted, acct), 3},
		{"segments", s.Sum(sms.MetricSegments, acct), 4},
		{"credit debited", s.Sum(sms.MetricCreditDebited, acct), 4},
		{"sent before the hand-over", s.Sum(sms.MetricSent), 0},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	e.clk.Add(7 * time.Second)
	s = rd.Collect(t)
	depth, _ := s.Gauge(sms.MetricQueueDepth)
	age, _ := s.Gauge(sms.MetricQueueOldestAge)
	if depth != 3 || age != 7 {
		t.Errorf("queue depth %v, oldest age %vs; want 3 and 7s", depth, age)
	}
	if n := e.runDue(t); n != 3 {
		t.Fatalf("handed over %d", n)
	}
	s = rd.Collect(t)
	for _, tc := range []struct {
		name      string
		got, want float64
	}{
		{"sent", s.Sum(sms.MetricSent, acct), 1},
		{"failed", s.Sum(sms.MetricFailed, acct), 1},
		{"retries", s.Sum(sms.MetricRetries, acct), 1},
		{"accepted after the hand-over", s.Sum(sms.MetricAccepted), 3},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	if depth, _ := s.Gauge(sms.MetricQueueDepth); depth != 1 {
		t.Errorf("queue depth after the hand-over = %v, want 1 (the retry)", depth)
	}
	all := s.AllAttributes()
	for _, bad := range []string{"2547", "Refused", apikey} {
		if strings.Contains(all, bad) {
			t.Errorf("a metric attribute holds %q:\n%s", bad, all)
		}
	}
	// A replayed request counts nothing more.
	e.send(t, &sms.SendParams{Message: "Once", IdempotencyKey: "k1"})
	e.send(t, &sms.SendParams{Message: "Once", IdempotencyKey: "k1"})
	if got := rd.Collect(t).Sum(sms.MetricAccepted, acct); got != 4 {
		t.Errorf("accepted after a send and its replay = %v, want 4", got)
	}
}
