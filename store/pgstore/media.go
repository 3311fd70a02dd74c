package pgstore

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/ujumbe/messaging/record"
)

// qMessageMarkRead sets a message's read_at unless it is set (the first
// mark wins) and returns the message: one statement, which changes no
// other column. A concurrent mark is waited for and kept (COALESCE reads
// the row's latest version).
const qMessageMarkRead = `UPDATE messages SET read_at = COALESCE(read_at, $1) WHERE id = $2 AND workspace_id = $3
	RETURNING ` + messageCols

// MessageMarkRead implements driver.Store.
func (s *Store) MessageMarkRead(ctx context.Context, workspaceID, id string, at time.Time) (*record.Message, error) {
	m, err := scanMessage(s.pool.QueryRow(writeCtx(ctx), qMessageMarkRead, ts(at), id, workspaceID))
	if err != nil {
		return nil, interpretError(err)
	}
	return m, nil
}

// mediaCols are the columns of the media table, in scanMedia's order.
const mediaCols = `id, workspace_id, channel, purpose, kind, mime_type, size, filename, sha256, provider_media_id,
	animated, created_at, expires_at`

func scanMedia(row pgx.Row) (*record.UploadedMedia, error) {
	var m record.UploadedMedia
	var created, expires int64
	if err := row.Scan(&m.ID, &m.WorkspaceID, &m.Channel, &m.Purpose, &m.Kind, &m.MimeType, &m.Size, &m.Filename, &m.SHA256,
		&m.ProviderMediaID, &m.Animated, &created, &expires); err != nil {
		return nil, err
	}
	m.CreatedAt, m.ExpiresAt = fromTS(created), fromTS(expires)
	return &m, nil
}

// MediaCreate implements driver.Store. ErrNotFound if the workspace does
// not exist.
func (s *Store) MediaCreate(ctx context.Context, m *record.UploadedMedia) error {
	_, err := s.pool.Exec(writeCtx(ctx), `INSERT INTO media (`+mediaCols+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
		m.ID, m.WorkspaceID, m.Channel, m.Purpose, m.Kind, m.MimeType, m.Size, m.Filename, m.SHA256,
		m.ProviderMediaID, m.Animated, ts(m.CreatedAt), ts(m.ExpiresAt))
	return interpretError(err)
}

// MediaGet implements driver.Store.
func (s *Store) MediaGet(ctx context.Context, workspaceID, id string) (*record.UploadedMedia, error) {
	m, err := scanMedia(s.pool.QueryRow(ctx, `SELECT `+mediaCols+` FROM media WHERE id = $1 AND workspace_id = $2`, id, workspaceID))
	if err != nil {
		return nil, interpretError(err)
	}
	return m, nil
}
