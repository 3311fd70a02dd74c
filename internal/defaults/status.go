package defaults

import "time"

// Bounds of the reports kept for provider message ids not known yet.
const (
	// DefaultPendingReportRetention is the default
	// Options.PendingReportRetention.
	DefaultPendingReportRetention = 24 * time.Hour
	// MaxPendingReports is the most reports kept for one provider message
	// id not known yet; later ones are dropped. A message has four
	// statuses to report, so this leaves room for repeated reports.
	MaxPendingReports = 8
)
