package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"slices"
	"time"

	"github.com/ujumbe/messaging"
)

// WorkspaceCreate implements messaging.Store.
func (s *Store) WorkspaceCreate(ctx context.Context, w *messaging.WorkspaceInfo) error {
	return s.writeTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO workspaces (id, name, created_at) VALUES (?, ?, ?)`,
			w.ID, w.Name, fmtTime(w.CreatedAt)); err != nil {
			return err
		}
		for _, c := range w.Channels {
			if _, err := tx.ExecContext(ctx, `INSERT INTO workspace_channels (workspace_id, channel, connected_at)
				VALUES (?, ?, ?) ON CONFLICT DO NOTHING`, w.ID, c, fmtTime(w.CreatedAt)); err != nil {
				return err
			}
		}
		return nil
	})
}

// WorkspaceGet implements messaging.Store. Channels is sorted, and empty but
// not nil when no channel is connected.
func (s *Store) WorkspaceGet(ctx context.Context, id string) (*messaging.WorkspaceInfo, error) {
	var w *messaging.WorkspaceInfo
	err := s.readTx(ctx, func(tx *sql.Tx) error {
		var ws messaging.WorkspaceInfo
		var created string
		if err := tx.QueryRowContext(ctx, `SELECT id, name, created_at FROM workspaces WHERE id = ?`, id).
			Scan(&ws.ID, &ws.Name, &created); err != nil {
			return err
		}
		t, err := parseTime(created)
		if err != nil {
			return err
		}
		ws.CreatedAt = t
		rows, err := tx.QueryContext(ctx, `SELECT channel FROM workspace_channels WHERE workspace_id = ? ORDER BY channel`, id)
		if err != nil {
			return err
		}
		defer rows.Close()
		ws.Channels = []string{}
		for rows.Next() {
			var c string
			if err := rows.Scan(&c); err != nil {
				return err
			}
			ws.Channels = append(ws.Channels, c)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		w = &ws
		return nil
	})
	if err != nil {
		return nil, err
	}
	return w, nil
}

// WorkspaceSetChannel implements messaging.Store.
func (s *Store) WorkspaceSetChannel(ctx context.Context, p *messaging.ChannelParams) error {
	return s.writeTx(ctx, func(tx *sql.Tx) error {
		var one int
		if err := tx.QueryRowContext(ctx, `SELECT 1 FROM workspaces WHERE id = ?`, p.WorkspaceID).Scan(&one); err != nil {
			return err
		}
		var err error
		if p.Connected {
			_, err = tx.ExecContext(ctx, `INSERT INTO workspace_channels (workspace_id, channel, connected_at)
				VALUES (?, ?, ?) ON CONFLICT DO NOTHING`, p.WorkspaceID, p.Channel, fmtTime(p.At))
		} else {
			_, err = tx.ExecContext(ctx, `DELETE FROM workspace_channels WHERE workspace_id = ? AND channel = ?`,
				p.WorkspaceID, p.Channel)
		}
		return err
	})
}

const apiKeyCols = `id, workspace_id, prefix, hash, scopes, expires_at, revoked_at, created_at`

func scanAPIKey(sc scanner) (*messaging.APIKey, error) {
	var k messaging.APIKey
	var scopes, expires, revoked sql.NullString
	var created string
	if err := sc.Scan(&k.ID, &k.WorkspaceID, &k.Prefix, &k.Hash, &scopes, &expires, &revoked, &created); err != nil {
		return nil, err
	}
	var err error
	if k.Scopes, err = decodeSlice[string](scopes); err != nil {
		return nil, err
	}
	if k.ExpiresAt, err = parseTimePtr(expires); err != nil {
		return nil, err
	}
	if k.RevokedAt, err = parseTimePtr(revoked); err != nil {
		return nil, err
	}
	if k.CreatedAt, err = parseTime(created); err != nil {
		return nil, err
	}
	return &k, nil
}

func (s *Store) queryAPIKeys(ctx context.Context, query string, args ...any) ([]*messaging.APIKey, error) {
	rows, err := s.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, interpretError(err)
	}
	defer rows.Close()
	var out []*messaging.APIKey
	for rows.Next() {
		k, err := scanAPIKey(rows)
		if err != nil {
			return nil, interpretError(err)
		}
		out = append(out, k)
	}
	return out, interpretError(rows.Err())
}

// APIKeyCreate implements messaging.Store. ErrNotFound if the workspace does
// not exist; ErrConflict if the id or the hash is taken.
func (s *Store) APIKeyCreate(ctx context.Context, k *messaging.APIKey) error {
	scopes, err := encodeSlice(k.Scopes)
	if err != nil {
		return interpretError(err)
	}
	var hash any
	if k.Hash != nil {
		hash = slices.Clone(k.Hash)
	}
	_, err = s.w.ExecContext(ctx, `INSERT INTO api_keys (`+apiKeyCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		k.ID, k.WorkspaceID, k.Prefix, hash, scopes, fmtTimePtr(k.ExpiresAt), fmtTimePtr(k.RevokedAt), fmtTime(k.CreatedAt))
	return interpretError(err)
}

// APIKeysByPrefix implements messaging.Store. Keys come oldest first.
func (s *Store) APIKeysByPrefix(ctx context.Context, prefix string) ([]*messaging.APIKey, error) {
	return s.queryAPIKeys(ctx, `SELECT `+apiKeyCols+` FROM api_keys WHERE prefix = ? ORDER BY created_at, id`, prefix)
}

// APIKeyList implements messaging.Store.
func (s *Store) APIKeyList(ctx context.Context, workspaceID string) ([]*messaging.APIKey, error) {
	return s.queryAPIKeys(ctx, `SELECT `+apiKeyCols+` FROM api_keys WHERE workspace_id = ? ORDER BY created_at, id`, workspaceID)
}

// APIKeyRevoke implements messaging.Store. Revoking a revoked key keeps its
// first RevokedAt.
func (s *Store) APIKeyRevoke(ctx context.Context, workspaceID, id string, at time.Time) error {
	return s.writeTx(ctx, func(tx *sql.Tx) error {
		var one int
		if err := tx.QueryRowContext(ctx, `SELECT 1 FROM api_keys WHERE id = ? AND workspace_id = ?`, id, workspaceID).Scan(&one); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE api_keys SET revoked_at = ? WHERE id = ? AND workspace_id = ? AND revoked_at IS NULL`,
			fmtTime(at), id, workspaceID)
		return err
	})
}

// encodeSlice returns the JSON text of s, or nil (SQL NULL) when s is nil.
func encodeSlice[T any](s []T) (any, error) {
	if s == nil {
		return nil, nil
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	return string(b), nil
}

// decodeSlice decodes what encodeSlice stored: nil for NULL, otherwise a
// non-nil slice.
func decodeSlice[T any](s sql.NullString) ([]T, error) {
	if !s.Valid {
		return nil, nil
	}
	out := []T{}
	if err := json.Unmarshal([]byte(s.String), &out); err != nil {
		return nil, err
	}
	return out, nil
}
