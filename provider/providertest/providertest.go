// Package providertest is the conformance suite of messaging.Provider
// implementations, in the style of courier's handlertest: a table of send
// cases run by one runner.
//
// Each Case sends a message (Sends times) to a fresh provider and checks
// the outcome: a provider message id (non-empty, distinct per send, equal to
// ExpectedExtID when given) or an error (ExpectedError, compared on Code
// and Retryable, and on Text and RetryAfter when given; or ExpectedErrorIs).
// HTTP providers are given an httptest.Server that answers with the case's
// MockResponses, in order, and records every request, which the runner
// compares with ExpectedRequests (JSON bodies are compared after
// unmarshalling, with cmp.Diff).
//
// Run first runs the common semantic cases (CommonCases), which every
// provider must pass whether or not it speaks HTTP: well-formed messages on
// every channel are accepted with distinct ids, a cancelled context returns
// an error, and template errors carry Meta's codes (132001, 132000, 131008)
// and are not retryable. A common case states the provider API's answer
// abstractly as a Verdict; an HTTP provider's Harness.Render turns it into
// that API's responses, while a provider without HTTP (fakeprovider) must
// reach the same verdict from the message itself, using the templates of
// Templates. Then Run runs the provider's own cases, typically the exact
// HTTP shapes of its API.
//
// A provider's test calls it like this:
//
//	func TestConformance(t *testing.T) {
//		providertest.Run(t, providertest.Harness{
//			NewProvider: func(t *testing.T, srv *httptest.Server) messaging.Provider { ... },
//			Render:      renderGraph,
//			Sender:      func(m *messaging.Message) *messaging.ChannelSender { ... },
//		}, ownCases)
//	}
package providertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ujumbe/messaging/record"

	"github.com/google/go-cmp/cmp"

	"github.com/ujumbe/messaging"
)

// MockResponse is one answer of the mock HTTP server.
type MockResponse struct {
	// Status is the HTTP status. Default 200.
	Status int
	// Body is sent as it is.
	Body string
	// Headers are added to the answer. Default Content-Type is
	// application/json.
	Headers map[string]string
}

// ExpectedRequest is an HTTP request the provider must make.
type ExpectedRequest struct {
	// Method is the HTTP method, for example "POST".
	Method string
	// Path is the URL path, for example "/v21.0/1234/messages".
	Path string
	// Body is JSON, compared with the request's body after unmarshalling
	// both. Empty means an empty body.
	Body string
	// Headers must be present with exactly these values; other headers
	// are not checked.
	Headers map[string]string
}

// Verdict is the provider API's answer to one send of a common case, in
// terms every provider understands.
type Verdict struct {
	// ID is the provider message id of an accepted send; empty for a
	// refusal.
	ID string
	// Code is the provider's error code of a refusal, for example
	// "132001".
	Code string
	// Text is the provider's error text of a refusal.
	Text string
	// HTTPStatus is the status an HTTP API answers a refusal with.
	HTTPStatus int
}

// Case is one send case.
type Case struct {
	// Label names the case (the subtest name).
	Label string
	// Msg is the message sent. The runner sends a copy each time.
	Msg *messaging.Message
	// Sends is how many times Msg is sent to the same provider. Default 1.
	Sends int
	// Cancel sends with an already cancelled context.
	Cancel bool
	// Verdict is the API's answer for common cases, rendered into
	// MockResponses by Harness.Render (one per send, with ".1", ".2", ...
	// appended to ID when Sends > 1).
	Verdict *Verdict
	// MockResponses are the mock server's answers, in order, for cases of
	// HTTP providers. An unexpected request gets a 599 answer and fails the
	// case.
	MockResponses []MockResponse
	// ExpectedRequests, when not nil, are compared with the requests the
	// server received.
	ExpectedRequests []ExpectedRequest
	// ExpectedExtID, when not empty, is the provider message id a
	// successful send must return.
	ExpectedExtID string
	// ExpectedError, when not nil, is the *messaging.SendError every send
	// must fail with, compared on Code and Retryable, on Text when it is
	// not empty (the error's Text must start with it, since providers may
	// append details) and on RetryAfter when it is not zero.
	ExpectedError *messaging.SendError
	// ExpectedErrorIs, when not nil, must match every send's error with
	// errors.Is, and that error must not be a permanent SendError.
	ExpectedErrorIs error
}

