package sqlitestore

import (
	"context"

	"github.com/ujumbe/messaging/store/driver"
	"github.com/ujumbe/messaging/store/internal/sqlrows"

	"github.com/ujumbe/messaging"
)

// ConversationList implements driver.Store through the index
// conversations_activity (workspace_id, last_message_at, id), read
// backwards; the table is kept by the trigger messages_conversation
// (migration 0015).
func (s *Store) ConversationList(ctx context.Context, p *driver.ConversationListParams) ([]*messaging.Conversation, error) {
	from := `conversations c INDEXED BY conversations_activity`
	where := `c.workspace_id = ?`
	args := []any{p.WorkspaceID}
	if p.ID != "" {
		from = `conversations c`
		where += ` AND c.id = ?`
		args = append(args, p.ID)
	}
	if p.BeforeID != "" {
		where += ` AND (c.last_message_at, c.id) < (?, ?)`
		args = append(args, fmtTime(p.BeforeAt), p.BeforeID)
	}
	args = append(args, p.Limit)
	rows, err := s.query(ctx, `SELECT c.last_inbound_at, `+sqlrows.Qualify("m", messageCols)+` FROM `+from+`
		JOIN messages m ON m.id = c.last_message_id
		WHERE `+where+` ORDER BY c.last_message_at DESC, c.id DESC LIMIT ?`, args...)
	if err != nil {
		return nil, interpretError(err)
	}
	defer rows.Close()
	var out []*messaging.Conversation
	for rows.Next() {
		var inbound string
		m, err := scanMessage(sqlrows.Prefixed{Row: rows, Pre: []any{&inbound}})
		if err != nil {
			return nil, interpretError(err)
		}
		c := sqlrows.Conversation(m)
		if inbound != "" {
			if c.LastInboundAt, err = parseTime(inbound); err != nil {
				return nil, err
			}
		}
		out = append(out, c)
	}
	return out, interpretError(rows.Err())
}

// ContactsByPhone implements driver.Store through the unique index on
// (workspace_id, phone).
func (s *Store) ContactsByPhone(ctx context.Context, p *driver.ContactsByPhoneParams) ([]*messaging.Contact, error) {
	if len(p.Phones) == 0 {
		return nil, nil
	}
	args := []any{p.WorkspaceID}
	for _, ph := range p.Phones {
		args = append(args, ph)
	}
	rows, err := s.query(ctx, `SELECT `+sqlrows.ContactColumns+` FROM contacts WHERE workspace_id = ? AND phone <> '' AND phone IN (`+placeholders(len(p.Phones))+`)`, args...)
	list, err := collect(rows, err, scanContact)
	return list, interpretError(err)
}
