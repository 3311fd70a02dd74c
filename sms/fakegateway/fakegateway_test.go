package fakegateway_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ujumbe/messaging/sms"
	"github.com/ujumbe/messaging/sms/fakegateway"
)

func TestDeterministicReports(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)
	g := fakegateway.New(&fakegateway.Options{Clock: func() time.Time { return now }, Delay: 5 * time.Second, Balance: sms.Credits(7)})
	res, err := g.Send(ctx, []*sms.GatewayMessage{
		{Reference: "a", Mobile: "254712345678", Text: "x", Sender: "S"},
		{Reference: "b", Mobile: "254712340000", Text: "y", Sender: "S"},
		{Reference: "a", Mobile: "254712345678", Text: "x", Sender: "S"}, // duplicate hand-over
	})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].MessageID == "" || res[0].MessageID == res[1].MessageID || res[2].MessageID != res[0].MessageID {
		t.Errorf("ids %q %q %q: want two distinct ids, the duplicate getting the first's", res[0].MessageID, res[1].MessageID, res[2].MessageID)
	}
	if n := len(g.Sent()); n != 2 {
		t.Errorf("recorded %d messages, want 2 (the duplicate dropped)", n)
	}
	if _, err := g.DeliveryReport(ctx, res[0].MessageID); !errors.Is(err, sms.ErrNoReport) {
		t.Errorf("report before the delay: %v, want ErrNoReport", err)
	}
	now = now.Add(5 * time.Second)
	// A new gateway (a restarted process) answers from the id alone.
	g2 := fakegateway.New(&fakegateway.Options{Clock: func() time.Time { return now }, Delay: 5 * time.Second})
	for i, want := range []string{sms.DeliveredToTerminal, sms.DeliveryAbsentSubscriber} {
		r, err := g2.DeliveryReport(ctx, res[i].MessageID)
		if err != nil || r.Description != want || r.Status != sms.DeliveryStatus(want) || !r.Time.Equal(now) {
			t.Errorf("report %d: %+v, %v; want %s at %s", i, r, err, want, now)
		}
	}
	if _, err := g2.DeliveryReport(ctx, "nope"); err == nil || errors.Is(err, sms.ErrNoReport) {
		t.Errorf("report of an unknown id: %v", err)
	}
	if b, err := g.Balance(ctx); err != nil || b != sms.Credits(7) {
		t.Errorf("Balance = %s, %v", b, err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := g.Send(cctx, []*sms.GatewayMessage{{Reference: "c"}}); !errors.Is(err, context.Canceled) {
		t.Errorf("Send with a canceled context: %v", err)
	}
}

// TestHangAcceptsAndReportsWithTheReference: a call Options.Hang picks
// accepts its messages, answers nothing until its context ends, and
// leaves a report per message carrying the id it gave and the message's
// Number as the client reference; Given lists every hand-over.
func TestHangAcceptsAndReportsWithTheReference(t *testing.T) {
	now := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)
	g := fakegateway.New(&fakegateway.Options{Clock: func() time.Time { return now },
		Hang: func(m *sms.GatewayMessage) bool { return m.Text == "hang" }})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	res, err := g.Send(ctx, []*sms.GatewayMessage{{Reference: "a", Number: 41, Mobile: "254712345678", Text: "hang"}, {Reference: "b", Number: 42, Mobile: "254712345679", Text: "x"}})
	if !errors.Is(err, context.DeadlineExceeded) || res != nil {
		t.Fatalf("hung call: %v, %v; want the context's error and no results", res, err)
	}
	reps := g.Unanswered()
	if len(reps) != 2 || reps[0].ClientRef != "41" || reps[1].ClientRef != "42" || reps[0].GatewayMessageID == "" ||
		reps[0].GatewayMessageID == reps[1].GatewayMessageID || reps[0].Report.Description != sms.DeliverySentToNetwork {
		t.Fatalf("unanswered reports %+v", reps)
	}
	if _, err := g.Send(context.Background(), []*sms.GatewayMessage{{Reference: "b", Number: 42, Mobile: "254712345679", Text: "x"}}); err != nil {
		t.Fatal(err)
	}
	if given, sent := len(g.Given()), len(g.Sent()); given != 3 || sent != 2 {
		t.Errorf("given %d, sent %d; want 3 hand-overs of 2 messages", given, sent)
	}
}
