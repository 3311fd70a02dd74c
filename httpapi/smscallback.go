package httpapi

import (
	"cmp"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/ujumbe/messaging/sms"
)

// DefaultSMSCallbackPath is the default path of the route receiving the
// delivery reports the SMS upstream pushes.
const DefaultSMSCallbackPath = "/sms/v1/callbacks/delivery"

// SMSCallback configures the route receiving delivery reports the SMS
// upstream gateway pushes to a callback URL, set as Options.SMSCallback
// (with Options.SMS). Each report is read by Parse and applied with
// sms.SMS.ApplyUpstreamReport.
//
// The upstream's report format carries no signature, so the route
// authenticates with a secret the operator sets: either the query
// parameter token=<Secret> in the callback URL registered with the
// upstream (for upstreams that can only be given a URL), or the header
// X-Signature: sha256=<hex HMAC-SHA256 of the raw body keyed with Secret>.
// Both are compared in constant time; the secret is never logged (the
// request log names the path, without the query).
//
// Answers are the SMS API's flat bodies: 200 {"response-code":200,...}
// for a report applied, one that changed nothing (a final state is never
// moved back) and one of a message id the upstream never gave the service
// (acknowledged, so the upstream stops resending it, and logged at info);
// 401 with 1006 for a missing or wrong secret; 400 with 1010 for a body
// Parse refuses (malformed JSON, unknown members, no message id); 405 for
// a method other than POST; 413 over Options.MaxBodyBytes; 500 (1005) or
// 503 when the store fails, so the upstream retries. Nothing is applied
// unless the answer is 200.
type SMSCallback struct {
	// Path is where the route is mounted. Default
	// DefaultSMSCallbackPath. A path that is not clean or is another
	// route's is not mounted (the error is logged).
	Path string
	// Secret authenticates the upstream. Empty: the route is not mounted
	// (a request to it gets the SMS API's 404).
	Secret string
	// Parse reads a pushed report's body and returns the report (the
	// upstream's message id, the client reference when the report carries
	// one, and the report); its error text is sent back in the 400
	// answer. For an Advanta-compatible upstream it is the gateway's
	// ParseDeliveryReport (sms/advantagateway). Nil: the route is not
	// mounted.
	Parse func(body []byte) (*sms.UpstreamReport, error)
}

// mountSMSCallback mounts the delivery-report callback route of the SMS
// API.
func (h *Handler) mountSMSCallback(cfg *SMSCallback) {
	if cfg.Secret == "" || cfg.Parse == nil {
		return
	}
	h.mountOwnPath("sms callback", cmp.Or(cfg.Path, DefaultSMSCallbackPath), func(w http.ResponseWriter, r *http.Request) {
		markSMS(r)
		if err := h.smsCallback(w, r, cfg); err != nil {
			h.writeError(w, r, err)
		}
	})
}

// smsCallback serves one pushed delivery report (see SMSCallback).
func (h *Handler) smsCallback(w http.ResponseWriter, r *http.Request, cfg *SMSCallback) error {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		return &smsRefusal{status: http.StatusMethodNotAllowed, err: &sms.Error{Code: sms.CodeUnsupportedRequest,
			Description: fmt.Sprintf("%s: method %s is not allowed; use POST", sms.CodeText(sms.CodeUnsupportedRequest), r.Method)}}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.maxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return &smsRefusal{status: http.StatusRequestEntityTooLarge, err: sms.NewError(sms.CodeUnsupportedRequest, "body", "must be at most %d bytes", h.maxBody)}
		}
		return sms.NewError(sms.CodeUnsupportedRequest, "body", "could not be read")
	}
	if !callbackAuthentic(r, body, cfg.Secret) {
		return &smsRefusal{status: http.StatusUnauthorized, err: sms.NewError(sms.CodeInvalidCredentials, "token",
			"the callback URL's token, or an X-Signature header sha256=HEX (the HMAC-SHA256 of the body), is missing or wrong")}
	}
	ur, err := cfg.Parse(body)
	if err != nil {
		return sms.NewError(sms.CodeUnsupportedRequest, "body", "%s", err.Error())
	}
	id, rep := ur.GatewayMessageID, ur.Report
	switch err := h.sms.ApplyUpstreamReport(r.Context(), ur); {
	case errors.Is(err, sms.ErrUnknownGatewayMessage):
		h.log.InfoContext(r.Context(), "sms callback: delivery report for a message id the upstream never gave", "gateway_message_id", clipped(id),
			"description", rep.Description, "correlation_id", correlationID(r))
	case err != nil:
		return &sms.Error{Code: sms.CodeSystemError, Description: sms.CodeText(sms.CodeSystemError), Err: err}
	}
	writeJSON(w, http.StatusOK, smsSuccess())
	return nil
}

// callbackAuthentic reports whether r carries secret: one token query
// parameter equal to it, or one X-Signature header sha256=<hex> equal to
// the HMAC-SHA256 of body keyed with it. Both compare in constant time.
func callbackAuthentic(r *http.Request, body []byte, secret string) bool {
	if tokens := r.URL.Query()["token"]; len(tokens) == 1 {
		a, b := sha256.Sum256([]byte(tokens[0])), sha256.Sum256([]byte(secret))
		if subtle.ConstantTimeCompare(a[:], b[:]) == 1 {
			return true
		}
	}
	sigs := r.Header.Values("X-Signature")
	if len(sigs) != 1 {
		return false
	}
	hexSig, ok := strings.CutPrefix(strings.TrimSpace(sigs[0]), "sha256=")
	if !ok {
		return false
	}
	got, err := hex.DecodeString(hexSig)
	if err != nil {
		return false
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return hmac.Equal(got, mac.Sum(nil))
}

// clipped shortens an id from a request for a log line.
func clipped(s string) string {
	if r := []rune(s); len(r) > 64 {
		return string(r[:64]) + "..."
	}
	return s
}
