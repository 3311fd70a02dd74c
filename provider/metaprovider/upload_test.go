package metaprovider_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"hash/crc32"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/metaprovider"
)

// genReader generates n bytes of a pattern without holding them, then
// fails with failWith (when set) instead of io.EOF. It counts the reads
// made once returned is set.
type genReader struct {
	n, off     int64
	failWith   error
	failAt     int64 // fail once off reaches failAt (when failWith is set)
	returned   atomic.Bool
	lateReads  atomic.Int32
	crc        uint32
	maxReadLen int
}

func (g *genReader) Read(p []byte) (int, error) {
	if g.returned.Load() {
		g.lateReads.Add(1)
	}
	if g.failWith != nil && g.off >= g.failAt {
		return 0, g.failWith
	}
	if g.off >= g.n {
		return 0, io.EOF
	}
	if int64(len(p)) > g.n-g.off {
		p = p[:g.n-g.off]
	}
	if g.failWith != nil && int64(len(p)) > g.failAt-g.off {
		p = p[:g.failAt-g.off]
	}
	for i := range p {
		p[i] = byte((g.off + int64(i)) * 7 % 251)
	}
	g.crc = crc32.Update(g.crc, crc32.IEEETable, p)
	g.off += int64(len(p))
	g.maxReadLen = max(g.maxReadLen, len(p))
	return len(p), nil
}

// countingReader counts the bytes read through it and keeps the first
// error other than io.EOF.
type countingReader struct {
	r   io.Reader
	n   int64
	err error
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if err != nil && err != io.EOF && c.err == nil {
		c.err = err
	}
	return n, err
}

// mediaSeen is what the loopback /media endpoint saw of an upload.
type mediaSeen struct {
	path, auth, contentType string
	contentLength           int64
	fields                  map[string]string
	filename, fileType      string
	fileBytes, rawBytes     int64
	crc                     uint32
	readErr                 error
}

// mediaServer is a loopback Graph API whose /media endpoint reads the
// multipart upload as a stream, counting the file's bytes, and sends
// what it saw on the returned channel.
func mediaServer(t *testing.T) (*httptest.Server, <-chan mediaSeen) {
	t.Helper()
	seen := make(chan mediaSeen, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := mediaSeen{path: r.URL.Path, auth: r.Header.Get("Authorization"), contentType: r.Header.Get("Content-Type"),
			contentLength: r.ContentLength, fields: map[string]string{}}
		raw := &countingReader{r: r.Body}
		r.Body = io.NopCloser(raw)
		mr, err := r.MultipartReader()
		if err != nil {
			s.readErr = err
		}
		for mr != nil {
			part, err := mr.NextPart()
			if err != nil {
				if err != io.EOF {
					s.readErr = err
				}
				break
			}
			if part.FormName() == "file" {
				s.filename, s.fileType = part.FileName(), part.Header.Get("Content-Type")
				h := crc32.NewIEEE()
				n, err := io.Copy(h, part)
				s.fileBytes, s.crc = n, h.Sum32()
				if err != nil {
					s.readErr = err
					break
				}
				continue
			}
			v, _ := io.ReadAll(part)
			s.fields[part.FormName()] = string(v)
		}
		_, _ = io.Copy(io.Discard, raw)
		s.rawBytes = raw.n
		if s.readErr == nil {
			s.readErr = raw.err
		}
		seen <- s
		if s.readErr != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		_, _ = io.WriteString(w, `{"id":"1037543291543636"}`)
	}))
	t.Cleanup(srv.Close)
	return srv, seen
}

func waSender() *messaging.ChannelSender {
	return &messaging.ChannelSender{WorkspaceID: "ws_1", Channel: messaging.ChannelWhatsApp, AccountID: phoneID, WABAID: wabaID, AccessToken: token}
}

