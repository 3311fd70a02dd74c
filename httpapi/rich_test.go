package httpapi_test

import (
	"bytes"
	"mime/multipart"
	"net/textproto"
	"testing"
)

// uploadBoundary is the multipart boundary of uploadBody.
const uploadBoundary = "rich-test-boundary"

// uploadContentType is the Content-Type of the bodies of uploadBody.
const uploadContentType = "multipart/form-data; boundary=" + uploadBoundary

// jpegBytes returns n bytes that start as a JPEG file.
func jpegBytes(n int) []byte {
	b := make([]byte, n)
	copy(b, "\xff\xd8\xff\xe0\x00\x10JFIF")
	return b
}

// uploadBody is a body of POST /v1/media: the text fields (in a fixed
// order: channel, purpose, kind, type), then the part named file with
// filename and content.
func uploadBody(t testing.TB, fields map[string]string, filename string, content []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	if err := w.SetBoundary(uploadBoundary); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"channel", "purpose", "kind", "type"} {
		if v, ok := fields[k]; ok {
			if err := w.WriteField(k, v); err != nil {
				t.Fatal(err)
			}
		}
	}
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="file"; filename="`+filename+`"`)
	h.Set("Content-Type", "application/octet-stream")
	pw, err := w.CreatePart(h)
	if err != nil {
		t.Fatal(err)
	}
	pw.Write(content)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
