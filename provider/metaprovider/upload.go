package metaprovider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/ujumbe/messaging"
)

var (
	_ messaging.MediaUploader          = (*Provider)(nil)
	_ messaging.TemplateSampleUploader = (*Provider)(nil)
)

// CodeAppNotConfigured: Options.AppID is not set, and the request needs
// it (a template sample's upload). Permanent.
const CodeAppNotConfigured = "app_not_configured"

// errUploadClosed is what a read of an upload's body returns once the
// upload has returned.
var errUploadClosed = errors.New("metaprovider: the upload has returned")

// uploadBody hands an upload's body to the transport and remembers the
// first error of the caller's reader, so that the upload returns that
// error (the transport only aborts the request). It checks the length
// against the announced size (when known), and Close, once the request
// is done, waits for a read in progress and stops every later one: the
// transport may still be reading when an early answer is returned, and
// the caller's reader is never read after the upload returns.
type uploadBody struct {
	mu     sync.Mutex
	r      io.Reader
	size   int64 // -1 when unknown
	n      int64
	err    error
	closed bool
}

func (b *uploadBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.closed:
		return 0, errUploadClosed
	case b.err != nil:
		return 0, b.err
	}
	if b.size >= 0 && int64(len(p)) > b.size-b.n+1 {
		// Read one byte past the size at most, to see a body too long.
		p = p[:b.size-b.n+1]
	}
	n, err := b.r.Read(p)
	b.n += int64(n)
	switch {
	case b.size >= 0 && b.n > b.size:
		err = fmt.Errorf("the body is longer than its size of %d bytes", b.size)
		n -= int(b.n - b.size)
	case err == io.EOF && b.size >= 0 && b.n < b.size:
		err = fmt.Errorf("the body ended after %d of its %d bytes: %w", b.n, b.size, io.ErrUnexpectedEOF)
	}
	if err != nil && err != io.EOF {
		b.err = err
	}
	return n, err
}

// Close stops the reads of the body, once a read in progress returns.
func (b *uploadBody) Close() error {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	return nil
}

// readErr is the error of the caller's reader, if any.
func (b *uploadBody) readErr() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}

// checkUpload checks what every upload needs: an upload with a body and
// a MIME type.
func checkUpload(u *messaging.MediaUpload) error {
	switch {
	case u == nil || u.Body == nil:
		return invalid("no upload")
	case u.MimeType == "":
		return invalid("the upload's MIME type is required")
	}
	return nil
}

// uploadName is the file name an upload is given: its own, else its kind
// (or "file").
func uploadName(u *messaging.MediaUpload) string {
	if u.Filename != "" {
		return u.Filename
	}
	if u.Kind != "" {
		return u.Kind
	}
	return "file"
}

// sendUpload makes req, whose body streams body, and returns the answer
// as doRequest does, or the error of the caller's reader (wrapped) when
// it failed: the request was then aborted and Meta got an incomplete one.
func (p *Provider) sendUpload(req *http.Request, body *uploadBody, token string) ([]byte, error) {
	raw, _, err := p.doRequest(req, token)
	body.Close()
	if rerr := body.readErr(); rerr != nil {
		return nil, fmt.Errorf("metaprovider: reading the upload: %w", rerr)
	}
	return raw, err
}

// UploadMedia implements messaging.MediaUploader on WhatsApp: it posts u
// to /{phone-number-id}/media as multipart/form-data (messaging_product
// "whatsapp", type the MIME type, file the bytes with their file name and
// MIME type) and returns Meta's media id. The body is streamed: the
// multipart framing is written around the caller's reader, never holding
// the file, and the request has a Content-Length when u.Size is known. A
// read error of u.Body aborts the request and is returned (wrapped). Meta
// keeps an upload 30 days. Messenger and Instagram uploads are refused
// (permanent): their attachments are sent by URL.
func (p *Provider) UploadMedia(ctx context.Context, s *messaging.ChannelSender, u *messaging.MediaUpload) (*messaging.MediaUploadReceipt, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := checkUpload(u); err != nil {
		return nil, err
	}
	if s != nil && s.Channel != "" && s.Channel != messaging.ChannelWhatsApp {
		return nil, invalid("media uploads are sent on whatsapp only, not on %s", s.Channel)
	}
	if s == nil || s.AccountID == "" || s.AccessToken == "" {
		return nil, notConfigured(messaging.ChannelWhatsApp)
	}
	var head bytes.Buffer
	mw := multipart.NewWriter(&head)
	_ = mw.WriteField("messaging_product", "whatsapp")
	_ = mw.WriteField("type", u.MimeType)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", mime.FormatMediaType("form-data", map[string]string{"name": "file", "filename": uploadName(u)}))
	h.Set("Content-Type", u.MimeType)
	if _, err := mw.CreatePart(h); err != nil {
		return nil, invalid("%v", err)
	}
	// The file's bytes go between the part's header and the closing
	// boundary, which Close writes after them.
	n := head.Len()
	_ = mw.Close()
	trailer := bytes.Clone(head.Bytes()[n:])
	head.Truncate(n)
	body := &uploadBody{r: u.Body, size: u.Size}
	length := int64(head.Len()) + u.Size + int64(len(trailer))
	stream := struct {
		io.Reader
		io.Closer
	}{io.MultiReader(&head, body, bytes.NewReader(trailer)), body}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.base+url.PathEscape(s.AccountID)+"/media", stream)
	if err != nil {
		return nil, permanent(CodeSenderNotConfigured, "the sender id does not form a valid URL")
	}
	req.ContentLength = -1
	if u.Size >= 0 {
		req.ContentLength = length
	}
	req.Header.Set("Authorization", "Bearer "+s.AccessToken)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	raw, err := p.sendUpload(req, body, s.AccessToken)
	if err != nil {
		return nil, err
	}
	var ans struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(raw, &ans) != nil || ans.ID == "" {
		return nil, permanent(CodeInvalidResponse, "the Graph API answered a media upload without a media id")
	}
	return &messaging.MediaUploadReceipt{ProviderMediaID: ans.ID}, nil
}

