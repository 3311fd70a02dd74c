package sms

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/ujumbe/messaging"
)

// Response codes of the SMS API. They follow the bulk-SMS gateway
// convention the spec is drawn from (Advanta-style response-code values).
const (
	// CodeSuccess is the response-code of a successful request or bulk item.
	CodeSuccess = 200
	// CodeInvalidSender: the shortcode is not an approved sender id of the
	// account.
	CodeInvalidSender = 1001
	// CodeInvalidMobile: the mobile number is missing, malformed or not a
	// valid number.
	CodeInvalidMobile = 1003
	// CodeLowCredit: the account's credit cannot cover the message.
	CodeLowCredit = 1004
	// CodeSystemError: an unexpected failure of the service.
	CodeSystemError = 1005
	// CodeInvalidCredentials: the partnerID and apikey do not match an
	// account. The same answer is given whether or not the partnerID exists.
	CodeInvalidCredentials = 1006
	// CodeNoDeliveryReport: the message has no delivery report yet.
	CodeNoDeliveryReport = 1008
	// CodeUnsupportedDataType: a field has the wrong JSON type or a value
	// that cannot be used (for example an unparseable timeToSend).
	CodeUnsupportedDataType = 1009
	// CodeUnsupportedRequest: the request is not a JSON object of the
	// endpoint's shape (wrong content type, malformed JSON, unknown field,
	// wrong method, unknown path).
	CodeUnsupportedRequest = 1010
	// CodeTooManyMessages: a bulk request's smslist is empty, longer than
	// MaxBulk, or does not hold count items.
	CodeTooManyMessages = 1012
	// CodeNoPartnerID: the partnerID is missing.
	CodeNoPartnerID = 4091
	// CodeNoAPIKey: the apikey is missing.
	CodeNoAPIKey = 4092
	// CodeNotFound: the message id is unknown to the account.
	CodeNotFound = 4093
	// CodeIdempotencyConflict: the Idempotency-Key was used by the account
	// in the last IdempotencyRetention with a different request.
	CodeIdempotencyConflict = 4094
	// CodeRateLimited: the account (or, for requests whose credentials
	// fail, the client address) made more requests to the route in the
	// last minute than its rate limit allows; retry after the seconds the
	// Retry-After header gives. The service itself never returns it: the
	// REST layer (package httpapi) does.
	CodeRateLimited = 4095
)

// CodeText returns the standard response-description of a response code
// ("Success", "Invalid sender id", ...), or "" for an unknown code.
func CodeText(code int) string {
	switch code {
	case CodeSuccess:
		return "Success"
	case CodeInvalidSender:
		return "Invalid sender id"
	case CodeInvalidMobile:
		return "Invalid mobile number"
	case CodeLowCredit:
		return "Low bulk credits"
	case CodeSystemError:
		return "Failed. System error"
	case CodeInvalidCredentials:
		return "Invalid credentials"
	case CodeNoDeliveryReport:
		return "No Delivery Report"
	case CodeUnsupportedDataType:
		return "Unsupported data type"
	case CodeUnsupportedRequest:
		return "Unsupported request type"
	case CodeTooManyMessages:
		return "Too many messages on SMS list"
	case CodeNoPartnerID:
		return "No Partner ID is Set"
	case CodeNoAPIKey:
		return "No API KEY Provided"
	case CodeNotFound:
		return "Details Not Found"
	case CodeIdempotencyConflict:
		return "Idempotency key reused with a different request"
	case CodeRateLimited:
		return "Rate limit exceeded"
	}
	return ""
}

// Error is the error type of every operation of package sms. It carries the
// SMS API's response code and a description that names the field and the
// rule.
type Error struct {
	// Code is the response-code, for example CodeInvalidMobile.
	Code int
	// Description is the response-description: the code's standard text,
	// then the field and the rule, for example
	// "Invalid mobile number: mobile: must be digits only ...".
	Description string
	// Field is the request field at fault, when there is one.
	Field string
	// Err is the underlying cause of a system error. It is never shown to
	// API callers. A system error that wraps messaging.ErrUnavailable (the
	// store was unreachable, locked or full) is worth a retry with the same
	// idempotency key.
	Err error
	// Replayed is true when the error is the remembered answer of an
	// earlier request with the same idempotency key (a send refused for
	// credit), not the outcome of this one.
	Replayed bool
}

// Error implements the error interface: "sms: <code> <description>", then
// ": <cause>" when there is one.
func (e *Error) Error() string {
	s := "sms: " + strconv.Itoa(e.Code) + " " + e.Description
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is an *Error with the same Code, so that
// errors.Is(err, &sms.Error{Code: sms.CodeLowCredit}) works.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// NewError returns an *Error of code whose description is the code's text
// followed by the field and the rule: "<text>: <field>: <rule>". With an
// empty field the description is "<text>: <rule>"; with an empty rule it is
// the code's text alone.
func NewError(code int, field, rule string, args ...any) *Error {
	d := CodeText(code)
	if rule != "" {
		r := rule
		if len(args) > 0 {
			r = fmt.Sprintf(rule, args...)
		}
		if field != "" {
			r = field + ": " + r
		}
		d += ": " + r
	}
	return &Error{Code: code, Description: d, Field: field}
}

// errCredentials is the one answer to a wrong apikey or an unknown
// partnerID: it must not tell them apart.
func errCredentials() *Error {
	return &Error{Code: CodeInvalidCredentials, Description: CodeText(CodeInvalidCredentials)}
}

// systemError wraps an unexpected error as CodeSystemError; its text is
// never shown to API callers.
func systemError(err error) *Error {
	if errors.Is(err, messaging.ErrUnavailable) {
		// The store is unreachable, locked or full: the client should retry
		// (with its Idempotency-Key). The error wraps ErrUnavailable, which
		// callers can test with errors.Is.
		return &Error{Code: CodeSystemError, Description: CodeText(CodeSystemError) + ": the service is temporarily unavailable; retry later", Err: err}
	}
	return &Error{Code: CodeSystemError, Description: CodeText(CodeSystemError), Err: err}
}

// AsError returns err as an *Error: itself when it is one, or a system error
// (CodeSystemError) wrapping it. AsError(nil) is nil.
func AsError(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return systemError(err)
}

// ErrInsufficientCredit is returned by Store.SMSAccept for a message whose
// cost the account's credit cannot cover. Nothing is debited for it.
var ErrInsufficientCredit = errors.New("sms: insufficient credit")

// ErrCreditOverflow is returned by Store.SMSCreditAdd for a top-up that
// would take the credit above CreditAddParams.Max. Nothing is added.
var ErrCreditOverflow = errors.New("sms: credit would exceed the maximum")
