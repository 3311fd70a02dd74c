package dashboard

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/internal/clientaddr"
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
	// Attempts is how many failed sign-ins one client address may make a
	// minute, in bursts of as many; past them its attempts are answered
	// 429 without checking the secret until the bucket refills. A correct
	// sign-in is never counted. Default: 10.
	Attempts int
	// GlobalAttempts is how many failed sign-ins all addresses together
	// may make a minute. Once they are spent, an address that failed
	// within the last minute is refused unchecked, while an address with
	// no recent failure is still checked: guesses from elsewhere never
	// lock out the operator. Default: 200.
	GlobalAttempts int
	// TrustedProxies are the reverse proxies in front of the dashboard.
	// The client address the limits count is the connection's peer; when
	// that peer is in TrustedProxies, it is the right-most X-Forwarded-For
	// entry that is not itself a trusted proxy. Default: none, so the
	// header is ignored (a client could write anything in it).
	TrustedProxies []netip.Prefix
	// Bindings, when set, binds each session to the secret that opened
	// it: it returns the SessionBinding values of the secrets that sign
	// in now (those Check sets), and a session whose secret is no longer
	// among them (the token file was replaced, the password changed) is
	// refused and deleted. Nil: sessions are not bound.
	Bindings func() []string

	limiter *signInLimiter
}

// sessionCookie holds the session token.
const sessionCookie = "dashboard_session"

func (s *SignIn) init(now time.Time) error {
	if s.Check == nil {
		return errors.New("dashboard: SignIn.Check is nil")
	}
	if s.TTL == 0 {
		s.TTL = 12 * time.Hour
	}
	if s.Attempts <= 0 {
		s.Attempts = defaultAttempts
	}
	if s.GlobalAttempts <= 0 {
		s.GlobalAttempts = defaultGlobalAttempts
	}
	for _, p := range s.TrustedProxies {
		if !p.IsValid() {
			return errors.New("dashboard: SignIn.TrustedProxies holds an invalid prefix")
		}
	}
	s.limiter = newSignInLimiter(s.Attempts, s.GlobalAttempts, now)
	return nil
}

// bindings are the bindings of the secrets that sign in now (none when
// sessions are not bound).
func (s *SignIn) bindings() []string {
	if s.Bindings == nil {
		return nil
	}
	return s.Bindings()
}

// bound reports whether v's session binding is among the current ones
// (compared in constant time), or no bindings are used.
func (s *SignIn) bound(v *Viewer) bool {
	if s.Bindings == nil {
		return true
	}
	ok := false
	for _, b := range s.Bindings() {
		if subtle.ConstantTimeCompare([]byte(b), []byte(v.SessionBinding)) == 1 && v.SessionBinding != "" {
			ok = true
		}
	}
	return ok
}

// bindingOf is the binding of a new session of v.
func (s *SignIn) bindingOf(v *Viewer) string {
	if s.Bindings == nil {
		return ""
	}
	return v.SessionBinding
}

