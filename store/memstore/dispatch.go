package memstore

import (
	"context"
	"slices"
	"sort"
	"time"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging"
)

// dueQueued returns the queued messages due at now, oldest DueAt first.
// Callers hold s.mu. The in-memory store keeps queued messages in s.queued
// so a claim never walks sent messages.
func (s *Store) dueQueued(now time.Time) []*messaging.Message {
	var due []*messaging.Message
	for _, m := range s.queued {
		if !m.DueAt.After(now) {
			due = append(due, m)
		}
	}
	sort.Slice(due, func(i, j int) bool {
		if !due[i].DueAt.Equal(due[j].DueAt) {
			return due[i].DueAt.Before(due[j].DueAt)
		}
		return due[i].ID < due[j].ID
	})
	return due
}

// leaseFirst leases the first limit records of due (the oldest due first)
// with lease, which returns the copy of a record to hand out, and returns
// the copies: the common part of the claims.
func leaseFirst[T any](due []T, limit int, lease func(T) T) []T {
	if len(due) > limit {
		due = due[:limit]
	}
	out := make([]T, len(due))
	for i, v := range due {
		out[i] = lease(v)
	}
	return out
}

// MessageClaim implements driver.Store.
func (s *Store) MessageClaim(ctx context.Context, p *driver.MessageClaimParams) ([]*messaging.Message, error) {
	return write(ctx, s, func() ([]*messaging.Message, error) {
		return leaseFirst(s.dueQueued(p.Now), p.Limit, func(m *messaging.Message) *messaging.Message {
			m.LeaseOwner, m.DueAt = p.Owner, p.Now.Add(p.Lease)
			m.Attempts++
			if m.UnconfirmedSince == nil {
				now := p.Now
				m.UnconfirmedSince = &now
			}
			return m.Clone()
		}), nil
	})
}

// MessageRelease implements driver.Store.
func (s *Store) MessageRelease(ctx context.Context, p *driver.MessageReleaseParams) (bool, error) {
	return write(ctx, s, func() (bool, error) {
		m, ok := s.messageOf(p.WorkspaceID, p.ID)
		if !ok {
			return false, messaging.ErrNotFound
		}
		if m.Status != messaging.StatusQueued || m.LeaseOwner != p.Owner {
			return false, nil
		}
		m.DueAt, m.LastError, m.LeaseOwner, m.UnconfirmedSince = p.DueAt, p.LastError, "", copyTime(p.Unconfirmed)
		if p.Untried && m.Attempts > 0 {
			m.Attempts--
		}
		return true, nil
	})
}

// MessageGetByProviderID implements driver.Store.
func (s *Store) MessageGetByProviderID(ctx context.Context, id string) (*messaging.Message, error) {
	return get(ctx, s, entry(s.byProviderID, id), (*messaging.Message).Clone)
}

func copyEndpoint(e *messaging.WebhookEndpoint) *messaging.WebhookEndpoint {
	c := *e
	c.Events = slices.Clone(e.Events)
	c.SecretSealed = slices.Clone(e.SecretSealed)
	c.PreviousSecretSealed = slices.Clone(e.PreviousSecretSealed)
	c.PreviousSecretExpiresAt = copyTime(e.PreviousSecretExpiresAt)
	c.DisabledAt = copyTime(e.DisabledAt)
	return &c
}

// WebhookEndpointCreate implements driver.Store.
func (s *Store) WebhookEndpointCreate(ctx context.Context, e *messaging.WebhookEndpoint) error {
	return s.update(ctx, func() error {
		clash := func(o *messaging.WebhookEndpoint) bool { return o.ID == e.ID }
		if err := checkNew(s, e.WorkspaceID, slices.Values(s.endpoints), clash); err != nil {
			return err
		}
		c := copyEndpoint(e)
		if len(c.Events) == 0 {
			c.Events = nil
		}
		s.endpoints = append(s.endpoints, c)
		return nil
	})
}

// endpointOf returns the endpoint id of the workspace, or nil. Callers
// hold s.mu.
func (s *Store) endpointOf(workspaceID, id string) *messaging.WebhookEndpoint {
	for _, e := range s.endpoints {
		if e.ID == id && e.WorkspaceID == workspaceID {
			return e
		}
	}
	return nil
}

// WebhookEndpointGet implements driver.Store.
func (s *Store) WebhookEndpointGet(ctx context.Context, workspaceID, id string) (*messaging.WebhookEndpoint, error) {
	return get(ctx, s, func() (*messaging.WebhookEndpoint, bool) {
		e := s.endpointOf(workspaceID, id)
		return e, e != nil
	}, copyEndpoint)
}