// UploadTemplateSample implements messaging.TemplateSampleUploader with
// Meta's Resumable Upload API: POST
// /{app-id}/uploads?file_name=&file_length=&file_type= (the token as
// bearer) opens an upload session, answered {"id": "upload:..."}; then
// POST /{upload-session-id} with "Authorization: OAuth <token>",
// "file_offset: 0" and the bytes as body (streamed, Content-Length
// u.Size) answers {"h": "<handle>"}, the handle a template gives as its
// header_handle example (record.TemplateComponent.ExampleHandle). It needs
// Options.AppID (else a permanent CodeAppNotConfigured error) and u.Size.
// A read error of u.Body aborts the upload and is returned (wrapped).
func (p *Provider) UploadTemplateSample(ctx context.Context, s *messaging.ChannelSender, u *messaging.MediaUpload) (*messaging.MediaUploadReceipt, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := checkUpload(u); err != nil {
		return nil, err
	}
	if u.Size < 0 {
		return nil, invalid("the template sample's size is required")
	}
	if s == nil || s.AccessToken == "" {
		return nil, notConfigured(messaging.ChannelWhatsApp)
	}
	if p.appID == "" {
		return nil, permanent(CodeAppNotConfigured, "metaprovider: Options.AppID is not set: uploading a template sample "+
			"needs the Meta app's id (Resumable Upload API, POST /{app-id}/uploads)")
	}
	q := url.Values{"file_name": {uploadName(u)}, "file_length": {strconv.FormatInt(u.Size, 10)}, "file_type": {u.MimeType}}
	raw, _, err := p.do(ctx, http.MethodPost, p.base+url.PathEscape(p.appID)+"/uploads?"+q.Encode(), s.AccessToken, nil)
	if err != nil {
		return nil, err
	}
	var session struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(raw, &session)
	sessionURL, ok := p.uploadSessionURL(session.ID)
	if !ok {
		return nil, permanent(CodeInvalidResponse, "the Graph API answered an upload session without a valid upload id")
	}
	body := &uploadBody{r: u.Body, size: u.Size}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, sessionURL, body)
	if err != nil {
		return nil, permanent(CodeInvalidResponse, "the Graph API answered an upload session without a valid upload id")
	}
	req.ContentLength = u.Size
	if u.Size == 0 {
		req.Body = http.NoBody
	}
	req.Header.Set("Authorization", "OAuth "+s.AccessToken)
	// Meta's header name, written as documented (not canonicalized).
	req.Header["file_offset"] = []string{"0"}
	raw, err = p.sendUpload(req, body, s.AccessToken)
	if err != nil {
		return nil, err
	}
	var ans struct {
		H string `json:"h"`
	}
	if json.Unmarshal(raw, &ans) != nil || ans.H == "" {
		return nil, permanent(CodeInvalidResponse, "the Graph API answered a template sample's upload without a handle")
	}
	return &messaging.MediaUploadReceipt{ProviderMediaID: ans.H}, nil
}

// uploadSessionURL is the URL of an upload session id ("upload:..." and
// possibly "?sig=..."), on the Graph API's address; false when the id is
// not one.
func (p *Provider) uploadSessionURL(id string) (string, bool) {
	if !strings.HasPrefix(id, "upload:") || strings.ContainsAny(id, "/\\# \t\r\n") {
		return "", false
	}
	raw := p.base + id
	u, err := url.Parse(raw)
	if err != nil || !p.sameHost(raw) || !strings.HasSuffix(u.Path, "/"+strings.SplitN(id, "?", 2)[0]) {
		return "", false
	}
	return raw, true
}
