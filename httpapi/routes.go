package httpapi

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ujumbe/messaging/record"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/sms"
)

// Route describes one endpoint of the REST surface.
type Route struct {
	// Method and Pattern, for example "POST" and "/v1/messages".
	Method  string
	Pattern string
	// Scopes the API key needs; nil for public routes and for the
	// operator routes (OperatorRoutes), which take the operator token.
	Scopes []string
	// PerMinute is the default rate limit, per workspace (per client
	// address for public routes).
	PerMinute int
}

// Name returns "METHOD pattern", the key of Options.RateLimits.
func (r Route) Name() string { return r.Method + " " + r.Pattern }

// handlerFunc serves a request of a route: p is the caller's principal,
// nil on every route but the authorized /v1 ones. The error it returns is
// answered by writeError.
type handlerFunc func(h *Handler, w http.ResponseWriter, r *http.Request, p *messaging.Principal) error

// api is the surface a route belongs to: it decides how the route's
// requests authenticate, whether it is served, and how its errors are
// written.
type api int

const (
	// apiWorkspace is /v1: an API key with the route's scopes (none on the
	// public routes), rate limited per workspace.
	apiWorkspace api = iota
	// apiOperator is /admin/v1: the operator token (Options.OperatorToken),
	// rate limited per route; apiOperatorSMS is served only with
	// Options.SMS too.
	apiOperator
	apiOperatorSMS
	// apiSMS is /sms/v1 (with Options.SMS): credentials in the body, rate
	// limited per account (see smsAdmit), flat answers (see writeError).
	apiSMS
)

// endpoint is a row of the route table: a route, its surface and its
// handler.
type endpoint struct {
	Route
	api   api
	serve handlerFunc
}

