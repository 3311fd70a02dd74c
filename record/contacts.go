package record

import "time"

// Contact sources.
const (
	// SourceAPI is the source of contacts created through the API.
	SourceAPI = "api"
)

// Lifecycle labels a contact may carry. The spec leaves the set open; the
// service accepts these (or empty for none).
const (
	LifecycleSubscriber  = "subscriber"
	LifecycleLead        = "lead"
	LifecycleOpportunity = "opportunity"
	LifecycleCustomer    = "customer"
	LifecycleChurned     = "churned"
	LifecycleOther       = "other"
)

// Lifecycles lists the accepted lifecycle labels.
func Lifecycles() []string {
	return []string{LifecycleSubscriber, LifecycleLead, LifecycleOpportunity, LifecycleCustomer, LifecycleChurned, LifecycleOther}
}

// Contact field limits, in characters.
const (
	MaxNameLen    = 100
	MaxCompanyLen = 200
	MaxNotesLen   = 10000
	MaxEmailLen   = 254
	MaxTags       = 50
	MaxTagLen     = 64
	MaxSearchLen  = 100
	MaxPageSize   = 100
	// MaxPage is the highest page number accepted.
	MaxPage = 10_000_000
)

// Contact is a contact record. Package httpapi writes it with the
// spec's member names.
type Contact struct {
	ID          string
	WorkspaceID string
	FirstName   string
	LastName    string
	// FullName is derived: FirstName and LastName joined by a space.
	FullName string
	// Phone is in E.164 format, or empty.
	Phone string
	// Email is as given; EmailKey is its lower-cased form, used for
	// deduplication and search.
	Email     string
	EmailKey  string
	Company   string
	JobTitle  string
	Website   string
	Notes     string
	Source    string
	Tags      []string
	Lifecycle string
	// OptedOut holds, for each channel on which the contact's phone opted
	// out (replied STOP), when it did. The service fills it from the
	// suppression list as it reads the contact; stores ignore it.
	OptedOut map[string]time.Time
	// Version counts updates; it guards partial updates against lost writes.
	Version   int64
	CreatedAt time.Time
	UpdatedAt time.Time
}