// Harness builds the provider under test.
type Harness struct {
	// NewProvider returns a fresh provider for one case. An HTTP provider
	// sends to server.URL; others ignore server.
	NewProvider func(t *testing.T, server *httptest.Server) messaging.Provider
	// Render turns a Verdict into the responses of the provider's HTTP
	// API for m. Nil for a provider without HTTP.
	Render func(m *messaging.Message, v Verdict) []MockResponse
	// Sender returns the sender each send of m is handed (as the
	// service's dispatcher resolves it: the workspace's connection on m's
	// channel); nil, or a nil Sender, hands none (a provider that needs
	// no credentials).
	Sender func(m *messaging.Message) *messaging.ChannelSender
}

// WorkspaceID is the workspace of the common cases' messages.
const WorkspaceID = "ws_providertest"

// Recipients of the common cases.
const (
	PhoneOK            = "+254712345678"
	PhoneUndeliverable = "+254712340000"
	PSID               = "6543210987654321"
	IGSID              = "17841400000000001"
)

// Templates returns the approved templates the common cases send, as the
// provider knows them (WorkspaceID is WorkspaceID):
//
//   - order_update (en): body "Hi {{1}}, your order {{2}} has shipped."
//   - login_code (en, AUTHENTICATION): body "{{1}} is your code." and a
//     COPY_CODE button.
//   - invoice (en): DOCUMENT header, body "Invoice {{1}} is ready." and a
//     URL button "https://example.com/pay/{{1}}".
func Templates() []*messaging.Template {
	t := func(name, cat string, cs ...messaging.TemplateComponent) *messaging.Template {
		return &messaging.Template{ID: "tpl_" + name, WorkspaceID: WorkspaceID, Name: name, Category: cat,
			Language: "en", Status: record.TemplateApproved, Components: cs}
	}
	return []*messaging.Template{
		t("order_update", record.CategoryUtility,
			messaging.TemplateComponent{Type: "BODY", Text: "Hi {{1}}, your order {{2}} has shipped."}),
		t("login_code", record.CategoryAuthentication,
			messaging.TemplateComponent{Type: "BODY", Text: "{{1}} is your code."},
			messaging.TemplateComponent{Type: "BUTTONS", Buttons: []messaging.TemplateButton{{Type: "COPY_CODE", Example: "123456"}}}),
		t("invoice", record.CategoryUtility,
			messaging.TemplateComponent{Type: "HEADER", Format: "DOCUMENT"},
			messaging.TemplateComponent{Type: "BODY", Text: "Invoice {{1}} is ready."},
			messaging.TemplateComponent{Type: "BUTTONS", Buttons: []messaging.TemplateButton{{Type: "URL", Text: "Pay", URL: "https://example.com/pay/{{1}}"}}}),
	}
}

func text(s string) messaging.SendParameter { return messaging.SendParameter{Type: "text", Text: s} }

func intp(i int) *int { return &i }

