// Package dashboard is the web dashboard of the messaging service: the
// pages the API's users are sent to ("Settings -> Developers" for API keys,
// "Settings -> Templates" to author templates and submit them for review),
// plus an overview, the message log, contacts, channels, the workspace's
// settings (outside-window policy, opt-out and opt-in keywords) and SMS
// accounts.
//
// It is one http.Handler that a program mounts beside httpapi, with its
// templates and assets embedded:
//
//	dash, err := dashboard.New(svc, &dashboard.Options{
//		Prefix:       "/dashboard/",
//		Authenticate: myAuth, // request -> who is signed in
//	})
//	mux.Handle("/dashboard/", dash)
//
// The dashboard has no user accounts of its own. An embedder either passes
// Authenticate, a function answering who is signed in (its own login, a
// reverse proxy's header, ...), or SignIn, a sign-in form that checks a
// secret and keeps a server-side session in the service's store.
//
// Every page calls the same Service methods as the REST API, so each rule
// is enforced in one place; nothing here talks to the store directly.
// State-changing requests are POST forms guarded by net/http's
// CrossOriginProtection, and a secret (a new API key, a webhook signing
// secret) is shown once, on the answer to the form that created it.
package dashboard

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/sms"
)

// Viewer is who is signed in to the dashboard.
type Viewer struct {
	// Name identifies the viewer in the page header and, prefixed with
	// "dashboard:", as the actor of the audit events of their changes.
	Name string
	// Operator may see every workspace, create workspaces and see every
	// SMS account.
	Operator bool
	// Workspaces are the ids of the workspaces a viewer who is not an
	// operator may see.
	Workspaces []string
	// SMSAccounts are the partner ids of the SMS accounts a viewer who is
	// not an operator may see.
	SMSAccounts []string
	// SessionBinding, set by SignIn.Check, names the secret that signed
	// the viewer in (a keyed hash of it, never the secret): the session
	// is bound to it and ends once SignIn.Bindings no longer lists it.
	// Ignored with Authenticate, and when SignIn.Bindings is nil.
	SessionBinding string
}

// mayView reports whether v may see workspace id.
func (v *Viewer) mayView(id string) bool { return v.Operator || slices.Contains(v.Workspaces, id) }

// Options configure the dashboard. Exactly one of Authenticate and SignIn
// must be set.
type Options struct {
	// Prefix is the path the handler is mounted at, with a trailing
	// slash. Default: "/dashboard/".
	Prefix string
	// Authenticate answers who sent r: a nil Viewer (and nil error) means
	// nobody is signed in, and the dashboard answers 401 or, when
	// SignInURL is set, redirects there. An error is answered 500.
	Authenticate func(r *http.Request) (*Viewer, error)
	// SignInURL is where a visitor who is not signed in is sent when
	// Authenticate is used. Empty: answer 401.
	SignInURL string
	// SignIn, instead of Authenticate, serves a sign-in form at
	// Prefix+"sign-in" and keeps server-side sessions (see SignIn).
	SignIn *SignIn
	// SMS, when set, adds the SMS pages (accounts, balance, sender ids,
	// ledger, recent messages).
	SMS *sms.SMS
	// Logger receives the dashboard's errors. Default: discard.
	Logger *slog.Logger
	// SecureCookies marks every cookie the dashboard sets Secure, also on
	// plain HTTP requests: set it when browsers reach the dashboard over
	// HTTPS ended by a proxy. Requests that came over TLS get Secure
	// session cookies regardless.
	SecureCookies bool
}

// Handler is the dashboard. Create it with New.
type Handler struct {
	svc    *messaging.Service
	sms    *sms.SMS
	prefix string
	auth   func(r *http.Request) (*Viewer, error)
	signIn *SignIn
	signTo string
	log    *slog.Logger
	pages  *pages
	mux    *http.ServeMux
	guard  http.Handler

	// secureCookies is Options.SecureCookies (or SignIn.Secure).
	secureCookies bool
}

