package pgstore

import (
	"context"
	"strconv"
	"strings"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/jackc/pgx/v5"
	"github.com/ujumbe/messaging"
)

// MessageList implements driver.Store through the index
// messages_created (workspace_id, created_at, id), read backwards, or
// messages_conversation_created (workspace_id, conversation_id,
// created_at, id) for the messages of one or more conversations (each
// conversation's own page, merged).
func (s *Store) MessageList(ctx context.Context, p *driver.MessageListParams) ([]*messaging.Message, error) {
	var where strings.Builder
	args := []any{p.WorkspaceID}
	where.WriteString(`workspace_id = $1`)
	cond := func(sql string, vals ...any) {
		for _, v := range vals {
			args = append(args, v)
			sql = strings.Replace(sql, "?", "$"+strconv.Itoa(len(args)), 1)
		}
		where.WriteString(` AND ` + sql)
	}
	filter := func(col, v string) {
		if v != "" {
			cond(col+` = ?`, v)
		}
	}
	filter("direction", p.Direction)
	filter("status", p.Status)
	filter("channel", p.Channel)
	filter("recipient", p.To)
	if !p.CreatedAfter.IsZero() {
		cond(`created_at >= ?`, ts(p.CreatedAfter))
	}
	if !p.CreatedBefore.IsZero() {
		cond(`created_at < ?`, ts(p.CreatedBefore))
	}
	if p.BeforeID != "" {
		cond(`(created_at, id) < (?, ?)`, ts(p.BeforeCreatedAt), p.BeforeID)
	}
	convs, none := driver.ListedConversations(p)
	if none {
		return nil, nil
	}
	var q string
	switch len(convs) {
	case 0, 1:
		if len(convs) == 1 {
			cond(`conversation_id = ?`, convs[0])
		}
		args = append(args, p.Limit)
		q = `SELECT ` + messageCols + ` FROM messages
			WHERE ` + where.String() + ` ORDER BY created_at DESC, id DESC LIMIT $` + strconv.Itoa(len(args))
	default:
		// Each conversation's own page, through the index on
		// (workspace_id, conversation_id, created_at, id), merged.
		args = append(args, convs, p.Limit)
		convsArg, limit := "$"+strconv.Itoa(len(args)-1), "$"+strconv.Itoa(len(args))
		q = `SELECT ` + messageCols + ` FROM unnest(` + convsArg + `::text[]) AS listed (conv),
			LATERAL (SELECT * FROM messages WHERE ` + where.String() + ` AND conversation_id = listed.conv
				ORDER BY created_at DESC, id DESC LIMIT ` + limit + `) m
			ORDER BY created_at DESC, id DESC LIMIT ` + limit
	}
	list, err := queryAll(ctx, s.pool, scanMessage, q, args...)
	return list, interpretError(err)
}

// nanosPerHour turns a stored time (Unix nanoseconds) into its hour.
const nanosPerHour = 3600 * 1000 * 1000 * 1000

// MessageHourlyCounts implements driver.Store.
func (s *Store) MessageHourlyCounts(ctx context.Context, p *driver.MessageCountParams) ([]*record.MessageCount, error) {
	list, err := queryAll(ctx, s.pool, func(r pgx.Row) (*record.MessageCount, error) {
		var hour int64
		c := &record.MessageCount{}
		if err := r.Scan(&hour, &c.Status, &c.Count); err != nil {
			return nil, err
		}
		c.Hour = fromTS(hour * nanosPerHour)
		return c, nil
	}, `SELECT created_at / `+strconv.Itoa(nanosPerHour)+`, status, count(*) FROM messages
		WHERE workspace_id = $1 AND created_at >= $2 GROUP BY 1, 2 ORDER BY 1, 2`, p.WorkspaceID, ts(p.Since))
	return list, interpretError(err)
}
