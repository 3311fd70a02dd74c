package sqlitestore

import "sync"

// qContactsVersion reads a workspace's contacts_version (migration 0024),
// the first statement of a search's read transaction.
const qContactsVersion = `SELECT contacts_version FROM workspaces WHERE id = @ws`

// maxSearchCounts bounds the totals kept; when full the map is emptied.
const maxSearchCounts = 4096

// searchCounts keeps the exact totals of recent contact searches, each
// with the workspace's contacts_version it was counted at. A search reads
// the version in its own snapshot and uses a kept total only when the
// versions are equal: the total is then the count that snapshot would
// give. The version lives in the database, so changes made by another
// process on the same file are seen too.
type searchCounts struct {
	mu sync.Mutex
	m  map[searchKey]searchCount
}

// searchKey is what a search counts: the workspace, the folded query and
// its phone digits.
type searchKey struct{ ws, search, digits string }

// searchCount is a kept count: the matches, the contacts of the
// workspace (the greatest list position), and the version both were
// counted at.
type searchCount struct {
	version       int64
	total, listed int
}

func (c *searchCounts) get(k searchKey, version int64) (searchCount, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[k]
	return e, ok && e.version == version
}

func (c *searchCounts) put(k searchKey, e searchCount) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxSearchCounts {
		c.m = map[searchKey]searchCount{}
	}
	c.m[k] = e
}
