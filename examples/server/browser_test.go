package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// The browser tests drive a real Chromium through the DevTools protocol
// (chromedp) against the server's handler, run in-process by run() on a
// loopback port with a temporary database. They never skip for want of a
// browser: TestMain finds one (MESSAGING_CHROMIUM, chromium,
// chromium-browser, google-chrome) or installs it with .ci/chromium, and
// stops the run, saying what to do, when it cannot.
//
// On failure a test saves a full-page screenshot and logs its path. With
// MESSAGING_SCREENSHOTS=<dir> the tests save a PNG of each main page into
// dir (the README's pictures come from docs/).

// browserTests are the tests that need Chromium. TestMain looks for the
// browser only when -run may select one of them; newBrowser refuses a test
// missing from the list, so it cannot fall out of date.
func browserTests() []string {
	return []string{
		"TestBrowserSignIn",
		"TestBrowserAPIKey",
		"TestBrowserTemplate",
		"TestBrowserContacts",
		"TestBrowserCrossOrigin",
		"TestBrowserPages",
		"TestBrowserKeyboard",
		"TestBrowserPhone",
		"TestBrowserWebhook",
		"TestBrowserChannels",
		"TestBrowserSettings",
	}
}

// browserEnvVar names the Chromium binary TestMain found, for newBrowser.
const browserEnvVar = "MESSAGING_CHROMIUM"

func TestMain(m *testing.M) {
	flag.Parse()
	if mayRunBrowserTests() {
		path, err := findOrInstallChromium()
		if err != nil {
			fmt.Fprintf(os.Stderr, "FATAL: the browser tests need Chromium: %v\n"+
				"Install it with  .ci/chromium  (as root; Debian's chromium package), or set %s to a Chromium or Chrome binary.\n",
				err, browserEnvVar)
			os.Exit(1)
		}
		if err := os.Setenv(browserEnvVar, path); err != nil {
			fmt.Fprintln(os.Stderr, "FATAL:", err)
			os.Exit(1)
		}
	}
	os.Exit(m.Run())
}

// mayRunBrowserTests reports whether the -test.run and -test.skip patterns
// may select a browser test (with -test.list nothing runs).
func mayRunBrowserTests() bool {
	lookup := func(name string) string {
		if f := flag.Lookup(name); f != nil {
			return f.Value.String()
		}
		return ""
	}
	if lookup("test.list") != "" {
		return false
	}
	run, skip := lookup("test.run"), lookup("test.skip")
	top := func(pattern string) *regexp.Regexp {
		// The first element of a slash-separated pattern matches the
		// top-level test; a bad pattern is reported by the testing package.
		first, _, _ := strings.Cut(pattern, "/")
		re, err := regexp.Compile(first)
		if err != nil {
			return nil
		}
		return re
	}
	for _, name := range browserTests() {
		if run != "" {
			if re := top(run); re != nil && !re.MatchString(name) {
				continue
			}
		}
		if skip != "" && !strings.Contains(skip, "/") {
			if re := top(skip); re != nil && re.MatchString(name) {
				continue
			}
		}
		return true
	}
	return false
}

// findOrInstallChromium answers the path of a Chromium, as .ci/chromium
// finds or installs it (MESSAGING_CHROMIUM, then chromium,
// chromium-browser or google-chrome on PATH, then Debian's package).
func findOrInstallChromium() (string, error) { return findOrInstall("chromium") }

// findOrInstall answers the path of a program the tests need, as the
// project's script .ci/<script> finds it (its environment variable, then
// PATH) or installs it, so that the tests and .ci/run look for it the
// same way; the script fails with the reason when it cannot.
func findOrInstall(script string) (string, error) {
	path, err := filepath.Abs(filepath.Join("..", "..", ".ci", script))
	if err != nil {
		return "", err
	}
	cmd := exec.Command(path)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s: %v", path, err)
	}
	p := strings.TrimSpace(out.String())
	if p == "" {
		return "", fmt.Errorf("%s named no program", path)
	}
	return p, nil
}

// browserTimeout bounds each browser test, so that a hang fails the test
// instead of stalling the run.
const browserTimeout = 45 * time.Second

