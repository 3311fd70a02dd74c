package httpapi

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"

	"github.com/ujumbe/messaging"
)

// uploadFields are the text fields of POST /v1/media, each read into the
// upload's params; they come before the part named file.
const uploadFields = "channel, purpose, kind and type"

// maxUploadField bounds the bytes of one text field of an upload.
const maxUploadField = 1024

// maxUploadBody is the most bytes a body of POST /v1/media may hold: the
// largest file any kind takes (messaging.MediaTypes) and 1 MiB for the
// text fields and the multipart framing. The library checks each kind's
// own limit as the bytes stream.
func maxUploadBody() int64 {
	var largest int64
	for _, t := range messaging.MediaTypes() {
		largest = max(largest, t.MaxBytes, t.AnimatedMaxBytes)
	}
	return largest + 1<<20
}

// uploadMedia serves POST /v1/media: a multipart/form-data body read as
// it streams (never spooled whole), its text fields first, then the part
// named file, whose bytes go to the library's upload as they arrive.
func (h *Handler) uploadMedia(w http.ResponseWriter, r *http.Request, p *messaging.Principal) error {
	if err := noQuery(r); err != nil {
		return err
	}
	ct := r.Header.Get("Content-Type")
	if mt, params, err := mime.ParseMediaType(ct); err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return badRequest("Content-Type", "must be multipart/form-data with a boundary (got %q)", ct)
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxUploadBody())
	mr, err := r.MultipartReader()
	if err != nil {
		return badRequest("Content-Type", "must be multipart/form-data with a boundary (got %q)", ct)
	}
	params := &messaging.MediaUploadParams{Size: -1}
	dst := map[string]*string{"channel": &params.Channel, "purpose": &params.Purpose, "kind": &params.Kind, "type": &params.MimeType}
	seen := map[string]bool{}
	var file *multipart.Part
	for file == nil {
		part, err := mr.NextPart()
		if err != nil {
			return partsEnded(err)
		}
		name := part.FormName()
		switch {
		case name == "file":
			file = part
			continue
		case name == "":
			return badRequest("body", "every part must be form-data with a name: %s, then file", uploadFields)
		case dst[name] == nil:
			return badRequest(name, "unknown field; the fields are %s, then the part named file", uploadFields)
		case seen[name]:
			return badRequest(name, "must be given once")
		}
		seen[name] = true
		v, err := io.ReadAll(io.LimitReader(part, maxUploadField+1))
		if err != nil {
			return partsEnded(err)
		}
		if len(v) > maxUploadField {
			return badRequest(name, "must be at most %d bytes", maxUploadField)
		}
		*dst[name] = string(v)
	}
	if params.MimeType == "" {
		params.MimeType = file.Header.Get("Content-Type")
	}
	params.Filename = file.FileName()
	body := &filePart{part: file, mr: mr}
	params.Body = body
	m, err := h.svc.Workspace(p.WorkspaceID).MediaUploads.Upload(r.Context(), params)
	var mbe *http.MaxBytesError
	switch {
	case body.refusal != nil:
		return body.refusal
	case err != nil && errors.As(body.err, &mbe):
		return &apiError{code: CodePayloadTooLarge, status: http.StatusRequestEntityTooLarge,
			message: fmt.Sprintf("body: must be at most %d bytes", mbe.Limit)}
	case err != nil:
		return err
	}
	writeJSON(w, http.StatusCreated, mediaView(m))
	return nil
}

// partsEnded is the refusal of a body whose parts ended, or could not be
// read, before the part named file.
func partsEnded(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return &apiError{code: CodePayloadTooLarge, status: http.StatusRequestEntityTooLarge,
			message: fmt.Sprintf("body: must be at most %d bytes", mbe.Limit)}
	}
	if err == io.EOF {
		return badRequest("file", "is required: a part named file, after the fields %s", uploadFields)
	}
	return badRequest("file", "is required: the body ended, or is not well-formed multipart, before a part named file")
}