// sessionViewer is Authenticate for SignIn: the viewer of the session
// named by the cookie, nil when there is none or it ended.
func (h *Handler) sessionViewer(r *http.Request) (*Viewer, error) {
	c, err := r.Cookie(sessionCookie)
	if err != nil || c.Value == "" {
		return nil, nil
	}
	s, err := h.svc.Session(r.Context(), c.Value, h.signIn.bindings()...)
	if messaging.ErrorCode(err) == messaging.CodeUnauthorized {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &Viewer{Name: s.Subject, Operator: s.Operator, Workspaces: s.Workspaces, SMSAccounts: s.SMSAccounts}, nil
}

func (h *Handler) signInForm(w http.ResponseWriter, r *http.Request) {
	next := h.nextPage(r.URL.Query().Get("next"))
	if v, err := h.sessionViewer(r); err == nil && v != nil {
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	h.render(w, r, http.StatusOK, "signin", &page{Title: "Sign in", Prefix: h.prefix, Form: url.Values{"next": {next}}})
}

// nextPage returns the page a sign-in returns to: next when it is a path
// of this dashboard (never another site: no scheme, no host, no "//"),
// else the dashboard's home.
func (h *Handler) nextPage(next string) string {
	u, err := url.Parse(next)
	if err != nil || next == "" || u.Scheme != "" || u.Host != "" || u.User != nil || strings.HasPrefix(next, "//") ||
		strings.ContainsAny(next, "\\\r\n") || !strings.HasPrefix(u.Path, h.prefix) || strings.HasSuffix(u.Path, "/sign-in") {
		return h.prefix
	}
	return next
}

func (h *Handler) signInSubmit(w http.ResponseWriter, r *http.Request) {
	p := &page{Title: "Sign in", Prefix: h.prefix}
	next := h.nextPage(r.FormValue("next"))
	p.Form = url.Values{"next": {next}}
	attempt, wait := h.signIn.limiter.begin(clientaddr.Of(r, h.signIn.TrustedProxies), h.svc.Now())
	if attempt == nil {
		w.Header().Set("Retry-After", strconv.Itoa(max(1, int((wait+time.Second-1)/time.Second))))
		p.Problem = "Too many sign-in attempts. Wait a minute and try again."
		h.render(w, r, http.StatusTooManyRequests, "signin", p)
		return
	}
	secret := ""
	if err := r.ParseForm(); err == nil {
		secret = r.PostForm.Get("secret")
	}
	if secret == "" {
		attempt.refund()
		p.Errors = map[string]string{"secret": "Enter the operator token or the dashboard password."}
		h.render(w, r, http.StatusUnprocessableEntity, "signin", p)
		return
	}
	v, err := h.signIn.Check(r.Context(), secret)
	if err != nil {
		attempt.refund()
		h.log.ErrorContext(r.Context(), "dashboard: checking a sign-in failed", "err", err)
		h.renderStatus(w, r, http.StatusInternalServerError, p, "Signing in failed on our side. Try again.")
		return
	}
	if v == nil {
		attempt.failed(h.svc.Now())
		p.Errors = map[string]string{"secret": "That is not the operator token or the dashboard password."}
		h.render(w, r, http.StatusUnauthorized, "signin", p)
		return
	}
	attempt.refund()
	if !h.signIn.bound(v) {
		// Check named a secret Bindings does not list: the session would
		// be refused at once, a sign-in loop. The embedder's mistake.
		h.log.ErrorContext(r.Context(), "dashboard: SignIn.Check returned a viewer whose SessionBinding is not among SignIn.Bindings(); no session is started")
		h.renderStatus(w, r, http.StatusInternalServerError, p, "Signing in failed on our side: the dashboard's sign-in is misconfigured.")
		return
	}
	token, s, err := h.svc.StartSession(r.Context(), &messaging.SessionParams{
		Subject: v.Name, Operator: v.Operator, Workspaces: v.Workspaces, SMSAccounts: v.SMSAccounts, TTL: h.signIn.TTL,
		Binding: h.signIn.bindingOf(v)})
	if messaging.ErrorCode(err) == messaging.CodeValidation {
		// Check signed in a viewer no session can hold (no workspace and
		// no SMS account, a bad id): the embedder's mistake, not the
		// visitor's, but not a failure of ours either.
		h.log.ErrorContext(r.Context(), "dashboard: SignIn.Check returned a viewer no session can hold", "err", err)
		h.renderStatus(w, r, http.StatusForbidden, p, "You are signed in to nothing this dashboard shows. Ask the operator for access.")
		return
	}
	if err != nil {
		h.log.ErrorContext(r.Context(), "dashboard: starting a session failed", "err", err)
		h.renderStatus(w, r, http.StatusInternalServerError, p, "Signing in failed on our side. Try again.")
		return
	}
	h.setCookie(w, r, &http.Cookie{Name: sessionCookie, Value: token,
		Expires: s.ExpiresAt, MaxAge: int(s.ExpiresAt.Sub(h.svc.Now()).Seconds())})
	http.Redirect(w, r, next, http.StatusSeeOther)
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

// signOutEverywhere ends every dashboard session, the viewer's own too
// (operator only): Service.EndAllSessions.
func (h *Handler) signOutEverywhere(w http.ResponseWriter, r *http.Request, req *request) error {
	n, err := h.svc.EndAllSessions(req.ctx)
	if err != nil {
		return err
	}
	h.setCookie(w, r, &http.Cookie{Name: sessionCookie, MaxAge: -1})
	h.flash(w, fmt.Sprintf("Every session ended (%d), yours too. Sign in again.", n))
	http.Redirect(w, r, h.prefix+"sign-in", http.StatusSeeOther)
	return nil
}
