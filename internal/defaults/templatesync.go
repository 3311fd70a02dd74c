package defaults

import "time"

// Defaults of TemplateSyncOptions.
const (
	DefaultTemplateSyncEvery = time.Hour
	DefaultTemplateSyncLease = 5 * time.Minute
)
