package fakeprovider_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ujumbe/messaging/record"

	"github.com/google/go-cmp/cmp"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/internal/testclock"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/provider/providertest"
	"github.com/ujumbe/messaging/store/memstore"
)

func TestConformance(t *testing.T) {
	providertest.Run(t, providertest.Harness{
		NewProvider: func(t *testing.T, _ *httptest.Server) messaging.Provider {
			return fakeprovider.NewWithOptions(&fakeprovider.Options{Templates: fakeprovider.StaticTemplates(providertest.Templates()...)})
		},
	}, providertest.RichCases())
}

var t0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// clock is a settable clock.
type clock = testclock.Clock

// sink records the reports applied to it. Ids in known are found; others
// are not_found. fail makes the next call return an error.
type sink struct {
	mu      sync.Mutex
	known   map[string]bool
	applied []messaging.ProviderStatus
	// correlated holds "<workspace>/<message id>" of each applied report:
	// applied keeps the rest, so that tables of reports stay short.
	correlated []string
	fail       error
	notify     chan struct{} // signalled after each applied report, if not nil
}

func (s *sink) ApplyProviderStatus(_ context.Context, p *messaging.ProviderStatus) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		err := s.fail
		s.fail = nil
		return false, err
	}
	if !s.known[p.ProviderMessageID] {
		return false, &messaging.Error{Code: messaging.CodeNotFound, Message: "provider message not found"}
	}
	r := *p
	s.correlated = append(s.correlated, r.WorkspaceID+"/"+r.MessageID)
	r.WorkspaceID, r.MessageID = "", ""
	s.applied = append(s.applied, r)
	if s.notify != nil {
		select {
		case s.notify <- struct{}{}:
		default:
		}
	}
	return true, nil
}

func (s *sink) know(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.known == nil {
		s.known = map[string]bool{}
	}
	s.known[id] = true
}

func (s *sink) got() []messaging.ProviderStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]messaging.ProviderStatus(nil), s.applied...)
}

func text(to, body string) *messaging.Message {
	return &messaging.Message{ID: "msg_1", WorkspaceID: "ws_1", Channel: messaging.ChannelWhatsApp, To: to, Type: record.TypeText, Text: body}
}

func send(t *testing.T, p *fakeprovider.Provider, m *messaging.Message) string {
	t.Helper()
	r, err := p.Send(t.Context(), nil, m)
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	return r.ProviderMessageID
}

func flush(t *testing.T, p *fakeprovider.Provider, wantN int) {
	t.Helper()
	n, err := p.Flush(t.Context())
	if err != nil {
		t.Fatalf("Flush: %v", err)
	}
	if n != wantN {
		t.Fatalf("Flush applied %d reports, want %d", n, wantN)
	}
}

func st(id, status string) messaging.ProviderStatus {
	return messaging.ProviderStatus{ProviderMessageID: id, Status: status}
}

func TestReportsFollowTheClock(t *testing.T) {
	t.Parallel()
	c := testclock.New(t0)
	s := &sink{}
	p := fakeprovider.NewWithOptions(&fakeprovider.Options{Clock: c.Now, DeliveredAfter: 2 * time.Second, ReadAfter: 5 * time.Second, Sink: s})
	id1 := send(t, p, text("+254712345678", "one"))
	c.Advance(time.Second)
	id2 := send(t, p, text("+254712345679", "two"))
	if id1 == id2 || id1 != "wamid.fake.000001" || id2 != "wamid.fake.000002" {
		t.Fatalf("ids = %q, %q, want wamid.fake.000001 and wamid.fake.000002", id1, id2)
	}
	s.know(id1)
	s.know(id2)

	flush(t, p, 0) // t0+1s: nothing is due
	c.Advance(time.Second)
	flush(t, p, 1) // t0+2s: id1 delivered
	c.Advance(time.Second)
	flush(t, p, 1) // t0+3s: id2 delivered
	c.Advance(10 * time.Second)
	flush(t, p, 2) // both read, id1 first
	flush(t, p, 0)
	want := []messaging.ProviderStatus{
		st(id1, "delivered"), st(id2, "delivered"), st(id1, "read"), st(id2, "read"),
	}
	if diff := cmp.Diff(want, s.got()); diff != "" {
		t.Errorf("reports (-want +got):\n%s", diff)
	}
	if n := len(p.Pending()); n != 0 {
		t.Errorf("%d reports still pending", n)
	}
}

