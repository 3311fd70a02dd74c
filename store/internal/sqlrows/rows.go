package sqlrows

import (
	"errors"
	"strings"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/store/driver"
)

// ContactColumns are the columns of a contact, in the order of
// ContactDest.
const ContactColumns = `id, workspace_id, first_name, last_name, full_name, phone, email, email_key,
	company, job_title, website, notes, source, tags, lifecycle, version, created_at, updated_at`

// ContactDest returns the scan destinations of ContactColumns into c; tags,
// created and updated are the destinations of the columns a store keeps in
// its own forms.
func ContactDest(c *messaging.Contact, tags, created, updated any) []any {
	return []any{&c.ID, &c.WorkspaceID, &c.FirstName, &c.LastName, &c.FullName, &c.Phone, &c.Email, &c.EmailKey,
		&c.Company, &c.JobTitle, &c.Website, &c.Notes, &c.Source, tags, &c.Lifecycle, &c.Version, created, updated}
}

// Qualify returns the comma-separated columns cols (white space folded),
// each prefixed with the table alias alias.
func Qualify(alias, cols string) string {
	return alias + "." + strings.Join(strings.Split(strings.Join(strings.Fields(cols), " "), ", "), ", "+alias+".")
}

// Scanner is a row that scans its columns into destinations.
type Scanner interface {
	Scan(dest ...any) error
}

// Prefixed scans the columns before those of another scan function into
// Pre, and the rest of Row into that function's destinations.
type Prefixed struct {
	Row Scanner
	Pre []any
}

// Scan scans Row into Pre followed by dest.
func (p Prefixed) Scan(dest ...any) error {
	return p.Row.Scan(append(append([]any{}, p.Pre...), dest...)...)
}

// Conversation returns the conversation whose last message is m; its last
// inbound time is the caller's to set.
func Conversation(m *messaging.Message) *messaging.Conversation {
	return &messaging.Conversation{ID: m.ConversationID, WorkspaceID: m.WorkspaceID, Channel: m.Channel, To: m.To,
		LastMessage: m, LastMessageAt: m.CreatedAt}
}

// Kept returns whether an insert that returns its row when it keeps it
// (INSERT ... SELECT ... RETURNING) kept it, given the error err of
// scanning that row: not kept, and no error, when err is noRows (the
// driver's error for no row).
func Kept(err, noRows error) (bool, error) {
	if errors.Is(err, noRows) {
		return false, nil
	}
	return err == nil, err
}

// StatusResult returns the result of one status update of a batch, given
// what the update returned: ErrNotFound when err is noRows (the message
// is missing or its status is not one it may change from), and err when
// it is another error (the batch fails).
func StatusResult(after *messaging.Message, changed bool, err, noRows error) (driver.MessageStatusResult, error) {
	if errors.Is(err, noRows) {
		return driver.MessageStatusResult{Err: messaging.ErrNotFound}, nil
	}
	if err != nil {
		return driver.MessageStatusResult{}, err
	}
	return driver.MessageStatusResult{Message: after, Changed: changed}, nil
}

// PendingSaved returns what a save of the pending report r returns, given
// whether its transaction kept r, the seq it was given and the
// transaction's error; it sets r.Seq when r was kept.
func PendingSaved(r *driver.PendingReport, kept bool, seq int64, err error) (bool, error) {
	if err != nil {
		return false, err
	}
	if kept {
		r.Seq = seq
	}
	return kept, nil
}

// Value returns v and no error when err is nil, else T's zero value and
// err: what a read returns from the value its transaction set.
func Value[T any](v T, err error) (T, error) {
	if err != nil {
		var zero T
		return zero, err
	}
	return v, nil
}
