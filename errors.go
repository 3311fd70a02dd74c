package messaging

import (
	"errors"
	"fmt"

	"github.com/ujumbe/messaging/record"
)

// ErrorCode returns the spec code carried by err, or CodeInternal when err is
// not an *Error.
func ErrorCode(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	if errors.Is(err, ErrNotFound) {
		return CodeNotFound
	}
	if errors.Is(err, ErrConflict) {
		return CodeConflict
	}
	if errors.Is(err, ErrUnavailable) {
		return CodeServiceUnavailable
	}
	return CodeInternal
}

// validationError is the validation error of the top-level member field:
// "<field>: <rule>".
func validationError(field, format string, args ...any) *Error {
	return fieldError(CodeValidation, record.FieldPath(field), format, args...)
}

// validationErrorAt is the validation error of the field at path.
func validationErrorAt(path Path, format string, args ...any) *Error {
	return fieldError(CodeValidation, path, format, args...)
}

// fieldError is the error of code about the field at path, its message
// "<field>: <text>".
func fieldError(code Code, path Path, format string, args ...any) *Error {
	f := path.String()
	return &Error{Code: code, Field: f, Path: path, Message: f + ": " + fmt.Sprintf(format, args...)}
}

// errorOn is the error of code about the top-level request field name,
// with the whole message msg and the cause err (nil for none): its Field
// and Path both come from name, here.
func errorOn(code Code, name, msg string, err error) *Error {
	return &Error{Code: code, Field: name, Path: record.FieldPath(name), Message: msg, Err: err}
}

func notFound(what, id string) *Error {
	return &Error{Code: CodeNotFound, Message: fmt.Sprintf("%s %q not found", what, id)}
}

// wrapStoreError turns store sentinels into *Error values and wraps anything
// else as an internal error whose text is never shown to API callers.
func wrapStoreError(err error, what, id string) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	switch {
	case errors.Is(err, ErrNotFound):
		return notFound(what, id)
	case errors.Is(err, ErrConflict):
		return &Error{Code: CodeConflict, Message: fmt.Sprintf("%s conflicts with an existing record", what), Err: err}
	case errors.Is(err, ErrUnavailable):
		return &Error{Code: CodeServiceUnavailable, Message: "the service is temporarily unavailable; retry later with the same idempotency key", Err: err}
	}
	return &Error{Code: CodeInternal, Message: "internal error", Err: err}
}
