package messaging

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ujumbe/messaging/internal/metricname"
	"github.com/ujumbe/messaging/internal/spans"
	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/ujumbe/messaging/internal/defaults"
	"github.com/ujumbe/messaging/internal/workqueue"
	"github.com/ujumbe/messaging/webhooksig"
)

// WebhookOptions configure the delivery of events to webhook endpoints.
// Zero fields take the documented defaults.
type WebhookOptions struct {
	// Timeout bounds one delivery attempt. Default and maximum 15 s.
	Timeout time.Duration
	// Schedule is the wait before each retry after a failed attempt
	// (non-2xx or timeout). Default 5 s, 5 min, 30 min, 2 h, 5 h, 10 h,
	// 10 h: eight attempts over about a day, then the delivery fails.
	Schedule []time.Duration
	// Workers is the number of deliveries in flight at once, and of
	// keep-alive connections kept per endpoint host. Default 16.
	Workers int
	// PollInterval is how often due deliveries are looked for. Default 1 s.
	PollInterval time.Duration
	// Lease is how long a claimed delivery belongs to this process.
	// Default 60 s.
	Lease time.Duration
	// AllowLoopback lets deliveries reach loopback addresses (127.0.0.0/8,
	// ::1), for local development. Default false.
	AllowLoopback bool
	// AllowPrivate lets deliveries reach private, link-local, unspecified,
	// multicast and every other special-purpose address of the IANA IPv4
	// and IPv6 registries (documentation, benchmarking, reserved, NAT64,
	// ...), and loopback. Default false: such endpoints are refused at
	// connect time (after DNS resolution; IPv4-mapped, IPv4-compatible and
	// 6to4 addresses by the IPv4 address they carry), so a webhook URL
	// cannot be used to reach internal services.
	AllowPrivate bool
	// Client overrides the HTTP client (its redirect policy and dialer are
	// then the caller's). Default: a client that never follows redirects
	// and enforces AllowPrivate.
	Client *http.Client
	// KeepFinished is how many finished (delivered or failed) deliveries
	// are kept per endpoint, the newest, for Webhooks.Deliveries and
	// Webhooks.Redeliver; older ones are deleted as new ones finish.
	// Default 500.
	KeepFinished int
}

// webhookSender delivers queued events to endpoints (see package
// internal/workqueue for the loop and the pacing). A delivery is claimed
// only after the earlier events of its message reached the endpoint (the
// store's claim keeps that order: an event claimed and not yet recorded
// holds back the later ones of its message), and a claim is made once
// half the workers are free.
type webhookSender struct {
	svc    *Service
	opts   WebhookOptions
	owner  string
	client *http.Client
	queue  *workqueue.Queue[*WebhookDelivery]
	// retry is the wait before the next attempt of a failed delivery:
	// opts.Schedule.
	retry workqueue.Schedule
}

