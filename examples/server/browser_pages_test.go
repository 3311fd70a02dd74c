package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ujumbe/messaging/record"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/ujumbe/messaging/webhooksig"
)

// The dashboard's workflows in a real browser, against the server's own
// handler: what the "Tests in a real browser" lists.

// demoWS is the workspace the server creates on an empty database.
const demoWS = "demo"

// key creates an API key of the demo workspace through the operator API.
func (s *dashServer) key(t *testing.T, scopes ...string) string {
	t.Helper()
	st, body := s.api(t, "POST", "/admin/v1/workspaces/"+demoWS+"/api-keys", "", map[string]any{"name": "browser test", "scopes": scopes})
	k := field(body, "key")
	if st != http.StatusCreated || k == "" {
		t.Fatalf("creating an API key: %d %v", st, body)
	}
	return k
}

// sendText sends a text message with key and answers the status.
func (s *dashServer) sendText(t *testing.T, key, to, text string) (int, any) {
	t.Helper()
	return s.api(t, "POST", "/v1/messages", key, map[string]any{"channel": "whatsapp", "to": to, "type": "text", "text": text})
}

// waitStatus waits (up to browserTimeout) until GET /v1/messages/{id}
// answers status.
func (s *dashServer) waitStatus(t *testing.T, key, id, status string) {
	t.Helper()
	deadline := time.Now().Add(browserTimeout)
	for {
		st, body := s.api(t, "GET", "/v1/messages/"+id, key, nil)
		if st == http.StatusOK && field(body, "status") == status {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("message %s: %d %v; still not %s after %v", id, st, body, status, browserTimeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestBrowserAPIKey: an API key created in Settings -> Developers is shown
// once, works against /v1 (201), is not in the page once it is reloaded,
// is refused a scope it lost in its own page (403), and once revoked in
// the page (after its confirmation) is refused (401).
func TestBrowserAPIKey(t *testing.T) {
	srv := startDashServer(t)
	b := newBrowser(t, srv)
	b.signIn()
	b.open("/dashboard/w/" + demoWS + "/developers")
	b.waitText("Create an API key")
	b.fill("Name", "browser test key")
	b.check("write:messages", true)
	b.submit("Create API key")
	created := srv.base + "/dashboard/w/" + demoWS + "/developers/keys"
	if st := b.status(created); st != http.StatusOK && st != http.StatusCreated {
		t.Errorf("the answer to the form: %d, want 200 or 201", st)
	}
	key := strings.TrimSpace(result(b, "read the new key", chromedp.Text(chromedp.ID("new-secret"))))
	if !regexp.MustCompile(`^mk_[A-Za-z0-9_-]{20,}$`).MatchString(key) {
		t.Fatalf("the page shows %q as the new key, want an mk_ key", key)
	}

	if st, body := srv.sendText(t, key, "+14155550123", "Hello from the browser test"); st != http.StatusCreated {
		t.Fatalf("POST /v1/messages with the key from the page: %d %v, want 201", st, body)
	}

	// A later page never holds the key: neither a reload nor the list.
	b.open("/dashboard/w/" + demoWS + "/developers")
	b.waitText("browser test key")
	if h := b.html(); strings.Contains(h, key) {
		t.Fatal("the developers page holds the key after it was created")
	}

	// Edited in its own page: once it has lost write:messages, its next
	// send is refused (403).
	b.submit("Edit browser test key")
	b.waitText("Change its scopes and expiry")
	b.check("write:messages", false)
	b.check("read:messages", true)
	b.screenshot("dashboard-apikey", false)
	b.submit("Save changes")
	b.waitText("browser test key changed")
	if st, body := srv.sendText(t, key, "+14155550123", "after the edit"); st != http.StatusForbidden {
		t.Fatalf("POST /v1/messages with the key without write:messages: %d %v, want 403", st, body)
	}

	b.submit("Revoke browser test key")
	b.waitFor("the key revoked", `[...document.querySelectorAll("tr")].some((tr) => tr.textContent.includes("browser test key") && tr.textContent.includes("revoked"))`)
	if d := b.dialogMessages(); len(d) != 1 || !strings.Contains(d[0], "Revoke the API key browser test key?") {
		t.Errorf("confirmations asked: %q, want one asking to revoke the key", d)
	}
	if h := b.html(); strings.Contains(h, key) {
		t.Fatal("the page after the revocation holds the key")
	}
	if st, body := srv.sendText(t, key, "+14155550123", "after the revocation"); st != http.StatusUnauthorized {
		t.Fatalf("POST /v1/messages with the revoked key: %d %v, want 401", st, body)
	}
}

// TestBrowserTemplate: a template authored in Settings -> Templates is
// checked as it is typed (the error shows next to the field before any
// save), saved as a draft, submitted, approved by the fake provider while
// the page is open, listed by GET /v1/templates, and "Send a test" sends
// a message whose page reaches read while it is open.
func TestBrowserTemplate(t *testing.T) {
	srv := startDashServer(t)
	key := srv.key(t, "read:templates", "read:messages")
	b := newBrowser(t, srv)
	b.signIn()
	b.open("/dashboard/w/" + demoWS + "/templates/new")
	b.waitText("Preview")

	// Checked as you type: a name the rules refuse shows its error.
	b.fill("f-name", "Table Booking")
	b.waitFor("the name's error shown while typing", `(() => { const e = document.getElementById("err-name"); return e && !e.hidden && e.textContent.trim() !== ""; })()`)
	nameErr := result(b, "read the name's error", chromedp.Text(chromedp.ID("err-name")))
	b.fill("f-name", "table_booking")
	b.waitFor("the name's error gone", `document.getElementById("err-name").hidden`)
	b.fill("f-body", "Hi {{1}}, your table for {{2}} is booked.")
	b.choose("Header type", "TEXT")
	b.fill("Header text", "Your table")
	b.fill("f-footer", "Reply STOP to opt out")
	// Button rows as needed, added and removed in place (no page load):
	// none at first, then one per "Add a button".
	b.do("mark the page", chromedp.Evaluate[chromedp.Void](`window.__form = true`))
	if n := result(b, "count the button rows", chromedp.Evaluate[int](`document.querySelectorAll("#button-rows .button-row").length`)); n != 0 {
		t.Errorf("the new form shows %d button rows; want none", n)
	}
	b.click("Add a button")
	b.choose("Button 1 type", "QUICK_REPLY")
	b.fill("Button 1 text", "Wrong button")
	b.click("Add another button")
	b.choose("Button 2 type", "QUICK_REPLY")
	b.fill("Button 2 text", "Change booking")
	b.click("Remove") // button 1's
	b.waitFor("one button row left, numbered 1, keeping its text", `(() => {
	  const rows = document.querySelectorAll("#button-rows .button-row");
	  const t = document.getElementById("f-button_text_1");
	  return rows.length === 1 && t && t.value === "Change booking" && !document.getElementById("f-button_text_2");
	})()`)
	// A URL button shows its URL input; a quick reply does not.
	b.click("Add another button")
	b.choose("Button 2 type", "URL")
	b.waitFor("the URL input of a URL button, none for a quick reply", `(() => {
	  const vis = (id) => { const el = document.getElementById(id); return !!el && el.offsetParent !== null; };
	  return vis("f-button_value_2") && !vis("f-button_value_1") && document.querySelector("label[for='f-button_value_2']").textContent.trim() === "Button 2 URL";
	})()`)
	b.clickIn(`//div[@data-row="2"]`, "Remove")
	b.waitFor("the URL button removed", `document.querySelectorAll("#button-rows .button-row").length === 1`)
	if !result(b, "the page not reloaded", chromedp.Evaluate[bool](`window.__form === true`)) {
		t.Error("adding or removing a button reloaded the page")
	}
	b.fill("Example of {{1}}", "Amina")
	b.fill("Example of {{2}}", "four")
	b.waitFor("the preview with the examples", `(() => { const p = document.getElementById("tpl-preview"); return p && ["Your table", "Amina", "four", "Reply STOP", "Change booking"].every((s) => p.innerText.includes(s)) && !p.innerText.includes("Wrong button"); })()`)
	b.screenshot("dashboard-template-editor", false)
	if nameErr == "" {
		t.Error("the name's error is empty")
	}

	b.submit("Save draft")
	b.waitText("table_booking", "draft")
	b.submit("Submit for review")
	// The fake provider approves after -fake-review-after (1 s); the page
	// refreshes its state while it is open.
	b.waitFor("the template approved", `(() => { const s = document.getElementById("tpl-state"); return s && s.querySelector(".badge.st-approved"); })()`)

	st, body := srv.api(t, "GET", "/v1/templates?status=approved", key, nil)
	if st != http.StatusOK || !templateListed(body, "table_booking", "approved") {
		t.Fatalf("GET /v1/templates: %d %v; want table_booking approved", st, body)
	}

	// The form sending a test appears once the template is approved: the
	// page reloads itself, the visitor does nothing.
	b.waitText("Send a test")
	b.fill("Recipient", "+14155550123")
	b.submit("Send test message")
	if !strings.Contains(b.location(), "/messages/") {
		t.Fatalf("after sending a test the page is %s, want the message's page", b.location())
	}
	id := b.location()[strings.LastIndex(b.location(), "/")+1:]
	b.waitFor("the message read", `!!document.querySelector("#timeline .badge.st-read")`)
	// The status in the details follows the timeline.
	b.waitFor("the status in the details read", `!!document.querySelector("#msg-status .badge.st-read")`)
	b.screenshot("dashboard-message", false)
	st, body = srv.api(t, "GET", "/v1/messages/"+id, key, nil)
	if st != http.StatusOK || field(body, "status") != "read" || field(body, "type") != "template" {
		t.Errorf("GET /v1/messages/%s: %d %v; want the template message, read", id, st, body)
	}
}

// templateListed reports whether a GET /v1/templates answer (a list)
// holds the template name in status.
func templateListed(body any, name, status string) bool {
	list, _ := body.([]any)
	for _, tpl := range list {
		if field(tpl, "name") == name && field(tpl, "status") == status {
			return true
		}
	}
	return false
}

// TestBrowserContacts: a contact created through the API and one created
// in the page are both found by a search on a name prefix, and only the
// ones that match.
func TestBrowserContacts(t *testing.T) {
	srv := startDashServer(t)
	key := srv.key(t, "read:contacts", "write:contacts")
	if st, body := srv.api(t, "POST", "/v1/contacts", key, map[string]any{"firstName": "Wanjiru", "lastName": "Kamau", "phone": "+254712345678"}); st != http.StatusCreated {
		t.Fatalf("POST /v1/contacts: %d %v", st, body)
	}
	b := newBrowser(t, srv)
	b.signIn()
	b.open("/dashboard/w/" + demoWS + "/contacts")
	b.waitText("Wanjiru")
	b.submit("New contact")
	b.fill("First name", "Otieno")
	b.fill("Last name", "Wanyama")
	b.fill("Phone", "+254733000111")
	b.submit("Create contact")
	b.waitText("Otieno")

	b.open("/dashboard/w/" + demoWS + "/contacts")
	b.fill("Search", "wanj")
	b.submit("Search")
	b.waitText("Wanjiru")
	if txt := b.text(); strings.Contains(txt, "Otieno") {
		t.Errorf("searching wanj lists Otieno Wanyama (who shares only \"wan\"):\n%s", txt)
	}
	b.fill("Search", "Oti")
	b.submit("Search")
	b.waitText("Otieno")
	if txt := b.text(); strings.Contains(txt, "Wanjiru") {
		t.Errorf("searching Oti lists Wanjiru:\n%s", txt)
	}
	b.fill("Search", "Zzyzx")
	b.submit("Search")
	b.waitText("No contact matches")
}

// TestBrowserCrossOrigin: a page of another origin whose form posts to the
// dashboard by itself, while the viewer is signed in, gets 403 and changes
// nothing: from another port of the same host (same site, so the session
// cookie goes along) and from another host name (another site). The same
// form sent from the dashboard's own page works.
func TestBrowserCrossOrigin(t *testing.T) {
	srv := startDashServer(t)
	b := newBrowser(t, srv)
	b.tolerateProblems = true // the refusals' 403
	b.signIn()
	target := srv.base + "/dashboard/workspaces"
	for _, tc := range []struct{ name, host, id string }{
		{"same site, another port", "127.0.0.1", "evil-port"},
		{"another site", "localhost", "evil-site"},
	} {
		{
			evil := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				fmt.Fprintf(w, `<!doctype html><title>Win a prize</title>
<form method="post" action="%s"><input name="name" value="Evil"><input name="id" value="%s"></form>
<script>document.forms[0].submit()</script>`, target, tc.id)
			}))
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			evil.Listener = l
			evil.Start()
			defer evil.Close()
			_, port, _ := net.SplitHostPort(l.Addr().String())
			b.resetStatuses()
			b.do("open the other origin's page", chromedp.Navigate("http://"+net.JoinHostPort(tc.host, port)+"/"))
			b.waitFor("the dashboard's answer to the form", `location.href.startsWith(`+js(srv.base+"/dashboard/")+`)`)
			if st, body := srv.api(t, "GET", "/admin/v1/workspaces/"+tc.id, "", nil); st != http.StatusNotFound {
				t.Errorf("%s: GET /admin/v1/workspaces/%s after the cross-origin form: %d %v, want 404", tc.name, tc.id, st, body)
			}
			if got := b.location(); got != target {
				t.Fatalf("%s: the cross-origin form led to %s, want the refusal at %s", tc.name, got, target)
			}
			if st := b.status(target); st != http.StatusForbidden {
				t.Errorf("%s: the cross-origin form got %d, want 403", tc.name, st)
			}
			b.waitText("sent from another site")
		}
	}

	// The same form from the dashboard itself creates the workspace: the
	// refusals above are for the origin, not the form.
	b.open("/dashboard/workspaces")
	b.fill("Name", "Own form")
	b.fill("ID", "own-form")
	b.submit("Create workspace")
	if st, body := srv.api(t, "GET", "/admin/v1/workspaces/own-form", "", nil); st != http.StatusOK {
		t.Errorf("GET /admin/v1/workspaces/own-form after the dashboard's own form: %d %v, want 200", st, body)
	}
}

// TestBrowserPages: each main page of the dashboard opens (200) with its
// heading and without a page error (an uncaught exception, a script or
// style refused by the Content-Security-Policy, a file that failed to
// load), on a workspace with some traffic. With MESSAGING_SCREENSHOTS set
// it saves the README's pictures of them.
func TestBrowserPages(t *testing.T) {
	srv := startDashServer(t)
	key := srv.key(t, record.AllScopes()...)
	// Traffic: messages on each channel, some failing (the fake provider
	// fails numbers ending in 0000), template messages, contacts and an
	// SMS account with a message.
	var failing string
	for i, to := range []string{"+254712000101", "+254712000102", "+254712000103", "+254712000104", "+254712340000", "+14155550123"} {
		st, body := srv.sendText(t, key, to, fmt.Sprintf("Your order A-%d is on its way", 1000+i))
		if st != http.StatusCreated {
			t.Fatalf("POST /v1/messages: %d %v", st, body)
		}
		if strings.HasSuffix(to, "0000") {
			failing = field(body, "message_id")
		}
	}
	for _, m := range []map[string]any{
		{"channel": "instagram", "to": "ig_4242", "type": "text", "text": "Thanks for the follow!"},
		{"channel": "messenger", "to": "psid_777", "type": "text", "text": "Your table is ready"},
	} {
		if st, body := srv.api(t, "POST", "/v1/messages", key, m); st != http.StatusCreated {
			t.Fatalf("POST /v1/messages: %d %v", st, body)
		}
	}
	for _, to := range []string{"+254722000201", "+254722000202"} {
		st, body := srv.api(t, "POST", "/v1/messages/templates", key, map[string]any{"to": to, "template_name": "order_shipped", "language": "en",
			"components": []any{
				map[string]any{"type": "body", "parameters": []any{map[string]any{"type": "text", "text": "Amina"}, map[string]any{"type": "text", "text": "A-77"}}},
				map[string]any{"type": "button", "sub_type": "url", "index": 0, "parameters": []any{map[string]any{"type": "text", "text": "A-77"}}},
			}})
		if st != http.StatusCreated {
			t.Fatalf("POST /v1/messages/templates: %d %v", st, body)
		}
	}
	for _, c := range []map[string]any{
		{"firstName": "Amina", "lastName": "Odhiambo", "phone": "+254712000101", "email": "amina@example.com", "company": "Duka Ltd", "lifecycle": "customer", "tags": []string{"vip"}},
		{"firstName": "Baraka", "lastName": "Mwangi", "phone": "+254712000102", "company": "Safari Tours", "lifecycle": "lead"},
		{"firstName": "Chebet", "lastName": "Kiprono", "phone": "+254712000103", "email": "chebet@example.com"},
	} {
		if st, body := srv.api(t, "POST", "/v1/contacts", key, c); st != http.StatusCreated {
			t.Fatalf("POST /v1/contacts: %d %v", st, body)
		}
	}
	if st, body := srv.api(t, "POST", "/admin/v1/sms/accounts", "", map[string]any{"partnerID": "1001", "apikey": "sms_browser_0123456789abcdef0123456789", "shortcodes": []string{"UJUMBE"}, "credit": 500, "cost_per_segment": 1}); st != http.StatusCreated {
		t.Fatalf("POST /admin/v1/sms/accounts: %d %v", st, body)
	}
	if st, body := srv.api(t, "POST", "/sms/v1/messages", "", map[string]any{"apikey": "sms_browser_0123456789abcdef0123456789", "partnerID": "1001", "mobile": "254712000101", "message": "Your code is 4821", "shortcode": "UJUMBE"}); st != http.StatusOK {
		t.Fatalf("POST /sms/v1/messages: %d %v", st, body)
	}

	// The pages show the failure once the fake provider has reported it.
	srv.waitStatus(t, key, failing, "failed")

	b := newBrowser(t, srv)
	b.signIn()
	ws := "/dashboard/w/" + demoWS
	for _, pg := range []struct {
		path, heading, shot string
		full                bool
	}{
		{ws + "/overview", "Overview", "dashboard-overview", false},
		{ws + "/messages", "Messages", "dashboard-messages", false},
		{ws + "/contacts", "Contacts", "dashboard-contacts", false},
		{ws + "/templates", "Templates", "dashboard-templates", false},
		{ws + "/developers", "Developers", "dashboard-developers", true},
		{ws + "/channels", "Channels", "dashboard-channels", false},
		{ws + "/settings", "Workspace settings", "dashboard-settings", false},
		{"/dashboard/sms", "SMS", "dashboard-sms", false},
		{"/dashboard/workspaces", "Workspaces", "", false},
	} {
		b.takeProblems()
		b.resetStatuses()
		b.open(pg.path)
		if st := b.status(srv.base + pg.path); st != http.StatusOK {
			t.Errorf("GET %s: %d, want 200", pg.path, st)
		}
		h1 := result(b, "read the heading of "+pg.path, chromedp.Evaluate[string](`(document.querySelector("main h1") || {innerText: ""}).innerText`))
		if !strings.Contains(h1, pg.heading) {
			t.Errorf("GET %s: the heading is %q, want %q", pg.path, h1, pg.heading)
		}
		if p := b.takeProblems(); len(p) > 0 {
			t.Errorf("GET %s: page errors:\n%s", pg.path, strings.Join(p, "\n"))
		}
		if pg.shot != "" {
			b.screenshot(pg.shot, pg.full)
		}
	}

	// On a phone (390 px wide), every page fits the screen's width (wide
	// tables scroll inside themselves, never the page) and the header
	// leaves the page room.
	b.do("a phone's viewport", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(1)))
	for _, pg := range []struct{ path, shot string }{
		{ws + "/overview", "dashboard-overview-390"}, {ws + "/messages", "dashboard-messages-390"}, {ws + "/contacts", ""},
		{ws + "/templates", ""}, {ws + "/developers", "dashboard-developers-390"}, {ws + "/channels", ""}, {ws + "/settings", ""},
		{"/dashboard/sms", ""}, {"/dashboard/workspaces", ""},
	} {
		b.open(pg.path)
		got := result(b, "measure "+pg.path, chromedp.Evaluate[[]float64](`[document.documentElement.scrollWidth, window.innerWidth, document.querySelector("header.top").getBoundingClientRect().height]`))
		if got[0] > got[1] {
			t.Errorf("GET %s at 390 px: the page is %v px wide, wider than the screen", pg.path, got[0])
		}
		if got[2] > 120 {
			t.Errorf("GET %s at 390 px: the header is %v px tall", pg.path, got[2])
		}
		if pg.shot != "" {
			b.screenshot(pg.shot, false)
		}
	}
}