func newUploadProvider(t *testing.T, srv *httptest.Server, appID string) *metaprovider.Provider {
	t.Helper()
	p, err := metaprovider.New(&metaprovider.Options{BaseURL: srv.URL, HTTPClient: srv.Client(), AppID: appID})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// receive waits for what the server saw.
func receive[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(30 * time.Second):
		t.Fatal("the server saw no request")
	}
	var zero T
	return zero
}

// TestUploadMediaStreams uploads a generated 100 MB file (never held in
// memory) to POST /{phone-number-id}/media as multipart/form-data
// (https://developers.facebook.com/docs/whatsapp/cloud-api/reference/media#upload-media)
// and checks every byte arrived, the form's fields, and that the
// process allocated far less than the file's size meanwhile. Not
// parallel: it measures the heap.
func TestUploadMediaStreams(t *testing.T) {
	const size = 100 << 20
	srv, seen := mediaServer(t)
	p := newUploadProvider(t, srv, "")
	body := &genReader{n: size}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r, err := p.UploadMedia(t.Context(), waSender(), &messaging.MediaUpload{Kind: "video", MimeType: "video/mp4", Filename: "big \"clip\".mp4", Size: size, Body: body})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if r.ProviderMediaID != "1037543291543636" {
		t.Errorf("ProviderMediaID = %q", r.ProviderMediaID)
	}
	s := receive(t, seen)
	if s.readErr != nil {
		t.Fatalf("the server's read: %v", s.readErr)
	}
	if s.fileBytes != size || s.crc != body.crc {
		t.Errorf("the server got %d file bytes (crc %x), want %d (crc %x)", s.fileBytes, s.crc, size, body.crc)
	}
	if s.contentLength != s.rawBytes {
		t.Errorf("Content-Length %d, body %d bytes", s.contentLength, s.rawBytes)
	}
	if s.path != "/v21.0/"+phoneID+"/media" || s.auth != "Bearer "+token {
		t.Errorf("request to %s with Authorization %q", s.path, s.auth)
	}
	if mt, _, _ := mime.ParseMediaType(s.contentType); mt != "multipart/form-data" {
		t.Errorf("Content-Type %q", s.contentType)
	}
	if s.fields["messaging_product"] != "whatsapp" || s.fields["type"] != "video/mp4" || len(s.fields) != 2 {
		t.Errorf("fields %v, want messaging_product=whatsapp, type=video/mp4", s.fields)
	}
	if s.filename != `big "clip".mp4` || s.fileType != "video/mp4" {
		t.Errorf("file part %q of type %q", s.filename, s.fileType)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > size/10 {
		t.Errorf("the upload allocated %d bytes for a %d-byte file: it is not streamed", alloc, size)
	}
}

// TestUploadMediaUnknownSize streams a body of unknown size (chunked).
func TestUploadMediaUnknownSize(t *testing.T) {
	t.Parallel()
	srv, seen := mediaServer(t)
	p := newUploadProvider(t, srv, "")
	body := &genReader{n: 3<<20 + 17}
	if _, err := p.UploadMedia(t.Context(), waSender(), &messaging.MediaUpload{Kind: "image", MimeType: "image/png", Size: -1, Body: body}); err != nil {
		t.Fatal(err)
	}
	s := receive(t, seen)
	if s.fileBytes != body.n || s.crc != body.crc || s.contentLength != -1 || s.filename != "image" {
		t.Errorf("the server got %d bytes (crc %x, Content-Length %d, filename %q), want %d (crc %x), chunked, filename image",
			s.fileBytes, s.crc, s.contentLength, s.filename, body.n, body.crc)
	}
}

// TestUploadMediaReadErrorAborts checks that a body failing mid-way
// aborts the request (the server sees an incomplete one), that the
// upload returns that error, and that the body is not read after.
func TestUploadMediaReadErrorAborts(t *testing.T) {
	t.Parallel()
	errCut := errors.New("the caller's upload was cut off")
	for _, size := range []int64{20 << 20, -1} {
		srv, seen := mediaServer(t)
		p := newUploadProvider(t, srv, "")
		body := &genReader{n: 20 << 20, failWith: errCut, failAt: 5 << 20}
		_, err := p.UploadMedia(t.Context(), waSender(), &messaging.MediaUpload{Kind: "video", MimeType: "video/mp4", Size: size, Body: body})
		body.returned.Store(true)
		if !errors.Is(err, errCut) {
			t.Errorf("size %d: err = %v, want the body's error", size, err)
		}
		s := receive(t, seen)
		if s.readErr == nil || s.fileBytes >= 20<<20 {
			t.Errorf("size %d: the server read %d file bytes without error: the request was not aborted", size, s.fileBytes)
		}
		if n := body.lateReads.Load(); n != 0 {
			t.Errorf("size %d: the body was read %d times after UploadMedia returned", size, n)
		}
	}
}

// TestUploadMediaShortBody checks that a body shorter than its Size is
// an error of the upload, not a request Meta may have taken.
func TestUploadMediaShortBody(t *testing.T) {
	t.Parallel()
	srv, _ := mediaServer(t)
	p := newUploadProvider(t, srv, "")
	_, err := p.UploadMedia(t.Context(), waSender(), &messaging.MediaUpload{Kind: "image", MimeType: "image/png", Size: 100, Body: strings.NewReader("short")})
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("err = %v, want io.ErrUnexpectedEOF", err)
	}
}