// CommonCases returns the semantic cases every provider passes; Run runs
// them first.
func CommonCases() []Case {
	msg := func(channel, to, typ string) *messaging.Message {
		return &messaging.Message{ID: "msg_common", WorkspaceID: WorkspaceID, ConversationID: "conv_common",
			Channel: channel, To: to, Direction: record.DirectionOutbound, Status: messaging.StatusQueued, Type: typ}
	}
	waText := msg(messaging.ChannelWhatsApp, PhoneOK, record.TypeText)
	waText.Text = "Hello from the conformance suite"
	image := msg(messaging.ChannelWhatsApp, PhoneOK, record.TypeImage)
	image.MediaURL, image.Caption = "https://example.com/a.jpg", "A picture"
	doc := msg(messaging.ChannelWhatsApp, PhoneOK, record.TypeDocument)
	doc.MediaURL, doc.Filename = "https://example.com/a.pdf", "a.pdf"
	fbText := msg(messaging.ChannelMessenger, PSID, record.TypeText)
	fbText.Text = "Hello on Messenger"
	igImage := msg(messaging.ChannelInstagram, IGSID, record.TypeImage)
	igImage.MediaURL = "https://example.com/b.jpg"
	undeliverable := msg(messaging.ChannelWhatsApp, PhoneUndeliverable, record.TypeText)
	undeliverable.Text = "Hello?"

	tpl := func(name, lang string, cs ...messaging.SendComponent) *messaging.Message {
		m := msg(messaging.ChannelWhatsApp, PhoneOK, record.TypeTemplate)
		m.TemplateName, m.Language, m.Components = name, lang, cs
		return m
	}
	orderBody := messaging.SendComponent{Type: "body", Parameters: []messaging.SendParameter{text("Amina"), text("A-1042")}}
	codeBody := messaging.SendComponent{Type: "body", Parameters: []messaging.SendParameter{text("123456")}}
	codeButton := messaging.SendComponent{Type: "button", SubType: "copy_code", Index: intp(0),
		Parameters: []messaging.SendParameter{{Type: "coupon_code", CouponCode: "123456"}}}
	invHeader := messaging.SendComponent{Type: "header", Parameters: []messaging.SendParameter{
		{Type: "document", Link: "https://example.com/inv.pdf", Filename: "inv.pdf"}}}
	invBody := messaging.SendComponent{Type: "body", Parameters: []messaging.SendParameter{text("INV-7")}}
	invButton := messaging.SendComponent{Type: "button", SubType: "url", Index: intp(0), Parameters: []messaging.SendParameter{text("inv-7")}}

	accept := func(id string) *Verdict { return &Verdict{ID: id} }
	refuse := func(code, txt string) (*Verdict, *messaging.SendError) {
		return &Verdict{Code: code, Text: txt, HTTPStatus: 400}, &messaging.SendError{Code: code, Text: txt}
	}
	v132001, e132001 := refuse("132001", "Template name does not exist in the translation")
	v132000, e132000 := refuse("132000", "Number of parameters does not match the expected number of params")
	v131008, e131008 := refuse("131008", "Required parameter is missing")

	return []Case{
		{Label: "whatsapp text is accepted", Msg: waText, Verdict: accept("wamid.common")},
		{Label: "each send gets its own id", Msg: waText, Sends: 3, Verdict: accept("wamid.common")},
		{Label: "whatsapp image with caption is accepted", Msg: image, Verdict: accept("wamid.image")},
		{Label: "whatsapp document with filename is accepted", Msg: doc, Verdict: accept("wamid.doc")},
		{Label: "messenger text is accepted", Msg: fbText, Verdict: accept("m_common")},
		{Label: "instagram image is accepted", Msg: igImage, Verdict: accept("aWdfZAG1common")},
		{Label: "an undeliverable number is accepted at send time", Msg: undeliverable, Verdict: accept("wamid.later")},
		{Label: "template with its parameters is accepted", Msg: tpl("order_update", "en", orderBody), Verdict: accept("wamid.tpl")},
		{Label: "template with copy code button is accepted", Msg: tpl("login_code", "en", codeBody, codeButton), Verdict: accept("wamid.code")},
		{Label: "template with document header and url button is accepted", Msg: tpl("invoice", "en", invHeader, invBody, invButton), Verdict: accept("wamid.inv")},
		{Label: "unknown template name is 132001", Msg: tpl("no_such_template", "en", orderBody), Verdict: v132001, ExpectedError: e132001},
		{Label: "template in another language is 132001", Msg: tpl("order_update", "en_US", orderBody), Verdict: v132001, ExpectedError: e132001},
		{Label: "missing body parameter is 132000", Msg: tpl("order_update", "en", messaging.SendComponent{Type: "body", Parameters: []messaging.SendParameter{text("Amina")}}), Verdict: v132000, ExpectedError: e132000},
		{Label: "extra body parameter is 132000", Msg: tpl("login_code", "en", messaging.SendComponent{Type: "body", Parameters: []messaging.SendParameter{text("1"), text("2")}}, codeButton), Verdict: v132000, ExpectedError: e132000},
		{Label: "missing copy code button is 131008", Msg: tpl("login_code", "en", codeBody), Verdict: v131008, ExpectedError: e131008},
		{Label: "missing url button is 131008", Msg: tpl("invoice", "en", invHeader, invBody), Verdict: v131008, ExpectedError: e131008},
		{Label: "a cancelled context returns an error", Msg: waText, Cancel: true, Verdict: accept("wamid.cancelled"), ExpectedErrorIs: context.Canceled},
	}
}

