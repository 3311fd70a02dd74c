package defaults

import "time"

// DefaultCacheTTL is how long, by default, a Service reuses the API keys
// and workspaces it read from its store (see Options.CacheTTL).
const DefaultCacheTTL = 500 * time.Millisecond

// MaxCacheTTL is the longest Options.CacheTTL: the bound on how long a
// change made elsewhere (a key revoked or a channel disconnected through
// another instance or process) may go unseen by a Service.
const MaxCacheTTL = time.Second
