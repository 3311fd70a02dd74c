package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/ujumbe/messaging"
)

// mountReceivers mounts the receiver of each of the service's providers
// that offers one (a messaging.CallbackReceiver, such as metaprovider's
// receiver of Meta's webhooks, configured with its Webhook option), at the
// receiver's path. Each receives the handler's body limit and logger, and
// the request's correlation id on its log lines; its refusals are answered
// with the error envelope (see serveReceiver).
func (h *Handler) mountReceivers() {
	host := &messaging.ReceiverHost{MaxBodyBytes: h.maxBody, Logger: h.log, LogAttrs: correlationAttrs}
	for _, rc := range h.svc.Receivers(host) {
		h.mountOwnPath(rc.Name, rc.Path, func(w http.ResponseWriter, r *http.Request) { h.serveReceiver(w, r, rc) })
	}
}

// mountOwnPath mounts handler, a receiver named name, at path. The path
// must be clean and of its own: never the API's root or one of its routes.
// A path that is not, or that clashes with a receiver mounted before, is
// logged and nothing is mounted.
func (h *Handler) mountOwnPath(name, path string, handler http.HandlerFunc) {
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

// serveReceiver serves r with rc and answers its refusal with the
// envelope: a messaging.ReceiverError as 405 method_not_allowed or 413
// payload_too_large, anything else as every error is. A request refused
// as not the provider's (messaging.ErrReceiverUnverified) first spends a
// token of its client address's unauthenticated rate limit.
func (h *Handler) serveReceiver(w http.ResponseWriter, r *http.Request, rc *messaging.Receiver) {
	err := rc.Serve(w, r)
	if err == nil {
		return
	}
	if errors.Is(err, messaging.ErrReceiverUnverified) {
		if lerr := h.limit(r.Context(), w, "ip:"+h.clientAddr(r), h.limits["unauthenticated"]); lerr != nil {
			err = lerr
		}
	}
	var re *messaging.ReceiverError
	if errors.As(err, &re) {
		err = &apiError{code: statusCode(re.Status), status: re.Status, message: re.Message}
	}
	h.writeError(w, r, err)
}

// statusCode is the error code of a messaging.ReceiverError's status.
func statusCode(status int) messaging.Code {
	if status == http.StatusRequestEntityTooLarge {
		return CodePayloadTooLarge
	}
	return CodeMethodNotAllowed
}
