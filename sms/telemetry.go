package sms

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/ujumbe/messaging/internal/queuegauges"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
)

// InstrumentationName is the name of the SMS service's meter and tracer.
const InstrumentationName = "github.com/ujumbe/messaging/sms"

// Names of the SMS service's metric instruments. Their only attribute is
// account (the partner id): never a mobile number, a message text or a
// key.
const (
	MetricAccepted      = "messaging.sms.messages.accepted"
	MetricSent          = "messaging.sms.messages.sent"
	MetricFailed        = "messaging.sms.messages.failed"
	MetricRetries       = "messaging.sms.retries"
	MetricSegments      = "messaging.sms.segments"
	MetricCreditDebited = "messaging.sms.credit.debited"
	// MetricUnconfirmed counts hand-overs whose outcome was unknown
	// (see Options.ConfirmWindow).
	MetricUnconfirmed = "messaging.sms.handovers.unconfirmed"
	// MetricConfirmed counts unknown hand-overs a report of the upstream
	// confirmed (see ApplyUpstreamReport).
	MetricConfirmed = "messaging.sms.handovers.confirmed"
	// MetricLateConfirmations counts reports of the upstream that carry
	// a message's reference but came after its outcome was recorded
	// otherwise (resent, or failed): logged, never applied.
	MetricLateConfirmations = "messaging.sms.handovers.late_confirmations"
	MetricQueueDepth        = "messaging.sms.queue.depth"
	MetricQueueDue          = "messaging.sms.queue.due"
	MetricQueueOldestAge    = "messaging.sms.queue.oldest_age"
)

// AttrAccount is the attribute naming the account (partner id).
const AttrAccount = attribute.Key("account")

// smsTelemetry holds the instruments and the tracer (nil: no spans).
type smsTelemetry struct {
	tracer   trace.Tracer
	accepted metric.Int64Counter
	sent     metric.Int64Counter
	failed   metric.Int64Counter
	retries  metric.Int64Counter
	segments metric.Int64Counter
	debited  metric.Float64Counter

	unconfirmed metric.Int64Counter
	confirmed   metric.Int64Counter
	late        metric.Int64Counter

	mu       sync.RWMutex
	accounts map[string][]metric.AddOption
}

func newSMSTelemetry(s *SMS, mp metric.MeterProvider, tp trace.TracerProvider) (*smsTelemetry, error) {
	if mp == nil {
		mp = metricnoop.NewMeterProvider()
	}
	m := mp.Meter(InstrumentationName)
	t := &smsTelemetry{accounts: map[string][]metric.AddOption{}}
	if tp != nil {
		t.tracer = tp.Tracer(InstrumentationName)
	}
	var errs []error
	counter := func(name, unit, desc string) metric.Int64Counter {
		c, err := m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return c
	}
	t.accepted = counter(MetricAccepted, "{message}", "SMS accepted (debited and stored for the scheduler), by account.")
	t.sent = counter(MetricSent, "{message}", "SMS the gateway accepted, by account.")
	t.failed = counter(MetricFailed, "{message}", "SMS that failed for good (refused, or retries exhausted), by account.")
	t.retries = counter(MetricRetries, "{message}", "SMS put back for a later attempt after a retryable gateway error, by account.")
	t.segments = counter(MetricSegments, "{segment}", "SMS parts of the accepted messages, by account.")
	t.unconfirmed = counter(MetricUnconfirmed, "{message}", "SMS hand-overs whose outcome was unknown (timeout, lost connection, lost answer), by account.")
	t.confirmed = counter(MetricConfirmed, "{message}", "SMS hand-overs of unknown outcome confirmed by a report of the upstream, by account.")
	t.late = counter(MetricLateConfirmations, "{report}", "Reports of the upstream carrying an SMS reference after its outcome was recorded otherwise (resent or failed): not applied, by account.")
	var err error
	t.debited, err = m.Float64Counter(MetricCreditDebited, metric.WithUnit("{credit}"), metric.WithDescription("Credit debited for accepted SMS, by account."))
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	err = queuegauges.Register(m, &queuegauges.Queue{
		Depth:     queuegauges.Gauge{Name: MetricQueueDepth, Description: "SMS not handed to the gateway yet: scheduled, queued or being handed over."},
		Due:       queuegauges.Gauge{Name: MetricQueueDue, Description: "SMS due now and not claimed."},
		OldestAge: queuegauges.Gauge{Name: MetricQueueOldestAge, Description: "How long the oldest due SMS has waited for the scheduler; 0 when none is due."},
		Unit:      "{message}", Now: s.now, Log: s.log, Failed: "sms: reading the queue figures failed",
		Read: func(ctx context.Context, now time.Time) (*queuegauges.Stats, error) {
			st, err := s.store.SMSQueueStats(ctx, &QueueStatsParams{Now: now})
			if err != nil {
				return nil, err
			}
			return &queuegauges.Stats{Pending: st.Pending, Due: st.Due, OldestDueAt: st.OldestDueAt}, nil
		},
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// account returns the pre-built attributes of an account.
func (t *smsTelemetry) account(id string) []metric.AddOption {
	t.mu.RLock()
	opts, ok := t.accounts[id]
	t.mu.RUnlock()
	if ok {
		return opts
	}
	opts = []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(AttrAccount.String(id)))}
	t.mu.Lock()
	t.accounts[id] = opts
	t.mu.Unlock()
	return opts
}

// acceptedAll records the messages of msgs the store accepted.
func (t *smsTelemetry) acceptedAll(ctx context.Context, msgs []*Message, res []AcceptResult) {
	for i, m := range msgs {
		if i >= len(res) || res[i].Err != nil {
			continue
		}
		a := t.account(m.PartnerID)
		t.accepted.Add(ctx, 1, a...)
		t.segments.Add(ctx, int64(m.Segments), a...)
		t.debited.Add(ctx, float64(m.Cost)/100, a...)
	}
}

// start starts a span when tracing is on; callers set attributes only on
// a recording span.
func (t *smsTelemetry) start(ctx context.Context, name string) (context.Context, trace.Span) {
	if t.tracer == nil {
		return ctx, nil
	}
	return t.tracer.Start(ctx, name)
}