// WebhookEndpointList implements driver.Store.
func (s *Store) WebhookEndpointList(ctx context.Context, workspaceID string) ([]*messaging.WebhookEndpoint, error) {
	return read(ctx, s, func() ([]*messaging.WebhookEndpoint, error) {
		return copiesOf(slices.Values(s.endpoints), func(e *messaging.WebhookEndpoint) bool { return e.WorkspaceID == workspaceID }, copyEndpoint), nil
	})
}

// WebhookEndpointDelete implements driver.Store.
func (s *Store) WebhookEndpointDelete(ctx context.Context, workspaceID, id string) error {
	return s.update(ctx, func() error {
		i := slices.IndexFunc(s.endpoints, func(e *messaging.WebhookEndpoint) bool { return e.ID == id && e.WorkspaceID == workspaceID })
		if i < 0 {
			return messaging.ErrNotFound
		}
		s.endpoints = slices.Delete(s.endpoints, i, i+1)
		s.deliveries = slices.DeleteFunc(s.deliveries, func(d *messaging.WebhookDelivery) bool { return d.EndpointID == id })
		return nil
	})
}

// WebhookEndpointUpdate implements driver.Store.
func (s *Store) WebhookEndpointUpdate(ctx context.Context, p *driver.WebhookEndpointUpdateParams) (*messaging.WebhookEndpoint, error) {
	return write(ctx, s, func() (*messaging.WebhookEndpoint, error) {
		i := slices.IndexFunc(s.endpoints, func(e *messaging.WebhookEndpoint) bool { return e.ID == p.ID && e.WorkspaceID == p.WorkspaceID })
		if i < 0 {
			return nil, messaging.ErrNotFound
		}
		e := copyEndpoint(s.endpoints[i])
		if p.SecretSealed != nil {
			e.PreviousSecretSealed, e.PreviousSecretExpiresAt = nil, nil
			if p.PreviousUntil != nil {
				e.PreviousSecretSealed, e.PreviousSecretExpiresAt = e.SecretSealed, copyTime(p.PreviousUntil)
			}
			e.SecretSealed = slices.Clone(p.SecretSealed)
		}
		if p.URL != nil {
			e.URL = *p.URL
		}
		if p.Events != nil {
			e.Events = slices.Clone(*p.Events)
			if len(e.Events) == 0 {
				e.Events = nil
			}
		}
		if p.Description != nil {
			e.Description = *p.Description
		}
		if p.Enabled != nil {
			switch {
			case *p.Enabled:
				e.DisabledAt, e.DisabledReason = nil, ""
			case e.DisabledAt == nil:
				at := p.At
				e.DisabledAt, e.DisabledReason = &at, record.DisabledByOperator
				s.failPending(e.ID, p.At)
			}
		}
		s.endpoints[i] = e
		return copyEndpoint(e), nil
	})
}

// failPending fails the pending deliveries of an endpoint being disabled.
// Callers hold s.mu.
func (s *Store) failPending(endpointID string, at time.Time) {
	for _, o := range s.deliveries {
		if o.EndpointID == endpointID && o.State == record.DeliveryPending {
			o.State, o.LastError, o.LeaseOwner = record.DeliveryFailed, "endpoint disabled", ""
			o.LastAttemptAt = copyTime(&at)
		}
	}
}

// subscribes reports whether e receives events of type typ.
func subscribes(e *messaging.WebhookEndpoint, typ string) bool {
	return len(e.Events) == 0 || slices.Contains(e.Events, typ)
}

// queueEvent fans ev out to the enabled endpoints of its workspace that
// subscribe to its type. Callers hold s.mu.
func (s *Store) queueEvent(ev *driver.EventRecord) bool {
	queued := false
	for _, e := range s.endpoints {
		if e.WorkspaceID == ev.WorkspaceID && e.DisabledAt == nil && subscribes(e, ev.Type) {
			s.queueDelivery(e.ID, ev)
			queued = true
		}
	}
	return queued
}

// queueDelivery appends a pending delivery of ev to the endpoint
// endpointID, with the next Seq. Callers hold s.mu.
func (s *Store) queueDelivery(endpointID string, ev *driver.EventRecord) {
	s.seq++
	s.deliveries = append(s.deliveries, &messaging.WebhookDelivery{
		ID: s.seq, EndpointID: endpointID, WorkspaceID: ev.WorkspaceID, MessageID: ev.MessageID, EventID: ev.ID, EventType: ev.Type,
		Seq: s.seq, Payload: slices.Clone(ev.Payload), State: record.DeliveryPending,
		DueAt: ev.CreatedAt, CreatedAt: ev.CreatedAt, TraceParent: ev.TraceParent,
	})
}

// WebhookQueueEvent implements driver.Store.
func (s *Store) WebhookQueueEvent(ctx context.Context, p *driver.WebhookQueueParams) (bool, error) {
	return write(ctx, s, func() (bool, error) { return s.queueEndpointEvent(p), nil })
}

