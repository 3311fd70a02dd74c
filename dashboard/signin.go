package dashboard

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/ujumbe/messaging"
	"golang.org/x/time/rate"
)

// SignIn is the dashboard's own sign-in, for programs without a login of
// their own: a form asking for one secret (an operator token, a password),
// checked by Check, and a session cookie naming a server-side session kept
// in the service's store (Service.StartSession), so that it holds on every
// instance behind a load balancer and ends, everywhere, at sign-out or
// expiry.
//
// The cookie is HttpOnly, SameSite=Lax, scoped to the dashboard's prefix,
// and Secure when the request came over TLS or Options.SecureCookies is
// set.
type SignIn struct {
	// Check answers who secret signs in: nil (and nil error) refuses it.
	// It must compare secrets in constant time.
	Check func(ctx context.Context, secret string) (*Viewer, error)
	// TTL is how long a session lasts. Default: 12 hours.
	TTL time.Duration
	// Secure has the effect of Options.SecureCookies.
	//
	// Deprecated: set Options.SecureCookies.
	Secure bool
	// Attempts limits sign-in attempts, across all visitors: at most this
	// many a minute, in bursts of as many. Default: 20.
	Attempts int

	limiter *rate.Limiter
}

// sessionCookie holds the session token.
const sessionCookie = "dashboard_session"

func (s *SignIn) init() error {
	if s.Check == nil {
		return errors.New("dashboard: SignIn.Check is nil")
	}
	if s.TTL == 0 {
		s.TTL = 12 * time.Hour
	}
	if s.Attempts <= 0 {
		s.Attempts = 20
	}
	s.limiter = rate.NewLimiter(rate.Limit(float64(s.Attempts)/60), s.Attempts)
	return nil
}

// sessionViewer is Authenticate for SignIn: the viewer of the session
// named by the cookie, nil when there is none or it ended.
func (h *Handler) sessionViewer(r *http.Request) (*Viewer, error) {
	c, err := r.Cookie(sessionCookie)
	if err != nil || c.Value == "" {
		return nil, nil
	}
	s, err := h.svc.Session(r.Context(), c.Value)
	if messaging.ErrorCode(err) == messaging.CodeUnauthorized {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &Viewer{Name: s.Subject, Operator: s.Operator, Workspaces: s.Workspaces}, nil
}

func (h *Handler) signInForm(w http.ResponseWriter, r *http.Request) {
	if v, err := h.sessionViewer(r); err == nil && v != nil {
		http.Redirect(w, r, h.prefix, http.StatusSeeOther)
		return
	}
	h.render(w, r, http.StatusOK, "signin", &page{Title: "Sign in", Prefix: h.prefix})
}

func (h *Handler) signInSubmit(w http.ResponseWriter, r *http.Request) {
	p := &page{Title: "Sign in", Prefix: h.prefix}
	if !h.signIn.limiter.Allow() {
		p.Problem = "Too many sign-in attempts. Wait a minute and try again."
		h.render(w, r, http.StatusTooManyRequests, "signin", p)
		return
	}
	secret := ""
	if err := r.ParseForm(); err == nil {
		secret = r.PostForm.Get("secret")
	}
	if secret == "" {
		p.Errors = map[string]string{"secret": "Enter the operator token or the dashboard password."}
		h.render(w, r, http.StatusUnprocessableEntity, "signin", p)
		return
	}
	v, err := h.signIn.Check(r.Context(), secret)
	if err != nil {
		h.log.ErrorContext(r.Context(), "dashboard: checking a sign-in failed", "err", err)
		h.renderStatus(w, r, http.StatusInternalServerError, p, "Signing in failed on our side. Try again.")
		return
	}
	if v == nil {
		p.Errors = map[string]string{"secret": "That is not the operator token or the dashboard password."}
		h.render(w, r, http.StatusUnauthorized, "signin", p)
		return
	}
	token, s, err := h.svc.StartSession(r.Context(), &messaging.SessionParams{
		Subject: v.Name, Operator: v.Operator, Workspaces: v.Workspaces, TTL: h.signIn.TTL})
	if err != nil {
		h.log.ErrorContext(r.Context(), "dashboard: starting a session failed", "err", err)
		h.renderStatus(w, r, http.StatusInternalServerError, p, "Signing in failed on our side. Try again.")
		return
	}
	h.setCookie(w, r, &http.Cookie{Name: sessionCookie, Value: token,
		Expires: s.ExpiresAt, MaxAge: int(s.ExpiresAt.Sub(h.svc.Now()).Seconds())})
	http.Redirect(w, r, h.prefix, http.StatusSeeOther)
}

func (h *Handler) signOut(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(sessionCookie); err == nil && c.Value != "" {
		if err := h.svc.EndSession(r.Context(), c.Value); err != nil && messaging.ErrorCode(err) != messaging.CodeUnauthorized {
			h.log.ErrorContext(r.Context(), "dashboard: ending a session failed", "err", err)
			h.renderStatus(w, r, http.StatusInternalServerError, &page{Title: "Sign out"}, "Signing out failed on our side. Try again.")
			return
		}
	}
	h.setCookie(w, r, &http.Cookie{Name: sessionCookie, MaxAge: -1})
	h.flash(w, "You are signed out.")
	http.Redirect(w, r, h.prefix+"sign-in", http.StatusSeeOther)
}