// TestBrowserSignIn: the dashboard sends a visitor who is not signed in to
// its sign-in form; a wrong secret is refused there (401, the error next
// to the field, no session); the operator token and the -dashboard-password
// each sign in with a session cookie (HttpOnly, SameSite=Lax, not Secure on
// plain HTTP, not readable by scripts, holding neither secret); Sign out
// ends the session on the server, so the old cookie no longer opens a page.
// Sign-in returns to the page the visitor asked for.
func TestBrowserSignIn(t *testing.T) {
	const password = "correct horse battery staple"
	srv := startDashServer(t, "-dashboard-password", password)
	b := newBrowser(t, srv)
	b.tolerateProblems = true // the wrong secret's 401
	overview := "/dashboard/w/" + demoWS + "/overview"
	signInURL := srv.base + "/dashboard/sign-in"

	b.open(overview)
	if got, want := b.location(), signInURL+"?next="+url.QueryEscape(overview); got != want {
		t.Fatalf("a visitor who is not signed in is at %s, want %s", got, want)
	}
	b.screenshot("dashboard-sign-in", false)

	b.resetStatuses()
	b.fill("Operator token or password", srv.token+"x")
	b.submit("Sign in")
	if st := b.status(signInURL); st != http.StatusUnauthorized {
		t.Errorf("a wrong secret: %d, want 401", st)
	}
	b.waitText("That is not the operator token or the dashboard password.")
	if d := result(b, "read aria-describedby", chromedp.Evaluate[string](`document.getElementById("secret").getAttribute("aria-describedby") || ""`)); d != "secret-error" {
		t.Errorf("the secret's field is described by %q, want its error secret-error", d)
	}
	if c := b.cookies(signInURL); len(c) != 0 {
		t.Errorf("a wrong secret set cookies: %v", c)
	}
	if strings.Contains(b.html(), srv.token) {
		t.Error("the page refusing the secret holds the operator token")
	}

	for _, secret := range []struct{ name, value string }{{"password", password}, {"operator token", srv.token}} {
		{
			b.open(overview)
			b.fill("Operator token or password", secret.value)
			b.submit("Sign in")
			// Signed in, the visitor is back on the page asked for.
			b.waitText("Messages in the last 24 hours")
			if got := b.location(); got != srv.base+overview {
				t.Fatalf("%s: signed in, the browser is at %s, want the overview it asked for", secret.name, got)
			}

			cookies := b.cookies(srv.base + "/dashboard/")
			if len(cookies) != 1 {
				t.Fatalf("%s: cookies: %v, want the session's", secret.name, cookies)
			}
			c := cookies[0]
			if !c.HTTPOnly || c.SameSite != network.CookieSameSiteLax || c.Secure || c.Path != "/dashboard/" {
				t.Errorf("%s: session cookie %s: HttpOnly %v, SameSite %q, Secure %v, Path %q; want HttpOnly, Lax, not Secure over HTTP, /dashboard/",
					secret.name, c.Name, c.HTTPOnly, c.SameSite, c.Secure, c.Path)
			}
			if strings.Contains(c.Value, srv.token) || strings.Contains(c.Value, password) {
				t.Errorf("%s: the session cookie holds the secret", secret.name)
			}
			if js := result(b, "read document.cookie", chromedp.Evaluate[string](`document.cookie`)); js != "" {
				t.Errorf("%s: scripts read the cookies %q", secret.name, js)
			}
			if opens(t, srv, overview, c) != http.StatusOK {
				t.Fatalf("%s: the session cookie does not open the overview outside the browser", secret.name)
			}

			b.submit("Sign out")
			if got := b.location(); got != signInURL {
				t.Errorf("%s: after signing out the page is %s, want the sign-in form", secret.name, got)
			}
			b.open(overview)
			if got := b.location(); got != signInURL+"?next="+url.QueryEscape(overview) {
				t.Errorf("%s: after signing out the overview sends to %s, want the sign-in form", secret.name, got)
			}
			// The session ended on the server: its cookie, kept, is no
			// longer enough.
			if st := opens(t, srv, overview, c); st != http.StatusSeeOther {
				t.Errorf("%s: the old session cookie after sign-out: %d, want 303 to the sign-in form", secret.name, st)
			}
		}
	}
}

