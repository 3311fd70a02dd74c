package textcheck

import "testing"

func TestRule(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"empty", "", ""},
		{"text", "héllo +254712345678", ""},
		{"NUL", "+2547\x00", RuleNUL},
		{"NUL at the end", "a\x00", RuleNUL},
		{"invalid UTF-8", "\xff", RuleUTF8},
		{"invalid UTF-8 before NUL", "\xff\x00", RuleUTF8},
	} {
		if got := Rule(tc.in); got != tc.want {
			t.Errorf("%s: Rule(%q) = %q, want %q", tc.name, tc.in, got, tc.want)
		}
	}
}
