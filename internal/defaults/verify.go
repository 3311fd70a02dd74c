package defaults

import "time"

// Defaults of ConnectionCheckOptions.
const (
	DefaultConnectionCheckEvery = time.Minute
	DefaultConnectionRecheck    = 6 * time.Hour
	DefaultVerifyTimeout        = 20 * time.Second
)