func TestReportWaitsForTheDispatcher(t *testing.T) {
	t.Parallel()
	c := testclock.New(t0)
	s := &sink{}
	p := fakeprovider.NewWithOptions(&fakeprovider.Options{Clock: c.Now, Sink: s})
	id := send(t, p, text("+254712345678", "hi"))

	// The dispatcher has not recorded the provider id: nothing is applied
	// and nothing is lost, and read does not overtake delivered.
	flush(t, p, 0)
	flush(t, p, 0)
	if got := p.Pending(); len(got) != 2 {
		t.Fatalf("pending = %+v, want delivered and read kept", got)
	}
	s.know(id)
	flush(t, p, 2)
	if diff := cmp.Diff([]messaging.ProviderStatus{st(id, "delivered"), st(id, "read")}, s.got()); diff != "" {
		t.Errorf("reports (-want +got):\n%s", diff)
	}
}

func TestSinkErrorKeepsReport(t *testing.T) {
	t.Parallel()
	s := &sink{fail: errors.New("database is locked")}
	p := fakeprovider.NewWithOptions(&fakeprovider.Options{Clock: func() time.Time { return t0 }, ReadAfter: -1, Sink: s})
	id := send(t, p, text("+254712345678", "hi"))
	s.know(id)
	n, err := p.Flush(t.Context())
	if err == nil || n != 0 {
		t.Fatalf("Flush = %d, %v; want 0 and the sink's error", n, err)
	}
	flush(t, p, 1)
	if diff := cmp.Diff([]messaging.ProviderStatus{st(id, "delivered")}, s.got()); diff != "" {
		t.Errorf("reports (-want +got):\n%s", diff)
	}
}

func TestUnknownReportIsDroppedAfterRetryFor(t *testing.T) {
	t.Parallel()
	c := testclock.New(t0)
	s := &sink{}
	p := fakeprovider.NewWithOptions(&fakeprovider.Options{Clock: c.Now, ReadAfter: -1, RetryFor: time.Hour, Sink: s})
	send(t, p, text("+254712345678", "hi"))
	c.Advance(time.Hour)
	flush(t, p, 0)
	if len(p.Pending()) != 1 {
		t.Fatal("report dropped before RetryFor")
	}
	c.Advance(time.Second)
	flush(t, p, 0)
	if got := p.Pending(); len(got) != 0 {
		t.Fatalf("pending = %+v, want the report dropped after RetryFor", got)
	}
}

func TestNoSink(t *testing.T) {
	t.Parallel()
	p := fakeprovider.New()
	send(t, p, text("+254712345678", "hi"))
	if _, err := p.Flush(t.Context()); err == nil {
		t.Fatal("Flush without a Sink reported no error")
	}
	if len(p.Pending()) != 2 {
		t.Fatal("reports lost without a Sink")
	}
	s := &sink{known: map[string]bool{"wamid.fake.000001": true}}
	p.SetSink(s)
	flush(t, p, 2)
}

func TestNegativeDurationsDisableReports(t *testing.T) {
	t.Parallel()
	p := fakeprovider.NewWithOptions(&fakeprovider.Options{DeliveredAfter: -1})
	send(t, p, text("+254712345678", "hi"))
	if got := p.Pending(); len(got) != 0 {
		t.Errorf("pending = %+v, want none", got)
	}
	p = fakeprovider.NewWithOptions(&fakeprovider.Options{ReadAfter: -1})
	send(t, p, text("+254712345678", "hi"))
	if got := p.Pending(); len(got) != 1 || got[0].Status.Status != "delivered" {
		t.Errorf("pending = %+v, want delivered only", got)
	}
}

func TestUndeliverableNumberFailsLater(t *testing.T) {
	t.Parallel()
	c := testclock.New(t0)
	s := &sink{}
	p := fakeprovider.NewWithOptions(&fakeprovider.Options{Clock: c.Now, DeliveredAfter: time.Second, ReadAfter: time.Second, Sink: s})
	id := send(t, p, text("+254712340000", "hi"))
	s.know(id)
	flush(t, p, 0)
	c.Advance(time.Minute)
	flush(t, p, 1)
	want := []messaging.ProviderStatus{{ProviderMessageID: id, Status: "failed", Code: "131026", Text: "Message undeliverable"}}
	if diff := cmp.Diff(want, s.got()); diff != "" {
		t.Errorf("reports (-want +got):\n%s", diff)
	}
}

