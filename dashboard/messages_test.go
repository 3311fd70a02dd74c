package dashboard_test

import (
	"html"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ujumbe/messaging/record"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/fakeprovider"
)

// sendText sends a WhatsApp text from workspace ws and returns its id.
func (f *fixture) sendText(ws, to, text string) string {
	f.t.Helper()
	res, err := f.svc.Workspace(ws).Messages.Send(f.ctx, &messaging.SendParams{Channel: "whatsapp", To: to, Type: "text", Text: text})
	if err != nil {
		f.t.Fatal(err)
	}
	return res.MessageID
}

// dispatch hands every due message to the fake provider.
func (f *fixture) dispatch() {
	f.t.Helper()
	if _, err := f.svc.DispatchDue(f.ctx); err != nil {
		f.t.Fatal(err)
	}
}

var (
	messageLinkRe = regexp.MustCompile(`href="/dashboard/w/acme/messages/(msg_[0-9a-f]+)"`)
	nextLinkRe    = regexp.MustCompile(`href="([^"]*)" rel="next"`)
)

// messageIDs are the ids of the messages listed on a log page, in order.
func messageIDs(body string) []string {
	var ids []string
	for _, m := range messageLinkRe.FindAllStringSubmatch(body, -1) {
		ids = append(ids, m[1])
	}
	return ids
}

// nextLink is the path (under /dashboard/) of the page's Next link, or "".
func nextLink(body string) string {
	m := nextLinkRe.FindStringSubmatch(body)
	if m == nil {
		return ""
	}
	return strings.TrimPrefix(html.UnescapeString(m[1]), "/dashboard/")
}

// TestMessagesPaging: the log lists every message once, newest first, over
// its pages; a message sent between two pages is not on the next one; the
// Next link keeps the filters.
func TestMessagesPaging(t *testing.T) {
	f := setup(t)
	var want []string // newest first
	for i := range 7 {
		to := "+254712345678"
		if i%2 == 1 {
			to = "+254700111222" // another recipient, filtered out below
		}
		id := f.sendText("acme", to, "hello")
		if to == "+254712345678" {
			want = append([]string{id}, want...)
		}
		f.clock.Advance(time.Second)
	}
	var got []string
	path := "/w/acme/messages?to=%2B254712345678&limit=2"
	for pages := 0; path != ""; pages++ {
		if pages > 10 {
			t.Fatal("the Next links do not end")
		}
		r := f.get(path)
		if r.status != http.StatusOK {
			t.Fatalf("%s answered %d:\n%s", path, r.status, r.body)
		}
		if pages == 1 {
			r.wantContains(t, "First page")
			// A message created now, newer than every listed one, is
			// not on a later page.
			f.sendText("acme", "+254712345678", "late")
		}
		got = append(got, messageIDs(r.body)...)
		path = nextLink(r.body)
		if path != "" && !strings.Contains(path, "to=%2B254712345678") {
			t.Errorf("the Next link %q lost the recipient filter", path)
		}
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("messages over the pages (-want +got):\n%s", d)
	}
}

// TestMessagesFilters: the status, recipient and time filters select the
// matching messages, and a bad value shows the library's message next to
// its field.
func TestMessagesFilters(t *testing.T) {
	f := setup(t)
	sent := []string{f.sendText("acme", "+254712345678", "one"), f.sendText("acme", "+254712345678", "two")}
	f.clock.Advance(time.Second)
	f.dispatch()
	f.clock.Advance(time.Hour) // 11:30:01
	queued := f.sendText("acme", "+254700111222", "three")
	f.sendText("other", "+254712345678", "another workspace")

	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"", []string{queued, sent[1], sent[0]}},
		{"status=sent", []string{sent[1], sent[0]}},
		{"status=queued", []string{queued}},
		{"to=%2B254700111222", []string{queued}},
		{"channel=messenger", nil},
		{"created_after=2026-11-24T11:00", []string{queued}},
		{"created_after=2026-11-24+11:00", []string{queued}}, // as the field shows times: 24-hour, a space
		{"created_before=2026-11-24T11:00", []string{sent[1], sent[0]}},
		{"created_after=2026-11-24T10:00&created_before=2026-11-24T11:30:01", []string{sent[1], sent[0]}},
	} {
		r := f.get("/w/acme/messages?" + tc.query)
		if r.status != http.StatusOK {
			t.Errorf("%q answered %d", tc.query, r.status)
			continue
		}
		if d := cmp.Diff(tc.want, messageIDs(r.body)); d != "" {
			t.Errorf("messages for %q (-want +got):\n%s", tc.query, d)
		}
	}

	for _, tc := range []struct{ query, want string }{
		{"status=lost", `status: must be one of queued, sent, delivered, read, failed, canceled (got &#34;lost&#34;)`},
		{"channel=sms", `channel: must be one of whatsapp, instagram, messenger`},
		{"created_after=yesterday", `created_after: must be a date and time (UTC, 24-hour) such as 2026-11-24 14:30`},
		{"created_after=2026-11-24T12:00&created_before=2026-11-24T11:00", `created_before: must be later than created_after`},
		{"cursor=nope", `cursor: is not a cursor this API returned`},
		{"limit=1000", `limit: must be an integer from 1 to 100`},
	} {
		r := f.get("/w/acme/messages?" + tc.query)
		if r.status != http.StatusBadRequest {
			t.Errorf("%q answered %d; want 400", tc.query, r.status)
		}
		r.wantContains(t, `<p class="error"`, tc.want)
		if ids := messageIDs(r.body); len(ids) != 0 {
			t.Errorf("%q lists messages %v beside its error", tc.query, ids)
		}
		// A filter that was refused matched nothing: the page says
		// what is wrong, not that no message matches.
		if strings.Contains(r.body, "No messages match") {
			t.Errorf("%q says no messages match beside its error", tc.query)
		}
	}
}

