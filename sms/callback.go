package sms

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging"
)

// EventDeliveryReport is the type of the event an account's callback
// receives for each final delivery report.
const EventDeliveryReport = "sms.delivery_report"

// CallbackOptions let SMS accounts register a callback URL: each final
// delivery report of the account's messages is then POSTed to it as an
// EventDeliveryReport event through the webhook outbox of Service (or
// Outbox), with its Standard Webhooks signatures, retry schedule and
// address guard.
type CallbackOptions struct {
	// Service keeps the callbacks' webhook endpoints and, unless Outbox
	// is set, queues and delivers their events.
	Service *messaging.Service
	// Outbox queues the events, in the store where Service keeps the
	// endpoints (a wrapper of Service, for example). Default: Service.
	// When it queues them in the store given to New (see OutboxStore), a
	// report's push is queued in the transaction that stores the report;
	// otherwise just after it, so that a crash in between loses that push.
	Outbox Outbox
	// WorkspaceID is the workspace of Service that holds the callbacks'
	// webhook endpoints (one per account that registered a URL). The
	// first SetCallback creates it when it does not exist; it should hold
	// nothing else.
	WorkspaceID string
}

// Callback is an account's registered callback.
type Callback struct {
	PartnerID string
	// EndpointID is the webhook endpoint in CallbackOptions.WorkspaceID.
	EndpointID string
	URL        string
}

// DeliveryReportEvent is the data of an EventDeliveryReport event.
type DeliveryReportEvent struct {
	PartnerID string `json:"partner_id"`
	// MessageID is the provider message id the API returned for the
	// message (its Number).
	MessageID   string `json:"message_id"`
	Mobile      string `json:"mobile"`
	ClientSMSID string `json:"client_sms_id,omitempty"`
	// Status and Description: see DeliveryStatus; Delivered is true for
	// DeliveredToTerminal only.
	Status      int    `json:"status"`
	Description string `json:"description"`
	Delivered   bool   `json:"delivered"`
	NetworkID   string `json:"network_id,omitempty"`
	// DoneAt is when the final state was reached (RFC 3339 UTC), empty
	// when the gateway did not say.
	DoneAt string `json:"done_at,omitempty"`
}

// errNoCallbacks refuses a callback when the service has no
// CallbackOptions.
func errNoCallbacks() error {
	return &messaging.Error{Code: messaging.CodeNotFound,
		Message: "callbacks are not available: the SMS service was built without CallbackOptions"}
}

// SetCallback registers url as the callback of the account partnerID,
// replacing any earlier one: a webhook endpoint is created in
// CallbackOptions.WorkspaceID (its address guard applies: a private or
// loopback address is refused unless the Service allows it) and signs
// with secret ("whsec_" + base64; empty: one is generated). It returns the
// callback and the signing secret, which is not kept in clear and not
// shown again. Errors are *messaging.Error: not_found for an unknown
// account or a service without callbacks, validation_error naming url or
// secret.
func (s *SMS) SetCallback(ctx context.Context, partnerID, url, secret string) (*Callback, string, error) {
	cb := s.opts.Callbacks
	if cb == nil || cb.Service == nil {
		return nil, "", errNoCallbacks()
	}
	a, err := s.store.SMSAccountGet(ctx, partnerID)
	if err != nil {
		return nil, "", callbackAccountError(err, partnerID)
	}
	if err := ensureCallbackWorkspace(ctx, cb); err != nil {
		return nil, "", err
	}
	hooks := cb.Service.Workspace(cb.WorkspaceID).Webhooks
	e, plain, err := hooks.Create(ctx, &messaging.WebhookCreateParams{URL: url,
		Secret: secret, Description: "SMS delivery reports of account " + partnerID})
	if err != nil {
		return nil, "", err
	}
	id := e.ID
	if _, err := s.store.SMSAccountUpdate(ctx, &AccountUpdate{PartnerID: partnerID, CallbackEndpointID: &id, At: s.now()}); err != nil {
		_, _ = hooks.Delete(context.WithoutCancel(ctx), id)
		return nil, "", callbackAccountError(err, partnerID)
	}
	if a.CallbackEndpointID != "" {
		if _, err := hooks.Delete(ctx, a.CallbackEndpointID); err != nil && messaging.ErrorCode(err) != messaging.CodeNotFound {
			s.log.WarnContext(ctx, "sms: the replaced callback endpoint could not be deleted", "partner_id", partnerID, "endpoint_id", a.CallbackEndpointID, "err", err.Error())
		}
	}
	return &Callback{PartnerID: partnerID, EndpointID: id, URL: e.URL}, plain, nil
}

