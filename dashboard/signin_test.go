package dashboard_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/dashboard"
	"github.com/ujumbe/messaging/internal/testclock"
	"github.com/ujumbe/messaging/provider/fakeprovider"
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
	if res := browserLike(t, srv, "GET", "/dashboard/w/acme/overview", nil); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/dashboard/sign-in" {
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

// TestSignInAttemptsLimited: guessing is slowed down: past the burst,
// attempts are refused without checking the secret.
func TestSignInAttemptsLimited(t *testing.T) {
	srv, _ := signInFixture(t)
	limited := false
	for range 25 {
		if res := browserLike(t, srv, "POST", "/dashboard/sign-in", url.Values{"secret": {"guess"}}); res.StatusCode == http.StatusTooManyRequests {
			limited = true
			break
		}
	}
	if !limited {
		t.Error("25 wrong sign-ins in a row were all checked; want 429 past the burst of 20")
	}
}
