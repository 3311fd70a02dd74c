package metaprovider_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/ujumbe/messaging/record"

	"github.com/google/go-cmp/cmp"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/metaprovider"
	"github.com/ujumbe/messaging/provider/metaprovider/metatest"
	"github.com/ujumbe/messaging/provider/providertest"
)

const (
	phoneID  = "106540352242922"
	wabaID   = "102290129340398"
	connTok  = "EAAGconnection-token-1"
	otherTok = "EAAGother-token-2"
)

// conn is the WhatsApp connection of ws_1.
func conn() *messaging.ChannelSender {
	return &messaging.ChannelSender{WorkspaceID: "ws_1", Channel: messaging.ChannelWhatsApp,
		AccountID: phoneID, WABAID: wabaID, AccessToken: connTok, Generation: 1}
}

// mockProvider returns a Provider (of the Meta app appID) and a metatest
// server it talks to, where conn's token reads conn's number.
func mockProvider(t *testing.T) (*metaprovider.Provider, *metatest.Server) {
	t.Helper()
	mock := metatest.New()
	t.Cleanup(mock.Close)
	p, err := metaprovider.New(&metaprovider.Options{BaseURL: mock.URL(), HTTPClient: mock.Client(), AppID: appID})
	if err != nil {
		t.Fatal(err)
	}
	mock.AddPhoneNumber(wabaID, phoneID, "+1 555-010-0100", connTok)
	return p, mock
}

func textTo(ws string) *messaging.Message {
	m := msg(messaging.ChannelWhatsApp, "+254712345678", record.TypeText)
	m.WorkspaceID, m.Text = ws, "Hello"
	return m
}

// wantCredentials fails t unless err is a permanent Credentials SendError
// with code 190 that does not show tok.
func wantCredentials(t *testing.T, what string, err error, tok string) {
	t.Helper()
	var se *messaging.SendError
	if !errors.As(err, &se) {
		t.Fatalf("%s: err = %v (%T), want a *messaging.SendError", what, err, err)
	}
	if se.Code != "190" || !se.Credentials || se.Retryable {
		t.Errorf("%s: SendError = %+v, want code 190, Credentials, not retryable", what, se)
	}
	if strings.Contains(err.Error(), tok) || strings.Contains(se.Text, tok) {
		t.Errorf("%s: the error shows the token: %v", what, err)
	}
}

