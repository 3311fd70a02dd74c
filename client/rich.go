package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"strings"
	"time"
)

// The rich members of a send (SendParams) and of an outbound message
// (Message), in the shapes of the schemas of httpapi/openapi.json, read
// marks (Messages.MarkRead) and uploads (Client.Media).

// Interactive is an interactive message (schema Interactive): reply
// buttons (Type "button", Buttons), a list ("list", List) or a
// call-to-action URL button ("cta_url", CTA), with a Body and an optional
// Header and Footer. The server checks Meta's limits (3 buttons of 20
// characters, 10 rows, ...) and names the member it refuses.
type Interactive struct {
	Type    string              `json:"type"`
	Header  *InteractiveHeader  `json:"header,omitempty"`
	Body    string              `json:"body"`
	Footer  string              `json:"footer,omitempty"`
	Buttons []InteractiveButton `json:"buttons,omitempty"`
	List    *InteractiveList    `json:"list,omitempty"`
	CTA     *CTAURL             `json:"cta_url,omitempty"`
}

// InteractiveHeader is the header of an interactive message (schema
// InteractiveHeader): Type "text" with Text, or "image", "video" or
// "document" with MediaURL or MediaID (an upload, Client.Media), and a
// document's Filename.
type InteractiveHeader struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	MediaURL string `json:"media_url,omitempty"`
	MediaID  string `json:"media_id,omitempty"`
	Filename string `json:"filename,omitempty"`
}

// InteractiveButton is a reply button: the ID the customer's reply
// carries and its Title.
type InteractiveButton struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

// InteractiveList is the list of a list message: the label of the button
// that opens it and its sections.
type InteractiveList struct {
	Button   string        `json:"button"`
	Sections []ListSection `json:"sections"`
}

// ListSection is a section of a list; Title is required when the list has
// more than one section.
type ListSection struct {
	Title string    `json:"title,omitempty"`
	Rows  []ListRow `json:"rows"`
}

// ListRow is a row of a list section.
type ListRow struct {
	ID          string `json:"id"`
	Title       string `json:"title"`
	Description string `json:"description,omitempty"`
}

// CTAURL is the button of a cta_url message: its text and the https URL
// it opens.
type CTAURL struct {
	DisplayText string `json:"display_text"`
	URL         string `json:"url"`
}

// SendLocation is the location of a location message (schema
// SendLocation); Latitude and Longitude are always sent, 0 included.
type SendLocation struct {
	Latitude  float64 `json:"latitude"`
	Longitude float64 `json:"longitude"`
	Name      string  `json:"name,omitempty"`
	Address   string  `json:"address,omitempty"`
}

// SentReaction is the reaction of a reaction message (schema
// SentReaction): the id of a message of the same conversation and the
// emoji, empty to remove the business's reaction.
type SentReaction struct {
	MessageID string `json:"message_id"`
	Emoji     string `json:"emoji"`
}

// SentContext is the message a send quotes (schema SentContext).
type SentContext struct {
	MessageID string `json:"message_id"`
}

