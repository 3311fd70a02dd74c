package messaging

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"mime"
	"os"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ujumbe/messaging/record"
)

// MediaUploads uploads files to the provider through the workspace's
// connection, to send them by id (SendParams.MediaID, an interactive
// header's media) or to give a template's media header its sample
// (TemplateComponent.ExampleMedia).
type MediaUploads struct {
	svc *Service
	ws  string
}

// MediaUploadParams are the fields of an upload.
type MediaUploadParams struct {
	// Channel is the channel whose connection uploads it; empty means
	// whatsapp.
	Channel string
	// Purpose is record.MediaForMessages (the default) or
	// record.MediaForTemplateSample.
	Purpose string
	// Kind is the message type the file is sent as (image, video, audio,
	// document, sticker); empty means the kind of MimeType (image/webp is
	// a sticker).
	Kind string
	// MimeType is the file's MIME type, one of the provider's for the
	// kind (see MediaTypes). Required.
	MimeType string
	// Filename is the file's name, if any (a document's name).
	Filename string
	// Size is the file's length in bytes when known, -1 (or 0) when not:
	// the limit is then checked as the bytes stream.
	Size int64
	// Body streams the file. It is read once, as it is handed to the
	// provider; no more than a bounded part of it is held in memory. A
	// read error (an upload cut off) aborts the upload.
	Body io.Reader
}

// MediaType is a MIME type the provider takes, the kind it is sent as and
// its size limit.
type MediaType struct {
	Kind     string
	MimeType string
	// MaxBytes is the largest file; for a sticker, the largest static one
	// (AnimatedMaxBytes the largest animated one).
	MaxBytes, AnimatedMaxBytes int64
}

const (
	kiB = 1 << 10
	miB = 1 << 20
)

// mediaTypes are the MIME types WhatsApp's Cloud API takes, by kind, with
// its size limits (Meta's "Supported media types" reference).
var mediaTypes = func() []MediaType {
	var out []MediaType
	add := func(kind string, max int64, mimes ...string) {
		for _, m := range mimes {
			out = append(out, MediaType{Kind: kind, MimeType: m, MaxBytes: max})
		}
	}
	add(record.MediaImage, 5*miB, "image/jpeg", "image/png")
	add(record.MediaVideo, 16*miB, "video/mp4", "video/3gpp")
	add(record.MediaAudio, 16*miB, "audio/aac", "audio/amr", "audio/mpeg", "audio/mp4", "audio/ogg")
	add(record.MediaDocument, 100*miB, "text/plain", "application/pdf",
		"application/msword", "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
		"application/vnd.ms-excel", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
		"application/vnd.ms-powerpoint", "application/vnd.openxmlformats-officedocument.presentationml.presentation")
	out = append(out, MediaType{Kind: record.MediaSticker, MimeType: "image/webp", MaxBytes: 100 * kiB, AnimatedMaxBytes: 500 * kiB})
	return out
}()

// MediaTypes returns the MIME types uploads take, by kind, with their size
// limits.
func MediaTypes() []MediaType { return slices.Clone(mediaTypes) }

// mediaKinds lists the kinds in the order errors name them.
const mediaKinds = "image, video, audio, document or sticker"

// sniffLen is how many leading bytes are read to check a file's type
// before the upload begins.
const sniffLen = 512

// mediaTTL is how long the provider keeps an upload when it does not say:
// WhatsApp keeps media 30 days.
const mediaTTL = 30 * 24 * time.Hour

