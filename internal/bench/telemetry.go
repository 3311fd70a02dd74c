package main

import (
	"context"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/httpapi"
)

// Figure 7: the cost of instrumentation on the accept path. Both sides are
// figure 2's product (POST /v1/messages through httpapi on sqlitestore,
// 32 keep-alive clients). The product has instrumentation on: an SDK
// MeterProvider with a ManualReader (every measurement aggregated, never
// exported) and an SDK TracerProvider sampling every span into a processor
// that discards it (every span built, never exported), given to the
// service and the handler. The baseline has none: the no-op default.

func runTelemetry(ctx context.Context, c *config) ([]*row, error) {
	d := pick(c, 2*time.Second, 300*time.Millisecond)
	r := &row{figure: "7", name: "accept with instrumentation on, POST /v1/messages, 32 keep-alive clients", unit: "req/s", higherBetter: true, goal: 0.95,
		baselineName: "the same accept with instrumentation off (no MeterProvider or TracerProvider: the no-op default)"}
	err := c.measure(r, "telemetry", func(dir string, product bool) (float64, error) {
		return instrumentedAccept(ctx, dir, d, product)
	})
	if err != nil {
		return nil, err
	}
	return []*row{r}, nil
}

// discardSpans is a span processor that drops every span when it ends.
type discardSpans struct{}

func (discardSpans) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (discardSpans) OnEnd(sdktrace.ReadOnlySpan)                     {}
func (discardSpans) Shutdown(context.Context) error                  { return nil }
func (discardSpans) ForceFlush(context.Context) error                { return nil }

// instrumentedAccept measures the HTTP accept with the SDK providers
// (instrumented true) or without any.
func instrumentedAccept(ctx context.Context, dir string, d time.Duration, instrumented bool) (float64, error) {
	so := &messaging.Options{}
	ho := &httpapi.Options{RateLimits: map[string]int{"POST /v1/messages": 1 << 30}}
	if instrumented {
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
		defer mp.Shutdown(context.Background())
		tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithSpanProcessor(discardSpans{}))
		defer tp.Shutdown(context.Background())
		so.MeterProvider, so.TracerProvider = mp, tp
		ho.MeterProvider, ho.TracerProvider = mp, tp
	}
	st, svc, err := newStoreService(ctx, dir, noopProvider{}, so)
	if err != nil {
		return 0, err
	}
	defer st.Close()
	return serveAndLoad(ctx, httpapi.New(svc, ho), d)
}
