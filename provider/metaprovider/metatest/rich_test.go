package metatest_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ujumbe/messaging/provider/metaprovider/metatest"
)

// do makes one request with the Authorization header auth and headers,
// and decodes the JSON answer.
func do(t *testing.T, s *metatest.Server, method, path, auth string, headers map[string]string, body io.Reader) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, s.URL()+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	for k, v := range headers {
		req.Header[k] = []string{v}
	}
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s %s: answer %q is not a JSON object", method, path, raw)
	}
	return resp.StatusCode, out
}

func errorMessage(ans map[string]any) string {
	e, _ := ans["error"].(map[string]any)
	m, _ := e["message"].(string)
	return m
}

// form is a multipart form of fields (name, value) and, unless file is
// nil, a file part.
func form(t *testing.T, fields [][2]string, file []byte) (string, *bytes.Buffer) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for _, f := range fields {
		_ = mw.WriteField(f[0], f[1])
	}
	if file != nil {
		h := map[string][]string{"Content-Disposition": {`form-data; name="file"; filename="a.jpg"`}, "Content-Type": {"image/jpeg"}}
		w, err := mw.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write(file)
	}
	_ = mw.Close()
	return mw.FormDataContentType(), &b
}

// TestMediaUpload: POST /{phone-number-id}/media takes a multipart form
// with messaging_product whatsapp, type and file, answers a media id and
// keeps what it received (counted and hashed); a missing member is
// Meta's error 100 naming it, and nothing is kept.
func TestMediaUpload(t *testing.T) {
	t.Parallel()
	s := metatest.New()
	defer s.Close()
	file := bytes.Repeat([]byte{0xff, 0xd8, 0xff, 1}, 5000)
	ok := [][2]string{{"messaging_product", "whatsapp"}, {"type", "image/jpeg"}}
	for _, c := range []struct {
		name   string
		fields [][2]string
		file   []byte
		want   string
	}{
		{"no messaging_product", ok[1:], file, "messaging_product"},
		{"another product", [][2]string{{"messaging_product", "instagram"}, {"type", "image/jpeg"}}, file, "messaging_product"},
		{"no type", ok[:1], file, "type"},
		{"no file", ok, nil, "file"},
	} {
		ct, body := form(t, c.fields, c.file)
		status, ans := do(t, s, "POST", "/v21.0/1234/media", "Bearer tok", map[string]string{"Content-Type": ct}, body)
		if status != 400 || errorCode(ans) != 100 || !strings.Contains(errorMessage(ans), c.want) {
			t.Errorf("%s: %d %v, want error 100 naming %s", c.name, status, ans, c.want)
		}
	}
	if status, ans := do(t, s, "POST", "/v21.0/1234/media", "Bearer tok", map[string]string{"Content-Type": "application/json"}, strings.NewReader(`{}`)); status != 400 || errorCode(ans) != 100 {
		t.Errorf("a JSON body: %d %v, want error 100", status, ans)
	}
	ct, body := form(t, ok, file)
	if status, ans := do(t, s, "POST", "/v21.0/1234/media", "", map[string]string{"Content-Type": ct}, body); status != 400 || errorCode(ans) != 104 {
		t.Errorf("no token: %d %v, want 104", status, ans)
	}
	if n := len(s.MediaUploads()); n != 0 {
		t.Fatalf("%d uploads kept after refusals", n)
	}
	ct, body = form(t, ok, file)
	status, ans := do(t, s, "POST", "/v21.0/1234/media", "Bearer tok", map[string]string{"Content-Type": ct}, body)
	id, _ := ans["id"].(string)
	if status != 200 || id == "" {
		t.Fatalf("upload: %d %v, want a media id", status, ans)
	}
	sum := sha256.Sum256(file)
	want := []metatest.MediaUpload{{ID: id, AccountID: "1234", MessagingProduct: "whatsapp", Type: "image/jpeg", Filename: "a.jpg",
		PartType: "image/jpeg", Size: int64(len(file)), SHA256: hex.EncodeToString(sum[:]), Authorization: "Bearer tok"}}
	if d := cmp.Diff(want, s.MediaUploads()); d != "" {
		t.Errorf("MediaUploads (-want +got):\n%s", d)
	}
	if r := s.Requests(); r[len(r)-1].Body != nil {
		t.Errorf("the upload's body was recorded as a request body: %v", r[len(r)-1].Body)
	}
}

