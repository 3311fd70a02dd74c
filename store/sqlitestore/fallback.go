package sqlitestore

import (
	"context"
	"database/sql"
	"time"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"
)

// fallbackCols are the columns of message_fallbacks, in scanFallback's
// order after message_id and workspace_id.
const fallbackCols = `message_id, workspace_id, text, partner_id, shortcode, after_ns, status, reason,
	sms_message_id, sms_provider_message_id, due_at, lease_owner, updated_at`

// scanFallback scans a row of fallbackCols.
func scanFallback(sc scanner) (ws, id string, f *record.SMSFallback, err error) {
	f = &record.SMSFallback{}
	var after int64
	var due *time.Time
	if err := sc.Scan(&id, &ws, &f.Text, &f.PartnerID, &f.Shortcode, &after, &f.Status, &f.Reason,
		&f.SMSMessageID, &f.SMSProviderMessageID, storedTimePtr{&due}, &f.LeaseOwner, storedTime{&f.UpdatedAt}); err != nil {
		return "", "", nil, err
	}
	f.After = time.Duration(after)
	if due != nil {
		f.DueAt = *due
	}
	return ws, id, f, nil
}

// insertFallback inserts the fallback of m, a message inserted in tx.
func (s *Store) insertFallback(ctx context.Context, tx *sql.Tx, m *messaging.Message) error {
	f := m.Fallback
	var due any
	if f.Status == record.SMSFallbackPending {
		due = fmtTime(f.DueAt)
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO message_fallbacks (`+fallbackCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		m.ID, m.WorkspaceID, f.Text, f.PartnerID, f.Shortcode, int64(f.After), f.Status, f.Reason,
		f.SMSMessageID, f.SMSProviderMessageID, due, f.LeaseOwner, fmtTime(f.UpdatedAt))
	return err
}

// MessageFallbacks implements driver.Store.
func (s *Store) MessageFallbacks(ctx context.Context, workspaceID string, ids []string) (map[string]*record.SMSFallback, error) {
	out := map[string]*record.SMSFallback{}
	if len(ids) == 0 {
		return out, nil
	}
	args := []any{workspaceID}
	for _, id := range ids {
		args = append(args, id)
	}
	rows, err := s.query(ctx, `SELECT `+fallbackCols+` FROM message_fallbacks WHERE workspace_id = ? AND message_id IN (`+placeholders(len(ids))+`)`, args...)
	if err != nil {
		return nil, interpretError(err)
	}
	defer rows.Close()
	for rows.Next() {
		_, id, f, err := scanFallback(rows)
		if err != nil {
			return nil, interpretError(err)
		}
		out[id] = f
	}
	return out, interpretError(rows.Err())
}

// qFallbackClaim leases the due pending fallbacks, oldest due first,
// through the partial index message_fallbacks_due.
var qFallbackClaim = `UPDATE message_fallbacks SET lease_owner = ?, due_at = ?
			WHERE message_id IN (SELECT message_id FROM message_fallbacks WHERE status = 'pending' AND due_at <= ?
				ORDER BY due_at LIMIT ?)
			RETURNING ` + fallbackCols

// MessageFallbackClaim implements driver.Store: one UPDATE ... RETURNING
// of the due pending fallbacks (the writer is single, so two claims never
// overlap).
func (s *Store) MessageFallbackClaim(ctx context.Context, p *driver.MessageFallbackClaimParams) ([]*driver.MessageFallbackClaim, error) {
	var out []*driver.MessageFallbackClaim
	now := fmtTime(p.Now)
	var q string
	var args []any
	if p.MessageID != "" {
		q = `UPDATE message_fallbacks SET lease_owner = ?, due_at = ?
			WHERE message_id = ? AND workspace_id = ? AND status = 'pending' AND (lease_owner = '' OR due_at <= ?)
			RETURNING ` + fallbackCols
		args = []any{p.Owner, fmtTime(p.LeaseUntil), p.MessageID, p.WorkspaceID, now}
	} else {
		q = qFallbackClaim
		args = []any{p.Owner, fmtTime(p.LeaseUntil), now, max(p.Limit, 1)}
	}
	err := s.writeOne(ctx, func(ctx context.Context, tx *sql.Tx) error {
		out = nil
		rows, err := tx.QueryContext(ctx, q, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			ws, id, f, err := scanFallback(rows)
			if err != nil {
				return err
			}
			out = append(out, &driver.MessageFallbackClaim{WorkspaceID: ws, MessageID: id, Fallback: f})
		}
		return rows.Err()
	})
	if err != nil {
		return nil, interpretError(err)
	}
	return out, nil
}

// MessageFallbackSettle implements driver.Store.
func (s *Store) MessageFallbackSettle(ctx context.Context, p *driver.MessageFallbackSettleParams) (bool, error) {
	var n int64
	err := s.writeOne(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var err error
		n, err = affected(tx.ExecContext(ctx, `UPDATE message_fallbacks SET status = ?, reason = ?, sms_message_id = ?, sms_provider_message_id = ?,
			updated_at = ?, due_at = NULL, lease_owner = ''
			WHERE message_id = ? AND workspace_id = ? AND status = 'pending' AND lease_owner = ?`,
			p.Status, p.Reason, p.SMSMessageID, p.SMSProviderMessageID, fmtTime(p.At), p.MessageID, p.WorkspaceID, p.Owner))
		return err
	})
	if err != nil {
		return false, interpretError(err)
	}
	return n == 1, nil
}

// WorkspaceSMSAccountSet implements driver.Store.
func (s *Store) WorkspaceSMSAccountSet(ctx context.Context, p *driver.WorkspaceSMSAccountParams) (bool, error) {
	var n int64
	err := s.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var found int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM workspaces WHERE id = ?`, p.WorkspaceID).Scan(&found); err != nil {
			return err
		}
		if found == 0 {
			return messaging.ErrNotFound
		}
		var err error
		if p.Linked {
			n, err = affected(tx.ExecContext(ctx, `INSERT INTO workspace_sms_accounts (workspace_id, partner_id, created_at) VALUES (?, ?, ?)
				ON CONFLICT DO NOTHING`, p.WorkspaceID, p.PartnerID, fmtTime(p.At)))
		} else {
			n, err = affected(tx.ExecContext(ctx, `DELETE FROM workspace_sms_accounts WHERE workspace_id = ? AND partner_id = ?`, p.WorkspaceID, p.PartnerID))
		}
		return err
	})
	if err != nil {
		return false, interpretError(err)
	}
	return n == 1, nil
}

// WorkspaceSMSAccounts implements driver.Store.
func (s *Store) WorkspaceSMSAccounts(ctx context.Context, workspaceID string) ([]string, error) {
	rows, err := s.query(ctx, `SELECT partner_id FROM workspace_sms_accounts WHERE workspace_id = ? ORDER BY partner_id`, workspaceID)
	if err != nil {
		return nil, interpretError(err)
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, interpretError(err)
		}
		out = append(out, id)
	}
	return out, interpretError(rows.Err())
}