// timeline returns the steps of a message page's timeline as "status at".
func timeline(t *testing.T, body string) (steps []string, region string) {
	t.Helper()
	start := strings.Index(body, `<ol class="timeline"`)
	end := strings.Index(body[max(start, 0):], "</ol>")
	if start < 0 || end < 0 {
		t.Fatalf("no timeline in the page:\n%s", body)
	}
	region = body[start : start+end]
	re := regexp.MustCompile(`<span class="badge st-([a-z]+)">[a-z]+</span> <time datetime="[^"]+">([^<]+)</time>`)
	for _, m := range re.FindAllStringSubmatch(region, -1) {
		steps = append(steps, m[1]+" "+m[2])
	}
	return steps, region
}

// TestMessageTimeline: a message's page shows accepted, then each status
// the dispatcher and the fake provider's reports moved it to, with times;
// it asks to be refreshed until the message is read.
func TestMessageTimeline(t *testing.T) {
	f := setup(t)
	f.prov.SetSink(f.svc)
	id := f.sendText("acme", "+254712345678", "hello there")
	f.clock.Advance(2 * time.Second)
	f.dispatch() // sent at 10:30:02

	r := f.get("/w/acme/messages/" + id)
	if r.status != http.StatusOK {
		t.Fatalf("message page answered %d:\n%s", r.status, r.body)
	}
	r.wantContains(t, "hello there", "&#43;254712345678", "whatsapp", "wamid.fake.")
	steps, region := timeline(t, r.body)
	if d := cmp.Diff([]string{"accepted 2026-11-24 10:30:00 UTC", "sent 2026-11-24 10:30:02 UTC"}, steps); d != "" {
		t.Errorf("timeline after the dispatch (-want +got):\n%s", d)
	}
	if !strings.Contains(region, `data-refresh="/dashboard/w/acme/messages/`+id+`"`) || strings.Contains(region, "data-final") {
		t.Errorf("a sent message's timeline does not ask to be refreshed: %s", region)
	}

	f.clock.Advance(3 * time.Second)
	if _, err := f.prov.Flush(f.ctx); err != nil { // delivered, then read
		t.Fatal(err)
	}
	r = f.get("/w/acme/messages/" + id)
	steps, region = timeline(t, r.body)
	want := []string{"accepted 2026-11-24 10:30:00 UTC", "sent 2026-11-24 10:30:02 UTC",
		"delivered 2026-11-24 10:30:05 UTC", "read 2026-11-24 10:30:05 UTC"}
	if d := cmp.Diff(want, steps); d != "" {
		t.Errorf("timeline after the reports (-want +got):\n%s", d)
	}
	if !strings.Contains(region, `data-final="true"`) || strings.Contains(region, "data-refresh") {
		t.Errorf("a read message's timeline is not final: %s", region)
	}
}

// TestMessageTimelineFailed: a failed message's timeline ends with the
// failure and its reason.
func TestMessageTimelineFailed(t *testing.T) {
	f := setup(t)
	f.prov.SetSink(f.svc)
	id := f.sendText("acme", "+254712340000", "to nowhere") // the fake's undeliverable numbers end in 0000
	f.clock.Advance(time.Second)
	f.dispatch()
	f.clock.Advance(time.Second)
	if _, err := f.prov.Flush(f.ctx); err != nil {
		t.Fatal(err)
	}
	m, err := f.svc.Workspace("acme").Messages.Get(f.ctx, id)
	if err != nil || m.Status != messaging.StatusFailed || m.FailureReason == "" {
		t.Fatalf("message = %+v, %v; want failed with a reason", m, err)
	}
	r := f.get("/w/acme/messages/" + id)
	steps, region := timeline(t, r.body)
	if len(steps) == 0 || steps[len(steps)-1] != "failed 2026-11-24 10:30:02 UTC" {
		t.Errorf("timeline %v does not end failed at 10:30:02", steps)
	}
	if !strings.Contains(region, html.EscapeString(m.FailureReason)) || !strings.Contains(region, `data-final="true"`) {
		t.Errorf("the failed timeline lacks its reason %q or is not final: %s", m.FailureReason, region)
	}
}

