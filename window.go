package messaging

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"
)

// outsideWindowPolicy validates a policy and returns its stored form:
// empty for the default.
func outsideWindowPolicy(p string) (string, error) {
	return twoWayPolicy("outside_window", p, record.OutsideWindowProvider, record.OutsideWindowReject)
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
	up := &driver.WorkspaceSettingsParams{WorkspaceID: id}
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
			up.Expect = &record.WorkspaceKeywords{OptOut: cur.OptOutKeywords, OptIn: cur.OptInKeywords}
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
		s.audit(ctx, id, record.AuditWorkspaceUpdated, id)
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
	if w.OutsideWindow != record.OutsideWindowReject {
		return nil
	}
	convs, err := m.svc.store.ConversationList(ctx, &driver.ConversationListParams{WorkspaceID: m.ws,
		ID: record.ConversationID(m.ws, msg.Channel, msg.To), Limit: 1})
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
		why = "last wrote at " + record.FormatTime(convs[0].LastInboundAt) + "; the window closed at " + record.FormatTime(ends)
	}
	return errorOn(CodeOutsideWindow, "to", fmt.Sprintf("to: %s is outside the %s customer-service window (%s): free-form messages are refused in this workspace; send an approved template (POST /v1/messages/templates) instead",
		msg.To, msg.Channel, why), nil)
}
