package messaging

import "context"

// WebhookAddressAllowed exposes the webhook guard's address check to the
// external tests.
var WebhookAddressAllowed = webhookAddressAllowed

// FlushKeyTouches waits until every queued record of an API key's use is
// written to the store, so tests read LastUsedAt without sleeping.
func FlushKeyTouches(ctx context.Context, s *Service) error { return s.touches.flush(ctx) }

// SetKeyTouchQueue sets how many records of key uses may wait at once.
func SetKeyTouchQueue(s *Service, n int) {
	s.touches.mu.Lock()
	defer s.touches.mu.Unlock()
	s.touches.limit = n
}

// DispatchDefaults returns o with the dispatcher's defaults filled in.
func DispatchDefaults(o DispatchOptions) DispatchOptions { return o.withDefaults() }

// TemplateSyncOptionsOf returns the template sync options s runs with.
func TemplateSyncOptionsOf(s *Service) TemplateSyncOptions { return s.syncOpts }

// ValidE164Fast exposes NormalizePhone's fast path: true only when
// libphonenumber certainly accepts the number as written.
var ValidE164Fast = validE164Fast

// CheckConnections runs one pass of the service's periodic connection
// checks (Options.ConnectionChecks) now.
func CheckConnections(ctx context.Context, s *Service) {
	s.checkConnections(ctx)
}