// TestMessageOfAnotherWorkspace: another workspace's message is not found,
// and so is a message of a workspace the viewer may not see.
func TestMessageOfAnotherWorkspace(t *testing.T) {
	f := setup(t)
	theirs := f.sendText("other", "+254712345678", "secret plans")
	r := f.get("/w/acme/messages/" + theirs)
	if r.status != http.StatusNotFound || strings.Contains(r.body, "secret plans") {
		t.Errorf("another workspace's message answered %d", r.status)
	}
	f.as = "acme"
	if r := f.get("/w/other/messages/" + theirs); r.status != http.StatusNotFound {
		t.Errorf("a message of a workspace the viewer may not see answered %d", r.status)
	}
	if r := f.get("/w/acme/messages"); r.status != http.StatusOK || slices.Contains(messageIDs(r.body), theirs) {
		t.Errorf("acme's log answered %d or lists other's message", r.status)
	}
}

// TestInboundMessageContent: the page of a rich inbound message shows its
// content: the media's type and provider id, the reaction with a link to
// the message reacted to, an unsupported message's provider type.
func TestInboundMessageContent(t *testing.T) {
	f := setup(t)
	in := func(id, typ string, c *messaging.InboundContent) string {
		t.Helper()
		m, err := f.svc.RecordInbound(f.ctx, &messaging.InboundMessage{WorkspaceID: "acme", Channel: "whatsapp", From: "+254712345678",
			ProviderMessageID: id, Type: typ, Content: c})
		if err != nil {
			t.Fatal(err)
		}
		return m.ID
	}
	doc := in("wamid.d", "document", &messaging.InboundContent{Media: &record.InboundMedia{ProviderMediaID: "m-9", MimeType: "application/pdf", Filename: "invoice.pdf"}})
	f.get("/w/acme/messages/"+doc).wantContains(t, "application/pdf", "<code>m-9</code>", "invoice.pdf")
	odd := in("wamid.o", "order", nil)
	f.get("/w/acme/messages/"+odd).wantContains(t, "Provider type", "<code>order</code>")
	// A reaction to a message the workspace has no provider id for keeps
	// the provider's id.
	react := in("wamid.r", "reaction", &messaging.InboundContent{Reaction: &record.Reaction{ProviderMessageID: "wamid.unknown", Emoji: "👍"}})
	f.get("/w/acme/messages/"+react).wantContains(t, "👍", "<code>wamid.unknown</code>")
}

// TestMessageMediaDownload: an inbound message's page links its media, and
// the link streams it through the service with its type and file name;
// another workspace's message is a 404.
func TestMessageMediaDownload(t *testing.T) {
	f := setup(t)
	doc, err := f.svc.RecordInbound(f.ctx, &messaging.InboundMessage{WorkspaceID: "acme", Channel: "whatsapp", From: "254712345678",
		ProviderMessageID: "wamid.doc", Type: "document", Content: &messaging.InboundContent{
			Media: &record.InboundMedia{ProviderMediaID: "m-77", MimeType: "application/pdf", Filename: "invoice.pdf"}}})
	if err != nil {
		t.Fatal(err)
	}
	link := "/dashboard/w/acme/messages/" + doc.ID + "/media"
	f.get("/w/acme/messages/"+doc.ID).wantContains(t, `href="`+link+`"`, "Download the media")
	req, _ := http.NewRequest(http.MethodGet, f.srv.URL+link, nil)
	req.Header.Set("X-Viewer", "op")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || string(body) != string(fakeprovider.MediaBytes("m-77")) ||
		res.Header.Get("Content-Type") != "application/pdf" || res.Header.Get("Content-Disposition") != "attachment; filename=invoice.pdf" {
		t.Errorf("media download: %d %q %q, %d bytes", res.StatusCode, res.Header.Get("Content-Type"), res.Header.Get("Content-Disposition"), len(body))
	}
	if r := f.get("/w/other/messages/" + doc.ID + "/media"); r.status != http.StatusNotFound {
		t.Errorf("another workspace's media answered %d; want 404", r.status)
	}
}