func TestCustomerServiceWindow(t *testing.T) {
	t.Parallel()
	c := testclock.New(t0)
	tpl := &messaging.Template{Name: "hello", Language: "en", Status: record.TemplateApproved,
		Components: []messaging.TemplateComponent{{Type: "BODY", Text: "Hello"}}}
	p := fakeprovider.NewWithOptions(&fakeprovider.Options{Clock: c.Now, CustomerServiceWindow: true, Templates: fakeprovider.StaticTemplates(tpl)})
	const to = "+254712345678"
	refused := func(label string, m *messaging.Message) {
		t.Helper()
		_, err := p.Send(t.Context(), nil, m)
		var se *messaging.SendError
		if !errors.As(err, &se) || se.Code != "131047" || se.Text != "Re-engagement message" || se.Retryable {
			t.Errorf("%s: err = %v, want permanent 131047 Re-engagement message", label, err)
		}
	}
	refused("no inbound yet", text(to, "hi"))
	template := &messaging.Message{WorkspaceID: "ws_1", Channel: "whatsapp", To: to, Type: "template", TemplateName: "hello", Language: "en"}
	send(t, p, template) // templates are always allowed
	fb := &messaging.Message{WorkspaceID: "ws_1", Channel: "messenger", To: "123456", Type: "text", Text: "hi"}
	send(t, p, fb) // the window is WhatsApp's

	p.Inbound("ws_1", "254712345678", t0) // without '+'
	p.Inbound("ws_2", to, t0.Add(time.Hour))
	c.Advance(23 * time.Hour)
	send(t, p, text(to, "within the window"))
	c.Advance(time.Hour)
	refused("24 h after the inbound", text(to, "too late"))
	p.Inbound("ws_1", to, t0.Add(-time.Hour)) // older than the latest inbound: changes nothing
	refused("an older inbound does not reopen the window", text(to, "too late"))
	p.Inbound("ws_1", to, c.Now())
	send(t, p, text(to, "reopened"))
	if n := len(p.Sent()); n != 4 {
		t.Errorf("Sent() holds %d messages, want the 4 accepted", n)
	}
}

func intp(i int) *int { return &i }

