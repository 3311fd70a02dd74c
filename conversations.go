package messaging

import (
	"context"

	"github.com/ujumbe/messaging/internal/paging"
	"github.com/ujumbe/messaging/store/driver"
)

// Conversations lists a workspace's conversations.
type Conversations struct {
	svc *Service
	ws  string
}

// ConversationQuery selects a page of a workspace's conversations
// (Conversations.List).
type ConversationQuery struct {
	// Cursor is the NextCursor of the previous page; empty for the first.
	Cursor string
	// Limit is the page size, 1 to MaxPageSize; zero means DefaultPageSize.
	Limit int
}

// ConversationPage is a page of conversations, newest activity first.
type ConversationPage struct {
	Items []*Conversation
	// NextCursor continues the listing after the last item; empty when
	// this is the last page.
	NextCursor string
}

// List returns a page of the workspace's conversations, the one with the
// newest message first, each with its last message and its contact. A
// conversation that receives a message while the pages are read moves to
// the front: it is on a new first page, not on the next one.
func (cs *Conversations) List(ctx context.Context, q *ConversationQuery) (*ConversationPage, error) {
	query := opt(q)
	if err := new(texts).at(nil, "cursor", query.Cursor).result(); err != nil {
		return nil, err
	}
	limit, err := pageSize(query.Limit)
	if err != nil {
		return nil, err
	}
	query.Limit = limit
	p := &driver.ConversationListParams{WorkspaceID: cs.ws, Limit: query.Limit + 1}
	if p.BeforeAt, p.BeforeID, err = parseMessageCursor(query.Cursor); err != nil {
		return nil, err
	}
	list, err := cs.svc.store.ConversationList(ctx, p)
	if err != nil {
		return nil, wrapStoreError(err, "conversation", "")
	}
	page := &ConversationPage{}
	page.Items, page.NextCursor = paging.Cut(list, query.Limit, func(c *Conversation) string { return messageCursor(c.LastMessageAt, c.ID) })
	if err := cs.attachContacts(ctx, page.Items); err != nil {
		return nil, err
	}
	return page, nil
}

// Get returns one conversation of the workspace with its last message and
// its contact.
func (cs *Conversations) Get(ctx context.Context, id string) (*Conversation, error) {
	if badID(id) {
		return nil, notFound("conversation", id)
	}
	list, err := cs.svc.store.ConversationList(ctx, &driver.ConversationListParams{WorkspaceID: cs.ws, ID: id, Limit: 1})
	if err != nil {
		return nil, wrapStoreError(err, "conversation", id)
	}
	if len(list) == 0 {
		return nil, notFound("conversation", id)
	}
	if err := cs.attachContacts(ctx, list); err != nil {
		return nil, err
	}
	return list[0], nil
}

// Messages returns a page of the messages of one conversation, newest
// first; q.ConversationID is ignored. ErrNotFound (not_found) when the
// workspace has no such conversation.
func (cs *Conversations) Messages(ctx context.Context, id string, q *MessageQuery) (*MessagePage, error) {
	if _, err := cs.Get(ctx, id); err != nil {
		return nil, err
	}
	query := opt(q)
	query.ConversationID = id
	return (&Messages{svc: cs.svc, ws: cs.ws}).List(ctx, &query)
}

// attachContacts sets the Contact of the conversations on channels of
// phone recipients (WhatsApp) whose number is a contact's phone, with one
// store call.
func (cs *Conversations) attachContacts(ctx context.Context, list []*Conversation) error {
	var phones []string
	for _, c := range list {
		if cs.svc.phoneRecipients(c.Channel) {
			phones = append(phones, c.To)
		}
	}
	if len(phones) == 0 {
		return nil
	}
	contacts, err := cs.svc.store.ContactsByPhone(ctx, &driver.ContactsByPhoneParams{WorkspaceID: cs.ws, Phones: phones})
	if err != nil {
		return wrapStoreError(err, "contact", "")
	}
	byPhone := make(map[string]*Contact, len(contacts))
	for _, c := range contacts {
		byPhone[c.Phone] = c
	}
	var matched []*Contact
	for _, c := range list {
		if cs.svc.phoneRecipients(c.Channel) {
			c.Contact = byPhone[c.To]
			if c.Contact != nil {
				matched = append(matched, c.Contact)
			}
		}
	}
	return cs.svc.fillOptedOut(ctx, cs.ws, matched...)
}
