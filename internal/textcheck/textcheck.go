// Package textcheck finds text that no store can keep: a NUL character
// (PostgreSQL's text type refuses it, SQLite would keep it and cut it
// short in C strings) or bytes that are not UTF-8. The library's services
// run it over every string of the parameters of every write, naming each
// field themselves, so Go callers get the same validation error as REST
// callers, on every store.
package textcheck

import (
	"strings"
	"unicode/utf8"
)

// The rules Rule reports, ready to follow "field: ".
const (
	RuleUTF8 = "must be valid UTF-8"
	RuleNUL  = "must not contain NUL characters (\\u0000)"
)

// Rule returns the rule s breaks, RuleUTF8 or RuleNUL, or "" when a store
// can keep s.
func Rule(s string) string {
	switch {
	case !utf8.ValidString(s):
		return RuleUTF8
	case strings.IndexByte(s, 0) >= 0:
		return RuleNUL
	}
	return ""
}
