package messaging

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/ujumbe/messaging/internal/defaults"
	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"
)

// smsPartnerIDRe is the shape of an SMS account's partner id (package
// sms accepts no other).
var smsPartnerIDRe = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// sessionTokenPrefix starts every session token; 43 base64url characters
// (32 random bytes) follow it.
const sessionTokenPrefix = "mds_"

// sessionTokenLen is the length of a session token.
const sessionTokenLen = len(sessionTokenPrefix) + 43

// sessionSweepLimit is the most expired sessions StartSession deletes.
// Each start adds one session and may delete this many, so expired
// sessions cannot pile up faster than sign-ins clear them.
const sessionSweepLimit = 100

// SessionParams are the arguments of Service.StartSession.
type SessionParams struct {
	// Subject is who signs in: 1 to MaxSessionSubject characters, no
	// control characters, no surrounding white space. Required.
	Subject string
	// Operator lets the session see every workspace and SMS account;
	// Workspaces and SMSAccounts must then be empty.
	Operator bool
	// Workspaces are the ids of the workspaces a non-operator session may
	// see: up to MaxSessionWorkspaces ids of existing workspaces
	// (duplicates are dropped). A non-operator session names at least one
	// workspace or SMS account.
	Workspaces []string
	// SMSAccounts are the partner ids of the SMS accounts a non-operator
	// session may see: up to MaxSessionSMSAccounts ids (duplicates are
	// dropped). Their existence is not checked here (the accounts live in
	// package sms); a dashboard skips those that do not exist.
	SMSAccounts []string
	// TTL is the session's lifetime, MinSessionTTL to MaxSessionTTL.
	// Default (0): DefaultSessionTTL.
	TTL time.Duration
	// Binding binds the session to the secret that signed the subject in:
	// an opaque string naming that secret, such as a keyed hash of it (not
	// the secret itself). Session then accepts the session only while its
	// caller presents the same binding, so a session ends when the secret
	// that opened it is replaced. The store keeps only an HMAC-SHA256 of
	// it keyed by the session's token. At most MaxSessionBinding bytes.
	// Empty: the session is not bound.
	Binding string
}

// StartSession signs a subject in: it stores a new session and returns it
// with its token, a random 32-byte secret ("mds_" and 43 base64url
// characters). The token is returned only here; the store keeps its
// SHA-256, so a copy of the database does not sign anyone in. Each call
// also deletes up to 100 expired sessions; a failure to do so is logged
// and does not fail the call.
func (s *Service) StartSession(ctx context.Context, p *SessionParams) (string, *Session, error) {
	if err := refuseUnstorable(p, sessionTexts); err != nil {
		return "", nil, err
	}
	if p == nil {
		return "", nil, validationError("body", "is required")
	}
	ttl, workspaces, smsAccounts, err := p.validate()
	if err != nil {
		return "", nil, err
	}
	for _, id := range workspaces {
		if _, err := s.store.WorkspaceGet(ctx, id); errors.Is(err, ErrNotFound) {
			return "", nil, validationErrorAt(record.FieldPath("workspaces").Index(slices.Index(p.Workspaces, id)), "workspace %q does not exist", id)
		} else if err != nil {
			return "", nil, wrapStoreError(err, "workspace", id)
		}
	}
	var secret [32]byte
	if _, err := rand.Read(secret[:]); err != nil {
		return "", nil, &Error{Code: CodeInternal, Message: "internal error", Err: err}
	}
	token := sessionTokenPrefix + base64.RawURLEncoding.EncodeToString(secret[:])
	now := s.now()
	st := &driver.StoredSession{
		Session: Session{ID: record.NewID("ses"), Subject: p.Subject, Operator: p.Operator, Workspaces: workspaces,
			SMSAccounts: smsAccounts, CreatedAt: now, ExpiresAt: now.Add(ttl)},
		Hash: sessionHash(token),
	}
	if p.Binding != "" {
		st.Binding = sessionBinding(token, p.Binding)
	}
	if err := s.store.SessionCreate(ctx, st); err != nil {
		return "", nil, wrapStoreError(err, "session", st.ID)
	}
	if _, err := s.store.SessionSweep(context.WithoutCancel(ctx), &driver.SessionSweepParams{Before: now, Limit: sessionSweepLimit}); err != nil {
		s.log.ErrorContext(ctx, "deleting expired sessions failed", "err", err)
	}
	return token, st.Session.Clone(), nil
}

