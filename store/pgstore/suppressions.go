package pgstore

import (
	"context"

	"github.com/ujumbe/messaging/store/driver"

	"github.com/jackc/pgx/v5"
	"github.com/ujumbe/messaging"
)

// SuppressionSet implements driver.Store: one conditional statement
// (an upsert for an opt-out, an update for an opt-in: no stored state is
// already "not opted out"), so concurrent changes of one recipient are
// serialized by its row, and the event's deliveries, in one transaction.
func (s *Store) SuppressionSet(ctx context.Context, p *driver.SuppressionSetParams) (bool, error) {
	ctx = writeCtx(ctx)
	sup := p.Suppression
	var changed bool
	err := s.tx(ctx, func(tx pgx.Tx) error {
		changed = false
		var one int
		if err := tx.QueryRow(ctx, `SELECT 1 FROM workspaces WHERE id = $1`, sup.WorkspaceID).Scan(&one); err != nil {
			return err // no rows: not found
		}
		q := `UPDATE suppressions SET opted_out = false, source = $4, message_id = $5, updated_at = $6
			WHERE workspace_id = $1 AND recipient = $2 AND channel = $3 AND opted_out AND updated_at <= $6`
		if sup.OptedOut {
			q = `INSERT INTO suppressions (workspace_id, recipient, channel, opted_out, source, message_id, updated_at)
				VALUES ($1, $2, $3, true, $4, $5, $6)
				ON CONFLICT (workspace_id, recipient, channel) DO UPDATE SET opted_out = true, source = excluded.source,
					message_id = excluded.message_id, updated_at = excluded.updated_at
				WHERE NOT suppressions.opted_out AND suppressions.updated_at <= excluded.updated_at`
		}
		tag, err := tx.Exec(ctx, q, sup.WorkspaceID, sup.Recipient, sup.Channel, sup.Source, sup.MessageID, ts(sup.UpdatedAt))
		if err != nil || tag.RowsAffected() == 0 {
			return err
		}
		changed = true
		return queueEvent(ctx, tx, p.Event)
	})
	if err != nil {
		return false, interpretError(err)
	}
	return changed, nil
}

// SuppressionList implements driver.Store through the primary key
// (workspace_id, recipient, channel).
func (s *Store) SuppressionList(ctx context.Context, p *driver.SuppressionListParams) ([]*messaging.Suppression, error) {
	list, err := queryAll(ctx, s.pool, func(r pgx.Row) (*messaging.Suppression, error) {
		var sup messaging.Suppression
		var at int64
		if err := r.Scan(&sup.WorkspaceID, &sup.Recipient, &sup.Channel, &sup.OptedOut, &sup.Source, &sup.MessageID, &at); err != nil {
			return nil, err
		}
		sup.UpdatedAt = fromTS(at)
		return &sup, nil
	}, `SELECT workspace_id, recipient, channel, opted_out, source, message_id, updated_at FROM suppressions
		WHERE workspace_id = $1 AND recipient = ANY($2)`, p.WorkspaceID, p.Recipients)
	return list, interpretError(err)
}
