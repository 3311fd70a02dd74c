package memstore

import (
	"cmp"
	"context"
	"slices"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging"
)

// ConversationList implements driver.Store. memstore derives the
// conversations from the workspace's messages at each call: a page costs
// time in proportion to the workspace's messages.
func (s *Store) ConversationList(ctx context.Context, p *driver.ConversationListParams) ([]*messaging.Conversation, error) {
	return read(ctx, s, func() ([]*messaging.Conversation, error) {
		byID := map[string]*messaging.Conversation{}
		for _, m := range s.wsMessages[p.WorkspaceID] {
			if p.ID != "" && m.ConversationID != p.ID {
				continue
			}
			c := byID[m.ConversationID]
			if c == nil {
				c = &messaging.Conversation{ID: m.ConversationID, WorkspaceID: m.WorkspaceID, Channel: m.Channel, To: m.To, LastMessage: m}
				byID[m.ConversationID] = c
			}
			if newestFirst(m, c.LastMessage) < 0 {
				c.LastMessage = m
			}
			if m.Direction == record.DirectionInbound && m.CreatedAt.After(c.LastInboundAt) {
				c.LastInboundAt = m.CreatedAt
			}
		}
		var out []*messaging.Conversation
		for _, c := range byID {
			c.LastMessageAt = c.LastMessage.CreatedAt
			if p.BeforeID != "" && cmp.Or(p.BeforeAt.Compare(c.LastMessageAt), cmp.Compare(p.BeforeID, c.ID)) <= 0 {
				continue
			}
			out = append(out, c)
		}
		slices.SortFunc(out, func(a, b *messaging.Conversation) int {
			return cmp.Or(b.LastMessageAt.Compare(a.LastMessageAt), cmp.Compare(b.ID, a.ID))
		})
		if len(out) > p.Limit {
			out = out[:p.Limit]
		}
		for _, c := range out {
			c.LastMessage = c.LastMessage.Clone()
		}
		return out, nil
	})
}

// ContactsByPhone implements driver.Store.
func (s *Store) ContactsByPhone(ctx context.Context, p *driver.ContactsByPhoneParams) ([]*messaging.Contact, error) {
	return read(ctx, s, func() ([]*messaging.Contact, error) {
		var out []*messaging.Contact
		for _, c := range s.contactList[p.WorkspaceID] {
			if c.Phone != "" && slices.Contains(p.Phones, c.Phone) {
				out = append(out, copyContact(c))
			}
		}
		return out, nil
	})
}
