package messaging

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ujumbe/messaging/internal/defaults"
	"github.com/ujumbe/messaging/internal/metricname"
	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"
)

// statusFrom lists the statuses a message may move to status from.
func statusFrom(status string) []string {
	switch status {
	case StatusSent:
		return []string{StatusQueued}
	case StatusDelivered:
		return []string{StatusQueued, StatusSent}
	case StatusRead:
		return []string{StatusQueued, StatusSent, StatusDelivered}
	case StatusFailed:
		return []string{StatusQueued, StatusSent, StatusDelivered}
	}
	return nil
}

// StatusUpdate is a status change reported for a message by the dispatcher
// or by the channel provider's callback.
type StatusUpdate struct {
	WorkspaceID string
	MessageID   string
	// Status is sent, delivered, read or failed.
	Status string
	// ProviderCode and ProviderText describe a failure; the message's
	// failure_reason becomes "[<ProviderCode>] <ProviderText>".
	ProviderCode string
	ProviderText string
	// ProviderMessageID, when set, is recorded on the message.
	ProviderMessageID string
}

// checkStatus validates a reported status: one of sent, delivered, read
// and failed, and for failed a provider code.
func checkStatus(status, providerCode string) error {
	if statusFrom(status) == nil {
		return validationError("status", "must be one of sent, delivered, read, failed (got %q)", status)
	}
	if status == StatusFailed && providerCode == "" {
		return validationError("provider_code", "is required when status is failed")
	}
	return nil
}

// UpdateStatus applies a status change under the status rules: statuses
// only move forward, failed is reachable from any non-terminal status, and an
// out-of-order update (delivered after read) is ignored without error. It
// reports whether the status changed; each change emits a
// message.status_updated event to subscribers.
//
// A change that records u.ProviderMessageID (the dispatcher's queued ->
// sent) then applies, in the order they arrived, the provider's reports
// about that id that came before it and were kept (see
// ApplyProviderStatus); a failure to apply them is logged, since the
// change itself is done.
func (s *Service) UpdateStatus(ctx context.Context, u *StatusUpdate) (bool, error) {
	return s.recordStatus(ctx, u, statusWay{})
}

// maxStatusAttempts bounds the compare-and-set attempts of one status
// change. An attempt fails only when the status moved forward since it was
// read, and a status moves forward at most three times (queued, sent,
// delivered, read), so the bound is never reached by a correct store.
const maxStatusAttempts = 5

// statusWay is how recordStatus makes one change; the zero value reads
// the message and makes the change from whatever status it has.
type statusWay struct {
	// before, when non-nil, is the message as the caller last read it
	// (the dispatcher's claimed copy); otherwise it is read.
	before *Message
	// hold, when non-nil, is the dispatcher's count of the message on the
	// status batch (see statusBatch): it stops counting once the change
	// waits in the batch.
	hold *statusHold
	// queuedOnly makes the change only from queued: when the message is
	// no longer queued (when it was read, or when the store compared), the
	// change is not decided again and errNoLongerQueued is returned.
	queuedOnly bool
}

// errNoLongerQueued stops a status change made only from queued (see
// statusWay.queuedOnly) when the message moved meanwhile.
var errNoLongerQueued = errors.New("messaging: the message is no longer queued")

// recordStatus is the one path by which a message's status changes: the
// dispatcher's outcomes, the provider's reports and UpdateStatus all come
// through it, and it writes through the service's one status batch (see
// statusBatch), the one status write of the store.
//
// It makes the change (writeStatus) and then, when the change recorded
// u.ProviderMessageID, applies the reports kept for that id, which the
// status batch took once the change committed (applyReports), each a
// change of its own through writeStatus.
func (s *Service) recordStatus(ctx context.Context, u *StatusUpdate, way statusWay) (bool, error) {
	changed, kept, err := s.writeStatus(ctx, u, way)
	if err != nil || !changed || u.ProviderMessageID == "" {
		return changed, err
	}
	if _, err := s.applyReports(ctx, u.WorkspaceID, u.MessageID, u.ProviderMessageID, kept); err != nil {
		s.log.ErrorContext(ctx, "applying the status reports kept for a provider message id failed",
			"message_id", u.MessageID, "provider_message_id", u.ProviderMessageID, "err", err)
	}
	return true, nil
}

