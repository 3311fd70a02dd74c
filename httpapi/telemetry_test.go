package httpapi_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/ujumbe/messaging/internal/metricname"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/httpapi"
	"github.com/ujumbe/messaging/internal/metrictest"
	"github.com/ujumbe/messaging/store/memstore"
)

// TestRequestMetricsUseRoutePatterns: each request is one recording of
// http.server.request.duration under its route pattern (never the raw
// path with its id), method and status; a path with no endpoint has no
// route; the send is one accepted message; no attribute holds the
// recipient, the text or the key.
func TestRequestMetricsUseRoutePatterns(t *testing.T) {
	t.Parallel()
	rd := metrictest.New(t)
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	e := setupOn(t, memstore.New(), &messaging.Options{MeterProvider: rd.Provider, TracerProvider: tp}, func(o *httpapi.Options) {
		o.MeterProvider, o.TracerProvider = rd.Provider, tp
	})
	key := e.A.Full
	// The fixtures sent messages: the send below is counted from here.
	before := rd.Collect(t).Sum(metricname.MetricMessagesAccepted)
	res := e.do(t, request{method: "POST", path: "/v1/messages", key: key,
		body: `{"channel":"whatsapp","to":"+254733999888","type":"text","text":"Secret plans"}`})
	if res.status != http.StatusCreated {
		t.Fatalf("send: %d %s", res.status, res.body)
	}
	id := res.object(t)["message_id"].(string)
	if r := e.do(t, request{method: "GET", path: "/v1/messages/" + id, key: key}); r.status != 200 {
		t.Fatalf("get: %d", r.status)
	}
	if r := e.do(t, request{method: "GET", path: "/v1/messages/msg_nope", key: key}); r.status != 404 {
		t.Fatalf("get unknown: %d", r.status)
	}
	if r := e.do(t, request{method: "GET", path: "/nowhere/254733999888"}); r.status != 404 {
		t.Fatalf("no endpoint: %d", r.status)
	}
	if r := e.doRaw(request{method: "PURGE", path: "/v1/messages", key: key}); r.status != 405 {
		t.Fatalf("PURGE: %d", r.status)
	}
	s := rd.Collect(t)
	route, method, code := attribute.Key("http.route").String, attribute.Key("http.request.method").String, attribute.Key("http.response.status_code").Int
	for _, tc := range []struct {
		name string
		kv   []attribute.KeyValue
		want uint64
	}{
		{"POST /v1/messages 201", []attribute.KeyValue{route("/v1/messages"), method("POST"), code(201)}, 1},
		{"GET /v1/messages/{id} 200", []attribute.KeyValue{route("/v1/messages/{id}"), method("GET"), code(200)}, 1},
		{"GET /v1/messages/{id} 404", []attribute.KeyValue{route("/v1/messages/{id}"), method("GET"), code(404)}, 1},
		{"an unknown method is _OTHER", []attribute.KeyValue{route("/v1/messages"), method("_OTHER"), code(405)}, 1},
		{"every request", nil, 5},
	} {
		if n, _ := s.Histogram(httpapi.MetricRequestDuration, tc.kv...); n != tc.want {
			t.Errorf("%s: %d requests recorded, want %d", tc.name, n, tc.want)
		}
	}
	all := s.AllAttributes()
	for _, bad := range []string{id, "254733999888", "Secret plans", key, "/nowhere", "PURGE"} {
		if strings.Contains(all, bad) {
			t.Errorf("a metric attribute holds %q:\n%s", bad, all)
		}
	}
	if got := s.Sum(metricname.MetricMessagesAccepted) - before; got != 1 {
		t.Errorf("accepted by the send = %v, want 1", got)
	}
	// The send's server span is the parent of the store write that
	// accepted the message.
	var server, accept sdktrace.ReadOnlySpan
	for _, sp := range spans.Ended() {
		switch sp.Name() {
		case "POST /v1/messages":
			server = sp
		case "messaging.accept":
			if accept == nil || accept.EndTime().Before(sp.EndTime()) {
				accept = sp // the last one: the fixtures' come first
			}
		}
	}
	if server == nil || accept == nil {
		t.Fatalf("spans: server %v, accept %v", server, accept)
	}
	if accept.Parent().SpanID() != server.SpanContext().SpanID() {
		t.Errorf("the accept span's parent is %s, want the request's span %s", accept.Parent().SpanID(), server.SpanContext().SpanID())
	}
}

// TestRequestSpanJoinsTheCallersTrace: with a propagator, a request
// carrying a W3C traceparent gets a server span in the caller's trace, and
// without one the header is ignored. The span carries the route, the
// method and the status.
func TestRequestSpanJoinsTheCallersTrace(t *testing.T) {
	t.Parallel()
	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	for _, withProp := range []bool{true, false} {
		spans := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
		e := setupOn(t, memstore.New(), nil, func(o *httpapi.Options) {
			o.TracerProvider = tp
			if withProp {
				o.Propagator = propagation.TraceContext{}
			}
		})
		e.do(t, request{method: "GET", path: "/v1/openapi.json", headers: hdr("traceparent", "00-"+traceID+"-"+parentID+"-01")})
		ended := spans.Ended()
		if len(ended) != 1 {
			t.Fatalf("propagator %v: %d spans", withProp, len(ended))
		}
		sp := ended[0]
		joined := sp.SpanContext().TraceID().String() == traceID && sp.Parent().SpanID().String() == parentID
		if joined != withProp {
			t.Errorf("propagator %v: span in trace %s with parent %s", withProp, sp.SpanContext().TraceID(), sp.Parent().SpanID())
		}
		if sp.Name() != "GET /v1/openapi.json" {
			t.Errorf("span name %q", sp.Name())
		}
		want := []attribute.KeyValue{attribute.String("http.route", "/v1/openapi.json"),
			attribute.String("http.request.method", "GET"), attribute.Int("http.response.status_code", 200)}
		for _, kv := range want {
			if !slices.Contains(sp.Attributes(), kv) {
				t.Errorf("span attributes %v: no %v", sp.Attributes(), kv)
			}
		}
	}
}
