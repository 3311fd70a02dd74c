package sms

import (
	"context"
	"errors"
	"strconv"

	"github.com/ujumbe/messaging"
)

// ErrUnknownGatewayMessage is returned by ApplyGatewayReport for a report
// of a message id the gateway never gave the service.
var ErrUnknownGatewayMessage = errors.New("sms: no message has this gateway message id")

// UpstreamReport is a delivery report of the upstream gateway, pushed to
// the service (see httpapi's callback route) or read from it.
type UpstreamReport struct {
	// GatewayMessageID is the upstream's id of the message, when the
	// report gives it.
	GatewayMessageID string
	// ClientRef is the client reference (clientsmsid) the report
	// carries: the message's Number as decimal text, as the scheduler
	// hands it over; empty when the report has none.
	ClientRef string
	Report    *Report
}

// ApplyGatewayReport is ApplyUpstreamReport of a report that carries the
// upstream's message id only.
func (s *SMS) ApplyGatewayReport(ctx context.Context, gatewayMessageID string, r *Report) error {
	return s.ApplyUpstreamReport(ctx, &UpstreamReport{GatewayMessageID: gatewayMessageID, Report: r})
}

// ApplyUpstreamReport applies a delivery report the upstream gateway
// pushed (to a callback URL, see httpapi).
//
// A report with a ClientRef that is the Number of a message whose
// hand-over outcome is unknown (Message.UnconfirmedSince) confirms that
// hand-over: the message is recorded as accepted under the report's
// GatewayMessageID, as if the upstream had answered, with no second
// hand-over, and the report is then applied. A report with a ClientRef
// whose message was recorded otherwise (sent under another upstream id
// after a resend, failed, or not handed over) is a late confirmation:
// it is logged and counted (MetricLateConfirmations), never applied, and
// nil is returned. A ClientRef that is no message's Number is ignored
// and the report matched by GatewayMessageID.
//
// A report is matched to the message the upstream accepted as
// GatewayMessageID and stored, as DeliveryReport would store one it asked
// the gateway for, unless it would change nothing, the stored report is
// final (a final state is never moved back: the store keeps it, even
// against a concurrent report), or it is not final and older than the
// stored one (reports may arrive out of order). Once a final report is
// stored, DeliveryReport answers with it without asking the gateway;
// until then it keeps asking the gateway, so messages whose report never
// comes pushed still get one.
//
// An id no message has is ErrUnknownGatewayMessage; a store failure is
// returned as it is.
func (s *SMS) ApplyUpstreamReport(ctx context.Context, ur *UpstreamReport) error {
	if ur == nil || ur.Report == nil || (ur.GatewayMessageID == "" && ur.ClientRef == "") {
		return ErrUnknownGatewayMessage
	}
	r := ur.Report
	var m *Message
	if n, ok := clientRefNumber(ur.ClientRef); ok && ur.GatewayMessageID != "" {
		cm, confirmed, err := s.store.SMSConfirm(ctx, &ConfirmParams{Number: n, GatewayMessageID: ur.GatewayMessageID, NetworkID: r.NetworkID, At: s.now()})
		switch {
		case errors.Is(err, messaging.ErrNotFound):
			// Not a reference of this service: match by the upstream's id.
		case err != nil:
			return err
		case confirmed:
			s.tel.confirmed.Add(ctx, 1, s.tel.account(cm.PartnerID)...)
			s.log.InfoContext(ctx, "sms: hand-over of unknown outcome confirmed by the upstream's report", "number", cm.Number,
				"gateway_message_id", ur.GatewayMessageID)
			m = cm
		case cm.GatewayMessageID == ur.GatewayMessageID:
			m = cm
		default:
			s.tel.late.Add(ctx, 1, s.tel.account(cm.PartnerID)...)
			s.log.WarnContext(ctx, "sms: late confirmation not applied: the message's outcome was recorded otherwise", "number", cm.Number,
				"status", cm.Status, "gateway_message_id", ur.GatewayMessageID, "recorded_gateway_message_id", cm.GatewayMessageID)
			return nil
		}
	}
	if m == nil {
		if ur.GatewayMessageID == "" {
			return ErrUnknownGatewayMessage
		}
		var err error
		m, err = s.store.SMSMessageByGatewayID(ctx, ur.GatewayMessageID)
		if errors.Is(err, messaging.ErrNotFound) {
			return ErrUnknownGatewayMessage
		}
		if err != nil {
			return err
		}
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

// clientRefNumber reads a report's client reference as a message Number.
func clientRefNumber(ref string) (int64, bool) {
	if ref == "" || !allDigits(ref) {
		return 0, false
	}
	n, err := strconv.ParseInt(ref, 10, 64)
	return n, err == nil && n > 0
}
