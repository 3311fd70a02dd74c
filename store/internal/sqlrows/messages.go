package sqlrows

import (
	"time"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/store/internal/storedjson"
)

// MessageInsertColumns are the columns a message insert writes, in the
// order of MessageInsertArgs; a new message's history is empty (the
// column's default).
const MessageInsertColumns = `id, workspace_id, conversation_id, channel, recipient, direction, status, failure_reason,
	type, text, media_url, caption, filename, template_name, language, components,
	idempotency_key, request_hash, provider_message_id, created_at, updated_at,
	due_at, lease_owner, attempts, last_error, trace_parent, content, send_at`

// MessageColumns are the columns of a message: MessageInsertColumns, then
// its status history, the time it has been unconfirmed since and the time
// it was marked read (NULL until then: a new message is unread).
const MessageColumns = MessageInsertColumns + `, history, unconfirmed_since, read_at`

// MessageInsertArgs are the values of MessageInsertColumns for m: its
// components and content (inbound or outbound) in their stored JSON forms, its times as stamp
// stores them (its SendAt NULL when it has none).
func MessageInsertArgs[T any](m *messaging.Message, stamp func(time.Time) T) ([]any, error) {
	comps, err := storedjson.EncodeSendComponents(m.Components)
	if err != nil {
		return nil, err
	}
	content, err := storedjson.EncodeContent(m.Content, m.Outbound)
	if err != nil {
		return nil, err
	}
	var sendAt any
	if m.SendAt != nil {
		sendAt = stamp(*m.SendAt)
	}
	return []any{m.ID, m.WorkspaceID, m.ConversationID, m.Channel, m.To, m.Direction, m.Status, m.FailureReason,
		m.Type, m.Text, m.MediaURL, m.Caption, m.Filename, m.TemplateName, m.Language, comps,
		m.IdempotencyKey, m.RequestHash, m.ProviderMessageID, stamp(m.CreatedAt), stamp(m.UpdatedAt),
		stamp(m.DueAt), m.LeaseOwner, m.Attempts, m.LastError, m.TraceParent, content, sendAt}, nil
}
