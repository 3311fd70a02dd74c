package messaging

import (
	"context"
	"errors"

	"github.com/ujumbe/messaging/record"
)

// inboundType returns the type an inbound message of the provider's type
// typ is stored with: typ itself when the service knows it (empty is
// text), else TypeUnsupported.
func inboundType(typ string) string {
	switch typ {
	case "":
		return record.TypeText
	case record.TypeText, record.TypeImage, record.TypeVideo, record.TypeAudio, record.TypeDocument, record.TypeSticker,
		record.TypeLocation, record.TypeContacts, record.TypeInteractive, record.TypeButton, record.TypeReaction:
		return typ
	}
	return record.TypeUnsupported
}

// resolveReferences sets the workspace's message ids of the messages c
// replies and reacts to, from their provider ids: a provider id of no
// message of workspace ws leaves the id empty.
func (s *Service) resolveReferences(ctx context.Context, ws string, c *InboundContent) error {
	resolve := func(providerID string) (string, error) {
		if providerID == "" {
			return "", nil
		}
		m, err := s.store.MessageGetByProviderID(ctx, providerID)
		switch {
		case errors.Is(err, ErrNotFound):
			return "", nil
		case err != nil:
			return "", wrapStoreError(err, "message", "")
		case m.WorkspaceID != ws:
			return "", nil
		}
		return m.ID, nil
	}
	var err error
	if c.Context != nil {
		if c.Context.MessageID, err = resolve(c.Context.ProviderMessageID); err != nil {
			return err
		}
	}
	if c.Reaction != nil {
		if c.Reaction.MessageID, err = resolve(c.Reaction.ProviderMessageID); err != nil {
			return err
		}
	}
	return nil
}