// TestTemplateSampleUpload: the Resumable Upload API opens a session
// (file_length and a supported file_type required), takes its bytes with
// "OAuth <token>", file_offset 0 and exactly file_length bytes, and
// answers the handle; a template's IMAGE, VIDEO or DOCUMENT header must
// carry a handle the Server issued, of a file of its kind, else Meta's
// error 100 subcode 2388273.
func TestTemplateSampleUpload(t *testing.T) {
	t.Parallel()
	s := metatest.New()
	defer s.Close()
	open := func(q string) (int, map[string]any) {
		return do(t, s, "POST", "/v21.0/777/uploads?"+q, "Bearer tok", nil, nil)
	}
	if status, ans := open("file_type=image/png"); status != 400 || !strings.Contains(errorMessage(ans), "file_length") {
		t.Errorf("no file_length: %d %v", status, ans)
	}
	if status, ans := open("file_length=4&file_type=image/gif"); status != 400 || !strings.Contains(errorMessage(ans), "file_type") {
		t.Errorf("a GIF: %d %v", status, ans)
	}
	png := []byte("\x89PNG\r\n\x1a\nsample")
	status, ans := open(url.Values{"file_name": {"a.png"}, "file_length": {"14"}, "file_type": {"image/png"}}.Encode())
	session, _ := ans["id"].(string)
	if status != 200 || !strings.HasPrefix(session, "upload:") || !strings.Contains(session, "?sig=") {
		t.Fatalf("open: %d %v, want an upload: id with its sig", status, ans)
	}
	send := func(auth, offset string, b []byte) (int, map[string]any) {
		h := map[string]string{}
		if offset != "" {
			h["file_offset"] = offset
		}
		return do(t, s, "POST", "/v21.0/"+session, auth, h, bytes.NewReader(b))
	}
	for _, c := range []struct {
		name, auth, offset string
		body               []byte
		code               float64
	}{
		{"a bearer token", "Bearer tok", "0", png, 104},
		{"no file_offset", "OAuth tok", "", png, 100},
		{"a file_offset past 0", "OAuth tok", "4", png, 100},
		{"too short", "OAuth tok", "0", png[:10], 100},
		{"too long", "OAuth tok", "0", append(png, 'x'), 100},
	} {
		if status, ans := send(c.auth, c.offset, c.body); status == 200 || errorCode(ans) != c.code {
			t.Errorf("%s: %d %v, want error %v", c.name, status, ans, c.code)
		}
	}
	if status, ans := do(t, s, "POST", "/v21.0/"+strings.Split(session, "?")[0]+"?sig=forged", "OAuth tok", map[string]string{"file_offset": "0"}, bytes.NewReader(png)); status != 400 {
		t.Errorf("a forged sig: %d %v", status, ans)
	}
	status, ans = send("OAuth tok", "0", png)
	handle, _ := ans["h"].(string)
	if status != 200 || handle == "" {
		t.Fatalf("upload: %d %v, want a handle", status, ans)
	}
	sum := sha256.Sum256(png)
	got := s.TemplateSamples()
	if len(got) != 1 || got[0].Handle != handle || got[0].AppID != "777" || got[0].FileName != "a.png" || got[0].FileType != "image/png" ||
		got[0].Length != 14 || got[0].Size != 14 || got[0].SHA256 != hex.EncodeToString(sum[:]) || got[0].Authorization != "OAuth tok" {
		t.Errorf("TemplateSamples = %+v", got)
	}

	create := func(name, header string) (int, map[string]any) {
		body := `{"name":"` + name + `","language":"en","category":"MARKETING","components":[` + header + `,{"type":"BODY","text":"Hi"}]}`
		return call(t, s, "POST", "/v21.0/55/message_templates", "tok", body)
	}
	for _, c := range []struct{ name, header string }{
		{"no example", `{"type":"HEADER","format":"IMAGE"}`},
		{"a url", `{"type":"HEADER","format":"IMAGE","example":{"header_handle":["https://example.com/a.png"]}}`},
		{"an image for a document", `{"type":"HEADER","format":"DOCUMENT","example":{"header_handle":["` + handle + `"]}}`},
	} {
		status, ans := create("promo_bad", c.header)
		e, _ := ans["error"].(map[string]any)
		if status != 400 || errorCode(ans) != 100 || e["error_subcode"] != float64(2388273) {
			t.Errorf("%s: %d %v, want error 100 subcode 2388273", c.name, status, ans)
		}
	}
	if status, ans := create("promo", `{"type":"HEADER","format":"IMAGE","example":{"header_handle":["`+handle+`"]}}`); status != 200 {
		t.Errorf("an issued handle: %d %v", status, ans)
	}
	if status, ans := create("promo_text", `{"type":"HEADER","format":"TEXT","text":"Sale"}`); status != 200 {
		t.Errorf("a text header: %d %v", status, ans)
	}
	if got := s.Templates("55"); len(got) != 2 {
		t.Errorf("templates = %+v, want promo and promo_text", got)
	}
}

