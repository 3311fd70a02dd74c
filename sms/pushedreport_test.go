package sms_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging/sms"
	"github.com/ujumbe/messaging/sms/fakegateway"
)

// reportCounter counts the delivery reports asked of the gateway.
type reportCounter struct {
	sms.Gateway
	asked atomic.Int64
}

func (g *reportCounter) DeliveryReport(ctx context.Context, id string) (*sms.Report, error) {
	g.asked.Add(1)
	return g.Gateway.DeliveryReport(ctx, id)
}

// pushedSetup sends one message and hands it over; the gateway reports
// nothing on its own for an hour.
func pushedSetup(t *testing.T) (*env, *reportCounter, *sms.SendResult, *sms.Message) {
	t.Helper()
	rc := &reportCounter{}
	e := setup(t, &setupOpts{gw: &fakegateway.Options{Delay: time.Hour}, wrap: func(g sms.Gateway) sms.Gateway { rc.Gateway = g; return rc }})
	res := e.send(t, &sms.SendParams{})
	e.clk.Add(time.Second)
	if n := e.runDue(t); n != 1 {
		t.Fatalf("RunDue handed over %d, want 1", n)
	}
	m, err := e.store.SMSMessageGet(e.ctx, partner, res.Number)
	if err != nil || m.GatewayMessageID == "" {
		t.Fatalf("sent message %+v, %v: want a gateway id", m, err)
	}
	return e, rc, res, m
}

func TestApplyGatewayReportServedWithoutAskingTheGateway(t *testing.T) {
	t.Parallel()
	e, rc, res, m := pushedSetup(t)
	// An interim report is stored, and the gateway is still asked.
	if err := e.svc.ApplyGatewayReport(e.ctx, m.GatewayMessageID, &sms.Report{Status: 2, Description: sms.DeliverySentToNetwork, Time: base.Add(2 * time.Second)}); err != nil {
		t.Fatal(err)
	}
	r, err := report(t, e, res.ProviderMessageID)
	if err != nil || r.Description != sms.DeliverySentToNetwork || rc.asked.Load() != 1 {
		t.Errorf("report after an interim push: %+v, %v, gateway asked %d times; want SentToNetwork after asking once", r, err, rc.asked.Load())
	}
	// A final one (status number as the upstream gave it, network left
	// out) is served from the store.
	at := base.Add(7 * time.Second)
	if err := e.svc.ApplyGatewayReport(e.ctx, m.GatewayMessageID, &sms.Report{Status: 99, Description: sms.DeliveredToTerminal, Time: at}); err != nil {
		t.Fatal(err)
	}
	r, err = report(t, e, res.ProviderMessageID)
	if err != nil {
		t.Fatal(err)
	}
	nairobi, _ := time.LoadLocation("Africa/Nairobi")
	want := &sms.DeliveryReport{MessageID: res.ProviderMessageID, Status: 32, Description: sms.DeliveredToTerminal, NetworkID: "254", TAT: 6 * time.Second, Time: at.In(nairobi)}
	if d := cmp.Diff(want, r); d != "" {
		t.Errorf("report after the final push (-want +got):\n%s", d)
	}
	if rc.asked.Load() != 1 {
		t.Errorf("the gateway was asked %d times, want once (before the final report)", rc.asked.Load())
	}
}

func TestApplyGatewayReportNeverMovesAFinalStateBack(t *testing.T) {
	t.Parallel()
	e, _, res, m := pushedSetup(t)
	final := &sms.Report{Description: sms.DeliveryAbsentSubscriber, Time: base.Add(5 * time.Second)}
	if err := e.svc.ApplyGatewayReport(e.ctx, m.GatewayMessageID, final); err != nil {
		t.Fatal(err)
	}
	for _, later := range []*sms.Report{
		{Description: sms.DeliverySentToNetwork, Time: base.Add(9 * time.Second)},
		{Description: sms.DeliveredToTerminal, Time: base.Add(9 * time.Second)},
	} {
		if err := e.svc.ApplyGatewayReport(e.ctx, m.GatewayMessageID, later); err != nil {
			t.Errorf("a %s after the final report: %v, want it acknowledged", later.Description, err)
		}
	}
	got, _ := e.store.SMSMessageGet(e.ctx, partner, res.Number)
	if got.Report == nil || got.Report.Description != sms.DeliveryAbsentSubscriber {
		t.Errorf("stored report %+v, want the first final one, AbsentSubscriber", got.Report)
	}
}

func TestApplyGatewayReportOlderInterimIgnored(t *testing.T) {
	t.Parallel()
	e, _, res, m := pushedSetup(t)
	if err := e.svc.ApplyGatewayReport(e.ctx, m.GatewayMessageID, &sms.Report{Description: sms.DeliverySentToNetwork, Time: base.Add(5 * time.Second)}); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.ApplyGatewayReport(e.ctx, m.GatewayMessageID, &sms.Report{Description: sms.DeliveryScheduled, Time: base.Add(3 * time.Second)}); err != nil {
		t.Fatal(err)
	}
	got, _ := e.store.SMSMessageGet(e.ctx, partner, res.Number)
	if got.Report == nil || got.Report.Description != sms.DeliverySentToNetwork {
		t.Errorf("stored report %+v, want the newer SentToNetwork", got.Report)
	}
}

func TestApplyGatewayReportUnknownID(t *testing.T) {
	t.Parallel()
	e, _, _, m := pushedSetup(t)
	for _, id := range []string{"", "no-such-id", m.GatewayMessageID + "0"} {
		if err := e.svc.ApplyGatewayReport(e.ctx, id, &sms.Report{Description: sms.DeliveredToTerminal}); !errors.Is(err, sms.ErrUnknownGatewayMessage) {
			t.Errorf("ApplyGatewayReport(%q) = %v, want ErrUnknownGatewayMessage", id, err)
		}
	}
	if err := e.svc.ApplyGatewayReport(e.ctx, m.GatewayMessageID, nil); !errors.Is(err, sms.ErrUnknownGatewayMessage) {
		t.Errorf("a nil report: %v", err)
	}
}
