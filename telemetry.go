package messaging

import (
	"context"
	"encoding/hex"
	"errors"
	"slices"
	"time"

	"github.com/ujumbe/messaging/internal/metricname"
	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging/internal/queuegauges"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
)

// latencyBuckets returns the bucket boundaries, in seconds, of the
// latency histograms: from 5 ms to a day, since a message may wait for
// retries.
func latencyBuckets() []float64 {
	return []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 21600, 86400}
}

// measure is a pre-built attribute set in the two forms the instruments
// take, so that recording allocates nothing.
type measure struct {
	add []metric.AddOption
	rec []metric.RecordOption
}

func newMeasure(kv ...attribute.KeyValue) measure {
	o := metric.WithAttributeSet(attribute.NewSet(kv...))
	return measure{add: []metric.AddOption{o}, rec: []metric.RecordOption{o}}
}

// telemetry holds the service's instruments and tracer. tracer is nil when
// no TracerProvider was given: then no span is started at all.
type telemetry struct {
	tracer trace.Tracer
	// spanInternal and spanClient are the span kinds, pre-built.
	spanInternal, spanClient []trace.SpanStartOption

	accepted        metric.Int64Counter
	transitions     metric.Int64Counter
	toSent          metric.Float64Histogram
	toDelivered     metric.Float64Histogram
	providerErrors  metric.Int64Counter
	retries         metric.Int64Counter
	unconfirmed     metric.Int64Counter
	hookDeliveries  metric.Int64Counter
	hookLag         metric.Float64Histogram
	hooksDisabled   metric.Int64Counter
	byChannelType   map[[2]string]measure
	byChannelStatus map[[2]string]measure
	byChannel       map[string]measure
	byOutcome       map[string]measure
}

