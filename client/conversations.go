package client

import (
	"context"
	"iter"
)

// Conversations lists the conversations of the workspace and their
// messages (scope read:messages).
type Conversations struct{ r *restClient }

// List returns one page of conversations, the most recently active first
// (GET /v1/conversations). p may be nil.
func (s *Conversations) List(ctx context.Context, p *CursorParams) (*ConversationPage, error) {
	return get[ConversationPage](ctx, s.r, p.query(), "/v1/conversations")
}

// All iterates over the conversations of every page from p.Cursor on.
func (s *Conversations) All(ctx context.Context, p *CursorParams) iter.Seq2[*Conversation, error] {
	return cursorSeq(p, func(q *CursorParams) (*ConversationPage, error) { return s.List(ctx, q) })
}

// Messages returns one page of a conversation's messages, newest first
// (GET /v1/conversations/{id}/messages). p filters as for Messages.List,
// except that its ConversationID must be empty; p may be nil.
func (s *Conversations) Messages(ctx context.Context, id string, p *MessageListParams) (*MessagePage, error) {
	return get[MessagePage](ctx, s.r, p.query(), "/v1/conversations/%s/messages", id)
}

// AllMessages iterates over a conversation's messages of every page from
// p.Cursor on.
func (s *Conversations) AllMessages(ctx context.Context, id string, p *MessageListParams) iter.Seq2[*Message, error] {
	return messageSeq(p, func(q *MessageListParams) (*MessagePage, error) { return s.Messages(ctx, id, q) })
}
