package messaging_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ujumbe/messaging/internal/defaults"
	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/internal/testlog"
	"github.com/ujumbe/messaging/provider/fakeprovider"
)

// sessionStore records the sessions a Service hands its store, and can
// fail SessionGet and SessionSweep.
type sessionStore struct {
	driver.Store
	mu       sync.Mutex
	created  []driver.StoredSession
	getErr   error
	sweepErr error
	sweeps   []driver.SessionSweepParams
}

func (s *sessionStore) SessionCreate(ctx context.Context, st *driver.StoredSession) error {
	s.mu.Lock()
	s.created = append(s.created, *st)
	s.mu.Unlock()
	return s.Store.SessionCreate(ctx, st)
}

func (s *sessionStore) SessionGet(ctx context.Context, hash string) (*driver.StoredSession, error) {
	if s.getErr != nil {
		return nil, s.getErr
	}
	return s.Store.SessionGet(ctx, hash)
}

func (s *sessionStore) SessionSweep(ctx context.Context, p *driver.SessionSweepParams) (int, error) {
	s.mu.Lock()
	s.sweeps = append(s.sweeps, *p)
	s.mu.Unlock()
	if s.sweepErr != nil {
		return 0, s.sweepErr
	}
	return s.Store.SessionSweep(ctx, p)
}

// instance returns another Service on f's store and clock, as a second
// server behind a load balancer would be.
func (f *fixture) instance(t *testing.T, store driver.Store, log *slog.Logger) *messaging.Service {
	t.Helper()
	svc, err := messaging.New(store, fakeprovider.New(), &messaging.Options{Clock: f.clock.Now, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close(context.Background()) })
	return svc
}

func wantUnauthorized(t *testing.T, what string, s *messaging.Session, err error) {
	t.Helper()
	var e *messaging.Error
	if !errors.As(err, &e) || e.Code != messaging.CodeUnauthorized || s != nil {
		t.Fatalf("%s: Session = %+v, %v; want nil, %s", what, s, err, messaging.CodeUnauthorized)
	}
}

