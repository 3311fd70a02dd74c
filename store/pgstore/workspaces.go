package pgstore

import (
	"context"
	"slices"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/jackc/pgx/v5"
	"github.com/ujumbe/messaging"
)

// WorkspaceCreate implements driver.Store.
func (s *Store) WorkspaceCreate(ctx context.Context, w *messaging.WorkspaceInfo) error {
	ctx = writeCtx(ctx)
	return s.tx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO workspaces (id, name, created_at, outside_window, unconfirmed_sends, opt_out_keywords, opt_in_keywords)
			VALUES ($1, $2, $3, $4, $5, $6, $7)`,
			w.ID, w.Name, ts(w.CreatedAt), w.OutsideWindow, w.UnconfirmedSends, nonNil(w.OptOutKeywords), nonNil(w.OptInKeywords)); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO workspace_channels (workspace_id, channel, connected_at)
			SELECT $1, c, $3 FROM unnest($2::text[]) AS c ON CONFLICT DO NOTHING`,
			w.ID, nonNil(w.Channels), ts(w.CreatedAt))
		return err
	})
}

// WorkspaceGet implements driver.Store. Channels is sorted, and empty but
// not nil when no channel is connected.
func (s *Store) WorkspaceGet(ctx context.Context, id string) (*messaging.WorkspaceInfo, error) {
	var w messaging.WorkspaceInfo
	var created int64
	err := s.pool.QueryRow(ctx, `SELECT id, name, created_at,
			coalesce((SELECT array_agg(channel ORDER BY channel) FROM workspace_channels WHERE workspace_id = w.id), '{}'), outside_window,
			unconfirmed_sends, opt_out_keywords, opt_in_keywords
		FROM workspaces w WHERE id = $1`, id).Scan(&w.ID, &w.Name, &created, &w.Channels, &w.OutsideWindow, &w.UnconfirmedSends, &w.OptOutKeywords, &w.OptInKeywords)
	if err != nil {
		return nil, interpretError(err)
	}
	w.CreatedAt = fromTS(created)
	w.Channels = nonNil(w.Channels)
	w.OptOutKeywords, w.OptInKeywords = nilIfEmpty(w.OptOutKeywords), nilIfEmpty(w.OptInKeywords)
	return &w, nil
}

// nilIfEmpty returns s, or nil when it is empty (a keyword list of the
// defaults).
func nilIfEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}

// WorkspaceList implements driver.Store: ids compare bytewise (COLLATE
// "C").
func (s *Store) WorkspaceList(ctx context.Context, p *driver.WorkspaceListParams) ([]*messaging.WorkspaceInfo, error) {
	out, err := queryAll(ctx, s.pool, func(row pgx.Row) (*messaging.WorkspaceInfo, error) {
		var w messaging.WorkspaceInfo
		var created int64
		if err := row.Scan(&w.ID, &w.Name, &created, &w.Channels, &w.OutsideWindow, &w.UnconfirmedSends, &w.OptOutKeywords, &w.OptInKeywords); err != nil {
			return nil, err
		}
		w.CreatedAt = fromTS(created)
		w.Channels = nonNil(w.Channels)
		w.OptOutKeywords, w.OptInKeywords = nilIfEmpty(w.OptOutKeywords), nilIfEmpty(w.OptInKeywords)
		return &w, nil
	}, `SELECT id, name, created_at,
			coalesce((SELECT array_agg(channel ORDER BY channel) FROM workspace_channels WHERE workspace_id = w.id), '{}'), outside_window,
			unconfirmed_sends, opt_out_keywords, opt_in_keywords
		FROM workspaces w WHERE id > $1 ORDER BY id LIMIT $2`, p.After, p.Limit)
	return out, interpretError(err)
}

// WorkspaceSetSettings implements driver.Store.
func (s *Store) WorkspaceSetSettings(ctx context.Context, p *driver.WorkspaceSettingsParams) error {
	ctx = writeCtx(ctx)
	// A NULL argument keeps the column: the setting is not changed.
	var out, in []string
	if p.OptOutKeywords != nil {
		out = nonNil(*p.OptOutKeywords)
	}
	if p.OptInKeywords != nil {
		in = nonNil(*p.OptInKeywords)
	}
	q := `UPDATE workspaces SET outside_window = coalesce($2, outside_window), unconfirmed_sends = coalesce($5, unconfirmed_sends),
		opt_out_keywords = coalesce($3::text[], opt_out_keywords), opt_in_keywords = coalesce($4::text[], opt_in_keywords) WHERE id = $1`
	args := []any{p.WorkspaceID, p.OutsideWindow, out, in, p.UnconfirmedSends}
	if p.Expect != nil {
		q += ` AND opt_out_keywords = $6::text[] AND opt_in_keywords = $7::text[]`
		args = append(args, nonNil(p.Expect.OptOut), nonNil(p.Expect.OptIn))
	}
	tag, err := s.pool.Exec(ctx, q, args...)
	if err != nil {
		return interpretError(err)
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	var exists bool
	if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM workspaces WHERE id = $1)`, p.WorkspaceID).Scan(&exists); err != nil {
		return interpretError(err)
	}
	if !exists {
		return messaging.ErrNotFound
	}
	return messaging.ErrConflict // the lists changed since the caller read them
}

// WorkspaceSetChannel implements driver.Store.
func (s *Store) WorkspaceSetChannel(ctx context.Context, p *driver.ChannelParams) error {
	ctx = writeCtx(ctx)
	if p.Connected {
		// A missing workspace fails the foreign key: ErrNotFound.
		_, err := s.pool.Exec(ctx, `INSERT INTO workspace_channels (workspace_id, channel, connected_at)
			VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, p.WorkspaceID, p.Channel, ts(p.At))
		return interpretError(err)
	}
	// One statement: the channel's row goes, its connection (if any) is
	// marked disconnected and kept.
	var one int
	err := s.pool.QueryRow(ctx, `WITH d AS (DELETE FROM workspace_channels WHERE workspace_id = $1 AND channel = $2),
		c AS (UPDATE channel_connections SET status = $3, updated_at = $4 WHERE workspace_id = $1 AND channel = $2)
		SELECT 1 FROM workspaces WHERE id = $1`, p.WorkspaceID, p.Channel, record.ConnectionDisconnected, ts(p.At)).Scan(&one)
	return interpretError(err)
}

