package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ujumbe/messaging/record"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/httpapi"
	"github.com/ujumbe/messaging/provider/fakeprovider"
)

// discardSpans is a span processor that drops every span when it ends.
type discardSpans struct{}

func (discardSpans) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (discardSpans) OnEnd(sdktrace.ReadOnlySpan)                     {}
func (discardSpans) Shutdown(context.Context) error                  { return nil }
func (discardSpans) ForceFlush(context.Context) error                { return nil }

// BenchmarkAccept is the accept path of figure 2 of internal/bench
// in-process, for profiling: POST /v1/messages through the handler on
// sqlitestore with instrumentation on (SDK meter and tracer providers,
// every span sampled and discarded), 16 goroutines, every request a new
// recipient and idempotency key. Besides the wall time per request it
// reports cpu-ns/op, the process's CPU time (user and system, the
// background writer included) per request.
func BenchmarkAccept(b *testing.B) {
	ctx := context.Background()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithSpanProcessor(discardSpans{}))
	b.Cleanup(func() { _ = mp.Shutdown(ctx); _ = tp.Shutdown(ctx) })
	svc, err := messaging.New(openSQLite(b), fakeprovider.New(), &messaging.Options{MeterProvider: mp, TracerProvider: tp})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := svc.CreateWorkspace(ctx, &messaging.CreateWorkspaceParams{ID: "ws_bench", Name: "Bench", Channels: svc.Channels()}); err != nil {
		b.Fatal(err)
	}
	const key = "msk_bench_0123456789abcdef0123456789abcdef"
	if _, _, err := svc.Workspace("ws_bench").APIKeys.Create(ctx, &messaging.KeyCreateParams{Scopes: record.AllScopes(), Key: key}); err != nil {
		b.Fatal(err)
	}
	h := httpapi.New(svc, &httpapi.Options{RateLimits: map[string]int{"POST /v1/messages": 1 << 30},
		MeterProvider: mp, TracerProvider: tp})
	var seq atomic.Int64
	b.SetParallelism(8)
	b.ReportAllocs()
	cpu0 := processCPU(b)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := seq.Add(1)
			body := fmt.Sprintf(`{"channel":"whatsapp","to":"+2547%d%07d","type":"text","text":"Your order A-1042 has shipped.","idempotency_key":"order-%d"}`,
				i/10_000_000%3, i%10_000_000, i)
			req := httptest.NewRequest("POST", "/v1/messages", strings.NewReader(body))
			req.Header.Set("X-API-Key", key)
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != http.StatusCreated {
				b.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
}

// processCPU returns the CPU time (user and system) the process has used:
// on a shared machine it drifts less than the wall time per request.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