// TestUploadMediaRefusals checks the uploads refused before any request.
func TestUploadMediaRefusals(t *testing.T) {
	t.Parallel()
	cs := newCaptureServer(t)
	p := cs.provider(t, nil)
	up := func() *messaging.MediaUpload {
		return &messaging.MediaUpload{Kind: "image", MimeType: "image/png", Size: 4, Body: strings.NewReader("\x89PNG")}
	}
	fb := &messaging.ChannelSender{Channel: messaging.ChannelMessenger, AccountID: "PAGE_1", AccessToken: token}
	var se *messaging.SendError
	if _, err := p.UploadMedia(t.Context(), fb, up()); !errors.As(err, &se) || se.Retryable || !strings.Contains(se.Text, "media uploads are sent on whatsapp only") {
		t.Errorf("messenger: err = %v, want a permanent SendError", err)
	}
	if _, err := p.UploadMedia(t.Context(), nil, up()); !errors.As(err, &se) || se.Code != metaprovider.CodeSenderNotConfigured {
		t.Errorf("no sender: err = %v", err)
	}
	noType := up()
	noType.MimeType = ""
	if _, err := p.UploadMedia(t.Context(), waSender(), noType); !errors.As(err, &se) || se.Code != metaprovider.CodeInvalidMessage {
		t.Errorf("no MIME type: err = %v", err)
	}
	if n := len(cs.requests()); n != 0 {
		t.Errorf("%d requests, want none", n)
	}
}

// TestUploadMediaGraphError checks a Graph error answer is mapped as a
// send's, without the token.
func TestUploadMediaGraphError(t *testing.T) {
	t.Parallel()
	cs := newCaptureServer(t)
	cs.answer = func(*http.Request) (int, string) {
		return 401, graphError(190, "Invalid OAuth access token "+token, "", 0)
	}
	_, err := cs.provider(t, nil).UploadMedia(t.Context(), waSender(), &messaging.MediaUpload{Kind: "image", MimeType: "image/png", Size: 4, Body: strings.NewReader("\x89PNG")})
	wantCredentials(t, "upload", err, token)
}

const (
	appID         = "987654321012345"
	sessionID     = "upload:MTphdHRhY2htZW50OjlkYWUyYjc0LTkxNjAtNDI3Yy04NmY0LWU2NjA5NTNiMjNiOT9maWxlX2xlbmd0aD0xMDAwJmZpbGVfdHlwZT1pbWFnZSUyRmpwZWc="
	sessionSig    = "ARZqkGCA_uQMxC8nHKI"
	handle        = "4::aW1hZ2UvanBlZw==:ARaHz9JqUW0vN6qNq_5XhPw2UZs-6hDkWA:e:1743099021:1209133033697702:100007839384765:ARYrAJzi"
	sampleContent = "\xff\xd8\xff\xe0 a jpeg sample of the header"
)

