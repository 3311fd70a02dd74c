package sqlitestore

import (
	"context"
	"database/sql"

	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging"
)

// SuppressionSet implements driver.Store: one conditional statement
// (an upsert for an opt-out, an update for an opt-in: no stored state is
// already "not opted out") and the event's deliveries, in one write
// transaction.
func (s *Store) SuppressionSet(ctx context.Context, p *driver.SuppressionSetParams) (bool, error) {
	sup := p.Suppression
	var changed bool
	err := s.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		changed = false
		var one int
		if err := tx.QueryRowContext(ctx, `SELECT 1 FROM workspaces WHERE id = ?`, sup.WorkspaceID).Scan(&one); err != nil {
			return err // sql.ErrNoRows: not found
		}
		q := `UPDATE suppressions SET opted_out = 0, source = ?, message_id = ?, updated_at = ?
			WHERE workspace_id = ? AND recipient = ? AND channel = ? AND opted_out = 1 AND updated_at <= ?`
		args := []any{sup.Source, sup.MessageID, fmtTime(sup.UpdatedAt), sup.WorkspaceID, sup.Recipient, sup.Channel, fmtTime(sup.UpdatedAt)}
		if sup.OptedOut {
			q = `INSERT INTO suppressions (workspace_id, recipient, channel, opted_out, source, message_id, updated_at)
				VALUES (?, ?, ?, 1, ?, ?, ?)
				ON CONFLICT (workspace_id, recipient, channel) DO UPDATE SET opted_out = 1, source = excluded.source,
					message_id = excluded.message_id, updated_at = excluded.updated_at
				WHERE opted_out = 0 AND updated_at <= excluded.updated_at`
			args = []any{sup.WorkspaceID, sup.Recipient, sup.Channel, sup.Source, sup.MessageID, fmtTime(sup.UpdatedAt)}
		}
		n, err := affected(tx.ExecContext(ctx, q, args...))
		if err != nil || n == 0 {
			return err
		}
		changed = true
		if p.Event != nil {
			return s.queueEvent(ctx, tx, p.Event)
		}
		return nil
	})
	if err != nil {
		return false, interpretError(err)
	}
	return changed, nil
}

// qSuppressionsOf is the start of SuppressionList's query, to be followed
// by the list of recipients; qSuppressionsOf1 is the query for one.
const (
	qSuppressionsOf = `SELECT workspace_id, recipient, channel, opted_out, source, message_id, updated_at FROM suppressions
		WHERE workspace_id = ? AND recipient IN `
	qSuppressionsOf1 = qSuppressionsOf + `(?)`
)

// SuppressionList implements driver.Store through the primary key
// (workspace_id, recipient, channel).
func (s *Store) SuppressionList(ctx context.Context, p *driver.SuppressionListParams) ([]*messaging.Suppression, error) {
	args := []any{p.WorkspaceID}
	for _, r := range p.Recipients {
		args = append(args, r)
	}
	q := qSuppressionsOf1 // a send's check, prepared
	if len(p.Recipients) != 1 {
		q = qSuppressionsOf + `(` + placeholders(len(p.Recipients)) + `)`
	}
	rows, err := s.query(ctx, q, args...)
	list, err := collect(rows, err, func(sc scanner) (*messaging.Suppression, error) {
		var sup messaging.Suppression
		err := sc.Scan(&sup.WorkspaceID, &sup.Recipient, &sup.Channel, &sup.OptedOut, &sup.Source, &sup.MessageID, storedTime{&sup.UpdatedAt})
		return &sup, err
	})
	return list, interpretError(err)
}
