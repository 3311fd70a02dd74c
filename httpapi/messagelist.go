package httpapi

import (
	"net/http"
	"strconv"
	"time"

	"github.com/ujumbe/messaging/record"

	"github.com/ujumbe/messaging"
)

// conversationJSON is an item of GET /v1/conversations.
type conversationJSON struct {
	ConversationID  string       `json:"conversation_id"`
	Channel         string       `json:"channel"`
	To              string       `json:"to"`
	LastMessage     messageJSON  `json:"last_message"`
	LastActivityAt  timestamp    `json:"last_activity_at"`
	LastInboundAt   *timestamp   `json:"last_inbound_at"`
	WindowExpiresAt *timestamp   `json:"window_expires_at"`
	Contact         *contactJSON `json:"contact"`
}

func (h *Handler) listMessages(w http.ResponseWriter, r *http.Request, p *messaging.Principal) error {
	q, err := messageQuery(r, true)
	if err != nil {
		return err
	}
	return answer(w, http.StatusOK, messagePageView)(h.svc.Workspace(p.WorkspaceID).Messages.List(r.Context(), q))
}

func (h *Handler) listConversationMessages(w http.ResponseWriter, r *http.Request, p *messaging.Principal) error {
	q, err := messageQuery(r, false)
	if err != nil {
		return err
	}
	return answer(w, http.StatusOK, messagePageView)(h.svc.Workspace(p.WorkspaceID).Conversations.Messages(r.Context(), r.PathValue("id"), q))
}

func (h *Handler) listConversations(w http.ResponseWriter, r *http.Request, p *messaging.Principal) error {
	q, err := query(r, "cursor", "limit")
	if err != nil {
		return err
	}
	limit, err := pageLimit(q)
	if err != nil {
		return err
	}
	list, err := h.svc.Workspace(p.WorkspaceID).Conversations.List(r.Context(), &messaging.ConversationQuery{Cursor: q["cursor"], Limit: limit})
	if err != nil {
		return err
	}
	out := make([]conversationJSON, len(list.Items))
	for i, c := range list.Items {
		out[i] = conversationJSON{
			ConversationID: c.ID, Channel: c.Channel, To: c.To, LastMessage: messageView(c.LastMessage),
			LastActivityAt: timestamp(c.LastMessageAt), LastInboundAt: optTimestamp(c.LastInboundAt),
			WindowExpiresAt: optTimestamp(c.WindowExpiresAt()),
		}
		if c.Contact != nil {
			v := contactView(c.Contact)
			out[i].Contact = &v
		}
	}
	writeJSON(w, http.StatusOK, page(out, list.NextCursor))
	return nil
}

// messageQuery decodes the query of a message listing; withConversation
// admits the conversation_id filter.
func messageQuery(r *http.Request, withConversation bool) (*messaging.MessageQuery, error) {
	allowed := []string{"direction", "status", "channel", "to", "created_after", "created_before", "cursor", "limit"}
	if withConversation {
		allowed = append(allowed, "conversation_id")
	}
	q, err := query(r, allowed...)
	if err != nil {
		return nil, err
	}
	mq := &messaging.MessageQuery{Direction: q["direction"], Status: q["status"], Channel: q["channel"], To: q["to"],
		ConversationID: q["conversation_id"], Cursor: q["cursor"]}
	if mq.Limit, err = pageLimit(q); err != nil {
		return nil, err
	}
	for name, dst := range map[string]*time.Time{"created_after": &mq.CreatedAfter, "created_before": &mq.CreatedBefore} {
		v, ok := q[name]
		if !ok {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return nil, badRequest(name, "must be an RFC 3339 time such as 2026-03-04T05:06:07Z (got %q)", v)
		}
		*dst = t
	}
	return mq, nil
}

// pageLimit decodes the limit parameter; 0 when absent (the default).
func pageLimit(q map[string]string) (int, error) {
	v, ok := q["limit"]
	if !ok {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > record.MaxPageSize {
		return 0, badRequest("limit", "must be an integer from 1 to %d (got %q)", record.MaxPageSize, v)
	}
	return n, nil
}

func messagePageView(list *messaging.MessagePage) pageJSON[messageJSON] {
	return page(viewEach(messageView)(list.Items), list.NextCursor)
}

func optTimestamp(t time.Time) *timestamp {
	if t.IsZero() {
		return nil
	}
	ts := timestamp(t)
	return &ts
}
