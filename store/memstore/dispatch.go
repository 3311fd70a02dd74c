package memstore

import (
	"context"
	"slices"
	"sort"
	"time"

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

// MessageClaim implements messaging.Store.
func (s *Store) MessageClaim(ctx context.Context, p *messaging.MessageClaimParams) ([]*messaging.Message, error) {
	unlock, err := s.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return leaseFirst(s.dueQueued(p.Now), p.Limit, func(m *messaging.Message) *messaging.Message {
		m.LeaseOwner, m.DueAt = p.Owner, p.Now.Add(p.Lease)
		m.Attempts++
		return m.Clone()
	}), nil
}

// MessageRelease implements messaging.Store.
func (s *Store) MessageRelease(ctx context.Context, p *messaging.MessageReleaseParams) (bool, error) {
	unlock, err := s.lock(ctx)
	if err != nil {
		return false, err
	}
	defer unlock()
	m, ok := s.messages[p.ID]
	if !ok || m.WorkspaceID != p.WorkspaceID {
		return false, messaging.ErrNotFound
	}
	if m.Status != messaging.StatusQueued || m.LeaseOwner != p.Owner {
		return false, nil
	}
	m.DueAt, m.LastError, m.LeaseOwner = p.DueAt, p.LastError, ""
	return true, nil
}

// MessageGetByProviderID implements messaging.Store.
func (s *Store) MessageGetByProviderID(ctx context.Context, id string) (*messaging.Message, error) {
	unlock, err := s.rlock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	m, ok := s.byProviderID[id]
	if !ok {
		return nil, messaging.ErrNotFound
	}
	return m.Clone(), nil
}

func copyEndpoint(e *messaging.WebhookEndpoint) *messaging.WebhookEndpoint {
	c := *e
	c.SecretSealed = slices.Clone(e.SecretSealed)
	c.DisabledAt = copyTime(e.DisabledAt)
	return &c
}

// WebhookEndpointCreate implements messaging.Store.
func (s *Store) WebhookEndpointCreate(ctx context.Context, e *messaging.WebhookEndpoint) error {
	unlock, err := s.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	if _, ok := s.workspaces[e.WorkspaceID]; !ok {
		return messaging.ErrNotFound
	}
	for _, o := range s.endpoints {
		if o.ID == e.ID {
			return messaging.ErrConflict
		}
	}
	s.endpoints = append(s.endpoints, copyEndpoint(e))
	return nil
}

// WebhookEndpointList implements messaging.Store.
func (s *Store) WebhookEndpointList(ctx context.Context, workspaceID string) ([]*messaging.WebhookEndpoint, error) {
	unlock, err := s.rlock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return copiesOf(slices.Values(s.endpoints), func(e *messaging.WebhookEndpoint) bool { return e.WorkspaceID == workspaceID }, copyEndpoint), nil
}

// WebhookEndpointDelete implements messaging.Store.
func (s *Store) WebhookEndpointDelete(ctx context.Context, workspaceID, id string) error {
	unlock, err := s.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	i := slices.IndexFunc(s.endpoints, func(e *messaging.WebhookEndpoint) bool { return e.ID == id && e.WorkspaceID == workspaceID })
	if i < 0 {
		return messaging.ErrNotFound
	}
	s.endpoints = slices.Delete(s.endpoints, i, i+1)
	s.deliveries = slices.DeleteFunc(s.deliveries, func(d *messaging.WebhookDelivery) bool {
		return d.EndpointID == id && d.State == messaging.DeliveryPending
	})
	return nil
}

// WebhookEndpointUpdate implements messaging.Store.
func (s *Store) WebhookEndpointUpdate(ctx context.Context, p *messaging.WebhookEndpointUpdateParams) error {
	unlock, err := s.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	i := slices.IndexFunc(s.endpoints, func(e *messaging.WebhookEndpoint) bool { return e.ID == p.ID && e.WorkspaceID == p.WorkspaceID })
	if i < 0 {
		return messaging.ErrNotFound
	}
	e := copyEndpoint(s.endpoints[i])
	e.SecretSealed, e.DisabledAt = slices.Clone(p.SecretSealed), nil
	s.endpoints[i] = e
	return nil
}

// queueEvent fans ev out to the enabled endpoints of its workspace.
// Callers hold s.mu.
func (s *Store) queueEvent(ev *messaging.EventRecord) {
	for _, e := range s.endpoints {
		if e.WorkspaceID != ev.WorkspaceID || e.DisabledAt != nil {
			continue
		}
		s.seq++
		s.deliveries = append(s.deliveries, &messaging.WebhookDelivery{
			ID: s.seq, EndpointID: e.ID, WorkspaceID: ev.WorkspaceID, MessageID: ev.MessageID, EventID: ev.ID,
			Seq: s.seq, Payload: slices.Clone(ev.Payload), State: messaging.DeliveryPending,
			DueAt: ev.CreatedAt, CreatedAt: ev.CreatedAt,
		})
	}
}

func (s *Store) copyDelivery(d *messaging.WebhookDelivery) *messaging.WebhookDelivery {
	c := *d
	c.Payload = slices.Clone(d.Payload)
	for _, e := range s.endpoints {
		if e.ID == d.EndpointID {
			c.URL, c.Secret = e.URL, slices.Clone(e.SecretSealed)
		}
	}
	return &c
}

// WebhookClaim implements messaging.Store.
func (s *Store) WebhookClaim(ctx context.Context, p *messaging.WebhookClaimParams) ([]*messaging.WebhookDelivery, error) {
	unlock, err := s.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	// The first pending delivery of each (endpoint, message) is the only
	// claimable one; deliveries are kept in Seq order.
	first := map[[2]string]bool{}
	var due []*messaging.WebhookDelivery
	for _, d := range s.deliveries {
		if d.State != messaging.DeliveryPending {
			continue
		}
		k := [2]string{d.EndpointID, d.MessageID}
		if first[k] {
			continue
		}
		first[k] = true
		if !d.DueAt.After(p.Now) {
			due = append(due, d)
		}
	}
	sort.SliceStable(due, func(i, j int) bool { return due[i].DueAt.Before(due[j].DueAt) })
	return leaseFirst(due, p.Limit, func(d *messaging.WebhookDelivery) *messaging.WebhookDelivery {
		d.LeaseOwner, d.DueAt = p.Owner, p.Now.Add(p.Lease)
		d.Attempts++
		return s.copyDelivery(d)
	}), nil
}

// WebhookRecord implements messaging.Store.
func (s *Store) WebhookRecord(ctx context.Context, p *messaging.WebhookRecordParams) error {
	unlock, err := s.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	i := slices.IndexFunc(s.deliveries, func(d *messaging.WebhookDelivery) bool { return d.ID == p.ID })
	if i < 0 {
		return nil // finished (dropped) or gone with its endpoint: not ours any more
	}
	d := s.deliveries[i]
	if d.State != messaging.DeliveryPending || d.LeaseOwner != p.Owner {
		return nil
	}
	d.State, d.LastStatus, d.LastError, d.LeaseOwner = p.State, p.LastStatus, p.LastError, ""
	if p.State == messaging.DeliveryPending {
		d.DueAt = p.DueAt
	}
	if p.DisableEndpoint {
		for _, e := range s.endpoints {
			if e.ID == d.EndpointID && e.DisabledAt == nil {
				at := p.At
				e.DisabledAt = &at
			}
		}
		for _, o := range s.deliveries {
			if o.EndpointID == d.EndpointID && o.State == messaging.DeliveryPending {
				o.State, o.LastError, o.LeaseOwner = messaging.DeliveryFailed, "endpoint disabled", ""
			}
		}
	}
	// Delivered and failed deliveries are dropped, so memory does not grow
	// with the number of events.
	s.deliveries = slices.DeleteFunc(s.deliveries, func(d *messaging.WebhookDelivery) bool { return d.State != messaging.DeliveryPending })
	return nil
}

// MessageGetByIdempotencyKey implements messaging.Store.
func (s *Store) MessageGetByIdempotencyKey(ctx context.Context, workspaceID, key string) (*messaging.Message, error) {
	unlock, err := s.rlock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	m, ok := s.idem[[2]string{workspaceID, key}]
	if !ok || key == "" {
		return nil, messaging.ErrNotFound
	}
	return m.Clone(), nil
}