func TestSendWithConnectionSender(t *testing.T) {
	t.Parallel()
	p, mock := mockProvider(t)
	r, err := p.Send(t.Context(), conn(), textTo("ws_1"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(r.ProviderMessageID, "wamid.mock.") {
		t.Errorf("ProviderMessageID = %q, want the mock's wamid", r.ProviderMessageID)
	}
	reqs := mock.Requests()
	if len(reqs) != 1 {
		t.Fatalf("requests = %+v, want 1", reqs)
	}
	got := reqs[0]
	if got.Method != "POST" || got.Path != "/v21.0/"+phoneID+"/messages" || got.Authorization != "Bearer "+connTok {
		t.Errorf("request = %s %s (Authorization %q), want POST /v21.0/%s/messages with the connection's bearer token",
			got.Method, got.Path, got.Authorization, phoneID)
	}
}

func TestNoSenderIsNotConfigured(t *testing.T) {
	t.Parallel()
	p, mock := mockProvider(t)
	ctx := t.Context()
	calls := map[string]func(s *messaging.ChannelSender) error{
		"Send": func(s *messaging.ChannelSender) error {
			_, err := p.Send(ctx, s, textTo("ws_1"))
			return err
		},
		"SubmitTemplate": func(s *messaging.ChannelSender) error {
			_, err := p.SubmitTemplate(ctx, s, providertest.ManagedTemplates()[0])
			return err
		},
		"DeleteTemplate": func(s *messaging.ChannelSender) error {
			return p.DeleteTemplate(ctx, s, providertest.ManagedTemplates()[0])
		},
		"ListTemplates": func(s *messaging.ChannelSender) error {
			_, err := p.ListTemplates(ctx, s)
			return err
		},
		"VerifyConnection": func(s *messaging.ChannelSender) error { _, err := p.VerifyConnection(ctx, s); return err },
	}
	noToken := conn()
	noToken.AccessToken = ""
	for name, call := range calls {
		for _, s := range []*messaging.ChannelSender{nil, noToken} {
			err := call(s)
			var se *messaging.SendError
			if !errors.As(err, &se) || se.Code != metaprovider.CodeSenderNotConfigured || se.Retryable {
				t.Errorf("%s(%v): err = %v, want a permanent %s", name, s, err, metaprovider.CodeSenderNotConfigured)
			}
		}
	}
	if reqs := mock.Requests(); len(reqs) != 0 {
		t.Errorf("requests = %+v, want none without a sender", reqs)
	}
}

func TestExpiredToken(t *testing.T) {
	t.Parallel()
	p, mock := mockProvider(t)
	mock.AddTemplate(wabaID, messaging.ProviderTemplate{Name: "hello", Language: "en", Category: record.CategoryUtility})
	mock.ExpireToken(connTok)
	ctx := t.Context()
	_, err := p.Send(ctx, conn(), textTo("ws_1"))
	wantCredentials(t, "Send", err, connTok)
	_, err = p.ListTemplates(ctx, conn())
	wantCredentials(t, "ListTemplates", err, connTok)
	_, err = p.SubmitTemplate(ctx, conn(), providertest.ManagedTemplates()[0])
	wantCredentials(t, "SubmitTemplate", err, connTok)
	err = p.DeleteTemplate(ctx, conn(), &messaging.Template{Name: "hello"})
	wantCredentials(t, "DeleteTemplate", err, connTok)
	_, err = p.VerifyConnection(ctx, conn())
	wantCredentials(t, "VerifyConnection", err, connTok)

	mock.SetTokenValid(connTok, true)
	if _, err := p.VerifyConnection(ctx, conn()); err != nil {
		t.Errorf("VerifyConnection with a valid token: %v", err)
	}
}

// TestCode190IsCredentials checks the mapping of any 190 answer, whatever
// its subcode and HTTP status, and that the token never shows.
func TestCode190IsCredentials(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		status, subcode int
	}{{401, 463}, {400, 460}, {400, 0}, {500, 467}} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(c.status)
			_, _ = io.WriteString(w, graphError(190, "Invalid OAuth access token - Cannot parse access token "+token, "", c.subcode))
		}))
		p := newProvider(t, srv)
		m := textTo("ws_1")
		_, err := p.Send(t.Context(), sender(m), m)
		wantCredentials(t, fmt.Sprintf("HTTP %d subcode %d", c.status, c.subcode), err, token)
		srv.Close()
	}
}

// capture is an httptest server that records requests and answers each
// with answer.
type capture struct {
	*httptest.Server
	mu     sync.Mutex
	reqs   []*http.Request
	bodies []string
}

