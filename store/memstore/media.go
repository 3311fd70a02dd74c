package memstore

import (
	"context"
	"time"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/record"
)

// MessageMarkRead implements driver.Store.
func (s *Store) MessageMarkRead(ctx context.Context, workspaceID, id string, at time.Time) (*messaging.Message, error) {
	return write(ctx, s, func() (*messaging.Message, error) {
		m, ok := s.messageOf(workspaceID, id)
		if !ok {
			return nil, messaging.ErrNotFound
		}
		if m.ReadAt == nil {
			t := at.UTC()
			m.ReadAt = &t
		}
		return m.Clone(), nil
	})
}

// MediaCreate implements driver.Store.
func (s *Store) MediaCreate(ctx context.Context, m *record.UploadedMedia) error {
	return s.update(ctx, func() error {
		if _, dup := s.media[m.ID]; dup {
			return messaging.ErrConflict
		}
		c := *m
		c.CreatedAt, c.ExpiresAt = m.CreatedAt.UTC(), m.ExpiresAt.UTC()
		s.media[m.ID] = &c
		return nil
	})
}

// MediaGet implements driver.Store.
func (s *Store) MediaGet(ctx context.Context, workspaceID, id string) (*record.UploadedMedia, error) {
	return get(ctx, s, func() (*record.UploadedMedia, bool) {
		m, ok := s.media[id]
		return m, ok && m.WorkspaceID == workspaceID
	}, func(m *record.UploadedMedia) *record.UploadedMedia { c := *m; return &c })
}