// endpoints is the one route table of the handler: each route of /v1,
// /admin/v1 and /sms/v1 with its scopes, default rate limit and handler.
// manage:keys covers a workspace's keys and its audit events: both are the
// operator-level view of a workspace (who may call it, and who changed
// what), which a key that may mint keys can see anyway.
func endpoints() []endpoint {
	const (
		readMsgs, writeMsgs = record.ScopeReadMessages, record.ScopeWriteMessages
		readTpl, manageTpl  = record.ScopeReadTemplates, record.ScopeManageTemplates
		readCts, writeCts   = record.ScopeReadContacts, record.ScopeWriteContacts
		keys, chans, hooks  = record.ScopeManageKeys, record.ScopeManageChannels, record.ScopeManageWebhooks
		ws, op, opSMS, smsA = apiWorkspace, apiOperator, apiOperatorSMS, apiSMS
	)
	get, post, patch, put, del := http.MethodGet, http.MethodPost, http.MethodPatch, http.MethodPut, http.MethodDelete
	s := func(scopes ...string) []string { return scopes }
	return []endpoint{
		{Route{post, "/v1/messages", s(writeMsgs), 60}, ws, (*Handler).sendMessage},
		{Route{post, "/v1/messages/templates", s(writeMsgs, readTpl), 20}, ws, (*Handler).sendTemplate},
		{Route{get, "/v1/messages", s(readMsgs), 60}, ws, (*Handler).listMessages},
		{Route{get, "/v1/messages/{id}", s(readMsgs), 120}, ws, (*Handler).getMessage},
		{Route{get, "/v1/messages/{id}/media", s(readMsgs), 60}, ws, (*Handler).getMessageMedia},
		{Route{post, "/v1/messages/{id}/read", s(writeMsgs), 120}, ws, (*Handler).markRead},
		{Route{post, "/v1/messages/{id}/cancel", s(writeMsgs), 60}, ws, (*Handler).cancelMessage},
		{Route{post, "/v1/media", s(writeMsgs), 30}, ws, (*Handler).uploadMedia},
		{Route{get, "/v1/media/{id}", s(readMsgs), 120}, ws, (*Handler).getMedia},
		{Route{get, "/v1/conversations", s(readMsgs), 60}, ws, (*Handler).listConversations},
		{Route{get, "/v1/conversations/{id}/messages", s(readMsgs), 60}, ws, (*Handler).listConversationMessages},
		{Route{get, "/v1/templates", s(readTpl), 30}, ws, (*Handler).listTemplates},
		{Route{get, "/v1/templates/{id}", s(readTpl), 60}, ws, (*Handler).getTemplate},
		{Route{post, "/v1/templates", s(manageTpl), 30}, ws, (*Handler).createTemplate},
		{Route{patch, "/v1/templates/{id}", s(manageTpl), 30}, ws, (*Handler).updateTemplate},
		{Route{del, "/v1/templates/{id}", s(manageTpl), 30}, ws, (*Handler).deleteTemplate},
		{Route{post, "/v1/templates/{id}/submit", s(manageTpl), 30}, ws, (*Handler).submitTemplate},
		{Route{post, "/v1/templates/sync", s(manageTpl), 6}, ws, (*Handler).syncTemplates},
		{Route{get, "/v1/channels", s(chans), 60}, ws, (*Handler).listChannels},
		{Route{put, "/v1/channels/{channel}", s(chans), 10}, ws, (*Handler).putChannel},
		{Route{patch, "/v1/channels/{channel}", s(chans), 10}, ws, (*Handler).updateChannel},
		{Route{del, "/v1/channels/{channel}", s(chans), 10}, ws, (*Handler).deleteChannel},
		{Route{post, "/v1/channels/{channel}/verify", s(chans), 10}, ws, (*Handler).verifyChannel},
		{Route{get, "/v1/contacts", s(readCts), 60}, ws, (*Handler).listContacts},
		{Route{post, "/v1/contacts", s(writeCts), 30}, ws, (*Handler).createContact},
		{Route{get, "/v1/contacts/{id}", s(readCts), 120}, ws, (*Handler).getContact},
		{Route{patch, "/v1/contacts/{id}", s(writeCts), 30}, ws, (*Handler).updateContact},
		{Route{get, "/v1/api-keys", s(keys), 60}, ws, (*Handler).listAPIKeys},
		{Route{post, "/v1/api-keys", s(keys), 20}, ws, (*Handler).createAPIKey},
		{Route{get, "/v1/api-keys/{id}", s(keys), 60}, ws, (*Handler).getAPIKey},
		{Route{del, "/v1/api-keys/{id}", s(keys), 10}, ws, (*Handler).revokeAPIKey},
		{Route{get, "/v1/audit-events", s(keys), 30}, ws, (*Handler).listAuditEvents},
		{Route{get, "/v1/webhooks", s(hooks), 60}, ws, (*Handler).listWebhooks},
		{Route{post, "/v1/webhooks", s(hooks), 10}, ws, (*Handler).createWebhook},
		{Route{get, "/v1/webhooks/{id}", s(hooks), 60}, ws, (*Handler).getWebhook},
		{Route{patch, "/v1/webhooks/{id}", s(hooks), 20}, ws, (*Handler).updateWebhook},
		{Route{del, "/v1/webhooks/{id}", s(hooks), 10}, ws, (*Handler).deleteWebhook},
		{Route{post, "/v1/webhooks/{id}/rotate-secret", s(hooks), 10}, ws, (*Handler).rotateWebhookSecret},
		{Route{post, "/v1/webhooks/{id}/test", s(hooks), 10}, ws, (*Handler).testWebhook},
		{Route{get, "/v1/webhooks/{id}/deliveries", s(hooks), 60}, ws, (*Handler).listWebhookDeliveries},
		{Route{post, "/v1/webhooks/{id}/deliveries/{delivery_id}/redeliver", s(hooks), 20}, ws, (*Handler).redeliverWebhook},
		{Route{get, "/v1/openapi.json", nil, DefaultPublicPerMinute}, ws, (*Handler).serveOpenAPI},
		{Route{get, "/v1/errors/{code}", nil, DefaultPublicPerMinute}, ws, (*Handler).serveErrorDoc},
		{Route{post, "/admin/v1/workspaces", nil, 60}, op, (*Handler).opCreateWorkspace},
		{Route{get, "/admin/v1/workspaces", nil, 60}, op, (*Handler).opListWorkspaces},
		{Route{get, "/admin/v1/workspaces/{id}", nil, 120}, op, (*Handler).opGetWorkspace},
		{Route{patch, "/admin/v1/workspaces/{id}", nil, 30}, op, (*Handler).opUpdateWorkspace},
		{Route{post, "/admin/v1/workspaces/{id}/api-keys", nil, 30}, op, (*Handler).opCreateAPIKey},
		{Route{post, "/admin/v1/workspaces/{id}/opt-ins", nil, 30}, op, (*Handler).opClearOptOut},
		{Route{get, "/admin/v1/workspaces/{id}/sms-accounts", nil, 60}, op, (*Handler).opListSMSLinks},
		{Route{put, "/admin/v1/workspaces/{id}/sms-accounts/{partnerID}", nil, 30}, op, (*Handler).opLinkSMSAccount},
		{Route{del, "/admin/v1/workspaces/{id}/sms-accounts/{partnerID}", nil, 30}, op, (*Handler).opUnlinkSMSAccount},
		{Route{del, "/admin/v1/sessions", nil, 10}, op, (*Handler).opEndAllSessions},
		{Route{post, "/admin/v1/sms/accounts", nil, 30}, opSMS, (*Handler).opCreateSMSAccount},
		{Route{get, "/admin/v1/sms/accounts/{partnerID}", nil, 120}, opSMS, (*Handler).opGetSMSAccount},
		{Route{post, "/admin/v1/sms/accounts/{partnerID}/senders", nil, 30}, opSMS, (*Handler).opApproveSender},
		{Route{post, "/admin/v1/sms/accounts/{partnerID}/top-ups", nil, 30}, opSMS, (*Handler).opTopUp},
		{Route{get, "/admin/v1/sms/accounts/{partnerID}/ledger", nil, 60}, opSMS, (*Handler).opLedger},
		{Route{put, "/admin/v1/sms/accounts/{partnerID}/callback", nil, 10}, opSMS, (*Handler).opSetSMSCallback},
		{Route{get, "/admin/v1/sms/accounts/{partnerID}/callback", nil, 60}, opSMS, (*Handler).opGetSMSCallback},
		{Route{post, "/sms/v1/messages", nil, 300}, smsA, (*Handler).smsSend},
		{Route{post, "/sms/v1/messages/bulk", nil, 60}, smsA, (*Handler).smsBulk},
		{Route{post, "/sms/v1/messages/delivery-report", nil, 600}, smsA, (*Handler).smsReport},
		{Route{post, "/sms/v1/account/balance", nil, 60}, smsA, (*Handler).smsBalance},
	}
}

