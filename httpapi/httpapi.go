// Package httpapi serves the workspace Messaging API (/v1) of the spec over
// HTTP. New returns an http.Handler that can be mounted on any mux or
// server:
//
//	mux := http.NewServeMux()
//	mux.Handle("/v1/", httpapi.New(svc, nil))
//
// Every response carries X-Correlation-ID; every error is the spec's
// envelope {"error": {code, message, statusCode, request_id, docs}}.
// Requests authenticate with the X-API-Key header; each route needs the
// scopes listed in Routes and is rate limited per workspace with a token
// bucket (limits in Options.RateLimits; the buckets live in this process
// unless Options.Limiter shares them between instances).
//
// With Options.Meta set, the handler also receives Meta's webhooks (status
// reports and inbound messages of WhatsApp, Messenger and Instagram) at
// MetaWebhook.Path, default /webhooks/meta; mount the handler there too.
package httpapi

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/sms"
)

// Route describes one endpoint of the REST surface.
type Route struct {
	// Method and Pattern, for example "POST" and "/v1/messages".
	Method  string
	Pattern string
	// Scopes the API key needs; nil for public routes.
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
	)
	get, post, patch := http.MethodGet, http.MethodPost, http.MethodPatch
	return []endpoint{
		{Route{post, "/v1/messages", []string{writeMessages}, 60}, (*Handler).sendMessage},
		{Route{post, "/v1/messages/templates", []string{writeMessages, readTemplates}, 20}, (*Handler).sendTemplate},
		{Route{get, "/v1/messages/{id}", []string{readMessages}, 120}, (*Handler).getMessage},
		{Route{get, "/v1/templates", []string{readTemplates}, 30}, (*Handler).listTemplates},
		{Route{get, "/v1/templates/{id}", []string{readTemplates}, 60}, (*Handler).getTemplate},
		{Route{get, "/v1/contacts", []string{readContacts}, 60}, (*Handler).listContacts},
		{Route{post, "/v1/contacts", []string{writeContacts}, 30}, (*Handler).createContact},
		{Route{get, "/v1/contacts/{id}", []string{readContacts}, 120}, (*Handler).getContact},
		{Route{patch, "/v1/contacts/{id}", []string{writeContacts}, 30}, (*Handler).updateContact},
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

// Defaults of Options.
const (
	// DefaultMaxBodyBytes is the default request body limit: 1 MiB.
	DefaultMaxBodyBytes = 1 << 20
	// DefaultPublicPerMinute limits requests that carry no valid key (and
	// the public documents) per client address, which also slows down key
	// guessing.
	DefaultPublicPerMinute = 600
	// DefaultDocsURL is the default prefix of error.docs links.
	DefaultDocsURL = "/v1/errors/"
)

// Options configure the handler. A nil *Options means all defaults.
type Options struct {
	// RateLimits overrides the default per-minute limit of routes, keyed by
	// Route.Name() ("POST /v1/messages"), plus the key "unauthenticated" for
	// requests without a valid key. Routes not in the map keep their
	// default (see Routes).
	RateLimits map[string]int
	// DisableRateLimits turns every rate limit off (for load tests).
	DisableRateLimits bool
	// MaxBodyBytes is the largest accepted request body. Default 1 MiB.
	MaxBodyBytes int64
	// DocsURL prefixes the error code in error.docs. Default "/v1/errors/",
	// which this handler serves.
	DocsURL string
	// Logger receives one line per request (method, path, status,
	// duration, correlation id) and internal errors. Default: discard.
	Logger *slog.Logger
	// Clock returns the current time, for rate limiting. Default: the
	// service's clock.
	Clock func() time.Time
	// TrustProxy makes the client address of unauthenticated rate limits
	// come from the first X-Forwarded-For entry. Default false.
	TrustProxy bool
	// SMS, when set, is served as the SMS API under /sms/v1 (see sms.go).
	// Default nil: the SMS routes are absent.
	SMS *sms.SMS
	// Meta, when set, mounts the receiver of Meta's webhooks (status
	// reports and inbound messages; see MetaWebhook and meta.go). Default
	// nil: no receiver.
	Meta *MetaWebhook
	// Limiter holds the token buckets of the rate limits. Default nil:
	// buckets in this process, so each server instance limits on its own.
	// Set it to a shared limiter (store/pgstore's RateLimiter) when several
	// instances serve one deployment. A request the limiter cannot decide
	// on (it returned an error) is let through and the error logged:
	// the limits protect the service, an outage of the limiter should not
	// stop it.
	Limiter Limiter
}

// Handler serves the Messaging API. Create it with New.
type Handler struct {
	svc        *messaging.Service
	mux        *http.ServeMux
	log        *slog.Logger
	now        func() time.Time
	docsURL    string
	maxBody    int64
	limits     map[string]int
	noLimits   bool
	trustProxy bool
	limiter    Limiter
	// fields caches the JSON member names of decoded struct types
	// (reflect.Type to map[string]reflect.Type), for the strict decoder.
	fields sync.Map
}

var _ http.Handler = (*Handler)(nil)

// New returns a handler serving the Messaging API of svc.
func New(svc *messaging.Service, opts *Options) *Handler {
	var o Options
	if opts != nil {
		o = *opts
	}
	h := &Handler{
		svc: svc, mux: http.NewServeMux(), log: cmp.Or(o.Logger, slog.New(slog.DiscardHandler)), now: o.Clock,
		docsURL: cmp.Or(o.DocsURL, DefaultDocsURL), maxBody: o.MaxBodyBytes, limits: map[string]int{"unauthenticated": DefaultPublicPerMinute},
		noLimits: o.DisableRateLimits, trustProxy: o.TrustProxy, limiter: o.Limiter,
	}
	if h.limiter == nil {
		h.limiter = &limiterSet{}
	}
	if h.now == nil {
		h.now = svc.Now
	}
	if h.maxBody <= 0 {
		h.maxBody = DefaultMaxBodyBytes
	}
	byPattern := map[string][]endpoint{}
	var patterns []string
	for _, ep := range endpoints() {
		h.limits[ep.Name()] = ep.PerMinute
		if byPattern[ep.Pattern] == nil {
			patterns = append(patterns, ep.Pattern)
		}
		byPattern[ep.Pattern] = append(byPattern[ep.Pattern], ep)
	}
	for k, v := range o.RateLimits {
		h.limits[k] = v
	}
	for _, p := range patterns {
		h.mux.HandleFunc(p, h.servePattern(p, byPattern[p]))
	}
	h.mux.HandleFunc("/", h.notFound)
	if o.SMS != nil {
		h.mountSMS(o.SMS)
	}
	if o.Meta != nil {
		h.mountMeta(o.Meta)
	}
	return h
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

// notFound answers a path with no endpoint: 404 not_found.
func (h *Handler) notFound(w http.ResponseWriter, r *http.Request) {
	if err := h.limit(r.Context(), w, "ip:"+h.clientAddr(r), h.limits["unauthenticated"]); err != nil {
		h.writeError(w, r, err)
		return
	}
	h.writeError(w, r, &apiError{code: messaging.CodeNotFound, status: http.StatusNotFound, message: "no endpoint at " + strconv.Quote(r.URL.Path)})
}

// cleanPath reports whether p is already in the form http.ServeMux routes
// (rooted, no "//", "." or ".." elements); ServeMux answers other paths
// with a bare redirect instead of the error envelope.
func cleanPath(p string) bool {
	if p == "" || p[0] != '/' {
		return false
	}
	c := path.Clean(p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c == p
}

type ctxKey struct{}

// correlationID returns the request's correlation id.
func correlationID(r *http.Request) string {
	id, _ := r.Context().Value(ctxKey{}).(string)
	return id
}

var saneTokenRe = regexp.MustCompile(`^[A-Za-z0-9._:/+=-]{1,128}$`)

// statusWriter records the status written.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// ServeHTTP implements http.Handler: it assigns the correlation id, logs
// the request, recovers from panics and routes.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	id := r.Header.Get("X-Correlation-ID")
	if len(r.Header.Values("X-Correlation-ID")) != 1 || !saneTokenRe.MatchString(id) {
		var b [12]byte
		_, _ = rand.Read(b[:])
		id = "req_" + hex.EncodeToString(b[:])
	}
	r = r.WithContext(context.WithValue(r.Context(), ctxKey{}, id))
	w.Header().Set("X-Correlation-ID", id)
	sw := &statusWriter{ResponseWriter: w}
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			h.log.ErrorContext(r.Context(), "panic", "correlation_id", id, "path", r.URL.Path, "panic", fmt.Sprint(p))
			if sw.status == 0 {
				h.writeError(sw, r, fmt.Errorf("panic: %v", p))
			}
		}
		h.log.InfoContext(r.Context(), "request", "method", r.Method, "path", r.URL.Path, "status", sw.status,
			"duration_ms", float64(time.Since(start).Microseconds())/1000, "correlation_id", id)
	}()
	if !cleanPath(r.URL.Path) {
		h.notFound(sw, r)
		return
	}
	h.mux.ServeHTTP(sw, r)
}