// Upload checks the file p describes and streams it to the provider
// through the workspace's verified connection on p.Channel, then records
// it. The kind and MIME type must be among MediaTypes (a template sample
// an image, video or document), the first bytes of the file of that type,
// and the file within the kind's limit: each is a validation_error naming
// kind, mime_type or file, found before the first byte is handed over
// (the limit, when the size is not known beforehand, as the bytes stream:
// the upload is then aborted). An upload cut off is a validation_error
// naming file; nothing is recorded. Errors from the provider are as for
// MarkRead (channel_unavailable, validation_error with its reason,
// service_unavailable).
func (u *MediaUploads) Upload(ctx context.Context, p *MediaUploadParams) (*UploadedMedia, error) {
	if err := requireStorable(p, "body", mediaUploadTexts); err != nil {
		return nil, err
	}
	if p.Body == nil {
		return nil, validationError("file", "is required")
	}
	channel := p.Channel
	if channel == "" {
		channel = ChannelWhatsApp
	}
	if err := u.svc.validateChannel(channel); err != nil {
		return nil, err
	}
	purpose := p.Purpose
	if purpose == "" {
		purpose = record.MediaForMessages
	}
	if purpose != record.MediaForMessages && purpose != record.MediaForTemplateSample {
		return nil, validationError("purpose", "must be %s or %s (got %q)", record.MediaForMessages, record.MediaForTemplateSample, purpose)
	}
	mt, err := mediaTypeOf(p.Kind, p.MimeType)
	if err != nil {
		return nil, err
	}
	if purpose == record.MediaForTemplateSample && mt.Kind != record.MediaImage && mt.Kind != record.MediaVideo && mt.Kind != record.MediaDocument {
		return nil, validationError("kind", "must be image, video or document for a template sample (got %s)", mt.Kind)
	}
	if p.Filename != "" {
		if err := checkFilename(record.FieldPath("filename"), p.Filename); err != nil {
			return nil, err
		}
	}
	if _, err := u.svc.requireChannel(ctx, u.ws, channel); err != nil {
		return nil, err
	}
	prov := u.svc.providerFor(channel)
	var upload func(context.Context, *ChannelSender, *MediaUpload) (*MediaUploadReceipt, error)
	if mu, ok := prov.(MediaUploader); ok && purpose == record.MediaForMessages {
		upload = mu.UploadMedia
	} else if tu, ok := prov.(TemplateSampleUploader); ok && purpose == record.MediaForTemplateSample {
		upload = tu.UploadTemplateSample
	} else {
		return nil, validationError("channel", "the provider of channel %s does not take %s uploads", channel, purpose)
	}
	snd, err := u.svc.connectedSender(ctx, u.ws, channel, "the file cannot be uploaded")
	if err != nil {
		return nil, err
	}

	head, rest, err := readHead(p.Body)
	if err != nil {
		return nil, cutOff(err)
	}
	if len(head) == 0 {
		return nil, validationError("file", "is empty")
	}
	if got := sniffMedia(head); !sameMedia(got, mt.MimeType) {
		return nil, validationError("file", "is not %s: its first bytes are those of %s", mt.MimeType, describeSniffed(got))
	}
	animated := mt.Kind == record.MediaSticker && animatedWebP(head)
	limit := mt.MaxBytes
	if animated {
		limit = mt.AnimatedMaxBytes
	}
	if p.Size > limit {
		return nil, tooLarge(mt, animated, limit, p.Size)
	}
	body := &uploadBody{r: io.MultiReader(bytes.NewReader(head), rest), left: limit, sum: sha256.New()}
	up := &MediaUpload{Kind: mt.Kind, MimeType: mt.MimeType, Filename: p.Filename, Size: -1, Body: body}
	if p.Size > 0 {
		up.Size = p.Size
	}
	if purpose == record.MediaForTemplateSample && up.Size < 0 {
		// The provider's resumable upload needs the length first: the
		// sample is spooled to a temporary file (never to memory).
		f, size, err := spool(body)
		if err != nil {
			return nil, body.failure(err, mt, animated, limit)
		}
		defer os.Remove(f.Name())
		defer f.Close()
		up.Body, up.Size = f, size
	}
	started := u.svc.now()
	rec, err := upload(ctx, snd, up)
	if err == nil && body.err != nil {
		err = body.err // the provider kept going past a failed read
	}
	if err != nil {
		if body.err != nil {
			return nil, body.failure(body.err, mt, animated, limit)
		}
		return nil, u.svc.providerCallError(ctx, u.ws, channel, record.FieldPath("file"), "the upload", err, started)
	}
	if up.Size >= 0 && body.n != up.Size && up.Body == body {
		return nil, validationError("file", "holds %d bytes, not the %d its size says", body.n, up.Size)
	}
	now := u.svc.now()
	m := &UploadedMedia{
		ID: record.NewID("med"), WorkspaceID: u.ws, Channel: channel, Purpose: purpose, Kind: mt.Kind, MimeType: mt.MimeType,
		Size: body.n, Filename: p.Filename, SHA256: hex.EncodeToString(body.sum.Sum(nil)), ProviderMediaID: rec.ProviderMediaID,
		Animated: animated, CreatedAt: now, ExpiresAt: rec.ExpiresAt,
	}
	// The service's clock decides expiry: the provider's date only when
	// it is sooner than the provider's documented 30 days.
	if m.ExpiresAt.IsZero() || m.ExpiresAt.After(now.Add(mediaTTL)) {
		m.ExpiresAt = now.Add(mediaTTL)
	}
	if err := u.svc.store.MediaCreate(context.WithoutCancel(ctx), m); err != nil {
		return nil, wrapStoreError(err, "media", m.ID)
	}
	return m, nil
}