// opens requests path with cookie c, without following redirects, and
// answers the status.
func opens(t *testing.T, srv *dashServer, path string, c *network.Cookie) int {
	t.Helper()
	req, err := http.NewRequest("GET", srv.base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.AddCookie(&http.Cookie{Name: c.Name, Value: c.Value})
	client := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// activeID answers the id of the focused element ("" for none).
func (b *browser) activeID() string {
	b.t.Helper()
	return result(b, "read the focus", chromedp.Evaluate[string](`document.activeElement ? document.activeElement.id : ""`))
}

// tabTo presses Tab until the element with id has the focus, at most max
// times, and fails the test when it never does (it cannot be reached with
// the keyboard).
func (b *browser) tabTo(id string, max int) {
	b.t.Helper()
	for range max {
		if b.activeID() == id {
			return
		}
		b.do("press Tab", chromedp.KeyEvent(kb.Tab))
	}
	if b.activeID() != id {
		b.t.Fatalf("#%s never had the focus after %d presses of Tab", id, max)
	}
}

// TestBrowserKeyboard: the dashboard works without a mouse. The sign-in
// field has the focus on arrival and Enter signs in; the first Tab of a
// page reaches "Skip to content", which moves the focus to the content;
// a contact is created with Tab, typing and Enter alone.
func TestBrowserKeyboard(t *testing.T) {
	srv := startDashServer(t)
	key := srv.key(t, "read:contacts")
	b := newBrowser(t, srv)
	b.open("/dashboard/")
	b.waitFor("the sign-in field focused", `document.activeElement && document.activeElement.id === "secret"`)
	b.do("type the token and Enter", chromedp.KeyEvent(srv.token), chromedp.KeyEvent(kb.Enter))
	b.waitFor("the signed-in page", `!!document.querySelector("header form[action$='sign-out']")`)

	b.open("/dashboard/w/" + demoWS + "/contacts/new")
	b.do("press Tab", chromedp.KeyEvent(kb.Tab))
	if txt := result(b, "read the focused element", chromedp.Evaluate[string](`document.activeElement.textContent.trim()`)); txt != "Skip to content" {
		t.Errorf("the first Tab focuses %q, want the Skip to content link", txt)
	}
	b.do("press Enter", chromedp.KeyEvent(kb.Enter))
	b.waitFor("the focus in the content", `document.activeElement && document.activeElement.id === "main"`)

	b.tabTo("c-firstName", 10)
	b.do("type the first name", chromedp.KeyEvent("Keyboard"))
	b.tabTo("c-lastName", 2)
	b.do("type the last name", chromedp.KeyEvent("Only"))
	b.tabTo("c-phone", 2)
	b.do("type the phone and Enter", chromedp.KeyEvent("+254700111222"), chromedp.KeyEvent(kb.Enter))
	b.waitText("Keyboard Only")

	st, body := srv.api(t, "GET", "/v1/contacts?search=keyb", key, nil)
	if st != http.StatusOK || !strings.Contains(fmt.Sprint(body), "+254700111222") {
		t.Errorf("GET /v1/contacts?search=keyb: %d %v; want the contact typed", st, body)
	}
}

// TestBrowserPhone: on a phone's screen (390 px wide) no main page is
// wider than the screen: tables scroll inside their own box rather than
// pushing the page sideways.
func TestBrowserPhone(t *testing.T) {
	srv := startDashServer(t)
	b := newBrowser(t, srv)
	b.signIn()
	b.do("a phone's viewport", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(3)))
	ws := "/dashboard/w/" + demoWS
	st, body := srv.api(t, "POST", "/admin/v1/workspaces/"+demoWS+"/api-keys", "", map[string]any{"name": "phone", "scopes": []string{"read:messages"}})
	keyID := field(body, "id")
	if st != http.StatusCreated || keyID == "" {
		t.Fatalf("creating an API key: %d %v", st, body)
	}
	for _, path := range []string{"/dashboard/sign-in", "/dashboard/workspaces", ws + "/overview", ws + "/messages", ws + "/contacts", ws + "/contacts/new",
		ws + "/templates", ws + "/templates/new", ws + "/developers", ws + "/developers/keys/" + keyID, ws + "/channels", ws + "/settings", "/dashboard/sms"} {
		b.open(path)
		w := result(b, "measure "+path, chromedp.Evaluate[[]int](`[document.documentElement.scrollWidth, document.documentElement.clientWidth]`))
		if w[0] > w[1] {
			// The culprits: the elements sticking out of the screen
			// whose parent does not.
			out := result(b, "find what sticks out", chromedp.Evaluate[[]string](`(() => {
			  const W = document.documentElement.clientWidth, out = [];
			  const name = (el) => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + (el.className && typeof el.className === "string" ? "." + el.className.trim().split(/\s+/).join(".") : "");
			  for (const el of document.body.querySelectorAll("*")) {
			    const r = el.getBoundingClientRect(), p = el.parentElement.getBoundingClientRect();
			    if (r.right > W + 1 && p.right <= W + 1) out.push(name(el.parentElement) + " > " + name(el) + " (" + Math.round(r.width) + " px)");
			  }
			  return out.slice(0, 5);
			})()`))
			t.Errorf("%s is %d px wide on a %d px screen: %s", path, w[0], w[1], strings.Join(out, "; "))
		}
	}
}

// hookRecorder is a webhook receiver recording each request.
type hookRecorder struct {
	mu   sync.Mutex
	reqs []hookRequest
}

// hookRequest is one request a webhook receiver got.
type hookRequest struct {
	header http.Header
	body   []byte
}

func (h *hookRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	h.mu.Lock()
	h.reqs = append(h.reqs, hookRequest{r.Header.Clone(), body})
	h.mu.Unlock()
}

// received answers the requests so far.
func (h *hookRecorder) received() []hookRequest {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.reqs)
}

