// Package metatest is a mock of the parts of Meta's Graph API that
// metaprovider uses, for tests and for running the example server against
// a local "Meta". It keeps templates per WhatsApp Business Account (WABA)
// and answers in Graph's shapes:
//
//   - POST /{version}/{phone-number-id}/messages with messaging_product
//     "whatsapp": {"messaging_product", "contacts": [{input, wa_id}],
//     "messages": [{"id": "wamid.mock.N"}]} for the Nth message sent. Each
//     type must carry what Meta requires of it (text.body; an image,
//     video, audio, document or sticker object with an id or a link, not
//     both; an interactive button, list or cta_url message's body.text
//     and action: 1 to 3 reply buttons with id and title, a list's button
//     and 1 to 10 sections of rows with id and title (10 rows at most, a
//     text header only), a cta_url's display_text and url; a header's
//     text or media; a location's latitude and longitude; each contact's
//     name.formatted_name; a reaction's message_id and emoji, empty to
//     remove it; a template's name and language.code; context.message_id
//     when quoting), else Graph's error 100 naming the parameter ("The
//     parameter text['body'] is required.") or 131009 for a value Meta
//     refuses. Accepted bodies are kept as received (Payloads).
//   - The same path with {"messaging_product": "whatsapp", "status":
//     "read", "message_id"} (and typing_indicator {"type": "text"}) is a
//     read receipt: {"success": true}, kept as a ReadMark, not a send.
//   - POST /{version}/{page-or-ig-id}/messages (Messenger and Instagram):
//     {"recipient_id", "message_id": "m_mock.N"}. The sender actions
//     mark_seen, typing_on and typing_off are answered {"recipient_id"}
//     and kept as ReadMarks; react and unreact (payload.message_id, and
//     payload.reaction to react) are answered {"recipient_id"}, kept as
//     Payloads without a message id.
//   - POST /{version}/{phone-number-id}/media: Meta's media upload, a
//     multipart/form-data body with messaging_product "whatsapp", type
//     (the MIME type) and file, read as it streams (counted and hashed,
//     never held, so uploads of any size are cheap); a missing or wrong
//     member is error 100 naming it. Answers {"id"} and keeps the upload
//     (MediaUploads).
//   - POST /{version}/{app-id}/uploads?file_name=&file_length=&file_type=
//     opens a Resumable Upload session (file_length required, file_type
//     one of application/pdf, image/jpeg, image/jpg, image/png,
//     video/mp4): {"id": "upload:...?sig=..."}. POST
//     /{version}/upload:...?sig=... with "Authorization: OAuth <token>"
//     (not Bearer), the header file_offset 0 and exactly file_length bytes
//     answers {"h": handle} (TemplateSamples).
//   - POST /{version}/{waba-id}/message_templates: creates a template
//     (name, language and category required; the same name and language
//     twice is error 100) and answers {"id", "status": "PENDING",
//     "category"}. An IMAGE, VIDEO or DOCUMENT header must carry as
//     example.header_handle a handle the Server issued for a file of its
//     kind, else Meta's error 100 with subcode 2388273 ("Templates with
//     IMAGE header type need an example/sample").
//   - GET /{version}/{waba-id}/message_templates: lists the WABA's
//     templates in creation order, min(limit, PageSize) a page (PageSize
//     is 2 unless SetPageSize changes it, so that paging is exercised),
//     with paging.cursors.after and, when more follow, paging.next: an
//     absolute URL on the request's host with after=.
//   - DELETE /{version}/{waba-id}/message_templates?name=...[&hsm_id=...]:
//     deletes every language of name, or the one template hsm_id names;
//     none is Graph's error 100 with subcode 2593002 ("Message template
//     not found"); answers {"success": true}.
//   - GET /{version}/{waba-id}/phone_numbers: the WABA's numbers added with
//     AddPhoneNumber, {"data": [{"id", "display_phone_number",
//     "quality_rating", "messaging_limit_tier"}]} (GREEN and TIER_1K
//     unless SetPhoneNumberHealth changed them), to a
//     token AddPhoneNumber named; any other token, or an unknown WABA, is
//     Graph's error 100 with subcode 33 (the object cannot be loaded).
//   - GET /{version}/me: the page of a page token added with AddPage,
//     {"id", "name"}; any other token reads a user, never a page.
//   - GET /{version}/{instagram-account-id} of an account added with
//     AddInstagramAccount: {"id", "username"} to its tokens, error 100
//     subcode 33 to any other.
//   - GET /{version}/{id}?fields=id: {"id"}; for a media id added with
//     AddMedia, Graph's media URL lookup: {"messaging_product", "url",
//     "mime_type", "sha256", "file_size", "id"}, the url being
//     GET /{version}/mock_media/{id}/download on the Server, which answers the
//     bytes with their Content-Type (with a token, like Meta's download).
//
// A send is accepted as it arrives: it is numbered and kept (Sends) with
// its correlation (biz_opaque_callback_data, or message.metadata on the
// Send API). SetSendDelay makes the answer wait, or never come (NoAnswer),
// as when Meta accepts a message and the answer is lost; StatusWebhook
// and EchoWebhook build the notifications Meta then posts about the send,
// carrying the correlation, and PostWebhook posts one, signed, to a
// receiver.
//
// Every request needs "Authorization: Bearer <token>" ("OAuth <token>" for
// a Resumable Upload session's bytes); any non-empty token
// is valid until ExpireToken (or SetTokenValid false) makes it answer
// Graph's expired-token error (code 190, subcode 463, HTTP 401). A missing
// token is error 104 (HTTP 400). Every request is recorded (Requests),
// the bodies of uploads (media and Resumable Upload bytes) excepted.
//
// A Server is safe for concurrent use. It is also an http.Handler, for a
// host that serves it on a listener of its own.
package metatest