func TestTemplateRules(t *testing.T) {
	t.Parallel()
	ts := []*messaging.Template{
		{Name: "promo", Language: "en", Status: record.TemplateApproved, Components: []messaging.TemplateComponent{
			{Type: "HEADER", Format: "TEXT", Text: "Hi {{1}}"},
			{Type: "BODY", Text: "Use {{1}} by {{2}}, {{1}}!"},
			{Type: "BUTTONS", Buttons: []messaging.TemplateButton{
				{Type: "QUICK_REPLY", Text: "Stop"},
				{Type: "URL", Text: "Shop", URL: "https://example.com/shop/{{1}}"},
			}},
		}},
		{Name: "photo", Language: "sw", Status: record.TemplateApproved, Components: []messaging.TemplateComponent{
			{Type: "HEADER", Format: "IMAGE"}, {Type: "BODY", Text: "Karibu"},
		}},
		{Name: "static_link", Language: "en", Status: record.TemplateApproved, Components: []messaging.TemplateComponent{
			{Type: "BODY", Text: "See"}, {Type: "BUTTONS", Buttons: []messaging.TemplateButton{{Type: "URL", Text: "Go", URL: "https://example.com/"}}},
		}},
		{Name: "paused", Language: "en", Status: record.TemplatePaused, Components: []messaging.TemplateComponent{{Type: "BODY", Text: "x"}}},
		{Name: "disabled", Language: "en", Status: record.TemplateDisabled, Components: []messaging.TemplateComponent{{Type: "BODY", Text: "x"}}},
		{Name: "pending", Language: "en", Status: record.TemplatePending, Components: []messaging.TemplateComponent{{Type: "BODY", Text: "x"}}},
		{Name: "other_ws", WorkspaceID: "ws_2", Language: "en", Status: record.TemplateApproved, Components: []messaging.TemplateComponent{{Type: "BODY", Text: "x"}}},
	}
	tx := func(s ...string) []messaging.SendParameter {
		var ps []messaging.SendParameter
		for _, v := range s {
			ps = append(ps, messaging.SendParameter{Type: "text", Text: v})
		}
		return ps
	}
	header := messaging.SendComponent{Type: "header", Parameters: tx("Amina")}
	body := messaging.SendComponent{Type: "body", Parameters: tx("CODE", "Friday")}
	urlButton := messaging.SendComponent{Type: "button", SubType: "url", Index: intp(1), Parameters: tx("summer")}
	img := messaging.SendComponent{Type: "header", Parameters: []messaging.SendParameter{{Type: "image", Link: "https://example.com/a.jpg"}}}
	for _, c := range []struct {
		name, tpl, lang string
		cs              []messaging.SendComponent
		code            string
	}{
		{"all parameters", "promo", "en", []messaging.SendComponent{header, body, urlButton}, ""},
		{"quick reply payload is optional and allowed", "promo", "en", []messaging.SendComponent{header, body, urlButton,
			{Type: "button", SubType: "quick_reply", Index: intp(0), Parameters: []messaging.SendParameter{{Type: "payload", Payload: "STOP"}}}}, ""},
		{"body split over two components counts both", "promo", "en", []messaging.SendComponent{header,
			{Type: "body", Parameters: tx("CODE")}, {Type: "body", Parameters: tx("Friday")}, urlButton}, ""},
		{"unknown name", "promo2", "en", nil, "132001"},
		{"language differs", "promo", "en_US", []messaging.SendComponent{header, body, urlButton}, "132001"},
		{"pending template", "pending", "en", nil, "132001"},
		{"template of another workspace", "other_ws", "en", nil, "132001"},
		{"paused template", "paused", "en", nil, "132015"},
		{"disabled template", "disabled", "en", nil, "132016"},
		{"header parameter missing", "promo", "en", []messaging.SendComponent{body, urlButton}, "132000"},
		{"too many header parameters", "promo", "en", []messaging.SendComponent{{Type: "header", Parameters: tx("a", "b")}, body, urlButton}, "132000"},
		{"body parameters missing", "promo", "en", []messaging.SendComponent{header, urlButton}, "132000"},
		{"url button missing", "promo", "en", []messaging.SendComponent{header, body}, "131008"},
		{"url button without parameters", "promo", "en", []messaging.SendComponent{header, body, {Type: "button", SubType: "url", Index: intp(1)}}, "131008"},
		{"url button at the quick reply's index", "promo", "en", []messaging.SendComponent{header, body, {Type: "button", SubType: "url", Index: intp(0), Parameters: tx("x")}}, "131009"},
		{"button index beyond the template's buttons", "promo", "en", []messaging.SendComponent{header, body, urlButton, {Type: "button", SubType: "url", Index: intp(5), Parameters: tx("x")}}, "131009"},
		{"button without index", "promo", "en", []messaging.SendComponent{header, body, urlButton, {Type: "button", SubType: "url", Parameters: tx("x")}}, "131009"},
		{"static url button needs no parameter", "static_link", "en", nil, ""},
		{"image header", "photo", "sw", []messaging.SendComponent{img}, ""},
		{"image header missing", "photo", "sw", nil, "131008"},
		{"document given for an image header", "photo", "sw", []messaging.SendComponent{{Type: "header", Parameters: []messaging.SendParameter{{Type: "document", Link: "https://example.com/a.pdf"}}}}, "132012"},
		{"body parameter for a body without variables", "photo", "sw", []messaging.SendComponent{img, {Type: "body", Parameters: tx("x")}}, "132000"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p := fakeprovider.NewWithOptions(&fakeprovider.Options{Templates: fakeprovider.StaticTemplates(ts...)})
			m := &messaging.Message{WorkspaceID: "ws_1", Channel: "whatsapp", To: "+254712345678", Type: "template",
				TemplateName: c.tpl, Language: c.lang, Components: c.cs}
			r, err := p.Send(t.Context(), nil, m)
			if c.code == "" {
				if err != nil || r == nil || r.ProviderMessageID == "" {
					t.Fatalf("Send = %+v, %v; want accepted", r, err)
				}
				return
			}
			var se *messaging.SendError
			if !errors.As(err, &se) || se.Code != c.code || se.Retryable || se.Text == "" {
				t.Fatalf("Send error = %v, want permanent SendError %s", err, c.code)
			}
			if len(p.Sent()) != 0 || len(p.Pending()) != 0 {
				t.Error("a refused message was recorded or scheduled")
			}
		})
	}
}

