package sqlrows

import (
	"time"

	"github.com/ujumbe/messaging"
)

// RecordTimes returns the due_at and delivered_at a webhook delivery's
// record p writes: a finished delivery (delivered or failed) is due at the
// attempt, p.At, and a delivered one was delivered then; a pending one is
// due at p.DueAt, its retry.
func RecordTimes(p *messaging.WebhookRecordParams) (due time.Time, delivered *time.Time) {
	switch p.State {
	case messaging.DeliveryDelivered:
		return p.At, &p.At
	case messaging.DeliveryFailed:
		return p.At, nil
	}
	return p.DueAt, nil
}