// GetCallback returns the account's callback, nil when it has none.
func (s *SMS) GetCallback(ctx context.Context, partnerID string) (*Callback, error) {
	cb := s.opts.Callbacks
	if cb == nil || cb.Service == nil {
		return nil, errNoCallbacks()
	}
	a, err := s.store.SMSAccountGet(ctx, partnerID)
	if err != nil {
		return nil, callbackAccountError(err, partnerID)
	}
	if a.CallbackEndpointID == "" {
		return nil, nil
	}
	e, err := cb.Service.Workspace(cb.WorkspaceID).Webhooks.Get(ctx, a.CallbackEndpointID)
	if messaging.ErrorCode(err) == messaging.CodeNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &Callback{PartnerID: partnerID, EndpointID: e.ID, URL: e.URL}, nil
}

// ensureCallbackWorkspace creates the callbacks' workspace unless it
// exists.
func ensureCallbackWorkspace(ctx context.Context, cb *CallbackOptions) error {
	_, err := cb.Service.GetWorkspace(ctx, cb.WorkspaceID)
	if messaging.ErrorCode(err) != messaging.CodeNotFound {
		return err
	}
	_, err = cb.Service.CreateWorkspace(ctx, &messaging.CreateWorkspaceParams{ID: cb.WorkspaceID, Name: "SMS delivery report callbacks"})
	if messaging.ErrorCode(err) == messaging.CodeConflict {
		return nil // created meanwhile
	}
	return err
}

func callbackAccountError(err error, partnerID string) error {
	if errors.Is(err, messaging.ErrNotFound) {
		return &messaging.Error{Code: messaging.CodeNotFound, Field: "partnerID", Message: "partnerID: no SMS account " + strconv.Quote(clip(partnerID))}
	}
	return &messaging.Error{Code: messaging.CodeInternal, Message: "internal error", Err: err}
}

// reportPush returns the push of the report nr of m, about to be stored
// in place of old, to the account's callback: the endpoint and the data of
// the event, when nr is final, old was not and the account has a callback
// (endpointID "" otherwise).
func (s *SMS) reportPush(ctx context.Context, m *Message, old, nr *Report) (endpointID string, data *DeliveryReportEvent) {
	cb := s.opts.Callbacks
	if cb == nil || cb.Service == nil || !nr.Final() || (old != nil && old.Final()) {
		return "", nil
	}
	a, err := s.store.SMSAccountGet(ctx, m.PartnerID)
	if err != nil || a.CallbackEndpointID == "" {
		if err != nil {
			s.log.WarnContext(ctx, "sms: delivery report not pushed: reading the account failed", "number", m.Number, "err", err.Error())
		}
		return "", nil
	}
	data = &DeliveryReportEvent{PartnerID: m.PartnerID, MessageID: strconv.FormatInt(m.Number, 10), Mobile: m.Mobile,
		ClientSMSID: m.ClientSMSID, Status: nr.Status, Description: nr.Description, Delivered: nr.Description == DeliveredToTerminal,
		NetworkID: nr.NetworkID}
	if !nr.Time.IsZero() {
		data.DoneAt = nr.Time.UTC().Format(time.RFC3339Nano)
	}
	return a.CallbackEndpointID, data
}

// saveReport stores the report nr of m in place of old, with its push to
// the account's callback when it has one (reportPush). When the SMS store
// keeps the callbacks' outbox (pushInTx), the push is queued in the
// transaction that stores the report, by the save that replaces a report
// that was not final: once, and never without the report. Otherwise it
// is queued through the Outbox just after the report is stored, and a
// crash in between loses it. A push that cannot be built or queued is logged; the report is kept.
func (s *SMS) saveReport(ctx context.Context, m *Message, old, nr *Report) error {
	p := &ReportSaveParams{PartnerID: m.PartnerID, Number: m.Number, Report: nr}
	endpointID, data := s.reportPush(ctx, m, old, nr)
	cb := s.opts.Callbacks
	if endpointID != "" && s.pushInTx {
		ev, err := s.outbox.WebhookEvent(cb.WorkspaceID, m.ID, EventDeliveryReport, data)
		if err != nil {
			s.log.WarnContext(ctx, "sms: delivery report not pushed: building the event failed", "number", m.Number, "err", err.Error())
		} else {
			p.Push = &driver.WebhookQueueParams{EndpointID: endpointID, Event: ev}
		}
	}
	pushed, err := s.store.SMSReportSave(ctx, p)
	if err != nil {
		return err
	}
	switch {
	case pushed:
		s.outbox.WebhooksQueued()
	case endpointID != "" && !s.pushInTx:
		if _, _, err := s.outbox.QueueWebhookEvent(ctx, cb.WorkspaceID, endpointID, m.ID, EventDeliveryReport, data); err != nil {
			s.log.WarnContext(ctx, "sms: delivery report not pushed: queueing the event failed", "number", m.Number, "err", err.Error())
		}
	}
	return nil
}