import (
	"cmp"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ujumbe/messaging/record"

	"github.com/ujumbe/messaging"
)

// DefaultPageSize is the largest page of a template list unless
// SetPageSize changes it.
const DefaultPageSize = 2

// Request is a request the Server received.
type Request struct {
	// Method is the HTTP method, for example "POST".
	Method string
	// Path is the URL path, for example "/v21.0/1234/messages".
	Path string
	// Query is the parsed query, for example fields, limit and after of
	// a template list, name and hsm_id of a delete.
	Query url.Values
	// Authorization is the Authorization header as sent.
	Authorization string
	// Body is the JSON body decoded into any (maps, slices, float64,
	// strings); nil for an empty body and for an upload's (a media upload,
	// a Resumable Upload's bytes: see MediaUploads and TemplateSamples),
	// the text itself for a body that is not JSON.
	Body any
}

// template is a template the Server keeps, its components in Meta's
// shape as submitted.
type template struct {
	id, name, language, category, status, reason, quality string
	components                                            json.RawMessage
}

// Server is a mock Graph API. Create it with New.
type Server struct {
	srv *httptest.Server
	mux *http.ServeMux

	mu        sync.Mutex
	requests  []Request
	expired   map[string]bool
	templates map[string][]*template // by WABA id
	pageSize  int
	seq       int
	// msgSeq numbers sent messages apart from templates, so that the
	// Nth message sent is always wamid.mock.N.
	msgSeq int
	// media holds the media of AddMedia by id.
	media map[string]mockMedia
	// numbers holds the phone numbers of each WABA, wabaTokens the
	// tokens that may read a WABA (AddPhoneNumber).
	numbers    map[string][]phoneNumber
	wabaTokens map[string]map[string]bool
	// pages maps a page token to its page (AddPage).
	pages map[string]string
	// igTokens holds the tokens that may read each Instagram account.
	igTokens map[string]map[string]bool
	// sends are the sends accepted, in order; sendDelay is how long
	// their answers wait (NoAnswer: forever).
	sends     []Send
	sendDelay time.Duration
	// uploads are the media uploads received, sessions the Resumable
	// Upload sessions opened, readMarks the read receipts and sender
	// actions received, in order.
	uploads   []MediaUpload
	sessions  []*uploadSession
	readMarks []ReadMark
	payloads  []Payload
	// closed is closed by Close, releasing the answers that wait.
	closed    chan struct{}
	closeOnce sync.Once
}