// clientAddr returns the address unauthenticated requests are limited by.
func (h *Handler) clientAddr(r *http.Request) string {
	if h.trustProxy {
		if f := r.Header.Get("X-Forwarded-For"); f != "" {
			return strings.TrimSpace(strings.Split(f, ",")[0])
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// limit applies the rate limit of key and sets the X-RateLimit headers.
func (h *Handler) limit(ctx context.Context, w http.ResponseWriter, key string, perMinute int) error {
	if h.noLimits || perMinute <= 0 {
		return nil
	}
	ok, remaining, wait, err := h.limiter.Take(ctx, key, perMinute, h.now())
	if err != nil {
		h.log.ErrorContext(ctx, "rate limiter failed; request let through", "key", key, "err", err)
		return nil
	}
	w.Header().Set("X-RateLimit-Limit", strconv.Itoa(perMinute))
	w.Header().Set("X-RateLimit-Remaining", strconv.Itoa(remaining))
	if !ok {
		secs := int((wait + time.Second - 1) / time.Second)
		w.Header().Set("Retry-After", strconv.Itoa(max(1, secs)))
		return &apiError{code: messaging.CodeRateLimitExceeded, status: http.StatusTooManyRequests,
			message: fmt.Sprintf("rate limit of %d requests per minute exceeded; retry after %d s", perMinute, max(1, secs))}
	}
	return nil
}

// serveRoute authenticates, rate limits, checks scopes and serves ep.
func (h *Handler) serveRoute(w http.ResponseWriter, r *http.Request, ep endpoint) {
	p, err := h.authorize(w, r, ep.Route)
	if err == nil && ep.Scopes != nil {
		err = checkPathID(r, ep.Route)
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
	vals := r.Header.Values("X-API-Key")
	if len(vals) != 1 || strings.TrimSpace(vals[0]) == "" {
		if err := h.limit(r.Context(), w, "ip:"+h.clientAddr(r), h.limits["unauthenticated"]); err != nil {
			return nil, err
		}
		msg := "missing API key: send the header X-API-Key"
		if len(vals) > 1 {
			msg = "malformed X-API-Key header: send exactly one key"
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

func (h *Handler) sendMessage(w http.ResponseWriter, r *http.Request, p *messaging.Principal) error {
	var req sendRequest
	if err := h.decode(w, r, &req); err != nil {
		return err
	}
	params, err := req.params()
	if err != nil {
		return err
	}
	res, err := h.svc.Workspace(p.WorkspaceID).Messages.Send(r.Context(), params)
	if err != nil {
		return err
	}
	writeSend(w, res)
	return nil
}

func (h *Handler) sendTemplate(w http.ResponseWriter, r *http.Request, p *messaging.Principal) error {
	var req sendTemplateRequest
	if err := h.decode(w, r, &req); err != nil {
		return err
	}
	res, err := h.svc.Workspace(p.WorkspaceID).Messages.SendTemplate(r.Context(), req.params())
	if err != nil {
		return err
	}
	writeSend(w, res)
	return nil
}

func writeSend(w http.ResponseWriter, res *messaging.SendResult) {
	if res.Replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	writeJSON(w, http.StatusCreated, res)
}

func (h *Handler) getMessage(w http.ResponseWriter, r *http.Request, p *messaging.Principal) error {
	if err := noQuery(r); err != nil {
		return err
	}
	m, err := h.svc.Workspace(p.WorkspaceID).Messages.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, messageView(m))
	return nil
}

func (h *Handler) listTemplates(w http.ResponseWriter, r *http.Request, p *messaging.Principal) error {
	q, err := query(r, "category", "language")
	if err != nil {
		return err
	}
	list, err := h.svc.Workspace(p.WorkspaceID).Templates.List(r.Context(), &messaging.TemplateFilter{Category: q["category"], Language: q["language"]})
	if err != nil {
		return err
	}
	out := make([]templateJSON, len(list))
	for i, t := range list {
		out[i] = templateView(t)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (h *Handler) getTemplate(w http.ResponseWriter, r *http.Request, p *messaging.Principal) error {
	if err := noQuery(r); err != nil {
		return err
	}
	t, err := h.svc.Workspace(p.WorkspaceID).Templates.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, templateView(t))
	return nil
}

func (h *Handler) listContacts(w http.ResponseWriter, r *http.Request, p *messaging.Principal) error {
	q, err := query(r, "page", "limit", "search")
	if err != nil {
		return err
	}
	var cq messaging.ContactQuery
	for _, f := range []struct {
		name string
		dst  *int
		max  int
	}{{"page", &cq.Page, messaging.MaxPage}, {"limit", &cq.Limit, messaging.MaxPageSize}} {
		v, ok := q[f.name]
		if !ok {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > f.max {
			return badRequest(f.name, "must be an integer from 1 to %d (got %q)", f.max, v)
		}
		*f.dst = n
	}
	cq.Search = q["search"]
	page, err := h.svc.Workspace(p.WorkspaceID).Contacts.List(r.Context(), &cq)
	if err != nil {
		return err
	}
	items := make([]contactListItem, len(page.Items))
	for i, c := range page.Items {
		items[i] = contactItemView(c)
	}
	writeJSON(w, http.StatusOK, contactPageJSON{Items: items, Total: page.Total, Page: page.Page, Limit: page.Limit, TotalPages: page.TotalPages})
	return nil
}

func (h *Handler) createContact(w http.ResponseWriter, r *http.Request, p *messaging.Principal) error {
	var req contactCreateRequest
	if err := h.decode(w, r, &req); err != nil {
		return err
	}
	c, err := h.svc.Workspace(p.WorkspaceID).Contacts.Create(r.Context(), req.params())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, contactView(c))
	return nil
}

func (h *Handler) getContact(w http.ResponseWriter, r *http.Request, p *messaging.Principal) error {
	if err := noQuery(r); err != nil {
		return err
	}
	c, err := h.svc.Workspace(p.WorkspaceID).Contacts.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, contactView(c))
	return nil
}

func (h *Handler) updateContact(w http.ResponseWriter, r *http.Request, p *messaging.Principal) error {
	var req contactPatch
	if err := h.decode(w, r, &req); err != nil {
		return err
	}
	upd, err := req.params()
	if err != nil {
		return err
	}
	c, err := h.svc.Workspace(p.WorkspaceID).Contacts.Update(r.Context(), r.PathValue("id"), upd)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, patchedContactView(p, c))
	return nil
}

// query returns the query parameters of r, refusing unknown or repeated
// ones, and values that are not valid UTF-8 or hold NUL (see text.go).
func query(r *http.Request, allowed ...string) (map[string]string, error) {
	vals, err := urlQuery(r)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for k, v := range vals {
		if len(allowed) == 0 {
			return nil, badRequest(k, "unknown query parameter; this endpoint takes none")
		}
		if !slices.Contains(allowed, k) {
			return nil, badRequest(k, "unknown query parameter; allowed: %s", strings.Join(allowed, ", "))
		}
		if len(v) != 1 {
			return nil, badRequest(k, "must be given once")
		}
		if !utf8.ValidString(v[0]) {
			return nil, badRequest(k, "must be valid UTF-8")
		}
		if strings.IndexByte(v[0], 0) >= 0 {
			return nil, badRequest(k, ruleNoNUL)
		}
		out[k] = v[0]
	}
	return out, nil
}

func noQuery(r *http.Request) error {
	_, err := query(r)
	return err
}
