package record

import (
	"cmp"
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
	// messaging.CreateWorkspaceParams.OptOutKeywords, and no keyword may be an
	// opt-in keyword the workspace keeps.
	OptOutKeywords *[]string
	// OptInKeywords replace the workspace's opt-in keywords; an empty
	// list restores the defaults (OptInKeywords).
	OptInKeywords *[]string
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