// phoneNumber is a WhatsApp number of a WABA.
type phoneNumber struct{ id, display, quality, tier string }

// SetPhoneNumberHealth sets the quality_rating and messaging_limit_tier
// the phone numbers list answers for the phone number id of waba.
func (s *Server) SetPhoneNumberHealth(waba, id, quality, tier string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, n := range s.numbers[waba] {
		if n.id == id {
			s.numbers[waba][i].quality, s.numbers[waba][i].tier = quality, tier
		}
	}
}

// AddPhoneNumber adds the phone number id (shown as display, for example
// "+1 555-010-0100") to the numbers of waba, and lets each of tokens read
// the WABA's numbers.
func (s *Server) AddPhoneNumber(waba, id, display string, tokens ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.numbers[waba] = append(s.numbers[waba], phoneNumber{id: id, display: display, quality: "GREEN", tier: "TIER_1K"})
	if s.wabaTokens[waba] == nil {
		s.wabaTokens[waba] = map[string]bool{}
	}
	for _, t := range tokens {
		s.wabaTokens[waba][t] = true
	}
}

// AddPage makes token a page access token of page: GET /me with it
// answers the page.
func (s *Server) AddPage(page, token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pages[token] = page
}

// AddInstagramAccount lets each of tokens read the Instagram account id.
func (s *Server) AddInstagramAccount(id string, tokens ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.igTokens[id] == nil {
		s.igTokens[id] = map[string]bool{}
	}
	for _, t := range tokens {
		s.igTokens[id][t] = true
	}
}

// cannotLoad answers Graph's error for an object the token cannot read.
func cannotLoad(w http.ResponseWriter, id string) {
	graphError(w, http.StatusBadRequest, 100, 33, "GraphMethodException",
		"Unsupported get request. Object with ID '"+id+"' does not exist, cannot be loaded due to missing permissions, or does not support this operation.")
}

// bearer is the token of r.
func bearer(r *http.Request) string {
	t, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return t
}

