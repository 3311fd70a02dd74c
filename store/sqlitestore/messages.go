package sqlitestore

import (
	"context"
	"database/sql"

	"github.com/ujumbe/messaging"
)

const messageCols = `id, workspace_id, conversation_id, channel, recipient, direction, status, failure_reason,
	type, text, media_url, caption, filename, template_name, language, components,
	idempotency_key, request_hash, provider_message_id, created_at, updated_at,
	due_at, lease_owner, attempts, last_error`

func scanMessage(sc scanner) (*messaging.Message, error) {
	var m messaging.Message
	var comps sql.NullString
	var created, updated, due string
	if err := sc.Scan(&m.ID, &m.WorkspaceID, &m.ConversationID, &m.Channel, &m.To, &m.Direction, &m.Status, &m.FailureReason,
		&m.Type, &m.Text, &m.MediaURL, &m.Caption, &m.Filename, &m.TemplateName, &m.Language, &comps,
		&m.IdempotencyKey, &m.RequestHash, &m.ProviderMessageID, &created, &updated,
		&due, &m.LeaseOwner, &m.Attempts, &m.LastError); err != nil {
		return nil, err
	}
	if due != "" {
		t, err := parseTime(due)
		if err != nil {
			return nil, err
		}
		m.DueAt = t
	}
	var err error
	if m.Components, err = decodeSlice[messaging.SendComponent](comps); err != nil {
		return nil, err
	}
	if m.CreatedAt, err = parseTime(created); err != nil {
		return nil, err
	}
	if m.UpdatedAt, err = parseTime(updated); err != nil {
		return nil, err
	}
	return &m, nil
}

// MessageCreate implements messaging.Store. The insert and the idempotency
// check are one statement (INSERT ... ON CONFLICT DO NOTHING on the unique
// index of (workspace_id, idempotency_key)); when it inserts nothing, the
// existing message is read in the same transaction. ErrNotFound if the
// workspace does not exist; ErrConflict if the id is taken.
func (s *Store) MessageCreate(ctx context.Context, m *messaging.Message) (*messaging.Message, bool, error) {
	comps, err := encodeSlice(m.Components)
	if err != nil {
		return nil, false, interpretError(err)
	}
	var stored *messaging.Message
	var created bool
	err = s.writeTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO messages (`+messageCols+`)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (workspace_id, idempotency_key) WHERE idempotency_key <> '' DO NOTHING`,
			m.ID, m.WorkspaceID, m.ConversationID, m.Channel, m.To, m.Direction, m.Status, m.FailureReason,
			m.Type, m.Text, m.MediaURL, m.Caption, m.Filename, m.TemplateName, m.Language, comps,
			m.IdempotencyKey, m.RequestHash, m.ProviderMessageID, fmtTime(m.CreatedAt), fmtTime(m.UpdatedAt),
			fmtTime(m.DueAt), m.LeaseOwner, m.Attempts, m.LastError)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		if n == 1 {
			created = true
			stored, err = scanMessage(tx.QueryRowContext(ctx, `SELECT `+messageCols+` FROM messages WHERE id = ?`, m.ID))
			return err
		}
		stored, err = scanMessage(tx.QueryRowContext(ctx, `SELECT `+messageCols+` FROM messages
			WHERE workspace_id = ? AND idempotency_key = ? AND idempotency_key <> ''`, m.WorkspaceID, m.IdempotencyKey))
		return err
	})
	if err != nil {
		return nil, false, err
	}
	return stored, created, nil
}

// MessageGet implements messaging.Store.
func (s *Store) MessageGet(ctx context.Context, workspaceID, id string) (*messaging.Message, error) {
	m, err := scanMessage(s.r.QueryRowContext(ctx, `SELECT `+messageCols+` FROM messages WHERE id = ? AND workspace_id = ?`, id, workspaceID))
	if err != nil {
		return nil, interpretError(err)
	}
	return m, nil
}

// MessageUpdateStatus implements messaging.Store. In one write transaction
// it reads the message, then updates it with a single UPDATE ... WHERE
// status IN (From) ... RETURNING. FailureReason and ProviderMessageID are
// only written when non-empty; UpdatedAt becomes p.At.
func (s *Store) MessageUpdateStatus(ctx context.Context, p *messaging.MessageStatusParams) (before, after *messaging.Message, changed bool, err error) {
	err = s.writeTx(ctx, func(tx *sql.Tx) error {
		var err error
		before, err = scanMessage(tx.QueryRowContext(ctx, `SELECT `+messageCols+` FROM messages WHERE id = ? AND workspace_id = ?`,
			p.ID, p.WorkspaceID))
		if err != nil {
			return err // sql.ErrNoRows: not found
		}
		args := []any{p.To, p.FailureReason, p.FailureReason, p.ProviderMessageID, p.ProviderMessageID, fmtTime(p.At), p.ID, p.WorkspaceID}
		for _, f := range p.From {
			args = append(args, f)
		}
		after, err = scanMessage(tx.QueryRowContext(ctx, `UPDATE messages SET status = ?,
			failure_reason = CASE WHEN ? <> '' THEN ? ELSE failure_reason END,
			provider_message_id = CASE WHEN ? <> '' THEN ? ELSE provider_message_id END,
			updated_at = ?, lease_owner = ''
			WHERE id = ? AND workspace_id = ? AND status IN (`+placeholders(len(p.From))+`)
			RETURNING `+messageCols, args...))
		switch {
		case err == nil:
			changed = true
			if p.Event != nil {
				if ev := p.Event(before, after); ev != nil {
					return queueEvent(ctx, tx, ev)
				}
			}
			return nil
		case err == sql.ErrNoRows:
			after, err = scanMessage(tx.QueryRowContext(ctx, `SELECT `+messageCols+` FROM messages WHERE id = ?`, p.ID))
			return err
		default:
			return err
		}
	})
	if err != nil {
		return nil, nil, false, err
	}
	return before, after, changed, nil
}
