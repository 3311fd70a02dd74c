package sms

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/ujumbe/messaging"
)

// Delivery reports asked by the clients.

// ReportParams are the fields of POST /sms/v1/messages/delivery-report.
type ReportParams struct {
	APIKey    string
	PartnerID string
	// MessageID is the provider message id (providerMessageId, messageid).
	MessageID string
}

// DeliveryReport is the answer of a delivery-report request.
type DeliveryReport struct {
	// MessageID is the provider message id asked about.
	MessageID string
	// Status and Description: see DeliveryStatus. Only DeliveredToTerminal
	// is a successful delivery.
	Status      int
	Description string
	NetworkID   string
	// TAT is the turnaround from the hand-over to the gateway to Time;
	// negative when unknown.
	TAT time.Duration
	// Time is when the state was reached, in the account's time zone; zero
	// when unknown.
	Time time.Time
}

// Delivered reports whether the report is a successful delivery.
func (r *DeliveryReport) Delivered() bool { return r.Description == DeliveredToTerminal }

// DeliveryReport returns the delivery report of a message of the account:
// Scheduled while it waits for its timeToSend, the gateway's report once it
// was handed over (asked from the gateway until it is final, and stored),
// DeliveryImpossible when the gateway refused it. A message not handed over
// yet, or without a report from the gateway, is an *Error with
// CodeNoDeliveryReport; an id unknown to the account is CodeNotFound.
func (s *SMS) DeliveryReport(ctx context.Context, p *ReportParams) (*DeliveryReport, error) {
	if p == nil {
		return nil, NewError(CodeUnsupportedRequest, "", "a body is required")
	}
	a, err := s.Authenticate(ctx, p.PartnerID, p.APIKey)
	if err != nil {
		return nil, err
	}
	if p.MessageID == "" {
		return nil, NewError(CodeUnsupportedDataType, "messageID", "is required: the providerMessageId or messageid of a send")
	}
	n, perr := strconv.ParseInt(p.MessageID, 10, 64)
	if perr != nil || n <= 0 || !allDigits(p.MessageID) {
		return nil, NewError(CodeNotFound, "messageID", "no message %q in this account", clip(p.MessageID))
	}
	m, err := s.store.SMSMessageGet(ctx, a.PartnerID, n)
	if errors.Is(err, messaging.ErrNotFound) {
		return nil, NewError(CodeNotFound, "messageID", "no message %q in this account", p.MessageID)
	}
	if err != nil {
		return nil, systemError(err)
	}
	loc, err := s.location(a.TimeZone)
	if err != nil {
		return nil, systemError(err)
	}
	r := m.Report
	if r == nil || !r.Final() {
		switch m.Status {
		case StatusScheduled:
			r = &Report{Status: DeliveryStatus(DeliveryScheduled), Description: DeliveryScheduled, NetworkID: m.NetworkID}
		case StatusFailed:
			r = &Report{Status: DeliveryStatus(DeliveryImpossible), Description: DeliveryImpossible, NetworkID: m.NetworkID, Time: m.UpdatedAt}
		case StatusSent:
			r = s.fetchReport(ctx, m)
		default:
			r = nil // queued or sending: not handed over yet
		}
	}
	if r == nil {
		return nil, NewError(CodeNoDeliveryReport, "", "")
	}
	out := &DeliveryReport{MessageID: p.MessageID, Status: r.Status, Description: r.Description, NetworkID: r.NetworkID, TAT: -1}
	if !r.Time.IsZero() {
		out.Time = r.Time.In(loc)
		if m.SentAt != nil && !r.Time.Before(*m.SentAt) {
			out.TAT = r.Time.Sub(*m.SentAt)
		}
	}
	return out, nil
}

// fetchReport asks the gateway for the report of a sent message, stores it
// when it changed, and returns the newest known report (nil when none).
func (s *SMS) fetchReport(ctx context.Context, m *Message) *Report {
	if m.GatewayMessageID == "" {
		return m.Report
	}
	r, err := s.gw.DeliveryReport(ctx, m.GatewayMessageID)
	if err != nil {
		if !errors.Is(err, ErrNoReport) {
			s.log.WarnContext(ctx, "sms: gateway delivery report failed", "number", m.Number, "err", err.Error())
		}
		return m.Report
	}
	nr := normalReport(m, r)
	if m.Report == nil || !sameReport(m.Report, &nr) {
		if err := s.saveReport(ctx, m, m.Report, &nr); err != nil {
			s.log.WarnContext(ctx, "sms: storing delivery report failed", "number", m.Number, "err", err.Error())
		}
	}
	return &nr
}

// normalReport returns the gateway's report r of m with the service's
// status number for its description and m's network when r has none.
func normalReport(m *Message, r *Report) Report {
	nr := *r
	if st := DeliveryStatus(nr.Description); st != 0 || nr.Description == DeliveryUnknown {
		nr.Status = st
	}
	if nr.NetworkID == "" {
		nr.NetworkID = m.NetworkID
	}
	return nr
}

func sameReport(a, b *Report) bool {
	return a.Status == b.Status && a.Description == b.Description && a.NetworkID == b.NetworkID && a.Time.Equal(b.Time)
}
