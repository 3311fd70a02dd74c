package driver

import "context"

// ChangeListener is implemented by a Store that several Services share
// (instances behind a load balancer on one database) when it can tell each
// of them at once that any of them changed an API key, a workspace or its
// channels: pgstore does, with LISTEN/NOTIFY. A
// started Service (Start) empties its cache on each notice, so such changes
// made elsewhere are seen within milliseconds instead of messaging.Options.CacheTTL;
// the TTL still bounds what a lost notice can cost.
type ChangeListener interface {
	// ListenChanges calls changed after each such change commits, made
	// through any Service, and whenever notices may have been lost (after
	// reconnecting), until ctx is done; it then returns ctx's error.
	// changed must not block.
	ListenChanges(ctx context.Context, changed func()) error
}
