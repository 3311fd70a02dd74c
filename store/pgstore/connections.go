package pgstore

import (
	"cmp"
	"context"
	"slices"
	"strconv"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/jackc/pgx/v5"
	"github.com/ujumbe/messaging"
)

const connectionCols = `workspace_id, channel, account_id, waba_id, display_phone_number, token_sealed, token_hint,
	status, status_reason, generation, templates_synced_at, template_sync_error, created_at, updated_at, verified_at,
	throughput, messaging_tier, tier_changed_at, quality_rating, quality_changed_at`

func scanConnection(row pgx.Row) (*messaging.ChannelConnection, error) {
	var c messaging.ChannelConnection
	var synced, verified, tierAt, qualityAt *int64
	var created, updated int64
	if err := row.Scan(&c.WorkspaceID, &c.Channel, &c.AccountID, &c.WABAID, &c.DisplayPhoneNumber, &c.TokenSealed, &c.TokenHint,
		&c.Status, &c.StatusReason, &c.Generation, &synced, &c.TemplateSyncError, &created, &updated, &verified,
		&c.Throughput, &c.MessagingTier, &tierAt, &c.QualityRating, &qualityAt); err != nil {
		return nil, err
	}
	c.TierChangedAt, c.QualityChangedAt = fromTSPtr(tierAt), fromTSPtr(qualityAt)
	c.TemplatesSyncedAt, c.CreatedAt, c.UpdatedAt, c.VerifiedAt = fromTSPtr(synced), fromTS(created), fromTS(updated), fromTSPtr(verified)
	return &c, nil
}

// lockConnections takes the transaction-scoped advisory lock that
// serialises the writes that claim accounts in a schema, so that the
// check of another workspace's WABA id and the write are atomic across
// instances (the channel and account id are also guarded by a unique
// index).
func lockConnections(ctx context.Context, tx pgx.Tx) error {
	_, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('messaging.channel_connections:' || current_schema(), 0))`)
	return err
}

// claim makes the connection c (of which only the workspace, channel,
// account and WABA ids are read) the holder of its account at at, in tx
// (under lockConnections): ErrConflict if a connected connection of
// another workspace holds it; else every other workspace's connection of
// that account or WABA that is not disconnected (nor superseded already)
// is superseded (and its
// channel disconnected). It returns them as stored after the change.
func claim(ctx context.Context, tx pgx.Tx, c *messaging.ChannelConnection, at int64) ([]*messaging.ChannelConnection, error) {
	const others = ` workspace_id <> $1 AND status <> 'disconnected' AND ((channel = $2 AND account_id = $3) OR ($4 <> '' AND waba_id = $4))`
	var one int
	err := tx.QueryRow(ctx, `SELECT 1 FROM channel_connections WHERE`+others+` AND status = $5 AND verified_at IS NOT NULL LIMIT 1`,
		c.WorkspaceID, c.Channel, c.AccountID, c.WABAID, record.ConnectionConnected).Scan(&one)
	if err == nil {
		return nil, messaging.ErrConflict
	}
	if err != pgx.ErrNoRows {
		return nil, err
	}
	losers, err := queryAll(ctx, tx, scanConnection, `UPDATE channel_connections SET status = $5, status_reason = $6, verified_at = NULL, updated_at = $7
		WHERE`+others+` AND NOT (status = $5 AND status_reason = $6 AND verified_at IS NULL) RETURNING `+connectionCols, c.WorkspaceID, c.Channel, c.AccountID, c.WABAID, record.ConnectionError, record.ReasonSuperseded, at)
	if err != nil {
		return nil, err
	}
	for _, o := range losers {
		if err := setFlag(ctx, tx, o.WorkspaceID, o.Channel, false, 0); err != nil {
			return nil, err
		}
	}
	slices.SortFunc(losers, func(a, b *messaging.ChannelConnection) int {
		return cmp.Or(cmp.Compare(a.WorkspaceID, b.WorkspaceID), cmp.Compare(a.Channel, b.Channel))
	})
	return losers, nil
}

// setFlag connects (on) or disconnects the channel of a workspace, in tx;
// connected_at is at when it was not connected.
func setFlag(ctx context.Context, tx pgx.Tx, workspaceID, channel string, on bool, at int64) error {
	var err error
	if on {
		_, err = tx.Exec(ctx, `INSERT INTO workspace_channels (workspace_id, channel, connected_at)
			VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, workspaceID, channel, at)
	} else {
		_, err = tx.Exec(ctx, `DELETE FROM workspace_channels WHERE workspace_id = $1 AND channel = $2`, workspaceID, channel)
	}
	return err
}