// Get returns an upload of the workspace, expired ones too.
func (u *MediaUploads) Get(ctx context.Context, id string) (*UploadedMedia, error) {
	return getRecord(ctx, u.svc.store.MediaGet, u.ws, "media", id)
}

func mediaUploadTexts(p *MediaUploadParams) error {
	return new(texts).at(nil, "channel", p.Channel, "purpose", p.Purpose, "kind", p.Kind, "mime_type", p.MimeType, "filename", p.Filename).result()
}

// mediaTypeOf returns the media type of a MIME type and kind (empty: the
// MIME type's).
func mediaTypeOf(kind, mimeType string) (MediaType, error) {
	if mimeType == "" {
		return MediaType{}, validationError("mime_type", "is required: the file's MIME type, for example image/jpeg")
	}
	mt, _, err := mime.ParseMediaType(mimeType)
	if err != nil {
		return MediaType{}, validationError("mime_type", "must be a MIME type such as image/jpeg (got %q)", mimeType)
	}
	if kind != "" && !slices.ContainsFunc(mediaTypes, func(t MediaType) bool { return t.Kind == kind }) {
		return MediaType{}, validationError("kind", "must be %s (got %q)", mediaKinds, kind)
	}
	var kinds []string
	for _, t := range mediaTypes {
		if t.MimeType == mt {
			if kind == "" || kind == t.Kind {
				return t, nil
			}
			kinds = append(kinds, t.Kind)
		}
	}
	if len(kinds) > 0 {
		return MediaType{}, validationError("kind", "is %s but the file is %s, which is sent as %s", kind, mt, strings.Join(kinds, " or "))
	}
	var takes []string
	for _, t := range mediaTypes {
		if kind == "" || t.Kind == kind {
			takes = append(takes, t.MimeType)
		}
	}
	what := "an upload"
	if kind != "" {
		what = "a " + kind
	}
	return MediaType{}, validationError("mime_type", "%s must be one of %s (got %q)", what, strings.Join(takes, ", "), mt)
}

// readHead reads the first sniffLen bytes of r (fewer when it ends
// before) and returns them with the reader of the rest. A read error
// other than the end of r (an io.ErrUnexpectedEOF of a cut-off multipart
// part included) is returned.
func readHead(r io.Reader) (head []byte, rest io.Reader, err error) {
	head = make([]byte, 0, sniffLen)
	for len(head) < sniffLen {
		n, err := r.Read(head[len(head):sniffLen])
		head = head[:len(head)+n]
		if err == io.EOF {
			return head, eofReader{}, nil
		}
		if err != nil {
			return nil, nil, err
		}
	}
	return head, r, nil
}

// eofReader is a reader at its end.
type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

// uploadBody is the file as handed to the provider: it counts and hashes
// the bytes, fails past left, and keeps the first read error.
type uploadBody struct {
	r    io.Reader
	n    int64
	left int64
	sum  hash.Hash
	err  error
	over bool
}

// errUploadTooLarge is the read error of an upload past its limit.
var errUploadTooLarge = errors.New("messaging: upload larger than its limit")

// Read implements io.Reader.
func (b *uploadBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.r.Read(p)
	if int64(n) > b.left {
		b.over, b.err = true, errUploadTooLarge
		return 0, b.err
	}
	b.left -= int64(n)
	b.n += int64(n)
	b.sum.Write(p[:n])
	if err != nil && err != io.EOF {
		b.err = &uploadReadError{err}
		return n, b.err
	}
	return n, err
}

// uploadReadError is a failed read of the caller's file.
type uploadReadError struct{ err error }

func (e *uploadReadError) Error() string { return "reading the upload: " + e.err.Error() }
func (e *uploadReadError) Unwrap() error { return e.err }

// failure is the error of an upload whose body failed with err.
func (b *uploadBody) failure(err error, mt MediaType, animated bool, limit int64) error {
	if b.over || errors.Is(err, errUploadTooLarge) {
		return tooLarge(mt, animated, limit, -1)
	}
	var re *uploadReadError
	if errors.As(err, &re) {
		return cutOff(re.err)
	}
	return &Error{Code: CodeInternal, Message: "internal error", Err: err}
}

// cutOff is the error of an upload whose bytes stopped coming.
func cutOff(err error) error {
	return &Error{Code: CodeValidation, Field: "file", Path: record.FieldPath("file"), Err: err,
		Message: "file: the upload ended before the file was complete; nothing was kept"}
}

