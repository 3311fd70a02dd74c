package driver

import (
	"regexp"
	"strings"
)

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
