package advantagateway_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/ujumbe/messaging/sms"
	"github.com/ujumbe/messaging/sms/advantagateway"
)

// BenchmarkDeliveryReport measures a client's delivery-report request and
// the callback's work, on memstore with the upstream a loopback mock:
//
//   - pull: no final report is stored, so each request asks the upstream's
//     getdlr over HTTP (what every request did before reports were pushed);
//   - after-push: the upstream pushed the final report, so each request is
//     answered from the store;
//   - apply-push: the callback's part, storing one pushed interim report
//     (each newer than the last).
func BenchmarkDeliveryReport(b *testing.B) {
	for _, mode := range []string{"pull", "after-push", "apply-push"} {
		b.Run(mode, func(b *testing.B) {
			e := schedSetup(b, sms.Credits(1_000), sms.Options{})
			res := e.send(b, 1)
			if _, err := e.svc.RunDue(e.ctx); err != nil {
				b.Fatal(err)
			}
			m := e.message(b, res[0])
			interim := &sms.Report{Status: 2, Description: sms.DeliverySentToNetwork, NetworkID: "1", Time: e.clk.Now()}
			e.up.SetReport(m.GatewayMessageID, interim)
			if mode == "after-push" {
				final := &sms.Report{Status: 32, Description: sms.DeliveredToTerminal, NetworkID: "1", Time: e.clk.Now()}
				if err := e.svc.ApplyGatewayReport(e.ctx, m.GatewayMessageID, final); err != nil {
					b.Fatal(err)
				}
			}
			p := &sms.ReportParams{PartnerID: svcPartner, APIKey: svcKey, MessageID: strconv.FormatInt(res[0].Number, 10)}
			for b.Loop() {
				if mode == "apply-push" {
					r := *interim
					r.Time = r.Time.Add(time.Second)
					interim = &r
					if err := e.svc.ApplyGatewayReport(e.ctx, m.GatewayMessageID, interim); err != nil {
						b.Fatal(err)
					}
					continue
				}
				if _, err := e.svc.DeliveryReport(e.ctx, p); err != nil {
					b.Fatal(err)
				}
			}
			if n := e.up.Requests(advantagateway.PathGetDLR); mode != "pull" && n != 0 {
				b.Fatalf("%s asked the upstream %d times, want never", mode, n)
			}
		})
	}
}
