package main

import (
	"math"
	"testing"
	"time"
)

func TestMedianWorstPercentile(t *testing.T) {
	for _, tc := range []struct {
		xs          []float64
		median      float64
		worstHigher float64
		worstLower  float64
	}{
		{[]float64{3, 1, 2}, 2, 1, 3},
		{[]float64{4, 1, 3, 2}, 2.5, 1, 4},
		{[]float64{7}, 7, 7, 7},
	} {
		if got := median(tc.xs); got != tc.median {
			t.Errorf("median(%v) = %v, want %v", tc.xs, got, tc.median)
		}
		if got := worst(tc.xs, true); got != tc.worstHigher {
			t.Errorf("worst(%v, higher is better) = %v, want %v", tc.xs, got, tc.worstHigher)
		}
		if got := worst(tc.xs, false); got != tc.worstLower {
			t.Errorf("worst(%v, lower is better) = %v, want %v", tc.xs, got, tc.worstLower)
		}
	}
	if !math.IsNaN(median(nil)) {
		t.Error("median of nothing is a number")
	}
	var ds []time.Duration
	for i := 1; i <= 100; i++ {
		ds = append(ds, time.Duration(101-i)*time.Millisecond)
	}
	if p50, p99 := percentile(ds, 50), percentile(ds, 99); p50 != 50*time.Millisecond || p99 != 99*time.Millisecond {
		t.Errorf("p50 %v p99 %v, want 50ms and 99ms", p50, p99)
	}
}

func TestRatiosAreOrientedSoThatHigherIsBetter(t *testing.T) {
	throughput := &row{higherBetter: true, product: []float64{200, 300}, baseline: []float64{100, 100}, goal: 2.5}
	if got := median(throughput.ratios()); got != 2.5 {
		t.Errorf("throughput ratio %v, want 2.5", got)
	}
	if _, ok := throughput.status(); !ok {
		t.Error("a ratio at its goal is not met")
	}
	latency := &row{product: []float64{4}, baseline: []float64{1}, goal: 0.5,
		absolute: func(v float64) (bool, string) { return v <= 5, "p50 <= 5 ms" }}
	if got := median(latency.ratios()); got != 0.25 {
		t.Errorf("latency ratio %v, want 0.25", got)
	}
	if goal, ok := latency.status(); ok || goal != "ratio >= 0.5, p50 <= 5 ms" {
		t.Errorf("status = %q, %v; want the ratio goal missed", goal, ok)
	}
}

func TestFormat(t *testing.T) {
	for v, want := range map[float64]string{12345.4: "12,345 msg/s", 123.4: "123 msg/s", 12.34: "12.3 msg/s", 1.234: "1.23 msg/s"} {
		if got := format(v, "msg/s"); got != want {
			t.Errorf("format(%v) = %q, want %q", v, got, want)
		}
	}
}