// writeStatus makes one status change and announces it; it reports
// whether the status changed and, when the change recorded
// u.ProviderMessageID, the reports kept for that id.
//
// The change is decided here, not in the store: the status rules (see
// statusFrom) are checked against the message as last read, the event is
// built, and the status batch is asked to move the status from exactly
// that status (a compare-and-set) and to queue the event's webhook
// deliveries in the same transaction. When the status moved meanwhile, the
// store returns the message as it is and the change is decided again on
// it. Subscribers get the event once the store has committed the change.
func (s *Service) writeStatus(ctx context.Context, u *StatusUpdate, way statusWay) (bool, keptReports, error) {
	var none keptReports
	if err := refuseUnstorable(u, statusUpdateTexts); err != nil {
		return false, none, err
	}
	if err := checkStatus(u.Status, u.ProviderCode); err != nil {
		return false, none, err
	}
	from := statusFrom(u.Status)
	var reason string
	if u.Status == StatusFailed {
		reason = FailureReason(u.ProviderCode, u.ProviderText)
	}
	before := way.before
	for range maxStatusAttempts {
		if before == nil {
			m, err := s.store.MessageGet(ctx, u.WorkspaceID, u.MessageID)
			if err != nil {
				return false, none, wrapStoreError(err, "message", u.MessageID)
			}
			before = m
		}
		if !slices.Contains(from, before.Status) {
			return false, none, nil // out of order: ignored
		}
		if way.queuedOnly && before.Status != StatusQueued {
			return false, none, errNoLongerQueued
		}
		now := s.now()
		ev := statusEvent(before, statusAfter(before, u, reason, now), now)
		rec, err := ev.record()
		if err != nil {
			s.log.Error("encoding event failed", "err", err)
			rec = nil
		} else {
			rec.TraceParent = before.TraceParent // its deliveries continue the message's trace
		}
		res := s.statuses.update(ctx, &driver.MessageStatusParams{
			WorkspaceID: u.WorkspaceID, ID: u.MessageID, From: []string{before.Status}, To: u.Status,
			FailureReason: reason, ProviderMessageID: u.ProviderMessageID, At: now, Event: rec,
		}, way.hold)
		if res.err != nil {
			return false, none, wrapStoreError(res.err, "message", u.MessageID)
		}
		if !res.changed {
			if way.queuedOnly {
				return false, none, errNoLongerQueued
			}
			// The status moved meanwhile: decide again on the message as
			// the store returned it (read again if it returned none).
			before = res.after
			continue
		}
		s.tel.statusChanged(ctx, before, u.Status, now)
		if res.queued {
			s.wakeWebhooks() // else nothing is due: no claim for nothing
		}
		s.events.publish(ctx, ev)
		if u.Status == StatusFailed && u.ProviderCode == undeliverableCode && before.Type == record.TypeTemplate && s.smsFallback != nil {
			s.fallbackUndeliverable(ctx, u.WorkspaceID, u.MessageID)
		}
		return true, res.kept, nil
	}
	return false, none, &Error{Code: CodeInternal, Message: "internal error",
		Err: fmt.Errorf("messaging: the status of message %s kept moving during %d attempts to set it to %s", u.MessageID, maxStatusAttempts, u.Status)}
}

// statusAfter returns the message before leaves once the store has moved
// it to u.Status at at (see MessageStatusParams): a failure reason and a
// provider message id are recorded when given, and the lease is cleared.
func statusAfter(before *Message, u *StatusUpdate, reason string, at time.Time) *Message {
	after := *before
	after.Status, after.UpdatedAt, after.LeaseOwner = u.Status, at, ""
	if reason != "" {
		after.FailureReason = reason
	}
	if u.ProviderMessageID != "" {
		after.ProviderMessageID = u.ProviderMessageID
	}
	return &after
}

// maxErrorText is the most bytes of an error text the service stores
// as the LastError of a webhook delivery; longer texts are cut.
const maxErrorText = 500

// truncateError returns s cut to at most maxErrorText bytes: the bytes of a
// rune cut in two are dropped (as is any invalid UTF-8 in what is kept).
// Stores keep the texts they are given; this is the service's policy.
func truncateError(s string) string {
	if len(s) <= maxErrorText {
		return s
	}
	return strings.ToValidUTF8(s[:maxErrorText], "")
}

// FailureReason formats a provider error as the spec's failure_reason:
// "[<provider_code>] <provider text>".
func FailureReason(code, text string) string {
	return "[" + code + "] " + text
}