// filePart is the file of an upload as the library reads it: the part's
// bytes, then, at its end, a look at what follows, which must be the end
// of the body. Another part is refused (refusal, naming it) by failing the
// read, so the library aborts the upload and records nothing.
type filePart struct {
	part *multipart.Part
	mr   *multipart.Reader
	done bool
	// err is the first read error of the body (a cut-off body, one past
	// its bound); refusal is the refusal of a part after the file.
	err     error
	refusal error
}

// Read implements io.Reader.
func (f *filePart) Read(b []byte) (int, error) {
	if f.done {
		return 0, io.EOF
	}
	n, err := f.part.Read(b)
	if err != io.EOF {
		if err != nil && f.err == nil {
			f.err = err
		}
		return n, err
	}
	next, err := f.mr.NextPart()
	switch {
	case err == io.EOF:
		f.done = true
		return n, io.EOF
	case err != nil:
		f.err = err
		return n, err
	case next.FormName() == "file":
		f.refusal = badRequest("file", "must be given once: the body holds a second part named file")
	default:
		name := next.FormName()
		if name == "" {
			name = "body"
		}
		f.refusal = badRequest(name, "must come before the part named file (the fields are %s, then file)", uploadFields)
	}
	return n, f.refusal
}

func (h *Handler) getMedia(w http.ResponseWriter, r *http.Request, p *messaging.Principal) error {
	return getByID(w, r, h.svc.Workspace(p.WorkspaceID).MediaUploads.Get, mediaView)
}

// markRead serves POST /v1/messages/{id}/read: no body, or a JSON object
// with the optional member typing.
func (h *Handler) markRead(w http.ResponseWriter, r *http.Request, p *messaging.Principal) error {
	if err := noQuery(r); err != nil {
		return err
	}
	body, err := h.readBody(w, r)
	if err != nil {
		return err
	}
	var q markReadRequest
	if len(body) > 0 {
		r.Body = io.NopCloser(bytes.NewReader(body))
		if err := h.decode(w, r, &q); err != nil {
			return err
		}
	}
	return answer(w, http.StatusOK, messageView)(h.svc.Workspace(p.WorkspaceID).Messages.MarkRead(r.Context(), r.PathValue("id"), &messaging.MarkReadParams{Typing: q.Typing}))
}

// cancelMessage serves POST /v1/messages/{id}/cancel: no query, no body
// (or an empty object); it answers the message as canceled.
func (h *Handler) cancelMessage(w http.ResponseWriter, r *http.Request, p *messaging.Principal) error {
	if err := noQuery(r); err != nil {
		return err
	}
	body, err := h.readBody(w, r)
	if err != nil {
		return err
	}
	if len(body) > 0 {
		r.Body = io.NopCloser(bytes.NewReader(body))
		if err := h.decode(w, r, &struct{}{}); err != nil {
			return err
		}
	}
	return answer(w, http.StatusOK, messageView)(h.svc.Workspace(p.WorkspaceID).Messages.Cancel(r.Context(), r.PathValue("id")))
}

// mediaJSON is an uploaded file (POST /v1/media, GET /v1/media/{id}):
// never the provider's id or handle.
type mediaJSON struct {
	ID        string    `json:"id"`
	Channel   string    `json:"channel"`
	Purpose   string    `json:"purpose"`
	Kind      string    `json:"kind"`
	MimeType  string    `json:"mime_type"`
	Size      int64     `json:"size"`
	Filename  string    `json:"filename,omitempty"`
	SHA256    string    `json:"sha256"`
	Animated  bool      `json:"animated"`
	CreatedAt timestamp `json:"created_at"`
	ExpiresAt timestamp `json:"expires_at"`
}

func mediaView(m *messaging.UploadedMedia) mediaJSON {
	return mediaJSON{ID: m.ID, Channel: m.Channel, Purpose: m.Purpose, Kind: m.Kind, MimeType: m.MimeType, Size: m.Size,
		Filename: m.Filename, SHA256: m.SHA256, Animated: m.Animated, CreatedAt: timestamp(m.CreatedAt), ExpiresAt: timestamp(m.ExpiresAt)}
}
