package fakegateway_test

import (
	"testing"

	"github.com/ujumbe/messaging/sms"
	"github.com/ujumbe/messaging/sms/fakegateway"
	"github.com/ujumbe/messaging/sms/gatewaytest"
)

// TestConformance runs the sms.Gateway conformance suite against a fake
// gateway configured with the simulated upstream's rules: its clock, its
// report delay, its balance and its refusals (through Options.Fail). The
// fake's own delivery rule (a number ending in 0000 is AbsentSubscriber)
// is the suite's.
func TestConformance(t *testing.T) {
	gatewaytest.Run(t, func(t *testing.T, up *gatewaytest.Upstream) sms.Gateway {
		return fakegateway.New(&fakegateway.Options{
			Clock:   up.Now,
			Delay:   gatewaytest.ReportDelay,
			Balance: up.Balance(),
			Fail: func(m *sms.GatewayMessage) error {
				if r := up.Refusal(m.Mobile); r != nil {
					return r
				}
				return nil
			},
		})
	})
}
