package messaging

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ujumbe/messaging/internal/defaults"
	"github.com/ujumbe/messaging/internal/paging"
	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging/webhooksig"
)

// Webhook endpoints: creating, reading, changing, disabling, deleting,
// rotating their secret, testing them, and the history of their
// deliveries (see Webhooks).

// Event types that webhook endpoints can subscribe to.
const (
	// EventWebhookTest is the type of the event Webhooks.Test sends.
	EventWebhookTest = "webhook.test"
)

// WebhookEventTypes returns the event types a webhook endpoint can
// subscribe to (WebhookCreateParams.Events).
func WebhookEventTypes() []string {
	return []string{EventMessageStatusUpdated, EventMessageReceived, EventContactOptedOut, EventContactOptedIn, EventChannelStatusUpdated,
		EventChannelQualityUpdated, EventTemplateStatusUpdated, EventWebhookTest}
}

// webhookEvents validates and normalizes the event types of an endpoint:
// sorted, without duplicates; nil when empty (every type).
func webhookEvents(events []string) ([]string, error) {
	if len(events) == 0 {
		return nil, nil
	}
	known := WebhookEventTypes()
	out := make([]string, 0, len(events))
	for _, e := range events {
		if !slices.Contains(known, e) {
			return nil, validationError("events", "unknown event type %q; known types: %s", e, strings.Join(known, ", "))
		}
		out = append(out, e)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// validateWebhookURL checks a webhook URL: an absolute http or https URL
// whose host, when it is an IP address or the name localhost, is one the
// address guard lets deliveries reach (WebhookOptions.AllowLoopback and
// AllowPrivate). Other names are checked when a delivery connects, after
// resolution.
func (s *Service) validateWebhookURL(raw string) error {
	if err := validateHTTPURL(record.FieldPath("url"), raw); err != nil {
		return err
	}
	u, _ := url.Parse(raw)
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	o := s.hooks.opts
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		if !o.AllowLoopback && !o.AllowPrivate {
			return validationError("url", "host %s is a loopback address, which this deployment does not deliver to (its operator may allow loopback webhooks for local testing)", u.Hostname())
		}
		return nil
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		if ip := net.ParseIP(host); ip == nil {
			return nil // a name: checked at connect time
		}
		return validationError("url", "host %s is not a valid IP address", u.Hostname())
	}
	if webhookAddressAllowed(a.String(), o) {
		return nil
	}
	if classifyAddr(a) == addrLoopback {
		return validationError("url", "host %s is a loopback address, which this deployment does not deliver to (its operator may allow loopback webhooks for local testing)", u.Hostname())
	}
	return validationError("url", "host %s is a private, link-local or other special-purpose address, which webhooks never reach (unless the deployment's operator allows private addresses)", u.Hostname())
}

// WebhookAddressPolicy reports which addresses the service's webhooks may
// reach (WebhookOptions.AllowLoopback and AllowPrivate), so that another
// service (a dry run of a configuration) can judge URLs the same way.
func (s *Service) WebhookAddressPolicy() (allowLoopback, allowPrivate bool) {
	return s.hooks.opts.AllowLoopback, s.hooks.opts.AllowPrivate
}

// WebhookTestResult is the outcome of Webhooks.Test.
type WebhookTestResult struct {
	// StatusCode is the receiver's answer; 0 when there was none.
	StatusCode int
	// Latency is the time from sending to the answer, on the service's
	// clock.
	Latency time.Duration
	// Error says why there was no answer (refused by the address guard,
	// timeout, connection failed); empty when there was one.
	Error string
}

// WebhookDeliveryID returns the id of a delivery in the API: "whd_"
// followed by its Seq.
func WebhookDeliveryID(d *WebhookDelivery) string { return "whd_" + strconv.FormatInt(d.Seq, 10) }

// QueueWebhookEvent queues an event of type typ with data (marshalled as
// JSON into the event's data member) for the one webhook endpoint
// endpointID of the workspace, through the same outbox as the
// workspace's own events: signed the same way (Standard Webhooks),
// retried on the same schedule, sent through the same address guard. It
// is for events of other services built on this one, such as the SMS
// API's sms.delivery_report; subjectID orders the events of one subject
// (as a message id orders a message's events) and the endpoint receives
// the event whatever event types it subscribes to. It returns the event's
// id, and queued false (with no error) when the endpoint does not exist
// or is disabled.
func (s *Service) QueueWebhookEvent(ctx context.Context, workspaceID, endpointID, subjectID, typ string, data any) (eventID string, queued bool, err error) {
	ev, err := s.WebhookEvent(workspaceID, subjectID, typ, data)
	if err != nil {
		return "", false, err
	}
	queued, err = s.store.WebhookQueueEvent(ctx, &driver.WebhookQueueParams{EndpointID: endpointID, Event: ev})
	if err != nil {
		return "", false, wrapStoreError(err, "webhook", endpointID)
	}
	if queued {
		s.wakeWebhooks()
	}
	return ev.ID, queued, nil
}

// WebhookEvent returns a new event of type typ about subjectID with data
// (marshalled as JSON into the event's data member), in the envelope that
// every delivery carries (id, type, created_at, data), without queueing
// it: for a service built on this one whose store queues the event in the
// transaction of its own write (as sms.Store.SMSReportSave does), so that
// the write and its event are stored together or not at all. The store
// must be this Service's (Store); call WebhooksQueued once it
// queued the event. QueueWebhookEvent says who receives such an event.
func (s *Service) WebhookEvent(workspaceID, subjectID, typ string, data any) (*driver.EventRecord, error) {
	raw, err := json.Marshal(data)
	if err != nil {
		return nil, &Error{Code: CodeInternal, Message: "internal error", Err: err}
	}
	ev := &Event{ID: record.NewID("evt"), Type: typ, CreatedAt: s.now(), WorkspaceID: workspaceID, MessageID: subjectID, Data: rawEventData(raw)}
	rec, err := ev.record()
	if err != nil {
		return nil, &Error{Code: CodeInternal, Message: "internal error", Err: err}
	}
	return rec, nil
}

// rawEventData is the data of an event already in its JSON form
// (WebhookEvent), written as it is in the event's envelope.
type rawEventData json.RawMessage

func (rawEventData) eventData() {}

// MarshalJSON implements json.Marshaler.
func (d rawEventData) MarshalJSON() ([]byte, error) { return d, nil }

// WebhooksQueued tells the Service that events were queued in its store
// by another service's write (see WebhookEvent), so that a started
// Service delivers them now rather than at its next poll.
func (s *Service) WebhooksQueued() { s.wakeWebhooks() }

// secretBytes decodes a "whsec_<base64>" secret (webhooksig.DecodeSecret).
func secretBytes(secret string) ([]byte, error) { return webhooksig.DecodeSecret(secret) }

// WebhookEndpointHasSecret reports whether secret is the signing secret of
// e, comparing in constant time. A secret that is not well formed is not
// e's.
func (s *Service) WebhookEndpointHasSecret(e *WebhookEndpoint, secret string) (bool, error) {
	raw, err := secretBytes(secret)
	if err != nil {
		return false, nil
	}
	cur, err := s.unseal(e.SecretSealed)
	if err != nil {
		return false, err
	}
	return subtle.ConstantTimeCompare(raw, cur) == 1, nil
}

// Webhooks manages the webhook endpoints of one workspace: an id of
// another workspace's endpoint is not found.
//
// Enabled and disabled: an endpoint is disabled while its DisabledAt is
// set, either because it answered 410 Gone (DisabledReason DisabledGone)
// or because its operator disabled it (DisabledByOperator); the two are
// one state with a reason. A disabled endpoint gets no new events, its
// pending deliveries are failed ("endpoint disabled") and nothing of it is
// claimed. Enabling it (Update with Enabled true, or with a new Secret)
// clears both fields, whatever the reason; its failed deliveries stay
// failed until redelivered. Disabling a disabled endpoint keeps its first
// DisabledAt and reason.
type Webhooks struct {
	svc *Service
	ws  string
}

// WebhookCreateParams are the arguments of Webhooks.Create.
type WebhookCreateParams struct {
	// URL is an absolute http or https URL that the address guard allows
	// (see WebhookOptions.AllowPrivate).
	URL string
	// Events are the event types the endpoint receives (see
	// WebhookEventTypes); empty means every type.
	Events []string
	// Description is a note of at most MaxWebhookDescription characters.
	Description string
	// Secret is the signing secret, "whsec_" followed by the base64 of 24
	// to 64 random bytes. Empty means generate one.
	Secret string
}

// Create subscribes an endpoint of the workspace to its events and
// returns it with its signing secret (in clear, only here). The secret is
// stored encrypted with Options.SecretKey.
func (wh *Webhooks) Create(ctx context.Context, p *WebhookCreateParams) (*WebhookEndpoint, string, error) {
	if err := refuseUnstorableWorkspace(wh.ws); err != nil {
		return nil, "", err
	}
	if err := requireStorable(p, "body", webhookCreateTexts); err != nil {
		return nil, "", err
	}
	s := wh.svc
	if err := s.validateWebhookURL(p.URL); err != nil {
		return nil, "", err
	}
	events, err := webhookEvents(p.Events)
	if err != nil {
		return nil, "", err
	}
	if err := checkLen(record.FieldPath("description"), p.Description, record.MaxWebhookDescription); err != nil {
		return nil, "", err
	}
	secret := p.Secret
	if secret == "" {
		var b [32]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, "", err
		}
		secret = "whsec_" + base64.StdEncoding.EncodeToString(b[:])
	}
	sealed, err := s.sealWebhookSecret(secret)
	if err != nil {
		return nil, "", err
	}
	e := &WebhookEndpoint{ID: record.NewID("we"), WorkspaceID: wh.ws, URL: p.URL, Events: events, Description: p.Description,
		SecretSealed: sealed, CreatedAt: s.now()}
	if err := s.store.WebhookEndpointCreate(ctx, e); err != nil {
		return nil, "", wrapStoreError(err, "workspace", wh.ws)
	}
	s.audit(ctx, wh.ws, record.AuditWebhookCreated, e.ID)
	return e, secret, nil
}