// routesOf returns the routes of the table's rows that keep reports true
// for, in the table's order.
func routesOf(keep func(api) bool) []Route {
	var out []Route
	for _, ep := range endpoints() {
		if keep(ep.api) {
			out = append(out, ep.Route)
		}
	}
	return out
}

// Routes returns every route of /v1 with its scopes and default rate
// limit.
func Routes() []Route { return routesOf(func(a api) bool { return a == apiWorkspace }) }

// OperatorRoutes returns the operator routes with their default rate
// limits (per client address; Scopes is nil: they take the operator
// token, not an API key). Their names are keys of Options.RateLimits too.
func OperatorRoutes() []Route {
	return routesOf(func(a api) bool { return a == apiOperator || a == apiOperatorSMS })
}

// SMSRoutes lists the paths of the SMS API; each accepts POST only.
func SMSRoutes() []string {
	var paths []string
	for _, rt := range routesOf(func(a api) bool { return a == apiSMS }) {
		paths = append(paths, rt.Pattern)
	}
	return paths
}

// SMSRateLimits returns the default per-minute rate limit of each SMS
// route, per account (partnerID), keyed by its name ("POST
// /sms/v1/messages"); the names are keys of Options.RateLimits too.
func SMSRateLimits() map[string]int {
	out := map[string]int{}
	for _, rt := range routesOf(func(a api) bool { return a == apiSMS }) {
		out[rt.Name()] = rt.PerMinute
	}
	return out
}

