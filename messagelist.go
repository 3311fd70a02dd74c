package messaging

import (
	"context"
	"encoding/base64"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ujumbe/messaging/internal/defaults"
	"github.com/ujumbe/messaging/internal/paging"
	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"
)

// MessageQuery selects a page of a workspace's messages (Messages.List).
// Every filter is optional; the empty value matches everything.
type MessageQuery struct {
	// Direction is "inbound" or "outbound".
	Direction string
	// Status is one of the message statuses.
	Status string
	// Channel is one of the channels.
	Channel string
	// To is the recipient of an outbound message or the sender of an
	// inbound one, exactly as stored (E.164 on WhatsApp).
	To string
	// ConversationID is the conversation of the messages.
	ConversationID string
	// CreatedAfter, when non-zero, keeps messages created at or after it.
	CreatedAfter time.Time
	// CreatedBefore, when non-zero, keeps messages created before it.
	CreatedBefore time.Time
	// Cursor is the NextCursor of the previous page; empty for the first.
	Cursor string
	// Limit is the page size, 1 to MaxPageSize; zero means DefaultPageSize.
	Limit int
}

// MessagePage is a page of messages, newest first.
type MessagePage struct {
	Items []*Message
	// NextCursor continues the listing after the last item; empty when
	// this is the last page.
	NextCursor string
}

// List returns a page of the workspace's messages, newest first (by
// creation time, then id). Paging is by cursor, so a page is stable under
// concurrent inserts: a message created after the first page was read is
// never shown on a later one.
func (m *Messages) List(ctx context.Context, q *MessageQuery) (*MessagePage, error) {
	query := opt(q)
	if err := refuseUnstorable(&query, messageQueryTexts); err != nil {
		return nil, err
	}
	limit, err := pageSize(query.Limit)
	if err != nil {
		return nil, err
	}
	query.Limit = limit
	if query.Direction != "" && query.Direction != record.DirectionInbound && query.Direction != record.DirectionOutbound {
		return nil, validationError("direction", "must be inbound or outbound (got %q)", query.Direction)
	}
	if query.Status != "" && !slices.Contains(messageStatuses, query.Status) {
		return nil, validationError("status", "must be one of %s (got %q)", strings.Join(messageStatuses, ", "), query.Status)
	}
	if query.Channel != "" {
		if err := m.svc.validateChannel(query.Channel); err != nil {
			return nil, err
		}
	}
	if err := checkLen(record.FieldPath("to"), query.To, maxRecipientLen); err != nil {
		return nil, err
	}
	if err := checkLen(record.FieldPath("conversation_id"), query.ConversationID, maxRecipientLen); err != nil {
		return nil, err
	}
	if !query.CreatedAfter.IsZero() && !query.CreatedBefore.IsZero() && !query.CreatedAfter.Before(query.CreatedBefore) {
		return nil, validationError("created_before", "must be later than created_after")
	}
	p := &driver.MessageListParams{
		WorkspaceID: m.ws, Direction: query.Direction, Status: query.Status, Channel: query.Channel,
		To: query.To, ConversationID: query.ConversationID,
		CreatedAfter: query.CreatedAfter, CreatedBefore: query.CreatedBefore, Limit: query.Limit + 1,
	}
	if query.To != "" && query.ConversationID == "" {
		// A recipient's messages on a channel are one conversation.
		channels := m.svc.Channels()
		if query.Channel != "" {
			channels = []string{query.Channel}
		}
		for _, c := range channels {
			p.ConversationIDs = append(p.ConversationIDs, record.ConversationID(m.ws, c, query.To))
		}
	}
	if p.BeforeCreatedAt, p.BeforeID, err = parseMessageCursor(query.Cursor); err != nil {
		return nil, err
	}
	list, err := m.svc.store.MessageList(ctx, p)
	if err != nil {
		return nil, wrapStoreError(err, "message", "")
	}
	page := &MessagePage{}
	page.Items, page.NextCursor = paging.Cut(list, query.Limit, func(m *Message) string { return messageCursor(m.CreatedAt, m.ID) })
	if err := m.svc.attachFallbacks(ctx, m.ws, page.Items...); err != nil {
		return nil, err
	}
	return page, nil
}

// pageSize checks the limit of a cursor-paged listing: 1 to MaxPageSize,
// zero meaning DefaultPageSize.
func pageSize(limit int) (int, error) {
	size, ok := paging.Size(limit, defaults.DefaultPageSize, record.MaxPageSize)
	if !ok {
		return 0, validationError("limit", "must be an integer from 1 to %d", record.MaxPageSize)
	}
	return size, nil
}

// seqPage checks the page of a listing newest first by sequence number:
// the size limit (1 to max; 0 means 50) and the cursor, which gives before
// (0 for the empty cursor: from the newest).
func seqPage(cursor string, limit, max int) (before int64, size int, err error) {
	size, ok := paging.Size(limit, 50, max)
	if !ok {
		return 0, 0, validationError("limit", "must be 1 to %d", max)
	}
	before, ok = paging.ParseSeq(cursor)
	if !ok {
		return 0, 0, validationError("cursor", "is not a cursor this API returned")
	}
	return before, size, nil
}

// messageStatuses are the statuses a message can have, in the order of
// their life.
var messageStatuses = []string{StatusQueued, StatusSent, StatusDelivered, StatusRead, StatusFailed, StatusCanceled}

// maxRecipientLen bounds the to and conversation_id filters: longer values
// match no message.
const maxRecipientLen = 256

// messageCursor encodes the position of a message in the listing order.
func messageCursor(at time.Time, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(at.UnixNano(), 10) + "." + id))
}

// parseMessageCursor reads a cursor of messageCursor; the empty cursor is
// the zero position (the first page).
func parseMessageCursor(c string) (time.Time, string, error) {
	if c == "" {
		return time.Time{}, "", nil
	}
	bad := validationError("cursor", "is not a cursor this API returned")
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return time.Time{}, "", bad
	}
	ns, id, ok := strings.Cut(string(b), ".")
	if !ok || id == "" || badID(id) {
		return time.Time{}, "", bad
	}
	n, err := strconv.ParseInt(ns, 10, 64)
	if err != nil || n <= 0 {
		return time.Time{}, "", bad
	}
	return time.Unix(0, n).UTC(), id, nil
}

// HourlyCounts returns how many of the workspace's messages were created
// in each hour since since (rounded down to the hour), by their current
// status. Hours and statuses without messages are absent.
func (m *Messages) HourlyCounts(ctx context.Context, since time.Time) ([]*record.MessageCount, error) {
	counts, err := m.svc.store.MessageHourlyCounts(ctx, &driver.MessageCountParams{WorkspaceID: m.ws, Since: since.UTC().Truncate(time.Hour)})
	if err != nil {
		return nil, wrapStoreError(err, "message", "")
	}
	return counts, nil
}

// QueueStats describes the workspace's share of the dispatch queue: its
// queued outbound messages, how many are due now, and the oldest due time.
func (m *Messages) QueueStats(ctx context.Context) (*MessageQueueStats, error) {
	st, err := m.svc.store.MessageQueueStats(ctx, &driver.MessageQueueStatsParams{WorkspaceID: m.ws, Now: m.svc.now()})
	if err != nil {
		return nil, wrapStoreError(err, "message", "")
	}
	return st, nil
}
