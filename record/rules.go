package record

import "fmt"

// validationErrorAt is the CodeValidation error of the field at path,
// naming it and the rule.
func validationErrorAt(path Path, format string, args ...any) *Error {
	f := path.String()
	return &Error{Code: CodeValidation, Field: f, Path: path, Message: f + ": " + fmt.Sprintf(format, args...)}
}

// allDigits reports whether s is 1 to max ASCII digits.
func allDigits(s string, max int) bool {
	if s == "" || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
