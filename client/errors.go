package client

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Code is a machine-readable error code of the Messaging API: the code
// member of the error envelope.
type Code string

// The error codes of the Messaging API (see the API's error docs page).
const (
	// CodeUnauthorized: no API key (or, on the operator routes, no valid
	// operator token). 401.
	CodeUnauthorized Code = "unauthorized"
	// CodeInvalidAPIKey: the API key is unknown, revoked, expired or
	// malformed. 401.
	CodeInvalidAPIKey Code = "invalid_api_key"
	// CodeForbidden: the API key lacks a scope the endpoint needs. 403.
	CodeForbidden Code = "forbidden"
	// CodeNotFound: the resource does not exist in the key's workspace.
	// 404.
	CodeNotFound Code = "not_found"
	// CodeConflict: a duplicate contact, an idempotency key reused with a
	// different request, or a change conflicting with a record's state.
	// 409.
	CodeConflict Code = "conflict"
	// CodeValidation: a field is missing or invalid; Error.Field names
	// it. 400.
	CodeValidation Code = "validation_error"
	// CodeChannelUnavailable: the channel is not connected, or its
	// connection does not hold its account. 422.
	CodeChannelUnavailable Code = "channel_unavailable"
	// CodeRecipientOptedOut: the recipient opted out of the channel. 422.
	CodeRecipientOptedOut Code = "recipient_opted_out"
	// CodeOutsideWindow: a free-form send outside the recipient's
	// customer-service window, in a workspace that refuses them. 422.
	CodeOutsideWindow Code = "outside_customer_service_window"
	// CodeTemplateNotFound: no approved template has this name and
	// language. 404.
	CodeTemplateNotFound Code = "template_not_found"
	// CodeRateLimitExceeded: too many requests; Error.RetryAfter says how
	// long to wait. 429.
	CodeRateLimitExceeded Code = "rate_limit_exceeded"
	// CodeInternal: an unexpected server error. 500.
	CodeInternal Code = "internal_error"
	// CodeServiceUnavailable: the server's database (or, for media, the
	// channel provider) is unavailable for a moment; a retry with the same
	// idempotency key is safe. 503.
	CodeServiceUnavailable Code = "service_unavailable"
	// CodeMethodNotAllowed: the path does not accept the method. 405.
	CodeMethodNotAllowed Code = "method_not_allowed"
	// CodePayloadTooLarge: the request body, or an inbound message's
	// media, is over the server's limit. 413.
	CodePayloadTooLarge Code = "payload_too_large"
)

// Error is an answer of the API with an error status. For the Messaging
// API it carries the error envelope; for the SMS API the response-code and
// response-description. errors.Is matches it against an *Error with the
// same Code (Messaging API) or the same ResponseCode (SMS API):
//
//	errors.Is(err, &client.Error{Code: client.CodeNotFound})
//	errors.Is(err, &client.Error{ResponseCode: client.SMSCodeInvalidMobile})
//
// and errors.As gives the *Error itself.
type Error struct {
	// StatusCode is the HTTP status of the answer (200 for a refused item
	// of an SMS bulk send, SMSBulkEntry.Err).
	StatusCode int
	// Code is the envelope's code, for example CodeValidation; empty for
	// an SMS answer or an answer that was not an envelope.
	Code Code
	// Message is the envelope's message, naming the field and the rule.
	Message string
	// RequestID is the envelope's request_id.
	RequestID string
	// Field is the envelope's field: the request field at fault, for
	// validation errors.
	Field string
	// Docs is the envelope's link to the code's description.
	Docs string
	// CorrelationID is the X-Correlation-ID header of the answer.
	CorrelationID string
	// RetryAfter is the wait the Retry-After header asked for (429, 503);
	// zero when absent.
	RetryAfter time.Duration
	// ResponseCode and ResponseDescription are the SMS API's
	// response-code and response-description (zero for the Messaging
	// API).
	ResponseCode        int
	ResponseDescription string
	// Body is the raw answer when it was not JSON of the expected shape
	// (a proxy's error page, for example), at most 512 bytes.
	Body string
}

// Error implements the error interface.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("client: ")
	b.WriteString(strconv.Itoa(e.StatusCode))
	switch {
	case e.Code != "":
		b.WriteString(" " + string(e.Code) + ": " + e.Message)
	case e.ResponseCode != 0:
		b.WriteString(" sms " + strconv.Itoa(e.ResponseCode) + " " + e.ResponseDescription)
	case e.Body != "":
		b.WriteString(" " + http.StatusText(e.StatusCode) + ": " + e.Body)
	default:
		b.WriteString(" " + http.StatusText(e.StatusCode))
	}
	if id := e.requestID(); id != "" {
		b.WriteString(" (request " + id + ")")
	}
	return b.String()
}

func (e *Error) requestID() string {
	if e.RequestID != "" {
		return e.RequestID
	}
	return e.CorrelationID
}

// Is reports whether target is an *Error naming the same error: the same
// Code when target has one, else the same ResponseCode when target has
// one. A target with neither matches nothing; the other fields of target
// are not compared.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	switch {
	case !ok:
		return false
	case t.Code != "":
		return t.Code == e.Code
	case t.ResponseCode != 0:
		return t.ResponseCode == e.ResponseCode
	}
	return false
}

// Temporary reports whether a later attempt may succeed: 429, 5xx.
func (e *Error) Temporary() bool {
	return e.StatusCode == http.StatusTooManyRequests || e.StatusCode >= 500
}

// newError fills the fields every answer has (RetryAfter is set by the
// transport, on its clock).
func newError(resp *http.Response, body []byte) *Error {
	return &Error{StatusCode: resp.StatusCode, CorrelationID: resp.Header.Get("X-Correlation-ID")}
}

// rawBody is body clipped for Error.Body.
func rawBody(body []byte) string {
	s := strings.TrimSpace(string(body))
	if len(s) > 512 {
		s = s[:512]
	}
	return s
}

// envelopeError decodes an error envelope of the Messaging API.
func envelopeError(resp *http.Response, body []byte) error {
	e := newError(resp, body)
	var env struct {
		Error *struct {
			Code       Code   `json:"code"`
			Message    string `json:"message"`
			StatusCode int    `json:"statusCode"`
			RequestID  string `json:"request_id"`
			Docs       string `json:"docs"`
			Field      string `json:"field"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &env) != nil || env.Error == nil || env.Error.Code == "" {
		e.Body = rawBody(body)
		return e
	}
	v := env.Error
	e.Code, e.Message, e.RequestID, e.Docs, e.Field = v.Code, v.Message, v.RequestID, v.Docs, v.Field
	return e
}

// smsAnswerError decodes an error answer of the SMS API.
func smsAnswerError(resp *http.Response, body []byte) error {
	e := newError(resp, body)
	var a struct {
		Code        int    `json:"response-code"`
		Description string `json:"response-description"`
	}
	if json.Unmarshal(body, &a) != nil || a.Code == 0 {
		e.Body = rawBody(body)
		return e
	}
	e.ResponseCode, e.ResponseDescription = a.Code, a.Description
	return e
}
