package memstore

import (
	"context"
	"slices"
	"sort"
	"time"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"
)

// fallbackEntry is the SMS fallback of one message.
type fallbackEntry struct {
	ws string
	fb *record.SMSFallback
}

// keepFallback stores the fallback of m, a message being created. s.mu
// is held.
func (s *Store) keepFallback(m *messaging.Message) {
	if m.Fallback == nil {
		return
	}
	if s.fallbacks == nil {
		s.fallbacks = map[string]*fallbackEntry{}
	}
	s.fallbacks[m.ID] = &fallbackEntry{ws: m.WorkspaceID, fb: m.Fallback.Clone()}
}

// MessageFallbacks implements driver.Store.
func (s *Store) MessageFallbacks(ctx context.Context, workspaceID string, ids []string) (map[string]*record.SMSFallback, error) {
	return read(ctx, s, func() (map[string]*record.SMSFallback, error) {
		out := map[string]*record.SMSFallback{}
		for _, id := range ids {
			if e, ok := s.fallbacks[id]; ok && e.ws == workspaceID {
				out[id] = e.fb.Clone()
			}
		}
		return out, nil
	})
}

// MessageFallbackClaim implements driver.Store.
func (s *Store) MessageFallbackClaim(ctx context.Context, p *driver.MessageFallbackClaimParams) ([]*driver.MessageFallbackClaim, error) {
	return write(ctx, s, func() ([]*driver.MessageFallbackClaim, error) {
		type due struct {
			id string
			e  *fallbackEntry
		}
		var cands []due
		for id, e := range s.fallbacks {
			if e.fb.Status != record.SMSFallbackPending {
				continue
			}
			if p.MessageID != "" {
				if id == p.MessageID && e.ws == p.WorkspaceID && (e.fb.LeaseOwner == "" || !e.fb.DueAt.After(p.Now)) {
					cands = append(cands, due{id, e})
				}
				continue
			}
			if !e.fb.DueAt.After(p.Now) {
				cands = append(cands, due{id, e})
			}
		}
		sort.Slice(cands, func(i, j int) bool {
			if !cands[i].e.fb.DueAt.Equal(cands[j].e.fb.DueAt) {
				return cands[i].e.fb.DueAt.Before(cands[j].e.fb.DueAt)
			}
			return cands[i].id < cands[j].id
		})
		var out []*driver.MessageFallbackClaim
		for _, c := range cands {
			if len(out) >= max(p.Limit, 1) {
				break
			}
			c.e.fb.LeaseOwner, c.e.fb.DueAt = p.Owner, p.LeaseUntil.UTC()
			out = append(out, &driver.MessageFallbackClaim{WorkspaceID: c.e.ws, MessageID: c.id, Fallback: c.e.fb.Clone()})
		}
		return out, nil
	})
}

// MessageFallbackSettle implements driver.Store.
func (s *Store) MessageFallbackSettle(ctx context.Context, p *driver.MessageFallbackSettleParams) (bool, error) {
	return write(ctx, s, func() (bool, error) {
		e, ok := s.fallbacks[p.MessageID]
		if !ok || e.ws != p.WorkspaceID || e.fb.Status != record.SMSFallbackPending || e.fb.LeaseOwner != p.Owner {
			return false, nil
		}
		f := e.fb
		f.Status, f.Reason, f.SMSMessageID, f.SMSProviderMessageID = p.Status, p.Reason, p.SMSMessageID, p.SMSProviderMessageID
		f.UpdatedAt, f.DueAt, f.LeaseOwner = p.At.UTC(), time.Time{}, ""
		return true, nil
	})
}

// WorkspaceSMSAccountSet implements driver.Store.
func (s *Store) WorkspaceSMSAccountSet(ctx context.Context, p *driver.WorkspaceSMSAccountParams) (bool, error) {
	return write(ctx, s, func() (bool, error) {
		if _, ok := s.workspaces[p.WorkspaceID]; !ok {
			return false, messaging.ErrNotFound
		}
		if s.smsLinks == nil {
			s.smsLinks = map[string][]string{}
		}
		list := s.smsLinks[p.WorkspaceID]
		i, found := slices.BinarySearch(list, p.PartnerID)
		switch {
		case p.Linked && !found:
			s.smsLinks[p.WorkspaceID] = slices.Insert(list, i, p.PartnerID)
			return true, nil
		case !p.Linked && found:
			s.smsLinks[p.WorkspaceID] = slices.Delete(list, i, i+1)
			return true, nil
		}
		return false, nil
	})
}

// WorkspaceSMSAccounts implements driver.Store.
func (s *Store) WorkspaceSMSAccounts(ctx context.Context, workspaceID string) ([]string, error) {
	return read(ctx, s, func() ([]string, error) {
		return append([]string{}, s.smsLinks[workspaceID]...), nil
	})
}
