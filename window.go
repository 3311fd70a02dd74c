package messaging

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"
)

// Policies for free-form sends outside the customer-service window
// (WorkspaceInfo.OutsideWindow).
const (
	// OutsideWindowProvider accepts the send and lets the provider decide:
	// WhatsApp fails it with [131047] Re-engagement message, Messenger and
	// Instagram with their own outside-window errors. The default.
	OutsideWindowProvider = "provider"
	// OutsideWindowReject refuses the send at once with
	// CodeOutsideWindow (422): the caller must send a template.
	OutsideWindowReject = "reject"
)

// ActiveOutsideWindow returns the policy in force in workspace w for
// free-form sends outside the customer-service window: its own, or
// OutsideWindowProvider, the default, when it has none.
func (w *WorkspaceInfo) ActiveOutsideWindow() string {
	return cmp.Or(w.OutsideWindow, OutsideWindowProvider)
}

// outsideWindowPolicy validates a policy and returns its stored form:
// empty for the default.
func outsideWindowPolicy(p string) (string, error) {
	return twoWayPolicy("outside_window", p, OutsideWindowProvider, OutsideWindowReject)
}

// twoWayPolicy validates p, a workspace setting of field that is def (the
// default, also as "") or other, and returns its stored form: empty for
// the default.
func twoWayPolicy(field, p, def, other string) (string, error) {
	switch p {
	case "", def:
		return "", nil
	case other:
		return other, nil
	}
	return "", validationError(field, "must be %s or %s (got %q)", def, other, p)
}

// WorkspaceSettings are the settings of a workspace an operator may
// change after its creation. A nil field leaves its setting unchanged.
type WorkspaceSettings struct {
	// OutsideWindow is OutsideWindowProvider (or empty, the same) or
	// OutsideWindowReject: what a free-form (non-template) send to a
	// recipient outside the customer-service window gets, on every
	// channel (WhatsApp's window, and Messenger's and Instagram's standard
	// messaging windows, are all CustomerServiceWindow after the
	// recipient's last message). Template sends are never affected.
	OutsideWindow *string
	// UnconfirmedSends is UnconfirmedResend (or empty, the same) or
	// UnconfirmedFail: what becomes of a message whose send outcome is
	// unknown (the provider may have taken it, and no answer was
	// recorded) when the dispatcher's confirmation window ends with no
	// confirmation from the provider.
	UnconfirmedSends *string
	// OptOutKeywords replace the workspace's opt-out keywords; an empty
	// list restores the defaults (OptOutKeywords). The rules are those of
	// CreateWorkspaceParams.OptOutKeywords, and no keyword may be an
	// opt-in keyword the workspace keeps.
	OptOutKeywords *[]string
	// OptInKeywords replace the workspace's opt-in keywords; an empty
	// list restores the defaults (OptInKeywords).
	OptInKeywords *[]string
}

