package pgstore

import (
	"context"
	"errors"
	"time"

	"github.com/ujumbe/messaging/record"
)

// errNotBuilt is returned by the methods below until they are built.
var errNotBuilt = errors.New("pgstore: not built yet")

// MessageMarkRead implements driver.Store.
func (s *Store) MessageMarkRead(ctx context.Context, workspaceID, id string, at time.Time) (*record.Message, error) {
	return nil, errNotBuilt
}

// MediaCreate implements driver.Store.
func (s *Store) MediaCreate(ctx context.Context, m *record.UploadedMedia) error {
	return errNotBuilt
}

// MediaGet implements driver.Store.
func (s *Store) MediaGet(ctx context.Context, workspaceID, id string) (*record.UploadedMedia, error) {
	return nil, errNotBuilt
}