// TestSessionLifecycle: a session works from its start until ExpiresAt
// (by the service clock, on every instance), not at ExpiresAt, and not
// after EndSession, which may be repeated.
func TestSessionLifecycle(t *testing.T) {
	t.Parallel()
	f := setup(t)
	other := f.instance(t, f.store, nil)
	token, s, err := f.svc.StartSession(f.ctx, &messaging.SessionParams{Subject: "amina@acme.example", Workspaces: []string{"other", "acme", "other"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(token, "mds_") || len(token) != 47 || !strings.HasPrefix(s.ID, "ses_") {
		t.Errorf("token %q, id %q: want mds_ and 43 characters, and ses_...", token, s.ID)
	}
	want := &messaging.Session{ID: s.ID, Subject: "amina@acme.example", Workspaces: []string{"acme", "other"},
		SMSAccounts: []string{}, CreatedAt: t0, ExpiresAt: t0.Add(defaults.DefaultSessionTTL)}
	if d := cmp.Diff(want, s); d != "" {
		t.Errorf("StartSession (-want +got):\n%s", d)
	}
	for _, svc := range []*messaging.Service{f.svc, other} {
		got, err := svc.Session(f.ctx, token)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("Session (-want +got):\n%s", d)
		}
	}
	f.clock.Advance(defaults.DefaultSessionTTL - time.Nanosecond)
	if _, err := other.Session(f.ctx, token); err != nil {
		t.Fatalf("a nanosecond before expiry: %v", err)
	}
	f.clock.Advance(time.Nanosecond)
	got, err := other.Session(f.ctx, token)
	wantUnauthorized(t, "at expiry", got, err)

	token, _, err = f.svc.StartSession(f.ctx, &messaging.SessionParams{Subject: "operator", Operator: true, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := other.Session(f.ctx, token); err != nil || !got.Operator || got.Workspaces == nil || len(got.Workspaces) != 0 {
		t.Fatalf("operator session = %+v, %v; want Operator and no workspaces", got, err)
	}
	for i := 0; i < 2; i++ {
		if err := f.svc.EndSession(f.ctx, token); err != nil {
			t.Fatalf("EndSession #%d: %v", i+1, err)
		}
	}
	got, err = other.Session(f.ctx, token)
	wantUnauthorized(t, "ended, on another instance", got, err)
	if err := other.EndSession(f.ctx, "not a token"); err != nil {
		t.Fatalf("EndSession of a malformed token: %v", err)
	}
}

// TestSessionSMSAccounts: a session may name SMS accounts besides, or
// instead of, workspaces; they come back sorted, without duplicates, on
// every instance.
func TestSessionSMSAccounts(t *testing.T) {
	t.Parallel()
	f := setup(t)
	other := f.instance(t, f.store, nil)
	token, s, err := f.svc.StartSession(f.ctx, &messaging.SessionParams{Subject: "sms clerk", SMSAccounts: []string{"5678", "1234", "5678"}})
	if err != nil {
		t.Fatalf("a session with SMS accounts and no workspace: %v", err)
	}
	want := &messaging.Session{ID: s.ID, Subject: "sms clerk", Workspaces: []string{}, SMSAccounts: []string{"1234", "5678"},
		CreatedAt: t0, ExpiresAt: t0.Add(defaults.DefaultSessionTTL)}
	got, err := other.Session(f.ctx, token)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []*messaging.Session{s, got} {
		if d := cmp.Diff(want, s); d != "" {
			t.Errorf("session (-want +got):\n%s", d)
		}
	}
	_, s, err = f.svc.StartSession(f.ctx, &messaging.SessionParams{Subject: "both", Workspaces: []string{"acme"}, SMSAccounts: []string{"1234"}})
	if err != nil || !slices.Equal(s.SMSAccounts, []string{"1234"}) || !slices.Equal(s.Workspaces, []string{"acme"}) {
		t.Fatalf("a session with both: %+v, %v", s, err)
	}
}

// TestSessionTokenTampered: only the exact token proves a session; any
// other text, including the stored hash and the public id, is
// unauthorized, never an internal error or a store lookup by prefix.
func TestSessionTokenTampered(t *testing.T) {
	t.Parallel()
	f := setup(t)
	rec := &sessionStore{Store: f.store}
	svc := f.instance(t, rec, nil)
	token, s, err := svc.StartSession(f.ctx, &messaging.SessionParams{Subject: "operator", Operator: true})
	if err != nil {
		t.Fatal(err)
	}
	flip := func(i int) string {
		b := []byte(token)
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		return string(b)
	}
	bad := map[string]string{
		"empty": "", "prefix only": "mds_", "wrong prefix": "mdx_" + token[4:], "upper case": strings.ToUpper(token),
		"first secret character": flip(4), "last character": flip(len(token) - 1), "middle character": flip(25),
		"truncated": token[:len(token)-1], "extended": token + "A", "padded": token + "=", "spaces": " " + token,
		"stored hash": rec.created[0].Hash, "public id": s.ID, "NUL": token[:46] + "\x00", "not UTF-8": token[:46] + "\xff",
	}
	for name, tok := range bad {
		got, err := svc.Session(f.ctx, tok)
		wantUnauthorized(t, name, got, err)
	}
	if _, err := svc.Session(f.ctx, token); err != nil {
		t.Fatalf("the real token after the tampered ones: %v", err)
	}
	// A store that cannot be reached is the store's fault, not the
	// token's: service_unavailable, never internal_error.
	rec.getErr = fmt.Errorf("pg: %w", messaging.ErrUnavailable)
	if _, err := svc.Session(f.ctx, token); messaging.ErrorCode(err) != messaging.CodeServiceUnavailable {
		t.Fatalf("store unavailable: %v, want %s", err, messaging.CodeServiceUnavailable)
	}
}

// TestSessionSecretNotKept: the store receives the SHA-256 of the token
// and nothing holding the token; no log line holds it either, not even
// when the sweep fails.
func TestSessionSecretNotKept(t *testing.T) {
	t.Parallel()
	f := setup(t)
	var logs testlog.Buffer
	rec := &sessionStore{Store: f.store, sweepErr: errors.New("sweep failed")}
	svc := f.instance(t, rec, slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	token, _, err := svc.StartSession(f.ctx, &messaging.SessionParams{Subject: "amina", Workspaces: []string{"acme"}})
	if err != nil {
		t.Fatalf("a failing sweep failed the start: %v", err)
	}
	sum := sha256.Sum256([]byte(token))
	if got, want := rec.created[0].Hash, hex.EncodeToString(sum[:]); got != want {
		t.Errorf("stored hash %q, want the hex SHA-256 of the token %q", got, want)
	}
	secret := token[len("mds_"):]
	if stored := fmt.Sprintf("%#v", rec.created[0]); strings.Contains(stored, secret) {
		t.Errorf("the store was given the token: %s", stored)
	}
	if !strings.Contains(logs.String(), "sweep failed") {
		t.Errorf("the failed sweep was not logged: %q", logs.String())
	}
	if strings.Contains(logs.String(), secret) {
		t.Errorf("a log line holds the token: %q", logs.String())
	}
}

// TestSessionSweep: starting a session deletes the sessions that expired
// before now, at most 100 of them, and leaves the live ones.
func TestSessionSweep(t *testing.T) {
	t.Parallel()
	f := setup(t)
	rec := &sessionStore{Store: f.store}
	svc := f.instance(t, rec, nil)
	short, _, err := svc.StartSession(f.ctx, &messaging.SessionParams{Subject: "a", Operator: true, TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	long, _, err := svc.StartSession(f.ctx, &messaging.SessionParams{Subject: "b", Operator: true, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(2 * time.Minute)
	if _, _, err := svc.StartSession(f.ctx, &messaging.SessionParams{Subject: "c", Operator: true}); err != nil {
		t.Fatal(err)
	}
	want := driver.SessionSweepParams{Before: t0.Add(2 * time.Minute), Limit: 100}
	if d := cmp.Diff(want, rec.sweeps[len(rec.sweeps)-1]); d != "" {
		t.Errorf("sweep (-want +got):\n%s", d)
	}
	if _, err := f.store.SessionGet(f.ctx, rec.created[0].Hash); !errors.Is(err, messaging.ErrNotFound) {
		t.Errorf("the expired session is still stored (%v)", err)
	}
	if _, err := svc.Session(f.ctx, long); err != nil {
		t.Errorf("the live session was swept: %v", err)
	}
	got, err := svc.Session(f.ctx, short)
	wantUnauthorized(t, "swept", got, err)
}

// TestStartSessionRules: bad parameters are refused with a validation
// error naming the field, and nothing is stored; the limits themselves
// are accepted.
func TestStartSessionRules(t *testing.T) {
	t.Parallel()
	f := setup(t)
	rec := &sessionStore{Store: f.store}
	svc := f.instance(t, rec, nil)
	var tooMany []string
	for i := 0; i <= record.MaxSessionWorkspaces; i++ {
		tooMany = append(tooMany, fmt.Sprintf("ws%d", i))
	}
	ws := []string{"acme"}
	cases := []struct {
		name, field, text string
		p                 *messaging.SessionParams
	}{
		{"nil", "body", "required", nil},
		{"no subject", "subject", "required", &messaging.SessionParams{Workspaces: ws}},
		{"subject too long", "subject", "100", &messaging.SessionParams{Subject: strings.Repeat("é", record.MaxSessionSubject+1), Workspaces: ws}},
		{"subject with space around", "subject", "white space", &messaging.SessionParams{Subject: "amina ", Workspaces: ws}},
		{"subject with a newline", "subject", "control", &messaging.SessionParams{Subject: "ami\nna", Workspaces: ws}},
		{"subject with NUL", "subject", "NUL", &messaging.SessionParams{Subject: "ami\x00na", Workspaces: ws}},
		{"subject not UTF-8", "subject", "UTF-8", &messaging.SessionParams{Subject: "ami\xffna", Workspaces: ws}},
		{"no workspaces", "workspaces", "at least one", &messaging.SessionParams{Subject: "amina"}},
		{"operator with workspaces", "workspaces", "operator", &messaging.SessionParams{Subject: "op", Operator: true, Workspaces: ws}},
		{"operator with SMS accounts", "sms_accounts", "operator", &messaging.SessionParams{Subject: "op", Operator: true, SMSAccounts: []string{"1234"}}},
		{"too many SMS accounts", "sms_accounts", "at most 100", &messaging.SessionParams{Subject: "amina", SMSAccounts: tooMany}},
		{"bad SMS account id", "sms_accounts[1]", "partner id", &messaging.SessionParams{Subject: "amina", SMSAccounts: []string{"1234", "../x"}}},
		{"too many workspaces", "workspaces", "at most 100", &messaging.SessionParams{Subject: "amina", Workspaces: tooMany}},
		{"bad workspace id", "workspaces[1]", "workspace id", &messaging.SessionParams{Subject: "amina", Workspaces: []string{"acme", "a b"}}},
		{"empty workspace id", "workspaces[0]", "workspace id", &messaging.SessionParams{Subject: "amina", Workspaces: []string{""}}},
		{"unknown workspace", "workspaces[1]", `"nope" does not exist`, &messaging.SessionParams{Subject: "amina", Workspaces: []string{"acme", "nope"}}},
		{"negative ttl", "ttl", "30 days", &messaging.SessionParams{Subject: "amina", Workspaces: ws, TTL: -time.Hour}},
		{"ttl below a minute", "ttl", "1 minute", &messaging.SessionParams{Subject: "amina", Workspaces: ws, TTL: time.Minute - 1}},
		{"ttl above 30 days", "ttl", "30 days", &messaging.SessionParams{Subject: "amina", Workspaces: ws, TTL: defaults.MaxSessionTTL + 1}},
	}
	for _, c := range cases {
		token, s, err := svc.StartSession(f.ctx, c.p)
		e := wantError(t, err, messaging.CodeValidation, c.field)
		if !strings.Contains(e.Message, c.text) {
			t.Errorf("%s: message %q does not say %q", c.name, e.Message, c.text)
		}
		if token != "" || s != nil {
			t.Errorf("%s: got a session", c.name)
		}
	}
	if len(rec.created) != 0 {
		t.Fatalf("refused sessions were stored: %+v", rec.created)
	}
	for _, p := range []*messaging.SessionParams{
		{Subject: strings.Repeat("é", record.MaxSessionSubject), Workspaces: ws, TTL: defaults.MaxSessionTTL},
		{Subject: "x", Operator: true, TTL: defaults.MinSessionTTL},
	} {
		_, s, err := svc.StartSession(f.ctx, p)
		if err != nil {
			t.Fatalf("StartSession at the limits: %v", err)
		}
		if got := s.ExpiresAt.Sub(s.CreatedAt); got != p.TTL {
			t.Errorf("lifetime %s, want %s", got, p.TTL)
		}
	}
}

// TestSessionBinding: a session started with a Binding is accepted only
// while its caller presents that binding among the current ones; once it
// is not (the secret that opened it was replaced) the session is refused
// and deleted, so restoring the binding does not bring it back. An
// unbound session is refused when bindings are presented. The store
// never sees the binding itself.
func TestSessionBinding(t *testing.T) {
	t.Parallel()
	f := setup(t)
	rec := &sessionStore{Store: f.store}
	svc := f.instance(t, rec, nil)
	other := f.instance(t, f.store, nil)
	const b1 = "token:6f1c0c3a"
	token, _, err := svc.StartSession(f.ctx, &messaging.SessionParams{Subject: "operator", Operator: true, Binding: b1})
	if err != nil {
		t.Fatal(err)
	}
	if st := rec.created[0]; st.Binding == "" || strings.Contains(st.Binding, b1) || len(st.Binding) != 64 {
		t.Errorf("stored binding %q: want a 64-digit keyed hash, not the binding", st.Binding)
	}
	for _, current := range [][]string{{b1}, {"password:77", b1}} {
		if _, err := other.Session(f.ctx, token, current...); err != nil {
			t.Fatalf("Session with current bindings %q: %v", current, err)
		}
	}
	got, err := other.Session(f.ctx, token, "token:replaced")
	wantUnauthorized(t, "the secret that opened it replaced", got, err)
	got, err = other.Session(f.ctx, token, b1)
	wantUnauthorized(t, "the old binding back after the refusal (deleted)", got, err)
	if _, err := f.store.SessionGet(f.ctx, rec.created[0].Hash); !errors.Is(err, messaging.ErrNotFound) {
		t.Errorf("the refused session is still stored: %v", err)
	}

	token, _, err = svc.StartSession(f.ctx, &messaging.SessionParams{Subject: "operator", Operator: true, Binding: b1})
	if err != nil {
		t.Fatal(err)
	}
	got, err = other.Session(f.ctx, token)
	wantUnauthorized(t, "a bound session read without bindings", got, err)

	token, _, err = svc.StartSession(f.ctx, &messaging.SessionParams{Subject: "operator", Operator: true})
	if err != nil {
		t.Fatal(err)
	}
	got, err = other.Session(f.ctx, token, b1)
	wantUnauthorized(t, "an unbound session read with bindings", got, err)

	_, _, err = svc.StartSession(f.ctx, &messaging.SessionParams{Subject: "operator", Operator: true, Binding: strings.Repeat("x", record.MaxSessionBinding+1)})
	wantError(t, err, messaging.CodeValidation, "binding")
}

// TestEndAllSessions: signing out everywhere ends every session, on every
// instance, and says how many.
func TestEndAllSessions(t *testing.T) {
	t.Parallel()
	f := setup(t)
	other := f.instance(t, f.store, nil)
	var tokens []string
	for _, p := range []*messaging.SessionParams{
		{Subject: "operator", Operator: true, Binding: "b"},
		{Subject: "amina", Workspaces: []string{"acme"}},
	} {
		token, _, err := f.svc.StartSession(f.ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		tokens = append(tokens, token)
	}
	for i, token := range tokens {
		if _, err := f.svc.Session(f.ctx, token, [][]string{{"b"}, nil}[i]...); err != nil {
			t.Fatalf("session %d before EndAllSessions: %v", i, err)
		}
	}
	n, err := other.EndAllSessions(f.ctx)
	if err != nil || n != 2 {
		t.Fatalf("EndAllSessions = %d, %v; want 2", n, err)
	}
	for i, token := range tokens {
		got, err := f.svc.Session(f.ctx, token, [][]string{{"b"}, nil}[i]...)
		wantUnauthorized(t, fmt.Sprintf("session %d after EndAllSessions", i), got, err)
	}
}
