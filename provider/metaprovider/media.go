package metaprovider

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/ujumbe/messaging"
)

var _ messaging.MediaFetcher = (*Provider)(nil)

// mediaInfo is the Graph API's answer to GET /{media-id}.
type mediaInfo struct {
	URL      string         `json:"url"`
	MimeType string         `json:"mime_type"`
	FileSize numberOrString `json:"file_size"`
}

// FetchMedia implements messaging.MediaFetcher: it reads the media's URL
// with GET {BaseURL}/{Version}/{media-id} (Graph's media URL lookup, which
// answers url, mime_type, sha256 and file_size), then downloads it from
// that URL with the same token, which it sends only to the Graph API's
// host or to Meta's media hosts (https, *.fbsbx.com, *.facebook.com,
// *.whatsapp.net). A file_size or Content-Length over maxBytes is
// messaging.ErrMediaTooLarge, before any byte is read.
func (p *Provider) FetchMedia(ctx context.Context, s *messaging.ChannelSender, mediaID string, maxBytes int64) (*messaging.Media, error) {
	if s == nil || s.AccessToken == "" {
		channel := messaging.ChannelWhatsApp
		if s != nil && s.Channel != "" {
			channel = s.Channel
		}
		return nil, notConfigured(channel)
	}
	if mediaID == "" || strings.ContainsAny(mediaID, "/?#") {
		return nil, permanent(CodeInvalidMessage, "Invalid parameter: media id")
	}
	raw, _, err := p.do(ctx, http.MethodGet, p.base+url.PathEscape(mediaID), s.AccessToken, nil)
	if err != nil {
		return nil, err
	}
	var info mediaInfo
	if err := json.Unmarshal(raw, &info); err != nil || info.URL == "" {
		return nil, permanent(CodeInvalidMessage, "the Graph API's media lookup answered no url")
	}
	if size, err := strconv.ParseInt(string(info.FileSize), 10, 64); err == nil && size > maxBytes {
		return nil, fmt.Errorf("metaprovider: media %s is %d bytes: %w", mediaID, size, messaging.ErrMediaTooLarge)
	}
	u, err := url.Parse(info.URL)
	if err != nil || !p.mediaHost(u) {
		return nil, permanent(CodeInvalidMessage, "the media URL the Graph API answered is not on a Meta host")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, permanent(CodeInvalidMessage, "the media URL the Graph API answered is invalid")
	}
	req.Header.Set("Authorization", "Bearer "+s.AccessToken)
	resp, err := p.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("metaprovider: %w", ctx.Err())
		}
		return nil, &messaging.SendError{Code: CodeNetwork, Text: "could not download the media: " + redact(err.Error(), s.AccessToken), Retryable: true}
	}
	if resp.StatusCode/100 != 2 {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
		resp.Body.Close()
		se := p.sendError(resp.StatusCode, resp.Header, body)
		se.Text = redact(se.Text, s.AccessToken)
		return nil, se
	}
	if resp.ContentLength > maxBytes {
		resp.Body.Close()
		return nil, fmt.Errorf("metaprovider: media %s is %d bytes: %w", mediaID, resp.ContentLength, messaging.ErrMediaTooLarge)
	}
	ct := info.MimeType
	if ct == "" {
		ct = resp.Header.Get("Content-Type")
	}
	return &messaging.Media{ContentType: ct, Size: resp.ContentLength, Body: resp.Body}, nil
}

// mediaHost reports whether the media download u may receive the token:
// the Graph API's own scheme and host, or an https URL on Meta's hosts.
func (p *Provider) mediaHost(u *url.URL) bool {
	if u.Scheme == p.baseURL.Scheme && u.Host == p.baseURL.Host {
		return true
	}
	if u.Scheme != "https" {
		return false
	}
	h := strings.ToLower(u.Hostname())
	for _, d := range []string{"fbsbx.com", "facebook.com", "whatsapp.net"} {
		if h == d || strings.HasSuffix(h, "."+d) {
			return true
		}
	}
	return false
}
