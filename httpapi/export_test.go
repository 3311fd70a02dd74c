package httpapi

// StatusOf exposes the status of each error code to the external tests.
var StatusOf = statusOf

// SMSStatus exposes the status of each SMS API error to the external tests.
var SMSStatus = smsStatus

// HeaderNames maps the documented names of the headers httpapi indexes
// directly to the canonical forms it uses.
var HeaderNames = map[string]string{
	"X-Correlation-ID":      hdrCorrelationID,
	"X-API-Key":             hdrAPIKey,
	"X-RateLimit-Limit":     hdrRateLimitLimit,
	"X-RateLimit-Remaining": hdrRateLimitRemaining,
}
