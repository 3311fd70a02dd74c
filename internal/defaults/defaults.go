// Package defaults fills in the documented defaults of the library's option
// structs, one rule for every constructor: a nil *Options means all
// defaults, and a zero or negative numeric field takes its default.
package defaults

import (
	"log/slog"
	"time"
)

// Of returns a copy of *opts, or the zero T when opts is nil, so that a
// constructor fills in defaults without changing its caller's struct.
func Of[T any](opts *T) T {
	if opts == nil {
		var zero T
		return zero
	}
	return *opts
}

// Positive sets *field to def unless it is positive.
func Positive[T ~int | ~int64 | ~float64](field *T, def T) {
	if *field <= 0 {
		*field = def
	}
}

// Clock returns c, or time.Now when c is nil.
func Clock(c func() time.Time) func() time.Time {
	if c == nil {
		return time.Now
	}
	return c
}

// Logger returns l, or a logger that discards everything when l is nil.
func Logger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}