// served reports whether the handler serves the routes of a: the
// operator's with an operator token, the SMS API's and the operator's SMS
// accounts with Options.SMS.
func (h *Handler) served(a api) bool {
	switch a {
	case apiOperator:
		return h.opHash != nil
	case apiOperatorSMS:
		return h.opHash != nil && h.sms != nil
	case apiSMS:
		return h.sms != nil
	}
	return true
}

// mountRoutes registers the routes the handler serves on its mux, each
// pattern once, and with the SMS API the answer of its unknown paths.
func (h *Handler) mountRoutes() {
	byPattern := map[string][]endpoint{}
	var patterns []string
	for _, ep := range endpoints() {
		if !h.served(ep.api) {
			continue
		}
		if byPattern[ep.Pattern] == nil {
			patterns = append(patterns, ep.Pattern)
		}
		byPattern[ep.Pattern] = append(byPattern[ep.Pattern], ep)
	}
	for _, p := range patterns {
		h.mux.HandleFunc(p, h.servePattern(p, byPattern[p]))
	}
	if h.sms != nil {
		h.mux.HandleFunc("/sms/v1/", func(w http.ResponseWriter, r *http.Request) {
			markSMS(r)
			h.writeError(w, r, &smsRefusal{status: http.StatusNotFound, err: &sms.Error{Code: sms.CodeUnsupportedRequest,
				Description: fmt.Sprintf("%s: no endpoint at %s; the endpoints are %s", sms.CodeText(sms.CodeUnsupportedRequest),
					strconv.Quote(r.URL.Path), strings.Join(SMSRoutes(), ", "))}})
		})
	}
}

// servePattern returns the handler of the endpoints eps, which share the
// pattern p: it serves the endpoint of the request's method (GET's answers
// HEAD too), and answers another method with 405 and the Allow header.
func (h *Handler) servePattern(p string, eps []endpoint) http.HandlerFunc {
	allow := make([]string, len(eps))
	for i, ep := range eps {
		allow[i] = ep.Method
	}
	return func(w http.ResponseWriter, r *http.Request) {
		if eps[0].api == apiSMS {
			markSMS(r)
		}
		for _, ep := range eps {
			if r.Method == ep.Method || (r.Method == http.MethodHead && ep.Method == http.MethodGet) {
				h.serveRoute(w, r, ep)
				return
			}
		}
		w.Header().Set("Allow", strings.Join(allow, ", "))
		h.writeError(w, r, h.methodNotAllowed(w, r, p, eps[0].api, allow))
	}
}

// methodNotAllowed is the refusal of a method that the pattern p does not
// accept: 405, with the SMS API's 1010 on its paths. Elsewhere it spends a
// token of the client address's unauthenticated bucket first, and is the
// rate limit's refusal when that is empty.
func (h *Handler) methodNotAllowed(w http.ResponseWriter, r *http.Request, p string, a api, allow []string) error {
	if a == apiSMS {
		return &smsRefusal{status: http.StatusMethodNotAllowed, err: &sms.Error{Code: sms.CodeUnsupportedRequest,
			Description: fmt.Sprintf("%s: method %s is not allowed on %s; use POST", sms.CodeText(sms.CodeUnsupportedRequest), r.Method, p)}}
	}
	if err := h.limit(r.Context(), w, "ip:"+h.clientAddr(r), h.limits["unauthenticated"]); err != nil {
		return err
	}
	return &apiError{code: CodeMethodNotAllowed, status: http.StatusMethodNotAllowed,
		message: fmt.Sprintf("method %s is not allowed on %s; allowed: %s", r.Method, p, strings.Join(allow, ", "))}
}

