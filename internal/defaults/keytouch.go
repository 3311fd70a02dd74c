package defaults

import "time"

// KeyTouchEvery is how often, at most, the use of one API key is recorded
// in APIKey.LastUsedAt.
const KeyTouchEvery = time.Minute

// DefaultKeyTouchQueue is how many recordings of key uses may wait for
// the store at once; more are dropped (see keyToucher).
const DefaultKeyTouchQueue = 256
