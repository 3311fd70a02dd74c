package messaging

import (
	"net/mail"
	"regexp"
	"strings"

	"github.com/nyaruka/phonenumbers"

	"github.com/ujumbe/messaging/internal/textcheck"
)

// NormalizePhone checks that s is a valid phone number in E.164 format
// ("+" followed by 7 to 15 digits, the country code first) and returns it.
// The number must be valid for its country according to libphonenumber's
// metadata (github.com/nyaruka/phonenumbers), so "+10000000000" is refused.
func NormalizePhone(s string) (string, error) {
	if !isE164Shape(s) {
		return "", validationError("phone", "must be in E.164 format: '+' then 7 to 15 digits")
	}
	if validE164Fast(s) {
		return s, nil
	}
	n, err := phonenumbers.Parse(s, "")
	if err != nil || !phonenumbers.IsValidNumber(n) {
		return "", validationError("phone", "is not a valid phone number for its country code")
	}
	if out := phonenumbers.Format(n, phonenumbers.E164); out != s {
		return "", validationError("phone", "must be in E.164 format (expected %s)", out)
	}
	return s, nil
}

var emailRe = regexp.MustCompile(`^[^@\s]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$`)

// ValidEmail reports whether s is a plain email address (local@domain, no
// display name, a domain with at least one dot, at most 254 characters).
func ValidEmail(s string) bool {
	if len(s) > 254 || !emailRe.MatchString(s) {
		return false
	}
	a, err := mail.ParseAddress(s)
	return err == nil && a.Address == s && a.Name == ""
}

// SearchFold folds s for contact search: surrounding space trimmed, inner
// runs of space collapsed to one, lower-cased (Unicode simple folding).
func SearchFold(s string) string {
	return strings.ToLower(strings.Join(strings.Fields(s), " "))
}

// phoneQueryRe matches a query that looks like (a part of) a phone number.
var phoneQueryRe = regexp.MustCompile(`^\+?[0-9(][0-9 ().-]*$`)

// ContactSearchQuery turns a user's search string into the Search and
// PhoneDigits of ContactListParams. PhoneDigits is set when the query looks
// like a phone number: optional '+', then digits, spaces, dots, dashes or
// parentheses.
func ContactSearchQuery(q string) (search, phoneDigits string) {
	search = SearchFold(q)
	if phoneQueryRe.MatchString(strings.TrimSpace(q)) {
		var b strings.Builder
		for _, r := range q {
			if r >= '0' && r <= '9' {
				b.WriteRune(r)
			}
		}
		phoneDigits = b.String()
	}
	return search, phoneDigits
}

// PhoneDigits returns the digits of an E.164 phone number (without '+').
func PhoneDigits(phone string) string { return strings.TrimPrefix(phone, "+") }

// refuseUnstorable refuses text that no store can keep, a NUL character or bytes
// that are not UTF-8, anywhere in the parameters v, with the validation
// error of the field (its JSON path). Every write of the service runs it
// first, so Go callers and REST callers meet the same rule on every store.
func refuseUnstorable(v any) error {
	if p := textcheck.Find(v); p != nil {
		field := p.Field
		if field == "" {
			field = "body"
		}
		return validationError(field, "%s", p.Rule)
	}
	return nil
}

// refuseUnstorableWorkspace refuses, as refuseUnstorable, a workspace id
// (of a handle) that no store keeps, naming the field workspaceID as the
// params did when they carried the workspace.
func refuseUnstorableWorkspace(ws string) error {
	return refuseUnstorable(struct{ WorkspaceID string }{ws})
}

// badID reports whether an id cannot name any record (it holds text no
// store keeps): such an id is not found, without asking the store.
func badID(id string) bool { return textcheck.Find(id) != nil }
