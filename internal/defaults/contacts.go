package defaults

// Contact field limits, in characters.
const (
	// DefaultPageSize is the page size when none is given.
	DefaultPageSize = 25
)
