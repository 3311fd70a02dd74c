package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/sms"
)

// Codes of the REST surface beyond the library's: a request whose method
// the path does not allow, and a body over the size limit.
const (
	CodeMethodNotAllowed messaging.Code = "method_not_allowed"
	CodePayloadTooLarge  messaging.Code = "payload_too_large"
)

// errorDoc describes an error code on its docs page.
type errorDoc struct {
	Code        messaging.Code `json:"code"`
	Status      int            `json:"statusCode"`
	Description string         `json:"description"`
}

// errorDocs is the one table of the codes of the REST surface: each with
// the HTTP status it is answered with (see statusOf) and the description of
// its docs page.
var errorDocs = []errorDoc{
	{messaging.CodeUnauthorized, http.StatusUnauthorized, "No API key in the request: send the header X-API-Key with a key created for your workspace. The operator routes (/admin/v1) take the operator token instead, as Authorization: Bearer <token>; a missing, malformed or wrong token, or an API key there, is unauthorized too."},
	{messaging.CodeInvalidAPIKey, http.StatusUnauthorized, "The API key is unknown, revoked, expired or malformed. Create a new key in the dashboard."},
	{messaging.CodeForbidden, http.StatusForbidden, "The API key lacks a scope this endpoint needs (or the status asked for: listing templates in another state than approved needs manage:templates). Create a key with that scope."},
	{messaging.CodeNotFound, http.StatusNotFound, "The resource does not exist in the API key's workspace, or the path is unknown."},
	{messaging.CodeConflict, http.StatusConflict, "A contact with the same phone or email exists, an idempotency_key was reused with a different request, or a management change conflicts with the record's state: a template that is no longer a draft, a template name taken, an account connected to another workspace, a provider that refused or cannot list."},
	{messaging.CodeValidation, http.StatusBadRequest, "The request failed validation: a required field is missing or a value is invalid. The message and the field member name the field and the rule."},
	{messaging.CodeChannelUnavailable, http.StatusUnprocessableEntity, "The channel is not connected in the workspace, or was disconnected; or its connection does not hold its account: pending_verification (the provider has not proved the credentials yet; the service tries again every minute) or error (refused by the provider, or another workspace proved control of the account: put new credentials); or the channel provider cannot verify credentials."},
	{messaging.CodeRecipientOptedOut, http.StatusUnprocessableEntity, "The recipient (to) opted out of messages on this channel by replying an opt-out keyword (by default STOP, STOPALL, UNSUBSCRIBE, CANCEL, END, QUIT or SITISHA; the operator may change a workspace's lists), so text, media and template sends to them are refused. Only the recipient can opt back in, by replying an opt-in keyword (by default START, UNSTOP or ANZA); the operator can clear the opt-out with POST /admin/v1/workspaces/{id}/opt-ins, which is audited. GET /v1/contacts/{id} shows opted_out per channel."},
	{messaging.CodeOutsideWindow, http.StatusUnprocessableEntity, "The recipient (to) is outside the customer-service window: they never wrote to the workspace on this channel, or last wrote more than 24 hours ago, and the workspace refuses free-form messages then (its outside_window setting is reject, set by the operator with PATCH /admin/v1/workspaces/{id}). Send an approved template instead (POST /v1/messages/templates): templates are never refused for the window. The window reopens when the recipient writes; GET /v1/conversations shows window_expires_at."},
	{messaging.CodeTemplateNotFound, http.StatusNotFound, "No approved template has this template_name and language. Both must match exactly: en and en_US differ."},
	{messaging.CodeRateLimitExceeded, http.StatusTooManyRequests, "Too many requests: limits count per workspace and endpoint, and per client address for requests without a valid key. Wait the seconds given by Retry-After, then retry with exponential backoff (1 s doubling, with 20 percent jitter)."},
	{messaging.CodeInternal, http.StatusInternalServerError, "An unexpected server error. Retry later; report the request_id if it persists."},
	{messaging.CodeServiceUnavailable, http.StatusServiceUnavailable, "The service's database (or, for GET /v1/messages/{id}/media, the channel provider) is unreachable, locked or out of space for a moment. Nothing was stored, except when the connection was lost during the commit: retry after the seconds given by Retry-After, with the same idempotency key, so that a retry never sends twice."},
	{CodeMethodNotAllowed, http.StatusMethodNotAllowed, "The path exists but does not accept this method. The Allow header lists the methods it accepts."},
	{CodePayloadTooLarge, http.StatusRequestEntityTooLarge, "The request body is larger than the limit (1 MiB by default; for an upload, POST /v1/media, the largest file a kind takes plus 1 MiB), or the media of an inbound message (GET /v1/messages/{id}/media) is larger than the service's media limit (100 MiB by default)."},
}

// statusOf returns the HTTP status code is answered with: its row of
// errorDocs, or 500 for a code without one.
func statusOf(code messaging.Code) int {
	for _, d := range errorDocs {
		if d.Code == code {
			return d.Status
		}
	}
	return http.StatusInternalServerError
}

