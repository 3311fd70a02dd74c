package pgstore

import (
	"context"
	"strconv"

	"github.com/ujumbe/messaging/store/driver"
	"github.com/ujumbe/messaging/store/internal/sqlrows"

	"github.com/jackc/pgx/v5"
	"github.com/ujumbe/messaging"
)

// ConversationList implements driver.Store through the index
// conversations_activity (workspace_id, last_message_at, id), read
// backwards; the table is kept by the trigger messages_conversation
// (migration 0014).
func (s *Store) ConversationList(ctx context.Context, p *driver.ConversationListParams) ([]*messaging.Conversation, error) {
	where := `c.workspace_id = $1`
	args := []any{p.WorkspaceID}
	if p.ID != "" {
		args = append(args, p.ID)
		where += ` AND c.id = $` + strconv.Itoa(len(args))
	}
	if p.BeforeID != "" {
		args = append(args, ts(p.BeforeAt), p.BeforeID)
		where += ` AND (c.last_message_at, c.id) < ($` + strconv.Itoa(len(args)-1) + `, $` + strconv.Itoa(len(args)) + `)`
	}
	args = append(args, p.Limit)
	list, err := queryAll(ctx, s.pool, func(r pgx.Row) (*messaging.Conversation, error) {
		var inbound *int64
		m, err := scanMessage(sqlrows.Prefixed{Row: r, Pre: []any{&inbound}})
		if err != nil {
			return nil, err
		}
		c := sqlrows.Conversation(m)
		if inbound != nil {
			c.LastInboundAt = fromTS(*inbound)
		}
		return c, nil
	}, `SELECT c.last_inbound_at, `+sqlrows.Qualify("m", messageCols)+` FROM conversations c
		JOIN messages m ON m.id = c.last_message_id
		WHERE `+where+` ORDER BY c.last_message_at DESC, c.id DESC LIMIT $`+strconv.Itoa(len(args)), args...)
	return list, interpretError(err)
}

// ContactsByPhone implements driver.Store through the unique index on
// (workspace_id, phone).
func (s *Store) ContactsByPhone(ctx context.Context, p *driver.ContactsByPhoneParams) ([]*messaging.Contact, error) {
	if len(p.Phones) == 0 {
		return nil, nil
	}
	list, err := queryAll(ctx, s.pool, scanContact, `SELECT `+sqlrows.ContactColumns+` FROM contacts
		WHERE workspace_id = $1 AND phone <> '' AND phone = ANY($2)`, p.WorkspaceID, p.Phones)
	return list, interpretError(err)
}