const apiKeyCols = `id, workspace_id, prefix, hash, scopes, expires_at, revoked_at, created_at, name, last_used_at`

func scanAPIKey(row pgx.Row) (*messaging.APIKey, error) {
	var k messaging.APIKey
	var expires, revoked, used *int64
	var created int64
	if err := row.Scan(&k.ID, &k.WorkspaceID, &k.Prefix, &k.Hash, &k.Scopes, &expires, &revoked, &created, &k.Name, &used); err != nil {
		return nil, err
	}
	k.ExpiresAt, k.RevokedAt, k.CreatedAt, k.LastUsedAt = fromTSPtr(expires), fromTSPtr(revoked), fromTS(created), fromTSPtr(used)
	return &k, nil
}

func (s *Store) queryAPIKeys(ctx context.Context, query string, args ...any) ([]*messaging.APIKey, error) {
	out, err := queryAll(ctx, s.pool, scanAPIKey, query, args...)
	return out, interpretError(err)
}

// APIKeyCreate implements driver.Store. ErrNotFound if the workspace does
// not exist; ErrConflict if the id or the hash is taken.
func (s *Store) APIKeyCreate(ctx context.Context, k *messaging.APIKey) error {
	ctx = writeCtx(ctx)
	_, err := s.pool.Exec(ctx, `INSERT INTO api_keys (`+apiKeyCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		k.ID, k.WorkspaceID, k.Prefix, slices.Clone(k.Hash), k.Scopes, tsPtr(k.ExpiresAt), tsPtr(k.RevokedAt), ts(k.CreatedAt),
		k.Name, tsPtr(k.LastUsedAt))
	return interpretError(err)
}

// APIKeysByPrefix implements driver.Store. Keys come oldest first.
func (s *Store) APIKeysByPrefix(ctx context.Context, prefix string) ([]*messaging.APIKey, error) {
	return s.queryAPIKeys(ctx, `SELECT `+apiKeyCols+` FROM api_keys WHERE prefix = $1 ORDER BY created_at, id`, prefix)
}

// APIKeyList implements driver.Store.
func (s *Store) APIKeyList(ctx context.Context, workspaceID string) ([]*messaging.APIKey, error) {
	return s.queryAPIKeys(ctx, `SELECT `+apiKeyCols+` FROM api_keys WHERE workspace_id = $1 ORDER BY created_at, id`, workspaceID)
}

// APIKeyRevoke implements driver.Store. Revoking a revoked key keeps its
// first RevokedAt.
func (s *Store) APIKeyRevoke(ctx context.Context, p *driver.APIKeyRevokeParams) error {
	ctx = writeCtx(ctx)
	var one int
	err := s.pool.QueryRow(ctx, `WITH u AS (
			UPDATE api_keys SET revoked_at = $3 WHERE id = $1 AND workspace_id = $2 AND revoked_at IS NULL)
		SELECT 1 FROM api_keys WHERE id = $1 AND workspace_id = $2`, p.ID, p.WorkspaceID, ts(p.At)).Scan(&one)
	return interpretError(err)
}

// APIKeyUpdate implements driver.Store.
func (s *Store) APIKeyUpdate(ctx context.Context, p *driver.APIKeyUpdateParams) error {
	ctx = writeCtx(ctx)
	tag, err := s.pool.Exec(ctx, `UPDATE api_keys SET scopes = $3, expires_at = $4 WHERE id = $1 AND workspace_id = $2`,
		p.ID, p.WorkspaceID, nonNil(p.Scopes), tsPtr(p.ExpiresAt))
	if err != nil {
		return interpretError(err)
	}
	if tag.RowsAffected() == 0 {
		return messaging.ErrNotFound
	}
	return nil
}

// nonNil returns s, or an empty slice when s is nil.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// APIKeyTouch implements driver.Store.
func (s *Store) APIKeyTouch(ctx context.Context, p *driver.APIKeyTouchParams) error {
	ctx = writeCtx(ctx)
	_, err := s.pool.Exec(ctx, `UPDATE api_keys SET last_used_at = $3
		WHERE id = $1 AND workspace_id = $2 AND (last_used_at IS NULL OR last_used_at < $3)`, p.ID, p.WorkspaceID, ts(p.At))
	return interpretError(err)
}