// serveRoute authenticates the request as its surface does, rate limits
// it, checks scopes and serves ep. The SMS API's requests carry their
// credentials in the body: its handlers admit them (see smsAdmit).
func (h *Handler) serveRoute(w http.ResponseWriter, r *http.Request, ep endpoint) {
	var p *messaging.Principal
	var err error
	switch ep.api {
	case apiOperator, apiOperatorSMS:
		if err = h.authorizeOperator(w, r, ep.Route); err == nil {
			err = checkOperatorPath(r)
		}
		r = r.WithContext(messaging.WithActor(r.Context(), ActorOperator))
	case apiWorkspace:
		p, err = h.authorize(w, r, ep.Route)
		if err == nil && ep.Scopes != nil {
			err = checkPathID(r, ep.Route)
		}
		if p != nil {
			// Management changes made by the request are audited as
			// made by its key.
			r = r.WithContext(messaging.WithActor(r.Context(), p.KeyID))
		}
	}
	if err == nil {
		err = ep.serve(h, w, r, p)
	}
	if err != nil {
		h.writeError(w, r, err)
	}
}

// checkPathID answers 404 for an {id} that no record can have because it
// is not text (invalid UTF-8, or NUL, which ids never hold and PostgreSQL
// cannot even compare), before any store sees it: every store answers the
// same not_found.
func checkPathID(r *http.Request, rt Route) error {
	id := r.PathValue("id")
	if utf8.ValidString(id) && strings.IndexByte(id, 0) < 0 {
		return nil
	}
	what := strings.TrimSuffix(strings.Split(strings.TrimPrefix(rt.Pattern, "/v1/"), "/")[0], "s")
	return &messaging.Error{Code: messaging.CodeNotFound, Message: fmt.Sprintf("%s %q not found", what, id)}
}

// authorize authenticates the request's key (for non-public routes),
// checks scopes and applies the rate limit. A request refused with 401 or
// 403 spends a token of its client address's "unauthenticated" bucket,
// never one of the workspace's. Public routes get a nil principal.
func (h *Handler) authorize(w http.ResponseWriter, r *http.Request, rt Route) (*messaging.Principal, error) {
	if rt.Scopes == nil {
		return nil, h.limit(r.Context(), w, "ip:"+h.clientAddr(r)+":"+rt.Name(), h.limits[rt.Name()])
	}
	vals := r.Header[hdrAPIKey]
	if len(vals) != 1 || strings.TrimSpace(vals[0]) == "" {
		if err := h.limit(r.Context(), w, "ip:"+h.clientAddr(r), h.limits["unauthenticated"]); err != nil {
			return nil, err
		}
		msg := "missing API key: send the header X-API-Key"
		if len(vals) > 1 {
			msg = "malformed X-API-Key header: send exactly one key"
		} else if a := r.Header.Get("Authorization"); len(vals) == 0 && len(a) > 7 && strings.EqualFold(a[:7], "Bearer ") {
			msg = "the workspace routes take an API key in the header X-API-Key, not a bearer token (the operator token opens /admin/v1 only)"
		}
		return nil, &apiError{code: messaging.CodeUnauthorized, status: http.StatusUnauthorized, message: msg}
	}
	p, err := h.svc.Authenticate(r.Context(), vals[0])
	if err != nil {
		if lerr := h.limit(r.Context(), w, "ip:"+h.clientAddr(r), h.limits["unauthenticated"]); lerr != nil {
			return nil, lerr
		}
		return nil, err
	}
	// Scopes are checked before the workspace's bucket is touched: a key
	// refused a route must not spend the route's limit for the keys that
	// may call it. Its refusals count against the client address instead.
	for _, s := range rt.Scopes {
		if !p.HasScope(s) {
			if err := h.limit(r.Context(), w, "ip:"+h.clientAddr(r), h.limits["unauthenticated"]); err != nil {
				return nil, err
			}
			return nil, &apiError{code: messaging.CodeForbidden, status: http.StatusForbidden,
				message: fmt.Sprintf("the API key lacks the scope %s needed by %s", s, rt.Name())}
		}
	}
	if err := h.limit(r.Context(), w, "ws:"+p.WorkspaceID+":"+rt.Name(), h.limits[rt.Name()]); err != nil {
		return nil, err
	}
	return p, nil
}