// TestBrowserWebhook: a webhook endpoint added in Settings -> Developers
// shows its signing secret once; the test event and the events of a
// message reach the receiver signed with that secret; the delivery log
// shows them with the receiver's 200 while the page is open; Redeliver
// sends an event again with its id; and no later page holds the secret.
func TestBrowserWebhook(t *testing.T) {
	srv := startDashServer(t)
	key := srv.key(t, "write:messages")
	rec := &hookRecorder{}
	sink := httptest.NewServer(rec)
	defer sink.Close()
	b := newBrowser(t, srv)
	b.signIn()
	b.open("/dashboard/w/" + demoWS + "/developers")
	b.fill("URL", sink.URL+"/hooks")
	b.fill("Description", "browser test receiver")
	b.submit("Add endpoint")
	secret := strings.TrimSpace(result(b, "read the signing secret", chromedp.Text(chromedp.ID("new-secret"))))
	if !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("the page shows %q as the signing secret, want whsec_...", secret)
	}
	// The answer is the endpoint's page; its address is in its forms'.
	endpoint := strings.TrimSuffix(result(b, "read the endpoint's address", chromedp.Evaluate[string](
		`(document.querySelector("form[action$='/test']") || {getAttribute: () => ""}).getAttribute("action")`)), "/test")
	if !strings.Contains(endpoint, "/developers/webhooks/") {
		t.Fatalf("the endpoint's page has no test form (address %q)", endpoint)
	}

	b.submit("Send a test event")
	b.waitText("answered the test event with HTTP 200")
	if strings.Contains(b.html(), secret) {
		t.Error("the page answering the test holds the signing secret")
	}

	// A message's events reach the receiver and the log, which refreshes
	// while the page is open.
	b.open(endpoint)
	if st, body := srv.sendText(t, key, "+14155550123", "Hello, webhooks"); st != http.StatusCreated {
		t.Fatalf("POST /v1/messages: %d %v", st, body)
	}
	// The test event is in the log too (HTTP 200): wait for a row of the
	// message's own.
	b.waitFor("the message's events in the delivery log", `(() => { const d = document.getElementById("deliveries");
	  return !!d && [...d.querySelectorAll("tbody tr")].some(r => r.textContent.includes("message.status_updated") && r.textContent.includes("HTTP 200")); })()`)
	if strings.Contains(b.html(), secret) {
		t.Error("the endpoint's page holds the signing secret")
	}
	if twice := deliveredTwice(rec.received()); twice != "" {
		t.Fatalf("event %s was delivered twice before any redelivery", twice)
	}
	b.do("click Redeliver", chromedp.Click(chromedp.CSS("#deliveries form button"), chromedp.NodeVisible))
	b.waitText("queued again")

	// The redelivery arrives with the webhook-id of its first delivery.
	deadline := time.Now().Add(browserTimeout)
	for deliveredTwice(rec.received()) == "" && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	reqs := rec.received()
	if deliveredTwice(reqs) == "" {
		t.Fatalf("Redeliver sent no event again: the receiver got %d requests, each a different event", len(reqs))
	}
	for i, r := range reqs {
		ts, _ := strconv.ParseInt(r.header.Get("webhook-timestamp"), 10, 64)
		if err := webhooksig.Verify(secret, r.header, r.body, time.Unix(ts, 0), 0); err != nil {
			t.Errorf("request %d does not verify with the secret the page showed: %v", i, err)
		}
	}
}

