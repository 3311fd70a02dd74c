package dashboard_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/record"
)

// The dashboard's browser test: Chromium (MESSAGING_CHROMIUM; the test is
// skipped without it, as examples/server's TestMain would install one)
// opens the message page of rich outbound messages and the template
// editor of a media header, each without a page error (a script or style
// the Content-Security-Policy refuses, an uncaught exception), and the
// editor's checks as you type still work beside the file input. With
// MESSAGING_SCREENSHOTS=<dir> it saves docs/dashboard-rich-messages.png,
// docs/dashboard-rich-<type>.png of each other rich type and
// docs/dashboard-template-sample.png there.

// chromium starts a headless Chromium for t, 1280 px wide, collecting
// page errors; it is closed when t ends.
func chromium(t *testing.T) (ctx context.Context, problems func() []string) {
	t.Helper()
	path := os.Getenv("MESSAGING_CHROMIUM")
	if path == "" {
		t.Skip("MESSAGING_CHROMIUM is not set: no browser to run this test in")
	}
	opts := append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]), chromedp.ExecPath(path), chromedp.Headless,
		chromedp.WindowSize(1280, 900), chromedp.Flag("hide-scrollbars", true), chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()))
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox)
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelCtx := chromedp.NewContext(actx, chromedp.WithErrorf(t.Logf))
	var mu sync.Mutex
	var seen []string
	if err := chromedp.Listen(bctx, func(ev any) {
		if ev, ok := ev.(*runtime.EventExceptionThrown); ok && ev.ExceptionDetails != nil {
			mu.Lock()
			seen = append(seen, fmt.Sprintf("uncaught exception at %s:%d: %s", ev.ExceptionDetails.URL, ev.ExceptionDetails.LineNumber+1, ev.ExceptionDetails.Text))
			mu.Unlock()
		}
	}); err != nil {
		cancelCtx()
		cancelAlloc()
		t.Fatalf("starting Chromium (%s): %v", path, err)
	}
	if err := chromedp.Do(bctx, chromedp.EmulateViewport(1280, 800)); err != nil {
		t.Fatalf("setting the viewport: %v", err)
	}
	ctx, cancel := context.WithTimeout(bctx, 45*time.Second)
	t.Cleanup(func() { cancel(); cancelCtx(); cancelAlloc() })
	return ctx, func() []string { mu.Lock(); defer mu.Unlock(); return slices.Clone(seen) }
}

// screenshot saves the page into $MESSAGING_SCREENSHOTS/name.png when
// that variable is set.
func screenshot(t *testing.T, ctx context.Context, name string, full bool) {
	t.Helper()
	dir := os.Getenv("MESSAGING_SCREENSHOTS")
	if dir == "" {
		return
	}
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0); if (document.activeElement) document.activeElement.blur()`)); err != nil {
		t.Fatal(err)
	}
	shot := chromedp.CaptureScreenshot()
	if full {
		shot = chromedp.FullScreenshot(100)
	}
	png, err := chromedp.Run(ctx, shot)
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestBrowserRichMessagesAndSample: see the comment above.
func TestBrowserRichMessagesAndSample(t *testing.T) {
	ctx, problems := chromium(t)
	f := setupWith(t, fixtureOptions{viewer: "op"})
	f.prov.SetSink(f.svc)
	in, err := f.prov.Receive(f.ctx, &messaging.InboundMessage{WorkspaceID: "acme", From: "+254712345678", Text: "Which sizes do you have?"})
	if err != nil {
		t.Fatal(err)
	}
	ids := f.richMessages()
	res, err := f.svc.Workspace("acme").Messages.Send(f.ctx, &messaging.SendParams{Channel: "whatsapp", To: "+254712345678", Type: "interactive",
		ReplyTo: in.ID, Interactive: &record.Interactive{Type: record.InteractiveTypeList,
			Header: &record.InteractiveHeader{Type: "text", Text: "Our sizes"}, Body: "Pick a size and we will hold one for you until Friday.", Footer: "Duka Ltd",
			List: &record.InteractiveList{Button: "Sizes", Sections: []record.ListSection{
				{Title: "Shirts", Rows: []record.ListRow{{ID: "s", Title: "Small", Description: "Chest 90 cm"}, {ID: "m", Title: "Medium", Description: "Chest 100 cm"}}},
				{Title: "Shoes", Rows: []record.ListRow{{ID: "42", Title: "EU 42"}, {ID: "43", Title: "EU 43"}}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	f.dispatch()
	base := f.srv.URL + "/dashboard/w/acme/"
	read := func(what, expr string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return v
	}
	open := func(path string) {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.Navigate(base+path), chromedp.WaitReady(chromedp.CSS("body"))); err != nil {
			t.Fatalf("open %s: %v", path, err)
		}
	}

	open("messages/" + res.MessageID)
	seenText := read("the section", `(document.querySelector(".seen") || {innerText: ""}).innerText`)
	for _, want := range []string{"Reply to " + in.ID, "Which sizes do you have?", "Our sizes", "Sizes", "SHIRTS", "Chest 90 cm", "EU 43", "Duka Ltd"} {
		if !strings.Contains(seenText, want) {
			t.Errorf("the message page shows no %q; it shows:\n%s", want, seenText)
		}
	}
	screenshot(t, ctx, "dashboard-rich-messages", true)
	open("messages/" + ids["location"])
	if href := read("the map link", `document.querySelector(".b-location a").href`); href != "https://www.openstreetmap.org/?mlat=-1.2864&mlon=36.8172#map=16/-1.2864/36.8172" {
		t.Errorf("the map link is %q", href)
	}
	for _, kind := range []string{"buttons", "cta", "location", "contacts", "reaction", "sticker"} {
		open("messages/" + ids[kind])
		if got := read("the card of "+kind, `(document.querySelector(".seen") || {innerText: ""}).innerText`); got == "" {
			t.Errorf("the %s message's page shows no card", kind)
		}
		screenshot(t, ctx, "dashboard-rich-"+kind, false)
	}

	// The editor: a media header, the checks as you type beside the file
	// input.
	open("templates/new")
	if err := chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`(() => { const s = document.getElementById("f-header_format"); s.value = "IMAGE"; s.dispatchEvent(new Event("change", {bubbles: true})); })()`),
		chromedp.SendKeys(chromedp.ID("f-name"), "spring_sale"),
		chromedp.SendKeys(chromedp.ID("f-body"), "New in store this week: {{1}}"),
	); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById("check-status").textContent !== "" && !!document.getElementById("f-body_example_1")`,
		chromedp.WithPollingInterval(100*time.Millisecond))); err != nil {
		t.Fatalf("the checks as you type did not answer: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.ID("f-body_example_1"), "linen shirts")); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById("check-status").textContent === "Looks good."`,
		chromedp.WithPollingInterval(100*time.Millisecond))); err != nil {
		t.Errorf("the checks did not find the form good: %v; status %q", err, read("status", `document.getElementById("check-status").textContent`))
	}
	if got := read("the form", `document.getElementById("tpl-form").enctype + " " + document.getElementById("f-header_sample").type`); got != "multipart/form-data file" {
		t.Errorf("the form is %q; want a multipart form with a file input", got)
	}
	screenshot(t, ctx, "dashboard-template-sample", false)
	if p := problems(); len(p) > 0 {
		t.Errorf("page errors:\n%s", strings.Join(p, "\n"))
	}
}