func TestTemplateLookupError(t *testing.T) {
	t.Parallel()
	boom := errors.New("store is down")
	p := fakeprovider.NewWithOptions(&fakeprovider.Options{Templates: func(context.Context, string, string, string) (*messaging.Template, error) {
		return nil, boom
	}})
	_, err := p.Send(t.Context(), nil, &messaging.Message{Channel: "whatsapp", To: "+254712345678", Type: "template", TemplateName: "x", Language: "en"})
	var se *messaging.SendError
	if !errors.Is(err, boom) || errors.As(err, &se) {
		t.Fatalf("err = %v, want the lookup error as a (retryable) non-SendError", err)
	}
}

func TestMalformedMessages(t *testing.T) {
	t.Parallel()
	p := fakeprovider.New()
	for _, m := range []*messaging.Message{
		nil,
		{},
		{Channel: "telegram", To: "+254712345678", Type: "text", Text: "x"},
		{Channel: "whatsapp", Type: "text", Text: "x"},
		{Channel: "whatsapp", To: "0712345678", Type: "text", Text: "x"},
		{Channel: "whatsapp", To: "+2547123456789012345", Type: "text", Text: "x"},
		{Channel: "whatsapp", To: "+254712345678", Type: "text", Text: "   "},
		{Channel: "whatsapp", To: "+254712345678", Type: "image"},
		{Channel: "messenger", To: "123", Type: "sticker", MediaURL: "https://example.com/s.webp"},
		{Channel: "whatsapp", To: "+254712345678", Type: "poll", Text: "x"},
		{Channel: "messenger", To: "123", Type: "template", TemplateName: "x", Language: "en"},
		{Channel: "whatsapp", To: "+254712345678", Type: "template"},
	} {
		_, err := p.Send(t.Context(), nil, m)
		var se *messaging.SendError
		if !errors.As(err, &se) || se.Code != "100" || se.Retryable {
			t.Errorf("Send(%+v) = %v, want permanent 100", m, err)
		}
	}
	if len(p.Sent()) != 0 {
		t.Errorf("malformed messages were recorded: %d", len(p.Sent()))
	}
}

func TestFailNext(t *testing.T) {
	t.Parallel()
	p := fakeprovider.New()
	rate := &messaging.SendError{Code: "130429", Text: "Rate limit hit", Retryable: true, RetryAfter: time.Minute}
	transport := errors.New("connection reset")
	p.FailNext(rate, transport)
	m := text("+254712345678", "hi")
	if _, err := p.Send(t.Context(), nil, m); err != rate {
		t.Errorf("first Send = %v, want the scripted rate limit", err)
	}
	if _, err := p.Send(t.Context(), nil, m); err != transport {
		t.Errorf("second Send = %v, want the scripted transport error", err)
	}
	if id := send(t, p, m); id != "wamid.fake.000001" {
		t.Errorf("third Send id = %q, want wamid.fake.000001", id)
	}
	if n := len(p.Sent()); n != 1 {
		t.Errorf("Sent() holds %d, want 1", n)
	}
}

func TestSentIsACopy(t *testing.T) {
	t.Parallel()
	p := fakeprovider.NewWithOptions(&fakeprovider.Options{IDPrefix: "wamid.run7."})
	m := &messaging.Message{Channel: "whatsapp", To: "+254712345678", Type: "template", TemplateName: "t", Language: "en",
		Components: []messaging.SendComponent{{Type: "button", SubType: "url", Index: intp(0), Parameters: []messaging.SendParameter{{Type: "text", Text: "a"}}}}}
	if id := send(t, p, m); id != "wamid.run7.000001" {
		t.Errorf("id = %q, want the IDPrefix", id)
	}
	*m.Components[0].Index = 3
	m.Components[0].Parameters[0].Text = "changed"
	got := p.Sent()[0]
	if *got.Components[0].Index != 0 || got.Components[0].Parameters[0].Text != "a" {
		t.Error("Sent() shares memory with the caller's message")
	}
	got.Components[0].Parameters[0].Text = "mutated"
	if p.Sent()[0].Components[0].Parameters[0].Text != "a" {
		t.Error("Sent() returns the provider's own record")
	}
}