// deliveredTwice answers the webhook-id of an event received twice ("" when
// none was).
func deliveredTwice(reqs []hookRequest) string {
	seen := map[string]bool{}
	for _, r := range reqs {
		id := r.header.Get("webhook-id")
		if seen[id] {
			return id
		}
		seen[id] = true
	}
	return ""
}

// TestBrowserChannels: Settings -> Channels disconnects a channel (after
// its confirmation) and connects it again with credentials, as GET
// /v1/channels then says; the access token is never shown again, only its
// last 4 characters.
func TestBrowserChannels(t *testing.T) {
	const token = "EAAGbrowserTestToken98765"
	srv := startDashServer(t)
	key := srv.key(t, "manage:channels")
	b := newBrowser(t, srv)
	b.signIn()
	b.open("/dashboard/w/" + demoWS + "/channels")
	b.submit("Disconnect messenger")
	b.waitFor("messenger disconnected", `!!document.querySelector("#ch-messenger .badge.st-disconnected")`)
	if d := b.dialogMessages(); len(d) != 1 || !strings.Contains(d[0], "Disconnect messenger?") {
		t.Errorf("confirmations asked: %q, want one asking to disconnect messenger", d)
	}
	if st, body := srv.api(t, "GET", "/v1/channels", key, nil); st != http.StatusOK || channelStatus(body, "messenger") != "disconnected" {
		t.Fatalf("GET /v1/channels after the disconnection: %d %v", st, body)
	}

	b.do("open the messenger form", chromedp.Click(chromedp.CSS("#ch-messenger summary"), chromedp.NodeVisible))
	b.fill("messenger-page_id", "104512345678")
	b.fill("messenger-access_token", token)
	b.submit("Connect messenger")
	b.waitFor("messenger connected", `!!document.querySelector("#ch-messenger .badge.st-connected")`)
	b.waitText("…8765")
	if strings.Contains(b.html(), token) {
		t.Error("the page answering the connection holds the access token")
	}
	b.open("/dashboard/w/" + demoWS + "/channels")
	if h := b.html(); strings.Contains(h, token) || !strings.Contains(h, "104512345678") {
		t.Error("the channels page holds the access token, or not the page id")
	}
	if st, body := srv.api(t, "GET", "/v1/channels", key, nil); st != http.StatusOK || channelStatus(body, "messenger") != "connected" {
		t.Errorf("GET /v1/channels after the connection: %d %v", st, body)
	}
}

