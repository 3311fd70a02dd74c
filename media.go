package messaging

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"time"

	"github.com/ujumbe/messaging/record"
)

// ErrMediaTooLarge is wrapped by the error of Messages.Media for media
// larger than Options.MaxMediaBytes, and is the error a Media body returns
// once it has read more than that.
var ErrMediaTooLarge = errors.New("messaging: media larger than the limit")

// Media is the media of an inbound message as the provider serves it.
// The caller must close Body.
type Media struct {
	// ContentType is the media's MIME type.
	ContentType string
	// Size is its length in bytes; -1 when the provider did not say.
	Size int64
	// Filename is the file name the sender gave (documents), if any.
	Filename string
	// Body streams the bytes.
	Body io.ReadCloser
}

// MediaFetcher is an optional capability of a Provider that serves the
// media of inbound messages, by the provider's media id, with the
// workspace's sender (nil when the channel is connected without
// credentials). maxBytes is the service's limit: a provider that knows the
// size before downloading refuses larger media with ErrMediaTooLarge.
// Errors are *SendError where the provider answered (Credentials set for
// refused credentials), any other error a transport failure.
type MediaFetcher interface {
	FetchMedia(ctx context.Context, s *ChannelSender, mediaID string, maxBytes int64) (*Media, error)
}

// Media returns the media of an inbound message of the workspace, fetched
// from the provider with the workspace's stored credentials of the
// message's channel, which never leave the service. The body stops with
// ErrMediaTooLarge past Options.MaxMediaBytes. Errors: not_found when the
// message does not exist, has no media, the provider does not serve media
// or no longer has it; channel_unavailable when the channel is no longer
// connected or its credentials are refused; service_unavailable when the
// provider could not be reached; a *Error wrapping ErrMediaTooLarge (code
// validation_error, field media) when the provider reports a larger size.
func (m *Messages) Media(ctx context.Context, id string) (*Media, error) {
	msg, err := m.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if msg.Direction != record.DirectionInbound || msg.Content == nil || msg.Content.Media == nil || msg.Content.Media.ProviderMediaID == "" {
		return nil, &Error{Code: CodeNotFound, Message: fmt.Sprintf("message %s has no media: only inbound images, videos, audio, documents and stickers do", id)}
	}
	mf, ok := m.svc.providerFor(msg.Channel).(MediaFetcher)
	if !ok {
		return nil, &Error{Code: CodeNotFound, Message: fmt.Sprintf("the media of message %s cannot be fetched: the channel provider does not serve media", id)}
	}
	snd, err := m.svc.connectedSender(ctx, m.ws, msg.Channel, "the media of message "+id+" cannot be fetched")
	if err != nil {
		return nil, err
	}
	started := m.svc.now()
	media, err := mf.FetchMedia(ctx, snd, msg.Content.Media.ProviderMediaID, m.svc.maxMedia)
	if err != nil {
		return nil, m.mediaError(ctx, id, msg.Channel, err, started)
	}
	if media.Size > m.svc.maxMedia {
		media.Body.Close()
		return nil, m.mediaError(ctx, id, msg.Channel, ErrMediaTooLarge, started)
	}
	if media.ContentType == "" {
		media.ContentType = msg.Content.Media.MimeType
	}
	if _, _, perr := mime.ParseMediaType(media.ContentType); perr != nil {
		media.ContentType = "application/octet-stream"
	}
	if media.Filename == "" {
		media.Filename = msg.Content.Media.Filename
	}
	media.Body = &limitedBody{rc: media.Body, left: m.svc.maxMedia}
	return media, nil
}

// mediaError is the error of a failed fetch of the media of message id.
func (m *Messages) mediaError(ctx context.Context, id, channel string, err error, started time.Time) error {
	var se *SendError
	switch {
	case errors.Is(err, ErrMediaTooLarge):
		return errorOn(CodeValidation, "media", fmt.Sprintf("media: the media of message %s is larger than the limit of %d bytes", id, m.svc.maxMedia), ErrMediaTooLarge)
	case errors.As(err, &se) && se.Credentials:
		m.svc.credentialsRefused(context.WithoutCancel(ctx), m.ws, channel, se, started)
		return errorOn(CodeChannelUnavailable, "channel", fmt.Sprintf("the media of message %s cannot be fetched: the provider refused the credentials of channel %s", id, channel), err)
	case errors.As(err, &se) && !se.Retryable:
		return &Error{Code: CodeNotFound, Err: err,
			Message: fmt.Sprintf("the media of message %s is no longer available from the provider (%s)", id, FailureReason(se.Code, se.Text))}
	case ctx.Err() != nil:
		return ctx.Err()
	}
	return &Error{Code: CodeServiceUnavailable, Err: err,
		Message: fmt.Sprintf("the media of message %s could not be fetched from the provider; retry later", id)}
}

// limitedBody reads rc and fails with ErrMediaTooLarge past left bytes.
type limitedBody struct {
	rc   io.ReadCloser
	left int64
}

// Read implements io.Reader.
func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, ErrMediaTooLarge
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return n + int(b.left), ErrMediaTooLarge
	}
	return n, err
}

// Close implements io.Closer.
func (b *limitedBody) Close() error { return b.rc.Close() }