// sealWebhookSecret decodes a "whsec_<base64>" secret and encrypts it
// with Options.SecretKey for the store.
func (s *Service) sealWebhookSecret(secret string) ([]byte, error) {
	raw, err := secretBytes(secret)
	if err != nil {
		return nil, validationError("secret", "must be whsec_ followed by the base64 of 16 to 64 bytes")
	}
	return s.seal(raw)
}

// Get returns one endpoint of the workspace.
func (wh *Webhooks) Get(ctx context.Context, id string) (*WebhookEndpoint, error) {
	e, err := wh.svc.store.WebhookEndpointGet(ctx, wh.ws, id)
	if err != nil {
		return nil, wrapStoreError(err, "webhook endpoint", id)
	}
	return e, nil
}

// List returns the endpoints of the workspace.
func (wh *Webhooks) List(ctx context.Context) ([]*WebhookEndpoint, error) {
	es, err := wh.svc.store.WebhookEndpointList(ctx, wh.ws)
	return es, wrapStoreError(err, "workspace", wh.ws)
}

// WebhookUpdateParams are the arguments of Webhooks.Update. Nil fields
// are left unchanged; at least one must be set.
type WebhookUpdateParams struct {
	// URL, as in WebhookCreateParams.
	URL *string
	// Events, as in WebhookCreateParams: empty means every type.
	Events *[]string
	// Description, as in WebhookCreateParams; "" clears it.
	Description *string
	// Enabled enables or disables the endpoint (see Webhooks).
	Enabled *bool
	// Secret replaces the signing secret with one the caller chose (a
	// bootstrap file): whsec_ and the base64 of 16 to 64 bytes. The
	// previous secret stops signing at once (RotateSecret keeps it for
	// WebhookSecretOverlap); deliveries still pending are kept and signed
	// with the new one. Unless Enabled is false, setting it enables the
	// endpoint too.
	Secret *string
}