// Run runs CommonCases and then cases against providers built by h.
func Run(t *testing.T, h Harness, cases []Case) {
	t.Helper()
	if h.NewProvider == nil {
		t.Fatal("providertest: Harness.NewProvider is nil")
	}
	t.Run("common", func(t *testing.T) {
		for _, c := range CommonCases() {
			t.Run(c.Label, func(t *testing.T) {
				t.Parallel()
				runCase(t, h, c)
			})
		}
	})
	t.Run("provider", func(t *testing.T) {
		for _, c := range cases {
			t.Run(c.Label, func(t *testing.T) {
				t.Parallel()
				runCase(t, h, c)
			})
		}
	})
}

// recorded is a request the mock server received.
type recorded struct {
	Method string
	Path   string
	Body   any
	Header http.Header
}

// mockServer answers with responses in order and records requests.
type mockServer struct {
	mu         sync.Mutex
	responses  []MockResponse
	requests   []recorded
	unexpected int
}

// ServeHTTP records the request and answers with the next response.
func (s *mockServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(io.LimitReader(r.Body, 10<<20))
	var body any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &body); err != nil {
			body = "non-JSON body: " + string(raw)
		}
	}
	s.mu.Lock()
	i := len(s.requests)
	s.requests = append(s.requests, recorded{Method: r.Method, Path: r.URL.Path, Body: body, Header: r.Header.Clone()})
	var resp *MockResponse
	if i < len(s.responses) {
		resp = &s.responses[i]
	} else {
		s.unexpected++
	}
	s.mu.Unlock()
	if resp == nil {
		http.Error(w, "providertest: unexpected request", 599)
		return
	}
	if resp.Headers["Content-Type"] == "" {
		w.Header().Set("Content-Type", "application/json")
	}
	for k, v := range resp.Headers {
		w.Header().Set(k, v)
	}
	status := resp.Status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	_, _ = io.WriteString(w, resp.Body)
}