// ProviderStatus is a status report of the channel provider about a message
// it accepted (from its webhook, or from a simulator).
type ProviderStatus struct {
	// ProviderMessageID identifies the message (the id Send returned).
	ProviderMessageID string
	// Status is sent, delivered, read or failed.
	Status string
	// Code and Text describe a failure.
	Code string
	Text string
	// WorkspaceID and MessageID, when both are set, are the workspace
	// that received the report (its connected account) and the service's
	// own message id as the provider echoed it back (WhatsApp's
	// biz_opaque_callback_data, Messenger's and Instagram's message
	// metadata). They correlate a report with a send whose answer was
	// never recorded: a message of that workspace with this id and no
	// provider message id yet is confirmed sent with ProviderMessageID,
	// with no second request.
	WorkspaceID string
	MessageID   string
}

// ApplyProviderStatus applies a provider's status report under the status
// rules (see UpdateStatus). Reports arrive in any order; one that would
// move a status backwards is ignored. It reports whether the status
// changed.
//
// A report can arrive before the dispatcher has recorded the provider
// message id it is about: Meta pushes delivered within milliseconds of
// answering the send. A report of an id that no message carries is
// therefore validated and kept in the store (for
// Options.PendingReportRetention, at most MaxPendingReports per id; more
// are dropped and logged), and applied when the id is recorded (see
// UpdateStatus); ApplyProviderStatus then returns false and no error, as
// for an ignored report: either way the report needs no resending. Only an
// error means the report was neither applied nor kept, so that the
// provider should deliver it again; an invalid report (an unknown status,
// failed without code) is a validation_error.
func (s *Service) ApplyProviderStatus(ctx context.Context, p *ProviderStatus) (bool, error) {
	if err := refuseUnstorable(p, providerStatusTexts); err != nil {
		return false, err
	}
	if p.ProviderMessageID == "" {
		return false, validationError("id", "the provider message id is required")
	}
	m, err := s.store.MessageGetByProviderID(ctx, p.ProviderMessageID)
	if err == nil {
		return s.recordStatus(ctx, &StatusUpdate{
			WorkspaceID: m.WorkspaceID, MessageID: m.ID, Status: p.Status,
			ProviderCode: p.Code, ProviderText: p.Text,
		}, statusWay{before: m})
	}
	if !errors.Is(err, ErrNotFound) {
		return false, wrapStoreError(err, "provider message", p.ProviderMessageID)
	}
	if p.WorkspaceID != "" && p.MessageID != "" {
		if changed, handled, err := s.confirmSend(ctx, p); handled {
			return changed, err
		}
	}
	return s.keepReport(ctx, p)
}

// confirmSend applies a report of a provider message id no message
// carries yet, correlated by the message id the provider echoed
// (p.MessageID in workspace p.WorkspaceID). handled is false when no
// outbound message of that workspace has that id: the report is then kept
// by its provider id as any other.
//
// A message with no provider message id is one whose send was never
// answered, or whose answer was never recorded (a timeout, a crash): the
// report confirms that send, so the message moves to the reported status
// with the provider's id, and nothing is sent again. A message that
// already carries another provider id was sent again (or failed) after
// its confirmation window: the report is of the earlier hand-over, which
// is logged and counted (UnconfirmedOutcomeLate), never applied as a
// second message.
func (s *Service) confirmSend(ctx context.Context, p *ProviderStatus) (changed, handled bool, err error) {
	if err := checkStatus(p.Status, p.Code); err != nil {
		return false, true, err
	}
	m, err := s.store.MessageGet(ctx, p.WorkspaceID, p.MessageID)
	if errors.Is(err, ErrNotFound) {
		return false, false, nil
	}
	if err != nil {
		return false, true, wrapStoreError(err, "message", p.MessageID)
	}
	if m.Direction != record.DirectionOutbound {
		return false, false, nil
	}
	if m.ProviderMessageID != "" || m.Status == StatusFailed {
		s.tel.unconfirmedSend(ctx, m.Channel, metricname.UnconfirmedOutcomeLate)
		s.log.WarnContext(ctx, "a provider confirmed an earlier hand-over of a message that was sent again or failed since; the report is not applied",
			"message_id", m.ID, "status", m.Status, "provider_message_id", m.ProviderMessageID,
			"reported_provider_message_id", p.ProviderMessageID, "reported_status", p.Status)
		return false, true, nil
	}
	// From queued only: a resend that recorded its own provider id
	// meanwhile must not be overwritten by this earlier one.
	changed, err = s.recordStatus(ctx, &StatusUpdate{WorkspaceID: m.WorkspaceID, MessageID: m.ID, Status: p.Status,
		ProviderCode: p.Code, ProviderText: p.Text, ProviderMessageID: p.ProviderMessageID}, statusWay{before: m, queuedOnly: true})
	if errors.Is(err, errNoLongerQueued) {
		// It moved meanwhile: decide again on it as it is now (the
		// dispatcher recorded this same id, or another hand-over's).
		return s.confirmSend(ctx, p)
	}
	if err != nil {
		return false, true, err
	}
	if changed && m.Status == StatusQueued {
		s.tel.unconfirmedSend(ctx, m.Channel, metricname.UnconfirmedOutcomeConfirmed)
		s.log.InfoContext(ctx, "a provider report confirmed a send whose answer was not recorded",
			"message_id", m.ID, "provider_message_id", p.ProviderMessageID, "status", p.Status)
	}
	return changed, true, nil
}

