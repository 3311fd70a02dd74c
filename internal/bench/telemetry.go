package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
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
//
// The two sides differ by a few microseconds of CPU per request, far less
// than the drift of a shared machine over seconds, so both servers run at
// once (each on its own database) and are loaded in turn, in short
// windows alternating which goes first; each pair of windows is one
// repeat, and the ratio is taken per pair.

func runTelemetry(ctx context.Context, c *config) ([]*row, error) {
	d := pick(c, 500*time.Millisecond, 300*time.Millisecond)
	pairs := pick(c, 8*c.repeat, c.repeat)
	r := &row{figure: "7", name: "accept with instrumentation on, POST /v1/messages, 32 keep-alive clients", unit: "req/s", higherBetter: true, goal: 0.95,
		baselineName: "the same accept with instrumentation off (no MeterProvider or TracerProvider: the no-op default), loaded in turn with the product in windows of 0.5 s"}
	var urls [2]string // product, baseline
	for i, instrumented := range []bool{true, false} {
		if c.side == "product" && !instrumented || c.side == "baseline" && instrumented {
			continue
		}
		dir, err := os.MkdirTemp(c.workDir, "telemetry-")
		if err != nil {
			return nil, err
		}
		url, stop, err := instrumentedServer(ctx, dir, instrumented)
		if err != nil {
			return nil, err
		}
		defer stop()
		urls[i] = url
	}
	client := newClient(httpClients)
	defer client.CloseIdleConnections()
	window := 0
	load := func(url string, d time.Duration) (float64, error) {
		window++
		win := window
		return loop(ctx, httpClients, d, func(ctx context.Context, w, i int) error {
			body := fmt.Sprintf(`{"channel":"whatsapp","to":"%s","type":"text","text":"Your order A-1042 has shipped.","idempotency_key":"order-%d-%d-%d"}`,
				phone(w*1_000_000+i), win, w, i)
			status, _, err := do(ctx, client, "POST", url, body)
			if err != nil {
				return err
			}
			if status != http.StatusCreated {
				return fmt.Errorf("POST /v1/messages: status %d", status)
			}
			return nil
		})
	}
	for _, u := range urls {
		if u != "" {
			if _, err := load(u, d/2); err != nil { // warm-up
				return nil, err
			}
		}
	}
	for i := range pairs {
		for _, product := range c.sides(i) {
			u := urls[1]
			if product {
				u = urls[0]
			}
			v, err := load(u, d)
			if err != nil {
				return nil, err
			}
			if product {
				r.product = append(r.product, v)
			} else {
				r.baseline = append(r.baseline, v)
			}
			c.logf("telemetry product=%v: %.0f req/s", product, v)
		}
	}
	return []*row{r}, nil
}

// discardSpans is a span processor that drops every span when it ends.
type discardSpans struct{}

func (discardSpans) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (discardSpans) OnEnd(sdktrace.ReadOnlySpan)                     {}
func (discardSpans) Shutdown(context.Context) error                  { return nil }
func (discardSpans) ForceFlush(context.Context) error                { return nil }

// instrumentedServer serves the HTTP accept on a loopback port, on a new
// database in dir, with the SDK providers (instrumented true) or without
// any, and returns the URL of POST /v1/messages and a function stopping
// it.
func instrumentedServer(ctx context.Context, dir string, instrumented bool) (string, func(), error) {
	so := &messaging.Options{}
	ho := &httpapi.Options{RateLimits: map[string]int{"POST /v1/messages": 1 << 30}}
	var closers []func()
	if instrumented {
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
		tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithSpanProcessor(discardSpans{}))
		closers = append(closers, func() { _ = mp.Shutdown(context.Background()); _ = tp.Shutdown(context.Background()) })
		so.MeterProvider, so.TracerProvider = mp, tp
		ho.MeterProvider, ho.TracerProvider = mp, tp
	}
	st, svc, err := newStoreService(ctx, dir, noopProvider{}, so)
	if err != nil {
		return "", nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = st.Close()
		return "", nil, err
	}
	srv := &http.Server{Handler: httpapi.New(svc, ho), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	stop := func() {
		_ = srv.Close()
		_ = st.Close()
		for _, f := range closers {
			f()
		}
	}
	return "http://" + ln.Addr().String() + "/v1/messages", stop, nil
}
