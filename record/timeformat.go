package record

import "time"

// TimeFormat is the layout of every timestamp the library writes as text:
// the REST API's resources and the webhook payloads. It is RFC 3339 in UTC
// with exactly three fractional digits (milliseconds) and a Z, so that one
// instant always reads the same, byte for byte, wherever it appears.
const TimeFormat = "2006-01-02T15:04:05.000Z"

// FormatTime formats t in UTC with TimeFormat. Digits below the
// millisecond are dropped (truncated, not rounded).
func FormatTime(t time.Time) string { return t.UTC().Format(TimeFormat) }