// queueEndpointEvent queues p.Event for the one endpoint p.EndpointID,
// unless it does not exist or is disabled (false). s.mu is held.
func (s *Store) queueEndpointEvent(p *driver.WebhookQueueParams) bool {
	e := s.endpointOf(p.Event.WorkspaceID, p.EndpointID)
	if e == nil || e.DisabledAt != nil {
		return false
	}
	s.queueDelivery(e.ID, p.Event)
	return true
}

// copyDelivery returns a copy of d; with endpoint, completed with its
// endpoint's URL and secrets (as claimed), else without its payload (as
// listed).
func (s *Store) copyDelivery(d *messaging.WebhookDelivery, endpoint bool) *messaging.WebhookDelivery {
	c := *d
	c.LastAttemptAt, c.DeliveredAt = copyTime(d.LastAttemptAt), copyTime(d.DeliveredAt)
	if !endpoint {
		c.Payload = nil
		return &c
	}
	c.Payload = slices.Clone(d.Payload)
	for _, e := range s.endpoints {
		if e.ID == d.EndpointID {
			c.URL, c.Secret = e.URL, slices.Clone(e.SecretSealed)
			c.PreviousSecret, c.PreviousSecretExpiresAt = slices.Clone(e.PreviousSecretSealed), copyTime(e.PreviousSecretExpiresAt)
		}
	}
	return &c
}

// listedDelivery is copyDelivery as a delivery is listed: without its
// payload.
func (s *Store) listedDelivery(d *messaging.WebhookDelivery) *messaging.WebhookDelivery {
	return s.copyDelivery(d, false)
}

// WebhookClaim implements driver.Store.
func (s *Store) WebhookClaim(ctx context.Context, p *driver.WebhookClaimParams) ([]*messaging.WebhookDelivery, error) {
	return write(ctx, s, func() ([]*messaging.WebhookDelivery, error) {
		disabled := map[string]bool{}
		for _, e := range s.endpoints {
			disabled[e.ID] = e.DisabledAt != nil
		}
		// The first pending delivery of each (endpoint, message) is the
		// only claimable one; deliveries are kept in Seq order.
		first := map[[2]string]bool{}
		var due []*messaging.WebhookDelivery
		for _, d := range s.deliveries {
			if d.State != record.DeliveryPending {
				continue
			}
			k := [2]string{d.EndpointID, d.MessageID}
			if first[k] {
				continue
			}
			first[k] = true
			if !d.DueAt.After(p.Now) && !disabled[d.EndpointID] {
				due = append(due, d)
			}
		}
		sort.SliceStable(due, func(i, j int) bool { return due[i].DueAt.Before(due[j].DueAt) })
		return leaseFirst(due, p.Limit, func(d *messaging.WebhookDelivery) *messaging.WebhookDelivery {
			d.LeaseOwner, d.DueAt = p.Owner, p.Now.Add(p.Lease)
			d.Attempts++
			return s.copyDelivery(d, true)
		}), nil
	})
}

// WebhookRecord implements driver.Store.
func (s *Store) WebhookRecord(ctx context.Context, p *driver.WebhookRecordParams) error {
	return s.update(ctx, func() error {
		i := slices.IndexFunc(s.deliveries, func(d *messaging.WebhookDelivery) bool { return d.ID == p.ID })
		if i < 0 {
			return nil // pruned or gone with its endpoint: not ours any more
		}
		d := s.deliveries[i]
		if d.State != record.DeliveryPending || d.LeaseOwner != p.Owner {
			return nil
		}
		d.State, d.LastStatus, d.LastError, d.LeaseOwner = p.State, p.LastStatus, p.LastError, ""
		d.LastAttemptAt = copyTime(&p.At)
		switch p.State {
		case record.DeliveryPending:
			d.DueAt = p.DueAt
		case record.DeliveryDelivered:
			d.DeliveredAt = copyTime(&p.At)
		}
		if p.DisableEndpoint {
			for _, e := range s.endpoints {
				if e.ID == d.EndpointID && e.DisabledAt == nil {
					at := p.At
					e.DisabledAt, e.DisabledReason = &at, record.DisabledGone
				}
			}
			s.failPending(d.EndpointID, p.At)
		}
		s.prune(d.EndpointID, max(p.Keep, 1))
		return nil
	})
}

// prune deletes the finished deliveries of an endpoint beyond its keep
// newest. Callers hold s.mu.
func (s *Store) prune(endpointID string, keep int) {
	n := 0
	for i := len(s.deliveries) - 1; i >= 0; i-- {
		d := s.deliveries[i]
		if d.EndpointID == endpointID && d.State != record.DeliveryPending {
			if n++; n > keep {
				d.State = "" // marked for deletion
			}
		}
	}
	s.deliveries = slices.DeleteFunc(s.deliveries, func(d *messaging.WebhookDelivery) bool { return d.State == "" })
}

