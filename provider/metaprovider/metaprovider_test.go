package metaprovider_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/metaprovider"
	"github.com/ujumbe/messaging/provider/providertest"
)

const token = "EAAGtest-secret-token"

var now = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// sender is the sender the service hands to a send of m: none in
// ws_nosender, one without a token in ws_notoken, and in every other
// workspace the channel's account with the token.
func sender(m *messaging.Message) *messaging.ChannelSender {
	id := map[string]string{"whatsapp": "106540352242922", "messenger": "PAGE_1", "instagram": "17841405822304914"}[m.Channel]
	s := &messaging.ChannelSender{WorkspaceID: m.WorkspaceID, Channel: m.Channel, AccountID: id, AccessToken: token}
	switch m.WorkspaceID {
	case "ws_nosender":
		return nil
	case "ws_notoken":
		s.AccessToken = ""
	}
	return s
}

func newProvider(t *testing.T, srv *httptest.Server) messaging.Provider {
	t.Helper()
	p, err := metaprovider.New(&metaprovider.Options{BaseURL: srv.URL, HTTPClient: srv.Client(), Clock: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// graphError renders an error body as the Graph API writes it.
func graphError(code int, message, details string, subcode int) string {
	e := map[string]any{
		"message":    fmt.Sprintf("(#%d) %s", code, message),
		"type":       "OAuthException",
		"code":       code,
		"fbtrace_id": "AZ3fQ8xXyZ_trace",
	}
	if details != "" {
		e["error_data"] = map[string]any{"messaging_product": "whatsapp", "details": details}
	}
	if subcode != 0 {
		e["error_subcode"] = subcode
	}
	b, _ := json.Marshal(map[string]any{"error": e})
	return string(b)
}

func waAccepted(to, id string) string {
	return fmt.Sprintf(`{"messaging_product":"whatsapp","contacts":[{"input":%q,"wa_id":%q}],"messages":[{"id":%q,"message_status":"accepted"}]}`,
		to, strings.TrimPrefix(to, "+"), id)
}

// render answers a common case's verdict as the Graph API does.
func render(m *messaging.Message, v providertest.Verdict) []providertest.MockResponse {
	if v.ID != "" {
		if m.Channel == messaging.ChannelWhatsApp {
			return []providertest.MockResponse{{Status: 200, Body: waAccepted(m.To, v.ID)}}
		}
		return []providertest.MockResponse{{Status: 200, Body: fmt.Sprintf(`{"recipient_id":%q,"message_id":%q}`, m.To, v.ID)}}
	}
	code, _ := strconv.Atoi(v.Code)
	return []providertest.MockResponse{{Status: v.HTTPStatus, Body: graphError(code, v.Text, "details of "+v.Code, 0)}}
}

func TestConformance(t *testing.T) {
	providertest.Run(t, providertest.Harness{NewProvider: newProvider, Render: render, Sender: sender}, append(providertest.RichCases(), cases()...))
}

func intp(i int) *int { return &i }

func msg(channel, to, typ string) *messaging.Message {
	return &messaging.Message{ID: "msg_1", WorkspaceID: "ws_1", Channel: channel, To: to, Type: typ}
}

func cases() []providertest.Case {
	const (
		waPath = "/v21.0/106540352242922/messages"
		fbPath = "/v21.0/PAGE_1/messages"
		igPath = "/v21.0/17841405822304914/messages"
		to     = "+254712345678"
	)
	auth := map[string]string{"Authorization": "Bearer " + token, "Content-Type": "application/json"}
	ok := func(id string) []providertest.MockResponse {
		return []providertest.MockResponse{{Status: 200, Body: waAccepted(to, id)}}
	}
	post := func(path, body string) []providertest.ExpectedRequest {
		return []providertest.ExpectedRequest{{Method: "POST", Path: path, Body: body, Headers: auth}}
	}
	textMsg := msg("whatsapp", to, "text")
	textMsg.Text = "Hello https://example.com"
	image := msg("whatsapp", to, "image")
	image.MediaURL, image.Caption = "https://example.com/a.jpg", "Look"
	video := msg("whatsapp", to, "video")
	video.MediaURL, video.Caption = "https://example.com/a.mp4", "Watch"
	doc := msg("whatsapp", to, "document")
	doc.MediaURL, doc.Caption, doc.Filename = "https://example.com/a.pdf", "Read", "a.pdf"
	audio := msg("whatsapp", to, "audio")
	audio.MediaURL = "https://example.com/a.ogg"
	tpl := func(name, lang string, cs ...messaging.SendComponent) *messaging.Message {
		m := msg("whatsapp", to, "template")
		m.TemplateName, m.Language, m.Components = name, lang, cs
		return m
	}
	full := tpl("promo", "en_US",
		messaging.SendComponent{Type: "header", Parameters: []messaging.SendParameter{{Type: "text", Text: "Amina"}}},
		messaging.SendComponent{Type: "body", Parameters: []messaging.SendParameter{{Type: "text", Text: "SUMMER"}, {Type: "text", Text: "Friday"}}},
		messaging.SendComponent{Type: "button", SubType: "url", Index: intp(0), Parameters: []messaging.SendParameter{{Type: "text", Text: "summer"}}},
		messaging.SendComponent{Type: "button", SubType: "quick_reply", Index: intp(1), Parameters: []messaging.SendParameter{{Type: "payload", Payload: "STOP"}}},
		messaging.SendComponent{Type: "button", SubType: "copy_code", Index: intp(2), Parameters: []messaging.SendParameter{{Type: "coupon_code", CouponCode: "SUMMER25"}}},
	)
	media := tpl("invoice", "sw",
		messaging.SendComponent{Type: "header", Parameters: []messaging.SendParameter{{Type: "document", Link: "https://example.com/inv.pdf", Filename: "inv.pdf"}}},
	)
	imageHeader := tpl("photo", "en",
		messaging.SendComponent{Type: "header", Parameters: []messaging.SendParameter{{Type: "image", Link: "https://example.com/p.jpg"}}},
	)
	fbText := msg("messenger", "6543210987654321", "text")
	fbText.Text = "Hi"
	fbPhone := msg("messenger", to, "text")
	fbPhone.Text = "Hi"
	fbDoc := msg("messenger", "6543210987654321", "document")
	fbDoc.MediaURL, fbDoc.Caption, fbDoc.Filename = "https://example.com/a.pdf", "dropped", "dropped.pdf"
	igText := msg("instagram", "17841400000000001", "text")
	igText.Text = "Hi"
	igVideo := msg("instagram", "17841400000000001", "video")
	igVideo.MediaURL = "https://example.com/v.mp4"
	fbTemplate := msg("messenger", "6543210987654321", "template")
	fbTemplate.TemplateName, fbTemplate.Language = "promo", "en"
	uncorrelated := *textMsg
	uncorrelated.ID = ""
	fbUncorrelated := *fbText
	fbUncorrelated.ID = strings.Repeat("x", 513) // longer than Meta keeps
	inWS := func(ws string) *messaging.Message {
		m := *textMsg
		m.WorkspaceID = ws
		return &m
	}
	graph := func(status, code int, message, details string, subcode int, headers map[string]string) []providertest.MockResponse {
		return []providertest.MockResponse{{Status: status, Body: graphError(code, message, details, subcode), Headers: headers}}
	}
	permanent := func(code, text string) *messaging.SendError { return &messaging.SendError{Code: code, Text: text} }
	// unknown is a send Meta may have accepted with no id to show for it.
	unknown := func(code string) *messaging.SendError {
		return &messaging.SendError{Code: code, Retryable: true, Unknown: true}
	}
	retry := func(code string, after time.Duration) *messaging.SendError {
		return &messaging.SendError{Code: code, Retryable: true, RetryAfter: after}
	}

	return []providertest.Case{
		{Label: "whatsapp text", Msg: textMsg, MockResponses: ok("wamid.HBgLMjU0NzEyMzQ1Njc4FQIAERgSQUJD"),
			ExpectedRequests: post(waPath, `{"messaging_product":"whatsapp","biz_opaque_callback_data":"msg_1","recipient_type":"individual","to":"+254712345678","type":"text","text":{"preview_url":false,"body":"Hello https://example.com"}}`),
			ExpectedExtID:    "wamid.HBgLMjU0NzEyMzQ1Njc4FQIAERgSQUJD"},
		{Label: "whatsapp image with caption", Msg: image, MockResponses: ok("wamid.img"), ExpectedExtID: "wamid.img",
			ExpectedRequests: post(waPath, `{"messaging_product":"whatsapp","biz_opaque_callback_data":"msg_1","recipient_type":"individual","to":"+254712345678","type":"image","image":{"link":"https://example.com/a.jpg","caption":"Look"}}`)},
		{Label: "whatsapp video with caption", Msg: video, MockResponses: ok("wamid.vid"),
			ExpectedRequests: post(waPath, `{"messaging_product":"whatsapp","biz_opaque_callback_data":"msg_1","recipient_type":"individual","to":"+254712345678","type":"video","video":{"link":"https://example.com/a.mp4","caption":"Watch"}}`)},
		{Label: "whatsapp document with caption and filename", Msg: doc, MockResponses: ok("wamid.doc"),
			ExpectedRequests: post(waPath, `{"messaging_product":"whatsapp","biz_opaque_callback_data":"msg_1","recipient_type":"individual","to":"+254712345678","type":"document","document":{"link":"https://example.com/a.pdf","caption":"Read","filename":"a.pdf"}}`)},
		{Label: "whatsapp audio", Msg: audio, MockResponses: ok("wamid.aud"),
			ExpectedRequests: post(waPath, `{"messaging_product":"whatsapp","biz_opaque_callback_data":"msg_1","recipient_type":"individual","to":"+254712345678","type":"audio","audio":{"link":"https://example.com/a.ogg"}}`)},
		{Label: "template with header, body and buttons", Msg: full, MockResponses: ok("wamid.tpl"), ExpectedExtID: "wamid.tpl",
			ExpectedRequests: post(waPath, `{"messaging_product":"whatsapp","biz_opaque_callback_data":"msg_1","recipient_type":"individual","to":"+254712345678","type":"template","template":{
				"name":"promo","language":{"code":"en_US"},"components":[
				{"type":"header","parameters":[{"type":"text","text":"Amina"}]},
				{"type":"body","parameters":[{"type":"text","text":"SUMMER"},{"type":"text","text":"Friday"}]},
				{"type":"button","sub_type":"url","index":"0","parameters":[{"type":"text","text":"summer"}]},
				{"type":"button","sub_type":"quick_reply","index":"1","parameters":[{"type":"payload","payload":"STOP"}]},
				{"type":"button","sub_type":"copy_code","index":"2","parameters":[{"type":"coupon_code","coupon_code":"SUMMER25"}]}]}}`)},
		{Label: "template with document header", Msg: media, MockResponses: ok("wamid.inv"),
			ExpectedRequests: post(waPath, `{"messaging_product":"whatsapp","biz_opaque_callback_data":"msg_1","recipient_type":"individual","to":"+254712345678","type":"template","template":{
				"name":"invoice","language":{"code":"sw"},"components":[
				{"type":"header","parameters":[{"type":"document","document":{"link":"https://example.com/inv.pdf","filename":"inv.pdf"}}]}]}}`)},
		{Label: "template with image header", Msg: imageHeader, MockResponses: ok("wamid.photo"),
			ExpectedRequests: post(waPath, `{"messaging_product":"whatsapp","biz_opaque_callback_data":"msg_1","recipient_type":"individual","to":"+254712345678","type":"template","template":{
				"name":"photo","language":{"code":"en"},"components":[
				{"type":"header","parameters":[{"type":"image","image":{"link":"https://example.com/p.jpg"}}]}]}}`)},
		{Label: "template without components", Msg: tpl("hello_world", "en_US"), MockResponses: ok("wamid.hw"),
			ExpectedRequests: post(waPath, `{"messaging_product":"whatsapp","biz_opaque_callback_data":"msg_1","recipient_type":"individual","to":"+254712345678","type":"template","template":{"name":"hello_world","language":{"code":"en_US"}}}`)},
		{Label: "messenger text", Msg: fbText, ExpectedExtID: "m_AG5Hz2Uq7tuwNEhXfYYKj8mJEM_QPpz5jdCK48PnKAjSdjfipqxqMvK8ma6AC8fplwlqLP_5cgXIbu7I3rBN0P",
			MockResponses:    []providertest.MockResponse{{Body: `{"recipient_id":"6543210987654321","message_id":"m_AG5Hz2Uq7tuwNEhXfYYKj8mJEM_QPpz5jdCK48PnKAjSdjfipqxqMvK8ma6AC8fplwlqLP_5cgXIbu7I3rBN0P"}`}},
			ExpectedRequests: post(fbPath, `{"recipient":{"id":"6543210987654321"},"messaging_type":"RESPONSE","message":{"metadata":"msg_1","text":"Hi"}}`)},
		{Label: "messenger to a phone number", Msg: fbPhone,
			MockResponses:    []providertest.MockResponse{{Body: `{"recipient_id":"6543210987654321","message_id":"m_phone"}`}},
			ExpectedRequests: post(fbPath, `{"recipient":{"phone_number":"+254712345678"},"messaging_type":"RESPONSE","message":{"metadata":"msg_1","text":"Hi"}}`)},
		{Label: "messenger document is a file attachment without caption", Msg: fbDoc,
			MockResponses:    []providertest.MockResponse{{Body: `{"recipient_id":"6543210987654321","message_id":"m_file"}`}},
			ExpectedRequests: post(fbPath, `{"recipient":{"id":"6543210987654321"},"messaging_type":"RESPONSE","message":{"metadata":"msg_1","attachment":{"type":"file","payload":{"url":"https://example.com/a.pdf"}}}}`)},
		{Label: "instagram text", Msg: igText, ExpectedExtID: "aWdfZAG1faXRlbToxOklHTWVzc2FnZAUlEOjE3ODQxNDA1ODIy",
			MockResponses:    []providertest.MockResponse{{Body: `{"recipient_id":"17841400000000001","message_id":"aWdfZAG1faXRlbToxOklHTWVzc2FnZAUlEOjE3ODQxNDA1ODIy"}`}},
			ExpectedRequests: post(igPath, `{"recipient":{"id":"17841400000000001"},"message":{"metadata":"msg_1","text":"Hi"}}`)},
		{Label: "instagram video", Msg: igVideo,
			MockResponses:    []providertest.MockResponse{{Body: `{"recipient_id":"17841400000000001","message_id":"aWdf_video"}`}},
			ExpectedRequests: post(igPath, `{"recipient":{"id":"17841400000000001"},"message":{"metadata":"msg_1","attachment":{"type":"video","payload":{"url":"https://example.com/v.mp4"}}}}`)},
		{Label: "whatsapp without a message id is not correlated", Msg: &uncorrelated, MockResponses: ok("wamid.nocorr"),
			ExpectedRequests: post(waPath, `{"messaging_product":"whatsapp","recipient_type":"individual","to":"+254712345678","type":"text","text":{"preview_url":false,"body":"Hello https://example.com"}}`)},
		{Label: "messenger with a message id too long for meta is not correlated", Msg: &fbUncorrelated,
			MockResponses:    []providertest.MockResponse{{Body: `{"recipient_id":"6543210987654321","message_id":"m_nocorr"}`}},
			ExpectedRequests: post(fbPath, `{"recipient":{"id":"6543210987654321"},"messaging_type":"RESPONSE","message":{"text":"Hi"}}`)},

		// Graph errors.
		{Label: "131026 undeliverable is permanent with details", Msg: textMsg,
			MockResponses: graph(400, 131026, "Message undeliverable", "Message Undeliverable: the recipient is not on WhatsApp.", 0, nil),
			ExpectedError: permanent("131026", "Message undeliverable: Message Undeliverable: the recipient is not on WhatsApp.")},
		{Label: "131047 re-engagement is permanent", Msg: textMsg,
			MockResponses: graph(400, 131047, "Re-engagement message", "Message failed to send because more than 24 hours have passed since the customer last replied to this number.", 0, nil),
			ExpectedError: permanent("131047", "Re-engagement message: Message failed to send")},
		{Label: "132001 template does not exist", Msg: tpl("nope", "en"),
			MockResponses: graph(404, 132001, "Template name does not exist in the translation", "template name (nope) does not exist in en", 0, nil),
			ExpectedError: permanent("132001", "Template name does not exist in the translation: template name (nope) does not exist in en")},
		{Label: "132000 parameter count", Msg: tpl("promo", "en"),
			MockResponses: graph(400, 132000, "Number of parameters does not match the expected number of params", "body: number of localizable_params (0) does not match the expected number of params (2)", 0, nil),
			ExpectedError: permanent("132000", "Number of parameters does not match the expected number of params: body: number")},
		{Label: "131008 required parameter missing", Msg: tpl("promo", "en"),
			MockResponses: graph(400, 131008, "Required parameter is missing", "Button at index 0 of type Url requires a parameter", 0, nil),
			ExpectedError: permanent("131008", "Required parameter is missing: Button at index 0")},
		{Label: "100 invalid parameter is permanent", Msg: textMsg,
			MockResponses: graph(400, 100, "Invalid parameter", "Parameter value is not valid", 0, nil),
			ExpectedError: permanent("100", "Invalid parameter: Parameter value is not valid")},
		{Label: "190 expired token is permanent with subcode", Msg: textMsg,
			MockResponses: graph(401, 190, "Error validating access token: Session has expired on Sunday, 01-Mar-26 08:00:00 PST.", "", 463, nil),
			ExpectedError: permanent("190", "Error validating access token: Session has expired on Sunday, 01-Mar-26 08:00:00 PST. (subcode 463)")},
		{Label: "130429 rate limit is retryable after Retry-After", Msg: textMsg,
			MockResponses: graph(400, 130429, "Rate limit hit", "Cloud API message throughput has been reached.", 0, map[string]string{"Retry-After": "30"}),
			ExpectedError: retry("130429", 30*time.Second)},
		{Label: "131056 pair rate limit is retryable", Msg: textMsg,
			MockResponses: graph(400, 131056, "(Business Account, Consumer Account) pair rate limit hit", "Message failed to send because there were too many messages sent from this phone number to the same phone number in a short period of time.", 0, nil),
			ExpectedError: retry("131056", 0)},
		{Label: "131000 something went wrong on 500 is retryable", Msg: textMsg,
			MockResponses: graph(500, 131000, "Something went wrong", "Message failed to send due to an unknown error.", 0, nil),
			ExpectedError: retry("131000", 0)},
		{Label: "131016 service unavailable is retryable", Msg: textMsg,
			MockResponses: graph(503, 131016, "Service unavailable", "", 0, map[string]string{"Retry-After": now.Add(90 * time.Second).Format(http.TimeFormat)}),
			ExpectedError: retry("131016", 90*time.Second)},
		{Label: "4 app rate limit is retryable", Msg: textMsg,
			MockResponses: graph(400, 4, "Application request limit reached", "", 0, nil), ExpectedError: retry("4", 0)},
		{Label: "80007 account rate limit is retryable", Msg: textMsg,
			MockResponses: graph(400, 80007, "Rate limit issues", "", 0, nil), ExpectedError: retry("80007", 0)},
		{Label: "429 without a Graph body is retryable", Msg: textMsg,
			MockResponses: []providertest.MockResponse{{Status: 429, Body: "", Headers: map[string]string{"Retry-After": "7"}}},
			ExpectedError: &messaging.SendError{Code: "429", Text: "Too Many Requests", Retryable: true, RetryAfter: 7 * time.Second}},
		{Label: "502 html is retryable", Msg: textMsg,
			MockResponses: []providertest.MockResponse{{Status: 502, Body: "<html>Bad Gateway</html>", Headers: map[string]string{"Content-Type": "text/html"}}},
			ExpectedError: &messaging.SendError{Code: "502", Text: "Bad Gateway", Retryable: true}},
		{Label: "absurd Retry-After is capped at a day", Msg: textMsg,
			MockResponses: []providertest.MockResponse{{Status: 503, Headers: map[string]string{"Retry-After": "99999999999999999"}}},
			ExpectedError: retry("503", 24*time.Hour)},
		{Label: "404 without a Graph body is permanent", Msg: textMsg,
			MockResponses: []providertest.MockResponse{{Status: 404, Body: "Not Found"}},
			ExpectedError: permanent("404", "Not Found")},
		{Label: "error_data as a string", Msg: textMsg,
			MockResponses: []providertest.MockResponse{{Status: 400, Body: `{"error":{"message":"(#100) The parameter recipient is required.","type":"OAuthException","code":100,"error_data":"recipient missing","fbtrace_id":"X"}}`}},
			ExpectedError: permanent("100", "The parameter recipient is required.: recipient missing")},
		{Label: "200 without a message id is an unknown outcome", Msg: textMsg,
			MockResponses: []providertest.MockResponse{{Status: 200, Body: `{"messaging_product":"whatsapp","messages":[]}`}},
			ExpectedError: unknown(metaprovider.CodeInvalidResponse)},
		{Label: "200 with a garbage body is an unknown outcome", Msg: textMsg,
			MockResponses: []providertest.MockResponse{{Status: 200, Body: `<<<not json`}},
			ExpectedError: unknown(metaprovider.CodeInvalidResponse)},
		{Label: "messenger answer read as whatsapp has no id: unknown", Msg: textMsg,
			MockResponses: []providertest.MockResponse{{Status: 200, Body: `{"recipient_id":"1","message_id":"m_1"}`}},
			ExpectedError: unknown(metaprovider.CodeInvalidResponse)},

		// Refused before any request.
		{Label: "template on messenger is refused locally", Msg: fbTemplate, ExpectedRequests: []providertest.ExpectedRequest{},
			ExpectedError: permanent("100", "Invalid parameter")},
		{Label: "unknown channel is refused locally", Msg: msg("telegram", to, "text"), ExpectedRequests: []providertest.ExpectedRequest{},
			ExpectedError: permanent("100", "Invalid parameter")},
		{Label: "unknown type is refused locally", Msg: msg("whatsapp", to, "sticker"), ExpectedRequests: []providertest.ExpectedRequest{},
			ExpectedError: permanent("100", "Invalid parameter")},
		{Label: "unknown template parameter type is refused locally", Msg: tpl("x", "en", messaging.SendComponent{Type: "body", Parameters: []messaging.SendParameter{{Type: "currency"}}}),
			ExpectedRequests: []providertest.ExpectedRequest{}, ExpectedError: permanent("100", "Invalid parameter")},
		{Label: "empty recipient is refused locally", Msg: msg("whatsapp", "", "text"), ExpectedRequests: []providertest.ExpectedRequest{},
			ExpectedError: permanent("100", "Invalid parameter")},
		{Label: "no sender for the workspace is permanent", Msg: inWS("ws_nosender"), ExpectedRequests: []providertest.ExpectedRequest{},
			ExpectedError: permanent(metaprovider.CodeSenderNotConfigured, "no whatsapp sender")},
		{Label: "a sender without a token is permanent", Msg: inWS("ws_notoken"), ExpectedRequests: []providertest.ExpectedRequest{},
			ExpectedError: permanent(metaprovider.CodeSenderNotConfigured, "no whatsapp sender")},
	}
}

func TestNew(t *testing.T) {
	t.Parallel()
	for _, o := range []*metaprovider.Options{
		{BaseURL: "graph.facebook.com"},
		{BaseURL: "ftp://graph.facebook.com"},
		{BaseURL: "https://graph.facebook.com?x=1"},
		{BaseURL: "://bad"},
		{Version: "21.0"},
		{Version: "v21.0/../../x"},
	} {
		if _, err := metaprovider.New(o); err == nil {
			t.Errorf("New(%+v) succeeded", o)
		}
	}
	p, err := metaprovider.New(nil)
	if err != nil || p == nil {
		t.Fatalf("New with defaults = %v, %v", p, err)
	}
}

func TestBaseURLWithPathAndSlash(t *testing.T) {
	t.Parallel()
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.URL.Path
		_, _ = w.Write([]byte(waAccepted("+254712345678", "wamid.1")))
	}))
	defer srv.Close()
	p, err := metaprovider.New(&metaprovider.Options{BaseURL: srv.URL + "/proxy/", Version: "v23.0"})
	if err != nil {
		t.Fatal(err)
	}
	m := msg("whatsapp", "+254712345678", "text")
	m.Text = "hi"
	if _, err := p.Send(t.Context(), sender(m), m); err != nil {
		t.Fatal(err)
	}
	if want := "/proxy/v23.0/106540352242922/messages"; got != want {
		t.Errorf("path = %q, want %q", got, want)
	}
}

