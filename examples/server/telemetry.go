package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"net/url"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// telemetryConfig is what the flags say about metrics and traces.
type telemetryConfig struct {
	// metricsAddr is the internal listener of /metrics and /debug/pprof/;
	// empty: none, and no metrics are recorded.
	metricsAddr string
	// otlpEndpoint is the OTLP/HTTP collector's base URL (as the
	// standard OTEL_EXPORTER_OTLP_ENDPOINT: /v1/traces is appended);
	// empty: no traces.
	otlpEndpoint string
}

// telemetry is the server's meter and tracer providers (nil when off) and
// the internal listener.
type telemetry struct {
	mp      metric.MeterProvider
	tp      trace.TracerProvider
	metrics *http.Server
	ln      net.Listener
	close   []func(context.Context) error
}

// serverResource names the server in every metric and span.
func serverResource() *resource.Resource {
	return resource.NewSchemaless(attribute.String("service.name", "messaging-server"))
}

// otlpTracesURL returns the traces URL of an OTLP/HTTP base URL: its path
// with /v1/traces appended, as the OpenTelemetry specification reads
// OTEL_EXPORTER_OTLP_ENDPOINT.
func otlpTracesURL(base string) (string, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("-otlp-endpoint: %q is not an http:// or https:// URL", base)
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/v1/traces"
	return u.String(), nil
}

// startTelemetry sets up what c asks for: a Prometheus exporter on a
// registry of its own (never the global default) served with pprof on
// c.metricsAddr, and an OTLP trace exporter. The listener is open when it
// returns, so a bad address fails the start.
func startTelemetry(ctx context.Context, c *telemetryConfig, log *slog.Logger) (*telemetry, error) {
	t := &telemetry{}
	if c.otlpEndpoint != "" {
		u, err := otlpTracesURL(c.otlpEndpoint)
		if err != nil {
			return nil, err
		}
		exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(u))
		if err != nil {
			return nil, fmt.Errorf("-otlp-endpoint: %w", err)
		}
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(serverResource()))
		t.tp = tp
		t.close = append(t.close, tp.Shutdown)
	}
	if c.metricsAddr == "" {
		return t, nil
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	exp, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		return nil, err
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp), sdkmetric.WithResource(serverResource()))
	t.mp = mp
	t.close = append(t.close, mp.Shutdown)
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelError)}))
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	ln, err := net.Listen("tcp", c.metricsAddr)
	if err != nil {
		return nil, fmt.Errorf("-metrics-addr: %w", err)
	}
	t.ln = ln
	// No WriteTimeout: a CPU profile streams for as long as it was asked.
	t.metrics = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 120 * time.Second}
	go func() {
		if err := t.metrics.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics listener stopped", "err", err)
		}
	}()
	return t, nil
}

// shutdown closes the internal listener and flushes the exporters.
func (t *telemetry) shutdown(ctx context.Context) error {
	var errs []error
	if t.metrics != nil {
		errs = append(errs, t.metrics.Shutdown(ctx))
	}
	for _, f := range t.close {
		errs = append(errs, f(ctx))
	}
	return errors.Join(errs...)
}