// New returns the dashboard of svc.
func New(svc *messaging.Service, opts *Options) (*Handler, error) {
	if svc == nil {
		return nil, errors.New("dashboard: New: service is nil")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Prefix == "" {
		o.Prefix = "/dashboard/"
	}
	if !strings.HasPrefix(o.Prefix, "/") || !strings.HasSuffix(o.Prefix, "/") {
		return nil, fmt.Errorf("dashboard: New: Prefix %q must start and end with /", o.Prefix)
	}
	if (o.Authenticate == nil) == (o.SignIn == nil) {
		return nil, errors.New("dashboard: New: set exactly one of Options.Authenticate and Options.SignIn")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	pg, err := parsePages()
	if err != nil {
		return nil, err
	}
	h := &Handler{svc: svc, sms: o.SMS, prefix: o.Prefix, auth: o.Authenticate, signIn: o.SignIn,
		signTo: o.SignInURL, log: o.Logger, pages: pg, mux: http.NewServeMux(),
		secureCookies: o.SecureCookies || (o.SignIn != nil && o.SignIn.Secure)}
	if o.SignIn != nil {
		if err := o.SignIn.init(svc.Now()); err != nil {
			return nil, err
		}
		h.auth = h.sessionViewer
		h.signTo = o.Prefix + "sign-in"
	}
	h.routes()
	// Every POST, PUT, PATCH and DELETE that a browser sends from another
	// origin is refused before it reaches a handler.
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.renderStatus(w, r, http.StatusForbidden, &page{Title: "Refused"},
			"This form was sent from another site, so it was refused. Open the dashboard and send it again from there.")
	}))
	h.guard = cop.Handler(h.mux)
	return h, nil
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", "same-origin")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; form-action 'self'; frame-ancestors 'none'")
	h.guard.ServeHTTP(w, r)
}

// request is what a page handler gets: the viewer, and the workspace of
// the path when the route has one.
type request struct {
	viewer *Viewer
	// ws is the workspace named in the path ({ws}); nil on routes
	// without one.
	ws *messaging.WorkspaceInfo
	// svc is the workspace's service (nil without ws).
	svc *messaging.Workspace
	// ctx carries the viewer as the audit actor.
	ctx context.Context
}

// route is one row of the dashboard's route table.
type route struct {
	method, path string
	// operator marks routes only an operator may use.
	operator bool
	handle   func(h *Handler, w http.ResponseWriter, r *http.Request, req *request) error
}

func (h *Handler) routes() {
	h.mux.Handle("GET "+h.prefix+"static/", http.StripPrefix(h.prefix+"static/", staticFiles()))
	if h.signIn != nil {
		h.mux.HandleFunc("GET "+h.prefix+"sign-in", h.signInForm)
		h.mux.HandleFunc("POST "+h.prefix+"sign-in", h.signInSubmit)
		h.mux.HandleFunc("POST "+h.prefix+"sign-out", h.signOut)
		h.mux.HandleFunc("POST "+h.prefix+"sign-out-everywhere",
			h.wrap(route{http.MethodPost, "/sign-out-everywhere", true, (*Handler).signOutEverywhere}))
	}
	for _, rt := range h.table() {
		h.mux.HandleFunc(rt.method+" "+h.prefix+strings.TrimPrefix(rt.path, "/"), h.wrap(rt))
	}
}