// channelStatus answers the status of channel in a GET /v1/channels
// answer (a list, or an object whose data is the list).
func channelStatus(body any, channel string) string {
	list, _ := body.([]any)
	if m, ok := body.(map[string]any); ok {
		list, _ = m["data"].([]any)
	}
	for _, c := range list {
		if field(c, "channel") == channel {
			return field(c, "status")
		}
	}
	return ""
}

// TestBrowserSettings: Settings -> Workspace refuses a keyword that is
// also an opt-in keyword by its field, then saves the policy and the
// opt-out keywords, as the operator API and a free-form send then show.
func TestBrowserSettings(t *testing.T) {
	srv := startDashServer(t)
	key := srv.key(t, "write:messages")
	b := newBrowser(t, srv)
	b.signIn()
	b.open("/dashboard/w/" + demoWS + "/settings")
	b.choose("Free-form sends outside the customer-service window", "reject")
	b.fill("Opt-out keywords", "ACHA, START")
	b.submit("Save settings")
	b.waitText("START is also an opt-in keyword")
	// The refused form is answered 422, which the browser reports.
	if p := b.takeProblems(); len(p) != 1 || !strings.Contains(p[0], "422") {
		t.Errorf("page errors of the refused form: %q, want its 422 alone", p)
	}
	if st, body := srv.api(t, "GET", "/admin/v1/workspaces/"+demoWS, "", nil); st != http.StatusOK || field(body, "outside_window") != "provider" {
		t.Fatalf("after the refused form: %d %v; want nothing stored", st, body)
	}
	b.fill("Opt-out keywords", "ACHA, STOP")
	b.submit("Save settings")
	b.waitText("Workspace settings saved.")
	st, body := srv.api(t, "GET", "/admin/v1/workspaces/"+demoWS, "", nil)
	if st != http.StatusOK || field(body, "outside_window") != "reject" || !strings.Contains(fmt.Sprint(body), "ACHA") {
		t.Fatalf("GET /admin/v1/workspaces/%s after saving: %d %v", demoWS, st, body)
	}
	st, body = srv.api(t, "POST", "/v1/messages", key, map[string]any{"channel": "whatsapp", "to": "+254712000111", "type": "text", "text": "hi"})
	if st != http.StatusUnprocessableEntity || !strings.Contains(fmt.Sprint(body), "outside_customer_service_window") {
		t.Errorf("a free-form send after choosing reject: %d %v; want 422 outside_customer_service_window", st, body)
	}
}