func newCapture(t *testing.T, answer func(n int, r *http.Request) (int, string)) *capture {
	t.Helper()
	c := &capture{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		c.mu.Lock()
		c.reqs = append(c.reqs, r)
		c.bodies = append(c.bodies, string(b))
		n := len(c.reqs)
		c.mu.Unlock()
		status, body := answer(n, r)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(c.Close)
	return c
}

func captureProvider(t *testing.T, c *capture) *metaprovider.Provider {
	t.Helper()
	p, err := metaprovider.New(&metaprovider.Options{BaseURL: c.URL})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSubmitTemplateBody(t *testing.T) {
	t.Parallel()
	c := newCapture(t, func(int, *http.Request) (int, string) {
		return 200, `{"id":"594425479261596","status":"PENDING","category":"UTILITY"}`
	})
	p := captureProvider(t, c)
	tpls := providertest.ManagedTemplates()
	got, err := p.SubmitTemplate(t.Context(), conn(), tpls[0])
	if err != nil {
		t.Fatal(err)
	}
	want := &messaging.ProviderTemplate{ID: "594425479261596", Status: "PENDING", Category: "UTILITY", Name: "providertest_shipping", Language: "en_US"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("SubmitTemplate mismatch (-want +got):\n%s", diff)
	}
	if _, err := p.SubmitTemplate(t.Context(), conn(), tpls[1]); err != nil {
		t.Fatal(err)
	}
	// A text header without a variable and a body without variables carry
	// no example.
	plain := &messaging.Template{Name: "plain", Language: "en", Category: record.CategoryMarketing, Components: []messaging.TemplateComponent{
		{Type: "HEADER", Text: "Hello"}, {Type: "BODY", Text: "No variables here."},
	}}
	if _, err := p.SubmitTemplate(t.Context(), conn(), plain); err != nil {
		t.Fatal(err)
	}
	// A template's own examples are submitted instead of the placeholders.
	own := &messaging.Template{Name: "own_examples", Language: "en", Category: record.CategoryUtility, Components: []messaging.TemplateComponent{
		{Type: "HEADER", Format: "TEXT", Text: "Hi {{1}}", Examples: []string{"Ann"}},
		{Type: "BODY", Text: "Your code {{1}} expires {{2}}.", Examples: []string{"A1B2", "tomorrow"}},
	}}
	if _, err := p.SubmitTemplate(t.Context(), conn(), own); err != nil {
		t.Fatal(err)
	}

	wantBodies := []string{`{
		"name": "providertest_shipping", "language": "en_US", "category": "UTILITY",
		"components": [
			{"type": "HEADER", "format": "TEXT", "text": "Order {{1}}", "example": {"header_text": ["example header"]}},
			{"type": "BODY", "text": "Hi {{1}}, your order {{2}} ships on {{3}}.",
			 "example": {"body_text": [["example 1", "example 2", "example 3"]]}},
			{"type": "FOOTER", "text": "Reply STOP to opt out"},
			{"type": "BUTTONS", "buttons": [
				{"type": "QUICK_REPLY", "text": "Thanks"},
				{"type": "URL", "text": "Track", "url": "https://example.com/track/{{1}}", "example": ["https://example.com/track/example-suffix"]},
				{"type": "PHONE_NUMBER", "text": "Call us", "phone_number": "+254712345678"}
			]}
		]}`, `{
		"name": "providertest_code", "language": "sw", "category": "AUTHENTICATION",
		"components": [
			{"type": "HEADER", "format": "DOCUMENT", "example": {"header_handle": ["https://example.com/sample.pdf"]}},
			{"type": "BODY", "text": "{{1}} ni nambari yako.", "example": {"body_text": [["example 1"]]}},
			{"type": "BUTTONS", "buttons": [{"type": "COPY_CODE", "example": "123456"}]}
		]}`, `{
		"name": "plain", "language": "en", "category": "MARKETING",
		"components": [{"type": "HEADER", "format": "TEXT", "text": "Hello"}, {"type": "BODY", "text": "No variables here."}]}`, `{
		"name": "own_examples", "language": "en", "category": "UTILITY",
		"components": [
			{"type": "HEADER", "format": "TEXT", "text": "Hi {{1}}", "example": {"header_text": ["Ann"]}},
			{"type": "BODY", "text": "Your code {{1}} expires {{2}}.", "example": {"body_text": [["A1B2", "tomorrow"]]}}
		]}`,
	}
	if len(c.reqs) != len(wantBodies) {
		t.Fatalf("%d requests, want %d", len(c.reqs), len(wantBodies))
	}
	for i, wb := range wantBodies {
		r := c.reqs[i]
		if r.Method != "POST" || r.URL.Path != "/v21.0/"+wabaID+"/message_templates" || r.Header.Get("Authorization") != "Bearer "+connTok ||
			r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("request %d = %s %s (Authorization %q, Content-Type %q)", i, r.Method, r.URL.Path, r.Header.Get("Authorization"), r.Header.Get("Content-Type"))
		}
		var w, g any
		if err := json.Unmarshal([]byte(wb), &w); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(c.bodies[i]), &g); err != nil {
			t.Fatalf("body %d is not JSON: %v", i, err)
		}
		if diff := cmp.Diff(w, g); diff != "" {
			t.Errorf("body %d mismatch (-want +got):\n%s", i, diff)
		}
	}
}

