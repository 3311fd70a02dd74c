package client

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/sms"
)

// Error is an answer of the API with an error status. For the Messaging
// API it carries the error envelope; for the SMS API the response-code and
// response-description. It unwraps to the library's error
// (*messaging.Error or *sms.Error), so errors.Is and errors.As work with the
// library's codes:
//
//	errors.Is(err, &messaging.Error{Code: messaging.CodeNotFound})
//	errors.Is(err, messaging.ErrConflict)
//	errors.Is(err, &sms.Error{Code: sms.CodeInvalidMobile})
type Error struct {
	// StatusCode is the HTTP status of the answer.
	StatusCode int
	// Code is the envelope's code, for example messaging.CodeValidation;
	// empty for an SMS answer or an answer that was not an envelope.
	Code messaging.Code
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

// Unwrap returns the library's form of the error: a *messaging.Error with
// Code, Message and Field, or a *sms.Error with the response code and
// description; nil when the answer carried neither.
func (e *Error) Unwrap() error {
	switch {
	case e.Code != "":
		return &messaging.Error{Code: e.Code, Message: e.Message, Field: e.Field}
	case e.ResponseCode != 0:
		return &sms.Error{Code: e.ResponseCode, Description: e.ResponseDescription}
	}
	return nil
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
			Code       messaging.Code `json:"code"`
			Message    string         `json:"message"`
			StatusCode int            `json:"statusCode"`
			RequestID  string         `json:"request_id"`
			Docs       string         `json:"docs"`
			Field      string         `json:"field"`
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