// table is the dashboard's route table: one row per page or form.
func (h *Handler) table() []route {
	get, post := http.MethodGet, http.MethodPost
	return []route{
		{get, "/{$}", false, (*Handler).home},
		{get, "/workspaces", false, (*Handler).workspaces},
		{post, "/workspaces", true, (*Handler).createWorkspace},
		{get, "/w/{ws}/{$}", false, (*Handler).overview},
		{get, "/w/{ws}/overview", false, (*Handler).overview},
		// Settings -> Developers: API keys and webhook endpoints.
		{get, "/w/{ws}/developers", false, (*Handler).devPage},
		{get, "/w/{ws}/developers/keys", false, (*Handler).devPage},
		{post, "/w/{ws}/developers/keys", false, (*Handler).devCreateKey},
		{get, "/w/{ws}/developers/keys/{id}", false, (*Handler).devKey},
		{post, "/w/{ws}/developers/keys/{id}/edit", false, (*Handler).devEditKey},
		{post, "/w/{ws}/developers/keys/{id}/revoke", false, (*Handler).devRevokeKey},
		{get, "/w/{ws}/developers/webhooks", false, (*Handler).devPage},
		{post, "/w/{ws}/developers/webhooks", false, (*Handler).devCreateEndpoint},
		{get, "/w/{ws}/developers/webhooks/{id}", false, (*Handler).devEndpoint},
		{post, "/w/{ws}/developers/webhooks/{id}/edit", false, (*Handler).devEditEndpoint},
		{post, "/w/{ws}/developers/webhooks/{id}/enabled", false, (*Handler).devSetEndpointEnabled},
		{post, "/w/{ws}/developers/webhooks/{id}/rotate-secret", false, (*Handler).devRotateSecret},
		{post, "/w/{ws}/developers/webhooks/{id}/test", false, (*Handler).devTestEndpoint},
		{post, "/w/{ws}/developers/webhooks/{id}/delete", false, (*Handler).devDeleteEndpoint},
		{post, "/w/{ws}/developers/webhooks/{id}/deliveries/{delivery}/redeliver", false, (*Handler).devRedeliver},
		// Messages and contacts (messages.go, contacts.go).
		{get, "/w/{ws}/messages", false, (*Handler).messages},
		{get, "/w/{ws}/messages/{id}", false, (*Handler).message},
		{get, "/w/{ws}/messages/{id}/media", false, (*Handler).messageMedia},
		{post, "/w/{ws}/messages/{id}/read", false, (*Handler).markRead},
		{post, "/w/{ws}/messages/{id}/cancel", false, (*Handler).cancelMessage},
		{get, "/w/{ws}/contacts", false, (*Handler).contacts},
		{post, "/w/{ws}/contacts", false, (*Handler).createContact},
		{get, "/w/{ws}/contacts/new", false, (*Handler).newContact},
		{get, "/w/{ws}/contacts/{id}", false, (*Handler).contact},
		{post, "/w/{ws}/contacts/{id}", false, (*Handler).updateContact},
		// SMS accounts (sms.go), when Options.SMS is set.
		{get, "/sms", false, smsOnly((*Handler).smsAccounts)},
		{get, "/sms/{partnerID}", false, smsOnly((*Handler).smsAccount)},
		{post, "/sms/{partnerID}/senders", true, smsOnly((*Handler).addSMSSender)},
		// Settings -> Templates (templates.go).
		{get, "/w/{ws}/templates", false, (*Handler).templates},
		{get, "/w/{ws}/templates/new", false, (*Handler).newTemplate},
		{post, "/w/{ws}/templates/new", false, (*Handler).createTemplate},
		{post, "/w/{ws}/templates/check", false, (*Handler).templateCheck},
		{get, "/w/{ws}/templates/{id}", false, (*Handler).template},
		{get, "/w/{ws}/templates/{id}/edit", false, (*Handler).editTemplate},
		{post, "/w/{ws}/templates/{id}/edit", false, (*Handler).updateTemplate},
		{post, "/w/{ws}/templates/{id}/submit", false, (*Handler).submitTemplate},
		{post, "/w/{ws}/templates/{id}/delete", false, (*Handler).deleteTemplate},
		{post, "/w/{ws}/templates/{id}/send", false, (*Handler).sendTest},
		// Settings -> Channels (channels.go).
		{get, "/w/{ws}/channels", false, (*Handler).channels},
		{post, "/w/{ws}/channels/{channel}", false, (*Handler).putChannel},
		{post, "/w/{ws}/channels/{channel}/disconnect", false, (*Handler).disconnectChannel},
		{post, "/w/{ws}/channels/{channel}/verify", false, (*Handler).verifyChannel},
		{post, "/w/{ws}/channels/{channel}/throughput", false, (*Handler).setThroughput},
		// Settings -> Workspace (settings.go): operators change them.
		{get, "/w/{ws}/settings", false, (*Handler).settings},
		{post, "/w/{ws}/settings", true, (*Handler).saveSettings},
	}
}

// wrap authenticates the viewer, resolves the workspace of the path and
// turns the handler's error into a page.
func (h *Handler) wrap(rt route) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v, err := h.auth(r)
		if err != nil {
			h.log.ErrorContext(r.Context(), "dashboard: authenticating a request failed", "err", err)
			h.renderStatus(w, r, http.StatusInternalServerError, &page{Title: "Error"}, "The dashboard could not check who you are. Try again.")
			return
		}
		if v == nil {
			if h.signTo == "" {
				h.renderStatus(w, r, http.StatusUnauthorized, &page{Title: "Sign in"}, "Sign in to see the dashboard.")
				return
			}
			to := h.signTo
			if h.signIn != nil && r.Method == http.MethodGet {
				// The dashboard's own sign-in returns to the page asked
				// for.
				to += "?" + url.Values{"next": {r.URL.RequestURI()}}.Encode()
			}
			http.Redirect(w, r, to, http.StatusSeeOther)
			return
		}
		req := &request{viewer: v, ctx: messaging.WithActor(r.Context(), "dashboard:"+v.Name)}
		if rt.operator && !v.Operator {
			h.renderStatus(w, r, http.StatusForbidden, &page{Title: "Not allowed"}, "Only an operator may do this.")
			return
		}
		if id := r.PathValue("ws"); id != "" {
			if !v.mayView(id) {
				h.renderStatus(w, r, http.StatusNotFound, &page{Title: "Not found"}, "There is no such workspace.")
				return
			}
			info, err := h.svc.GetWorkspace(req.ctx, id)
			if err != nil {
				h.fail(w, r, req, err)
				return
			}
			req.ws, req.svc = info, h.svc.Workspace(id)
		}
		if err := rt.handle(h, w, r, req); err != nil {
			h.fail(w, r, req, err)
		}
	}
}