// validate checks p and returns its lifetime, its workspaces and its SMS
// accounts, sorted and without duplicates (empty, not nil, for an
// operator).
func (p *SessionParams) validate() (time.Duration, []string, []string, error) {
	switch {
	case p.Subject == "":
		return 0, nil, nil, validationError("subject", "is required: 1 to %d characters", record.MaxSessionSubject)
	case strings.TrimSpace(p.Subject) != p.Subject:
		return 0, nil, nil, validationError("subject", "must not start or end with white space")
	case strings.IndexFunc(p.Subject, unicode.IsControl) >= 0:
		return 0, nil, nil, validationError("subject", "must not hold control characters")
	}
	if err := checkLen(record.FieldPath("subject"), p.Subject, record.MaxSessionSubject); err != nil {
		return 0, nil, nil, err
	}
	switch {
	case p.Operator && len(p.Workspaces) > 0:
		return 0, nil, nil, validationError("workspaces", "must be empty for an operator session, which sees every workspace")
	case p.Operator && len(p.SMSAccounts) > 0:
		return 0, nil, nil, validationError("sms_accounts", "must be empty for an operator session, which sees every SMS account")
	case !p.Operator && len(p.Workspaces) == 0 && len(p.SMSAccounts) == 0:
		return 0, nil, nil, validationError("workspaces", "must hold at least one workspace id, or sms_accounts one SMS account id, unless the session is an operator's")
	case len(p.Workspaces) > record.MaxSessionWorkspaces:
		return 0, nil, nil, validationError("workspaces", "must hold at most %d workspace ids (got %d)", record.MaxSessionWorkspaces, len(p.Workspaces))
	case len(p.SMSAccounts) > record.MaxSessionSMSAccounts:
		return 0, nil, nil, validationError("sms_accounts", "must hold at most %d SMS account ids (got %d)", record.MaxSessionSMSAccounts, len(p.SMSAccounts))
	}
	for i, id := range p.Workspaces {
		if !workspaceIDRe.MatchString(id) {
			return 0, nil, nil, validationErrorAt(record.FieldPath("workspaces").Index(i), "must be a workspace id: 1 to 64 letters, digits, '_' or '-', starting with a letter or digit")
		}
	}
	for i, id := range p.SMSAccounts {
		if !smsPartnerIDRe.MatchString(id) {
			return 0, nil, nil, validationErrorAt(record.FieldPath("sms_accounts").Index(i), "must be an SMS account's partner id: 1 to 64 letters, digits, '_' or '-'")
		}
	}
	ttl := p.TTL
	if ttl == 0 {
		ttl = defaults.DefaultSessionTTL
	}
	if len(p.Binding) > record.MaxSessionBinding {
		return 0, nil, nil, validationError("binding", "must be at most %d bytes (got %d)", record.MaxSessionBinding, len(p.Binding))
	}
	if ttl < defaults.MinSessionTTL || ttl > defaults.MaxSessionTTL {
		return 0, nil, nil, validationError("ttl", "must be 1 minute to 30 days, or 0 for the default of 12 hours (got %s)", p.TTL)
	}
	return ttl, sortedUnique(p.Workspaces), sortedUnique(p.SMSAccounts), nil
}

// sortedUnique returns a sorted copy of ids without duplicates, empty
// (not nil) when there are none.
func sortedUnique(ids []string) []string {
	out := append([]string{}, ids...)
	slices.Sort(out)
	return slices.Compact(out)
}