// dashServer is the server run in-process for a browser test.
type dashServer struct {
	base  string // http://127.0.0.1:port
	addr  string
	token string // the operator token
	dir   string
}

// startDashServer runs the server (main.go's run) on a free loopback port
// with a temporary SQLite database and the fake provider's delays
// shortened, waits until it answers, and stops it when the test ends.
func startDashServer(t *testing.T, extra ...string) *dashServer {
	t.Helper()
	dir := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	db := filepath.Join(dir, "dash.db")
	// The test receivers listen on loopback.
	args := append([]string{"-addr", addr, "-db", db, "-rate-limits", "off", "-webhooks-loopback",
		"-fake-review-after", "1s", "-fake-delivered-after", "300ms", "-fake-read-after", "300ms"}, extra...)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, args) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("the server stopped with %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Errorf("the server did not stop within 20 s")
		}
	})
	s := &dashServer{base: "http://" + addr, addr: addr, dir: dir}
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case err := <-done:
			t.Fatalf("the server stopped at start: %v", err)
		default:
		}
		resp, err := http.Get(s.base + "/v1/openapi.json")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server did not answer within 30 s: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	raw, err := os.ReadFile(db + ".admin-token")
	if err != nil {
		t.Fatal(err)
	}
	s.token = strings.TrimSpace(string(raw))
	return s
}

// api sends a request to the server's API with an X-API-Key (key), or the
// operator token as a bearer when key is "", and answers the status and
// the decoded JSON body (a map, a list, or the text when it is no JSON).
func (s *dashServer) api(t *testing.T, method, path, key string, body any) (int, any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("X-API-Key", key)
	} else {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if json.Unmarshal(raw, &out) != nil {
		out = string(raw)
	}
	return resp.StatusCode, out
}

// field answers the string field name of a decoded JSON object ("" when
// v is no object or lacks it).
func field(v any, name string) string {
	m, _ := v.(map[string]any)
	s, _ := m[name].(string)
	return s
}

// browser is a headless Chromium tab driven by one test.
type browser struct {
	t   *testing.T
	ctx context.Context // the tab; it lives until the test's cleanup
	srv *dashServer
	// deadline bounds every step of the test (browserTimeout after the
	// start), so that a hang fails the test while the tab stays open for
	// the screenshot of the failure.
	deadline time.Time

	mu       sync.Mutex
	dialogs  []string       // messages of the confirmations accepted
	statuses map[string]int // URL -> status of the last document answered
	// problems are the page's errors: uncaught exceptions, and errors in
	// the browser's log (a script or style the CSP refused, a file that
	// failed to load, ...).
	problems []string
	// tolerateProblems turns off the check, at the end of the test, that
	// no page had an error (for tests whose pages answer 4xx on purpose,
	// which the browser logs as errors).
	tolerateProblems bool
}

