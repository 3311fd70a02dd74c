package sms_test

import (
	"context"
	"strings"
	"testing"

	"github.com/ujumbe/messaging/sms"
)

// idlessGateway accepts every message without giving its id.
type idlessGateway struct{ sms.Gateway }

func (g idlessGateway) Send(ctx context.Context, msgs []*sms.GatewayMessage) ([]sms.GatewayResult, error) {
	return make([]sms.GatewayResult, len(msgs)), nil
}

func TestNeverSentWithoutAGatewayID(t *testing.T) {
	t.Parallel()
	e := setup(t, &setupOpts{wrap: func(g sms.Gateway) sms.Gateway { return idlessGateway{g} }})
	res := e.sendN(t, 2)
	e.runDue(t)
	for _, r := range res {
		if m := e.stored(t, r); m.Status != sms.StatusQueued || m.GatewayMessageID != "" || !strings.Contains(m.FailureReason, "without giving its id") {
			t.Errorf("message accepted without an id: %s, reason %q; want queued for a retry", m.Status, m.FailureReason)
		}
	}
}