// fail renders err as an error page: the library's not-found and
// validation errors with their message, anything else as a 500 whose
// detail goes only to the log.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, req *request, err error) {
	p := &page{Title: "Error"}
	p.fill(h, req)
	var e *messaging.Error
	switch {
	case errors.As(err, &e) && e.Code == messaging.CodeNotFound:
		h.renderStatus(w, r, http.StatusNotFound, p, e.Message)
	case errors.As(err, &e) && e.Code == messaging.CodeValidation:
		h.renderStatus(w, r, http.StatusBadRequest, p, e.Message)
	case errors.As(err, &e) && (e.Code == messaging.CodeConflict || e.Code == messaging.CodeForbidden):
		h.renderStatus(w, r, http.StatusConflict, p, e.Message)
	default:
		h.log.ErrorContext(r.Context(), "dashboard: a page failed", "path", r.URL.Path, "err", err)
		h.renderStatus(w, r, http.StatusInternalServerError, p, "Something went wrong on our side. Try again; if it persists, the server's log says why.")
	}
}

// home sends the viewer to their workspace, to the SMS accounts when
// they have those and no workspace, or to the list when they may see
// several workspaces (or none).
func (h *Handler) home(w http.ResponseWriter, r *http.Request, req *request) error {
	if !req.viewer.Operator && len(req.viewer.Workspaces) == 1 {
		http.Redirect(w, r, h.prefix+"w/"+req.viewer.Workspaces[0]+"/", http.StatusSeeOther)
		return nil
	}
	if !req.viewer.Operator && len(req.viewer.Workspaces) == 0 && len(req.viewer.SMSAccounts) > 0 && h.sms != nil {
		http.Redirect(w, r, h.prefix+"sms", http.StatusSeeOther)
		return nil
	}
	http.Redirect(w, r, h.prefix+"workspaces", http.StatusSeeOther)
	return nil
}

// visibleWorkspaces lists the workspaces the viewer may see, in id order
// (at most maxSwitcher).
func (h *Handler) visibleWorkspaces(ctx context.Context, v *Viewer) ([]*messaging.WorkspaceInfo, error) {
	if !v.Operator {
		out := make([]*messaging.WorkspaceInfo, 0, len(v.Workspaces))
		for _, id := range v.Workspaces {
			info, err := h.svc.GetWorkspace(ctx, id)
			if messaging.ErrorCode(err) == messaging.CodeNotFound {
				continue
			}
			if err != nil {
				return nil, err
			}
			out = append(out, info)
		}
		return out, nil
	}
	list, _, err := h.svc.ListWorkspaces(ctx, "", maxSwitcher)
	return list, err
}

// maxSwitcher bounds the workspaces listed in the switcher and on the
// workspaces page.
const maxSwitcher = 100

// workspaces lists the viewer's workspaces; an operator also gets the
// form creating one.
func (h *Handler) workspaces(w http.ResponseWriter, r *http.Request, req *request) error {
	// The workspace switcher is a GET form naming the workspace to open.
	if id := r.URL.Query().Get("open"); id != "" && req.viewer.mayView(id) {
		http.Redirect(w, r, h.prefix+"w/"+url.PathEscape(id)+"/", http.StatusSeeOther)
		return nil
	}
	p := &page{Title: "Workspaces", Nav: "workspaces"}
	return h.renderWorkspaces(w, r, req, p, http.StatusOK)
}

func (h *Handler) renderWorkspaces(w http.ResponseWriter, r *http.Request, req *request, p *page, status int) error {
	p.fill(h, req)
	list, err := h.visibleWorkspaces(req.ctx, req.viewer)
	if err != nil {
		return err
	}
	return h.renderData(w, r, status, "workspaces", p, list)
}

// createWorkspace creates a workspace (operator only) and opens it.
func (h *Handler) createWorkspace(w http.ResponseWriter, r *http.Request, req *request) error {
	if err := r.ParseForm(); err != nil {
		return err
	}
	info, err := h.svc.CreateWorkspace(req.ctx, &messaging.CreateWorkspaceParams{
		ID: strings.TrimSpace(r.PostForm.Get("id")), Name: strings.TrimSpace(r.PostForm.Get("name")),
		Channels: []string{},
	})
	if err != nil {
		p := &page{Title: "Workspaces", Form: r.PostForm}
		if !p.fieldError(err) {
			return err
		}
		return h.renderWorkspaces(w, r, req, p, http.StatusUnprocessableEntity)
	}
	h.flash(w, "Workspace "+info.Name+" created.")
	http.Redirect(w, r, h.prefix+"w/"+info.ID+"/", http.StatusSeeOther)
	return nil
}