// newBrowser starts a headless Chromium for the test, bounded by
// browserTimeout, and closes it when the test ends; when the test has
// failed by then, a full-page screenshot of the tab is saved first and its
// path logged. Confirmation dialogs are accepted.
func newBrowser(t *testing.T, srv *dashServer) *browser {
	t.Helper()
	top, _, _ := strings.Cut(t.Name(), "/")
	if !slices.Contains(browserTests(), top) {
		t.Fatalf("%s needs Chromium but is not in browserTests(): add it there", top)
	}
	path := os.Getenv(browserEnvVar)
	if path == "" {
		t.Fatalf("%s is not set: TestMain should have found Chromium", browserEnvVar)
	}
	opts := append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]),
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.WindowSize(1280, 900),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
	)
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox)
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx, chromedp.WithErrorf(t.Logf))
	b := &browser{t: t, ctx: ctx, srv: srv, statuses: map[string]int{}, deadline: time.Now().Add(browserTimeout)}
	// Listen starts the browser. Its func runs in the loop reading the
	// browser's messages: it records, and answers dialogs from another
	// goroutine.
	err := chromedp.Listen(ctx, func(ev any) {
		switch ev := ev.(type) {
		case *page.EventJavascriptDialogOpening:
			b.mu.Lock()
			b.dialogs = append(b.dialogs, ev.Message)
			b.mu.Unlock()
			go func() {
				_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
			}()
		case *runtime.EventExceptionThrown:
			if d := ev.ExceptionDetails; d != nil {
				b.mu.Lock()
				b.problems = append(b.problems, fmt.Sprintf("uncaught exception at %s:%d: %s %s", d.URL, d.LineNumber+1, d.Text, exceptionDescription(d)))
				b.mu.Unlock()
			}
		case *cdplog.EventEntryAdded:
			if e := ev.Entry; e != nil && e.Level == cdplog.EntryLevelError {
				b.mu.Lock()
				b.problems = append(b.problems, fmt.Sprintf("%s error: %s (%s)", e.Source, e.Text, e.URL))
				b.mu.Unlock()
			}
		case *network.EventResponseReceived:
			if ev.Type == network.ResourceTypeDocument && ev.Response != nil {
				b.mu.Lock()
				b.statuses[ev.Response.URL] = int(ev.Response.Status)
				b.mu.Unlock()
			}
		}
	})
	if err != nil {
		cancelCtx()
		cancelAlloc()
		t.Fatalf("starting Chromium (%s): %v", path, err)
	}
	// A fixed viewport: the same layout, and screenshots 1280 px wide, on
	// every machine.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800)); err != nil {
		cancelCtx()
		cancelAlloc()
		t.Fatalf("setting the viewport: %v", err)
	}
	t.Cleanup(func() {
		b.mu.Lock()
		problems, tolerate := b.problems, b.tolerateProblems
		b.mu.Unlock()
		if len(problems) > 0 && !tolerate {
			t.Errorf("page errors:\n%s", strings.Join(problems, "\n"))
		}
		if t.Failed() {
			b.failureScreenshot()
		}
		cancelCtx()
		cancelAlloc()
	})
	return b
}

// failureScreenshot saves the tab as it is into the test's artifact
// directory (go test -artifacts) or else a directory under os.TempDir
// that outlives the test, and logs the file's path.
func (b *browser) failureScreenshot() {
	t := b.t
	dir := ""
	if f := flag.Lookup("test.artifacts"); f != nil && f.Value.String() == "true" {
		dir = t.ArtifactDir()
	} else {
		d, err := os.MkdirTemp("", "messaging-browser-")
		if err != nil {
			t.Logf("no screenshot: %v", err)
			return
		}
		dir = d
	}
	// The test's deadline may have passed: the capture has its own.
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	url, _ := chromedp.Run(ctx, chromedp.Location())
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Logf("no screenshot of the failure: %v", err)
		return
	}
	file := filepath.Join(dir, strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())+".png")
	if err := os.WriteFile(file, png, 0o644); err != nil {
		t.Logf("no screenshot: %v", err)
		return
	}
	t.Logf("screenshot of the page at the failure (%s): %s", url, file)
}

// do runs steps in the tab, failing the test on error.
func (b *browser) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithDeadline(b.ctx, b.deadline)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.t.Fatalf("%s: %v\nthe page says:\n%s", what, err, b.textOrErr())
	}
}

// result runs an action answering a value, failing the test on error.
func result[T any](b *browser, what string, action chromedp.Action[T]) T {
	b.t.Helper()
	ctx, cancel := context.WithDeadline(b.ctx, b.deadline)
	defer cancel()
	v, err := chromedp.Run(ctx, action)
	if err != nil {
		b.t.Fatalf("%s: %v\nthe page says:\n%s", what, err, b.textOrErr())
	}
	return v
}

// open navigates to path (relative to the server) and waits for the body.
func (b *browser) open(path string) {
	b.t.Helper()
	b.do("open "+path, chromedp.Navigate(b.srv.base+path), chromedp.WaitReady(chromedp.CSS("body")))
}

// status answers the HTTP status of the last document loaded from url.
func (b *browser) status(url string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.statuses[url]
}

// resetStatuses forgets the statuses of the documents loaded so far.
func (b *browser) resetStatuses() {
	b.mu.Lock()
	defer b.mu.Unlock()
	clear(b.statuses)
}

// dialogMessages answers the messages of the confirmations accepted so far.
func (b *browser) dialogMessages() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.dialogs)
}