func TestSubmitTemplateRefused(t *testing.T) {
	t.Parallel()
	c := newCapture(t, func(n int, _ *http.Request) (int, string) {
		if n == 1 {
			return 400, graphError(100, "Invalid parameter", "", 2388024)
		}
		return 200, `{"status":"PENDING"}`
	})
	p := captureProvider(t, c)
	_, err := p.SubmitTemplate(t.Context(), conn(), providertest.ManagedTemplates()[0])
	var se *messaging.SendError
	if !errors.As(err, &se) || se.Code != "100" || se.Retryable || se.Credentials || !strings.Contains(se.Text, "2388024") {
		t.Errorf("refused submit: err = %v, want a permanent SendError 100 naming subcode 2388024", err)
	}
	_, err = p.SubmitTemplate(t.Context(), conn(), providertest.ManagedTemplates()[0])
	if !errors.As(err, &se) || se.Code != metaprovider.CodeInvalidResponse {
		t.Errorf("answer without id: err = %v, want %s", err, metaprovider.CodeInvalidResponse)
	}
}

func TestListTemplatesFollowsPaging(t *testing.T) {
	t.Parallel()
	p, mock := mockProvider(t)
	var want []*messaging.ProviderTemplate
	for i := range 7 {
		pt := messaging.ProviderTemplate{Name: fmt.Sprintf("tpl_%d", i), Language: "en", Category: record.CategoryUtility,
			Status: record.ProviderTemplateApproved, Components: []messaging.TemplateComponent{{Type: "BODY", Text: fmt.Sprintf("Body %d {{1}}", i)}}}
		switch i {
		case 2:
			pt.Status, pt.Reason = record.ProviderTemplateRejected, "INVALID_FORMAT"
		case 4:
			pt.Quality = "YELLOW"
		}
		pt.ID = mock.AddTemplate(wabaID, pt)
		want = append(want, &pt)
	}
	mock.AddTemplate("another_waba", messaging.ProviderTemplate{Name: "not_mine", Language: "en", Category: record.CategoryUtility})
	got, err := p.ListTemplates(t.Context(), conn())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ListTemplates mismatch (-want +got):\n%s", diff)
	}
	reqs := mock.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4 pages of 2", len(reqs))
	}
	for i, r := range reqs {
		if r.Method != "GET" || r.Path != "/v21.0/"+wabaID+"/message_templates" || r.Authorization != "Bearer "+connTok {
			t.Errorf("request %d = %s %s (Authorization %q)", i, r.Method, r.Path, r.Authorization)
		}
		if r.Query.Get("fields") != "id,name,language,status,category,components,quality_score,rejected_reason" || r.Query.Get("limit") != "100" {
			t.Errorf("request %d query = %v", i, r.Query)
		}
		if (i == 0) != (r.Query.Get("after") == "") {
			t.Errorf("request %d after = %q; only the first page has none", i, r.Query.Get("after"))
		}
	}
}