func TestNetworkErrorIsRetryableAndHidesToken(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	url := srv.URL
	srv.Close() // nothing listens any more
	p, err := metaprovider.New(&metaprovider.Options{BaseURL: url})
	if err != nil {
		t.Fatal(err)
	}
	m := msg("whatsapp", "+254712345678", "text")
	m.Text = "hi"
	_, err = p.Send(t.Context(), sender(m), m)
	var se *messaging.SendError
	if !errors.As(err, &se) || !se.Retryable || se.Code != metaprovider.CodeNetwork {
		t.Fatalf("err = %v, want a retryable %s SendError", err, metaprovider.CodeNetwork)
	}
	if strings.Contains(err.Error(), token) {
		t.Errorf("the error shows the token: %v", err)
	}
}

func TestTimeoutIsRetryable(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body) // lets the server notice the client leaving
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	p, err := metaprovider.New(&metaprovider.Options{BaseURL: srv.URL, HTTPClient: &http.Client{Timeout: 50 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	m := msg("whatsapp", "+254712345678", "text")
	m.Text = "hi"
	_, err = p.Send(t.Context(), sender(m), m)
	var se *messaging.SendError
	if !errors.As(err, &se) || !se.Retryable {
		t.Fatalf("err = %v, want a retryable SendError", err)
	}
}

func TestContextCancelledDuringRequest(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		cancel()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	p, err := metaprovider.New(&metaprovider.Options{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	m := msg("whatsapp", "+254712345678", "text")
	m.Text = "hi"
	_, err = p.Send(ctx, sender(m), m)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestSenderHidesToken(t *testing.T) {
	t.Parallel()
	s := &messaging.ChannelSender{Channel: "whatsapp", AccountID: "123", AccessToken: token}
	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("sending", "sender", s)
	for _, out := range []string{fmt.Sprint(s), fmt.Sprintf("%v %+v %#v %s", s, s, s, s), logged.String()} {
		if strings.Contains(out, token) {
			t.Errorf("formatting the sender Send is handed shows the token: %s", out)
		}
	}
}

// FuzzGraphAnswer checks that any answer of the Graph API becomes a
// receipt with an id or a *messaging.SendError, never a panic.
func FuzzGraphAnswer(f *testing.F) {
	f.Add(200, waAccepted("+254712345678", "wamid.1"), "")
	f.Add(400, graphError(131026, "Message undeliverable", "d", 0), "")
	f.Add(429, "", "Mon, 02 Mar 2026 09:00:00 GMT")
	f.Add(400, `{"error":{"code":"x","error_data":[1]}}`, "-5")
	f.Add(500, `{"error":null}`, "1e9")
	f.Fuzz(func(t *testing.T, status int, body, retryAfter string) {
		if status < 200 || status > 599 {
			return
		}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", retryAfter)
			w.WriteHeader(status)
			_, _ = io.WriteString(w, body)
		}))
		defer srv.Close()
		p, err := metaprovider.New(&metaprovider.Options{BaseURL: srv.URL, Clock: func() time.Time { return now }})
		if err != nil {
			t.Fatal(err)
		}
		m := msg("whatsapp", "+254712345678", "text")
		m.Text = "hi"
		r, err := p.Send(t.Context(), sender(m), m)
		var se *messaging.SendError
		switch {
		case err == nil:
			if r == nil || r.ProviderMessageID == "" || status/100 != 2 {
				t.Fatalf("receipt %+v for status %d", r, status)
			}
		case !errors.As(err, &se):
			t.Fatalf("err = %v (%T), want a SendError", err, err)
		case se.Code == "" || se.RetryAfter < 0 || se.RetryAfter > 24*time.Hour:
			t.Fatalf("bad SendError %+v", se)
		}
	})
}
