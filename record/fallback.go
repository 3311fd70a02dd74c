package record

import "time"

// Statuses of an SMS fallback (SMSFallback.Status). Besides these, a
// fallback whose SMS was accepted carries the SMS's own status as the SMS
// service reports it: SMSFallbackQueued, SMSFallbackSent,
// SMSFallbackDelivered or SMSFallbackFailed.
const (
	// SMSFallbackPending: the WhatsApp message may still be delivered;
	// the SMS goes out if it fails as undeliverable or is not delivered
	// by DueAt.
	SMSFallbackPending = "pending"
	// SMSFallbackSkipped: the WhatsApp message was delivered (or read)
	// in time; no SMS was sent.
	SMSFallbackSkipped = "skipped"
	// SMSFallbackNotSent: the SMS service refused the SMS (Reason says
	// why: insufficient credit, a sender no longer approved, an account
	// no longer linked); nothing was charged.
	SMSFallbackNotSent = "not_sent"
	// SMSFallbackQueued: the SMS service accepted the SMS and has not
	// handed it to its gateway yet.
	SMSFallbackQueued = "queued"
	// SMSFallbackSent: the gateway accepted the SMS; no final delivery
	// report yet.
	SMSFallbackSent = "sent"
	// SMSFallbackDelivered: the SMS's delivery report says delivered.
	SMSFallbackDelivered = "delivered"
	// SMSFallbackFailed: the SMS failed (Reason says how).
	SMSFallbackFailed = "failed"
)

// MaxSMSFallbackAfter is the longest wait a template send may name
// before its SMS fallback (fallback.sms.after): 7 days.
const MaxSMSFallbackAfter = 7 * 24 * time.Hour

// SMSFallback is the SMS fallback of a WhatsApp template send: the text
// sent as an SMS through the SMS account PartnerID, from Shortcode, when
// the WhatsApp message fails as undeliverable (Meta's 131026) or is not
// delivered within After; then what became of it.
type SMSFallback struct {
	// Text is the SMS's text.
	Text string
	// PartnerID is the SMS account, one the workspace may use (see
	// messaging.Service.LinkSMSAccount).
	PartnerID string
	// Shortcode is an approved sender id of the account.
	Shortcode string
	// After is how long the WhatsApp message has to be delivered, from
	// its accept, before the SMS goes out.
	After time.Duration
	// Status is SMSFallbackPending until the fallback is settled, then
	// one of the other SMSFallback* statuses.
	Status string
	// Reason tells why the SMS was not sent or failed; empty otherwise.
	Reason string
	// SMSMessageID is the SMS service's id of the SMS ("sms_..."), once
	// accepted; SMSProviderMessageID is its provider message id (the
	// messageID of the SMS API's delivery reports).
	SMSMessageID         string
	SMSProviderMessageID string
	// DueAt is, while pending, when the fallback is taken by the sweeper:
	// the message's accept time plus After, or the end of the lease of
	// the instance working on it. Zero once settled.
	DueAt time.Time
	// LeaseOwner names the instance working on the fallback; empty when
	// none.
	LeaseOwner string
	// UpdatedAt is when the fallback was last changed.
	UpdatedAt time.Time
}

// Clone returns a copy of f (nil for nil).
func (f *SMSFallback) Clone() *SMSFallback {
	if f == nil {
		return nil
	}
	c := *f
	return &c
}

// Settled reports whether the fallback is no longer pending.
func (f *SMSFallback) Settled() bool { return f != nil && f.Status != SMSFallbackPending }
