package messaging_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ujumbe/messaging/internal/metricname"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/internal/metrictest"
	"github.com/ujumbe/messaging/store/memstore"
)

// telFixture is a Service on memstore with a fake clock, a scripted
// provider, a webhook receiver and an SDK meter and tracer recording in
// memory.
type telFixture struct {
	*dispatchFixture
	metrics *metrictest.Reader
	spans   *tracetest.SpanRecorder
	rcv     *receiver
	// reads counts the service's reads of one message (see messageReads).
	reads *messageReads
}

// messageReads counts the reads of one message (MessageGet).
type messageReads struct {
	driver.Store
	n atomic.Int64
}

func (s *messageReads) MessageGet(ctx context.Context, workspaceID, id string) (*messaging.Message, error) {
	s.n.Add(1)
	return s.Store.MessageGet(ctx, workspaceID, id)
}

func setupTelemetry(t *testing.T, hookStatuses ...int) *telFixture {
	t.Helper()
	reads := &messageReads{Store: memstore.New()}
	f := &telFixture{dispatchFixture: &dispatchFixture{ctx: context.Background(), store: reads, clock: newFakeClock(t0), prov: newScripted()},
		metrics: metrictest.New(t), spans: tracetest.NewSpanRecorder(), rcv: &receiver{statuses: hookStatuses}, reads: reads}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(f.spans))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	svc, err := messaging.New(f.store, f.prov, &messaging.Options{Clock: f.clock.Now, SecretKey: make([]byte, 32),
		Dispatch: messaging.DispatchOptions{PerSenderRate: -1}, Webhooks: messaging.WebhookOptions{AllowLoopback: true},
		MeterProvider: f.metrics.Provider, TracerProvider: tp})
	if err != nil {
		t.Fatal(err)
	}
	f.svc = svc
	if _, err := svc.CreateWorkspace(f.ctx, &messaging.CreateWorkspaceParams{ID: "acme", Channels: svc.Channels()}); err != nil {
		t.Fatal(err)
	}
	f.ws = svc.Workspace("acme")
	if hookStatuses != nil {
		srv := httptest.NewServer(f.rcv)
		t.Cleanup(srv.Close)
		if _, _, err := createAnyWebhook(f.store, "acme", srv.URL+"/hook"); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

var (
	whatsapp = metricname.AttrChannel.String("whatsapp")
)

func status(s string) attribute.KeyValue { return metricname.AttrStatus.String(s) }

// TestMetricsOfASendAndItsDispatch: one send counts one accepted message,
// the queue gauges show it waiting, its dispatch one transition to sent
// with the time it waited, and its delivered report the time from sent.
func TestMetricsOfASendAndItsDispatch(t *testing.T) {
	t.Parallel()
	f := setupTelemetry(t)
	id := f.send(t, "+254712345678")

	s := f.metrics.Collect(t)
	if got := s.Sum(metricname.MetricMessagesAccepted, whatsapp, metricname.AttrType.String("text")); got != 1 {
		t.Errorf("accepted = %v, want 1", got)
	}
	if got := s.Sum(metricname.MetricMessagesAccepted); got != 1 {
		t.Errorf("accepted over every attribute = %v, want 1", got)
	}
	f.clock.Advance(30 * time.Second)
	s = f.metrics.Collect(t)
	gauges := func(s *metrictest.Snapshot) [3]float64 {
		d, _ := s.Gauge(metricname.MetricQueueDepth)
		due, _ := s.Gauge(metricname.MetricQueueDue)
		age, _ := s.Gauge(metricname.MetricQueueOldestAge)
		return [3]float64{d, due, age}
	}
	if d := cmp.Diff([3]float64{1, 1, 30}, gauges(s)); d != "" {
		t.Errorf("queue depth, due, oldest age before the dispatch (-want +got):\n%s", d)
	}

	if n := f.dispatch(t); n != 1 {
		t.Fatalf("dispatched %d", n)
	}
	s = f.metrics.Collect(t)
	if got := s.Sum(metricname.MetricStatusTransitions, whatsapp, status("sent")); got != 1 {
		t.Errorf("transitions to sent = %v, want 1", got)
	}
	if got := s.Sum(metricname.MetricStatusTransitions); got != 1 {
		t.Errorf("transitions = %v, want 1", got)
	}
	if n, sum := s.Histogram(metricname.MetricAcceptToSent, whatsapp); n != 1 || sum != 30 {
		t.Errorf("accept to sent: %d recordings summing %vs, want 1 of 30s", n, sum)
	}
	if d := cmp.Diff([3]float64{0, 0, 0}, gauges(s)); d != "" {
		t.Errorf("queue depth, due, oldest age after the dispatch (-want +got):\n%s", d)
	}
	if got := s.Sum(metricname.MetricProviderErrors) + s.Sum(metricname.MetricDispatchRetries); got != 0 {
		t.Errorf("provider errors and retries of a clean send = %v", got)
	}

	f.clock.Advance(5 * time.Second)
	m := f.get(t, id)
	pm, _ := f.store.MessageGet(f.ctx, "acme", id)
	if _, err := f.svc.ApplyProviderStatus(f.ctx, &messaging.ProviderStatus{ProviderMessageID: pm.ProviderMessageID, Status: "delivered"}); err != nil {
		t.Fatal(err)
	}
	s = f.metrics.Collect(t)
	if n, sum := s.Histogram(metricname.MetricSentToDelivered, whatsapp); n != 1 || sum != 5 {
		t.Errorf("sent to delivered: %d recordings summing %vs, want 1 of 5s", n, sum)
	}
	if got := s.Sum(metricname.MetricStatusTransitions, whatsapp, status("delivered")); got != 1 {
		t.Errorf("transitions to delivered = %v, want 1", got)
	}
	// No attribute of any metric holds the recipient or the text.
	if all := s.AllAttributes(); strings.Contains(all, "254712345678") || strings.Contains(all, m.Text) {
		t.Errorf("a metric attribute holds personal data:\n%s", all)
	}
}

// TestMetricsOfProviderFailures: a retryable refusal counts a provider
// error and a retry; a permanent one a provider error and a transition to
// failed, each with the provider's code.
func TestMetricsOfProviderFailures(t *testing.T) {
	t.Parallel()
	f := setupTelemetry(t)
	f.prov.script["+254700000001"] = []error{&messaging.SendError{Code: "130429", Text: "Rate limit hit", Retryable: true}, nil}
	f.prov.script["+254700000002"] = []error{&messaging.SendError{Code: "131026", Text: "Message undeliverable"}}
	f.send(t, "+254700000001")
	f.send(t, "+254700000002")
	if n := f.dispatch(t); n != 2 {
		t.Fatalf("dispatched %d", n)
	}
	s := f.metrics.Collect(t)
	code := metricname.AttrProviderCode.String
	for _, tc := range []struct {
		name string
		got  float64
		want float64
	}{
		{"provider errors 130429", s.Sum(metricname.MetricProviderErrors, whatsapp, code("130429")), 1},
		{"provider errors 131026", s.Sum(metricname.MetricProviderErrors, whatsapp, code("131026")), 1},
		{"provider errors", s.Sum(metricname.MetricProviderErrors), 2},
		{"retries", s.Sum(metricname.MetricDispatchRetries, whatsapp), 1},
		{"transitions to failed", s.Sum(metricname.MetricStatusTransitions, whatsapp, status("failed")), 1},
		{"transitions to sent", s.Sum(metricname.MetricStatusTransitions, status("sent")), 0},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	// The retry goes out after its backoff: one more transition, no more
	// errors.
	f.clock.Advance(time.Hour)
	if n := f.dispatch(t); n != 1 {
		t.Fatalf("retry dispatched %d", n)
	}
	s = f.metrics.Collect(t)
	if got := s.Sum(metricname.MetricStatusTransitions, whatsapp, status("sent")); got != 1 {
		t.Errorf("transitions to sent after the retry = %v, want 1", got)
	}
	if got := s.Sum(metricname.MetricProviderErrors); got != 2 {
		t.Errorf("provider errors after the retry = %v, want still 2", got)
	}
}

// TestMetricsOfAWebhookRetry: an endpoint answering 500 then 200 counts one
// retried and one delivered attempt, and the delivered one's lag from the
// event.
func TestMetricsOfAWebhookRetry(t *testing.T) {
	t.Parallel()
	f := setupTelemetry(t, 500, 200)
	f.send(t, "+254712345678")
	f.dispatch(t)
	if n, err := f.svc.DeliverWebhooksDue(f.ctx); err != nil || n != 1 {
		t.Fatalf("first attempt: %d, %v", n, err)
	}
	outcome := metricname.AttrOutcome.String
	s := f.metrics.Collect(t)
	if got := [2]float64{s.Sum(metricname.MetricWebhookDeliveries, outcome("retried")), s.Sum(metricname.MetricWebhookDeliveries, outcome("delivered"))}; got != [2]float64{1, 0} {
		t.Errorf("after a 500: retried, delivered = %v, want [1 0]", got)
	}
	f.clock.Advance(5 * time.Second)
	if n, err := f.svc.DeliverWebhooksDue(f.ctx); err != nil || n != 1 {
		t.Fatalf("retry: %d, %v", n, err)
	}
	s = f.metrics.Collect(t)
	if got := [2]float64{s.Sum(metricname.MetricWebhookDeliveries, outcome("retried")), s.Sum(metricname.MetricWebhookDeliveries, outcome("delivered"))}; got != [2]float64{1, 1} {
		t.Errorf("after the retry: retried, delivered = %v, want [1 1]", got)
	}
	if n, sum := s.Histogram(metricname.MetricWebhookLag); n != 1 || sum != 5 {
		t.Errorf("delivery lag: %d recordings summing %vs, want 1 of 5s", n, sum)
	}
	if got := s.Sum(metricname.MetricWebhookEndpointsDisabled); got != 0 {
		t.Errorf("endpoints disabled = %v, want 0", got)
	}
}

// TestMetricsOfAnEndpointGone: a 410 counts an attempt with the outcome
// endpoint_disabled and a disabled endpoint.
func TestMetricsOfAnEndpointGone(t *testing.T) {
	t.Parallel()
	f := setupTelemetry(t, 410)
	f.send(t, "+254712345678")
	f.dispatch(t)
	if _, err := f.svc.DeliverWebhooksDue(f.ctx); err != nil {
		t.Fatal(err)
	}
	s := f.metrics.Collect(t)
	if got := s.Sum(metricname.MetricWebhookDeliveries, metricname.AttrOutcome.String("endpoint_disabled")); got != 1 {
		t.Errorf("endpoint_disabled attempts = %v, want 1", got)
	}
	if got := s.Sum(metricname.MetricWebhookEndpointsDisabled, metricname.AttrReason.String("gone")); got != 1 {
		t.Errorf("endpoints disabled (gone) = %v, want 1", got)
	}
}

// TestDispatchSpanContinuesTheAcceptTrace: the dispatch span is in the
// trace of the span that accepted the message, a child of it with a link
// to it, and names the message; the provider call is its child.
func TestDispatchSpanContinuesTheAcceptTrace(t *testing.T) {
	t.Parallel()
	f := setupTelemetry(t)
	id := f.send(t, "+254712345678")
	f.dispatch(t)
	byName := map[string]sdktrace.ReadOnlySpan{}
	for _, sp := range f.spans.Ended() {
		byName[sp.Name()] = sp
	}
	accept, dispatch, send := byName["messaging.accept"], byName["messaging.dispatch"], byName["messaging.provider.send"]
	if accept == nil || dispatch == nil || send == nil {
		t.Fatalf("spans ended: %v", byName)
	}
	if dispatch.SpanContext().TraceID() != accept.SpanContext().TraceID() {
		t.Errorf("dispatch trace %s, accept trace %s: not one trace", dispatch.SpanContext().TraceID(), accept.SpanContext().TraceID())
	}
	if dispatch.Parent().SpanID() != accept.SpanContext().SpanID() {
		t.Errorf("dispatch parent %s, want the accept span %s", dispatch.Parent().SpanID(), accept.SpanContext().SpanID())
	}
	if l := dispatch.Links(); len(l) != 1 || l[0].SpanContext.SpanID() != accept.SpanContext().SpanID() {
		t.Errorf("dispatch links %v, want the accept span", l)
	}
	if send.Parent().SpanID() != dispatch.SpanContext().SpanID() {
		t.Errorf("provider call's parent %s, want the dispatch span", send.Parent().SpanID())
	}
	for _, sp := range []sdktrace.ReadOnlySpan{accept, dispatch, send} {
		var got string
		for _, kv := range sp.Attributes() {
			if kv.Key == metricname.AttrMessageID {
				got = kv.Value.AsString()
			}
			if strings.Contains(kv.Value.Emit(), "254712345678") {
				t.Errorf("span %s attribute %s holds the recipient", sp.Name(), kv.Key)
			}
		}
		if got != id {
			t.Errorf("span %s: message id %q, want %q", sp.Name(), got, id)
		}
	}
}

// TestWebhookSpanContinuesTheMessageTrace: the delivery span of a
// message's event is in the trace of the span that accepted the message,
// a child of it with a link to it; a delivery about no message starts a
// trace of its own. The deliveries read no message: the trace context
// travels with the event.
func TestWebhookSpanContinuesTheMessageTrace(t *testing.T) {
	t.Parallel()
	f := setupTelemetry(t, 200)
	id := f.send(t, "+254712345678")
	f.dispatch(t)
	eps, err := f.svc.Workspace("acme").Webhooks.List(f.ctx)
	if err != nil || len(eps) != 1 {
		t.Fatalf("endpoints = %v, %v", eps, err)
	}
	if _, queued, err := f.svc.QueueWebhookEvent(f.ctx, "acme", eps[0].ID, "sms_1", "sms.delivery_report", map[string]string{"x": "y"}); err != nil || !queued {
		t.Fatalf("QueueWebhookEvent = %v, %v", queued, err)
	}
	reads := f.reads.n.Load()
	if _, err := f.svc.DeliverWebhooksDue(f.ctx); err != nil {
		t.Fatal(err)
	}
	if n := f.reads.n.Load() - reads; n != 0 {
		t.Errorf("the deliveries read %d messages, want none", n)
	}
	var accept sdktrace.ReadOnlySpan
	var ofMessage, ofOther []sdktrace.ReadOnlySpan
	for _, sp := range f.spans.Ended() {
		switch sp.Name() {
		case "messaging.accept":
			accept = sp
		case "messaging.webhook.deliver":
			for _, kv := range sp.Attributes() {
				if kv.Key == metricname.AttrMessageID && kv.Value.AsString() == id {
					ofMessage = append(ofMessage, sp)
				} else if kv.Key == metricname.AttrMessageID {
					ofOther = append(ofOther, sp)
				}
			}
		}
	}
	if accept == nil || len(ofMessage) == 0 || len(ofOther) != 1 {
		t.Fatalf("accept span %v, %d deliveries of the message, %d of another subject; want 1, at least 1, 1", accept != nil, len(ofMessage), len(ofOther))
	}
	for _, sp := range ofMessage {
		if sp.SpanContext().TraceID() != accept.SpanContext().TraceID() || sp.Parent().SpanID() != accept.SpanContext().SpanID() {
			t.Errorf("delivery span: trace %s, parent %s; want the accept span's trace %s and the accept span %s",
				sp.SpanContext().TraceID(), sp.Parent().SpanID(), accept.SpanContext().TraceID(), accept.SpanContext().SpanID())
		}
		if l := sp.Links(); len(l) != 1 || l[0].SpanContext.SpanID() != accept.SpanContext().SpanID() {
			t.Errorf("delivery span links %v, want the accept span", l)
		}
	}
	if sp := ofOther[0]; sp.Parent().IsValid() || len(sp.Links()) != 0 || sp.SpanContext().TraceID() == accept.SpanContext().TraceID() {
		t.Errorf("the delivery about no message has parent %v and links %v; want a trace of its own", sp.Parent(), sp.Links())
	}
}