// takeProblems answers the page errors seen since the last call.
func (b *browser) takeProblems() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	p := b.problems
	b.problems = nil
	return p
}

// exceptionDescription is the message of an exception's object, if any.
func exceptionDescription(d *runtime.ExceptionDetails) string {
	if d.Exception != nil {
		return d.Exception.Description
	}
	return ""
}

// location answers the tab's URL.
func (b *browser) location() string {
	b.t.Helper()
	return result(b, "read the location", chromedp.Location())
}

// js quotes s as a JavaScript string.
func js(s string) string {
	q, _ := json.Marshal(s)
	return string(q)
}

// fieldID answers the id of the input, select or textarea that the label
// whose text starts with label (ignoring case and spacing) is for; an id
// is accepted too.
func (b *browser) fieldID(label string) string {
	b.t.Helper()
	expr := `(() => {
	  const id = ` + js(strings.TrimPrefix(label, "#")) + `;
	  if (document.getElementById(id)) return id;
	  const want = id.replace(/\s+/g, " ").trim().toLowerCase();
	  const norm = (s) => s.replace(/\s+/g, " ").trim().toLowerCase();
	  for (const l of document.querySelectorAll("label[for]")) {
	    if (norm(l.textContent).startsWith(want) && document.getElementById(l.htmlFor)) return l.htmlFor;
	  }
	  return "";
	})()`
	return result(b, "find the field "+label, chromedp.Poll[string](expr, chromedp.WithPollingTimeout(5*time.Second)))
}

// fill replaces the value of the field labelled label (or with id label)
// by typing value into it.
func (b *browser) fill(label, value string) {
	b.t.Helper()
	id := b.fieldID(label)
	// Emptied as a person selecting all and deleting would, then typed.
	clear := `(() => { const el = document.getElementById(` + js(id) + `); el.focus(); el.value = "";
	  el.dispatchEvent(new Event("input", {bubbles: true})); })()`
	b.do("fill "+label, chromedp.Evaluate[chromedp.Void](clear), chromedp.SendKeys(chromedp.ID(id), value))
}

// choose selects the option of the select labelled label whose value or
// text is option.
func (b *browser) choose(label, option string) {
	b.t.Helper()
	id := b.fieldID(label)
	expr := `(() => {
	  const s = document.getElementById(` + js(id) + `);
	  for (const o of s.options) {
	    if (o.value === ` + js(option) + ` || o.textContent.trim() === ` + js(option) + `) {
	      s.value = o.value;
	      s.dispatchEvent(new Event("input", {bubbles: true}));
	      s.dispatchEvent(new Event("change", {bubbles: true}));
	      return true;
	    }
	  }
	  return false;
	})()`
	if !result(b, "choose "+option+" in "+label, chromedp.Evaluate[bool](expr)) {
		b.t.Fatalf("the select %q has no option %q", label, option)
	}
}

// check ticks (or unticks) the checkbox labelled label.
func (b *browser) check(label string, on bool) {
	b.t.Helper()
	id := b.fieldID(label)
	checked := result(b, "read "+label, chromedp.Evaluate[bool](`document.getElementById(`+js(id)+`).checked`))
	if checked != on {
		b.do("tick "+label, chromedp.Click(chromedp.ID(id)))
	}
}

// buttonXPath selects a button or link whose text is text (its
// accessible name: the visible text and any text only screen readers
// show) within the element scope (an XPath; "" for anywhere).
func buttonXPath(scope, text string) string {
	return fmt.Sprintf(`%s//*[(self::button or self::a) and normalize-space()=%s and not(@hidden)]`, scope, xpathString(text))
}

// xpathString quotes s as an XPath 1.0 literal.
func xpathString(s string) string {
	if !strings.Contains(s, `"`) {
		return `"` + s + `"`
	}
	if !strings.Contains(s, `'`) {
		return `'` + s + `'`
	}
	return `concat("` + strings.ReplaceAll(s, `"`, `", '"', "`) + `")`
}

// click clicks the first button or link whose text is text.
func (b *browser) click(text string) {
	b.t.Helper()
	b.clickIn("", text)
}