// keepReport keeps a valid report of a provider message id that no message
// carries yet, until recordStatus records the id.
//
// The dispatcher records the id, then takes the reports kept for it; a
// report kept just after that take would wait for nothing. So once the
// report is kept, the id is looked up again: when a message carries it
// now, its reports are taken and applied here. Whichever of the two takes
// comes second finds the report, since the lookup follows the save and the
// dispatcher's take follows its record of the id.
func (s *Service) keepReport(ctx context.Context, p *ProviderStatus) (bool, error) {
	if err := checkStatus(p.Status, p.Code); err != nil {
		return false, err
	}
	now := s.now()
	r := &driver.PendingReport{ProviderMessageID: p.ProviderMessageID, Status: p.Status,
		ProviderCode: p.Code, ProviderText: p.Text, ReceivedAt: now}
	kept, err := s.store.PendingReportSave(ctx, &driver.PendingReportSaveParams{Report: r, NotBefore: now.Add(-s.retention), Limit: defaults.MaxPendingReports})
	if err != nil {
		return false, wrapStoreError(err, "pending report", p.ProviderMessageID)
	}
	if kept {
		s.log.InfoContext(ctx, "kept a status report of a provider message id not recorded yet",
			"provider_message_id", p.ProviderMessageID, "status", p.Status)
	} else {
		s.log.WarnContext(ctx, "dropped a status report: too many are kept for its provider message id",
			"provider_message_id", p.ProviderMessageID, "status", p.Status, "limit", defaults.MaxPendingReports)
	}
	m, err := s.store.MessageGetByProviderID(ctx, p.ProviderMessageID)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	if err != nil {
		// The report is kept, but if the dispatcher's take came before
		// the save it would wait for nothing: ask for it again.
		return false, wrapStoreError(err, "provider message", p.ProviderMessageID)
	}
	reports, err := s.takeKept(ctx, []string{p.ProviderMessageID})
	return s.applyReports(ctx, m.WorkspaceID, m.ID, p.ProviderMessageID, keptReports{reports: reports, err: err})
}

// takeKept takes the unexpired reports kept for the provider message ids.
func (s *Service) takeKept(ctx context.Context, ids []string) ([]*driver.PendingReport, error) {
	return s.store.PendingReportTake(ctx, &driver.PendingReportTakeParams{ProviderMessageIDs: ids, NotBefore: s.now().Add(-s.retention)})
}

// applyReports applies the reports kept for providerMessageID, taken
// (takeKept) once a message recorded that id, oldest first, to message id
// of workspace ws, each a change of its own (writeStatus: a report records
// no provider message id, so it takes no reports in turn), and reports
// whether any changed its status. A failed take is returned as the error.
//
// Reports are taken when an id is recorded (the status batch takes those
// of every id its write recorded, in one call, after the commit) and when
// a report of an unknown id is kept (ApplyProviderStatus). A report that
// fails to apply is not kept again: it was taken because a message now
// carries its id, so it would wait, never applied, until it expired. The
// failure (of the store) is returned, and the reports not applied are
// logged.
func (s *Service) applyReports(ctx context.Context, ws, id, providerMessageID string, kept keptReports) (bool, error) {
	if kept.err != nil {
		return false, wrapStoreError(kept.err, "pending report", providerMessageID)
	}
	reports := kept.reports
	changed := false
	for i, r := range reports {
		c, _, err := s.writeStatus(ctx, &StatusUpdate{WorkspaceID: ws, MessageID: id, Status: r.Status,
			ProviderCode: r.ProviderCode, ProviderText: r.ProviderText}, statusWay{})
		if err != nil {
			for _, lost := range reports[i:] {
				s.log.ErrorContext(ctx, "a kept status report could not be applied and is lost",
					"message_id", id, "provider_message_id", providerMessageID, "status", lost.Status,
					"received_at", lost.ReceivedAt, "err", err)
			}
			return changed, err
		}
		changed = changed || c
	}
	return changed, nil
}