// newTelemetry creates the instruments of s on mp (nil: no-op) and its
// tracer on tp (nil: none).
func newTelemetry(s *Service, mp metric.MeterProvider, tp trace.TracerProvider) (*telemetry, error) {
	if mp == nil {
		mp = metricnoop.NewMeterProvider()
	}
	m := mp.Meter(metricname.InstrumentationName)
	t := &telemetry{byChannelType: map[[2]string]measure{}, byChannelStatus: map[[2]string]measure{}, byChannel: map[string]measure{},
		byOutcome: map[string]measure{}}
	if tp != nil {
		t.tracer = tp.Tracer(metricname.InstrumentationName)
	}
	t.spanInternal = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal)}
	t.spanClient = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient)}
	var errs []error
	counter := func(name, unit, desc string) metric.Int64Counter {
		c, err := m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return c
	}
	histogram := func(name, desc string) metric.Float64Histogram {
		h, err := m.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc), metric.WithExplicitBucketBoundaries(latencyBuckets()...))
		errs = append(errs, err)
		return h
	}
	t.accepted = counter(metricname.MetricMessagesAccepted, "{message}", "Messages accepted (stored as queued), by channel and type.")
	t.transitions = counter(metricname.MetricStatusTransitions, "{transition}", "Status changes of messages, by channel and new status.")
	t.toSent = histogram(metricname.MetricAcceptToSent, "Time from a message's acceptance (a scheduled message's send_at) to the provider accepting it (status sent), by channel.")
	t.toDelivered = histogram(metricname.MetricSentToDelivered, "Time from a message's sent to its delivered report, by channel.")
	t.providerErrors = counter(metricname.MetricProviderErrors, "{error}", "Sends refused or failed by the channel provider, by channel and provider error code.")
	t.retries = counter(metricname.MetricDispatchRetries, "{retry}", "Sends put back in the queue for a later attempt after a retryable provider error, by channel.")
	t.unconfirmed = counter(metricname.MetricDispatchUnconfirmed, "{message}", "Sends whose outcome was unknown, by channel and outcome: unknown (waiting for confirmation), confirmed (by a correlated report), resent or failed (after the confirmation window), late (a confirmation after the resend or failure).")
	t.hookDeliveries = counter(metricname.MetricWebhookDeliveries, "{attempt}", "Webhook delivery attempts, by outcome: delivered, retried, dropped (attempts exhausted), endpoint_disabled (410 Gone).")
	t.hookLag = histogram(metricname.MetricWebhookLag, "Time from an event being queued for an endpoint to its delivery.")
	t.hooksDisabled = counter(metricname.MetricWebhookEndpointsDisabled, "{endpoint}", "Webhook endpoints disabled, by reason: gone (answered 410) or operator.")
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	err := queuegauges.Register(m, &queuegauges.Queue{
		Depth:     queuegauges.Gauge{Name: metricname.MetricQueueDepth, Description: "Queued outbound messages: due, waiting for a retry, or being handed to the provider."},
		Due:       queuegauges.Gauge{Name: metricname.MetricQueueDue, Description: "Queued messages due now and not yet claimed by a dispatcher."},
		OldestAge: queuegauges.Gauge{Name: metricname.MetricQueueOldestAge, Description: "How long the oldest due message has been waiting for a dispatcher; 0 when none is due."},
		Unit:      "{message}", Now: s.now, Log: s.log, Failed: "reading the dispatch queue figures failed",
		Read: func(ctx context.Context, now time.Time) (*queuegauges.Stats, error) {
			st, err := s.store.MessageQueueStats(ctx, &driver.MessageQueueStatsParams{Now: now})
			if err != nil {
				return nil, err
			}
			return &queuegauges.Stats{Pending: st.Queued, Due: st.Due, OldestDueAt: st.OldestDueAt}, nil
		},
	})
	if err != nil {
		return nil, err
	}
	types := []string{record.TypeText, record.TypeImage, record.TypeVideo, record.TypeDocument, record.TypeAudio, record.TypeTemplate}
	statuses := []string{StatusSent, StatusDelivered, StatusRead, StatusFailed, StatusCanceled}
	for _, ch := range s.Channels() {
		t.byChannel[ch] = newMeasure(metricname.AttrChannel.String(ch))
		for _, ty := range types {
			t.byChannelType[[2]string{ch, ty}] = newMeasure(metricname.AttrChannel.String(ch), metricname.AttrType.String(ty))
		}
		for _, st := range statuses {
			t.byChannelStatus[[2]string{ch, st}] = newMeasure(metricname.AttrChannel.String(ch), metricname.AttrStatus.String(st))
		}
	}
	for _, o := range []string{metricname.WebhookOutcomeDelivered, metricname.WebhookOutcomeRetried, metricname.WebhookOutcomeDropped, metricname.WebhookOutcomeEndpointDisabled} {
		t.byOutcome[o] = newMeasure(metricname.AttrOutcome.String(o))
	}
	// The webhook counters start at 0 rather than absent, so that the
	// first endpoint disabled shows as an increase (an alert on
	// increase() misses a series born at 1).
	ctx := context.Background()
	for _, m := range t.byOutcome {
		t.hookDeliveries.Add(ctx, 0, m.add...)
	}
	for _, r := range []string{record.DisabledGone, record.DisabledByOperator} {
		t.hooksDisabled.Add(ctx, 0, metric.WithAttributeSet(attribute.NewSet(metricname.AttrReason.String(r))))
	}
	return t, nil
}

// channelType returns the attribute set of a channel and a message type.
func (t *telemetry) channelType(ch, ty string) measure {
	if m, ok := t.byChannelType[[2]string{ch, ty}]; ok {
		return m
	}
	return newMeasure(metricname.AttrChannel.String(ch), metricname.AttrType.String(ty))
}

// channelStatus returns the attribute set of a channel and a status.
func (t *telemetry) channelStatus(ch, st string) measure {
	if m, ok := t.byChannelStatus[[2]string{ch, st}]; ok {
		return m
	}
	return newMeasure(metricname.AttrChannel.String(ch), metricname.AttrStatus.String(st))
}

// channel returns the attribute set of a channel.
func (t *telemetry) channel(ch string) measure {
	if m, ok := t.byChannel[ch]; ok {
		return m
	}
	return newMeasure(metricname.AttrChannel.String(ch))
}

