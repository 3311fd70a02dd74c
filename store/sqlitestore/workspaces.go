package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/store/internal/storedjson"
)

// WorkspaceCreate implements driver.Store.
func (s *Store) WorkspaceCreate(ctx context.Context, w *messaging.WorkspaceInfo) error {
	out, err := encodeStrings(w.OptOutKeywords)
	if err != nil {
		return interpretError(err)
	}
	in, err := encodeStrings(w.OptInKeywords)
	if err != nil {
		return interpretError(err)
	}
	return s.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO workspaces (id, name, created_at, outside_window, unconfirmed_sends, opt_out_keywords, opt_in_keywords)
			VALUES (?, ?, ?, ?, ?, ?, ?)`,
			w.ID, w.Name, fmtTime(w.CreatedAt), w.OutsideWindow, w.UnconfirmedSends, out, in); err != nil {
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

// qWorkspaceGet reads a workspace with its channels, one row per channel
// (one row with a NULL channel when none is connected), in one statement.
// The channels are sorted in Go: a sort in SQL costs more than the query.
const qWorkspaceGet = `SELECT w.id, w.name, w.created_at, w.outside_window, w.unconfirmed_sends, w.opt_out_keywords, w.opt_in_keywords, c.channel
	FROM workspaces AS w
	LEFT JOIN workspace_channels AS c ON c.workspace_id = w.id
	WHERE w.id = ?`

// WorkspaceGet implements driver.Store. Channels is sorted, and empty but
// not nil when no channel is connected.
//
// The workspace's columns repeat on every row: they are read from the first
// row only, the later rows' copies scanned into sql.RawBytes (no copy).
func (s *Store) WorkspaceGet(ctx context.Context, id string) (*messaging.WorkspaceInfo, error) {
	rows, err := s.query(ctx, qWorkspaceGet, id)
	if err != nil {
		return nil, interpretError(err)
	}
	defer rows.Close()
	var w *messaging.WorkspaceInfo
	var skip sql.RawBytes
	for rows.Next() {
		var channel sql.NullString
		if w == nil {
			w = &messaging.WorkspaceInfo{Channels: []string{}}
			err = rows.Scan(&w.ID, &w.Name, storedTime{&w.CreatedAt}, &w.OutsideWindow, &w.UnconfirmedSends,
				storedKeywords{&w.OptOutKeywords}, storedKeywords{&w.OptInKeywords}, &channel)
		} else {
			err = rows.Scan(&skip, &skip, &skip, &skip, &skip, &skip, &skip, &channel)
		}
		if err != nil {
			return nil, interpretError(err)
		}
		if channel.Valid {
			w.Channels = append(w.Channels, channel.String)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, interpretError(err)
	}
	if w == nil {
		return nil, messaging.ErrNotFound
	}
	slices.Sort(w.Channels)
	return w, nil
}

// WorkspaceList implements driver.Store: ids compare bytewise (the
// BINARY collation).
func (s *Store) WorkspaceList(ctx context.Context, p *driver.WorkspaceListParams) ([]*messaging.WorkspaceInfo, error) {
	rows, err := s.query(ctx, `SELECT w.id, w.name, w.created_at, w.outside_window, w.unconfirmed_sends, w.opt_out_keywords, w.opt_in_keywords,
			coalesce((SELECT group_concat(channel, ',') FROM (SELECT channel FROM workspace_channels WHERE workspace_id = w.id ORDER BY channel)), '')
		FROM workspaces AS w WHERE w.id > ? ORDER BY w.id LIMIT ?`, p.After, p.Limit)
	out, err := collect(rows, err, func(sc scanner) (*messaging.WorkspaceInfo, error) {
		var w messaging.WorkspaceInfo
		var chans string
		if err := sc.Scan(&w.ID, &w.Name, storedTime{&w.CreatedAt}, &w.OutsideWindow, &w.UnconfirmedSends,
			storedKeywords{&w.OptOutKeywords}, storedKeywords{&w.OptInKeywords}, &chans); err != nil {
			return nil, err
		}
		w.Channels = []string{}
		if chans != "" {
			w.Channels = strings.Split(chans, ",")
			slices.Sort(w.Channels)
		}
		return &w, nil
	})
	return out, interpretError(err)
}

// WorkspaceSetSettings implements driver.Store.
func (s *Store) WorkspaceSetSettings(ctx context.Context, p *driver.WorkspaceSettingsParams) error {
	// A NULL argument keeps the column: the setting is not changed.
	setOut, err := encodeSetting(p.OptOutKeywords)
	if err != nil {
		return interpretError(err)
	}
	setIn, err := encodeSetting(p.OptInKeywords)
	if err != nil {
		return interpretError(err)
	}
	q := `UPDATE workspaces SET outside_window = coalesce(?, outside_window), unconfirmed_sends = coalesce(?, unconfirmed_sends),
		opt_out_keywords = coalesce(?, opt_out_keywords), opt_in_keywords = coalesce(?, opt_in_keywords) WHERE id = ?`
	args := []any{p.OutsideWindow, p.UnconfirmedSends, setOut, setIn, p.WorkspaceID}
	if p.Expect != nil {
		out, err := encodeStrings(p.Expect.OptOut)
		if err != nil {
			return interpretError(err)
		}
		in, err := encodeStrings(p.Expect.OptIn)
		if err != nil {
			return interpretError(err)
		}
		q += ` AND opt_out_keywords = ? AND opt_in_keywords = ?`
		args = append(args, out, in)
	}
	return s.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		n, err := affected(tx.ExecContext(ctx, q, args...))
		if err != nil || n == 1 {
			return err
		}
		var one int
		if err := tx.QueryRowContext(ctx, `SELECT 1 FROM workspaces WHERE id = ?`, p.WorkspaceID).Scan(&one); err != nil {
			return err // sql.ErrNoRows: not found
		}
		return messaging.ErrConflict // the lists changed since the caller read them
	})
}

// encodeSetting returns the stored form of a keyword list to set, nil
// (keep the column) for nil.
func encodeSetting(list *[]string) (*string, error) {
	if list == nil {
		return nil, nil
	}
	e, err := encodeStrings(*list)
	return &e, err
}

// storedKeywords scans a keyword list stored by encodeStrings; "[]" is
// nil (the defaults).
type storedKeywords struct{ list *[]string }

// Scan implements sql.Scanner.
func (k storedKeywords) Scan(v any) error {
	var s string
	switch v := v.(type) {
	case string:
		s = v
	case []byte:
		s = string(v) // a copy: the driver may reuse v
	default:
		return fmt.Errorf("keywords: unexpected %T", v)
	}
	list, err := storedjson.DecodeStrings(&s)
	if err != nil {
		return fmt.Errorf("keywords: %w", err)
	}
	*k.list = nil
	if len(list) > 0 {
		*k.list = list
	}
	return nil
}

// WorkspaceSetChannel implements driver.Store.
func (s *Store) WorkspaceSetChannel(ctx context.Context, p *driver.ChannelParams) error {
	return s.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var one int
		if err := tx.QueryRowContext(ctx, `SELECT 1 FROM workspaces WHERE id = ?`, p.WorkspaceID).Scan(&one); err != nil {
			return err
		}
		err := setFlag(ctx, tx, p.WorkspaceID, p.Channel, p.Connected, fmtTime(p.At))
		if err == nil && !p.Connected {
			err = disconnectConnection(ctx, tx, p)
		}
		return err
	})
}

const apiKeyCols = `id, workspace_id, prefix, hash, scopes, expires_at, revoked_at, created_at, name, last_used_at`

func scanAPIKey(sc scanner) (*messaging.APIKey, error) {
	var k messaging.APIKey
	var scopes *string
	if err := sc.Scan(&k.ID, &k.WorkspaceID, &k.Prefix, &k.Hash, &scopes, storedTimePtr{&k.ExpiresAt}, storedTimePtr{&k.RevokedAt},
		storedTime{&k.CreatedAt}, &k.Name, storedTimePtr{&k.LastUsedAt}); err != nil {
		return nil, err
	}
	var err error
	if k.Scopes, err = storedjson.DecodeStrings(scopes); err != nil {
		return nil, err
	}
	return &k, nil
}

func (s *Store) queryAPIKeys(ctx context.Context, query string, args ...any) ([]*messaging.APIKey, error) {
	rows, err := s.query(ctx, query, args...)
	out, err := collect(rows, err, scanAPIKey)
	return out, interpretError(err)
}

// APIKeyCreate implements driver.Store. ErrNotFound if the workspace does
// not exist; ErrConflict if the id or the hash is taken.
func (s *Store) APIKeyCreate(ctx context.Context, k *messaging.APIKey) error {
	scopes, err := storedjson.EncodeStrings(k.Scopes)
	if err != nil {
		return interpretError(err)
	}
	var hash any
	if k.Hash != nil {
		hash = slices.Clone(k.Hash)
	}
	return s.writeOne(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO api_keys (`+apiKeyCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			k.ID, k.WorkspaceID, k.Prefix, hash, scopes, fmtTimePtr(k.ExpiresAt), fmtTimePtr(k.RevokedAt), fmtTime(k.CreatedAt),
			k.Name, fmtTimePtr(k.LastUsedAt))
		return err
	})
}

