package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/store/memstore"
)

// TestOperatorSignIn: the operator token and the dashboard password sign
// in the operator; anything else, including a password near the right
// one, is refused; a short password is refused at start.
func TestOperatorSignIn(t *testing.T) {
	s, err := testSignIn("op_token-123", "correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, secret := range []string{"op_token-123", "correct horse battery"} {
		if v, err := s.check(ctx, secret); err != nil || v == nil || !v.Operator {
			t.Errorf("check(%q) = %+v, %v; want the operator", secret, v, err)
		}
	}
	for _, secret := range []string{"", "op_token-12", "op_token-1234", "correct horse batter", "Correct horse battery", strings.Repeat("x", 100)} {
		if v, err := s.check(ctx, secret); err != nil || v != nil {
			t.Errorf("check(%q) = %+v, %v; want refused", secret, v, err)
		}
	}
	if string(s.password) == "correct horse battery" || !strings.HasPrefix(string(s.password), "$2") {
		t.Errorf("the password is kept as %q; want a bcrypt hash", s.password)
	}
	noPassword, err := testSignIn("op_token-123", "")
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := noPassword.check(ctx, ""); v != nil {
		t.Error("an empty secret signed in when no password is set")
	}
	for _, bad := range []string{"short", strings.Repeat("y", 73)} {
		if _, err := testSignIn("op_token-123", bad); err == nil {
			t.Errorf("password of %d characters accepted", len(bad))
		}
	}
}

// TestParseTrustedProxies: -trusted-proxies takes prefixes and single
// addresses, comma-separated, and names what it refuses.
func TestParseTrustedProxies(t *testing.T) {
	got, err := parseTrustedProxies(" 10.0.0.0/8, 192.0.2.7 ,fd00::/8,")
	if err != nil {
		t.Fatal(err)
	}
	want := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.0.2.7/32"), netip.MustParsePrefix("fd00::/8")}
	if !slices.Equal(got, want) {
		t.Errorf("parseTrustedProxies = %v; want %v", got, want)
	}
	if got, err := parseTrustedProxies(""); err != nil || len(got) != 0 {
		t.Errorf("empty: %v, %v; want none", got, err)
	}
	if _, err := parseTrustedProxies("10.0.0.0/8,proxy.internal"); err == nil || !strings.Contains(err.Error(), "proxy.internal") {
		t.Errorf("a host name: %v; want an error naming it", err)
	}
}

// testKey is a secret key for the tests of sign-in bindings.
var testKey = bytes.Repeat([]byte{7}, 32)

// TestDashboardSessionEndsWithReplacedToken: a dashboard session opened
// with operator token T1 stops working once the server restarts with T2
// (another handler on the same store); one opened with the password
// survives a restart with the same password and the same key. The
// bindings name the secrets without holding them.
func TestDashboardSessionEndsWithReplacedToken(t *testing.T) {
	svc, err := messaging.New(memstore.New(), fakeprovider.New(), nil)
	if err != nil {
		t.Fatal(err)
	}
	const t1, t2, pw = "op_first-token-0123456789", "op_second-token-0123456789", "correct horse battery"
	serve := func(token string) http.Handler {
		signIn, err := testSignIn(token, pw)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range signIn.bindings() {
			if strings.Contains(b, token) || strings.Contains(b, pw) {
				t.Fatalf("binding %q holds a secret", b)
			}
		}
		h, err := withDashboard(http.NotFoundHandler(), svc, nil, signIn, nil, false, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	do := func(h http.Handler, method, path, secret string, c *http.Cookie) *httptest.ResponseRecorder {
		var body io.Reader
		if secret != "" {
			body = strings.NewReader(url.Values{"secret": {secret}}.Encode())
		}
		req := httptest.NewRequest(method, path, body)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		if c != nil {
			req.AddCookie(c)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	signIn := func(h http.Handler, secret string) *http.Cookie {
		for _, c := range do(h, "POST", "/dashboard/sign-in", secret, nil).Result().Cookies() {
			if c.Name == "dashboard_session" {
				return c
			}
		}
		t.Fatalf("signing in with %q gave no session", secret)
		return nil
	}
	first := serve(t1)
	byToken, byPassword := signIn(first, t1), signIn(first, pw)
	for _, c := range []*http.Cookie{byToken, byPassword} {
		if got := do(first, "GET", "/dashboard/workspaces", "", c).Code; got != http.StatusOK {
			t.Fatalf("workspaces with a fresh session: %d; want 200", got)
		}
	}
	restarted := serve(t2)
	if got := do(restarted, "GET", "/dashboard/workspaces", "", byToken); got.Code != http.StatusSeeOther {
		t.Errorf("the T1 session after a restart with T2: %d; want 303 to sign in", got.Code)
	}
	if got := do(restarted, "GET", "/dashboard/workspaces", "", byPassword).Code; got != http.StatusOK {
		t.Errorf("the password session after a restart with the same password: %d; want 200", got)
	}
}

// testSignIn is newOperatorSignIn with its bindings keyed by testKey.
func testSignIn(token, password string) (*operatorSignIn, error) {
	s, err := newOperatorSignIn(token, password)
	if err == nil {
		s.setToken(token, testKey)
	}
	return s, err
}
