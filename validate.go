package messaging

import (
	"net/mail"
	"regexp"

	"github.com/nyaruka/phonenumbers"
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