func runCase(t *testing.T, h Harness, c Case) {
	t.Helper()
	if c.Msg == nil {
		t.Fatal("providertest: case without Msg")
	}
	sends := max(c.Sends, 1)
	ms := &mockServer{responses: slices.Clone(c.MockResponses)}
	if ms.responses == nil && c.Verdict != nil && h.Render != nil {
		for i := range sends {
			v := *c.Verdict
			if sends > 1 && v.ID != "" {
				v.ID = fmt.Sprintf("%s.%d", v.ID, i+1)
			}
			ms.responses = append(ms.responses, h.Render(c.Msg.Clone(), v)...)
		}
	}
	srv := httptest.NewServer(ms)
	t.Cleanup(srv.Close)
	p := h.NewProvider(t, srv)
	if p == nil {
		t.Fatal("providertest: NewProvider returned nil")
	}

	ctx := t.Context()
	if c.Cancel {
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		ctx = cctx
	}
	var snd *messaging.ChannelSender
	if h.Sender != nil {
		snd = h.Sender(c.Msg.Clone())
	}
	seen := map[string]bool{}
	for i := range sends {
		receipt, err := p.Send(ctx, snd, c.Msg.Clone())
		prefix := fmt.Sprintf("send %d: ", i+1)
		switch {
		case c.ExpectedErrorIs != nil:
			if !errors.Is(err, c.ExpectedErrorIs) {
				t.Errorf("%serr = %v, want an error matching %v", prefix, err, c.ExpectedErrorIs)
			}
			var se *messaging.SendError
			if errors.As(err, &se) && !se.Retryable {
				t.Errorf("%serr = %v is a permanent SendError; it would fail the message", prefix, err)
			}
			if receipt != nil {
				t.Errorf("%sreceipt = %+v alongside an error", prefix, receipt)
			}
		case c.ExpectedError != nil:
			var se *messaging.SendError
			if !errors.As(err, &se) {
				t.Errorf("%serr = %v (%T), want *messaging.SendError %s", prefix, err, err, c.ExpectedError.Code)
				break
			}
			checkSendError(t, prefix, c.ExpectedError, se)
			if receipt != nil {
				t.Errorf("%sreceipt = %+v alongside an error", prefix, receipt)
			}
		default:
			if err != nil {
				t.Errorf("%sunexpected error: %v", prefix, err)
				break
			}
			if receipt == nil || receipt.ProviderMessageID == "" {
				t.Errorf("%sreceipt = %+v, want a non-empty provider message id", prefix, receipt)
				break
			}
			id := receipt.ProviderMessageID
			if seen[id] {
				t.Errorf("%sprovider message id %q was already returned by an earlier send", prefix, id)
			}
			seen[id] = true
			if c.ExpectedExtID != "" && id != c.ExpectedExtID {
				t.Errorf("%sprovider message id = %q, want %q", prefix, id, c.ExpectedExtID)
			}
		}
	}

	ms.mu.Lock()
	defer ms.mu.Unlock()
	if ms.unexpected > 0 {
		t.Errorf("the provider made %d request(s) beyond the %d mock responses", ms.unexpected, len(ms.responses))
	}
	if c.ExpectedRequests != nil {
		checkRequests(t, c.ExpectedRequests, ms.requests)
	}
}

func checkSendError(t *testing.T, prefix string, want, got *messaging.SendError) {
	t.Helper()
	if got.Code != want.Code || got.Retryable != want.Retryable {
		t.Errorf("%sSendError = {Code: %q, Retryable: %v} (%v), want {Code: %q, Retryable: %v}",
			prefix, got.Code, got.Retryable, got, want.Code, want.Retryable)
	}
	if want.Text != "" && !strings.HasPrefix(got.Text, want.Text) {
		t.Errorf("%sSendError.Text = %q, want it to start with %q", prefix, got.Text, want.Text)
	}
	if want.RetryAfter != 0 && got.RetryAfter != want.RetryAfter {
		t.Errorf("%sSendError.RetryAfter = %v, want %v", prefix, got.RetryAfter, want.RetryAfter)
	}
}

func checkRequests(t *testing.T, want []ExpectedRequest, got []recorded) {
	t.Helper()
	type req struct {
		Method string
		Path   string
		Body   any
	}
	var w, g []req
	for i, e := range want {
		var body any
		if e.Body != "" {
			if err := json.Unmarshal([]byte(e.Body), &body); err != nil {
				t.Fatalf("ExpectedRequests[%d].Body is not JSON: %v", i, err)
			}
		}
		w = append(w, req{e.Method, e.Path, body})
		if i < len(got) {
			for k, v := range e.Headers {
				if gv := got[i].Header.Get(k); gv != v {
					t.Errorf("request %d: header %s = %q, want %q", i+1, k, gv, v)
				}
			}
		}
	}
	for _, r := range got {
		g = append(g, req{r.Method, r.Path, r.Body})
	}
	if diff := cmp.Diff(w, g); diff != "" {
		t.Errorf("requests mismatch (-want +got):\n%s", diff)
	}
}
