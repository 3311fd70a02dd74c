package dashboard_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/dashboard"
	"github.com/ujumbe/messaging/internal/testclock"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/store/memstore"
)

// TestSecureCookies: with Options.SecureCookies every cookie the
// dashboard sets (the session at sign-in and its removal at sign-out, the
// notice) is Secure, also over plain HTTP (a proxy ending TLS); without
// it, none is over plain HTTP.
func TestSecureCookies(t *testing.T) {
	for _, secure := range []bool{false, true} {
		store := memstore.New()
		t.Cleanup(func() { _ = store.Close() })
		svc, err := messaging.New(store, fakeprovider.New(), &messaging.Options{Clock: testclock.New(t0).Now})
		if err != nil {
			t.Fatal(err)
		}
		dash, err := dashboard.New(svc, &dashboard.Options{SecureCookies: secure, SignIn: &dashboard.SignIn{
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
		post := func(path string, form url.Values, cookies ...*http.Cookie) []*http.Cookie {
			req, _ := http.NewRequest("POST", srv.URL+path, strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Sec-Fetch-Site", "same-origin")
			for _, c := range cookies {
				req.AddCookie(c)
			}
			res, err := http.DefaultTransport.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusSeeOther {
				t.Fatalf("POST %s: %d; want 303", path, res.StatusCode)
			}
			return res.Cookies()
		}
		signedIn := post("/dashboard/sign-in", url.Values{"secret": {"right-secret"}})
		signedOut := post("/dashboard/sign-out", url.Values{}, signedIn...)
		again := post("/dashboard/sign-in", url.Values{"secret": {"right-secret"}})
		everywhere := post("/dashboard/sign-out-everywhere", url.Values{}, again...)
		if len(everywhere) == 0 {
			t.Fatal("sign out everywhere set no cookie")
		}
		names := map[string]bool{}
		for _, c := range slices.Concat(signedIn, signedOut, again, everywhere) {
			names[c.Name] = true
			if c.Secure != secure {
				t.Errorf("SecureCookies %v: cookie %s is Secure %v over plain HTTP", secure, c.Name, c.Secure)
			}
		}
		if !names["dashboard_session"] || !names["dashboard_notice"] {
			t.Errorf("cookies set: %v; want the session and the notice", names)
		}
		srv.Close()
	}
}