// statusChanged records a committed status change of m (before is the
// message as it was) at now.
func (t *telemetry) statusChanged(ctx context.Context, before *Message, status string, now time.Time) {
	t.transitions.Add(ctx, 1, t.channelStatus(before.Channel, status).add...)
	switch {
	case status == StatusSent && before.Status == StatusQueued:
		// A scheduled message waits from its SendAt, not its acceptance.
		t.toSent.Record(ctx, now.Sub(sendFrom(before)).Seconds(), t.channel(before.Channel).rec...)
	case status == StatusDelivered && before.Status == StatusSent:
		// A sent message's UpdatedAt is when it became sent: nothing
		// else changes a message that left the queue.
		t.toDelivered.Record(ctx, now.Sub(before.UpdatedAt).Seconds(), t.channel(before.Channel).rec...)
	}
}

// unconfirmedSend records an outcome of a send whose outcome was unknown
// (UnconfirmedOutcomeUnknown and the others).
func (t *telemetry) unconfirmedSend(ctx context.Context, channel, outcome string) {
	t.unconfirmed.Add(ctx, 1, metric.WithAttributeSet(attribute.NewSet(metricname.AttrChannel.String(channel), metricname.AttrOutcome.String(outcome))))
}

// providerError records a provider's refusal of a send.
func (t *telemetry) providerError(ctx context.Context, channel, code string) {
	t.providerErrors.Add(ctx, 1, metric.WithAttributeSet(attribute.NewSet(metricname.AttrChannel.String(channel), metricname.AttrProviderCode.String(code))))
}

// webhookOutcome records the outcome of a delivery attempt.
func (t *telemetry) webhookOutcome(ctx context.Context, outcome string) {
	t.hookDeliveries.Add(ctx, 1, t.byOutcome[outcome].add...)
}

// endpointDisabled records an endpoint disabled for reason.
func (t *telemetry) endpointDisabled(ctx context.Context, reason string) {
	t.hooksDisabled.Add(ctx, 1, metric.WithAttributeSet(attribute.NewSet(metricname.AttrReason.String(reason))))
}

// start starts a span when tracing is on; otherwise it returns ctx and a
// nil span, and endSpan does nothing. Callers set attributes only on a
// recording span (see recording), so that nothing is built when tracing
// is off.
func (t *telemetry) start(ctx context.Context, name string, opts []trace.SpanStartOption) (context.Context, trace.Span) {
	if t.tracer == nil {
		return ctx, nil
	}
	return t.tracer.Start(ctx, name, opts...)
}

// traceParent returns the W3C traceparent of sc, or "" when sc is not
// valid.
func traceParent(sc trace.SpanContext) string {
	if !sc.IsValid() {
		return ""
	}
	flags := "00"
	if sc.IsSampled() {
		flags = "01"
	}
	tid, sid := sc.TraceID(), sc.SpanID()
	return "00-" + hex.EncodeToString(tid[:]) + "-" + hex.EncodeToString(sid[:]) + "-" + flags
}

// continueTrace makes a span started with ctx and opts continue the trace
// of traceparent (a stored trace context, see traceParent): its remote
// span becomes the parent, and a link to it is added to a copy of opts.
// An empty or unreadable traceparent returns ctx and opts as they are.
func continueTrace(ctx context.Context, traceparent string, opts []trace.SpanStartOption) (context.Context, []trace.SpanStartOption) {
	sc, ok := parseTraceParent(traceparent)
	if !ok {
		return ctx, opts
	}
	return trace.ContextWithRemoteSpanContext(ctx, sc), append(slices.Clip(opts), trace.WithLinks(trace.Link{SpanContext: sc}))
}

// parseTraceParent reads a traceparent written by traceParent; ok is false
// for anything else.
func parseTraceParent(s string) (sc trace.SpanContext, ok bool) {
	if len(s) != 55 || s[:3] != "00-" || s[35] != '-' || s[52] != '-' {
		return sc, false
	}
	tid, err := trace.TraceIDFromHex(s[3:35])
	if err != nil {
		return sc, false
	}
	sid, err := trace.SpanIDFromHex(s[36:52])
	if err != nil {
		return sc, false
	}
	var flags trace.TraceFlags
	switch s[53:] {
	case "01":
		flags = trace.FlagsSampled
	case "00":
	default:
		return sc, false
	}
	sc = trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: flags, Remote: true})
	return sc, sc.IsValid()
}