func TestListTemplatesConvertsMetaComponents(t *testing.T) {
	t.Parallel()
	c := newCapture(t, func(int, *http.Request) (int, string) {
		return 200, `{"data":[{"id":"11","name":"code","language":"en","status":"APPROVED","category":"AUTHENTICATION",
			"quality_score":{"score":"GREEN","date":1767225600},"rejected_reason":"NONE","components":[
			{"type":"HEADER","format":"TEXT","text":"Hi {{1}}","example":{"header_text":["Amina"]}},
			{"type":"BODY","text":"{{1}} is your code.","example":{"body_text":[["123"]]}},
			{"type":"BUTTONS","buttons":[{"type":"COPY_CODE","text":"Copy code","example":["250FF"]},
				{"type":"URL","text":"Go","url":"https://example.com/{{1}}","example":["https://example.com/x"]}]}]}],
			"paging":{"cursors":{"before":"B","after":"A"}}}`
	})
	p := captureProvider(t, c)
	got, err := p.ListTemplates(t.Context(), conn())
	if err != nil {
		t.Fatal(err)
	}
	want := []*messaging.ProviderTemplate{{ID: "11", Name: "code", Language: "en", Status: "APPROVED", Category: "AUTHENTICATION", Quality: "GREEN",
		Components: []messaging.TemplateComponent{
			{Type: "HEADER", Format: "TEXT", Text: "Hi {{1}}"},
			{Type: "BODY", Text: "{{1}} is your code."},
			{Type: "BUTTONS", Buttons: []messaging.TemplateButton{{Type: "COPY_CODE", Text: "Copy code", Example: "250FF"},
				{Type: "URL", Text: "Go", URL: "https://example.com/{{1}}"}}},
		}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ListTemplates mismatch (-want +got):\n%s", diff)
	}
}

func TestListTemplatesNextOnAnotherHostUsesTheCursor(t *testing.T) {
	t.Parallel()
	c := newCapture(t, func(n int, r *http.Request) (int, string) {
		if n == 1 {
			return 200, `{"data":[{"id":"1","name":"a","language":"en","status":"APPROVED","category":"UTILITY","components":[]}],
				"paging":{"cursors":{"after":"CURSOR2"},"next":"https://evil.example.com/v21.0/` + wabaID + `/message_templates?after=CURSOR2&access_token=x"}}`
		}
		return 200, `{"data":[{"id":"2","name":"b","language":"en","status":"APPROVED","category":"UTILITY","components":[]}],"paging":{"cursors":{"after":"END"}}}`
	})
	p := captureProvider(t, c)
	got, err := p.ListTemplates(t.Context(), conn())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != "1" || got[1].ID != "2" {
		t.Errorf("ListTemplates = %+v, want templates 1 and 2", got)
	}
	if len(c.reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(c.reqs))
	}
	q := c.reqs[1].URL.Query()
	if q.Get("after") != "CURSOR2" || q.Get("limit") != "100" || q.Get("fields") == "" || c.reqs[1].Header.Get("Authorization") != "Bearer "+connTok {
		t.Errorf("second request = %s, want the first page's query with after=CURSOR2", c.reqs[1].URL)
	}
}

func TestListTemplatesEndlessPagingIsBounded(t *testing.T) {
	t.Parallel()
	var c *capture
	c = newCapture(t, func(n int, r *http.Request) (int, string) {
		next := c.URL + r.URL.Path + "?" + url.Values{"after": {fmt.Sprint(n)}}.Encode()
		return 200, `{"data":[],"paging":{"cursors":{"after":"x"},"next":"` + next + `"}}`
	})
	p := captureProvider(t, c)
	_, err := p.ListTemplates(t.Context(), conn())
	var se *messaging.SendError
	if !errors.As(err, &se) || se.Code != metaprovider.CodeInvalidResponse {
		t.Errorf("err = %v, want %s", err, metaprovider.CodeInvalidResponse)
	}
	if n := len(c.reqs); n != metaprovider.MaxTemplatePages {
		t.Errorf("%d requests, want %d", n, metaprovider.MaxTemplatePages)
	}
}