// Update changes an endpoint of the workspace and returns it as changed.
// A new URL goes through the address guard as at creation. Disabling
// fails its pending deliveries; enabling clears a 410 Gone too. The change
// is audited as AuditWebhookUpdated, and a new Secret as
// AuditWebhookRotated.
func (wh *Webhooks) Update(ctx context.Context, id string, p *WebhookUpdateParams) (*WebhookEndpoint, error) {
	if p == nil || (p.URL == nil && p.Events == nil && p.Description == nil && p.Enabled == nil && p.Secret == nil) {
		return nil, validationError("body", "must set at least one of url, events, description, enabled")
	}
	s := wh.svc
	up, err := wh.updateParams(id, p)
	if err != nil {
		return nil, err
	}
	e, err := s.store.WebhookEndpointUpdate(ctx, up)
	if err != nil {
		return nil, wrapStoreError(err, "webhook endpoint", id)
	}
	if p.Enabled != nil && !*p.Enabled && e.DisabledAt != nil && e.DisabledAt.Equal(up.At) {
		// Disabled by this call (disabling a disabled endpoint keeps its
		// first DisabledAt).
		s.tel.endpointDisabled(ctx, record.DisabledByOperator)
	}
	if p.URL != nil || p.Events != nil || p.Description != nil || p.Enabled != nil {
		s.audit(ctx, wh.ws, record.AuditWebhookUpdated, id)
	}
	if p.Secret != nil {
		s.audit(ctx, wh.ws, record.AuditWebhookRotated, id)
	}
	return e, nil
}

