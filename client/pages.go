package client

import (
	"iter"
	"net/url"
	"strconv"
)

// query is the cursor and limit of p as query parameters; a nil p sets
// none.
func (p *CursorParams) query() url.Values {
	q := url.Values{}
	if p == nil {
		return q
	}
	if p.Cursor != "" {
		q.Set("cursor", p.Cursor)
	}
	if p.Limit != 0 {
		q.Set("limit", strconv.Itoa(p.Limit))
	}
	return q
}

// cursorPage is a page of a cursor listing ({"data", "next_cursor"}): its
// items and the cursor of the next page (nil on the last).
type cursorPage[T any] interface {
	items() ([]T, *string)
}

func (p *MessagePage) items() ([]*Message, *string) { return p.Data, p.NextCursor }

func (p *ConversationPage) items() ([]*Conversation, *string) { return p.Data, p.NextCursor }

func (p *AuditPage) items() ([]*AuditEvent, *string) { return p.Data, p.NextCursor }

func (p *WebhookDeliveryPage) items() ([]*WebhookDelivery, *string) { return p.Data, p.NextCursor }

func (p *WorkspacePage) items() ([]*Workspace, *string) { return p.Data, p.NextCursor }

func (p *LedgerPage) items() ([]*LedgerEntry, *string) { return p.Data, p.NextCursor }

// cursorSeq iterates over the items of the pages list returns, following
// their next cursors from p's (p may be nil), fetching a page when the
// previous one is used up. An error ends the iteration after it is
// yielded.
func cursorSeq[T any, P cursorPage[T]](p *CursorParams, list func(*CursorParams) (P, error)) iter.Seq2[T, error] {
	var start CursorParams
	if p != nil {
		start = *p
	}
	return func(yield func(T, error) bool) {
		q := start
		for {
			page, err := list(&q)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			items, next := page.items()
			for _, it := range items {
				if !yield(it, nil) {
					return
				}
			}
			// null ends the list; "" or the same cursor again (which no
			// server of this API sends) would read the same pages forever.
			if next == nil || *next == "" || *next == q.Cursor {
				return
			}
			q.Cursor = *next
		}
	}
}

// messageSeq is cursorSeq of message pages: list is called with p's
// filters (p may be nil) and the cursor of each page.
func messageSeq(p *MessageListParams, list func(*MessageListParams) (*MessagePage, error)) iter.Seq2[*Message, error] {
	var start MessageListParams
	if p != nil {
		start = *p
	}
	return cursorSeq(&CursorParams{Cursor: start.Cursor, Limit: start.Limit}, func(cp *CursorParams) (*MessagePage, error) {
		q := start
		q.Cursor, q.Limit = cp.Cursor, cp.Limit
		return list(&q)
	})
}