// clickIn clicks the first button or link whose text is text inside the
// element scope (an XPath) selects.
func (b *browser) clickIn(scope, text string) {
	b.t.Helper()
	b.do("click "+text, chromedp.Click(chromedp.Search(buttonXPath(scope, text)), chromedp.NodeVisible))
}

// submit clicks the button or link whose text is text and waits for the
// page it leads to.
func (b *browser) submit(text string) {
	b.t.Helper()
	b.submitIn("", text)
}

// submitIn is submit for a button inside scope.
func (b *browser) submitIn(scope, text string) {
	b.t.Helper()
	// A marker on the current document tells when a new one replaced it.
	b.do("mark the page", chromedp.Evaluate[chromedp.Void](`window.__old = true`))
	b.clickIn(scope, text)
	b.waitFor("the page after "+text, `!window.__old && document.readyState === "complete"`)
}

// text answers the visible text of the page.
func (b *browser) text() string {
	b.t.Helper()
	return result(b, "read the page", chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
}

// html answers the page's HTML as the browser holds it.
func (b *browser) html() string {
	b.t.Helper()
	return result(b, "read the page's HTML", chromedp.OuterHTML(chromedp.CSS("html")))
}

// waitText waits until the page's visible text contains each of texts,
// ignoring case (the stylesheet capitalises some).
func (b *browser) waitText(texts ...string) {
	b.t.Helper()
	for _, s := range texts {
		b.waitFor(fmt.Sprintf("%q on the page", s), `!!document.body && document.body.innerText.toLowerCase().includes(`+js(strings.ToLower(s))+`)`)
	}
}

// waitFor waits until the JavaScript expression is true, saying what.
func (b *browser) waitFor(what, expr string) {
	b.t.Helper()
	ctx, cancel := context.WithDeadline(b.ctx, b.deadline)
	defer cancel()
	for {
		_, err := chromedp.Run(ctx, chromedp.Poll[bool](`!!(`+expr+`)`,
			chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(0)))
		if err == nil {
			return
		}
		if ctx.Err() != nil {
			b.t.Fatalf("waiting for %s: %v\nthe page says:\n%s", what, err, b.textOrErr())
		}
		// A navigation ended the poll with its document: poll the next
		// one (after a pause, so a page failing to load is not hammered).
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// textOrErr is the start of the page's text for failure messages: it
// never fails the test itself.
func (b *browser) textOrErr() string {
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
	if err != nil {
		return "(unreadable: " + err.Error() + ")"
	}
	if r := []rune(s); len(r) > 1500 {
		s = string(r[:1500]) + " …"
	}
	return s
}

// signIn signs in at the dashboard's form with the operator token.
func (b *browser) signIn() {
	b.t.Helper()
	b.open("/dashboard/")
	b.waitFor("the sign-in form", `!!document.querySelector("input[name=secret]")`)
	b.fill("secret", b.srv.token)
	b.submit("Sign in")
	b.waitFor("the signed-in page", `!!document.querySelector("header form[action$='sign-out']")`)
}

// cookies answers the browser's cookies for url.
func (b *browser) cookies(url string) []*network.Cookie {
	b.t.Helper()
	res := result(b, "read the cookies", func(ctx context.Context, t *chromedp.Target) (*network.GetCookiesResult, error) {
		r, err := cdp.Call(ctx, t, network.GetCookies, network.GetCookiesParams{URLs: []string{url}})
		return &r, err
	})
	return res.Cookies
}

// screenshot saves a PNG of the page, 1280 px wide, into
// $MESSAGING_SCREENSHOTS/name.png when that variable is set. full
// captures the whole page rather than the window.
func (b *browser) screenshot(name string, full bool) {
	b.t.Helper()
	dir := os.Getenv("MESSAGING_SCREENSHOTS")
	if dir == "" {
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.t.Fatal(err)
	}
	// The top of the page, without the focus ring of the last field typed in.
	b.do("scroll to the top", chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0); if (document.activeElement) document.activeElement.blur()`))
	shot := chromedp.CaptureScreenshot()
	if full {
		shot = chromedp.FullScreenshot(100)
	}
	png := result(b, "screenshot "+name, shot)
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}