// TestRichMessages: the messages endpoint refuses a WhatsApp message
// without what its type requires, as Meta does, and keeps the payload of
// one it accepts.
func TestRichMessages(t *testing.T) {
	t.Parallel()
	s := metatest.New()
	defer s.Close()
	wa := func(rest string) string {
		return `{"messaging_product":"whatsapp","recipient_type":"individual","to":"+16505551234",` + rest + `}`
	}
	button := `"type":"interactive","interactive":{"type":"button","body":{"text":"Ok?"},"action":{"buttons":[{"type":"reply","reply":{"id":"y","title":"Yes"}}]}}`
	for _, c := range []struct {
		name, body string
		code       float64
	}{
		{"text without body", wa(`"type":"text","text":{}`), 100},
		{"image without id or link", wa(`"type":"image","image":{"caption":"x"}`), 100},
		{"sticker with id and link", wa(`"type":"sticker","sticker":{"id":"1","link":"https://x/a.webp"}`), 131009},
		{"interactive without body", wa(`"type":"interactive","interactive":{"type":"button","action":{"buttons":[{"type":"reply","reply":{"id":"y","title":"Yes"}}]}}`), 100},
		{"four buttons", wa(strings.Replace(button, `{"type":"reply","reply":{"id":"y","title":"Yes"}}`,
			`{"type":"reply","reply":{"id":"1","title":"1"}},{"type":"reply","reply":{"id":"2","title":"2"}},{"type":"reply","reply":{"id":"3","title":"3"}},{"type":"reply","reply":{"id":"4","title":"4"}}`, 1)), 131009},
		{"button without title", wa(strings.Replace(button, `,"title":"Yes"`, ``, 1)), 100},
		{"image header without media", wa(strings.Replace(button, `"body"`, `"header":{"type":"image","image":{}},"body"`, 1)), 100},
		{"list without rows", wa(`"type":"interactive","interactive":{"type":"list","body":{"text":"Pick"},"action":{"button":"Go","sections":[{"title":"A","rows":[]}]}}`), 100},
		{"list with an image header", wa(`"type":"interactive","interactive":{"type":"list","header":{"type":"image","image":{"id":"1"}},"body":{"text":"Pick"},"action":{"button":"Go","sections":[{"rows":[{"id":"a","title":"A"}]}]}}`), 131009},
		{"cta_url without url", wa(`"type":"interactive","interactive":{"type":"cta_url","body":{"text":"Go"},"action":{"name":"cta_url","parameters":{"display_text":"Go"}}}`), 100},
		{"location without longitude", wa(`"type":"location","location":{"latitude":1.5}`), 100},
		{"contacts without a name", wa(`"type":"contacts","contacts":[{"phones":[{"phone":"+1"}]}]`), 100},
		{"reaction without message_id", wa(`"type":"reaction","reaction":{"emoji":"x"}`), 100},
		{"reaction without emoji", wa(`"type":"reaction","reaction":{"message_id":"wamid.1"}`), 100},
		{"context without message_id", wa(`"context":{},"type":"text","text":{"body":"hi"}`), 100},
		{"an unknown type", wa(`"type":"hologram"`), 100},
	} {
		if status, ans := call(t, s, "POST", "/v21.0/1234/messages", "tok", c.body); status != 400 || errorCode(ans) != c.code {
			t.Errorf("%s: %d %v, want error %v", c.name, status, ans, c.code)
		}
	}
	if n := len(s.Sends()); n != 0 {
		t.Fatalf("%d refused sends kept", n)
	}
	accepted := []string{
		wa(button),
		wa(`"type":"reaction","reaction":{"message_id":"wamid.1","emoji":""}`),
		wa(`"type":"location","location":{"latitude":0,"longitude":0}`),
		wa(`"context":{"message_id":"wamid.1"},"type":"sticker","sticker":{"id":"798882015472548"}`),
	}
	for i, b := range accepted {
		status, ans := call(t, s, "POST", "/v21.0/1234/messages", "tok", b)
		msgs, _ := ans["messages"].([]any)
		if status != 200 || len(msgs) != 1 {
			t.Fatalf("accepted #%d: %d %v", i, status, ans)
		}
	}
	pls := s.Payloads()
	var types []string
	for i, p := range pls {
		types = append(types, p.Type)
		var want map[string]any
		_ = json.Unmarshal([]byte(accepted[i]), &want)
		if d := cmp.Diff(want, p.Body); d != "" || p.ProviderMessageID != s.Sends()[i].ProviderMessageID {
			t.Errorf("payload %d (%s) (-want +got):\n%s", i, p.ProviderMessageID, d)
		}
	}
	if d := cmp.Diff([]string{"interactive", "reaction", "location", "sticker"}, types); d != "" {
		t.Errorf("payload types (-want +got):\n%s", d)
	}
}

