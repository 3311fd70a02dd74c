package memstore

import (
	"context"
	"maps"
	"slices"
	"sort"
	"time"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging"
)

// connKey identifies a channel connection: one per workspace and channel.
type connKey struct{ workspaceID, channel string }

// lease is a held named lease.
type lease struct {
	owner string
	until time.Time
}

func copyConnection(c *messaging.ChannelConnection) *messaging.ChannelConnection {
	d := *c
	d.TokenSealed = slices.Clone(c.TokenSealed)
	d.TemplatesSyncedAt = copyTime(c.TemplatesSyncedAt)
	d.VerifiedAt = copyTime(c.VerifiedAt)
	d.TierChangedAt, d.QualityChangedAt = copyTime(c.TierChangedAt), copyTime(c.QualityChangedAt)
	return &d
}

// claim makes c the holder of its account: ErrConflict if a connected
// connection of another workspace holds c's channel and account id or
// (both non-empty) c's WABA id; else every other workspace's connection
// of that account or WABA that is not disconnected (nor superseded
// already) is superseded at at.
// It returns copies of the superseded. s.mu is held.
func (s *Store) claim(c *messaging.ChannelConnection, at time.Time) ([]*messaging.ChannelConnection, error) {
	var losers []*messaging.ChannelConnection
	for _, o := range s.connections {
		if o.WorkspaceID == c.WorkspaceID || o.Status == record.ConnectionDisconnected {
			continue
		}
		if !(o.Channel == c.Channel && o.AccountID == c.AccountID) && !(c.WABAID != "" && o.WABAID == c.WABAID) {
			continue
		}
		if o.Status == record.ConnectionConnected && o.Holds() {
			return nil, messaging.ErrConflict
		}
		if !o.Holds() && o.Status == record.ConnectionError && o.StatusReason == record.ReasonSuperseded {
			continue // superseded already
		}
		losers = append(losers, o)
	}
	out := make([]*messaging.ChannelConnection, 0, len(losers))
	for _, o := range losers {
		o.Status, o.StatusReason, o.VerifiedAt, o.UpdatedAt = record.ConnectionError, record.ReasonSuperseded, nil, at
		if w, ok := s.workspaces[o.WorkspaceID]; ok {
			setChannel(w, o.Channel, false)
		}
		out = append(out, copyConnection(o))
	}
	sortConnections(out)
	return out, nil
}

// sortConnections orders connections by workspace, then channel.
func sortConnections(cs []*messaging.ChannelConnection) {
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].WorkspaceID != cs[j].WorkspaceID {
			return cs[i].WorkspaceID < cs[j].WorkspaceID
		}
		return cs[i].Channel < cs[j].Channel
	})
}

// setChannel connects or disconnects a channel of w; s.mu is held.
func setChannel(w *messaging.WorkspaceInfo, channel string, connected bool) {
	chans := slices.DeleteFunc(slices.Clone(w.Channels), func(c string) bool { return c == channel })
	if connected {
		chans = append(chans, channel)
		slices.Sort(chans)
	}
	w.Channels = chans
}

// TemplateUpdate implements driver.Store.
func (s *Store) TemplateUpdate(ctx context.Context, p *driver.TemplateUpdateParams) error {
	return s.update(ctx, func() error {
		n := p.Template
		t, ok := s.templateOf(n.WorkspaceID, n.ID)
		if !ok {
			return messaging.ErrNotFound
		}
		if !slices.Contains(p.From, t.Status) {
			return driver.ErrStale
		}
		for _, o := range s.templates {
			if o.ID != n.ID && o.WorkspaceID == n.WorkspaceID && o.Name == n.Name && o.Language == n.Language {
				return messaging.ErrConflict
			}
		}
		c := copyTemplate(n)
		c.WorkspaceID, c.CreatedAt = t.WorkspaceID, t.CreatedAt
		s.templates[n.ID] = c
		return nil
	})
}

// TemplateDelete implements driver.Store.
func (s *Store) TemplateDelete(ctx context.Context, workspaceID, id string) error {
	return s.update(ctx, func() error {
		if _, ok := s.templateOf(workspaceID, id); !ok {
			return messaging.ErrNotFound
		}
		delete(s.templates, id)
		return nil
	})
}

// ConnectionPut implements driver.Store. It sets c.Generation, and
// c.CreatedAt to the replaced connection's, as stored.
func (s *Store) ConnectionPut(ctx context.Context, c *messaging.ChannelConnection) ([]*messaging.ChannelConnection, error) {
	return write(ctx, s, func() ([]*messaging.ChannelConnection, error) {
		w, ok := s.workspaces[c.WorkspaceID]
		if !ok {
			return nil, messaging.ErrNotFound
		}
		var superseded []*messaging.ChannelConnection
		if c.Holds() {
			var err error
			if superseded, err = s.claim(c, c.UpdatedAt); err != nil {
				return nil, err
			}
		}
		k := connKey{c.WorkspaceID, c.Channel}
		gen, created := int64(1), c.CreatedAt
		if old, ok := s.connections[k]; ok {
			gen, created = old.Generation+1, old.CreatedAt
		}
		c.Generation, c.CreatedAt = gen, created
		s.connections[k] = copyConnection(c)
		setChannel(w, c.Channel, c.Holds())
		return superseded, nil
	})
}

