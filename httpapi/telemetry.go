package httpapi

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// InstrumentationName is the name of the handler's meter and tracer.
const InstrumentationName = "github.com/ujumbe/messaging/httpapi"

// MetricRequestDuration is the OpenTelemetry semantic convention's HTTP
// server histogram: the duration of each request, in seconds, by
// http.request.method, http.route (the route pattern, never the path) and
// http.response.status_code. Its count is the number of requests.
const MetricRequestDuration = "http.server.request.duration"

// requestBuckets returns the semantic convention's advised boundaries.
func requestBuckets() []float64 {
	return []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}
}

// httpTelemetry holds the handler's instrument and tracer (nil when no
// TracerProvider was given: no span is started).
type httpTelemetry struct {
	tracer   trace.Tracer
	duration metric.Float64Histogram
	// propagator, when set, extracts the caller's trace context.
	propagator propagation.TextMapPropagator
	// serverSpan is the span kind of a request, pre-built.
	serverSpan []trace.SpanStartOption

	mu    sync.RWMutex
	attrs map[routeKey]requestAttrs
}

// requestAttrs are the pre-built attributes of one routeKey: as the
// duration's record option and as a span's attributes.
type requestAttrs struct {
	record []metric.RecordOption
	span   []attribute.KeyValue
}

// routeKey identifies a set of request attributes.
type routeKey struct {
	method, route string
	status        int
}

func newHTTPTelemetry(mp metric.MeterProvider, tp trace.TracerProvider) *httpTelemetry {
	if mp == nil {
		mp = metricnoop.NewMeterProvider()
	}
	t := &httpTelemetry{attrs: map[routeKey]requestAttrs{},
		serverSpan: []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindServer)}}
	if tp != nil {
		t.tracer = tp.Tracer(InstrumentationName)
	}
	d, err := mp.Meter(InstrumentationName).Float64Histogram(MetricRequestDuration, metric.WithUnit("s"),
		metric.WithDescription("Duration of HTTP server requests."), metric.WithExplicitBucketBoundaries(requestBuckets()...))
	if err != nil {
		// Only an invalid name or unit fails, and these are constants.
		d, _ = metricnoop.NewMeterProvider().Meter(InstrumentationName).Float64Histogram(MetricRequestDuration)
	}
	t.duration = d
	return t
}

// methodOf returns the method as recorded: a standard method by name,
// any other "_OTHER", as the semantic conventions ask, so a client cannot
// grow the label set.
func methodOf(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete,
		http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return "_OTHER"
}

// routeOf returns the route of a ServeMux pattern: its path, without a
// method or host; "" for the catch-all "/" of paths with no endpoint.
func routeOf(pattern string) string {
	if i := strings.IndexByte(pattern, ' '); i >= 0 {
		pattern = strings.TrimLeft(pattern[i+1:], " ")
	}
	if i := strings.IndexByte(pattern, '/'); i > 0 {
		pattern = pattern[i:] // a host
	}
	if pattern == "/" {
		return ""
	}
	return pattern
}

// attributes returns the pre-built attributes of a request. The span's
// list is shared: it is only read.
func (t *httpTelemetry) attributes(method, route string, status int) requestAttrs {
	k := routeKey{method, route, status}
	t.mu.RLock()
	a, ok := t.attrs[k]
	t.mu.RUnlock()
	if ok {
		return a
	}
	kv := []attribute.KeyValue{attribute.String("http.request.method", method), attribute.Int("http.response.status_code", status)}
	if route != "" {
		kv = append(kv, attribute.String("http.route", route))
	}
	a = requestAttrs{record: []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(kv...))}, span: kv}
	t.mu.Lock()
	t.attrs[k] = a
	t.mu.Unlock()
	return a
}

// startRequest starts the span of a request when tracing is on, and
// returns the request's context with it.
func (t *httpTelemetry) startRequest(r *http.Request) (context.Context, trace.Span) {
	ctx := r.Context()
	if t.tracer == nil {
		return ctx, nil
	}
	if t.propagator != nil {
		ctx = t.propagator.Extract(ctx, propagation.HeaderCarrier(r.Header))
	}
	return t.tracer.Start(ctx, methodOf(r.Method), t.serverSpan...)
}

// endRequest records a served request: its duration, and its span's name
// ("METHOD route") and attributes.
func (t *httpTelemetry) endRequest(ctx context.Context, span trace.Span, r *http.Request, status int, start time.Time) {
	method, route := methodOf(r.Method), routeOf(r.Pattern)
	a := t.attributes(method, route, status)
	t.duration.Record(ctx, time.Since(start).Seconds(), a.record...)
	if span == nil {
		return
	}
	if span.IsRecording() {
		if route != "" {
			span.SetName(method + " " + route)
		}
		// One SetAttributes call: each grows the span's attribute list.
		span.SetAttributes(a.span...)
		if status >= 500 {
			span.SetStatus(codes.Error, http.StatusText(status))
		}
	}
	span.End()
}