// UnmarshalJSON decodes a message: the interactive member of an outbound
// message, an Interactive, goes to SentInteractive (Interactive holds an
// inbound message's InteractiveReply).
func (m *Message) UnmarshalJSON(b []byte) error {
	type plain Message
	var raw struct {
		plain
		Interactive json.RawMessage `json:"interactive,omitempty"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*m = Message(raw.plain)
	if len(raw.Interactive) == 0 || string(raw.Interactive) == "null" {
		return nil
	}
	if m.Direction == "outbound" {
		return json.Unmarshal(raw.Interactive, &m.SentInteractive)
	}
	return json.Unmarshal(raw.Interactive, &m.Interactive)
}

// MarkReadParams are the options of Messages.MarkRead.
type MarkReadParams struct {
	// Typing shows the customer a typing indicator as well.
	Typing bool `json:"typing,omitempty"`
}

// MarkRead marks an inbound message of the workspace read at the provider
// (POST /v1/messages/{id}/read), with a typing indicator when p.Typing (p
// may be nil), and returns it with ReadAt set. Marking it again changes
// nothing (its first ReadAt stays); an outbound message is a
// validation_error naming id. It is retried as an idempotent call.
func (s *Messages) MarkRead(ctx context.Context, id string, p *MarkReadParams) (*Message, error) {
	if p == nil {
		p = &MarkReadParams{}
	}
	return send[Message](ctx, s.r, http.MethodPost, p, true, "/v1/messages/%s/read", id)
}

// UploadedMedia is a file uploaded to the provider (schema Media), to send
// by id (SendParams.MediaID, InteractiveHeader.MediaID) or, of purpose
// template_sample, as a template header's sample
// (TemplateComponent.ExampleMedia).
type UploadedMedia struct {
	ID      string `json:"id"`
	Channel string `json:"channel"`
	// Purpose is message or template_sample.
	Purpose string `json:"purpose"`
	// Kind is the message type it is sent as: image, video, audio,
	// document or sticker.
	Kind     string `json:"kind"`
	MimeType string `json:"mime_type"`
	// Size is its length in bytes.
	Size     int64  `json:"size"`
	Filename string `json:"filename,omitempty"`
	// SHA256 is the hex SHA-256 of its bytes.
	SHA256   string `json:"sha256"`
	Animated bool   `json:"animated"`
	// ExpiresAt is when the provider forgets it; sending it later is
	// refused.
	CreatedAt time.Time `json:"created_at"`
	ExpiresAt time.Time `json:"expires_at"`
}

// MediaUploadParams are the fields of an upload.
type MediaUploadParams struct {
	// Channel is the channel whose connection uploads it; empty means
	// whatsapp.
	Channel string
	// Purpose is message (the default) or template_sample.
	Purpose string
	// Kind is the message type it is sent as; empty means the kind of
	// MimeType.
	Kind string
	// MimeType is the file's MIME type (image/jpeg, application/pdf, ...);
	// empty sends the file part as application/octet-stream, which the
	// server refuses.
	MimeType string
	// Filename is the file's name (a document's, shown to the customer).
	Filename string
	// Body is the file, read once as it is sent: it is never held in
	// memory whole.
	Body io.Reader
}

// MediaUploads uploads files and reads uploads (Client.Media).
type MediaUploads struct{ r *restClient }

// Upload streams p.Body to the server (POST /v1/media) as a
// multipart/form-data body written as the request goes, and returns the
// upload. The server checks the type, its limit and the file's first
// bytes; an error names the field (kind, mime_type, file). The call is not
// retried: a body cannot be sent twice. Upload returns once the server
// answered; p.Body is then no longer read.
func (s *MediaUploads) Upload(ctx context.Context, p *MediaUploadParams) (*UploadedMedia, error) {
	if p == nil || p.Body == nil {
		return nil, errors.New("client: Media.Upload needs params with a Body")
	}
	pr, pw := io.Pipe()
	defer pr.Close() // stops the writer when the server answered early
	mw := multipart.NewWriter(pw)
	go func() {
		pw.CloseWithError(writeUpload(mw, p))
	}()
	resp, err := s.r.do(ctx, &request{method: http.MethodPost, path: "/v1/media", reader: pr, contentType: mw.FormDataContentType()})
	if err != nil {
		return nil, err
	}
	var out UploadedMedia
	if err := decodeJSON(resp, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// writeUpload writes the multipart body of p to mw: the text fields, then
// the file part, then the closing boundary.
func writeUpload(mw *multipart.Writer, p *MediaUploadParams) error {
	for _, f := range []struct{ name, value string }{{"channel", p.Channel}, {"purpose", p.Purpose}, {"kind", p.Kind}, {"type", p.MimeType}} {
		if f.value == "" {
			continue
		}
		if err := mw.WriteField(f.name, f.value); err != nil {
			return err
		}
	}
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="file"; filename="%s"`, quoteEscaper.Replace(p.Filename)))
	h.Set("Content-Type", "application/octet-stream")
	if p.MimeType != "" {
		h.Set("Content-Type", p.MimeType)
	}
	part, err := mw.CreatePart(h)
	if err != nil {
		return err
	}
	if _, err := io.Copy(part, p.Body); err != nil {
		return err
	}
	return mw.Close()
}

// quoteEscaper escapes a file name in a quoted header parameter, as
// mime/multipart does.
var quoteEscaper = strings.NewReplacer("\\", "\\\\", `"`, "\\\"")

// Get returns an upload of the workspace (GET /v1/media/{id}), expired
// ones too; an id of another workspace is not_found.
func (s *MediaUploads) Get(ctx context.Context, id string) (*UploadedMedia, error) {
	return get[UploadedMedia](ctx, s.r, nil, "/v1/media/%s", id)
}
