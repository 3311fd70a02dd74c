package fakeprovider

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/record"
)

var _ messaging.MediaFetcher = (*Provider)(nil)

// MediaBytes returns the bytes FetchMedia serves as the media mediaID:
// a line naming it, so that a test can tell which media it got.
func MediaBytes(mediaID string) []byte {
	return []byte("fakeprovider media " + mediaID + "\n")
}

// FetchMedia implements messaging.MediaFetcher: it serves MediaBytes of
// any non-empty media id, without a content type (the service uses the
// one the inbound message declared), whatever the sender. An empty id is
// refused with 100 "Invalid parameter".
//
// The id of an upload (UploadMedia) is served with the upload's MIME
// type, file name and size, its bytes MediaBytes of the id repeated and
// cut to that size (the fake keeps no uploaded bytes, so they do not
// match the upload's SHA-256); once the upload expired it is refused with
// 131009 "Parameter value is not valid", as Meta forgets it.
func (p *Provider) FetchMedia(ctx context.Context, _ *messaging.ChannelSender, mediaID string, maxBytes int64) (*messaging.Media, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if mediaID == "" {
		return nil, refuse("100", "Invalid parameter")
	}
	p.mu.Lock()
	u, uploaded := p.uploads[mediaID]
	p.mu.Unlock()
	if uploaded && u.Purpose == record.MediaForMessages {
		if !p.opts.Clock().Before(u.ExpiresAt) {
			return nil, notValid(fmt.Sprintf("media id %q expired", mediaID))
		}
		if u.Size > maxBytes {
			return nil, messaging.ErrMediaTooLarge
		}
		return &messaging.Media{ContentType: u.MimeType, Size: u.Size, Filename: u.Filename,
			Body: io.NopCloser(&filler{pattern: MediaBytes(mediaID), left: u.Size})}, nil
	}
	b := MediaBytes(mediaID)
	if int64(len(b)) > maxBytes {
		return nil, messaging.ErrMediaTooLarge
	}
	return &messaging.Media{Size: int64(len(b)), Body: io.NopCloser(strings.NewReader(string(b)))}, nil
}

// filler reads left bytes of pattern repeated.
type filler struct {
	pattern []byte
	off     int
	left    int64
}

func (f *filler) Read(b []byte) (int, error) {
	if f.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(b)) > f.left {
		b = b[:f.left]
	}
	n := 0
	for n < len(b) {
		c := copy(b[n:], f.pattern[f.off:])
		n += c
		f.off = (f.off + c) % len(f.pattern)
	}
	f.left -= int64(n)
	return n, nil
}
