package pgstore

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"
)

// fallbackCols are the columns of message_fallbacks, in scanFallback's
// order.
const fallbackCols = `message_id, workspace_id, text, partner_id, shortcode, after_ns, status, reason,
	sms_message_id, sms_provider_message_id, due_at, lease_owner, updated_at`

// scanFallback scans a row of fallbackCols.
func scanFallback(row pgx.Row) (*driver.MessageFallbackClaim, error) {
	c := &driver.MessageFallbackClaim{Fallback: &record.SMSFallback{}}
	f := c.Fallback
	var after, updated int64
	var due *int64
	if err := row.Scan(&c.MessageID, &c.WorkspaceID, &f.Text, &f.PartnerID, &f.Shortcode, &after, &f.Status, &f.Reason,
		&f.SMSMessageID, &f.SMSProviderMessageID, &due, &f.LeaseOwner, &updated); err != nil {
		return nil, err
	}
	f.After, f.UpdatedAt = time.Duration(after), fromTS(updated)
	if due != nil {
		f.DueAt = fromTS(*due)
	}
	return c, nil
}

// createWithFallback inserts m (qMessageSend with args) and its fallback
// in one transaction; pgx.ErrNoRows when qMessageSend inserts nothing.
func (s *Store) createWithFallback(ctx context.Context, m *messaging.Message, args []any) (*messaging.Message, error) {
	var stored *messaging.Message
	err := runAgainOnDeadlock(ctx, func() error {
		return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			var err error
			if stored, err = scanMessage(tx.QueryRow(ctx, qMessageSend, args...)); err != nil {
				return err
			}
			f := m.Fallback
			var due any
			if f.Status == record.SMSFallbackPending {
				due = ts(f.DueAt)
			}
			_, err = tx.Exec(ctx, `INSERT INTO message_fallbacks (`+fallbackCols+`)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
				m.ID, m.WorkspaceID, f.Text, f.PartnerID, f.Shortcode, int64(f.After), f.Status, f.Reason,
				f.SMSMessageID, f.SMSProviderMessageID, due, f.LeaseOwner, ts(f.UpdatedAt))
			return err
		})
	})
	if err != nil {
		return nil, err
	}
	stored.Fallback = m.Fallback.Clone()
	return stored, nil
}

// MessageFallbacks implements driver.Store.
func (s *Store) MessageFallbacks(ctx context.Context, workspaceID string, ids []string) (map[string]*record.SMSFallback, error) {
	out := map[string]*record.SMSFallback{}
	if len(ids) == 0 {
		return out, nil
	}
	list, err := queryAll(ctx, s.pool, scanFallback, `SELECT `+fallbackCols+` FROM message_fallbacks WHERE workspace_id = $1 AND message_id = ANY($2)`, workspaceID, ids)
	if err != nil {
		return nil, interpretError(err)
	}
	for _, c := range list {
		out[c.MessageID] = c.Fallback
	}
	return out, nil
}

// MessageFallbackClaim implements driver.Store: one UPDATE of the due
// pending fallbacks, skipping those another claimer has locked.
func (s *Store) MessageFallbackClaim(ctx context.Context, p *driver.MessageFallbackClaimParams) ([]*driver.MessageFallbackClaim, error) {
	var q string
	var args []any
	if p.MessageID != "" {
		q = `UPDATE message_fallbacks SET lease_owner = $1, due_at = $2
			WHERE message_id = $3 AND workspace_id = $4 AND status = 'pending' AND (lease_owner = '' OR due_at <= $5)
			RETURNING ` + fallbackCols
		args = []any{p.Owner, ts(p.LeaseUntil), p.MessageID, p.WorkspaceID, ts(p.Now)}
	} else {
		q = `UPDATE message_fallbacks SET lease_owner = $1, due_at = $2
			WHERE message_id IN (SELECT message_id FROM message_fallbacks WHERE status = 'pending' AND due_at <= $3
				ORDER BY due_at, message_id LIMIT $4 FOR UPDATE SKIP LOCKED)
			AND status = 'pending' AND due_at <= $3
			RETURNING ` + fallbackCols
		args = []any{p.Owner, ts(p.LeaseUntil), ts(p.Now), max(p.Limit, 1)}
	}
	list, err := queryAll(writeCtx(ctx), s.pool, scanFallback, q, args...)
	if err != nil {
		return nil, interpretError(err)
	}
	return list, nil
}

// MessageFallbackSettle implements driver.Store.
func (s *Store) MessageFallbackSettle(ctx context.Context, p *driver.MessageFallbackSettleParams) (bool, error) {
	tag, err := s.pool.Exec(writeCtx(ctx), `UPDATE message_fallbacks SET status = $1, reason = $2, sms_message_id = $3, sms_provider_message_id = $4,
		updated_at = $5, due_at = NULL, lease_owner = ''
		WHERE message_id = $6 AND workspace_id = $7 AND status = 'pending' AND lease_owner = $8`,
		p.Status, p.Reason, p.SMSMessageID, p.SMSProviderMessageID, ts(p.At), p.MessageID, p.WorkspaceID, p.Owner)
	if err != nil {
		return false, interpretError(err)
	}
	return tag.RowsAffected() == 1, nil
}

// WorkspaceSMSAccountSet implements driver.Store.
func (s *Store) WorkspaceSMSAccountSet(ctx context.Context, p *driver.WorkspaceSMSAccountParams) (bool, error) {
	return txValue(writeCtx(ctx), s, func(tx pgx.Tx) (bool, error) {
		var found bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM workspaces WHERE id = $1)`, p.WorkspaceID).Scan(&found); err != nil {
			return false, err
		}
		if !found {
			return false, messaging.ErrNotFound
		}
		var err error
		var n int64
		if p.Linked {
			tag, e := tx.Exec(ctx, `INSERT INTO workspace_sms_accounts (workspace_id, partner_id, created_at) VALUES ($1, $2, $3)
				ON CONFLICT DO NOTHING`, p.WorkspaceID, p.PartnerID, ts(p.At))
			n, err = tag.RowsAffected(), e
		} else {
			tag, e := tx.Exec(ctx, `DELETE FROM workspace_sms_accounts WHERE workspace_id = $1 AND partner_id = $2`, p.WorkspaceID, p.PartnerID)
			n, err = tag.RowsAffected(), e
		}
		return n == 1, err
	})
}

// WorkspaceSMSAccounts implements driver.Store.
func (s *Store) WorkspaceSMSAccounts(ctx context.Context, workspaceID string) ([]string, error) {
	list, err := queryAll(ctx, s.pool, func(r pgx.Row) (string, error) {
		var id string
		return id, r.Scan(&id)
	}, `SELECT partner_id FROM workspace_sms_accounts WHERE workspace_id = $1 ORDER BY partner_id`, workspaceID)
	if err != nil {
		return nil, interpretError(err)
	}
	if list == nil {
		list = []string{}
	}
	return list, nil
}
