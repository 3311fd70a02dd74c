package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/metaprovider"
)

// DefaultMetaWebhookPath is the default path of the Meta webhook receiver.
const DefaultMetaWebhookPath = "/webhooks/meta"

// MetaWebhook configures the receiver of Meta's webhooks (WhatsApp Cloud
// API, Messenger and Instagram), set as Options.Meta: a
// metaprovider.Receiver, which documents what it accepts and applies,
// mounted at Path.
//
// The handler answers the receiver's errors with its error envelope
// (405 method_not_allowed, 413 payload_too_large, 400 validation_error,
// 401 unauthorized for a missing or wrong X-Hub-Signature-256, 403
// forbidden for a failed handshake, 500 for a failure of the service), and
// charges the 401 and 403 refusals to the client address's
// "unauthenticated" rate limit (429 once it is spent). Bodies are limited
// to Options.MaxBodyBytes; the receiver logs to Options.Logger with the
// request's correlation id.
type MetaWebhook struct {
	// Path is where the receiver is mounted. Default "/webhooks/meta". A
	// path that is not clean or collides with another route is not
	// mounted (the error is logged).
	Path string
	// VerifyToken is the verify token set in the Meta app's webhook
	// settings. Empty: every handshake is refused.
	VerifyToken string
	// AppSecret is the Meta app's secret, which signs every notification.
	// Empty: every notification is refused.
	AppSecret string
	// Accounts maps the receiving account (WhatsApp phone-number id,
	// Facebook page id or Instagram account id) to its workspace id, for
	// inbound messages. Inbound messages to other accounts are ignored.
	Accounts map[string]string
}

// mountMeta mounts the Meta webhook receiver.
func (h *Handler) mountMeta(cfg *MetaWebhook) {
	rc := metaprovider.NewReceiver(h.svc, &metaprovider.ReceiverOptions{
		VerifyToken: cfg.VerifyToken, AppSecret: cfg.AppSecret, Accounts: cfg.Accounts,
		MaxBodyBytes: h.maxBody, Logger: h.log, LogAttrs: correlationAttrs,
	})
	h.mountOwnPath("meta webhook", cfg.Path, DefaultMetaWebhookPath, func(w http.ResponseWriter, r *http.Request) { h.serveMeta(w, r, rc) })
}

// mountOwnPath mounts handler, a receiver named name, at path (def when
// empty). The path must be clean and of its own: never the API's root or
// one of its routes. A path that is not, or that clashes with a receiver
// mounted before, is logged and nothing is mounted.
func (h *Handler) mountOwnPath(name, path, def string, handler http.HandlerFunc) {
	if path == "" {
		path = def
	}
	reserved := []string{"/", "/sms/v1/"}
	for _, rt := range Routes() {
		reserved = append(reserved, rt.Pattern)
	}
	reserved = append(reserved, SMSRoutes()...)
	if !cleanPath(path) || strings.ContainsAny(path, "{} \t\r\n") || slices.Contains(reserved, path) {
		h.log.Error(name+": not mounted: Path must be a clean path of its own", "path", path)
		return
	}
	defer func() {
		if p := recover(); p != nil {
			h.log.Error(name+": not mounted", "path", path, "err", fmt.Sprint(p))
		}
	}()
	h.mux.HandleFunc(path, handler)
}

// correlationAttrs puts the request's correlation id on the receiver's
// log lines.
func correlationAttrs(r *http.Request) []any { return []any{"correlation_id", correlationID(r)} }

// serveMeta serves r with rc and answers its error with the envelope; a
// request refused as not Meta's first spends a token of its client
// address's unauthenticated rate limit.
func (h *Handler) serveMeta(w http.ResponseWriter, r *http.Request, rc *metaprovider.Receiver) {
	err := rc.Serve(w, r)
	if err == nil {
		return
	}
	if errors.Is(err, metaprovider.ErrUnverified) {
		if lerr := h.limit(r.Context(), w, "ip:"+h.clientAddr(r), h.limits["unauthenticated"]); lerr != nil {
			err = lerr
		}
	}
	var se *metaprovider.StatusError
	if errors.As(err, &se) {
		err = &apiError{code: statusCode(se.Status), status: se.Status, message: se.Message}
	}
	h.writeError(w, r, err)
}

// statusCode is the error code of a metaprovider.StatusError's status.
func statusCode(status int) messaging.Code {
	if status == http.StatusRequestEntityTooLarge {
		return CodePayloadTooLarge
	}
	return CodeMethodNotAllowed
}
