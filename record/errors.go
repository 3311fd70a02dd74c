package record

import (
	"errors"
	"fmt"
)

// Code is a machine-readable error identifier of the Messaging API.
type Code string

// The error codes of the Messaging API. Package httpapi answers each with
// one HTTP status.
const (
	CodeUnauthorized       Code = "unauthorized"
	CodeInvalidAPIKey      Code = "invalid_api_key"
	CodeForbidden          Code = "forbidden"
	CodeNotFound           Code = "not_found"
	CodeConflict           Code = "conflict"
	CodeValidation         Code = "validation_error"
	CodeChannelUnavailable Code = "channel_unavailable"
	CodeTemplateNotFound   Code = "template_not_found"
	CodeRateLimitExceeded  Code = "rate_limit_exceeded"
	CodeInternal           Code = "internal_error"
	// CodeServiceUnavailable extends the spec's codes: the store could not
	// be reached, was locked past its timeout or is out of space (see
	// ErrUnavailable). A retry with the same idempotency key is safe.
	CodeServiceUnavailable Code = "service_unavailable"
	// CodeRecipientOptedOut extends the spec's codes: the recipient opted
	// out of the channel (replied STOP); Field is "to".
	CodeRecipientOptedOut Code = "recipient_opted_out"
	// CodeOutsideWindow extends the spec's codes: a free-form send to a
	// recipient whose customer-service window is closed, in a workspace
	// whose OutsideWindow is OutsideWindowReject; Field is "to".
	CodeOutsideWindow Code = "outside_customer_service_window"
)

// Error is the error type returned by every operation of the library. Code
// carries the spec's error code; Field names the offending request field for
// validation errors.
type Error struct {
	// Code is the spec's error code, for example CodeValidation.
	Code Code
	// Message is a human-readable description naming the field and rule.
	Message string
	// Field is the request field at fault, when there is one, as the REST
	// API names it: Path.String() when Path is set.
	Field string
	// Path is where Field is in the call's parameters, step by step
	// (member names and list indexes), for a program that finds the field
	// in its own form of them. Every error of this package that has a
	// Field has its Path; an error made elsewhere may carry a Field alone.
	Path Path
	// Err is the underlying cause, if any. It is never shown to API callers.
	Err error
}

// Error implements the error interface.
func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is an *Error with the same Code, so that
// errors.Is(err, &messaging.Error{Code: messaging.CodeConflict}) works, and
// matches the store sentinels to their codes.
func (e *Error) Is(target error) bool {
	var t *Error
	if errors.As(target, &t) {
		return t.Code == e.Code && (t.Message == "" || t.Message == e.Message)
	}
	switch target {
	case ErrNotFound:
		return e.Code == CodeNotFound
	case ErrConflict:
		return e.Code == CodeConflict
	case ErrUnavailable:
		return e.Code == CodeServiceUnavailable
	}
	return false
}

// Sentinel errors returned by Store implementations. The Service turns them
// into *Error values with the matching code.
var (
	// ErrNotFound is returned by a Store when the requested record does not
	// exist (in the given workspace).
	ErrNotFound = errors.New("messaging: not found")
	// ErrConflict is returned by a Store when a unique constraint would be
	// violated (contact phone or email, template name and language, ...).
	ErrConflict = errors.New("messaging: conflict")
	// ErrUnavailable is wrapped by a Store around a storage fault that a
	// later attempt may not meet: the database could not be reached (or
	// its connection was lost), was locked past its timeout, or is out of
	// space. The write did not happen, except when a connection was lost
	// while its COMMIT was under way; a retry with the same idempotency key
	// is safe either way.
	ErrUnavailable = errors.New("messaging: store unavailable")
)