func TestConcurrentSendAndFlush(t *testing.T) {
	t.Parallel()
	c := testclock.New(t0)
	s := &sink{}
	p := fakeprovider.NewWithOptions(&fakeprovider.Options{Clock: c.Now, Sink: s})
	for i := range 50 {
		s.know(fmt.Sprintf("wamid.fake.%06d", i+1))
	}
	var wg sync.WaitGroup
	for range 5 {
		wg.Go(func() {
			for range 10 {
				send(t, p, text("+254712345678", "hi"))
				if _, err := p.Flush(t.Context()); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	flush(t, p, len(p.Pending()))
	got := s.got()
	if len(got) != 100 {
		t.Fatalf("applied %d reports, want 100", len(got))
	}
	// For every message, delivered came before read.
	pos := map[string]int{}
	for i, r := range got {
		if r.Status == "delivered" {
			pos[r.ProviderMessageID] = i
		} else if d, ok := pos[r.ProviderMessageID]; !ok || d > i {
			t.Fatalf("read of %s applied before its delivered", r.ProviderMessageID)
		}
	}
}

func TestRunFlushes(t *testing.T) {
	t.Parallel()
	s := &sink{known: map[string]bool{"wamid.fake.000001": true}, notify: make(chan struct{}, 1)}
	p := fakeprovider.NewWithOptions(&fakeprovider.Options{Sink: s, ReadAfter: -1, FlushInterval: time.Millisecond})
	send(t, p, text("+254712345678", "hi"))
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	// Run flushes at once; wait for the report through the sink.
	select {
	case <-s.notify:
	case <-time.After(10 * time.Second):
		t.Fatal("Run applied nothing")
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Run = %v, want context.Canceled", err)
	}
	if diff := cmp.Diff([]messaging.ProviderStatus{st("wamid.fake.000001", "delivered")}, s.got()); diff != "" {
		t.Errorf("reports (-want +got):\n%s", diff)
	}
}

// TestWithService runs the fake against a real Service on memstore: the
// reports, which carry the message's id, confirm the send before the
// dispatcher records it (as after a send whose answer was lost): the
// message moves to delivered and read with the provider's id, and the
// dispatcher's sent changes nothing after.
func TestWithService(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	c := testclock.New(t0)
	store := memstore.New()
	p := fakeprovider.NewWithOptions(&fakeprovider.Options{Clock: c.Now, DeliveredAfter: time.Second, ReadAfter: time.Minute})
	svc, err := messaging.New(store, p, &messaging.Options{Clock: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	p.SetSink(svc)
	if _, err := svc.CreateWorkspace(ctx, &messaging.CreateWorkspaceParams{ID: "ws_1", Name: "One", Channels: svc.Channels()}); err != nil {
		t.Fatal(err)
	}
	res, err := svc.Workspace("ws_1").Messages.Send(ctx, &messaging.SendParams{Channel: "whatsapp", To: "+254712345678", Type: "text", Text: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := svc.Workspace("ws_1").Messages.Get(ctx, res.MessageID)
	if err != nil {
		t.Fatal(err)
	}
	r, err := p.Send(ctx, nil, m)
	if err != nil {
		t.Fatal(err)
	}
	c.Advance(time.Hour)
	flush(t, p, 2) // applied at once, by the message id the reports carry
	got, err := svc.Workspace("ws_1").Messages.Get(ctx, m.ID)
	if err != nil || got.Status != messaging.StatusRead {
		t.Fatalf("after the reports: %v, %v; want read", got, err)
	}
	if raw, _ := store.MessageGet(ctx, "ws_1", m.ID); raw.ProviderMessageID != r.ProviderMessageID {
		t.Errorf("provider message id %q, want %q", raw.ProviderMessageID, r.ProviderMessageID)
	}
	if changed, err := svc.UpdateStatus(ctx, &messaging.StatusUpdate{WorkspaceID: "ws_1", MessageID: m.ID, Status: "sent", ProviderMessageID: r.ProviderMessageID}); err != nil || changed {
		t.Errorf("the dispatcher's sent after the reports: changed %v, %v; want no change", changed, err)
	}
}

func TestKeepSent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		keep int
		want []string
	}{
		{"all by default", 0, []string{"m0", "m1", "m2", "m3", "m4", "m5", "m6"}},
		{"the latest three", 3, []string{"m4", "m5", "m6"}},
		{"none", -1, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := fakeprovider.NewWithOptions(&fakeprovider.Options{KeepSent: tc.keep, DeliveredAfter: -1})
			for i := range 7 {
				m := text("+254712345678", "hi")
				m.ID = fmt.Sprint("m", i)
				send(t, p, m)
			}
			got := []string{}
			for _, m := range p.Sent() {
				got = append(got, m.ID)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Sent (-want +got):\n%s", diff)
			}
		})
	}
}

// orderSink records the reports applied to it per message, and how many
// calls ran at once; the message of hold is not_found.
type orderSink struct {
	mu        sync.Mutex
	byID      map[string][]string
	hold      string
	running   int
	maxInside int
}

func (s *orderSink) ApplyProviderStatus(_ context.Context, p *messaging.ProviderStatus) (bool, error) {
	s.mu.Lock()
	s.running++
	s.maxInside = max(s.maxInside, s.running)
	s.mu.Unlock()
	time.Sleep(time.Millisecond)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.running--
	if p.ProviderMessageID == s.hold {
		return false, &messaging.Error{Code: messaging.CodeNotFound, Message: "provider message not found"}
	}
	s.byID[p.ProviderMessageID] = append(s.byID[p.ProviderMessageID], p.Status)
	return true, nil
}

func TestFlushWorkersKeepEachMessagesOrder(t *testing.T) {
	t.Parallel()
	c := testclock.New(t0)
	s := &orderSink{byID: map[string][]string{}}
	p := fakeprovider.NewWithOptions(&fakeprovider.Options{Clock: c.Now, Sink: s, FlushWorkers: 4})
	var ids []string
	for range 20 {
		ids = append(ids, send(t, p, text("+254712345678", "hi")))
	}
	s.hold = ids[3]
	flush(t, p, 2*19)
	for _, id := range ids {
		want := []string{"delivered", "read"}
		if id == s.hold {
			want = nil
		}
		if diff := cmp.Diff(want, s.byID[id]); diff != "" {
			t.Errorf("reports of %s (-want +got):\n%s", id, diff)
		}
	}
	if s.maxInside < 2 || s.maxInside > 4 {
		t.Errorf("%d reports were applied at once, want 2 to 4", s.maxInside)
	}
	// The held message's delivered and read are kept, in order.
	got := p.Pending()
	if len(got) != 2 || got[0].Status.Status != "delivered" || got[1].Status.Status != "read" {
		t.Errorf("pending = %+v, want the held message's delivered then read", got)
	}
}

func TestReportsScheduledOutOfOrderFlushInDueOrder(t *testing.T) {
	t.Parallel()
	c := testclock.New(t0)
	s := &sink{}
	p := fakeprovider.NewWithOptions(&fakeprovider.Options{Clock: c.Now, Sink: s, DeliveredAfter: 10 * time.Second, ReadAfter: -1})
	late := send(t, p, text("+254712345678", "hi"))
	c.Advance(-5 * time.Second) // a clock that stepped back
	early := send(t, p, text("+254712345679", "hi"))
	s.know(late)
	s.know(early)
	c.Advance(time.Hour)
	flush(t, p, 2)
	if diff := cmp.Diff([]messaging.ProviderStatus{st(early, "delivered"), st(late, "delivered")}, s.got()); diff != "" {
		t.Errorf("reports (-want +got):\n%s", diff)
	}
}

func TestMaxPendingMakesSendWait(t *testing.T) {
	t.Parallel()
	c := testclock.New(t0)
	s := &sink{}
	p := fakeprovider.NewWithOptions(&fakeprovider.Options{Clock: c.Now, Sink: s, MaxPending: 2})
	id := send(t, p, text("+254712345678", "hi")) // delivered and read: two pending
	s.know(id)

	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if _, err := p.Send(ctx, nil, text("+254712345679", "hi")); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Send with the pending reports at the bound: %v, want it to wait until its context ends", err)
	}

	// A Send waiting for room goes ahead once Flush applies a report.
	done := make(chan error, 1)
	go func() {
		_, err := p.Send(t.Context(), nil, text("+254712345679", "hi"))
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("Send did not wait: %v", err)
	case <-time.After(20 * time.Millisecond):
	}
	flush(t, p, 2)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Send after Flush: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Send still waits after Flush made room")
	}
	if got := len(p.Pending()); got != 2 {
		t.Errorf("%d reports pending, want the second message's two", got)
	}
}

// TestReSendStormDoesNotBlockSends: a storm of sends whose messages the
// Sink never learns (a store that refuses to record them) fills the
// pending reports; Send then drops the oldest reports of those unknown
// messages, says so in the log, and never waits; a known message sent
// afterwards is reported as usual.
func TestReSendStormDoesNotBlockSends(t *testing.T) {
	t.Parallel()
	c := testclock.New(t0)
	s := &sink{}
	var logs strings.Builder
	var logMu sync.Mutex
	logger := slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &logMu}, nil))
	p := fakeprovider.NewWithOptions(&fakeprovider.Options{Clock: c.Now, Sink: s, MaxPending: 10, ReadAfter: -1, Logger: logger})
	for i := range 50 {
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
		_, err := p.Send(ctx, nil, text(fmt.Sprintf("+2547123456%02d", i), "hi"))
		cancel()
		if err != nil {
			t.Fatalf("send %d of the storm: %v; want no wait", i, err)
		}
		if _, err := p.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
		if n := len(p.Pending()); n > 10 {
			t.Fatalf("%d reports pending after send %d; want at most MaxPending (10)", n, i)
		}
	}
	logMu.Lock()
	drops := strings.Count(logs.String(), "dropped the oldest reports of unknown messages")
	logMu.Unlock()
	if drops == 0 {
		t.Error("no log line says that reports were dropped")
	}
	known := send(t, p, text("+254712345670", "hi"))
	s.know(known)
	if _, err := p.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := s.got(); len(got) != 1 || got[0].ProviderMessageID != known {
		t.Errorf("reports applied after the storm = %v; want the known message's delivered", got)
	}
}