// ConnectionVerified implements driver.Store.
func (s *Store) ConnectionVerified(ctx context.Context, p *driver.ConnectionVerifiedParams) ([]*messaging.ChannelConnection, error) {
	return write(ctx, s, func() ([]*messaging.ChannelConnection, error) {
		c, ok := s.connections[connKey{p.WorkspaceID, p.Channel}]
		if !ok {
			return nil, messaging.ErrNotFound
		}
		if c.Generation != p.Generation || c.Status == record.ConnectionDisconnected || (p.FromStatus != "" && c.Status != p.FromStatus) {
			return nil, driver.ErrStale
		}
		superseded, err := s.claim(c, p.At)
		if err != nil {
			return nil, err
		}
		at := p.At
		c.Status, c.StatusReason, c.VerifiedAt, c.UpdatedAt = record.ConnectionConnected, "", &at, p.At
		if p.DisplayPhoneNumber != "" {
			c.DisplayPhoneNumber = p.DisplayPhoneNumber
		}
		setHealth(c, p.QualityRating, p.MessagingTier, p.At)
		if w, ok := s.workspaces[c.WorkspaceID]; ok {
			setChannel(w, c.Channel, true)
		}
		return superseded, nil
	})
}

// ConnectionGet implements driver.Store.
func (s *Store) ConnectionGet(ctx context.Context, workspaceID, channel string) (*messaging.ChannelConnection, error) {
	return get(ctx, s, entry(s.connections, connKey{workspaceID, channel}), copyConnection)
}

// ConnectionList implements driver.Store.
func (s *Store) ConnectionList(ctx context.Context, p *driver.ConnectionListParams) ([]*messaging.ChannelConnection, error) {
	return read(ctx, s, func() ([]*messaging.ChannelConnection, error) {
		match := func(want, got string) bool { return want == "" || want == got }
		out := copiesOf(maps.Values(s.connections), func(c *messaging.ChannelConnection) bool {
			return match(p.WorkspaceID, c.WorkspaceID) && match(p.Channel, c.Channel) && match(p.AccountID, c.AccountID) &&
				match(p.WABAID, c.WABAID) && match(p.Status, c.Status)
		}, copyConnection)
		sortConnections(out)
		return out, nil
	})
}

// ConnectionUpdate implements driver.Store.
func (s *Store) ConnectionUpdate(ctx context.Context, p *driver.ConnectionUpdateParams) (bool, error) {
	return write(ctx, s, func() (bool, error) {
		c, ok := s.connections[connKey{p.WorkspaceID, p.Channel}]
		if !ok || c.Generation != p.Generation || (p.Status != "" && c.Status == record.ConnectionDisconnected) ||
			(p.FromStatus != "" && (c.Status != p.FromStatus || c.StatusReason != p.FromReason)) ||
			(p.Health != nil && (c.QualityRating != p.Health.FromQualityRating || c.MessagingTier != p.Health.FromMessagingTier)) {
			// A verdict on credentials never revives a disconnected
			// connection.
			return false, nil
		}
		if p.Status != "" {
			c.Status, c.StatusReason = p.Status, p.StatusReason
		}
		if p.SyncedAt != nil {
			c.TemplatesSyncedAt, c.TemplateSyncError = copyTime(p.SyncedAt), ""
		}
		if p.SyncError != "" {
			c.TemplateSyncError = p.SyncError
		}
		if p.Throughput > 0 {
			c.Throughput = p.Throughput
		}
		if p.Health != nil {
			setHealth(c, p.Health.QualityRating, p.Health.MessagingTier, p.At)
		}
		c.UpdatedAt = p.At
		return true, nil
	})
}

// setHealth sets c's quality rating and messaging tier, each when
// non-empty, and when each changed at at.
func setHealth(c *messaging.ChannelConnection, quality, tier string, at time.Time) {
	if quality != "" && quality != c.QualityRating {
		c.QualityRating, c.QualityChangedAt = quality, &at
	}
	if tier != "" && tier != c.MessagingTier {
		c.MessagingTier, c.TierChangedAt = tier, &at
	}
}

// LeaseAcquire implements driver.Store.
func (s *Store) LeaseAcquire(ctx context.Context, p *driver.LeaseParams) (bool, error) {
	return write(ctx, s, func() (bool, error) {
		if l, ok := s.leases[p.Name]; ok && l.owner != p.Owner && l.until.After(p.Now) {
			return false, nil
		}
		s.leases[p.Name] = lease{owner: p.Owner, until: p.Until}
		return true, nil
	})
}
