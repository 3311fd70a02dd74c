// Package metrictest reads the metrics recorded through an OpenTelemetry
// SDK ManualReader, for tests: the sum of a counter's points, a
// histogram's count and sum, a gauge's value, each over the points whose
// attributes hold the given ones.
package metrictest

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// Reader is a ManualReader and the MeterProvider recording into it.
type Reader struct {
	*sdkmetric.ManualReader
	Provider *sdkmetric.MeterProvider
}

// New returns a Reader; its provider is shut down when the test ends.
func New(t testing.TB) *Reader {
	t.Helper()
	r := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	return &Reader{ManualReader: r, Provider: mp}
}

// Snapshot is one collection of every metric.
type Snapshot struct {
	metrics map[string]metricdata.Metrics
}

// Collect reads every metric now.
func (r *Reader) Collect(t testing.TB) *Snapshot {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.ManualReader.Collect(context.Background(), &rm); err != nil {
		t.Fatalf("collecting metrics: %v", err)
	}
	s := &Snapshot{metrics: map[string]metricdata.Metrics{}}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			s.metrics[m.Name] = m
		}
	}
	return s
}

// Names returns the names of the metrics collected, sorted.
func (s *Snapshot) Names() []string {
	var out []string
	for n := range s.metrics {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func holds(set attribute.Set, want []attribute.KeyValue) bool {
	for _, kv := range want {
		v, ok := set.Value(kv.Key)
		if !ok || v != kv.Value {
			return false
		}
	}
	return true
}

// Sum returns the sum of the points of the counter (or up-down counter)
// name whose attributes hold want; 0 when it has none.
func (s *Snapshot) Sum(name string, want ...attribute.KeyValue) float64 {
	var total float64
	switch d := s.metrics[name].Data.(type) {
	case metricdata.Sum[int64]:
		for _, p := range d.DataPoints {
			if holds(p.Attributes, want) {
				total += float64(p.Value)
			}
		}
	case metricdata.Sum[float64]:
		for _, p := range d.DataPoints {
			if holds(p.Attributes, want) {
				total += p.Value
			}
		}
	}
	return total
}

// Gauge returns the value of the gauge name at the point whose attributes
// hold want, and whether there is one.
func (s *Snapshot) Gauge(name string, want ...attribute.KeyValue) (float64, bool) {
	switch d := s.metrics[name].Data.(type) {
	case metricdata.Gauge[int64]:
		for _, p := range d.DataPoints {
			if holds(p.Attributes, want) {
				return float64(p.Value), true
			}
		}
	case metricdata.Gauge[float64]:
		for _, p := range d.DataPoints {
			if holds(p.Attributes, want) {
				return p.Value, true
			}
		}
	}
	return 0, false
}

// Histogram returns the count and the sum of the recordings of the
// histogram name whose attributes hold want.
func (s *Snapshot) Histogram(name string, want ...attribute.KeyValue) (count uint64, sum float64) {
	if d, ok := s.metrics[name].Data.(metricdata.Histogram[float64]); ok {
		for _, p := range d.DataPoints {
			if holds(p.Attributes, want) {
				count += p.Count
				sum += p.Sum
			}
		}
	}
	return count, sum
}

// Attributes returns every attribute of every point of name, as
// "key=value" strings, to check what they never hold.
func (s *Snapshot) Attributes(name string) []string {
	var out []string
	add := func(set attribute.Set) {
		for _, kv := range set.ToSlice() {
			out = append(out, fmt.Sprintf("%s=%s", kv.Key, kv.Value.Emit()))
		}
	}
	switch d := s.metrics[name].Data.(type) {
	case metricdata.Sum[int64]:
		for _, p := range d.DataPoints {
			add(p.Attributes)
		}
	case metricdata.Sum[float64]:
		for _, p := range d.DataPoints {
			add(p.Attributes)
		}
	case metricdata.Histogram[float64]:
		for _, p := range d.DataPoints {
			add(p.Attributes)
		}
	case metricdata.Gauge[int64]:
		for _, p := range d.DataPoints {
			add(p.Attributes)
		}
	case metricdata.Gauge[float64]:
		for _, p := range d.DataPoints {
			add(p.Attributes)
		}
	}
	return out
}

// AllAttributes returns the attributes of every metric (see Attributes),
// joined, to search for what must never appear.
func (s *Snapshot) AllAttributes() string {
	var b strings.Builder
	for _, n := range s.Names() {
		b.WriteString(n + ": " + strings.Join(s.Attributes(n), " ") + "\n")
	}
	return b.String()
}