// SetWorkspaceSettings changes the settings of workspace id that p gives
// (at least one), audited as AuditWorkspaceUpdated, and returns the
// workspace. Nothing is stored when a setting is refused.
func (s *Service) SetWorkspaceSettings(ctx context.Context, id string, p *WorkspaceSettings) (*WorkspaceInfo, error) {
	if err := refuseUnstorable(p, workspaceSettingsTexts); err != nil {
		return nil, err
	}
	if p == nil || (p.OutsideWindow == nil && p.UnconfirmedSends == nil && p.OptOutKeywords == nil && p.OptInKeywords == nil) {
		return nil, validationError("body", "must give at least one setting: outside_window, unconfirmed_sends, opt_out_keywords or opt_in_keywords")
	}
	up := &WorkspaceSettingsParams{WorkspaceID: id}
	if p.OutsideWindow != nil {
		policy, err := outsideWindowPolicy(*p.OutsideWindow)
		if err != nil {
			return nil, err
		}
		up.OutsideWindow = &policy
	}
	if p.UnconfirmedSends != nil {
		policy, err := unconfirmedSendsPolicy(*p.UnconfirmedSends)
		if err != nil {
			return nil, err
		}
		up.UnconfirmedSends = &policy
	}
	var err error
	if up.OptOutKeywords, err = optionalKeywordList("opt_out_keywords", p.OptOutKeywords); err != nil {
		return nil, err
	}
	if up.OptInKeywords, err = optionalKeywordList("opt_in_keywords", p.OptInKeywords); err != nil {
		return nil, err
	}
	if badID(id) {
		return nil, notFound("workspace", id)
	}
	for attempt := 1; ; attempt++ {
		if up.OptOutKeywords != nil || up.OptInKeywords != nil {
			// The new lists are checked against the stored ones (not the
			// cache), and stored only while those are unchanged: a
			// concurrent change of the other list makes the store answer
			// ErrConflict, and the check is made again on the lists it
			// stored.
			cur, err := s.raw.WorkspaceGet(ctx, id)
			if err != nil {
				return nil, wrapStoreError(err, "workspace", id)
			}
			up.Expect = &WorkspaceKeywords{OptOut: cur.OptOutKeywords, OptIn: cur.OptInKeywords}
			out, in := cur.OptOutKeywords, cur.OptInKeywords
			if up.OptOutKeywords != nil {
				out = *up.OptOutKeywords
			}
			if up.OptInKeywords != nil {
				in = *up.OptInKeywords
			}
			if err := checkKeywordOverlap(out, in, up.OptOutKeywords != nil, up.OptInKeywords != nil); err != nil {
				return nil, err
			}
		}
		err := s.store.WorkspaceSetSettings(ctx, up)
		if errors.Is(err, ErrConflict) && attempt < maxSettingsAttempts {
			continue
		}
		if err != nil {
			return nil, wrapStoreError(err, "workspace", id)
		}
		s.audit(ctx, id, AuditWorkspaceUpdated, id)
		return s.GetWorkspace(ctx, id)
	}
}

// maxSettingsAttempts bounds the compare-and-set attempts of one
// SetWorkspaceSettings; each fails only when another change of the
// workspace's keywords committed in between.
const maxSettingsAttempts = 5

// refuseOutsideWindow refuses a free-form message to a recipient whose
// customer-service window is closed (never wrote, or last wrote more than
// CustomerServiceWindow ago) when the workspace w rejects such sends.
func (m *Messages) refuseOutsideWindow(ctx context.Context, w *WorkspaceInfo, msg *Message) error {
	if w.OutsideWindow != OutsideWindowReject {
		return nil
	}
	convs, err := m.svc.store.ConversationList(ctx, &ConversationListParams{WorkspaceID: m.ws,
		ID: ConversationID(m.ws, msg.Channel, msg.To), Limit: 1})
	if err != nil {
		return wrapStoreError(err, "conversation", "")
	}
	now := m.svc.now()
	var ends time.Time
	if len(convs) == 1 {
		ends = convs[0].WindowExpiresAt()
	}
	if !ends.IsZero() && now.Before(ends) {
		return nil
	}
	why := "has never written to this workspace"
	if !ends.IsZero() {
		why = "last wrote at " + FormatTime(convs[0].LastInboundAt) + "; the window closed at " + FormatTime(ends)
	}
	return &Error{Code: CodeOutsideWindow, Field: "to", Path: FieldPath("to"),
		Message: fmt.Sprintf("to: %s is outside the %s customer-service window (%s): free-form messages are refused in this workspace; send an approved template (POST /v1/messages/templates) instead",
			msg.To, msg.Channel, why)}
}

// WindowExpiresAt returns the end of the customer-service window an
// inbound message opened (its CreatedAt plus CustomerServiceWindow), or
// the zero time for an outbound message. A later inbound message of the
// conversation extends the window: the conversation's WindowExpiresAt is
// the current end.
func (m *Message) WindowExpiresAt() time.Time {
	if m.Direction != DirectionInbound {
		return time.Time{}
	}
	return m.CreatedAt.Add(CustomerServiceWindow)
}
