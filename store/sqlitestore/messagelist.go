package sqlitestore

import (
	"context"
	"strings"
	"time"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging"
)

// MessageList implements driver.Store through the index
// messages_created (workspace_id, created_at, id), read backwards, or
// messages_conversation_created (workspace_id, conversation_id,
// created_at, id) for the messages of one conversation. The messages of
// several conversations (ConversationIDs) are the newest Limit of each
// conversation's own page, merged.
func (s *Store) MessageList(ctx context.Context, p *driver.MessageListParams) ([]*messaging.Message, error) {
	var where strings.Builder
	where.WriteString(`workspace_id = ?`)
	args := []any{p.WorkspaceID}
	filter := func(col, v string) {
		if v != "" {
			where.WriteString(` AND ` + col + ` = ?`)
			args = append(args, v)
		}
	}
	filter("direction", p.Direction)
	filter("status", p.Status)
	filter("channel", p.Channel)
	filter("recipient", p.To)
	if !p.CreatedAfter.IsZero() {
		where.WriteString(` AND created_at >= ?`)
		args = append(args, fmtTime(p.CreatedAfter))
	}
	if !p.CreatedBefore.IsZero() {
		where.WriteString(` AND created_at < ?`)
		args = append(args, fmtTime(p.CreatedBefore))
	}
	if p.BeforeID != "" {
		where.WriteString(` AND (created_at, id) < (?, ?)`)
		args = append(args, fmtTime(p.BeforeCreatedAt), p.BeforeID)
	}
	convs, none := driver.ListedConversations(p)
	if none {
		return nil, nil
	}
	var q string
	var qargs []any
	switch len(convs) {
	case 0:
		q = `SELECT ` + messageCols + ` FROM messages INDEXED BY messages_created
			WHERE ` + where.String() + ` ORDER BY created_at DESC, id DESC LIMIT ?`
		qargs = append(args, p.Limit)
	case 1:
		q = `SELECT ` + messageCols + ` FROM messages INDEXED BY messages_conversation_created
			WHERE ` + where.String() + ` AND conversation_id = ? ORDER BY created_at DESC, id DESC LIMIT ?`
		qargs = append(args, convs[0], p.Limit)
	default:
		arms := make([]string, len(convs))
		for i, c := range convs {
			arms[i] = `SELECT * FROM (SELECT ` + messageCols + ` FROM messages INDEXED BY messages_conversation_created
				WHERE ` + where.String() + ` AND conversation_id = ? ORDER BY created_at DESC, id DESC LIMIT ?)`
			qargs = append(qargs, args...)
			qargs = append(qargs, c, p.Limit)
		}
		q = strings.Join(arms, ` UNION ALL `) + ` ORDER BY created_at DESC, id DESC LIMIT ?`
		qargs = append(qargs, p.Limit)
	}
	rows, err := s.query(ctx, q, qargs...)
	out, err := collect(rows, err, scanMessage)
	return out, interpretError(err)
}

// MessageHourlyCounts implements driver.Store. Stored times have a
// fixed layout, so the first 13 characters of created_at are its hour.
func (s *Store) MessageHourlyCounts(ctx context.Context, p *driver.MessageCountParams) ([]*record.MessageCount, error) {
	rows, err := s.query(ctx, `SELECT substr(created_at, 1, 13), status, count(*) FROM messages INDEXED BY messages_created
		WHERE workspace_id = ? AND created_at >= ? GROUP BY 1, 2 ORDER BY 1, 2`, p.WorkspaceID, fmtTime(p.Since))
	if err != nil {
		return nil, interpretError(err)
	}
	defer rows.Close()
	var out []*record.MessageCount
	for rows.Next() {
		var hour string
		c := &record.MessageCount{}
		if err := rows.Scan(&hour, &c.Status, &c.Count); err != nil {
			return nil, interpretError(err)
		}
		if c.Hour, err = time.Parse("2006-01-02T15", hour); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, interpretError(rows.Err())
}
