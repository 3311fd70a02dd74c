// Package spans holds the handling of OpenTelemetry spans that the root
// package and package sms share: a span may be nil when no tracer is set.
package spans

import (
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Recording reports whether span records attributes (false for nil).
func Recording(span trace.Span) bool { return span != nil && span.IsRecording() }

// End ends span (nil: nothing), marking it failed with err when err is not
// nil.
func End(span trace.Span, err error) {
	if span == nil {
		return
	}
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}
