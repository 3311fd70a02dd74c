package httpapi

// The canonical forms (textproto.CanonicalMIMEHeaderKey) of the header
// names read or written on every request, for indexing http.Header
// directly: the same entries as Get, Values and Set with the names as
// documented (in the comments), without canonicalizing the name, an
// allocation, on every call. TestHeaderNamesCanonical checks them.
const (
	hdrCorrelationID      = "X-Correlation-Id"      // X-Correlation-ID
	hdrAPIKey             = "X-Api-Key"             // X-API-Key
	hdrRateLimitLimit     = "X-Ratelimit-Limit"     // X-RateLimit-Limit
	hdrRateLimitRemaining = "X-Ratelimit-Remaining" // X-RateLimit-Remaining
)
