package sms

import (
	"context"

	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging"
)

// Outbox queues the events of the accounts' callbacks
// (EventDeliveryReport) for delivery to their webhook endpoints.
// *messaging.Service is one: it signs, retries and delivers the events it
// queues in its store. CallbackOptions.Outbox defaults to
// CallbackOptions.Service.
type Outbox interface {
	// QueueWebhookEvent queues a new event of type typ about subjectID,
	// with data as its data, for the webhook endpoint endpointID of the
	// workspace workspaceID (nothing when the endpoint does not exist or
	// is disabled), and returns the event's id and whether it was queued.
	QueueWebhookEvent(ctx context.Context, workspaceID, endpointID, subjectID, typ string, data any) (eventID string, queued bool, err error)
	// WebhookEvent returns the event QueueWebhookEvent would queue,
	// without queueing it: for an OutboxStore that queues it in the
	// transaction that stores its report (ReportSaveParams.Push).
	WebhookEvent(workspaceID, subjectID, typ string, data any) (*driver.EventRecord, error)
	// WebhooksQueued tells the Outbox that a store queued events of
	// WebhookEvent, so that it delivers them now rather than at its next
	// poll.
	WebhooksQueued()
}

// OutboxStore is an optional interface of a Store that keeps a
// driver.Store's webhook outbox too, as store/memstore, sqlitestore and
// pgstore do: its SMSReportSave queues ReportSaveParams.Push in the
// transaction that stores the report.
//
// SMS sets Push when the Store given to New is an OutboxStore and the
// callbacks' Outbox queues its events in the same outbox: the Outbox has a
// UsesStore method (as *messaging.Service has) that is true for its
// SMSOutbox. Then a report and its push are stored together or
// not at all. Otherwise SMS queues the push through the Outbox just after
// the report is stored, and a crash in between loses it.
type OutboxStore interface {
	Store
	// SMSOutbox returns the store that keeps the outbox: the store itself
	// (the receiver, also when a wrapper embeds it), as a value that ==
	// compares, such as a pointer.
	SMSOutbox() driver.Store
}

// storeUser is an Outbox that tells whether it queues its events in a
// given store, as *messaging.Service does (UsesStore).
type storeUser interface {
	UsesStore(store any) bool
}

var (
	_ Outbox    = (*messaging.Service)(nil)
	_ storeUser = (*messaging.Service)(nil)
)

// pushesInTx reports whether the push of a report may be queued in the
// transaction that stores the report: whether store is an OutboxStore
// that is, or whose SMSOutbox is, the store o queues its events in (see
// OutboxStore).
func pushesInTx(store Store, o Outbox) bool {
	ps, ok := store.(OutboxStore)
	if !ok {
		return false
	}
	u, ok := o.(storeUser)
	return ok && (u.UsesStore(store) || u.UsesStore(ps.SMSOutbox()))
}