// Session returns the session a token proves. An unknown, malformed,
// ended or expired token gives CodeUnauthorized (the message does not say
// which). Expiry is checked here, against the service clock, on every
// call, so a client cannot extend a session.
//
// bindings are the SessionParams.Binding values of the secrets that sign
// in now: a session started with a Binding is accepted only when it is
// among them, and one started without only when none are given. A
// session refused for its binding (the secret that opened it was
// replaced) is also deleted, and gives CodeUnauthorized too.
func (s *Service) Session(ctx context.Context, token string, bindings ...string) (*Session, error) {
	if !wellFormedSessionToken(token) {
		return nil, errSession()
	}
	hash := sessionHash(token)
	st, err := s.store.SessionGet(ctx, hash)
	if errors.Is(err, ErrNotFound) {
		return nil, errSession()
	}
	if err != nil {
		return nil, wrapStoreError(err, "session", "")
	}
	// The store found the row by hash; comparing again, in constant time,
	// keeps a store whose lookup is looser than byte equality from
	// signing anyone in.
	if subtle.ConstantTimeCompare([]byte(st.Hash), []byte(hash)) != 1 || !s.now().Before(st.ExpiresAt) {
		return nil, errSession()
	}
	if !bindingMatches(token, st.Binding, bindings) {
		if err := s.store.SessionDelete(context.WithoutCancel(ctx), hash); err != nil {
			s.log.ErrorContext(ctx, "deleting a session whose secret was replaced failed", "session", st.ID, "err", err)
		}
		return nil, errSession()
	}
	return st.Session.Clone(), nil
}

// bindingMatches reports whether a session whose stored binding is stored
// (empty: unbound) is accepted when the current secrets' bindings are
// bindings. Each is compared in constant time.
func bindingMatches(token, stored string, bindings []string) bool {
	if stored == "" {
		return len(bindings) == 0
	}
	ok := 0
	for _, b := range bindings {
		ok |= subtle.ConstantTimeCompare([]byte(sessionBinding(token, b)), []byte(stored))
	}
	return ok == 1
}

// sessionBinding returns the stored form of a session's binding: the hex
// HMAC-SHA256 of binding keyed by the session's token, so that a copy of
// the store neither reveals the binding nor lets it be tested without a
// live token.
func sessionBinding(token, binding string) string {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte(binding))
	return hex.EncodeToString(m.Sum(nil))
}

// EndSession signs a session out: its token stops working at once, on
// every Service sharing the store. Ending an unknown, malformed or ended
// session is not an error.
func (s *Service) EndSession(ctx context.Context, token string) error {
	if !wellFormedSessionToken(token) {
		return nil
	}
	return wrapStoreError(s.store.SessionDelete(ctx, sessionHash(token)), "session", "")
}

// EndAllSessions signs everyone out ("sign out everywhere"): every
// session, live or expired, is deleted, so every token stops working at
// once on every Service sharing the store. It returns how many sessions
// it deleted. Whoever may call it is the caller's decision (the operator,
// in httpapi and the dashboard).
func (s *Service) EndAllSessions(ctx context.Context) (int, error) {
	n, err := s.store.SessionDeleteAll(ctx)
	if err != nil {
		return 0, wrapStoreError(err, "session", "")
	}
	s.log.InfoContext(ctx, "every dashboard session ended", "sessions", n, "actor", ActorFrom(ctx))
	return n, nil
}

// errSession is the error of a token that proves no live session.
func errSession() *Error {
	return &Error{Code: CodeUnauthorized, Message: "the session is unknown, ended or expired: sign in again"}
}

// wellFormedSessionToken reports whether token has the shape of a token
// StartSession returns, so that other text never reaches the store.
func wellFormedSessionToken(token string) bool {
	if len(token) != sessionTokenLen ||
		subtle.ConstantTimeCompare([]byte(token[:len(sessionTokenPrefix)]), []byte(sessionTokenPrefix)) != 1 {
		return false
	}
	b, err := base64.RawURLEncoding.DecodeString(token[len(sessionTokenPrefix):])
	return err == nil && len(b) == 32
}

// sessionHash returns the hex SHA-256 of a token, under which its session
// is stored.
func sessionHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}
