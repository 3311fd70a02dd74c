package fakeprovider

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/record"
)

var (
	_ messaging.MediaUploader          = (*Provider)(nil)
	_ messaging.TemplateSampleUploader = (*Provider)(nil)
	_ messaging.ReadMarker             = (*Provider)(nil)
)

// MediaLifetime is how long the fake (like WhatsApp) keeps an upload:
// a media id or template sample handle is refused from then on.
const MediaLifetime = 30 * 24 * time.Hour

// Upload is a file uploaded to the fake (UploadMedia or
// UploadTemplateSample). Its bytes are not kept: only their length and
// SHA-256.
type Upload struct {
	// ID is the media id (Options.MediaIDPrefix and a sequence number)
	// or, for a template sample, the handle (Options.HandlePrefix ...).
	ID string
	// Purpose is record.MediaForMessages or record.MediaForTemplateSample.
	Purpose string
	// WorkspaceID and Channel are the sender's, empty when the upload had
	// no sender; the media is then usable by every workspace and channel.
	WorkspaceID, Channel string
	Kind, MimeType       string
	Filename             string
	// Size is the number of bytes read; SHA256 their hex SHA-256.
	Size   int64
	SHA256 string
	// CreatedAt is the fake's clock at the upload; ExpiresAt is
	// MediaLifetime later.
	CreatedAt, ExpiresAt time.Time
}

// ReadMark is a MarkRead call the fake accepted.
type ReadMark struct {
	// ProviderMessageID is the inbound message's provider id.
	ProviderMessageID string
	// WorkspaceID and Channel are the message's.
	WorkspaceID, Channel string
	// Typing reports that a typing indicator was asked for.
	Typing bool
	// At is the fake's clock at the call.
	At time.Time
}

// UploadMedia implements messaging.MediaUploader, as WhatsApp's POST
// /{phone-number-id}/media: it reads u.Body to its end, streaming (the
// bytes go to a SHA-256 and a counter, never held), and answers a media
// id ("fake-media-1", ...; see Options.MediaIDPrefix) that Send accepts as
// Outbound.Media.ProviderMediaID until ExpiresAt, MediaLifetime after the
// fake's clock. The kind must be image, video, audio, document or sticker
// and the MIME type one WhatsApp sends as that kind (see Send), else 100
// "Invalid parameter" before any byte is read. A read error of u.Body, or
// the context's end, is returned as it is and nothing is kept. The media
// belongs to the sender's workspace and channel when s is not nil.
func (p *Provider) UploadMedia(ctx context.Context, s *messaging.ChannelSender, u *messaging.MediaUpload) (*messaging.MediaUploadReceipt, error) {
	return p.upload(ctx, s, u, record.MediaForMessages)
}

// UploadTemplateSample implements messaging.TemplateSampleUploader, as
// Meta's Resumable Upload API: like UploadMedia, for an image, video or
// document kind, but it answers a handle ("fake-handle-1", ...; see
// Options.HandlePrefix) that SubmitTemplate accepts as the
// ExampleHandle of a media header of that kind, and that Send does not
// accept as a media id.
func (p *Provider) UploadTemplateSample(ctx context.Context, s *messaging.ChannelSender, u *messaging.MediaUpload) (*messaging.MediaUploadReceipt, error) {
	return p.upload(ctx, s, u, record.MediaForTemplateSample)
}

func (p *Provider) upload(ctx context.Context, s *messaging.ChannelSender, u *messaging.MediaUpload, purpose string) (*messaging.MediaUploadReceipt, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if u == nil || u.Body == nil {
		return nil, invalid("file is required")
	}
	kinds := []string{record.MediaImage, record.MediaVideo, record.MediaAudio, record.MediaDocument, record.MediaSticker}
	if purpose == record.MediaForTemplateSample {
		kinds = []string{record.MediaImage, record.MediaVideo, record.MediaDocument}
	}
	if !slices.Contains(kinds, u.Kind) {
		return nil, invalid(fmt.Sprintf("a %s upload cannot be of kind %q", purpose, u.Kind))
	}
	if !mimeFits(u.Kind, u.MimeType) {
		return nil, invalid(fmt.Sprintf("type %q is not a supported %s type", u.MimeType, u.Kind))
	}
	h := sha256.New()
	n, err := io.Copy(h, &ctxReader{ctx: ctx, r: u.Body})
	if err != nil {
		return nil, err
	}
	switch {
	case n == 0:
		return nil, invalid("the file is empty")
	case u.Size > 0 && u.Size != n:
		return nil, invalid(fmt.Sprintf("file_length is %d but %d bytes were sent", u.Size, n))
	}
	now := p.opts.Clock()
	up := &Upload{Purpose: purpose, Kind: u.Kind, MimeType: u.MimeType, Filename: u.Filename, Size: n,
		SHA256: hex.EncodeToString(h.Sum(nil)), CreatedAt: now, ExpiresAt: now.Add(MediaLifetime)}
	if s != nil {
		up.WorkspaceID, up.Channel = s.WorkspaceID, s.Channel
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if purpose == record.MediaForTemplateSample {
		p.handleSeq++
		up.ID = p.opts.HandlePrefix + strconv.Itoa(p.handleSeq)
	} else {
		p.mediaSeq++
		up.ID = p.opts.MediaIDPrefix + strconv.Itoa(p.mediaSeq)
	}
	p.uploads[up.ID] = up
	p.uploadIDs = append(p.uploadIDs, up.ID)
	return &messaging.MediaUploadReceipt{ProviderMediaID: up.ID, ExpiresAt: up.ExpiresAt}, nil
}

// ctxReader reads r until ctx ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(b []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(b)
}

// Uploads returns copies of the uploads kept, media and template samples,
// in upload order (expired ones too).
func (p *Provider) Uploads() []Upload {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]Upload, 0, len(p.uploadIDs))
	for _, id := range p.uploadIDs {
		out = append(out, *p.uploads[id])
	}
	return out
}

// MarkRead implements messaging.ReadMarker: it accepts the provider id of
// a message Receive handed over (the ids it gave and the ids it was
// given), and records the call (see ReadMarks); any other id, an outbound
// message's included, is refused with 131009 "Parameter value is not
// valid", and a message without one with 100 "Invalid parameter". Marking
// a message read again is accepted, and recorded again.
func (p *Provider) MarkRead(ctx context.Context, _ *messaging.ChannelSender, m *messaging.Message, typing bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if m == nil || m.ProviderMessageID == "" {
		return invalid("message_id is required")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.knownInbound(m.ProviderMessageID) {
		return notValid(fmt.Sprintf("message_id %q names no message received by this number", m.ProviderMessageID))
	}
	p.reads = append(p.reads, ReadMark{ProviderMessageID: m.ProviderMessageID, WorkspaceID: m.WorkspaceID, Channel: m.Channel,
		Typing: typing, At: p.opts.Clock()})
	return nil
}

// ReadMarks returns the MarkRead calls accepted so far, in order.
func (p *Provider) ReadMarks() []ReadMark {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.reads)
}
