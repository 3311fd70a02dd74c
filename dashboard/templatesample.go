package dashboard

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/record"
)

// The sample of a template's media header: the authoring form is a
// multipart form whose file input header_sample is streamed, as it
// arrives, to MediaUploads.Upload (purpose record.MediaForTemplateSample,
// the kind of the header's format, the MIME type of the part); the
// upload's id goes to the hidden input header_sample_id, which the form
// keeps across a refused save and an edit, and becomes the header's
// ExampleMedia.

const (
	// maxFormFields bounds the text fields of the authoring form, all
	// together.
	maxFormFields = 1 << 20
	// maxTemplateForm bounds the whole authoring form: the largest sample
	// the provider takes (a document) and the text fields.
	maxTemplateForm = 100<<20 + maxFormFields
)

// sampleFormats are the header formats that take a sample.
var sampleFormats = map[string]bool{"IMAGE": true, "VIDEO": true, "DOCUMENT": true}

// readTemplateForm reads the authoring form of r: a multipart form (the
// browser's) with its sample streamed to the provider, or a urlencoded
// one (no sample). A refused sample is returned as sampleErr (the
// library's message, shown at the sample's field) with the rest of the
// form; err is a form that could not be read.
func (h *Handler) readTemplateForm(w http.ResponseWriter, r *http.Request, req *request) (form url.Values, sampleErr string, err error) {
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct != "multipart/form-data" {
		if err := r.ParseForm(); err != nil {
			return nil, "", err
		}
		return r.PostForm, "", nil
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxTemplateForm)
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, "", err
	}
	form = url.Values{}
	left := int64(maxFormFields)
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, "", err
		}
		name := part.FormName()
		if part.FileName() == "" && name != "header_sample" {
			b, err := io.ReadAll(io.LimitReader(part, left+1))
			if err != nil {
				return nil, "", err
			}
			if left -= int64(len(b)); left < 0 {
				return nil, "", &messaging.Error{Code: messaging.CodeValidation, Field: name, Path: record.FieldPath(name),
					Message: fmt.Sprintf("the form's fields are longer than %d bytes", maxFormFields)}
			}
			form.Add(name, string(b))
			continue
		}
		if name != "header_sample" || part.FileName() == "" {
			// Another file input, or no file chosen.
			continue
		}
		format := form.Get("header_format")
		if !sampleFormats[format] {
			// A file left chosen for a header that takes none.
			continue
		}
		u, err := req.svc.MediaUploads.Upload(req.ctx, &messaging.MediaUploadParams{
			Channel: messaging.ChannelWhatsApp, Purpose: record.MediaForTemplateSample,
			Kind: strings.ToLower(format), MimeType: part.Header.Get("Content-Type"),
			Filename: part.FileName(), Size: -1, Body: part,
		})
		if err != nil {
			var e *messaging.Error
			if !errors.As(err, &e) || e.Code == messaging.CodeInternal {
				return nil, "", err
			}
			sampleErr = e.Message
			continue
		}
		form.Set("header_sample_id", u.ID)
	}
	return form, sampleErr, nil
}
