package defaults

import "time"

// Session limits.
const (
	// DefaultSessionTTL is the lifetime of a session when
	// SessionParams.TTL is 0.
	DefaultSessionTTL = 12 * time.Hour
	// MinSessionTTL is the shortest SessionParams.TTL.
	MinSessionTTL = time.Minute
	// MaxSessionTTL is the longest SessionParams.TTL: 30 days.
	MaxSessionTTL = 30 * 24 * time.Hour
)
