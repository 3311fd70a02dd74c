package messaging

import "github.com/ujumbe/messaging/record"

// unconfirmedSendsPolicy validates a policy and returns its stored form:
// empty for the default.
func unconfirmedSendsPolicy(p string) (string, error) {
	return twoWayPolicy("unconfirmed_sends", p, record.UnconfirmedResend, record.UnconfirmedFail)
}