// updateParams validates p and returns the store's update of the
// endpoint id.
func (wh *Webhooks) updateParams(id string, p *WebhookUpdateParams) (*driver.WebhookEndpointUpdateParams, error) {
	s := wh.svc
	up := &driver.WebhookEndpointUpdateParams{WorkspaceID: wh.ws, ID: id, URL: p.URL, Description: p.Description, Enabled: p.Enabled}
	if p.Secret != nil {
		sealed, err := s.sealWebhookSecret(*p.Secret)
		if err != nil {
			return nil, err
		}
		up.SecretSealed = sealed
		if up.Enabled == nil {
			on := true
			up.Enabled = &on
		}
	}
	if err := refuseUnstorable(p, webhookUpdateTexts); err != nil {
		return nil, err
	}
	if p.URL != nil {
		if err := s.validateWebhookURL(*p.URL); err != nil {
			return nil, err
		}
	}
	if p.Events != nil {
		events, err := webhookEvents(*p.Events)
		if err != nil {
			return nil, err
		}
		up.Events = &events
	}
	if p.Description != nil {
		if err := checkLen(record.FieldPath("description"), *p.Description, record.MaxWebhookDescription); err != nil {
			return nil, err
		}
	}
	up.At = s.now()
	return up, nil
}

// Delete removes an endpoint of the workspace and all its deliveries,
// and returns it as it was.
func (wh *Webhooks) Delete(ctx context.Context, id string) (*WebhookEndpoint, error) {
	e, err := wh.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := wh.svc.store.WebhookEndpointDelete(ctx, wh.ws, id); err != nil {
		return nil, wrapStoreError(err, "webhook endpoint", id)
	}
	wh.svc.audit(ctx, wh.ws, record.AuditWebhookDeleted, id)
	return e, nil
}

// RotateSecret gives an endpoint of the workspace a new random signing
// secret and returns it (in clear, only here) with the endpoint. The
// replaced secret keeps signing beside the new one for
// WebhookSecretOverlap: each delivery's webhook-signature header then holds
// two signatures, so receivers can switch secrets without losing events.
// A secret replaced earlier and still in its overlap stops signing.
func (wh *Webhooks) RotateSecret(ctx context.Context, id string) (*WebhookEndpoint, string, error) {
	s := wh.svc
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, "", err
	}
	sealed, err := s.seal(b[:])
	if err != nil {
		return nil, "", err
	}
	until := s.now().Add(defaults.WebhookSecretOverlap)
	e, err := s.store.WebhookEndpointUpdate(ctx, &driver.WebhookEndpointUpdateParams{WorkspaceID: wh.ws, ID: id, SecretSealed: sealed, PreviousUntil: &until, At: s.now()})
	if err != nil {
		return nil, "", wrapStoreError(err, "webhook endpoint", id)
	}
	s.audit(ctx, wh.ws, record.AuditWebhookRotated, id)
	return e, "whsec_" + base64.StdEncoding.EncodeToString(b[:]), nil
}

// Test sends a webhook.test event to an endpoint of the workspace now,
// signed and guarded like every delivery and bounded by
// WebhookOptions.Timeout, and returns the receiver's answer. It is sent
// whether the endpoint is enabled or not and whatever events it
// subscribes to, and is not retried. It is recorded as a finished delivery
// of the endpoint marked Test (delivered on a 2xx answer, failed
// otherwise), listed by Deliveries with the others and pruned like them
// (see Store.WebhookRecordTest). An endpoint that does not answer is a
// result with Error, not an error.
func (wh *Webhooks) Test(ctx context.Context, id string) (*WebhookTestResult, error) {
	e, err := wh.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	s, w := wh.svc, wh.svc.hooks
	keys, err := w.keys(e.SecretSealed, e.PreviousSecretSealed, e.PreviousSecretExpiresAt)
	if err != nil {
		return nil, err
	}
	ev, err := s.WebhookEvent(wh.ws, "", EventWebhookTest, struct {
		EndpointID string `json:"endpoint_id"`
	}{e.ID})
	if err != nil {
		return nil, err
	}
	status, err := w.post(ctx, e.URL, ev.ID, ev.Payload, keys)
	at := s.now()
	res := &WebhookTestResult{StatusCode: status, Latency: at.Sub(ev.CreatedAt)}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		res.Error = err.Error()
	}
	rec := &driver.WebhookRecordTestParams{EndpointID: e.ID, Event: ev, State: record.DeliveryDelivered, LastStatus: status, At: at, Keep: w.opts.KeepFinished}
	switch {
	case err != nil:
		rec.State, rec.LastError = record.DeliveryFailed, truncateError(err.Error())
	case status < 200 || status > 299:
		rec.State, rec.LastError = record.DeliveryFailed, "endpoint answered "+strconv.Itoa(status)
	}
	// An endpoint deleted while its test was under way has no history to
	// keep it in: the answer stands.
	if _, err := s.store.WebhookRecordTest(ctx, rec); err != nil && ErrorCode(err) != CodeNotFound {
		return nil, wrapStoreError(err, "webhook endpoint", id)
	}
	return res, nil
}