// lockedWriter serialises writes to w.
type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// TestReportsCarryTheMessageID: every report names the workspace and the
// message it is about, as Meta echoes biz_opaque_callback_data.
func TestReportsCarryTheMessageID(t *testing.T) {
	t.Parallel()
	c := testclock.New(t0)
	p := fakeprovider.NewWithOptions(&fakeprovider.Options{Clock: c.Now})
	s := &sink{known: map[string]bool{}}
	p.SetSink(s)
	for _, m := range []*messaging.Message{
		{ID: "msg_a", WorkspaceID: "ws_1", Channel: "whatsapp", To: "+254712345678", Type: "text", Text: "hi"},
		{ID: "msg_b", WorkspaceID: "ws_2", Channel: "whatsapp", To: "+254712340000", Type: "text", Text: "hi"},
	} {
		r, err := p.Send(t.Context(), nil, m)
		if err != nil {
			t.Fatal(err)
		}
		s.known[r.ProviderMessageID] = true
	}
	flush(t, p, 3)
	if d := cmp.Diff([]string{"ws_1/msg_a", "ws_1/msg_a", "ws_2/msg_b"}, s.correlated); d != "" {
		t.Errorf("correlation of the reports (-want +got):\n%s", d)
	}
}

// TestHang: a send to a number ending in 0408, and the sends after
// HangNext, are accepted (recorded, reported) and not answered until the
// caller's context ends.
func TestHang(t *testing.T) {
	t.Parallel()
	c := testclock.New(t0)
	p := fakeprovider.NewWithOptions(&fakeprovider.Options{Clock: c.Now})
	s := &sink{known: map[string]bool{}}
	p.SetSink(s)
	send := func(id, to string) error {
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
		defer cancel()
		_, err := p.Send(ctx, nil, &messaging.Message{ID: id, WorkspaceID: "ws_1", Channel: "whatsapp", To: to, Type: "text", Text: "hi"})
		return err
	}
	p.HangNext(1)
	if err := send("msg_1", "+254712345678"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("after HangNext(1): %v, want the context's deadline", err)
	}
	if err := send("msg_2", "+254712345678"); err != nil {
		t.Errorf("the send after: %v, want it answered", err)
	}
	if err := send("msg_3", "+254712340408"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("to a number ending in 0408: %v, want the context's deadline", err)
	}
	var ids []string
	for _, m := range p.Sent() {
		ids = append(ids, m.ID)
	}
	if d := cmp.Diff([]string{"msg_1", "msg_2", "msg_3"}, ids); d != "" {
		t.Errorf("accepted sends (-want +got):\n%s", d)
	}
}