// WebhookDeliveryList implements driver.Store.
func (s *Store) WebhookDeliveryList(ctx context.Context, p *driver.WebhookDeliveryListParams) ([]*messaging.WebhookDelivery, error) {
	return read(ctx, s, func() ([]*messaging.WebhookDelivery, error) {
		if s.endpointOf(p.WorkspaceID, p.EndpointID) == nil {
			return nil, messaging.ErrNotFound
		}
		return newestPage(s.deliveries, p.Limit, func(d *messaging.WebhookDelivery) bool {
			return d.EndpointID == p.EndpointID && (p.Before == 0 || d.Seq < p.Before)
		}, s.listedDelivery), nil
	})
}

// WebhookRedeliver implements driver.Store.
func (s *Store) WebhookRedeliver(ctx context.Context, p *driver.WebhookRedeliverParams) (*messaging.WebhookDelivery, error) {
	return write(ctx, s, func() (*messaging.WebhookDelivery, error) {
		i := slices.IndexFunc(s.deliveries, func(d *messaging.WebhookDelivery) bool {
			return d.ID == p.ID && d.EndpointID == p.EndpointID && d.WorkspaceID == p.WorkspaceID
		})
		if i < 0 || s.endpointOf(p.WorkspaceID, p.EndpointID) == nil {
			return nil, messaging.ErrNotFound
		}
		d := s.deliveries[i]
		if d.State == record.DeliveryPending && d.LeaseOwner != "" && d.DueAt.After(p.Now) {
			return nil, messaging.ErrConflict
		}
		d.State, d.DueAt, d.LeaseOwner, d.DeliveredAt = record.DeliveryPending, p.Now, "", nil
		return s.listedDelivery(d), nil
	})
}

// WebhookRecordTest implements driver.Store.
func (s *Store) WebhookRecordTest(ctx context.Context, p *driver.WebhookRecordTestParams) (*messaging.WebhookDelivery, error) {
	return write(ctx, s, func() (*messaging.WebhookDelivery, error) {
		ev := p.Event
		if s.endpointOf(ev.WorkspaceID, p.EndpointID) == nil {
			return nil, messaging.ErrNotFound
		}
		s.seq++
		d := &messaging.WebhookDelivery{
			ID: s.seq, EndpointID: p.EndpointID, WorkspaceID: ev.WorkspaceID, MessageID: ev.MessageID, EventID: ev.ID, EventType: ev.Type,
			Seq: s.seq, Payload: slices.Clone(ev.Payload), State: p.State, Attempts: 1, DueAt: p.At,
			LastStatus: p.LastStatus, LastError: p.LastError, LastAttemptAt: copyTime(&p.At), CreatedAt: ev.CreatedAt, Test: true,
			TraceParent: ev.TraceParent,
		}
		if p.State == record.DeliveryDelivered {
			d.DeliveredAt = copyTime(&p.At)
		}
		s.deliveries = append(s.deliveries, d)
		s.prune(p.EndpointID, max(p.Keep, 1)) // d is the newest: kept
		return s.listedDelivery(d), nil
	})
}

// MessageGetByIdempotencyKey implements driver.Store.
func (s *Store) MessageGetByIdempotencyKey(ctx context.Context, workspaceID, key string) (*messaging.Message, error) {
	return get(ctx, s, func() (*messaging.Message, bool) {
		m, ok := s.idem[[2]string{workspaceID, key}]
		return m, ok && key != ""
	}, (*messaging.Message).Clone)
}

// MessageQueueStats implements driver.Store. It walks s.queued, which
// holds only the queued messages.
func (s *Store) MessageQueueStats(ctx context.Context, p *driver.MessageQueueStatsParams) (*messaging.MessageQueueStats, error) {
	return read(ctx, s, func() (*messaging.MessageQueueStats, error) {
		dues := func(yield func(time.Time) bool) {
			for _, m := range s.queued {
				if (p.WorkspaceID == "" || m.WorkspaceID == p.WorkspaceID) && !yield(m.DueAt) {
					return
				}
			}
		}
		st := &messaging.MessageQueueStats{}
		st.Queued, st.Due, st.OldestDueAt = dueStats(dues, p.Now)
		return st, nil
	})
}

// Ping implements driver.Store: an in-memory store always answers,
// unless ctx is done.
func (s *Store) Ping(ctx context.Context) error {
	unlock, err := s.rlock(ctx)
	if err != nil {
		return err
	}
	unlock()
	return nil
}