// Deliveries returns the deliveries of an endpoint of the workspace,
// newest first, limit at most (default 50, at most
// MaxWebhookDeliveryPage), after the cursor a previous page returned, and
// the cursor of the next page ("" on the last). Pending deliveries are
// listed with the finished ones the store keeps: the newest
// WebhookOptions.KeepFinished per endpoint.
func (wh *Webhooks) Deliveries(ctx context.Context, endpointID, cursor string, limit int) (deliveries []*WebhookDelivery, next string, err error) {
	before, limit, err := seqPage(cursor, limit, record.MaxWebhookDeliveryPage)
	if err != nil {
		return nil, "", err
	}
	list, err := wh.svc.store.WebhookDeliveryList(ctx, &driver.WebhookDeliveryListParams{WorkspaceID: wh.ws, EndpointID: endpointID, Before: before, Limit: limit + 1})
	if err != nil {
		return nil, "", wrapStoreError(err, "webhook endpoint", endpointID)
	}
	list, next = paging.Cut(list, limit, func(e *WebhookDelivery) string { return paging.FormatSeq(e.Seq) })
	return list, next, nil
}

// Redeliver queues a delivery of an endpoint of the workspace (deliveryID
// as WebhookDeliveryID gives it) again as a new attempt due now, whether
// it is pending, failed or delivered, and returns it. The event keeps its
// id, so receivers that deduplicate by webhook-id see a repeat. Attempts
// keep counting: a redelivered delivery that fails is retried only while
// the schedule has attempts left (a delivery that had failed for good
// gets this one attempt). A delivery whose attempt is under way (leased)
// is a conflict, as is a delivery of a disabled endpoint (enable it
// first).
func (wh *Webhooks) Redeliver(ctx context.Context, endpointID, deliveryID string) (*WebhookDelivery, error) {
	e, err := wh.Get(ctx, endpointID)
	if err != nil {
		return nil, err
	}
	seq, err := strconv.ParseInt(strings.TrimPrefix(deliveryID, "whd_"), 10, 64)
	if err != nil || seq < 1 || !strings.HasPrefix(deliveryID, "whd_") {
		return nil, notFound("webhook delivery", deliveryID)
	}
	s := wh.svc
	if e.DisabledAt != nil {
		// An unknown delivery is not found, even at a disabled endpoint.
		ds, err := s.store.WebhookDeliveryList(ctx, &driver.WebhookDeliveryListParams{WorkspaceID: wh.ws, EndpointID: endpointID, Before: seq + 1, Limit: 1})
		if err != nil {
			return nil, wrapStoreError(err, "webhook endpoint", endpointID)
		}
		if len(ds) == 0 || ds[0].Seq != seq {
			return nil, notFound("webhook delivery", deliveryID)
		}
		return nil, &Error{Code: CodeConflict, Message: "webhook endpoint " + e.ID + " is disabled; enable it before redelivering"}
	}
	d, err := s.store.WebhookRedeliver(ctx, &driver.WebhookRedeliverParams{WorkspaceID: wh.ws, EndpointID: endpointID, ID: seq, Now: s.now()})
	if err != nil {
		if errors.Is(err, ErrConflict) {
			return nil, &Error{Code: CodeConflict, Message: "webhook delivery " + deliveryID + " is being attempted now; try again when the attempt ends", Err: err}
		}
		return nil, wrapStoreError(err, "webhook delivery", deliveryID)
	}
	s.wakeWebhooks()
	return d, nil
}