// phoneNumbers answers the phone numbers of a WABA to its tokens.
func (s *Server) phoneNumbers(w http.ResponseWriter, r *http.Request) {
	waba := r.PathValue("waba")
	s.mu.Lock()
	ok := s.wabaTokens[waba][bearer(r)]
	nums := slices.Clone(s.numbers[waba])
	s.mu.Unlock()
	if !ok {
		cannotLoad(w, waba)
		return
	}
	data := []map[string]string{}
	for _, n := range nums {
		data = append(data, map[string]string{"id": n.id, "display_phone_number": n.display, "quality_rating": n.quality,
			"messaging_limit_tier": n.tier})
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": data})
}

// me answers the page of a page token, else a user.
func (s *Server) me(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	page, ok := s.pages[bearer(r)]
	s.mu.Unlock()
	if !ok {
		writeJSON(w, http.StatusOK, map[string]string{"id": "100000000000001", "name": "Mock User"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"id": page, "name": "Mock Page " + page})
}

// mockMedia is media the Server serves.
type mockMedia struct {
	mimeType string
	data     []byte
}

// AddMedia makes the Server serve data as the media id, of MIME type
// mimeType, as an inbound message's media.
func (s *Server) AddMedia(id, mimeType string, data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.media[id] = mockMedia{mimeType: mimeType, data: slices.Clone(data)}
}

// New starts a Server on a local address. Close it when done.
func New() *Server {
	s := &Server{closed: make(chan struct{}), expired: map[string]bool{}, templates: map[string][]*template{}, pageSize: DefaultPageSize, media: map[string]mockMedia{},
		numbers: map[string][]phoneNumber{}, wabaTokens: map[string]map[string]bool{}, pages: map[string]string{}, igTokens: map[string]map[string]bool{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /{version}/{id}/messages", s.messages)
	mux.HandleFunc("POST /{version}/{waba}/message_templates", s.createTemplate)
	mux.HandleFunc("GET /{version}/{waba}/message_templates", s.listTemplates)
	mux.HandleFunc("DELETE /{version}/{waba}/message_templates", s.deleteTemplate)
	mux.HandleFunc("GET /{version}/{waba}/phone_numbers", s.phoneNumbers)
	mux.HandleFunc("GET /{version}/me", s.me)
	mux.HandleFunc("GET /{version}/{id}", s.node)
	mux.HandleFunc("GET /{version}/mock_media/{id}/download", s.download)
	mux.HandleFunc("POST /{version}/{id}/media", s.uploadMedia)
	mux.HandleFunc("POST /{version}/{app}/uploads", s.openUpload)
	mux.HandleFunc("POST /{version}/{id}", s.upload)
	s.mux = mux
	s.srv = httptest.NewServer(s)
	return s
}

// URL is the Server's base URL (metaprovider's Options.BaseURL), without
// the version.
func (s *Server) URL() string { return s.srv.URL }

// Client returns an HTTP client for the Server.
func (s *Server) Client() *http.Client { return s.srv.Client() }

// Close shuts the Server down, first releasing the answers that wait
// (SetSendDelay), which then answer nothing.
func (s *Server) Close() {
	s.closeOnce.Do(func() { close(s.closed) })
	s.srv.Close()
}

// Requests returns a copy of the requests received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// ExpireToken makes every later request with token answer Graph's
// expired-token error (190).
func (s *Server) ExpireToken(token string) { s.SetTokenValid(token, false) }

// SetTokenValid makes token valid (the default for any token) or expired.
func (s *Server) SetTokenValid(token string, valid bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if valid {
		delete(s.expired, token)
	} else {
		s.expired[token] = true
	}
}

// SetPageSize sets the largest page of a template list (n > 0).
func (s *Server) SetPageSize(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pageSize = max(n, 1)
}

// AddTemplate adds t to the templates of waba, as if created in WhatsApp
// Manager: an empty ID gets the next mock id, an empty Status is
// APPROVED. It returns the id.
func (s *Server) AddTemplate(waba string, t messaging.ProviderTemplate) string {
	comps, _ := json.Marshal(t.Components) // TemplateComponent's JSON is Meta's shape without examples
	s.mu.Lock()
	defer s.mu.Unlock()
	id := t.ID
	if id == "" {
		id = s.nextID()
	}
	status := t.Status
	if status == "" {
		status = record.ProviderTemplateApproved
	}
	s.templates[waba] = append(s.templates[waba], &template{id: id, name: t.Name, language: t.Language, category: t.Category,
		status: status, reason: t.Reason, quality: t.Quality, components: comps})
	return id
}

// SetTemplateStatus sets the status (Meta's APPROVED, REJECTED, PAUSED,
// ...) of waba's template name in lang, and reports whether there is one.
func (s *Server) SetTemplateStatus(waba, name, lang, status string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range s.templates[waba] {
		if t.name == name && t.language == lang {
			t.status = status
			return true
		}
	}
	return false
}

// Templates returns the templates of waba, in creation order (components
// without Meta's examples).
func (s *Server) Templates(waba string) []messaging.ProviderTemplate {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []messaging.ProviderTemplate
	for _, t := range s.templates[waba] {
		pt := messaging.ProviderTemplate{ID: t.id, Name: t.name, Language: t.language, Category: t.category,
			Status: t.status, Reason: t.reason, Quality: t.quality}
		pt.Components = components(t.components)
		out = append(out, pt)
	}
	return out
}

// components converts components in Meta's shape, dropping Meta's
// examples but a COPY_CODE button's (its sample code, written as a string
// or a one-string array).
func components(raw json.RawMessage) []messaging.TemplateComponent {
	var ms []struct {
		Type    string `json:"type"`
		Format  string `json:"format"`
		Text    string `json:"text"`
		Buttons []struct {
			Type        string          `json:"type"`
			Text        string          `json:"text"`
			URL         string          `json:"url"`
			PhoneNumber string          `json:"phone_number"`
			Example     json.RawMessage `json:"example"`
		} `json:"buttons"`
	}
	_ = json.Unmarshal(raw, &ms)
	out := []messaging.TemplateComponent{}
	for _, m := range ms {
		c := messaging.TemplateComponent{Type: m.Type, Format: m.Format, Text: m.Text}
		for _, b := range m.Buttons {
			tb := messaging.TemplateButton{Type: b.Type, Text: b.Text, URL: b.URL, PhoneNumber: b.PhoneNumber}
			if b.Type == "COPY_CODE" {
				var list []string
				if json.Unmarshal(b.Example, &tb.Example) != nil && json.Unmarshal(b.Example, &list) == nil && len(list) > 0 {
					tb.Example = list[0]
				}
			}
			c.Buttons = append(c.Buttons, tb)
		}
		out = append(out, c)
	}
	return out
}

// nextID returns a new numeric id; s.mu is held.
func (s *Server) nextID() string {
	s.seq++
	return strconv.Itoa(1000000000000000 + s.seq)
}

var versionRe = regexp.MustCompile(`^v[0-9]+\.[0-9]+$`)

// ServeHTTP records r, checks its version and token, and answers it.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body any
	if !streamed(r) {
		raw, _ := io.ReadAll(io.LimitReader(r.Body, 10<<20))
		if len(raw) > 0 {
			if err := json.Unmarshal(raw, &body); err != nil {
				body = string(raw)
			}
		}
		r.Body = io.NopCloser(strings.NewReader(string(raw)))
	}
	auth := r.Header.Get("Authorization")
	scheme := "Bearer "
	if isUploadPath(r.URL.Path) {
		scheme = "OAuth "
	}
	token, hasToken := strings.CutPrefix(auth, scheme)
	s.mu.Lock()
	s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Authorization: auth, Body: body})
	expired := s.expired[token]
	s.mu.Unlock()
	version, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	switch {
	case !versionRe.MatchString(version):
		graphError(w, http.StatusBadRequest, 2500, 0, "OAuthException", "Unknown path components: "+r.URL.Path)
	case !hasToken || token == "":
		graphError(w, http.StatusBadRequest, 104, 0, "OAuthException", "An access token is required to request this resource.")
	case expired:
		graphError(w, http.StatusUnauthorized, 190, 463, "OAuthException",
			"Error validating access token: Session has expired on Tuesday, 01-Jan-30 00:00:00 PST. The current time is Wednesday, 02-Jan-30 00:00:00 PST.")
	default:
		s.mux.ServeHTTP(w, r)
	}
}

// graphError answers Graph's error envelope.
func graphError(w http.ResponseWriter, status, code, subcode int, typ, msg string) {
	e := map[string]any{"message": msg, "type": typ, "code": code, "fbtrace_id": "AmockTraceId"}
	if subcode != 0 {
		e["error_subcode"] = subcode
	}
	if code == 100 && subcode == 2593002 {
		e["error_user_title"] = "Message template not found"
	}
	writeJSON(w, status, map[string]any{"error": e})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// messages answers a send: WhatsApp's shape when messaging_product is
// whatsapp, else the Send API's.
func (s *Server) messages(w http.ResponseWriter, r *http.Request) {
	var m struct {
		MessagingProduct      string `json:"messaging_product"`
		To                    string `json:"to"`
		BizOpaqueCallbackData string `json:"biz_opaque_callback_data"`
		Recipient             struct {
			ID          string `json:"id"`
			PhoneNumber string `json:"phone_number"`
		} `json:"recipient"`
		Message struct {
			Text     string `json:"text"`
			Metadata string `json:"metadata"`
		} `json:"message"`
	}
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	if json.Unmarshal(raw, &m) != nil || json.Unmarshal(raw, &body) != nil {
		graphError(w, http.StatusBadRequest, 100, 0, "OAuthException", "(#100) Invalid parameter: the body is not JSON")
		return
	}
	wa := m.MessagingProduct == "whatsapp"
	to := cmp.Or(m.Recipient.ID, m.Recipient.PhoneNumber)
	switch {
	case wa && body["status"] != nil:
		s.readStatus(w, r, body)
		return
	case !wa && body["sender_action"] != nil:
		s.senderAction(w, r, body, to)
		return
	case wa && m.To == "":
		graphError(w, http.StatusBadRequest, 100, 0, "OAuthException", "(#100) The parameter to is required.")
		return
	case !wa && to == "":
		graphError(w, http.StatusBadRequest, 100, 0, "OAuthException", "(#100) The parameter recipient is required")
		return
	}
	if wa {
		if e := checkWhatsApp(body); e != nil {
			graphError(w, http.StatusBadRequest, e.code, 0, "OAuthException", e.message)
			return
		}
	}
	s.mu.Lock()
	s.msgSeq++
	n := s.msgSeq
	send := Send{WhatsApp: wa, AccountID: r.PathValue("id"), To: to, Correlation: m.Message.Metadata,
		ProviderMessageID: fmt.Sprintf("m_mock.%d", n), Text: m.Message.Text}
	if wa {
		send.To, send.Correlation, send.ProviderMessageID = m.To, m.BizOpaqueCallbackData, fmt.Sprintf("wamid.mock.%d", n)
	}
	s.sends = append(s.sends, send)
	s.payloads = append(s.payloads, Payload{WhatsApp: wa, AccountID: send.AccountID, ProviderMessageID: send.ProviderMessageID,
		Type: payloadType(wa, body), Body: body})
	delay := s.sendDelay
	s.mu.Unlock()
	if !s.wait(r, delay) {
		return
	}
	if wa {
		writeJSON(w, http.StatusOK, map[string]any{
			"messaging_product": "whatsapp",
			"contacts":          []map[string]string{{"input": m.To, "wa_id": strings.TrimPrefix(m.To, "+")}},
			"messages":          []map[string]string{{"id": send.ProviderMessageID}},
		})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"recipient_id": to, "message_id": send.ProviderMessageID})
}

// wait waits delay before the answer of an accepted send (NoAnswer:
// forever), and reports whether to answer: not when the client left or
// the Server is closing first.
func (s *Server) wait(r *http.Request, delay time.Duration) bool {
	if delay == 0 {
		return true
	}
	var timeout <-chan time.Time
	if delay > 0 {
		t := time.NewTimer(delay)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-timeout:
		return true
	case <-r.Context().Done():
	case <-s.closed:
	}
	return false
}

// createTemplate creates a template from Meta's create request.
func (s *Server) createTemplate(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Name       string          `json:"name"`
		Language   string          `json:"language"`
		Category   string          `json:"category"`
		Components json.RawMessage `json:"components"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		graphError(w, http.StatusBadRequest, 100, 0, "OAuthException", "Invalid parameter: the body is not JSON")
		return
	}
	for _, f := range [][2]string{{"name", req.Name}, {"language", req.Language}, {"category", req.Category}} {
		if f[1] == "" {
			graphError(w, http.StatusBadRequest, 100, 0, "OAuthException", "(#100) The parameter "+f[0]+" is required.")
			return
		}
	}
	waba := r.PathValue("waba")
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.checkHeaderHandles(w, req.Components) {
		return
	}
	for _, t := range s.templates[waba] {
		if t.name == req.Name && t.language == req.Language {
			graphError(w, http.StatusBadRequest, 100, 2388024, "OAuthException", "Invalid parameter: content in this language already exists")
			return
		}
	}
	t := &template{id: s.nextID(), name: req.Name, language: req.Language, category: req.Category,
		status: record.ProviderTemplatePending, components: req.Components}
	if len(t.components) == 0 {
		t.components = json.RawMessage("[]")
	}
	s.templates[waba] = append(s.templates[waba], t)
	writeJSON(w, http.StatusOK, map[string]string{"id": t.id, "status": t.status, "category": t.category})
}

// listTemplates answers one page of a WABA's templates.
func (s *Server) listTemplates(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	start := 0
	if after := q.Get("after"); after != "" {
		b, err := base64.RawURLEncoding.DecodeString(after)
		n, err2 := strconv.Atoi(string(b))
		if err != nil || err2 != nil || n < 0 {
			graphError(w, http.StatusBadRequest, 100, 0, "OAuthException", "(#100) Invalid parameter: after is not a valid cursor")
			return
		}
		start = n
	}
	s.mu.Lock()
	size := s.pageSize
	if l, err := strconv.Atoi(q.Get("limit")); err == nil && l > 0 {
		size = min(size, l)
	}
	all := s.templates[r.PathValue("waba")]
	end := min(start+size, len(all))
	data := []map[string]any{}
	for _, t := range all[min(start, end):end] {
		m := map[string]any{"id": t.id, "name": t.name, "language": t.language, "status": t.status,
			"category": t.category, "components": t.components, "rejected_reason": cmp.Or(t.reason, "NONE")}
		if t.quality != "" {
			m["quality_score"] = map[string]any{"score": t.quality, "date": 1767225600}
		}
		data = append(data, m)
	}
	more := end < len(all)
	s.mu.Unlock()
	cursor := func(n int) string { return base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(n))) }
	paging := map[string]any{"cursors": map[string]string{"before": cursor(start), "after": cursor(end)}}
	if more {
		nq := url.Values{}
		for k, v := range q {
			nq[k] = v
		}
		nq.Set("after", cursor(end))
		paging["next"] = (&url.URL{Scheme: "http", Host: r.Host, Path: r.URL.Path, RawQuery: nq.Encode()}).String()
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": data, "paging": paging})
}

// deleteTemplate deletes by name, or by name and hsm_id.
func (s *Server) deleteTemplate(w http.ResponseWriter, r *http.Request) {
	name, hsm := r.URL.Query().Get("name"), r.URL.Query().Get("hsm_id")
	if name == "" {
		graphError(w, http.StatusBadRequest, 100, 0, "OAuthException", "(#100) The parameter name is required.")
		return
	}
	waba := r.PathValue("waba")
	s.mu.Lock()
	before := len(s.templates[waba])
	s.templates[waba] = slices.DeleteFunc(s.templates[waba], func(t *template) bool {
		return t.name == name && (hsm == "" || t.id == hsm)
	})
	deleted := before - len(s.templates[waba])
	s.mu.Unlock()
	if deleted == 0 {
		graphError(w, http.StatusBadRequest, 100, 2593002, "OAuthException", "Invalid parameter")
		return
	}
	writeJSON(w, http.StatusOK, map[string]bool{"success": true})
}

// node answers a read of a node's id, or the URL lookup of a media id.
func (s *Server) node(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	s.mu.Lock()
	m, ok := s.media[id]
	igTokens, ig := s.igTokens[id]
	mayRead := igTokens[bearer(r)]
	s.mu.Unlock()
	switch {
	case ig && !mayRead:
		cannotLoad(w, id)
		return
	case ig:
		writeJSON(w, http.StatusOK, map[string]string{"id": id, "username": "mock_" + id})
		return
	case !ok:
		writeJSON(w, http.StatusOK, map[string]string{"id": id})
		return
	}
	sum := sha256.Sum256(m.data)
	writeJSON(w, http.StatusOK, map[string]any{"messaging_product": "whatsapp", "id": id, "mime_type": m.mimeType,
		"sha256": hex.EncodeToString(sum[:]), "file_size": len(m.data),
		"url": "http://" + r.Host + "/" + r.PathValue("version") + "/mock_media/" + url.PathEscape(id) + "/download"})
}

// download answers the bytes of a media id; an unknown id is Graph's
// error 100 (HTTP 404).
func (s *Server) download(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	m, ok := s.media[r.PathValue("id")]
	s.mu.Unlock()
	if !ok {
		graphError(w, http.StatusNotFound, 100, 33, "GraphMethodException", "Unsupported get request. Object does not exist")
		return
	}
	w.Header().Set("Content-Type", m.mimeType)
	w.Header().Set("Content-Length", strconv.Itoa(len(m.data)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(m.data)
}
