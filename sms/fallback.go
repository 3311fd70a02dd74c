package sms

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/ujumbe/messaging"
)

// Fallback sends the SMS fallbacks of WhatsApp template sends through an
// SMS service: it implements messaging.SMSFallback, for
// messaging.Options.SMSFallback. Its SMS are like any SMS of the account:
// charged (refused, with nothing charged, when the credit cannot cover
// them), counted in segments, handed to the gateway by the scheduler,
// with their delivery reports. No apikey is asked: the messaging service
// is trusted, and the operator decided which accounts each workspace may
// use (messaging.Service.LinkSMSAccount).
type Fallback struct {
	s *SMS
}

// NewFallback returns the messaging.SMSFallback of the SMS service s.
func NewFallback(s *SMS) *Fallback { return &Fallback{s: s} }

var _ messaging.SMSFallback = (*Fallback)(nil)

// Check implements messaging.SMSFallback: the account must exist, and the
// text and the shortcode (when given) must pass the rules of Send. A
// refusal is a *messaging.SMSFallbackInvalid.
func (f *Fallback) Check(ctx context.Context, p *messaging.SMSFallbackParams) error {
	a, err := f.s.store.SMSAccountGet(ctx, p.PartnerID)
	if errors.Is(err, messaging.ErrNotFound) {
		return &messaging.SMSFallbackInvalid{Field: "partner_id", Rule: "no SMS account " + strconv.Quote(clip(p.PartnerID))}
	}
	if err != nil {
		return err
	}
	if p.Text != "" {
		if strings.TrimSpace(p.Text) == "" {
			return &messaging.SMSFallbackInvalid{Field: "text", Rule: "is required and must not be blank"}
		}
		if enc, parts := Segments(p.Text); parts > f.s.opts.MaxSegments {
			return &messaging.SMSFallbackInvalid{Field: "text", Rule: "takes " + strconv.Itoa(parts) + " SMS parts in " + enc +
				", at most " + strconv.Itoa(f.s.opts.MaxSegments) + " are allowed"}
		}
	}
	if p.Shortcode != "" {
		if _, ok := slices.BinarySearch(a.Senders, p.Shortcode); !ok {
			return &messaging.SMSFallbackInvalid{Field: "shortcode", Rule: strconv.Quote(clip(p.Shortcode)) + " is not an approved sender id of SMS account " + strconv.Quote(p.PartnerID)}
		}
	}
	return nil
}

// Send implements messaging.SMSFallback: Send of the account, without
// its apikey, under p.IdempotencyKey. A refusal of the SMS (insufficient
// credit, a sender no longer approved, a recipient the SMS service cannot
// reach) is a *messaging.SMSFallbackRefused; a system error is returned
// as it is, to be tried again.
func (f *Fallback) Send(ctx context.Context, workspaceID string, p *messaging.SMSFallbackSend) (*messaging.SMSFallbackAccepted, error) {
	if err := ValidateIdempotencyKey(p.IdempotencyKey); err != nil {
		return nil, err
	}
	a, err := f.s.store.SMSAccountGet(ctx, p.PartnerID)
	if errors.Is(err, messaging.ErrNotFound) {
		return nil, &messaging.SMSFallbackRefused{Reason: "no SMS account " + strconv.Quote(clip(p.PartnerID))}
	}
	if err != nil {
		return nil, err
	}
	res, err := f.s.sendFor(ctx, a, &SendParams{PartnerID: p.PartnerID, Mobile: strings.TrimPrefix(p.To, "+"), Message: p.Text,
		Shortcode: p.Shortcode, IdempotencyKey: p.IdempotencyKey})
	if err != nil {
		e := AsError(err)
		if e.Code == CodeSystemError {
			return nil, err
		}
		reason := e.Description
		if e.Code == CodeLowCredit {
			reason = "insufficient credit: " + reason
		}
		return nil, &messaging.SMSFallbackRefused{Reason: reason}
	}
	return &messaging.SMSFallbackAccepted{MessageID: res.ID, ProviderMessageID: res.ProviderMessageID, Status: messaging.SMSFallbackQueued}, nil
}

// Status implements messaging.SMSFallback: queued until the gateway
// accepted the SMS, then sent until its delivery report is final:
// delivered for DeliveredToTerminal, failed (its description the reason)
// for another; failed too when the gateway refused it.
func (f *Fallback) Status(ctx context.Context, partnerID, providerMessageID string) (status, reason string, err error) {
	n, err := strconv.ParseInt(providerMessageID, 10, 64)
	if err != nil {
		return "", "", err
	}
	m, err := f.s.store.SMSMessageGet(ctx, partnerID, n)
	if err != nil {
		return "", "", err
	}
	return fallbackStatus(m)
}

// fallbackStatus is the status of m as a fallback shows it.
func fallbackStatus(m *Message) (status, reason string, err error) {
	switch m.Status {
	case StatusFailed:
		return messaging.SMSFallbackFailed, m.FailureReason, nil
	case StatusSent:
		if r := m.Report; r != nil && r.Final() {
			if r.Description == DeliveredToTerminal {
				return messaging.SMSFallbackDelivered, "", nil
			}
			return messaging.SMSFallbackFailed, r.Description, nil
		}
		return messaging.SMSFallbackSent, "", nil
	}
	return messaging.SMSFallbackQueued, "", nil
}
