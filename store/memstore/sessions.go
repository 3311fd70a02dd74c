package memstore

import (
	"context"
	"sort"

	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging"
)

// copySession returns a copy of st that shares nothing with it, with a
// non-nil Workspaces and SMSAccounts.
func copySession(st *driver.StoredSession) *driver.StoredSession {
	c := *st
	c.Workspaces = append([]string{}, st.Workspaces...)
	c.SMSAccounts = append([]string{}, st.SMSAccounts...)
	return &c
}

// SessionCreate implements driver.Store.
func (s *Store) SessionCreate(ctx context.Context, st *driver.StoredSession) error {
	return s.update(ctx, func() error {
		if _, ok := s.sessions[st.Hash]; ok || s.sessionIDs[st.ID] {
			return messaging.ErrConflict
		}
		s.sessions[st.Hash] = copySession(st)
		s.sessionIDs[st.ID] = true
		return nil
	})
}

// SessionGet implements driver.Store.
func (s *Store) SessionGet(ctx context.Context, hash string) (*driver.StoredSession, error) {
	return get(ctx, s, entry(s.sessions, hash), copySession)
}

// SessionDelete implements driver.Store.
func (s *Store) SessionDelete(ctx context.Context, hash string) error {
	return s.update(ctx, func() error {
		if st, ok := s.sessions[hash]; ok {
			delete(s.sessions, hash)
			delete(s.sessionIDs, st.ID)
		}
		return nil
	})
}

// SessionSweep implements driver.Store: the sessions that expired
// first go first.
func (s *Store) SessionSweep(ctx context.Context, p *driver.SessionSweepParams) (int, error) {
	return write(ctx, s, func() (int, error) {
		var expired []*driver.StoredSession
		for _, st := range s.sessions {
			if st.ExpiresAt.Before(p.Before) {
				expired = append(expired, st)
			}
		}
		sort.Slice(expired, func(i, j int) bool { return expired[i].ExpiresAt.Before(expired[j].ExpiresAt) })
		expired = expired[:min(len(expired), max(p.Limit, 0))]
		for _, st := range expired {
			delete(s.sessions, st.Hash)
			delete(s.sessionIDs, st.ID)
		}
		return len(expired), nil
	})
}

// SessionDeleteAll implements driver.Store.
func (s *Store) SessionDeleteAll(ctx context.Context) (int, error) {
	return write(ctx, s, func() (int, error) {
		n := len(s.sessions)
		clear(s.sessions)
		clear(s.sessionIDs)
		return n, nil
	})
}