func TestDeleteTemplate(t *testing.T) {
	t.Parallel()
	p, mock := mockProvider(t)
	enID := mock.AddTemplate(wabaID, messaging.ProviderTemplate{Name: "promo", Language: "en", Category: record.CategoryMarketing})
	mock.AddTemplate(wabaID, messaging.ProviderTemplate{Name: "promo", Language: "sw", Category: record.CategoryMarketing})
	mock.AddTemplate(wabaID, messaging.ProviderTemplate{Name: "other", Language: "en", Category: record.CategoryMarketing})
	ctx := t.Context()
	names := func() []string {
		var out []string
		for _, pt := range mock.Templates(wabaID) {
			out = append(out, pt.Name+"/"+pt.Language)
		}
		return out
	}

	if err := p.DeleteTemplate(ctx, conn(), &messaging.Template{Name: "promo", Language: "en", ProviderTemplateID: enID}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"promo/sw", "other/en"}, names()); diff != "" {
		t.Errorf("after deleting by id (-want +got):\n%s", diff)
	}
	if err := p.DeleteTemplate(ctx, conn(), &messaging.Template{Name: "promo", Language: "sw"}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"other/en"}, names()); diff != "" {
		t.Errorf("after deleting by name (-want +got):\n%s", diff)
	}
	if err := p.DeleteTemplate(ctx, conn(), &messaging.Template{Name: "promo", Language: "sw"}); err != nil {
		t.Errorf("deleting a template Meta does not know: %v, want nil", err)
	}
	var queries []url.Values
	for _, r := range mock.Requests() {
		if r.Method != "DELETE" || r.Path != "/v21.0/"+wabaID+"/message_templates" || r.Authorization != "Bearer "+connTok {
			t.Errorf("request = %s %s (Authorization %q)", r.Method, r.Path, r.Authorization)
		}
		queries = append(queries, r.Query)
	}
	want := []url.Values{{"name": {"promo"}, "hsm_id": {enID}}, {"name": {"promo"}}, {"name": {"promo"}}}
	if diff := cmp.Diff(want, queries); diff != "" {
		t.Errorf("queries mismatch (-want +got):\n%s", diff)
	}
}

func TestDeleteTemplateAnswers(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		label   string
		status  int
		body    string
		wantErr string
	}{
		{"404 is not found", 404, `{"error":{"message":"Unsupported delete request","code":100,"type":"GraphMethodException"}}`, ""},
		{"subcode 2593002 is not found", 400, graphError(100, "Invalid parameter", "", 2593002), ""},
		{"another invalid parameter is an error", 400, graphError(100, "Invalid parameter", "", 2388024), "100"},
		{"a server error is an error", 503, graphError(2, "Service temporarily unavailable", "", 0), "2"},
	} {
		cs := newCapture(t, func(int, *http.Request) (int, string) { return c.status, c.body })
		err := captureProvider(t, cs).DeleteTemplate(t.Context(), conn(), &messaging.Template{Name: "promo"})
		var se *messaging.SendError
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("%s: err = %v, want nil", c.label, err)
		case c.wantErr != "" && (!errors.As(err, &se) || se.Code != c.wantErr):
			t.Errorf("%s: err = %v, want SendError %s", c.label, err, c.wantErr)
		}
	}
}

