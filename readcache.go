package messaging

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging/internal/workqueue"
)

// maxCacheEntries bounds each map of the read cache; a map that reaches it
// is emptied before the next entry is added.
const maxCacheEntries = 4096

// cachingStore is the Store as the Service sees it: the store it was given,
// with the two reads every accepted request makes, the API keys of a
// lookup id (Authenticate) and a workspace with its connected channels and
// settings (the channel check), and the read every send makes, a
// workspace's connection of a channel (ChannelSender), kept for ttl on the
// service's clock. The management of connections (Channels) reads the
// store itself.
//
// The bound on staleness is the point of the design. A change made through
// this Service (a key created, updated or revoked; a channel connected or
// disconnected, ConnectionPut included; a workspace's settings) empties
// the cache once the store has returned, whatever it returned, so this
// Service sees its own changes at once. A change made elsewhere, by another
// instance sharing a PostgreSQL database or another process on the same
// SQLite file, is seen within ttl: no entry is used once it is ttl old,
// and an entry read before a change of this Service is never stored after
// it (the generation check in put). Only found records are kept: an
// unknown key or workspace is read again each time, so a key created on
// another instance works at once and guessed keys do not fill memory. A
// missing connection is kept too (a channel with no connection, served
// with the provider's own credentials, is the common case): connections
// are looked up only for messages accepted, not for guesses.
type cachingStore struct {
	driver.Store
	now func() time.Time
	ttl time.Duration

	// gen counts this Service's changes; a read that began before a change
	// is not stored.
	gen atomic.Uint64

	mu          sync.RWMutex
	keys        map[string]cached[[]*APIKey]
	workspaces  map[string]cached[*WorkspaceInfo]
	connections map[string]cached[connectionRead]
}

// connectionRead is a read of a connection: the connection, or the
// store's ErrNotFound.
type connectionRead struct {
	c   *ChannelConnection
	err error
}

type cached[T any] struct {
	v  T
	at time.Time
}

// newCachingStore returns st with its key and workspace reads cached for
// ttl, or st itself when ttl is negative.
func newCachingStore(st driver.Store, now func() time.Time, ttl time.Duration) driver.Store {
	if ttl < 0 {
		return st
	}
	return &cachingStore{Store: st, now: now, ttl: ttl,
		keys: map[string]cached[[]*APIKey]{}, workspaces: map[string]cached[*WorkspaceInfo]{},
		connections: map[string]cached[connectionRead]{}}
}

// lookup returns the entry of m under k when it is younger than ttl.
func lookup[T any](c *cachingStore, m map[string]cached[T], k string) (T, bool) {
	c.mu.RLock()
	e, ok := m[k]
	c.mu.RUnlock()
	if now := c.now(); ok && now.Sub(e.at) < c.ttl && !e.at.After(now) {
		return e.v, true
	}
	var zero T
	return zero, false
}

// put stores v under k in m, unless this Service changed something since
// gen was read (v may predate the change).
func put[T any](c *cachingStore, m map[string]cached[T], k string, v T, gen uint64, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen.Load() != gen {
		return
	}
	if len(m) >= maxCacheEntries {
		clear(m)
	}
	m[k] = cached[T]{v: v, at: at}
}

// changed empties the cache after a change made through this Service.
func (c *cachingStore) changed() {
	c.mu.Lock()
	c.gen.Add(1)
	clear(c.keys)
	clear(c.workspaces)
	clear(c.connections)
	c.mu.Unlock()
}

// APIKeysByPrefix implements Store from the cache.
func (c *cachingStore) APIKeysByPrefix(ctx context.Context, prefix string) ([]*APIKey, error) {
	if ks, ok := lookup(c, c.keys, prefix); ok {
		return cloneKeys(ks), nil
	}
	gen, at := c.gen.Load(), c.now()
	ks, err := c.Store.APIKeysByPrefix(ctx, prefix)
	if err != nil || len(ks) == 0 {
		return ks, err
	}
	put(c, c.keys, prefix, cloneKeys(ks), gen, at)
	return ks, nil
}

