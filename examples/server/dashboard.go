package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/dashboard"
	"github.com/ujumbe/messaging/sms"
	"golang.org/x/crypto/bcrypt"
)

// dashboardPrefix is where the dashboard is served.
const dashboardPrefix = "/dashboard/"

// minDashboardPassword is the shortest -dashboard-password accepted.
const minDashboardPassword = 12

// operatorSignIn checks a sign-in secret against the operator token
// (compared as SHA-256 digests in constant time) and, when one was given,
// the dashboard password (kept only as a bcrypt hash). Either signs in the
// operator, who sees every workspace and SMS account. Each session is
// bound to the secret that opened it (dashboard.SignIn.Bindings): a keyed
// hash of it under the server's secret key, so replacing the token file
// or the password and restarting ends the sessions they opened.
type operatorSignIn struct {
	token    [sha256.Size]byte
	password []byte // bcrypt hash; nil when no password was set
	// plain is the password until setToken has made its binding.
	plain string
	// tokenBinding and passwordBinding are the session bindings of the
	// token and the password ("" when no password was set).
	tokenBinding, passwordBinding string
}

// newOperatorSignIn keeps the digest of token and the bcrypt hash of
// password (empty: no password sign-in). setToken must then give the
// secret key the session bindings are keyed by.
func newOperatorSignIn(token, password string) (*operatorSignIn, error) {
	s := &operatorSignIn{token: sha256.Sum256([]byte(token)), plain: password}
	if password == "" {
		return s, nil
	}
	if len(password) < minDashboardPassword {
		return nil, fmt.Errorf("-dashboard-password: must be at least %d characters", minDashboardPassword)
	}
	if len(password) > 72 {
		return nil, errors.New("-dashboard-password: must be at most 72 bytes (bcrypt's limit)")
	}
	h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
	if err != nil {
		return nil, err
	}
	s.password = h
	return s, nil
}

// setToken makes token the operator token s accepts (the token of a file
// another instance may have created meanwhile), and sets the session
// bindings of the token and the password, keyed by key (the server's
// secret key). The password in clear is then forgotten.
func (s *operatorSignIn) setToken(token string, key []byte) {
	s.token = sha256.Sum256([]byte(token))
	s.tokenBinding = secretBinding(key, "operator-token", token)
	if s.password != nil {
		s.passwordBinding = secretBinding(key, "dashboard-password", s.plain)
	}
	s.plain = ""
}

// secretBinding is the session binding of a sign-in secret of the given
// kind: "kind:" and the hex HMAC-SHA256 of the secret keyed by key, which
// names the secret without revealing it and is the same at every start
// with the same key.
func secretBinding(key []byte, kind, secret string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(kind + "\x00" + secret))
	return kind + ":" + hex.EncodeToString(m.Sum(nil))
}

// bindings implements dashboard.SignIn.Bindings: the bindings of the
// secrets that sign in now.
func (s *operatorSignIn) bindings() []string {
	if s.password == nil {
		return []string{s.tokenBinding}
	}
	return []string{s.tokenBinding, s.passwordBinding}
}

// check implements dashboard.SignIn.Check.
func (s *operatorSignIn) check(_ context.Context, secret string) (*dashboard.Viewer, error) {
	sum := sha256.Sum256([]byte(secret))
	if subtle.ConstantTimeCompare(sum[:], s.token[:]) == 1 {
		return &dashboard.Viewer{Name: "operator", Operator: true, SessionBinding: s.tokenBinding}, nil
	}
	if s.password != nil && len(secret) <= 72 && bcrypt.CompareHashAndPassword(s.password, []byte(secret)) == nil {
		return &dashboard.Viewer{Name: "operator", Operator: true, SessionBinding: s.passwordBinding}, nil
	}
	return nil, nil
}

// parseTrustedProxies reads -trusted-proxies: comma-separated CIDR
// prefixes or single addresses of the reverse proxies in front of the
// server. Empty: none.
func parseTrustedProxies(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if p, err := netip.ParsePrefix(f); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, fmt.Errorf("-trusted-proxies: %q is neither a CIDR prefix (10.0.0.0/8) nor an address", f)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}

// withDashboard serves the dashboard at dashboardPrefix beside api. The
// sign-in limits count clients behind proxies by X-Forwarded-For. Its
// cookies are Secure when secureCookies is set (clients reach the server
// over HTTPS), and on every request that came over TLS.
func withDashboard(api http.Handler, svc *messaging.Service, smsSvc *sms.SMS, signIn *operatorSignIn, proxies []netip.Prefix, secureCookies bool, log *slog.Logger) (http.Handler, error) {
	dash, err := dashboard.New(svc, &dashboard.Options{
		Prefix:        dashboardPrefix,
		SignIn:        &dashboard.SignIn{Check: signIn.check, Bindings: signIn.bindings, TrustedProxies: proxies},
		SMS:           smsSvc,
		Logger:        log,
		SecureCookies: secureCookies,
	})
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle(dashboardPrefix, dash)
	mux.Handle("GET /dashboard", http.RedirectHandler(dashboardPrefix, http.StatusMovedPermanently))
	mux.Handle("/", api)
	return mux, nil
}
