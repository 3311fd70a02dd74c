package sqlitestore

import (
	"cmp"
	"context"
	"database/sql"
	"slices"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging"
)

const connectionCols = `workspace_id, channel, account_id, waba_id, display_phone_number, token_sealed, token_hint,
	status, status_reason, generation, templates_synced_at, template_sync_error, created_at, updated_at, verified_at,
	throughput, messaging_tier, tier_changed_at, quality_rating, quality_changed_at`

func scanConnection(sc scanner) (*messaging.ChannelConnection, error) {
	var c messaging.ChannelConnection
	if err := sc.Scan(&c.WorkspaceID, &c.Channel, &c.AccountID, &c.WABAID, &c.DisplayPhoneNumber, &c.TokenSealed, &c.TokenHint,
		&c.Status, &c.StatusReason, &c.Generation, storedTimePtr{&c.TemplatesSyncedAt}, &c.TemplateSyncError,
		storedTime{&c.CreatedAt}, storedTime{&c.UpdatedAt}, storedTimePtr{&c.VerifiedAt},
		&c.Throughput, &c.MessagingTier, storedTimePtr{&c.TierChangedAt}, &c.QualityRating, storedTimePtr{&c.QualityChangedAt}); err != nil {
		return nil, err
	}
	return &c, nil
}

// disconnectConnection marks the connection of p's workspace on p's
// channel, if any, disconnected (WorkspaceSetChannel with Connected false).
func disconnectConnection(ctx context.Context, tx *sql.Tx, p *driver.ChannelParams) error {
	_, err := tx.ExecContext(ctx, `UPDATE channel_connections SET status = ?, updated_at = ? WHERE workspace_id = ? AND channel = ?`,
		record.ConnectionDisconnected, fmtTime(p.At), p.WorkspaceID, p.Channel)
	return err
}

