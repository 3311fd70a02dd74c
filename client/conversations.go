package client

import (
	"context"
	"iter"
)

// Conversations lists the conversations of the workspace and their
// messages (scope read:messages).
type Conversations struct{ c *Client }

// List returns one page of conversations, the most recently active first
// (GET /v1/conversations). p may be nil.
func (s *Conversations) List(ctx context.Context, p *CursorParams) (*ConversationPage, error) {
	return get[ConversationPage](ctx, s.c, "/v1/conversations", p.query())
}

// All iterates over the conversations of every page from p.Cursor on.
func (s *Conversations) All(ctx context.Context, p *CursorParams) iter.Seq2[*Conversation, error] {
	return cursorSeq(p, func(q *CursorParams) ([]*Conversation, *string, error) {
		page, err := s.List(ctx, q)
		if err != nil {
			return nil, nil, err
		}
		return page.Data, page.NextCursor, nil
	})
}

// Messages returns one page of a conversation's messages, newest first
// (GET /v1/conversations/{id}/messages). p filters as for Messages.List,
// except that its ConversationID must be empty; p may be nil.
func (s *Conversations) Messages(ctx context.Context, id string, p *MessageListParams) (*MessagePage, error) {
	path, err := pathf("/v1/conversations/%s/messages", id)
	if err != nil {
		return nil, err
	}
	return get[MessagePage](ctx, s.c, path, p.query())
}

// AllMessages iterates over a conversation's messages of every page from
// p.Cursor on.
func (s *Conversations) AllMessages(ctx context.Context, id string, p *MessageListParams) iter.Seq2[*Message, error] {
	var start MessageListParams
	if p != nil {
		start = *p
	}
	return cursorSeq(&CursorParams{Cursor: start.Cursor, Limit: start.Limit}, func(cp *CursorParams) ([]*Message, *string, error) {
		q := start
		q.Cursor, q.Limit = cp.Cursor, cp.Limit
		page, err := s.Messages(ctx, id, &q)
		if err != nil {
			return nil, nil, err
		}
		return page.Data, page.NextCursor, nil
	})
}