// ConnectionPut implements driver.Store. It sets c.Generation, and
// c.CreatedAt to the replaced connection's, as stored. The puts of a schema
// are serialised by lockConnections. The channel's connected_at is
// c.UpdatedAt when it was not connected.
func (s *Store) ConnectionPut(ctx context.Context, c *messaging.ChannelConnection) ([]*messaging.ChannelConnection, error) {
	ctx = writeCtx(ctx)
	var token []byte
	if c.TokenSealed != nil {
		token = slices.Clone(c.TokenSealed)
	}
	var gen, created int64
	var superseded []*messaging.ChannelConnection
	err := s.tx(ctx, func(tx pgx.Tx) error {
		superseded = nil
		if err := lockConnections(ctx, tx); err != nil {
			return err
		}
		var one int
		if err := tx.QueryRow(ctx, `SELECT 1 FROM workspaces WHERE id = $1`, c.WorkspaceID).Scan(&one); err != nil {
			return err
		}
		if c.Holds() {
			var err error
			if superseded, err = claim(ctx, tx, c, ts(c.UpdatedAt)); err != nil {
				return err
			}
		}
		if err := tx.QueryRow(ctx, `INSERT INTO channel_connections (`+connectionCols+`)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 1, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)
			ON CONFLICT (workspace_id, channel) DO UPDATE SET account_id = excluded.account_id, waba_id = excluded.waba_id,
				display_phone_number = excluded.display_phone_number, token_sealed = excluded.token_sealed,
				token_hint = excluded.token_hint, status = excluded.status, status_reason = excluded.status_reason,
				generation = channel_connections.generation + 1, templates_synced_at = excluded.templates_synced_at,
				template_sync_error = excluded.template_sync_error, updated_at = excluded.updated_at,
				verified_at = excluded.verified_at, throughput = excluded.throughput,
				messaging_tier = excluded.messaging_tier, tier_changed_at = excluded.tier_changed_at,
				quality_rating = excluded.quality_rating, quality_changed_at = excluded.quality_changed_at
			RETURNING generation, created_at`,
			c.WorkspaceID, c.Channel, c.AccountID, c.WABAID, c.DisplayPhoneNumber, token, c.TokenHint,
			c.Status, c.StatusReason, tsPtr(c.TemplatesSyncedAt), c.TemplateSyncError, ts(c.CreatedAt), ts(c.UpdatedAt),
			tsPtr(c.VerifiedAt), c.Throughput, c.MessagingTier, tsPtr(c.TierChangedAt), c.QualityRating,
			tsPtr(c.QualityChangedAt)).Scan(&gen, &created); err != nil {
			return err
		}
		return setFlag(ctx, tx, c.WorkspaceID, c.Channel, c.Holds(), ts(c.UpdatedAt))
	})
	if err != nil {
		return nil, err // interpreted by s.tx
	}
	c.Generation, c.CreatedAt = gen, fromTS(created)
	return superseded, nil
}

