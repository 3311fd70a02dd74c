package main

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

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
// operator, who sees every workspace and SMS account.
type operatorSignIn struct {
	token    [sha256.Size]byte
	password []byte // bcrypt hash; nil when no password was set
}

// newOperatorSignIn keeps the digest of token and the bcrypt hash of
// password (empty: no password sign-in).
func newOperatorSignIn(token, password string) (*operatorSignIn, error) {
	s := &operatorSignIn{token: sha256.Sum256([]byte(token))}
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

// setToken makes token the operator token s accepts.
func (s *operatorSignIn) setToken(token string) { s.token = sha256.Sum256([]byte(token)) }

// check implements dashboard.SignIn.Check.
func (s *operatorSignIn) check(_ context.Context, secret string) (*dashboard.Viewer, error) {
	sum := sha256.Sum256([]byte(secret))
	ok := subtle.ConstantTimeCompare(sum[:], s.token[:]) == 1
	if !ok && s.password != nil && len(secret) <= 72 {
		ok = bcrypt.CompareHashAndPassword(s.password, []byte(secret)) == nil
	}
	if !ok {
		return nil, nil
	}
	return &dashboard.Viewer{Name: "operator", Operator: true}, nil
}

// withDashboard serves the dashboard at dashboardPrefix beside api. Its
// cookies are Secure when secureCookies is set (clients reach the server
// over HTTPS), and on every request that came over TLS.
func withDashboard(api http.Handler, svc *messaging.Service, smsSvc *sms.SMS, signIn *operatorSignIn, secureCookies bool, log *slog.Logger) (http.Handler, error) {
	dash, err := dashboard.New(svc, &dashboard.Options{
		Prefix:        dashboardPrefix,
		SignIn:        &dashboard.SignIn{Check: signIn.check},
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
