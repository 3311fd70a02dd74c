package fakeprovider

import (
	"context"
	"io"
	"strings"

	"github.com/ujumbe/messaging"
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
func (p *Provider) FetchMedia(ctx context.Context, _ *messaging.ChannelSender, mediaID string, maxBytes int64) (*messaging.Media, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if mediaID == "" {
		return nil, refuse("100", "Invalid parameter")
	}
	b := MediaBytes(mediaID)
	if int64(len(b)) > maxBytes {
		return nil, messaging.ErrMediaTooLarge
	}
	return &messaging.Media{Size: int64(len(b)), Body: io.NopCloser(strings.NewReader(string(b)))}, nil
}