// TestUploadTemplateSample checks the two requests of Meta's Resumable
// Upload API (https://developers.facebook.com/docs/graph-api/guides/upload):
// the session (POST /{app-id}/uploads with file_name, file_length and
// file_type, the token as bearer) and the upload (POST /{session id} with
// "Authorization: OAuth", "file_offset: 0" and the bytes), then that a
// template submitted with the handle gives it as header_handle.
func TestUploadTemplateSample(t *testing.T) {
	t.Parallel()
	cs := newCaptureServer(t)
	cs.answer = func(r *http.Request) (int, string) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/uploads"):
			return 200, `{"id":"` + sessionID + `?sig=` + sessionSig + `"}`
		case strings.HasPrefix(r.URL.Path, "/v21.0/upload:"):
			return 200, `{"h":"` + handle + `"}`
		}
		return 200, `{"id":"594425479261596","status":"PENDING","category":"MARKETING"}`
	}
	p := cs.provider(t, &metaprovider.Options{AppID: appID})
	r, err := p.UploadTemplateSample(t.Context(), waSender(), &messaging.MediaUpload{Kind: "image", MimeType: "image/jpeg", Filename: "header sample.jpg",
		Size: int64(len(sampleContent)), Body: strings.NewReader(sampleContent)})
	if err != nil {
		t.Fatal(err)
	}
	if r.ProviderMediaID != handle {
		t.Errorf("handle %q, want %q", r.ProviderMediaID, handle)
	}
	reqs := cs.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	open, up := reqs[0], reqs[1]
	q := map[string]string{"file_name": "header sample.jpg", "file_length": strconv.Itoa(len(sampleContent)), "file_type": "image/jpeg"}
	for k, v := range q {
		if got := queryValue(t, open.RawQuery, k); got != v {
			t.Errorf("session: %s = %q, want %q", k, got, v)
		}
	}
	if open.Method != http.MethodPost || open.Path != "/v21.0/"+appID+"/uploads" || open.Header.Get("Authorization") != "Bearer "+token ||
		strings.Contains(open.RawQuery, token) || len(open.Body) != 0 {
		t.Errorf("session request %s %s?%s (Authorization %q, body %q)", open.Method, open.Path, open.RawQuery, open.Header.Get("Authorization"), open.Body)
	}
	if up.Method != http.MethodPost || up.Path != "/v21.0/"+sessionID || up.RawQuery != "sig="+sessionSig {
		t.Errorf("upload request %s %s?%s, want POST /v21.0/%s?sig=%s", up.Method, up.Path, up.RawQuery, sessionID, sessionSig)
	}
	if up.Header.Get("Authorization") != "OAuth "+token || up.Header.Get("file_offset") != "0" {
		t.Errorf("upload headers Authorization %q, file_offset %q", up.Header.Get("Authorization"), up.Header.Get("file_offset"))
	}
	if !bytes.Equal(up.Body, []byte(sampleContent)) || up.Header.Get("Content-Length") != strconv.Itoa(len(sampleContent)) {
		t.Errorf("upload body %q (Content-Length %q), want the sample", up.Body, up.Header.Get("Content-Length"))
	}

	// The template submitted with the handle.
	tpl := &messaging.Template{Name: "photo_offer", Language: "en_US", Category: "MARKETING", Components: []messaging.TemplateComponent{
		{Type: "HEADER", Format: "IMAGE", ExampleMedia: "med_1", ExampleHandle: r.ProviderMediaID},
		{Type: "HEADER", Format: "VIDEO"},
		{Type: "BODY", Text: "Our new range is here."},
	}}
	if _, err := p.SubmitTemplate(t.Context(), waSender(), tpl); err != nil {
		t.Fatal(err)
	}
	var sub struct {
		Components []struct {
			Example struct {
				HeaderHandle []string `json:"header_handle"`
			} `json:"example"`
		} `json:"components"`
	}
	if err := json.Unmarshal(cs.requests()[2].Body, &sub); err != nil {
		t.Fatal(err)
	}
	if got := sub.Components[0].Example.HeaderHandle; len(got) != 1 || got[0] != handle {
		t.Errorf("header_handle %q, want [%q]", got, handle)
	}
	if got := sub.Components[1].Example.HeaderHandle; len(got) != 1 || got[0] != metaprovider.ExampleMediaURL+".mp4" {
		t.Errorf("header_handle without a sample %q, want the placeholder", got)
	}
}