// tooLarge is the error of a file over its kind's limit (size -1 when not
// known).
func tooLarge(mt MediaType, animated bool, limit, size int64) error {
	what := mt.Kind + " (" + mt.MimeType + ")"
	if mt.Kind == record.MediaSticker {
		what = map[bool]string{true: "an animated sticker", false: "a static sticker"}[animated]
	}
	got := "more: the upload was stopped there"
	if size >= 0 {
		got = fmt.Sprintf("%d bytes", size)
	}
	return validationError("file", "must be at most %s for %s (got %s)", formatBytes(limit), what, got)
}

func formatBytes(n int64) string {
	if n%miB == 0 {
		return fmt.Sprintf("%d MB", n/miB)
	}
	return fmt.Sprintf("%d KB", n/kiB)
}

// spool copies r to a new temporary file and returns it, rewound, with its
// length.
func spool(r io.Reader) (*os.File, int64, error) {
	f, err := os.CreateTemp("", "messaging-upload-*")
	if err != nil {
		return nil, 0, err
	}
	n, err := io.Copy(f, r)
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, 0, err
	}
	return f, n, nil
}

// sniffMedia returns the MIME type the leading bytes head show, among the
// upload types; "" when none, "text/plain" for UTF-8 text without NUL,
// and the container's type for those several types share (an OLE file
// for Office 97 documents, a ZIP file for Office Open XML ones).
func sniffMedia(head []byte) string {
	has := func(off int, magic string) bool {
		return len(head) >= off && bytes.HasPrefix(head[off:], []byte(magic))
	}
	switch {
	case has(0, "\xff\xd8\xff"):
		return "image/jpeg"
	case has(0, "\x89PNG\r\n\x1a\n"):
		return "image/png"
	case has(0, "RIFF") && has(8, "WEBP"):
		return "image/webp"
	case has(4, "ftyp"):
		brand := ""
		if len(head) >= 12 {
			brand = string(head[8:12])
		}
		switch {
		case strings.HasPrefix(brand, "3gp") || strings.HasPrefix(brand, "3g2"):
			return "video/3gpp"
		case brand == "M4A " || brand == "M4B ":
			return "audio/mp4"
		}
		return "video/mp4"
	case has(0, "#!AMR"):
		return "audio/amr"
	case has(0, "OggS"):
		return "audio/ogg"
	case has(0, "ID3"):
		return "audio/mpeg"
	case len(head) >= 2 && head[0] == 0xff && head[1]&0xf6 == 0xf0:
		return "audio/aac" // ADTS: sync word, layer 0
	case len(head) >= 2 && head[0] == 0xff && head[1]&0xe0 == 0xe0:
		return "audio/mpeg" // MPEG audio frame sync
	case has(0, "ADIF"):
		return "audio/aac"
	case has(0, "%PDF-"):
		return "application/pdf"
	case has(0, "\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"):
		return "application/x-ole-storage"
	case has(0, "PK\x03\x04"):
		return "application/zip"
	case isText(head):
		return "text/plain"
	}
	return ""
}

// isText reports whether head is UTF-8 text without NUL (its last rune
// may be cut).
func isText(head []byte) bool {
	if bytes.IndexByte(head, 0) >= 0 {
		return false
	}
	for i := 0; i < len(head); {
		r, size := utf8.DecodeRune(head[i:])
		if r == utf8.RuneError && size <= 1 && len(head)-i >= utf8.UTFMax {
			return false
		}
		i += size
	}
	return true
}

// sameMedia reports whether sniffed bytes fit the declared MIME type.
func sameMedia(sniffed, declared string) bool {
	switch declared {
	case "application/msword", "application/vnd.ms-excel", "application/vnd.ms-powerpoint":
		return sniffed == "application/x-ole-storage"
	case "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
		"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
		"application/vnd.openxmlformats-officedocument.presentationml.presentation":
		return sniffed == "application/zip"
	case "video/mp4", "audio/mp4":
		return sniffed == "video/mp4" || sniffed == "audio/mp4"
	}
	return sniffed == declared
}

func describeSniffed(s string) string {
	if s == "" {
		return "no type an upload takes"
	}
	return s
}

// animatedWebP reports whether a WebP file's header says it is animated
// (an extended VP8X header with its animation flag).
func animatedWebP(head []byte) bool {
	return len(head) > 20 && string(head[12:16]) == "VP8X" && head[20]&0x02 != 0
}
