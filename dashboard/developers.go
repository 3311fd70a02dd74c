package dashboard

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/ujumbe/messaging/record"

	"github.com/ujumbe/messaging"
)

// Settings -> Developers: a workspace's API keys and webhook endpoints.
// Each form calls the Service method the management API's route calls
// (httpapi/apikeys.go, httpapi/webhooks.go). A new key and a signing
// secret appear only in the answer to the POST that made them.

// devChoice is a checkbox of a form: a value and what it means.
type devChoice struct {
	Value, About string
}

// devScopes are the scopes the library defines, each with a description.
func devScopes() []devChoice {
	about := func(s string) string {
		switch s {
		case record.ScopeReadMessages:
			return "read messages and their status"
		case record.ScopeWriteMessages:
			return "send messages"
		case record.ScopeReadTemplates:
			return "list templates; with write:messages, send from one"
		case record.ScopeReadContacts:
			return "search and read contacts"
		case record.ScopeWriteContacts:
			return "create and change contacts"
		case record.ScopeManageKeys:
			return "list, create and revoke API keys (granting only scopes it holds) and read the audit log"
		case record.ScopeManageTemplates:
			return "author templates, submit them for review, delete and sync them"
		case record.ScopeManageChannels:
			return "list, connect and disconnect channels, replace their credentials"
		case record.ScopeManageWebhooks:
			return "manage webhook endpoints, their secrets and deliveries"
		}
		return ""
	}
	var out []devChoice
	for _, s := range record.AllScopes() {
		out = append(out, devChoice{s, about(s)})
	}
	return out
}

// devEventTypes are the event types webhook endpoints can subscribe to.
func devEventTypes() []devChoice {
	var out []devChoice
	for _, e := range messaging.WebhookEventTypes() {
		about := ""
		switch e {
		case messaging.EventMessageStatusUpdated:
			about = "a message changed status (sent, delivered, read, failed, canceled)"
		case messaging.EventMessageReceived:
			about = "a customer sent a message (a reply, a reaction, a keyword)"
		case messaging.EventContactOptedOut:
			about = "a recipient replied STOP (or another opt-out keyword) on a channel"
		case messaging.EventContactOptedIn:
			about = "a recipient replied START (or another opt-in keyword), or the operator cleared their opt-out"
		case messaging.EventChannelStatusUpdated:
			about = "the provider verified a channel's credentials, refused them, or another workspace proved control of its account"
		case messaging.EventChannelQualityUpdated:
			about = "the provider changed a WhatsApp number's quality rating (GREEN, YELLOW, RED) or messaging limit tier (TIER_1K, TIER_10K, ...)"
		case messaging.EventTemplateStatusUpdated:
			about = "a template was approved, rejected, paused, disabled or reinstated, or its quality rating changed"
		case messaging.EventWebhookTest:
			about = "the test event sent from this page"
		}
		out = append(out, devChoice{e, about})
	}
	return out
}

// devKey is an API key as listed, with its state now.
type devKey struct {
	*messaging.APIKey
	State string
}

// devEndpointRow is a webhook endpoint as listed, with why it is
// disabled.
type devEndpointRow struct {
	*messaging.WebhookEndpoint
	Why string
}

// devDisabledWhy says why e is disabled ("" when it is enabled).
func devDisabledWhy(e *messaging.WebhookEndpoint) string {
	if e.DisabledAt == nil {
		return ""
	}
	switch e.DisabledReason {
	case record.DisabledGone:
		return "it answered 410 Gone"
	case record.DisabledByOperator:
		return "disabled by hand"
	}
	return e.DisabledReason
}

// devData is the Developers page.
type devData struct {
	Keys      []devKey
	Endpoints []devEndpointRow
	Scopes    []devChoice
	Events    []devChoice
	// NewKey is the key just created, whose plaintext is page.Secret.
	NewKey *messaging.APIKey
	// MinExpiry is the earliest expiry the form takes (now, UTC, 24-hour),
	// shown as its example.
	MinExpiry string
}