func queryValue(t *testing.T, rawQuery, key string) string {
	t.Helper()
	for _, kv := range strings.Split(rawQuery, "&") {
		k, v, _ := strings.Cut(kv, "=")
		if k == key {
			s, err := url.QueryUnescape(v)
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
	}
	return ""
}

// TestUploadTemplateSampleErrors checks the refusals (no app id, no size,
// a session id that is not one) and that a body failing mid-way is
// returned.
func TestUploadTemplateSampleErrors(t *testing.T) {
	t.Parallel()
	sample := func() *messaging.MediaUpload {
		return &messaging.MediaUpload{Kind: "image", MimeType: "image/jpeg", Size: int64(len(sampleContent)), Body: strings.NewReader(sampleContent)}
	}
	cs := newCaptureServer(t)
	var se *messaging.SendError
	_, err := cs.provider(t, nil).UploadTemplateSample(t.Context(), waSender(), sample())
	if !errors.As(err, &se) || se.Code != metaprovider.CodeAppNotConfigured || se.Retryable || !strings.Contains(se.Text, "AppID") {
		t.Errorf("no app id: err = %v, want a permanent %s naming AppID", err, metaprovider.CodeAppNotConfigured)
	}
	p := cs.provider(t, &metaprovider.Options{AppID: appID})
	noSize := sample()
	noSize.Size = -1
	if _, err := p.UploadTemplateSample(t.Context(), waSender(), noSize); !errors.As(err, &se) || se.Code != metaprovider.CodeInvalidMessage {
		t.Errorf("no size: err = %v", err)
	}
	if n := len(cs.requests()); n != 0 {
		t.Errorf("%d requests, want none", n)
	}
	for _, id := range []string{"", "12345", "upload:a/../../other", "upload:x#y"} {
		cs.answer = func(*http.Request) (int, string) { return 200, `{"id":"` + id + `"}` }
		if _, err := p.UploadTemplateSample(t.Context(), waSender(), sample()); !errors.As(err, &se) || se.Code != metaprovider.CodeInvalidResponse {
			t.Errorf("session id %q: err = %v, want %s", id, err, metaprovider.CodeInvalidResponse)
		}
	}
	errCut := errors.New("the sample's upload was cut off")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/uploads") {
			_, _ = io.WriteString(w, `{"id":"upload:abc"}`)
			return
		}
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = io.WriteString(w, `{"h":"handle"}`)
	}))
	t.Cleanup(srv.Close)
	body := &genReader{n: 1 << 20, failWith: errCut, failAt: 64 << 10}
	_, err = newUploadProvider(t, srv, appID).UploadTemplateSample(t.Context(), waSender(), &messaging.MediaUpload{Kind: "image", MimeType: "image/jpeg", Size: 1 << 20, Body: body})
	if !errors.Is(err, errCut) {
		t.Errorf("cut body: err = %v, want the body's error", err)
	}
}

// TestNewAppID checks Options.AppID's rule.
func TestNewAppID(t *testing.T) {
	t.Parallel()
	if _, err := metaprovider.New(&metaprovider.Options{AppID: "my-app"}); err == nil || !strings.Contains(err.Error(), "AppID") {
		t.Errorf("New with AppID my-app: err = %v, want one naming AppID", err)
	}
}
