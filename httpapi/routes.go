package httpapi

import (
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/ujumbe/messaging"
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

// handlerFunc serves a request of an authorized route: p is the caller's
// principal, nil on public routes. The error it returns is answered by
// writeError.
type handlerFunc func(h *Handler, w http.ResponseWriter, r *http.Request, p *messaging.Principal) error

// endpoint is a row of the route table: a route and its handler.
type endpoint struct {
	Route
	serve handlerFunc
}

// endpoints is the route table of the REST surface: each route with its
// scopes, default rate limit and handler.
func endpoints() []endpoint {
	const (
		readMessages  = messaging.ScopeReadMessages
		writeMessages = messaging.ScopeWriteMessages
		readTemplates = messaging.ScopeReadTemplates
		readContacts  = messaging.ScopeReadContacts
		writeContacts = messaging.ScopeWriteContacts
		// manageKeys covers the workspace's keys and its audit events:
		// both are the operator-level view of a workspace (who may call
		// it, and who changed what), which a key that may mint keys can
		// see anyway.
		manageKeys  = messaging.ScopeManageKeys
		manageTpl   = messaging.ScopeManageTemplates
		manageChans = messaging.ScopeManageChannels
		hooks       = messaging.ScopeManageWebhooks
	)
	get, post, patch, put, del := http.MethodGet, http.MethodPost, http.MethodPatch, http.MethodPut, http.MethodDelete
	return []endpoint{
		{Route{post, "/v1/messages", []string{writeMessages}, 60}, (*Handler).sendMessage},
		{Route{post, "/v1/messages/templates", []string{writeMessages, readTemplates}, 20}, (*Handler).sendTemplate},
		{Route{get, "/v1/messages", []string{readMessages}, 60}, (*Handler).listMessages},
		{Route{get, "/v1/messages/{id}", []string{readMessages}, 120}, (*Handler).getMessage},
		{Route{get, "/v1/messages/{id}/media", []string{readMessages}, 60}, (*Handler).getMessageMedia},
		{Route{get, "/v1/conversations", []string{readMessages}, 60}, (*Handler).listConversations},
		{Route{get, "/v1/conversations/{id}/messages", []string{readMessages}, 60}, (*Handler).listConversationMessages},
		{Route{get, "/v1/templates", []string{readTemplates}, 30}, (*Handler).listTemplates},
		{Route{get, "/v1/templates/{id}", []string{readTemplates}, 60}, (*Handler).getTemplate},
		{Route{post, "/v1/templates", []string{manageTpl}, 30}, (*Handler).createTemplate},
		{Route{patch, "/v1/templates/{id}", []string{manageTpl}, 30}, (*Handler).updateTemplate},
		{Route{del, "/v1/templates/{id}", []string{manageTpl}, 30}, (*Handler).deleteTemplate},
		{Route{post, "/v1/templates/{id}/submit", []string{manageTpl}, 30}, (*Handler).submitTemplate},
		{Route{post, "/v1/templates/sync", []string{manageTpl}, 6}, (*Handler).syncTemplates},
		{Route{get, "/v1/channels", []string{manageChans}, 60}, (*Handler).listChannels},
		{Route{put, "/v1/channels/{channel}", []string{manageChans}, 10}, (*Handler).putChannel},
		{Route{del, "/v1/channels/{channel}", []string{manageChans}, 10}, (*Handler).deleteChannel},
		{Route{post, "/v1/channels/{channel}/verify", []string{manageChans}, 10}, (*Handler).verifyChannel},
		{Route{get, "/v1/contacts", []string{readContacts}, 60}, (*Handler).listContacts},
		{Route{post, "/v1/contacts", []string{writeContacts}, 30}, (*Handler).createContact},
		{Route{get, "/v1/contacts/{id}", []string{readContacts}, 120}, (*Handler).getContact},
		{Route{patch, "/v1/contacts/{id}", []string{writeContacts}, 30}, (*Handler).updateContact},
		{Route{get, "/v1/api-keys", []string{manageKeys}, 60}, (*Handler).listAPIKeys},
		{Route{post, "/v1/api-keys", []string{manageKeys}, 20}, (*Handler).createAPIKey},
		{Route{get, "/v1/api-keys/{id}", []string{manageKeys}, 60}, (*Handler).getAPIKey},
		{Route{del, "/v1/api-keys/{id}", []string{manageKeys}, 10}, (*Handler).revokeAPIKey},
		{Route{get, "/v1/audit-events", []string{manageKeys}, 30}, (*Handler).listAuditEvents},
		{Route{get, "/v1/webhooks", []string{hooks}, 60}, (*Handler).listWebhooks},
		{Route{post, "/v1/webhooks", []string{hooks}, 10}, (*Handler).createWebhook},
		{Route{get, "/v1/webhooks/{id}", []string{hooks}, 60}, (*Handler).getWebhook},
		{Route{patch, "/v1/webhooks/{id}", []string{hooks}, 20}, (*Handler).updateWebhook},
		{Route{del, "/v1/webhooks/{id}", []string{hooks}, 10}, (*Handler).deleteWebhook},
		{Route{post, "/v1/webhooks/{id}/rotate-secret", []string{hooks}, 10}, (*Handler).rotateWebhookSecret},
		{Route{post, "/v1/webhooks/{id}/test", []string{hooks}, 10}, (*Handler).testWebhook},
		{Route{get, "/v1/webhooks/{id}/deliveries", []string{hooks}, 60}, (*Handler).listWebhookDeliveries},
		{Route{post, "/v1/webhooks/{id}/deliveries/{delivery_id}/redeliver", []string{hooks}, 20}, (*Handler).redeliverWebhook},
		{Route{get, "/v1/openapi.json", nil, DefaultPublicPerMinute}, (*Handler).serveOpenAPI},
		{Route{get, "/v1/errors/{code}", nil, DefaultPublicPerMinute}, (*Handler).serveErrorDoc},
	}
}

// Routes returns every route with its scopes and default rate limit.
func Routes() []Route {
	eps := endpoints()
	out := make([]Route, len(eps))
	for i, ep := range eps {
		out[i] = ep.Route
	}
	return out
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
		for _, ep := range eps {
			if r.Method == ep.Method || (r.Method == http.MethodHead && ep.Method == http.MethodGet) {
				h.serveRoute(w, r, ep)
				return
			}
		}
		w.Header().Set("Allow", strings.Join(allow, ", "))
		if err := h.limit(r.Context(), w, "ip:"+h.clientAddr(r), h.limits["unauthenticated"]); err != nil {
			h.writeError(w, r, err)
			return
		}
		h.writeError(w, r, &apiError{code: CodeMethodNotAllowed, status: http.StatusMethodNotAllowed,
			message: fmt.Sprintf("method %s is not allowed on %s; allowed: %s", r.Method, p, strings.Join(allow, ", "))})
	}
}

// serveRoute authenticates, rate limits, checks scopes and serves ep.
func (h *Handler) serveRoute(w http.ResponseWriter, r *http.Request, ep endpoint) {
	if isOperator(ep.Route) {
		err := h.authorizeOperator(w, r, ep.Route)
		if err == nil {
			err = checkOperatorPath(r)
		}
		if err == nil {
			err = ep.serve(h, w, r.WithContext(messaging.WithActor(r.Context(), ActorOperator)), nil)
		}
		if err != nil {
			h.writeError(w, r, err)
		}
		return
	}
	p, err := h.authorize(w, r, ep.Route)
	if err == nil && ep.Scopes != nil {
		err = checkPathID(r, ep.Route)
	}
	if err == nil {
		if p != nil {
			// Management changes made by the request are audited as
			// made by its key.
			r = r.WithContext(messaging.WithActor(r.Context(), p.KeyID))
		}
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