// devPage shows the workspace's API keys and webhook endpoints with the
// forms creating them.
func (h *Handler) devPage(w http.ResponseWriter, r *http.Request, req *request) error {
	return h.renderDev(w, r, req, &page{}, http.StatusOK)
}

func (h *Handler) renderDev(w http.ResponseWriter, r *http.Request, req *request, p *page, status int) error {
	p.Title, p.Nav = "Developers", "developers"
	p.fill(h, req)
	keys, err := req.svc.APIKeys.List(req.ctx)
	if err != nil {
		return err
	}
	endpoints, err := req.svc.Webhooks.List(req.ctx)
	if err != nil {
		return err
	}
	now := h.svc.Now()
	d := &devData{Scopes: devScopes(), Events: devEventTypes(), MinExpiry: now.UTC().Format("2006-01-02 15:04")}
	for _, e := range endpoints {
		d.Endpoints = append(d.Endpoints, devEndpointRow{e, devDisabledWhy(e)})
	}
	if old, ok := p.Data.(*devData); ok {
		d.NewKey = old.NewKey
	}
	for _, k := range keys {
		d.Keys = append(d.Keys, devKey{k, k.State(now)})
	}
	return h.renderData(w, r, status, "developers", p, d)
}

// devCreateKey creates an API key and answers the Developers page showing
// the key this once (201, not a redirect: the key must not travel in a
// URL or a cookie).
func (h *Handler) devCreateKey(w http.ResponseWriter, r *http.Request, req *request) error {
	if err := r.ParseForm(); err != nil {
		return err
	}
	f := r.PostForm
	params := &messaging.KeyCreateParams{Name: strings.TrimSpace(f.Get("name")), Scopes: f["scopes"]}
	refuse := func(err error) error {
		p := &page{Form: f}
		if messaging.ErrorCode(err) == messaging.CodeNotFound || !p.fieldError(err) {
			return err
		}
		return h.renderDev(w, r, req, p, http.StatusUnprocessableEntity)
	}
	exp, err := devExpiry(f)
	if err != nil {
		return refuse(err)
	}
	params.ExpiresAt = exp
	k, plain, err := req.svc.APIKeys.Create(req.ctx, params)
	if err != nil {
		return refuse(err)
	}
	p := &page{Secret: plain, Data: &devData{NewKey: k}}
	return h.renderDev(w, r, req, p, http.StatusCreated)
}

// devKeyData is the page of one API key.
type devKeyData struct {
	Key    *messaging.APIKey
	State  string
	Scopes []devChoice
}

// devKey shows an API key with the form changing its scopes and expiry
// (none for a revoked key).
func (h *Handler) devKey(w http.ResponseWriter, r *http.Request, req *request) error {
	return showByID(w, r, req, req.svc.APIKeys.Get, h.renderKey)
}

func (h *Handler) renderKey(w http.ResponseWriter, r *http.Request, req *request, p *page, k *messaging.APIKey, status int) error {
	p.Title, p.Nav = "API key", "developers"
	p.fill(h, req)
	if p.Form == nil {
		p.Form = url.Values{"scopes": k.Scopes}
		if k.ExpiresAt != nil {
			p.Form.Set("expires_at", k.ExpiresAt.UTC().Format(formTimeLayout))
		}
	}
	return h.renderData(w, r, status, "apikey", p, &devKeyData{Key: k, State: k.State(h.svc.Now()), Scopes: devScopes()})
}

