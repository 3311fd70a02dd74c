package sqlrows

import (
	"time"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"
)

// RecordTimes returns the due_at and delivered_at a webhook delivery's
// record p writes: a finished delivery (delivered or failed) is due at the
// attempt, p.At, and a delivered one was delivered then; a pending one is
// due at p.DueAt, its retry.
func RecordTimes(p *driver.WebhookRecordParams) (due time.Time, delivered *time.Time) {
	switch p.State {
	case record.DeliveryDelivered:
		return p.At, &p.At
	case record.DeliveryFailed:
		return p.At, nil
	}
	return p.DueAt, nil
}
