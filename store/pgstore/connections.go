package pgstore

import (
	"context"
	"slices"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/ujumbe/messaging"
)

const connectionCols = `workspace_id, channel, account_id, waba_id, display_phone_number, token_sealed, token_hint,
	status, status_reason, generation, templates_synced_at, template_sync_error, created_at, updated_at`

func scanConnection(row pgx.Row) (*messaging.ChannelConnection, error) {
	var c messaging.ChannelConnection
	var synced *int64
	var created, updated int64
	if err := row.Scan(&c.WorkspaceID, &c.Channel, &c.AccountID, &c.WABAID, &c.DisplayPhoneNumber, &c.TokenSealed, &c.TokenHint,
		&c.Status, &c.StatusReason, &c.Generation, &synced, &c.TemplateSyncError, &created, &updated); err != nil {
		return nil, err
	}
	c.TemplatesSyncedAt, c.CreatedAt, c.UpdatedAt = fromTSPtr(synced), fromTS(created), fromTS(updated)
	return &c, nil
}

// ConnectionPut implements messaging.Store. It sets c.Generation, and
// c.CreatedAt to the replaced connection's, as stored. The puts of a schema
// are serialised by a transaction-scoped advisory lock, so that the check
// of another workspace's WABA id and the write are atomic across
// instances; the channel and account id are also guarded by a unique
// index. The channel's connected_at is c.UpdatedAt when it was not
// connected.
func (s *Store) ConnectionPut(ctx context.Context, c *messaging.ChannelConnection) error {
	ctx = writeCtx(ctx)
	var token []byte
	if c.TokenSealed != nil {
		token = slices.Clone(c.TokenSealed)
	}
	var gen, created int64
	err := s.tx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('messaging.channel_connections:' || current_schema(), 0))`); err != nil {
			return err
		}
		var one int
		if err := tx.QueryRow(ctx, `SELECT 1 FROM workspaces WHERE id = $1`, c.WorkspaceID).Scan(&one); err != nil {
			return err
		}
		err := tx.QueryRow(ctx, `SELECT 1 FROM channel_connections
			WHERE workspace_id <> $1 AND status <> $2 AND ((channel = $3 AND account_id = $4) OR ($5 <> '' AND waba_id = $5)) LIMIT 1`,
			c.WorkspaceID, messaging.ConnectionDisconnected, c.Channel, c.AccountID, c.WABAID).Scan(&one)
		if err == nil {
			return messaging.ErrConflict
		}
		if err != pgx.ErrNoRows {
			return err
		}
		if err := tx.QueryRow(ctx, `INSERT INTO channel_connections (`+connectionCols+`)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 1, $10, $11, $12, $13)
			ON CONFLICT (workspace_id, channel) DO UPDATE SET account_id = excluded.account_id, waba_id = excluded.waba_id,
				display_phone_number = excluded.display_phone_number, token_sealed = excluded.token_sealed,
				token_hint = excluded.token_hint, status = excluded.status, status_reason = excluded.status_reason,
				generation = channel_connections.generation + 1, templates_synced_at = excluded.templates_synced_at,
				template_sync_error = excluded.template_sync_error, updated_at = excluded.updated_at
			RETURNING generation, created_at`,
			c.WorkspaceID, c.Channel, c.AccountID, c.WABAID, c.DisplayPhoneNumber, token, c.TokenHint,
			c.Status, c.StatusReason, tsPtr(c.TemplatesSyncedAt), c.TemplateSyncError, ts(c.CreatedAt), ts(c.UpdatedAt)).Scan(&gen, &created); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO workspace_channels (workspace_id, channel, connected_at)
			VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, c.WorkspaceID, c.Channel, ts(c.UpdatedAt))
		return err
	})
	if err != nil {
		return err // interpreted by s.tx
	}
	c.Generation, c.CreatedAt = gen, fromTS(created)
	return nil
}

// ConnectionGet implements messaging.Store.
func (s *Store) ConnectionGet(ctx context.Context, workspaceID, channel string) (*messaging.ChannelConnection, error) {
	c, err := scanConnection(s.pool.QueryRow(ctx, `SELECT `+connectionCols+` FROM channel_connections
		WHERE workspace_id = $1 AND channel = $2`, workspaceID, channel))
	if err != nil {
		return nil, interpretError(err)
	}
	return c, nil
}

// ConnectionList implements messaging.Store.
func (s *Store) ConnectionList(ctx context.Context, p *messaging.ConnectionListParams) ([]*messaging.ChannelConnection, error) {
	q := `SELECT ` + connectionCols + ` FROM channel_connections WHERE true`
	var args []any
	for _, f := range []struct{ col, v string }{{"workspace_id", p.WorkspaceID}, {"channel", p.Channel}, {"account_id", p.AccountID},
		{"waba_id", p.WABAID}, {"status", p.Status}} {
		if f.v != "" {
			args = append(args, f.v)
			q += ` AND ` + f.col + ` = $` + strconv.Itoa(len(args))
		}
	}
	out, err := queryAll(ctx, s.pool, scanConnection, q+` ORDER BY workspace_id, channel`, args...)
	return out, interpretError(err)
}

// ConnectionUpdate implements messaging.Store. A connection that does not
// exist is not changed (false, no error). The generation check and the
// update are one statement.
func (s *Store) ConnectionUpdate(ctx context.Context, p *messaging.ConnectionUpdateParams) (bool, error) {
	ctx = writeCtx(ctx)
	args := []any{p.WorkspaceID, p.Channel, p.Generation, ts(p.At)}
	set := `updated_at = $4`
	add := func(col string, v any) {
		args = append(args, v)
		set += `, ` + col + ` = $` + strconv.Itoa(len(args))
	}
	// A verdict on credentials never revives a disconnected connection.
	live := ""
	if p.Status != "" {
		live = ` AND status <> 'disconnected'`
		add("status", p.Status)
		add("status_reason", p.StatusReason)
	}
	if p.SyncedAt != nil {
		add("templates_synced_at", ts(*p.SyncedAt))
	}
	if p.SyncError != "" || p.SyncedAt != nil {
		add("template_sync_error", p.SyncError)
	}
	tag, err := s.pool.Exec(ctx, `UPDATE channel_connections SET `+set+`
		WHERE workspace_id = $1 AND channel = $2 AND generation = $3`+live, args...)
	if err != nil {
		return false, interpretError(err)
	}
	return tag.RowsAffected() == 1, nil
}

// LeaseAcquire implements messaging.Store. The take is one statement: an
// insert, or an update of a lease that expired or is the owner's, which
// PostgreSQL applies atomically against concurrent takes.
func (s *Store) LeaseAcquire(ctx context.Context, p *messaging.LeaseParams) (bool, error) {
	ctx = writeCtx(ctx)
	var owner string
	err := s.pool.QueryRow(ctx, `INSERT INTO leases (name, owner, until) VALUES ($1, $2, $3)
		ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, until = excluded.until
		WHERE leases.until <= $4 OR leases.owner = excluded.owner
		RETURNING owner`, p.Name, p.Owner, ts(p.Until), ts(p.Now)).Scan(&owner)
	if err == pgx.ErrNoRows {
		return false, nil
	}
	if err != nil {
		return false, interpretError(err)
	}
	return owner == p.Owner, nil
}