// devEditKey replaces the scopes and the expiry of an API key
// (APIKeys.Update) and goes back to the keys, or answers the key's
// page with the library's refusal next to its field (422). A key of
// another workspace is not found (404) and changes nothing.
func (h *Handler) devEditKey(w http.ResponseWriter, r *http.Request, req *request) error {
	id := r.PathValue("id")
	if err := r.ParseForm(); err != nil {
		return err
	}
	f := r.PostForm
	refuse := func(err error) error {
		p := &page{Form: f}
		if !p.fieldError(err) {
			return err
		}
		k, kerr := req.svc.APIKeys.Get(req.ctx, id)
		if kerr != nil {
			return kerr
		}
		return h.renderKey(w, r, req, p, k, http.StatusUnprocessableEntity)
	}
	exp, err := devExpiry(f)
	if err != nil {
		return refuse(err)
	}
	updated, err := req.svc.APIKeys.Update(req.ctx, id, &messaging.KeyUpdateParams{Scopes: f["scopes"], ExpiresAt: exp})
	if err != nil {
		return refuse(err)
	}
	return h.keyDone(w, r, req, updated, "changed: its next request is judged by its new scopes and expiry.")
}

// keyDone tells what was done to the key k (the flash "API key <name>
// <done>") and goes back to the keys.
func (h *Handler) keyDone(w http.ResponseWriter, r *http.Request, req *request, k *messaging.APIKey, done string) error {
	name := k.Name
	if name == "" {
		name = k.ID
	}
	h.flash(w, "API key "+name+" "+done)
	http.Redirect(w, r, h.devURL(req, "#keys"), http.StatusSeeOther)
	return nil
}

// devBadTime is the refusal of an expiry field that is no time.
func devBadTime(v string) error {
	return &messaging.Error{Code: messaging.CodeValidation, Field: "expires_at", Path: record.FieldPath("expires_at"),
		Message: "expires_at: must be a date and time (UTC, 24-hour) such as 2026-12-31 23:59 (got " + quote(v) + ")"}
}

// devExpiry reads the expiry field of the form f: nil when it is empty
// (the key never expires), devBadTime's refusal when it is no time.
func devExpiry(f url.Values) (*time.Time, error) {
	v := strings.TrimSpace(f.Get("expires_at"))
	if v == "" {
		return nil, nil
	}
	t, ok := parseUTC(v)
	if !ok {
		return nil, devBadTime(v)
	}
	return &t, nil
}

// quote quotes a value the viewer typed, for a message.
func quote(v string) string {
	if len(v) > 60 {
		v = v[:60] + "…"
	}
	return `"` + v + `"`
}

// devRevokeKey revokes a key of the workspace; the library refuses it at
// once from then on.
func (h *Handler) devRevokeKey(w http.ResponseWriter, r *http.Request, req *request) error {
	k, err := req.svc.APIKeys.Revoke(req.ctx, r.PathValue("id"))
	if err != nil {
		return err
	}
	return h.keyDone(w, r, req, k, "revoked: requests made with it are refused from now on.")
}

// devURL is the path of the workspace's Developers page followed by rest.
func (h *Handler) devURL(req *request, rest string) string {
	return h.prefix + "w/" + url.PathEscape(req.ws.ID) + "/developers" + rest
}

// devCreateEndpoint creates a webhook endpoint and answers its page
// showing the signing secret this once (201).
func (h *Handler) devCreateEndpoint(w http.ResponseWriter, r *http.Request, req *request) error {
	if err := r.ParseForm(); err != nil {
		return err
	}
	f := r.PostForm
	e, secret, err := req.svc.Webhooks.Create(req.ctx, &messaging.WebhookCreateParams{
		URL: strings.TrimSpace(f.Get("url")), Events: f["events"], Description: strings.TrimSpace(f.Get("description"))})
	if err != nil {
		p := &page{Form: f}
		if !p.fieldError(err) {
			return err
		}
		return h.renderDev(w, r, req, p, http.StatusUnprocessableEntity)
	}
	p := &page{Secret: secret, Notice: "Webhook endpoint created."}
	return h.renderEndpoint(w, r, req, p, e, &devEndpointData{Created: true}, http.StatusCreated)
}
