package sqlitestore

import (
	"context"
	"database/sql"
	"time"

	"github.com/ujumbe/messaging/record"
)

// qMessageMarkRead sets a message's read_at unless it is set (the first
// mark wins) and returns the message: one statement, which changes no
// other column.
const qMessageMarkRead = `UPDATE messages SET read_at = COALESCE(read_at, ?) WHERE id = ? AND workspace_id = ?
	RETURNING ` + messageCols

// MessageMarkRead implements driver.Store.
func (s *Store) MessageMarkRead(ctx context.Context, workspaceID, id string, at time.Time) (*record.Message, error) {
	var m *record.Message
	err := s.writeOne(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var err error
		m, err = scanMessage(s.rowTx(ctx, tx, qMessageMarkRead, fmtTime(at), id, workspaceID))
		return err
	})
	if err != nil {
		return nil, interpretError(err)
	}
	return m, nil
}

// mediaCols are the columns of the media table, in scanMedia's order.
const mediaCols = `id, workspace_id, channel, purpose, kind, mime_type, size, filename, sha256, provider_media_id,
	animated, created_at, expires_at`

func scanMedia(sc scanner) (*record.UploadedMedia, error) {
	var m record.UploadedMedia
	if err := sc.Scan(&m.ID, &m.WorkspaceID, &m.Channel, &m.Purpose, &m.Kind, &m.MimeType, &m.Size, &m.Filename, &m.SHA256,
		&m.ProviderMediaID, &m.Animated, storedTime{&m.CreatedAt}, storedTime{&m.ExpiresAt}); err != nil {
		return nil, err
	}
	return &m, nil
}

// MediaCreate implements driver.Store. ErrNotFound if the workspace does
// not exist.
func (s *Store) MediaCreate(ctx context.Context, m *record.UploadedMedia) error {
	return s.writeOne(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO media (`+mediaCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			m.ID, m.WorkspaceID, m.Channel, m.Purpose, m.Kind, m.MimeType, m.Size, m.Filename, m.SHA256,
			m.ProviderMediaID, m.Animated, fmtTime(m.CreatedAt), fmtTime(m.ExpiresAt))
		return err
	})
}

// MediaGet implements driver.Store.
func (s *Store) MediaGet(ctx context.Context, workspaceID, id string) (*record.UploadedMedia, error) {
	m, err := scanMedia(s.r.QueryRowContext(ctx, `SELECT `+mediaCols+` FROM media WHERE id = ? AND workspace_id = ?`, id, workspaceID))
	if err != nil {
		return nil, interpretError(err)
	}
	return m, nil
}