// qAPIKeysByPrefix finds the keys of a lookup prefix; they are ordered in
// Go (see sortKeys).
const qAPIKeysByPrefix = `SELECT ` + apiKeyCols + ` FROM api_keys WHERE prefix = ?`

// APIKeysByPrefix implements driver.Store. Keys come oldest first.
func (s *Store) APIKeysByPrefix(ctx context.Context, prefix string) ([]*messaging.APIKey, error) {
	keys, err := s.queryAPIKeys(ctx, qAPIKeysByPrefix, prefix)
	sortKeys(keys)
	return keys, err
}

// sortKeys orders keys oldest first (by creation time, then id).
func sortKeys(keys []*messaging.APIKey) {
	slices.SortFunc(keys, func(a, b *messaging.APIKey) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}

// APIKeyList implements driver.Store.
func (s *Store) APIKeyList(ctx context.Context, workspaceID string) ([]*messaging.APIKey, error) {
	return s.queryAPIKeys(ctx, `SELECT `+apiKeyCols+` FROM api_keys WHERE workspace_id = ? ORDER BY created_at, id`, workspaceID)
}

// APIKeyRevoke implements driver.Store. Revoking a revoked key keeps its
// first RevokedAt.
func (s *Store) APIKeyRevoke(ctx context.Context, p *driver.APIKeyRevokeParams) error {
	return s.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if err := exists(ctx, tx, "api_keys", p.WorkspaceID, p.ID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE api_keys SET revoked_at = ? WHERE id = ? AND workspace_id = ? AND revoked_at IS NULL`,
			fmtTime(p.At), p.ID, p.WorkspaceID)
		return err
	})
}

// APIKeyUpdate implements driver.Store.
func (s *Store) APIKeyUpdate(ctx context.Context, p *driver.APIKeyUpdateParams) error {
	scopes, err := storedjson.EncodeStrings(p.Scopes)
	if err != nil {
		return interpretError(err)
	}
	return s.writeOne(ctx, func(ctx context.Context, tx *sql.Tx) error {
		return oneRow(tx.ExecContext(ctx, `UPDATE api_keys SET scopes = ?, expires_at = ? WHERE id = ? AND workspace_id = ?`,
			scopes, fmtTimePtr(p.ExpiresAt), p.ID, p.WorkspaceID))
	})
}

// APIKeyTouch implements driver.Store. The stored times are fixed-width
// text, so comparing them as text compares the times.
func (s *Store) APIKeyTouch(ctx context.Context, p *driver.APIKeyTouchParams) error {
	return s.writeOne(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE api_keys SET last_used_at = ?1
			WHERE id = ?2 AND workspace_id = ?3 AND (last_used_at IS NULL OR last_used_at < ?1)`,
			fmtTime(p.At), p.ID, p.WorkspaceID)
		return err
	})
}
