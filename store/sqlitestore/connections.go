package sqlitestore

import (
	"context"
	"database/sql"
	"slices"

	"github.com/ujumbe/messaging"
)

const connectionCols = `workspace_id, channel, account_id, waba_id, display_phone_number, token_sealed, token_hint,
	status, status_reason, generation, templates_synced_at, template_sync_error, created_at, updated_at`

func scanConnection(sc scanner) (*messaging.ChannelConnection, error) {
	var c messaging.ChannelConnection
	if err := sc.Scan(&c.WorkspaceID, &c.Channel, &c.AccountID, &c.WABAID, &c.DisplayPhoneNumber, &c.TokenSealed, &c.TokenHint,
		&c.Status, &c.StatusReason, &c.Generation, storedTimePtr{&c.TemplatesSyncedAt}, &c.TemplateSyncError,
		storedTime{&c.CreatedAt}, storedTime{&c.UpdatedAt}); err != nil {
		return nil, err
	}
	return &c, nil
}

// disconnectConnection marks the connection of p's workspace on p's
// channel, if any, disconnected (WorkspaceSetChannel with Connected false).
func disconnectConnection(ctx context.Context, tx *sql.Tx, p *messaging.ChannelParams) error {
	_, err := tx.ExecContext(ctx, `UPDATE channel_connections SET status = ?, updated_at = ? WHERE workspace_id = ? AND channel = ?`,
		messaging.ConnectionDisconnected, fmtTime(p.At), p.WorkspaceID, p.Channel)
	return err
}

// ConnectionPut implements messaging.Store. It sets c.Generation, and
// c.CreatedAt to the replaced connection's, as stored. The channel's
// connected_at is c.UpdatedAt when it was not connected.
func (s *Store) ConnectionPut(ctx context.Context, c *messaging.ChannelConnection) error {
	var token any
	if c.TokenSealed != nil {
		token = slices.Clone(c.TokenSealed)
	}
	var gen int64
	var created string
	err := s.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var one int
		if err := tx.QueryRowContext(ctx, `SELECT 1 FROM workspaces WHERE id = ?`, c.WorkspaceID).Scan(&one); err != nil {
			return err
		}
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM channel_connections
			WHERE workspace_id <> ? AND status <> ? AND ((channel = ? AND account_id = ?) OR (? <> '' AND waba_id = ?)) LIMIT 1`,
			c.WorkspaceID, messaging.ConnectionDisconnected, c.Channel, c.AccountID, c.WABAID, c.WABAID).Scan(&one)
		if err == nil {
			return messaging.ErrConflict
		}
		if err != sql.ErrNoRows {
			return err
		}
		gen, created = 0, fmtTime(c.CreatedAt)
		err = tx.QueryRowContext(ctx, `SELECT generation, created_at FROM channel_connections WHERE workspace_id = ? AND channel = ?`,
			c.WorkspaceID, c.Channel).Scan(&gen, &created)
		if err != nil && err != sql.ErrNoRows {
			return err
		}
		gen++
		if _, err := tx.ExecContext(ctx, `INSERT INTO channel_connections (`+connectionCols+`)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (workspace_id, channel) DO UPDATE SET account_id = excluded.account_id, waba_id = excluded.waba_id,
				display_phone_number = excluded.display_phone_number, token_sealed = excluded.token_sealed,
				token_hint = excluded.token_hint, status = excluded.status, status_reason = excluded.status_reason,
				generation = excluded.generation, templates_synced_at = excluded.templates_synced_at,
				template_sync_error = excluded.template_sync_error, updated_at = excluded.updated_at`,
			c.WorkspaceID, c.Channel, c.AccountID, c.WABAID, c.DisplayPhoneNumber, token, c.TokenHint,
			c.Status, c.StatusReason, gen, fmtTimePtr(c.TemplatesSyncedAt), c.TemplateSyncError, created, fmtTime(c.UpdatedAt)); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO workspace_channels (workspace_id, channel, connected_at)
			VALUES (?, ?, ?) ON CONFLICT DO NOTHING`, c.WorkspaceID, c.Channel, fmtTime(c.UpdatedAt))
		return err
	})
	if err != nil {
		return err
	}
	createdAt, err := parseTime(created)
	if err != nil {
		return interpretError(err)
	}
	c.Generation, c.CreatedAt = gen, createdAt
	return nil
}

// ConnectionGet implements messaging.Store.
func (s *Store) ConnectionGet(ctx context.Context, workspaceID, channel string) (*messaging.ChannelConnection, error) {
	c, err := scanConnection(s.r.QueryRowContext(ctx, `SELECT `+connectionCols+` FROM channel_connections
		WHERE workspace_id = ? AND channel = ?`, workspaceID, channel))
	if err != nil {
		return nil, interpretError(err)
	}
	return c, nil
}

// ConnectionList implements messaging.Store.
func (s *Store) ConnectionList(ctx context.Context, p *messaging.ConnectionListParams) ([]*messaging.ChannelConnection, error) {
	q := `SELECT ` + connectionCols + ` FROM channel_connections WHERE 1 = 1`
	var args []any
	for _, f := range []struct{ col, v string }{{"workspace_id", p.WorkspaceID}, {"channel", p.Channel}, {"account_id", p.AccountID},
		{"waba_id", p.WABAID}, {"status", p.Status}} {
		if f.v != "" {
			q += ` AND ` + f.col + ` = ?`
			args = append(args, f.v)
		}
	}
	rows, err := s.r.QueryContext(ctx, q+` ORDER BY workspace_id, channel`, args...)
	out, err := collect(rows, err, scanConnection)
	return out, interpretError(err)
}

// ConnectionUpdate implements messaging.Store. A connection that does not
// exist is not changed (false, no error).
func (s *Store) ConnectionUpdate(ctx context.Context, p *messaging.ConnectionUpdateParams) (bool, error) {
	set := `updated_at = ?`
	args := []any{fmtTime(p.At)}
	// A verdict on credentials never revives a disconnected connection.
	live := ""
	if p.Status != "" {
		live = ` AND status <> 'disconnected'`
		set += `, status = ?, status_reason = ?`
		args = append(args, p.Status, p.StatusReason)
	}
	if p.SyncedAt != nil {
		set += `, templates_synced_at = ?`
		args = append(args, fmtTime(*p.SyncedAt))
	}
	if p.SyncError != "" || p.SyncedAt != nil {
		set += `, template_sync_error = ?`
		args = append(args, p.SyncError)
	}
	args = append(args, p.WorkspaceID, p.Channel, p.Generation)
	var n int64
	err := s.writeOne(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var err error
		n, err = affected(tx.ExecContext(ctx, `UPDATE channel_connections SET `+set+`
			WHERE workspace_id = ? AND channel = ? AND generation = ?`+live, args...))
		return err
	})
	return err == nil && n == 1, err
}

// LeaseAcquire implements messaging.Store. Writes are serialized, and the
// take is one statement.
func (s *Store) LeaseAcquire(ctx context.Context, p *messaging.LeaseParams) (bool, error) {
	var n int64
	err := s.writeOne(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var err error
		n, err = affected(tx.ExecContext(ctx, `INSERT INTO leases (name, owner, until) VALUES (?, ?, ?)
			ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, until = excluded.until
			WHERE leases.until <= ? OR leases.owner = excluded.owner`,
			p.Name, p.Owner, fmtTime(p.Until), fmtTime(p.Now)))
		return err
	})
	return err == nil && n == 1, err
}