// ConnectionVerified implements driver.Store. It is serialised with
// ConnectionPut by lockConnections.
func (s *Store) ConnectionVerified(ctx context.Context, p *driver.ConnectionVerifiedParams) ([]*messaging.ChannelConnection, error) {
	ctx = writeCtx(ctx)
	var superseded []*messaging.ChannelConnection
	err := s.tx(ctx, func(tx pgx.Tx) error {
		superseded = nil
		if err := lockConnections(ctx, tx); err != nil {
			return err
		}
		c, err := scanConnection(tx.QueryRow(ctx, `SELECT `+connectionCols+` FROM channel_connections
			WHERE workspace_id = $1 AND channel = $2 FOR UPDATE`, p.WorkspaceID, p.Channel))
		if err != nil {
			return err
		}
		if c.Generation != p.Generation || c.Status == record.ConnectionDisconnected || (p.FromStatus != "" && c.Status != p.FromStatus) {
			return driver.ErrStale
		}
		at := ts(p.At)
		if superseded, err = claim(ctx, tx, c, at); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE channel_connections SET status = $3, status_reason = '', verified_at = $4, updated_at = $4,
			display_phone_number = CASE WHEN $5 <> '' THEN $5 ELSE display_phone_number END, `+healthSet(6, 7, 4)+`
			WHERE workspace_id = $1 AND channel = $2`, p.WorkspaceID, p.Channel, record.ConnectionConnected, at, p.DisplayPhoneNumber,
			p.QualityRating, p.MessagingTier); err != nil {
			return err
		}
		return setFlag(ctx, tx, p.WorkspaceID, p.Channel, true, at)
	})
	if err != nil {
		return nil, err // interpreted by s.tx
	}
	return superseded, nil
}

// ConnectionGet implements driver.Store.
func (s *Store) ConnectionGet(ctx context.Context, workspaceID, channel string) (*messaging.ChannelConnection, error) {
	c, err := scanConnection(s.pool.QueryRow(ctx, `SELECT `+connectionCols+` FROM channel_connections
		WHERE workspace_id = $1 AND channel = $2`, workspaceID, channel))
	if err != nil {
		return nil, interpretError(err)
	}
	return c, nil
}

// ConnectionList implements driver.Store.
func (s *Store) ConnectionList(ctx context.Context, p *driver.ConnectionListParams) ([]*messaging.ChannelConnection, error) {
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

// ConnectionUpdate implements driver.Store. A connection that does not
// exist is not changed (false, no error). The generation check and the
// update are one statement.
func (s *Store) ConnectionUpdate(ctx context.Context, p *driver.ConnectionUpdateParams) (bool, error) {
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
	if p.Throughput > 0 {
		add("throughput", p.Throughput)
	}
	if p.FromStatus != "" {
		args = append(args, p.FromStatus, p.FromReason)
		live += ` AND status = $` + strconv.Itoa(len(args)-1) + ` AND status_reason = $` + strconv.Itoa(len(args))
	}
	if h := p.Health; h != nil {
		args = append(args, h.QualityRating, h.MessagingTier, h.FromQualityRating, h.FromMessagingTier)
		n := len(args)
		set += `, ` + healthSet(n-3, n-2, 4)
		live += ` AND quality_rating = $` + strconv.Itoa(n-1) + ` AND messaging_tier = $` + strconv.Itoa(n)
	}
	tag, err := s.pool.Exec(ctx, `UPDATE channel_connections SET `+set+`
		WHERE workspace_id = $1 AND channel = $2 AND generation = $3`+live, args...)
	if err != nil {
		return false, interpretError(err)
	}
	return tag.RowsAffected() == 1, nil
}

// healthSet sets a connection's quality rating (argument number quality)
// and messaging tier (argument number tier), each when non-empty, and the
// time each changed (argument number at) when it changes.
func healthSet(quality, tier, at int) string {
	q, t, a := "$"+strconv.Itoa(quality)+"::text", "$"+strconv.Itoa(tier)+"::text", "$"+strconv.Itoa(at)
	return `quality_changed_at = CASE WHEN ` + q + ` <> '' AND ` + q + ` <> quality_rating THEN ` + a + ` ELSE quality_changed_at END,
	quality_rating = CASE WHEN ` + q + ` <> '' THEN ` + q + ` ELSE quality_rating END,
	tier_changed_at = CASE WHEN ` + t + ` <> '' AND ` + t + ` <> messaging_tier THEN ` + a + ` ELSE tier_changed_at END,
	messaging_tier = CASE WHEN ` + t + ` <> '' THEN ` + t + ` ELSE messaging_tier END`
}

// LeaseAcquire implements driver.Store. The take is one statement: an
// insert, or an update of a lease that expired or is the owner's, which
// PostgreSQL applies atomically against concurrent takes.
func (s *Store) LeaseAcquire(ctx context.Context, p *driver.LeaseParams) (bool, error) {
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
