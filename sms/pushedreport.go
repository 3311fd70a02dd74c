package sms

import (
	"context"
	"errors"

	"github.com/ujumbe/messaging"
)

// ErrUnknownGatewayMessage is returned by ApplyGatewayReport for a report
// of a message id the gateway never gave the service.
var ErrUnknownGatewayMessage = errors.New("sms: no message has this gateway message id")

// ApplyGatewayReport applies a delivery report the upstream gateway pushed
// (to a callback URL, see httpapi) for the message it accepted as
// gatewayMessageID. The report is stored, as DeliveryReport would store
// one it asked the gateway for, unless it would change nothing, the
// stored report is final (a final state is never moved back: the store
// keeps it, even against a concurrent report), or it is not final and
// older than the stored one (reports may arrive out of order). Once a
// final report is stored, DeliveryReport answers with it without asking
// the gateway; until then it keeps asking the gateway, so messages whose
// report never comes pushed still get one.
//
// An id no message has is ErrUnknownGatewayMessage; a store failure is
// returned as it is.
func (s *SMS) ApplyGatewayReport(ctx context.Context, gatewayMessageID string, r *Report) error {
	if gatewayMessageID == "" || r == nil {
		return ErrUnknownGatewayMessage
	}
	m, err := s.store.SMSMessageByGatewayID(ctx, gatewayMessageID)
	if errors.Is(err, messaging.ErrNotFound) {
		return ErrUnknownGatewayMessage
	}
	if err != nil {
		return err
	}
	nr := normalReport(m, r)
	old := m.Report
	switch {
	case old != nil && old.Final():
		if !sameReport(old, &nr) {
			s.log.InfoContext(ctx, "sms: pushed delivery report after a final one ignored", "number", m.Number, "final", old.Description, "pushed", nr.Description)
		}
		return nil
	case old != nil && sameReport(old, &nr):
		return nil
	case old != nil && !nr.Final() && !old.Time.IsZero() && nr.Time.Before(old.Time):
		s.log.InfoContext(ctx, "sms: pushed delivery report older than the stored one ignored", "number", m.Number, "stored", old.Description, "pushed", nr.Description)
		return nil
	}
	if err := s.saveReport(ctx, m, old, &nr); err != nil {
		return err
	}
	s.log.DebugContext(ctx, "sms: pushed delivery report stored", "number", m.Number, "description", nr.Description, "final", nr.Final())
	return nil
}