// WorkspaceGet implements Store from the cache.
func (c *cachingStore) WorkspaceGet(ctx context.Context, id string) (*WorkspaceInfo, error) {
	if w, ok := lookup(c, c.workspaces, id); ok {
		return w.Clone(), nil
	}
	gen, at := c.gen.Load(), c.now()
	w, err := c.Store.WorkspaceGet(ctx, id)
	if err != nil {
		return nil, err
	}
	put(c, c.workspaces, id, w.Clone(), gen, at)
	return w, nil
}

// ConnectionGet implements Store from the cache.
func (c *cachingStore) ConnectionGet(ctx context.Context, workspaceID, channel string) (*ChannelConnection, error) {
	k := workspaceID + "\x00" + channel
	if r, ok := lookup(c, c.connections, k); ok {
		if r.err != nil {
			return nil, r.err
		}
		return r.c.Clone(), nil
	}
	gen, at := c.gen.Load(), c.now()
	conn, err := c.Store.ConnectionGet(ctx, workspaceID, channel)
	switch {
	case errors.Is(err, ErrNotFound):
		put(c, c.connections, k, connectionRead{err: err}, gen, at)
	case err == nil:
		put(c, c.connections, k, connectionRead{c: conn.Clone()}, gen, at)
	}
	return conn, err
}

// The changes below empty the cache once the store returned (an error
// may come after the change was stored).

// APIKeyCreate implements Store.
func (c *cachingStore) APIKeyCreate(ctx context.Context, k *APIKey) error {
	defer c.changed()
	return c.Store.APIKeyCreate(ctx, k)
}

// APIKeyRevoke implements Store.
func (c *cachingStore) APIKeyRevoke(ctx context.Context, p *driver.APIKeyRevokeParams) error {
	defer c.changed()
	return c.Store.APIKeyRevoke(ctx, p)
}

// APIKeyUpdate implements Store.
func (c *cachingStore) APIKeyUpdate(ctx context.Context, p *driver.APIKeyUpdateParams) error {
	defer c.changed()
	return c.Store.APIKeyUpdate(ctx, p)
}

// WorkspaceSetSettings implements Store.
func (c *cachingStore) WorkspaceSetSettings(ctx context.Context, p *driver.WorkspaceSettingsParams) error {
	defer c.changed()
	return c.Store.WorkspaceSetSettings(ctx, p)
}

// WorkspaceSetChannel implements Store.
func (c *cachingStore) WorkspaceSetChannel(ctx context.Context, p *driver.ChannelParams) error {
	defer c.changed()
	return c.Store.WorkspaceSetChannel(ctx, p)
}

// ConnectionPut implements Store. It connects or disconnects channels, a
// change to workspaces' channels and connections.
func (c *cachingStore) ConnectionPut(ctx context.Context, p *ChannelConnection) ([]*ChannelConnection, error) {
	defer c.changed()
	return c.Store.ConnectionPut(ctx, p)
}

// ConnectionUpdate implements Store. A change of the connection's status
// empties the cache; the record of a template sync changes nothing a
// sender reads.
func (c *cachingStore) ConnectionUpdate(ctx context.Context, p *driver.ConnectionUpdateParams) (bool, error) {
	if p.Status != "" {
		defer c.changed()
	}
	return c.Store.ConnectionUpdate(ctx, p)
}

// ConnectionVerified implements Store. It connects and disconnects
// channels, a change to workspaces' channels and connections.
func (c *cachingStore) ConnectionVerified(ctx context.Context, p *driver.ConnectionVerifiedParams) ([]*ChannelConnection, error) {
	defer c.changed()
	return c.Store.ConnectionVerified(ctx, p)
}

func cloneKeys(ks []*APIKey) []*APIKey {
	out := make([]*APIKey, len(ks))
	for i, k := range ks {
		out[i] = k.Clone()
	}
	return out
}

// listenChanges empties the cache on each notice of the store's
// ChangeListener, if it has one and the cache is on, until ctx is done or
// stop is closed.
func (s *Service) listenChanges(ctx context.Context, stop <-chan struct{}) {
	c, ok := s.store.(*cachingStore)
	l, lok := s.raw.(driver.ChangeListener)
	if !ok || !lok {
		return
	}
	ctx, cancel := workqueue.UntilStopped(ctx, stop)
	defer cancel()
	if err := l.ListenChanges(ctx, c.changed); err != nil && ctx.Err() == nil {
		s.log.Error("listening for changes made by other instances stopped; they are seen within the cache TTL", "err", err)
	}
}