// retryAfterUnavailable is the Retry-After, in seconds, of a 503 answered
// while the store is unavailable.
const retryAfterUnavailable = "2"

// envelope is the error body of every error response.
type envelope struct {
	Error envelopeError `json:"error"`
}

type envelopeError struct {
	Code       messaging.Code `json:"code"`
	Message    string         `json:"message"`
	StatusCode int            `json:"statusCode"`
	RequestID  string         `json:"request_id"`
	Docs       string         `json:"docs"`
	// Field names the request field at fault, for validation errors.
	Field string `json:"field,omitempty"`
}

// apiError is an error of the REST layer with its own HTTP status.
type apiError struct {
	code    messaging.Code
	status  int
	message string
}

func (e *apiError) Error() string { return string(e.code) + ": " + e.message }

// badRequest is the validation error of field: "<field>: <rule>".
func badRequest(field, format string, args ...any) *messaging.Error {
	return &messaging.Error{Code: messaging.CodeValidation, Field: field, Message: field + ": " + fmt.Sprintf(format, args...)}
}

// errorAnswer is what writeError sends for an error: the status, the
// body, the Idempotent-Replayed mark of an SMS answer replayed, and the
// cause to log: internal at error level (its text is never sent), or
// unavailable, a store away for a moment, as a warning.
type errorAnswer struct {
	status      int
	body        any
	replayed    bool
	internal    error
	unavailable error
}

// writeError is the one place that turns an error into a status and a
// JSON body: the SMS API's flat body (smsErrorAnswer) for a request of
// the SMS API (see markSMS), the error envelope (envelopeAnswer) for any
// other. An error that is neither API's own becomes 500 (internal_error,
// or the SMS API's 1005); its text is logged, never sent. A 503 carries
// Retry-After: 2, a 429 the Retry-After of its rate limit (1 if none).
func (h *Handler) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var a errorAnswer
	if stateOf(r).sms {
		a = smsErrorAnswer(err)
	} else {
		a = envelopeAnswer(err, correlationID(r), h.docsURL)
	}
	switch {
	case a.internal != nil:
		h.log.ErrorContext(r.Context(), "internal error", "correlation_id", correlationID(r), "path", r.URL.Path, "err", a.internal.Error())
	case a.unavailable != nil:
		h.log.WarnContext(r.Context(), "store unavailable", "correlation_id", correlationID(r), "path", r.URL.Path, "err", a.unavailable.Error())
	}
	if a.status == http.StatusTooManyRequests && w.Header().Get("Retry-After") == "" {
		w.Header().Set("Retry-After", "1")
	}
	if a.status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", retryAfterUnavailable)
	}
	if a.replayed {
		w.Header().Set(headerReplayed, "true")
	}
	writeJSON(w, a.status, a.body)
}

// envelopeAnswer is the error envelope of err, for a request with the
// correlation id requestID: an *apiError's own status, a *messaging.Error's
// code's (see statusOf), and 500 internal_error for anything else.
func envelopeAnswer(err error, requestID, docsURL string) errorAnswer {
	var (
		a       errorAnswer
		code    messaging.Code
		message string
		field   string
	)
	var ae *apiError
	var me *messaging.Error
	switch {
	case errors.As(err, &ae):
		code, a.status, message = ae.code, ae.status, ae.message
	case errors.As(err, &me) && me.Code != messaging.CodeInternal:
		code, a.status, message, field = me.Code, statusOf(me.Code), me.Message, me.Field
	default:
		code, a.status, message = messaging.CodeInternal, http.StatusInternalServerError, "an unexpected error occurred; retry later"
		a.internal = err
	}
	if a.status == http.StatusServiceUnavailable {
		a.unavailable = err
	}
	a.body = envelope{Error: envelopeError{
		Code: code, Message: message, StatusCode: a.status, RequestID: requestID,
		Docs: docsURL + string(code), Field: field,
	}}
	return a
}

// smsErrorAnswer is the SMS API's flat answer to err (see smsStatus): its
// *sms.Error's code and description, 1005 for an error that is not one.
func smsErrorAnswer(err error) errorAnswer {
	e := sms.AsError(err)
	a := errorAnswer{status: smsStatus(err), replayed: e.Replayed,
		body: smsAnswer{ResponseCode: e.Code, ResponseDescription: e.Description}}
	if e.Code == sms.CodeSystemError {
		a.internal = err
		if e.Err != nil {
			a.internal = e.Err
		}
	}
	return a
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"error":{"code":"internal_error","message":"encoding failed","statusCode":500}}`)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)+1))
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// serveErrorDoc answers GET /v1/errors/{code} with the code's description.
func (h *Handler) serveErrorDoc(w http.ResponseWriter, r *http.Request, _ *messaging.Principal) error {
	code := r.PathValue("code")
	for _, d := range errorDocs {
		if string(d.Code) == code {
			writeJSON(w, http.StatusOK, d)
			return nil
		}
	}
	return &apiError{code: messaging.CodeNotFound, status: http.StatusNotFound, message: "no error code " + strconv.Quote(code)}
}