// newWebhookSender returns the webhook sender of s; sleep (nil: a timer)
// waits after a failed claim and between retries of an outcome write.
func newWebhookSender(s *Service, o WebhookOptions, sleep workqueue.Sleep) *webhookSender {
	if o.Timeout <= 0 || o.Timeout > 15*time.Second {
		o.Timeout = 15 * time.Second
	}
	if o.Schedule == nil {
		o.Schedule = defaults.DefaultWebhookSchedule()
	}
	defaults.Positive(&o.Workers, 16)
	defaults.Positive(&o.KeepFinished, 500)
	defaults.Positive(&o.PollInterval, time.Second)
	defaults.Positive(&o.Lease, 60*time.Second)
	if o.Lease <= o.Timeout {
		o.Lease = o.Timeout + 10*time.Second
	}
	client := o.Client
	if client == nil {
		dialer := &net.Dialer{Timeout: 10 * time.Second, Control: func(_, address string, _ syscall.RawConn) error {
			host, _, err := net.SplitHostPort(address)
			if err != nil {
				return err
			}
			if !webhookAddressAllowed(host, o) {
				return errPrivateAddress
			}
			return nil
		}}
		client = &http.Client{
			Transport: &http.Transport{DialContext: dialer.DialContext, MaxIdleConnsPerHost: o.Workers, IdleConnTimeout: 90 * time.Second,
				TLSHandshakeTimeout: 10 * time.Second, ResponseHeaderTimeout: o.Timeout},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	w := &webhookSender{svc: s, opts: o, owner: "hook_" + base64.RawURLEncoding.EncodeToString(b[:]), client: client,
		retry: workqueue.Delays(o.Schedule)}
	w.queue = workqueue.New(workqueue.Config[*WebhookDelivery]{
		Name: "webhooks", Workers: o.Workers, PollInterval: o.PollInterval,
		Now: s.now, Sleep: sleep, Logger: s.log,
		Work: func(ctx context.Context, d *WebhookDelivery) error { w.deliver(ctx, d); return nil },
		Claim: func(ctx context.Context, limit int) ([]*WebhookDelivery, error) {
			return s.store.WebhookClaim(ctx, &driver.WebhookClaimParams{Owner: w.owner, Now: s.now(), Lease: o.Lease, Limit: limit})
		},
	})
	return w
}

// startSpan starts the span of one delivery attempt of d, when tracing is
// on. When d carries a trace context (d.TraceParent: the status change of
// a message whose accept stored one, see writeStatus), the span is a child
// of the span that accepted the message, with a link to it, as the
// message's dispatch is; otherwise (an SMS delivery report, a test event,
// a message with no trace) it starts a trace of its own. The message is
// not read: its trace context travels with the event.
func (w *webhookSender) startSpan(ctx context.Context, d *WebhookDelivery) (context.Context, trace.Span) {
	tel := w.svc.tel
	if tel.tracer == nil {
		return ctx, nil
	}
	ctx, opts := continueTrace(ctx, d.TraceParent, tel.spanClient)
	return tel.tracer.Start(ctx, "messaging.webhook.deliver", opts...)
}

// deliver makes one attempt and records its outcome.
func (w *webhookSender) deliver(ctx context.Context, d *WebhookDelivery) {
	tel := w.svc.tel
	ctx, span := w.startSpan(ctx, d)
	if spans.Recording(span) {
		span.SetAttributes(metricname.AttrMessageID.String(d.MessageID), attribute.String("webhook.endpoint.id", d.EndpointID),
			attribute.String("webhook.event.type", d.EventType), attribute.Int("messaging.attempt", d.Attempts))
	}
	status, err := w.attempt(ctx, d)
	if spans.Recording(span) && status != 0 {
		span.SetAttributes(attribute.Int("http.response.status_code", status))
	}
	if ctx.Err() != nil {
		spans.End(span, ctx.Err())
		return // killed: the lease runs out and the delivery is retried
	}
	rec := &driver.WebhookRecordParams{ID: d.ID, Owner: w.owner, LastStatus: status, At: w.svc.now(), Keep: w.opts.KeepFinished}
	var outcome string
	switch {
	case err == nil && status >= 200 && status < 300:
		rec.State, outcome = record.DeliveryDelivered, metricname.WebhookOutcomeDelivered
		tel.hookLag.Record(ctx, rec.At.Sub(d.CreatedAt).Seconds())
	case status == http.StatusGone:
		rec.State, rec.DisableEndpoint, rec.LastError = record.DeliveryFailed, true, "endpoint answered 410 Gone: disabled"
		outcome = metricname.WebhookOutcomeEndpointDisabled
		tel.endpointDisabled(ctx, record.DisabledGone)
	default:
		if delay, more := w.retry.After(d.Attempts); more {
			rec.State, rec.DueAt, outcome = record.DeliveryPending, w.svc.now().Add(delay), metricname.WebhookOutcomeRetried
		} else {
			rec.State, outcome = record.DeliveryFailed, metricname.WebhookOutcomeDropped
		}
	}
	tel.webhookOutcome(ctx, outcome)
	if outcome != metricname.WebhookOutcomeDelivered && err == nil {
		err = fmt.Errorf("endpoint answered %d", status)
	}
	spans.End(span, err)
	if err != nil {
		rec.LastError = err.Error()
	} else if rec.LastError == "" && rec.State != record.DeliveryDelivered {
		rec.LastError = "endpoint answered " + strconv.Itoa(status)
	}
	rec.LastError = truncateError(rec.LastError)
	// The outcome is retried until the delivery's lease (d.DueAt of a
	// claimed delivery) ends: until then no other worker delivers it again.
	_ = w.queue.Record(ctx, &workqueue.Outcome{What: "delivery", LeaseEnd: d.DueAt, Permanent: permanent, LogArgs: []any{"delivery", d.ID},
		Write: func(rctx context.Context) error { return w.svc.store.WebhookRecord(rctx, rec) }})
	if rec.State == record.DeliveryFailed {
		w.svc.log.Warn("webhooks: delivery failed for good", "endpoint", d.EndpointID, "event", d.EventID, "attempts", d.Attempts, "last_status", status)
	}
}

func (w *webhookSender) attempt(ctx context.Context, d *WebhookDelivery) (int, error) {
	keys, err := w.keys(d.Secret, d.PreviousSecret, d.PreviousSecretExpiresAt)
	if err != nil {
		return 0, err
	}
	return w.post(ctx, d.URL, d.EventID, d.Payload, keys)
}

// keys returns the signing keys of an endpoint: its secret, and its
// previous secret until that expires.
func (w *webhookSender) keys(secret, previous []byte, expires *time.Time) ([][]byte, error) {
	key, err := w.svc.unseal(secret)
	if err != nil {
		return nil, err
	}
	keys := [][]byte{key}
	if len(previous) > 0 && expires != nil && w.svc.now().Before(*expires) {
		old, err := w.svc.unseal(previous)
		if err != nil {
			return nil, err
		}
		keys = append(keys, old)
	}
	return keys, nil
}

// post sends one signed event to rawURL: the header webhook-signature holds
// one "v1,<signature>" per key, separated by spaces (Standard Webhooks).
func (w *webhookSender) post(ctx context.Context, rawURL, eventID string, payload []byte, keys [][]byte) (int, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return 0, err
	}
	actx, cancel := context.WithTimeout(ctx, w.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, u.String(), bytes.NewReader(payload))
	if err != nil {
		return 0, err
	}
	ts := w.svc.now().Unix()
	sigs := make([]string, len(keys))
	for i, k := range keys {
		sigs[i] = "v1," + webhooksig.SignKey(k, eventID, ts, payload)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "ujumbe-messaging-webhooks/1")
	req.Header.Set("webhook-id", eventID)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
	req.Header.Set("webhook-signature", strings.Join(sigs, " "))
	resp, err := w.client.Do(req)
	if err != nil {
		if errors.Is(err, errPrivateAddress) {
			return 0, errPrivateAddress
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return 0, errors.New("timeout")
		}
		return 0, errors.New("connection failed")
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, nil
}

// DeliverWebhooksDue makes one delivery attempt for every webhook delivery
// due now and records the outcomes before returning how many it attempted.
// Like DispatchDue, it is the background work done once.
func (s *Service) DeliverWebhooksDue(ctx context.Context) (int, error) {
	return runDue(ctx, s.hooks.queue, "webhook delivery")
}

// wakeWebhooks tells the webhook sender that an event was queued for
// delivery, so that it claims without waiting for its next poll.
func (s *Service) wakeWebhooks() { s.hooks.queue.Notify() }