// TestVerifyConnection: each channel's credentials are proven with a read
// only the account's token can make, and each refusal names the field at
// fault; a Graph API that cannot answer tells nothing.
func TestVerifyConnection(t *testing.T) {
	t.Parallel()
	p, mock := mockProvider(t)
	mock.AddPhoneNumber(wabaID, "106540352242923", "+1 555-010-0101", connTok)
	mock.AddPhoneNumber("999000", "777000", "+1 555-010-0777", otherTok)
	mock.AddPage("5550001", "EAAGpage-token")
	mock.AddInstagramAccount("1784000", "EAAGig-token")
	snd := func(channel, account, waba, tok string) *messaging.ChannelSender {
		return &messaging.ChannelSender{WorkspaceID: "ws_1", Channel: channel, AccountID: account, WABAID: waba, AccessToken: tok}
	}
	for _, c := range []struct {
		label     string
		s         *messaging.ChannelSender
		wantField string // "" for verified
		display   string
	}{
		{"whatsapp: the WABA's number with its token", conn(), "", "+15550100100"},
		{"whatsapp: another number of the WABA", snd("whatsapp", "106540352242923", wabaID, connTok), "", "+15550100101"},
		{"whatsapp: a number of another WABA", snd("whatsapp", "777000", wabaID, connTok), "phone_number_id", ""},
		{"whatsapp: the owner's ids with another token", snd("whatsapp", phoneID, wabaID, "EAAGanything"), "waba_id", ""},
		{"whatsapp: another WABA's token", snd("whatsapp", phoneID, wabaID, otherTok), "waba_id", ""},
		{"messenger: the page's token", snd("messenger", "5550001", "", "EAAGpage-token"), "", ""},
		{"messenger: a user token reads no page", snd("messenger", "5550001", "", "EAAGanything"), "page_id", ""},
		{"messenger: another page's token", snd("messenger", "5550002", "", "EAAGpage-token"), "page_id", ""},
		{"instagram: the account's token", snd("instagram", "1784000", "", "EAAGig-token"), "", ""},
		{"instagram: another token", snd("instagram", "1784000", "", "EAAGanything"), "instagram_account_id", ""},
	} {
		acct, err := p.VerifyConnection(t.Context(), c.s)
		var ve *messaging.VerificationError
		switch {
		case c.wantField == "" && (err != nil || acct == nil || acct.DisplayPhoneNumber != c.display):
			t.Errorf("%s: %+v, %v; want verified with display %q", c.label, acct, err, c.display)
		case c.wantField != "" && (!errors.As(err, &ve) || ve.Field != c.wantField):
			t.Errorf("%s: %+v, %v; want a VerificationError naming %s", c.label, acct, err, c.wantField)
		}
	}
	r := mock.Requests()[0]
	if r.Method != "GET" || r.Path != "/v21.0/"+wabaID+"/phone_numbers" || r.Authorization != "Bearer "+connTok {
		t.Errorf("request = %s %s (Authorization %q), want GET /v21.0/%s/phone_numbers with the token", r.Method, r.Path, r.Authorization, wabaID)
	}
	mock.ExpireToken(connTok)
	_, err := p.VerifyConnection(t.Context(), conn())
	wantCredentials(t, "VerifyConnection", err, connTok)
	var ve *messaging.VerificationError
	if errors.As(err, &ve) {
		t.Errorf("an expired token: %v; want the Credentials SendError, which the service reads as access_token", err)
	}

	// A Graph API that cannot answer tells nothing (not a refusal).
	down, err := metaprovider.New(&metaprovider.Options{BaseURL: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := down.VerifyConnection(t.Context(), conn()); err == nil || errors.As(err, &ve) {
		t.Errorf("unreachable Graph API: %v; want an error that is not a VerificationError", err)
	}
}

// TestVerifyConnectionReadsHealth: a WhatsApp verification asks Graph for
// the number's quality_rating and messaging_limit_tier and returns them.
func TestVerifyConnectionReadsHealth(t *testing.T) {
	t.Parallel()
	p, mock := mockProvider(t)
	acct, err := p.VerifyConnection(t.Context(), conn())
	if err != nil || acct.QualityRating != "GREEN" || acct.MessagingTier != "TIER_1K" {
		t.Errorf("default health: %+v, %v; want GREEN TIER_1K", acct, err)
	}
	if f := mock.Requests()[0].Query.Get("fields"); !strings.Contains(f, "quality_rating") || !strings.Contains(f, "messaging_limit_tier") {
		t.Errorf("fields = %q, want quality_rating and messaging_limit_tier among them", f)
	}
	mock.SetPhoneNumberHealth(wabaID, phoneID, "RED", "TIER_100K")
	if acct, err := p.VerifyConnection(t.Context(), conn()); err != nil || acct.QualityRating != "RED" || acct.MessagingTier != "TIER_100K" {
		t.Errorf("after SetPhoneNumberHealth: %+v, %v; want RED TIER_100K", acct, err)
	}
	// A number Graph reports without them (a tier not set yet) reports
	// nothing.
	mock.SetPhoneNumberHealth(wabaID, phoneID, "", "TIER_NOT_SET")
	if acct, err := p.VerifyConnection(t.Context(), conn()); err != nil || acct.QualityRating != "" || acct.MessagingTier != "" {
		t.Errorf("without health: %+v, %v; want none", acct, err)
	}
}

func TestTemplateManagerConformance(t *testing.T) {
	t.Parallel()
	providertest.RunTemplateManager(t, func(t *testing.T) (messaging.Provider, *messaging.ChannelSender) {
		p, _ := mockProvider(t)
		return p, conn()
	})
}