// claim makes the connection c (of which only the workspace, channel,
// account and WABA ids are read) the holder of its account at at, in tx:
// ErrConflict if a connected connection of another workspace holds it;
// else every other workspace's connection of that account or WABA that is
// not disconnected (nor superseded already) is superseded (and its
// channel disconnected). It
// returns them as stored after the change.
func claim(ctx context.Context, tx *sql.Tx, c *messaging.ChannelConnection, at string) ([]*messaging.ChannelConnection, error) {
	const others = ` FROM channel_connections WHERE workspace_id <> ? AND status <> 'disconnected'
		AND ((channel = ? AND account_id = ?) OR (? <> '' AND waba_id = ?))`
	args := []any{c.WorkspaceID, c.Channel, c.AccountID, c.WABAID, c.WABAID}
	var one int
	err := tx.QueryRowContext(ctx, `SELECT 1`+others+` AND status = ? AND verified_at IS NOT NULL LIMIT 1`,
		append(args, record.ConnectionConnected)...).Scan(&one)
	if err == nil {
		return nil, messaging.ErrConflict
	}
	if err != sql.ErrNoRows {
		return nil, err
	}
	rows, err := tx.QueryContext(ctx, `UPDATE channel_connections SET status = ?, status_reason = ?, verified_at = NULL, updated_at = ?
		WHERE (workspace_id, channel) IN (SELECT workspace_id, channel`+others+`
			AND NOT (status = ? AND status_reason = ? AND verified_at IS NULL)) RETURNING `+connectionCols,
		append(append([]any{record.ConnectionError, record.ReasonSuperseded, at}, args...), record.ConnectionError, record.ReasonSuperseded)...)
	losers, err := collect(rows, err, scanConnection)
	if err != nil {
		return nil, err
	}
	for _, o := range losers {
		if err := setFlag(ctx, tx, o.WorkspaceID, o.Channel, false, ""); err != nil {
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
func setFlag(ctx context.Context, tx *sql.Tx, workspaceID, channel string, on bool, at string) error {
	var err error
	if on {
		_, err = tx.ExecContext(ctx, `INSERT INTO workspace_channels (workspace_id, channel, connected_at)
			VALUES (?, ?, ?) ON CONFLICT DO NOTHING`, workspaceID, channel, at)
	} else {
		_, err = tx.ExecContext(ctx, `DELETE FROM workspace_channels WHERE workspace_id = ? AND channel = ?`, workspaceID, channel)
	}
	return err
}

// ConnectionPut implements driver.Store. It sets c.Generation, and
// c.CreatedAt to the replaced connection's, as stored. The channel's
// connected_at is c.UpdatedAt when it was not connected.
func (s *Store) ConnectionPut(ctx context.Context, c *messaging.ChannelConnection) ([]*messaging.ChannelConnection, error) {
	var token any
	if c.TokenSealed != nil {
		token = slices.Clone(c.TokenSealed)
	}
	var gen int64
	var created string
	var superseded []*messaging.ChannelConnection
	err := s.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		superseded = nil
		var one int
		if err := tx.QueryRowContext(ctx, `SELECT 1 FROM workspaces WHERE id = ?`, c.WorkspaceID).Scan(&one); err != nil {
			return err
		}
		if c.Holds() {
			var err error
			if superseded, err = claim(ctx, tx, c, fmtTime(c.UpdatedAt)); err != nil {
				return err
			}
		}
		gen, created = 0, fmtTime(c.CreatedAt)
		err := tx.QueryRowContext(ctx, `SELECT generation, created_at FROM channel_connections WHERE workspace_id = ? AND channel = ?`,
			c.WorkspaceID, c.Channel).Scan(&gen, &created)
		if err != nil && err != sql.ErrNoRows {
			return err
		}
		gen++
		if _, err := tx.ExecContext(ctx, `INSERT INTO channel_connections (`+connectionCols+`)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (workspace_id, channel) DO UPDATE SET account_id = excluded.account_id, waba_id = excluded.waba_id,
				display_phone_number = excluded.display_phone_number, token_sealed = excluded.token_sealed,
				token_hint = excluded.token_hint, status = excluded.status, status_reason = excluded.status_reason,
				generation = excluded.generation, templates_synced_at = excluded.templates_synced_at,
				template_sync_error = excluded.template_sync_error, updated_at = excluded.updated_at,
				verified_at = excluded.verified_at, throughput = excluded.throughput,
				messaging_tier = excluded.messaging_tier, tier_changed_at = excluded.tier_changed_at,
				quality_rating = excluded.quality_rating, quality_changed_at = excluded.quality_changed_at`,
			c.WorkspaceID, c.Channel, c.AccountID, c.WABAID, c.DisplayPhoneNumber, token, c.TokenHint,
			c.Status, c.StatusReason, gen, fmtTimePtr(c.TemplatesSyncedAt), c.TemplateSyncError, created, fmtTime(c.UpdatedAt),
			fmtTimePtr(c.VerifiedAt), c.Throughput, c.MessagingTier, fmtTimePtr(c.TierChangedAt), c.QualityRating,
			fmtTimePtr(c.QualityChangedAt)); err != nil {
			return err
		}
		return setFlag(ctx, tx, c.WorkspaceID, c.Channel, c.Holds(), fmtTime(c.UpdatedAt))
	})
	if err != nil {
		return nil, err
	}
	createdAt, err := parseTime(created)
	if err != nil {
		return nil, interpretError(err)
	}
	c.Generation, c.CreatedAt = gen, createdAt
	return superseded, nil
}

// ConnectionVerified implements driver.Store.
func (s *Store) ConnectionVerified(ctx context.Context, p *driver.ConnectionVerifiedParams) ([]*messaging.ChannelConnection, error) {
	var superseded []*messaging.ChannelConnection
	err := s.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		superseded = nil
		c, err := scanConnection(tx.QueryRowContext(ctx, `SELECT `+connectionCols+` FROM channel_connections
			WHERE workspace_id = ? AND channel = ?`, p.WorkspaceID, p.Channel))
		if err != nil {
			return err
		}
		if c.Generation != p.Generation || c.Status == record.ConnectionDisconnected || (p.FromStatus != "" && c.Status != p.FromStatus) {
			return driver.ErrStale
		}
		at := fmtTime(p.At)
		if superseded, err = claim(ctx, tx, c, at); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE channel_connections SET status = ?, status_reason = '', verified_at = ?, updated_at = ?,
			display_phone_number = CASE WHEN ? <> '' THEN ? ELSE display_phone_number END, `+healthSet+`
			WHERE workspace_id = ? AND channel = ?`, append(append([]any{record.ConnectionConnected, at, at, p.DisplayPhoneNumber, p.DisplayPhoneNumber},
			healthArgs(p.QualityRating, p.MessagingTier, at)...), p.WorkspaceID, p.Channel)...); err != nil {
			return err
		}
		return setFlag(ctx, tx, p.WorkspaceID, p.Channel, true, at)
	})
	if err != nil {
		return nil, err
	}
	return superseded, nil
}

// ConnectionGet implements driver.Store.
func (s *Store) ConnectionGet(ctx context.Context, workspaceID, channel string) (*messaging.ChannelConnection, error) {
	c, err := scanConnection(s.r.QueryRowContext(ctx, `SELECT `+connectionCols+` FROM channel_connections
		WHERE workspace_id = ? AND channel = ?`, workspaceID, channel))
	if err != nil {
		return nil, interpretError(err)
	}
	return c, nil
}

// ConnectionList implements driver.Store.
func (s *Store) ConnectionList(ctx context.Context, p *driver.ConnectionListParams) ([]*messaging.ChannelConnection, error) {
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

// ConnectionUpdate implements driver.Store. A connection that does not
// exist is not changed (false, no error).
func (s *Store) ConnectionUpdate(ctx context.Context, p *driver.ConnectionUpdateParams) (bool, error) {
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
	if p.Throughput > 0 {
		set += `, throughput = ?`
		args = append(args, p.Throughput)
	}
	if p.Health != nil {
		set += `, ` + healthSet
		args = append(args, healthArgs(p.Health.QualityRating, p.Health.MessagingTier, fmtTime(p.At))...)
	}
	args = append(args, p.WorkspaceID, p.Channel, p.Generation)
	if p.FromStatus != "" {
		live += ` AND status = ? AND status_reason = ?`
		args = append(args, p.FromStatus, p.FromReason)
	}
	if p.Health != nil {
		live += ` AND quality_rating = ? AND messaging_tier = ?`
		args = append(args, p.Health.FromQualityRating, p.Health.FromMessagingTier)
	}
	var n int64
	err := s.writeOne(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var err error
		n, err = affected(tx.ExecContext(ctx, `UPDATE channel_connections SET `+set+`
			WHERE workspace_id = ? AND channel = ? AND generation = ?`+live, args...))
		return err
	})
	return err == nil && n == 1, err
}

// healthSet sets a connection's quality rating and messaging tier, each
// when its argument is non-empty, and the time each changed when it
// changes; its arguments are healthArgs'.
const healthSet = `quality_changed_at = CASE WHEN ? <> '' AND ? <> quality_rating THEN ? ELSE quality_changed_at END,
	quality_rating = CASE WHEN ? <> '' THEN ? ELSE quality_rating END,
	tier_changed_at = CASE WHEN ? <> '' AND ? <> messaging_tier THEN ? ELSE tier_changed_at END,
	messaging_tier = CASE WHEN ? <> '' THEN ? ELSE messaging_tier END`

// healthArgs are the arguments of healthSet.
func healthArgs(quality, tier, at string) []any {
	return []any{quality, quality, at, quality, quality, tier, tier, at, tier, tier}
}

// LeaseAcquire implements driver.Store. Writes are serialized, and the
// take is one statement.
func (s *Store) LeaseAcquire(ctx context.Context, p *driver.LeaseParams) (bool, error) {
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
