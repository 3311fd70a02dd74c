package record

import "time"

// Session is a signed-in dashboard session. It holds no secret: the token
// that proves it is shown once, by StartSession, and stored only as a
// hash.
type Session struct {
	// ID is the public id of the session ("ses_..."), never the secret.
	ID string
	// Subject is who signed in, for example "operator"; a dashboard
	// records it as the audit actor (WithActor) of the changes made in
	// the session.
	Subject string
	// Operator sessions may see every workspace.
	Operator bool
	// Workspaces are the ids of the workspaces the subject may see when it
	// is not Operator, sorted, without duplicates; empty for an operator.
	Workspaces []string
	// SMSAccounts are the partner ids of the SMS accounts the subject may
	// see when it is not Operator, sorted, without duplicates; empty for
	// an operator.
	SMSAccounts []string
	CreatedAt   time.Time
	// ExpiresAt is when the session stops working, whatever the client
	// holding it does.
	ExpiresAt time.Time
}

// Session limits.
const (
	// MaxSessionSubject is the longest messaging.SessionParams.Subject, in
	// characters.
	MaxSessionSubject = 100
	// MaxSessionWorkspaces is the most workspace ids of one session.
	MaxSessionWorkspaces = 100
	// MaxSessionSMSAccounts is the most SMS account ids of one session.
	MaxSessionSMSAccounts = 100
)

// MaxSessionBinding is the longest messaging.SessionParams.Binding, in bytes.
const MaxSessionBinding = 1024

// clone returns a copy of se that shares nothing with it.
// Clone returns a copy of se that shares no slice with it.
func (se Session) Clone() *Session {
	se.Workspaces = append([]string{}, se.Workspaces...)
	se.SMSAccounts = append([]string{}, se.SMSAccounts...)
	return &se
}
