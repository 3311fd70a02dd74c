package record

import "cmp"

// Policies for a message whose send outcome is unknown (the provider may
// have taken it, and no answer was recorded) once the dispatcher's
// confirmation window ends with no confirmation from the provider
// (WorkspaceInfo.UnconfirmedSends).
const (
	// UnconfirmedResend sends the message once more: the recipient may
	// get it twice, but does get it. The default.
	UnconfirmedResend = "resend"
	// UnconfirmedFail fails the message, its FailureReason starting with
	// "[unconfirmed]": the recipient gets it at most once, and may not
	// get it at all.
	UnconfirmedFail = "fail"
)

// ActiveUnconfirmedSends returns the policy in force in workspace w for a
// send whose outcome stayed unknown through the confirmation window: its
// own, or UnconfirmedResend, the default, when it has none.
func (w *WorkspaceInfo) ActiveUnconfirmedSends() string {
	return cmp.Or(w.UnconfirmedSends, UnconfirmedResend)
}
