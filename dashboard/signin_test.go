package dashboard_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/dashboard"
	"github.com/ujumbe/messaging/internal/testclock"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/sms"
	"github.com/ujumbe/messaging/sms/fakegateway"
	"github.com/ujumbe/messaging/store/memstore"
)

// signInFixture serves a dashboard with its own sign-in, whose secret is
// "right-secret" (signing in the operator).
func signInFixture(t *testing.T) (*httptest.Server, *testclock.Clock) {
	t.Helper()
	clock := testclock.New(t0)
	store := memstore.New()
	t.Cleanup(func() { _ = store.Close() })
	svc, err := messaging.New(store, fakeprovider.New(), &messaging.Options{Clock: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateWorkspace(context.Background(), &messaging.CreateWorkspaceParams{ID: "acme", Name: "Acme Ltd"}); err != nil {
		t.Fatal(err)
	}
	dash, err := dashboard.New(svc, &dashboard.Options{SignIn: &dashboard.SignIn{TTL: time.Hour,
		Check: func(_ context.Context, secret string) (*dashboard.Viewer, error) {
			if secret == "right-secret" {
				return &dashboard.Viewer{Name: "operator", Operator: true}, nil
			}
			return nil, nil
		}}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(dash)
	t.Cleanup(srv.Close)
	return srv, clock
}

// browserLike sends what a browser sends: same-origin forms, no
// redirects followed.
func browserLike(t *testing.T, srv *httptest.Server, method, path string, form url.Values, cookies ...*http.Cookie) *http.Response {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, srv.URL+path, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Sec-Fetch-Site", "same-origin")
	}
	for _, c := range cookies {
		req.AddCookie(c)
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res
}

func sessionOf(res *http.Response) *http.Cookie {
	for _, c := range res.Cookies() {
		if c.Name == "dashboard_session" {
			return c
		}
	}
	return nil
}

// TestSignIn: a wrong secret is refused; the right one gives a session
// cookie (HttpOnly, SameSite=Lax, scoped to the dashboard) that opens the
// pages until the session expires on the server's clock.
func TestSignIn(t *testing.T) {
	srv, clock := signInFixture(t)
	if res := browserLike(t, srv, "GET", "/dashboard/w/acme/overview", nil); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/dashboard/sign-in?next=%2Fdashboard%2Fw%2Facme%2Foverview" {
		t.Fatalf("signed out: %d to %q; want 303 to the sign-in form", res.StatusCode, res.Header.Get("Location"))
	}
	res := browserLike(t, srv, "POST", "/dashboard/sign-in", url.Values{"secret": {"wrong"}})
	if res.StatusCode != http.StatusUnauthorized || sessionOf(res) != nil {
		t.Fatalf("wrong secret: %d, cookie %v; want 401 and no session", res.StatusCode, sessionOf(res))
	}
	res = browserLike(t, srv, "POST", "/dashboard/sign-in", url.Values{"secret": {"right-secret"}})
	c := sessionOf(res)
	if res.StatusCode != http.StatusSeeOther || c == nil {
		t.Fatalf("right secret: %d, cookie %v; want 303 and a session", res.StatusCode, c)
	}
	if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/dashboard/" || c.Secure {
		t.Errorf("session cookie = %+v; want HttpOnly, SameSite=Lax, Path /dashboard/, not Secure over plain HTTP", c)
	}
	if res := browserLike(t, srv, "GET", "/dashboard/w/acme/overview", nil, c); res.StatusCode != http.StatusOK {
		t.Fatalf("overview with the session: %d; want 200", res.StatusCode)
	}
	clock.Advance(time.Hour)
	if res := browserLike(t, srv, "GET", "/dashboard/w/acme/overview", nil, c); res.StatusCode != http.StatusSeeOther {
		t.Errorf("overview after the session's hour: %d; want 303 to sign in (expired on the server)", res.StatusCode)
	}
}

// TestSignInReturnsToThePageAsked: a signed-out visitor sent to the
// sign-in form from a page returns to it (query included) once signed
// in; a next page off the dashboard (another site, a scheme, "//", a
// backslash) returns home instead, so the form is no open redirect.
func TestSignInReturnsToThePageAsked(t *testing.T) {
	srv, _ := signInFixture(t)
	res := browserLike(t, srv, "GET", "/dashboard/w/acme/messages?status=failed", nil)
	loc, err := url.Parse(res.Header.Get("Location"))
	if err != nil || loc.Path != "/dashboard/sign-in" {
		t.Fatalf("signed out: %d to %q; want the sign-in form", res.StatusCode, res.Header.Get("Location"))
	}
	next := loc.Query().Get("next")
	if next != "/dashboard/w/acme/messages?status=failed" {
		t.Fatalf("next = %q; want the page asked for", next)
	}
	for _, c := range []struct{ next, want string }{
		{next, next},
		{"https://evil.example/dashboard/", "/dashboard/"},
		{"//evil.example/dashboard/", "/dashboard/"},
		{"/\\evil.example/dashboard/", "/dashboard/"},
		{"/elsewhere", "/dashboard/"},
		{"", "/dashboard/"},
	} {
		res := browserLike(t, srv, "POST", "/dashboard/sign-in", url.Values{"secret": {"right-secret"}, "next": {c.next}})
		if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != c.want {
			t.Errorf("sign in with next %q: %d to %q; want 303 to %q", c.next, res.StatusCode, res.Header.Get("Location"), c.want)
		}
	}
}

// TestSignOutEndsTheSessionOnTheServer: after sign-out the old cookie,
// replayed, no longer opens a page.
func TestSignOutEndsTheSessionOnTheServer(t *testing.T) {
	srv, _ := signInFixture(t)
	c := sessionOf(browserLike(t, srv, "POST", "/dashboard/sign-in", url.Values{"secret": {"right-secret"}}))
	if c == nil {
		t.Fatal("no session")
	}
	res := browserLike(t, srv, "POST", "/dashboard/sign-out", url.Values{}, c)
	if cleared := sessionOf(res); res.StatusCode != http.StatusSeeOther || cleared == nil || cleared.MaxAge >= 0 {
		t.Errorf("sign-out: %d, cookie %+v; want 303 and the cookie cleared", res.StatusCode, cleared)
	}
	if res := browserLike(t, srv, "GET", "/dashboard/w/acme/overview", nil, c); res.StatusCode != http.StatusSeeOther {
		t.Errorf("replayed cookie after sign-out: %d; want 303 to sign in", res.StatusCode)
	}
}

// signInHandler is the dashboard of signInFixture as a handler, so that
// tests can set each request's RemoteAddr, with the given sign-in limits.
func signInHandler(t *testing.T, si *dashboard.SignIn) (http.Handler, *testclock.Clock) {
	t.Helper()
	clock := testclock.New(t0)
	store := memstore.New()
	t.Cleanup(func() { _ = store.Close() })
	svc, err := messaging.New(store, fakeprovider.New(), &messaging.Options{Clock: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	si.Check = func(_ context.Context, secret string) (*dashboard.Viewer, error) {
		if secret == "right-secret" {
			return &dashboard.Viewer{Name: "operator", Operator: true}, nil
		}
		return nil, nil
	}
	dash, err := dashboard.New(svc, &dashboard.Options{SignIn: si})
	if err != nil {
		t.Fatal(err)
	}
	return dash, clock
}

// postSignIn posts secret to the sign-in form from remote (host:port),
// with X-Forwarded-For xff when not empty, and returns the status.
func postSignIn(h http.Handler, remote, xff, secret string) int {
	req := httptest.NewRequest("POST", "/dashboard/sign-in", strings.NewReader(url.Values{"secret": {secret}}.Encode()))
	req.RemoteAddr = remote
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	if xff != "" {
		req.Header.Set("X-Forwarded-For", xff)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code
}

// TestSignInAttemptsLimitedPerAddress: past its 10 failures a minute an
// address is refused without the secret being checked (even the right
// one), until the minute has refilled its bucket on the service clock;
// another address is not affected.
func TestSignInAttemptsLimitedPerAddress(t *testing.T) {
	h, clock := signInHandler(t, &dashboard.SignIn{})
	for i := range 10 {
		if got := postSignIn(h, "198.51.100.7:4000", "", "guess"); got != http.StatusUnauthorized {
			t.Fatalf("wrong secret #%d: %d; want 401 (checked)", i+1, got)
		}
	}
	if got := postSignIn(h, "198.51.100.7:4001", "", "right-secret"); got != http.StatusTooManyRequests {
		t.Fatalf("11th attempt from the address: %d; want 429, unchecked", got)
	}
	if got := postSignIn(h, "198.51.100.8:4000", "", "right-secret"); got != http.StatusSeeOther {
		t.Fatalf("right secret from another address: %d; want 303", got)
	}
	clock.Advance(6 * time.Second) // one failure's worth of the bucket
	if got := postSignIn(h, "198.51.100.7:4000", "", "right-secret"); got != http.StatusSeeOther {
		t.Fatalf("right secret from the limited address after 6 s: %d; want 303", got)
	}
}

// TestSignInCorrectNeverCounted: correct sign-ins, however many, spend
// nothing: 40 in one minute from one address all pass, and that address
// may still fail 10 times before it is limited.
func TestSignInCorrectNeverCounted(t *testing.T) {
	h, _ := signInHandler(t, &dashboard.SignIn{})
	for i := range 40 {
		if got := postSignIn(h, "198.51.100.7:4000", "", "right-secret"); got != http.StatusSeeOther {
			t.Fatalf("right secret #%d: %d; want 303", i+1, got)
		}
	}
	for i := range 10 {
		if got := postSignIn(h, "198.51.100.7:4000", "", "guess"); got != http.StatusUnauthorized {
			t.Fatalf("wrong secret #%d after the correct ones: %d; want 401", i+1, got)
		}
	}
}

// TestSignInFloodDoesNotLockOutOperator: 100 addresses post 20 wrong
// secrets each in the same minute, spending every per-address and the
// global budget; the operator's sign-in from an address of its own still
// passes, and an address that failed in the flood is refused unchecked
// while the global budget is spent, even with tokens of its own left.
func TestSignInFloodDoesNotLockOutOperator(t *testing.T) {
	h, _ := signInHandler(t, &dashboard.SignIn{})
	checked := 0
	for round := range 20 {
		for a := range 100 {
			switch postSignIn(h, fmt.Sprintf("203.0.113.%d:5%03d", a, round), "", "guess") {
			case http.StatusUnauthorized:
				checked++
			case http.StatusTooManyRequests:
			default:
				t.Fatal("a wrong secret answered neither 401 nor 429")
			}
		}
	}
	if checked != 200 {
		t.Errorf("the flood had %d secrets checked; want 200, the global cap", checked)
	}
	if got := postSignIn(h, "192.0.2.10:443", "", "right-secret"); got != http.StatusSeeOther {
		t.Fatalf("the operator's sign-in during the flood: %d; want 303", got)
	}
	// 203.0.113.99 failed twice (rounds 0 and 1) before the global cap was
	// spent: it has 8 tokens of its own but failed within the minute.
	if got := postSignIn(h, "203.0.113.99:6000", "", "right-secret"); got != http.StatusTooManyRequests {
		t.Errorf("a flooding address with tokens left, global cap spent: %d; want 429", got)
	}
}

// TestSignInBehindTrustedProxy: behind a trusted proxy each client is
// limited under its own X-Forwarded-For address, so one client's guesses
// do not lock out another coming through the same proxy; without
// TrustedProxies the header is ignored, and a client cannot escape its
// limit by writing addresses into it.
func TestSignInBehindTrustedProxy(t *testing.T) {
	h, _ := signInHandler(t, &dashboard.SignIn{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}})
	for i := range 10 {
		// A client's forged left-most entry is ignored: the proxy appended
		// the real peer, 198.51.100.7.
		forged := fmt.Sprintf("192.0.2.%d, 198.51.100.7", i)
		if got := postSignIn(h, "10.1.2.3:80", forged, "guess"); got != http.StatusUnauthorized {
			t.Fatalf("wrong secret #%d: %d; want 401", i+1, got)
		}
	}
	if got := postSignIn(h, "10.1.2.3:80", "192.0.2.200, 198.51.100.7", "guess"); got != http.StatusTooManyRequests {
		t.Fatalf("11th from 198.51.100.7 with a new forged entry: %d; want 429", got)
	}
	if got := postSignIn(h, "10.1.2.3:80", "198.51.100.8", "right-secret"); got != http.StatusSeeOther {
		t.Fatalf("another client through the same proxy: %d; want 303", got)
	}

	plain, _ := signInHandler(t, &dashboard.SignIn{})
	for i := range 10 {
		postSignIn(plain, "198.51.100.7:80", fmt.Sprintf("192.0.2.%d", i), "guess")
	}
	if got := postSignIn(plain, "198.51.100.7:80", "192.0.2.250", "guess"); got != http.StatusTooManyRequests {
		t.Fatalf("untrusted peer varying X-Forwarded-For: %d; want 429 (header ignored)", got)
	}
}

// TestSignInViewerWithSMSAccountsOnly: Check may sign in a viewer who
// sees SMS accounts and no workspace; the session keeps the accounts, so
// the home page leads to them and the viewer opens account 1234 but not
// 5678 nor any workspace.
func TestSignInViewerWithSMSAccountsOnly(t *testing.T) {
	clock := testclock.New(t0)
	store := memstore.New()
	t.Cleanup(func() { _ = store.Close() })
	svc, err := messaging.New(store, fakeprovider.New(), &messaging.Options{Clock: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateWorkspace(context.Background(), &messaging.CreateWorkspaceParams{ID: "acme", Name: "Acme Ltd"}); err != nil {
		t.Fatal(err)
	}
	smsSvc, err := sms.New(store, fakegateway.New(&fakegateway.Options{Clock: clock.Now}), &sms.Options{Clock: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"1234", "5678"} {
		if _, _, err := smsSvc.CreateAccount(context.Background(), &sms.CreateAccountParams{PartnerID: id}); err != nil {
			t.Fatal(err)
		}
	}
	dash, err := dashboard.New(svc, &dashboard.Options{SMS: smsSvc, SignIn: &dashboard.SignIn{
		Check: func(_ context.Context, secret string) (*dashboard.Viewer, error) {
			if secret == "clerk-secret" {
				return &dashboard.Viewer{Name: "clerk", SMSAccounts: []string{"1234"}}, nil
			}
			return nil, nil
		}}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(dash)
	t.Cleanup(srv.Close)

	res := browserLike(t, srv, "POST", "/dashboard/sign-in", url.Values{"secret": {"clerk-secret"}})
	c := sessionOf(res)
	if res.StatusCode != http.StatusSeeOther || c == nil {
		t.Fatalf("sign-in of a viewer with SMS accounts only: %d, cookie %v; want 303 and a session", res.StatusCode, c)
	}
	if res := browserLike(t, srv, "GET", "/dashboard/", nil, c); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/dashboard/sms" {
		t.Errorf("home: %d to %q; want 303 to /dashboard/sms", res.StatusCode, res.Header.Get("Location"))
	}
	for path, want := range map[string]int{
		"/dashboard/sms":             http.StatusOK,
		"/dashboard/sms/1234":        http.StatusOK,
		"/dashboard/sms/5678":        http.StatusNotFound,
		"/dashboard/w/acme/overview": http.StatusNotFound,
		"/dashboard/workspaces":      http.StatusOK,
	} {
		if res := browserLike(t, srv, "GET", path, nil, c); res.StatusCode != want {
			t.Errorf("GET %s in the session: %d; want %d", path, res.StatusCode, want)
		}
	}
}

// boundFixture serves a dashboard whose sessions are bound to the secret
// that opened them: "secret-1" or, later, its replacement, in *current
// (signing in the operator), and "viewer-secret" (signing in a viewer of
// acme). Each secret's binding is "b:" and the secret, for the test only.
func boundFixture(t *testing.T, current *string) *httptest.Server {
	t.Helper()
	svc, err := messaging.New(memstore.New(), fakeprovider.New(), &messaging.Options{Clock: testclock.New(t0).Now})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateWorkspace(context.Background(), &messaging.CreateWorkspaceParams{ID: "acme", Name: "Acme Ltd"}); err != nil {
		t.Fatal(err)
	}
	dash, err := dashboard.New(svc, &dashboard.Options{SignIn: &dashboard.SignIn{
		Check: func(_ context.Context, secret string) (*dashboard.Viewer, error) {
			switch secret {
			case *current:
				return &dashboard.Viewer{Name: "operator", Operator: true, SessionBinding: "b:" + secret}, nil
			case "viewer-secret":
				return &dashboard.Viewer{Name: "ann", Workspaces: []string{"acme"}, SessionBinding: "b:" + secret}, nil
			case "unlisted-secret":
				// An embedder's mistake: a binding Bindings does not list.
				return &dashboard.Viewer{Name: "bob", Workspaces: []string{"acme"}, SessionBinding: "b:" + secret}, nil
			}
			return nil, nil
		},
		Bindings: func() []string { return []string{"b:" + *current, "b:viewer-secret"} },
	}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(dash)
	t.Cleanup(srv.Close)
	return srv
}

func signInAs(t *testing.T, srv *httptest.Server, secret string) *http.Cookie {
	t.Helper()
	c := sessionOf(browserLike(t, srv, "POST", "/dashboard/sign-in", url.Values{"secret": {secret}}))
	if c == nil {
		t.Fatalf("signing in with %q gave no session", secret)
	}
	return c
}

// TestSessionEndsWhenSecretReplaced: a session opened with the operator
// secret stops working once that secret is replaced, and does not come
// back if the old secret is restored (it was deleted); a session opened
// with another secret that still signs in keeps working.
func TestSessionEndsWhenSecretReplaced(t *testing.T) {
	current := "secret-1"
	srv := boundFixture(t, &current)
	op, viewer := signInAs(t, srv, "secret-1"), signInAs(t, srv, "viewer-secret")
	if res := browserLike(t, srv, "GET", "/dashboard/w/acme/overview", nil, op); res.StatusCode != http.StatusOK {
		t.Fatalf("overview with the session: %d; want 200", res.StatusCode)
	}
	current = "secret-2"
	if res := browserLike(t, srv, "GET", "/dashboard/w/acme/overview", nil, op); res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "/dashboard/sign-in?") {
		t.Fatalf("after the secret was replaced: %d to %q; want 303 to the sign-in form", res.StatusCode, res.Header.Get("Location"))
	}
	current = "secret-1"
	if res := browserLike(t, srv, "GET", "/dashboard/w/acme/overview", nil, op); res.StatusCode != http.StatusSeeOther {
		t.Errorf("old secret restored: %d; want 303 (the session was deleted)", res.StatusCode)
	}
	if res := browserLike(t, srv, "GET", "/dashboard/w/acme/overview", nil, viewer); res.StatusCode != http.StatusOK {
		t.Errorf("a session of a secret still in use: %d; want 200", res.StatusCode)
	}
}

// TestSignOutEverywhere: the operator's button ends every session, its
// own too; a viewer who is not an operator cannot, and neither can a form
// posted from another site.
func TestSignOutEverywhere(t *testing.T) {
	current := "secret-1"
	srv := boundFixture(t, &current)
	op, op2, viewer := signInAs(t, srv, "secret-1"), signInAs(t, srv, "secret-1"), signInAs(t, srv, "viewer-secret")

	req, _ := http.NewRequest("GET", srv.URL+"/dashboard/workspaces", nil)
	req.AddCookie(op)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(body), `action="/dashboard/sign-out-everywhere"`) {
		t.Error("the operator's page has no Sign out everywhere form")
	}

	if res := browserLike(t, srv, "POST", "/dashboard/sign-out-everywhere", url.Values{}, viewer); res.StatusCode != http.StatusForbidden {
		t.Errorf("a viewer who is not an operator: %d; want 403", res.StatusCode)
	}
	cross, _ := http.NewRequest("POST", srv.URL+"/dashboard/sign-out-everywhere", strings.NewReader(""))
	cross.Header.Set("Sec-Fetch-Site", "cross-site")
	cross.AddCookie(op)
	if res, err := http.DefaultClient.Do(cross); err != nil || res.StatusCode != http.StatusForbidden {
		t.Errorf("posted from another site: %v, %v; want 403", res.StatusCode, err)
	}
	for _, c := range []*http.Cookie{op, op2, viewer} {
		if res := browserLike(t, srv, "GET", "/dashboard/w/acme/overview", nil, c); res.StatusCode != http.StatusOK {
			t.Fatalf("before signing out everywhere: %d; want 200", res.StatusCode)
		}
	}

	res = browserLike(t, srv, "POST", "/dashboard/sign-out-everywhere", url.Values{}, op)
	if cleared := sessionOf(res); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/dashboard/sign-in" || cleared == nil || cleared.MaxAge >= 0 {
		t.Fatalf("sign out everywhere: %d to %q, cookie %+v; want 303 to sign in and the cookie cleared", res.StatusCode, res.Header.Get("Location"), cleared)
	}
	for i, c := range []*http.Cookie{op, op2, viewer} {
		if res := browserLike(t, srv, "GET", "/dashboard/w/acme/overview", nil, c); res.StatusCode != http.StatusSeeOther {
			t.Errorf("session %d after signing out everywhere: %d; want 303 to sign in", i, res.StatusCode)
		}
	}
}

// TestSignInRefusesAnUnlistedBinding: a viewer whose session binding is not
// among SignIn.Bindings (the embedder's mistake) gets no session, which
// would be refused at once (a silent sign-in loop), but a 500 saying the
// sign-in is misconfigured.
func TestSignInRefusesAnUnlistedBinding(t *testing.T) {
	current := "secret-1"
	srv := boundFixture(t, &current)
	res := browserLike(t, srv, "POST", "/dashboard/sign-in", url.Values{"secret": {"unlisted-secret"}})
	if res.StatusCode != http.StatusInternalServerError || sessionOf(res) != nil {
		t.Errorf("sign-in with an unlisted binding: %d, session %v; want 500 and none", res.StatusCode, sessionOf(res))
	}
}
