package messaging

// Policies for a send whose outcome stayed unknown through the
// confirmation window (WorkspaceInfo.UnconfirmedSends).
const (
	// UnconfirmedResend sends the message once more (the default).
	UnconfirmedResend = "resend"
	// UnconfirmedFail fails it with the reason [unconfirmed].
	UnconfirmedFail = "fail"
)

// ActiveUnconfirmedSends returns the workspace's policy for unconfirmed
// sends: UnconfirmedResend when it has none.
func (w *WorkspaceInfo) ActiveUnconfirmedSends() string {
	if w.UnconfirmedSends == "" {
		return UnconfirmedResend
	}
	return w.UnconfirmedSends
}
