package spans

import (
	"context"
	"errors"
	"testing"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

func TestEnd(t *testing.T) {
	End(nil, errors.New("ignored")) // a nil span is no span
	if Recording(nil) {
		t.Error("Recording(nil) is true")
	}
	rec := tracetest.NewSpanRecorder()
	tracer := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)).Tracer("test")
	_, ok := tracer.Start(context.Background(), "ok")
	if !Recording(ok) {
		t.Error("Recording of a sampled span is false")
	}
	End(ok, nil)
	_, failed := tracer.Start(context.Background(), "failed")
	End(failed, errors.New("boom"))
	ended := rec.Ended()
	if len(ended) != 2 {
		t.Fatalf("%d spans ended, want 2", len(ended))
	}
	if st := ended[0].Status(); st.Code != codes.Unset {
		t.Errorf("span without error has status %v", st)
	}
	if st := ended[1].Status(); st.Code != codes.Error || st.Description != "boom" {
		t.Errorf("failed span has status %v", st)
	}
	if ev := ended[1].Events(); len(ev) != 1 || ev[0].Name != "exception" {
		t.Errorf("failed span has events %v, want the recorded error", ev)
	}
}
