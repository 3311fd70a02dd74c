package memstore

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging"
)

// MessageList implements driver.Store. It filters the workspace's
// messages and sorts the matches: memstore has no index, so a page costs
// time in proportion to the workspace's messages.
func (s *Store) MessageList(ctx context.Context, p *driver.MessageListParams) ([]*messaging.Message, error) {
	return read(ctx, s, func() ([]*messaging.Message, error) {
		var out []*messaging.Message
		for _, m := range s.wsMessages[p.WorkspaceID] {
			if listed(m, p) {
				out = append(out, m)
			}
		}
		slices.SortFunc(out, newestFirst)
		if len(out) > p.Limit {
			out = out[:p.Limit]
		}
		for i, m := range out {
			out[i] = m.Clone()
		}
		return out, nil
	})
}

// newestFirst orders messages by CreatedAt, then ID, both descending.
func newestFirst(a, b *messaging.Message) int {
	return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), cmp.Compare(b.ID, a.ID))
}

// listed reports whether m matches every filter of p and comes after its
// cursor.
func listed(m *messaging.Message, p *driver.MessageListParams) bool {
	match := func(filter, v string) bool { return filter == "" || filter == v }
	if !match(p.Direction, m.Direction) || !match(p.Status, m.Status) || !match(p.Channel, m.Channel) ||
		!match(p.To, m.To) || !match(p.ConversationID, m.ConversationID) {
		return false
	}
	if len(p.ConversationIDs) > 0 && !slices.Contains(p.ConversationIDs, m.ConversationID) {
		return false
	}
	if !p.CreatedAfter.IsZero() && m.CreatedAt.Before(p.CreatedAfter) {
		return false
	}
	if !p.CreatedBefore.IsZero() && !m.CreatedAt.Before(p.CreatedBefore) {
		return false
	}
	if p.BeforeID != "" {
		cursor := &messaging.Message{CreatedAt: p.BeforeCreatedAt, ID: p.BeforeID}
		return newestFirst(cursor, m) < 0
	}
	return true
}

// MessageHourlyCounts implements driver.Store.
func (s *Store) MessageHourlyCounts(ctx context.Context, p *driver.MessageCountParams) ([]*record.MessageCount, error) {
	return read(ctx, s, func() ([]*record.MessageCount, error) {
		type key struct {
			hour   int64
			status string
		}
		counts := map[key]int{}
		for _, m := range s.wsMessages[p.WorkspaceID] {
			if !m.CreatedAt.Before(p.Since) {
				counts[key{m.CreatedAt.UTC().Truncate(time.Hour).Unix(), m.Status}]++
			}
		}
		out := make([]*record.MessageCount, 0, len(counts))
		for k, n := range counts {
			out = append(out, &record.MessageCount{Hour: time.Unix(k.hour, 0).UTC(), Status: k.status, Count: n})
		}
		slices.SortFunc(out, func(a, b *record.MessageCount) int {
			return cmp.Or(a.Hour.Compare(b.Hour), cmp.Compare(a.Status, b.Status))
		})
		return out, nil
	})
}