// TestReadMarks: WhatsApp's read receipts (with an optional typing
// indicator) and the Send API's mark_seen and typing_on are answered and
// recorded as read marks, not sends; an Instagram reaction is a payload
// without a message id; none of them takes a message number.
func TestReadMarks(t *testing.T) {
	t.Parallel()
	s := metatest.New()
	defer s.Close()
	for _, c := range []struct {
		name, body string
	}{
		{"no message_id", `{"messaging_product":"whatsapp","status":"read"}`},
		{"another status", `{"messaging_product":"whatsapp","status":"delivered","message_id":"wamid.1"}`},
		{"another indicator", `{"messaging_product":"whatsapp","status":"read","message_id":"wamid.1","typing_indicator":{"type":"audio"}}`},
		{"an unknown sender action", `{"recipient":{"id":"6543"},"sender_action":"dance"}`},
		{"a sender action to nobody", `{"sender_action":"mark_seen"}`},
		{"react without a reaction", `{"recipient":{"id":"IGSID"},"sender_action":"react","payload":{"message_id":"m_1"}}`},
	} {
		if status, ans := call(t, s, "POST", "/v21.0/1234/messages", "tok", c.body); status != 400 || errorCode(ans) != 100 {
			t.Errorf("%s: %d %v, want error 100", c.name, status, ans)
		}
	}
	for _, c := range []struct{ path, body string }{
		{"/v21.0/1234/messages", `{"messaging_product":"whatsapp","status":"read","message_id":"wamid.1"}`},
		{"/v21.0/1234/messages", `{"messaging_product":"whatsapp","status":"read","message_id":"wamid.1","typing_indicator":{"type":"text"}}`},
		{"/v21.0/PAGE_1/messages", `{"recipient":{"id":"6543"},"sender_action":"mark_seen"}`},
		{"/v21.0/PAGE_1/messages", `{"recipient":{"id":"6543"},"sender_action":"typing_on"}`},
		{"/v21.0/IG_1/messages", `{"recipient":{"id":"IGSID"},"sender_action":"react","payload":{"message_id":"m_1","reaction":"love"}}`},
	} {
		if status, ans := call(t, s, "POST", c.path, "tok", c.body); status != 200 || ans["error"] != nil {
			t.Errorf("%s: %d %v", c.body, status, ans)
		}
	}
	want := []metatest.ReadMark{
		{WhatsApp: true, AccountID: "1234", MessageID: "wamid.1"},
		{WhatsApp: true, AccountID: "1234", MessageID: "wamid.1", Typing: true},
		{AccountID: "PAGE_1", SenderAction: "mark_seen", Recipient: "6543"},
		{AccountID: "PAGE_1", SenderAction: "typing_on", Recipient: "6543", Typing: true},
	}
	if d := cmp.Diff(want, s.ReadMarks()); d != "" {
		t.Errorf("ReadMarks (-want +got):\n%s", d)
	}
	if pl := s.Payloads(); len(pl) != 1 || pl[0].Type != "react" || pl[0].ProviderMessageID != "" || pl[0].AccountID != "IG_1" {
		t.Errorf("Payloads = %+v, want the reaction without a message id", pl)
	}
	if n := len(s.Sends()); n != 0 {
		t.Errorf("%d sends, want none", n)
	}
	if _, ans := call(t, s, "POST", "/v21.0/1234/messages", "tok", `{"messaging_product":"whatsapp","to":"+1","type":"text","text":{"body":"hi"}}`); ans["messages"].([]any)[0].(map[string]any)["id"] != "wamid.mock.1" {
		t.Errorf("the first message after read marks = %v, want wamid.mock.1", ans)
	}
}
