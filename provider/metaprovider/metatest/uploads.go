package metatest

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// MediaUpload is a file the Server received on POST
// /{version}/{phone-number-id}/media (Meta's media upload).
type MediaUpload struct {
	// ID is the media id the Server answered.
	ID string
	// AccountID is the phone-number id of the path.
	AccountID string
	// MessagingProduct and Type are the form's fields as sent.
	MessagingProduct, Type string
	// Filename and PartType are the file part's file name and
	// Content-Type.
	Filename, PartType string
	// Size is the number of bytes of the file part, SHA256 their hex
	// SHA-256.
	Size   int64
	SHA256 string
	// Authorization is the request's Authorization header.
	Authorization string
}

// TemplateSample is a file the Server received through the Resumable
// Upload API: POST /{version}/{app-id}/uploads opened its session, POST
// /{version}/{session-id} sent its bytes.
type TemplateSample struct {
	// SessionID is the session's id ("upload:..." without the ?sig=
	// part); AppID the app id of the path that opened it.
	SessionID, AppID string
	// FileName, FileType and Length are the session's file_name,
	// file_type and file_length.
	FileName, FileType string
	Length             int64
	// Size is the number of bytes received, SHA256 their hex SHA-256.
	Size   int64
	SHA256 string
	// Handle is the handle the Server answered ({"h": ...}), which a
	// template gives as its header_handle example; empty while the bytes
	// have not been received.
	Handle string
	// Authorization is the Authorization header of the bytes' request
	// ("OAuth <token>").
	Authorization string
}

// uploadSession is an open Resumable Upload session.
type uploadSession struct {
	TemplateSample
	sig string
}

// MediaUploads returns a copy of the media uploads received so far, in
// order.
func (s *Server) MediaUploads() []MediaUpload {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.uploads)
}

// TemplateSamples returns the Resumable Upload sessions opened so far, in
// order, with what was received on each (Handle is empty for a session
// whose bytes have not arrived).
func (s *Server) TemplateSamples() []TemplateSample {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]TemplateSample, 0, len(s.sessions))
	for _, ss := range s.sessions {
		out = append(out, ss.TemplateSample)
	}
	return out
}

// sampleOf is the received sample of handle h; s.mu is held.
func (s *Server) sampleOf(h string) (TemplateSample, bool) {
	for _, ss := range s.sessions {
		if ss.Handle != "" && ss.Handle == h {
			return ss.TemplateSample, true
		}
	}
	return TemplateSample{}, false
}

// streamed reports whether r's body is read by its handler as it streams
// (a media upload or a Resumable Upload's bytes) rather than recorded.
func streamed(r *http.Request) bool {
	if r.Method != http.MethodPost {
		return false
	}
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/"), "/")
	return len(parts) == 3 && parts[2] == "media" || len(parts) == 2 && strings.HasPrefix(parts[1], "upload:")
}

// isUploadPath reports whether path is a Resumable Upload session's
// (/{version}/upload:...), whose token comes as "OAuth <token>".
func isUploadPath(path string) bool {
	parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
	return len(parts) == 2 && strings.HasPrefix(parts[1], "upload:")
}

// counter counts and hashes the bytes written to it.
type counter struct {
	n int64
	h hash.Hash
}

func (c *counter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return c.h.Write(p)
}

// required answers Graph's error for a missing parameter.
func required(w http.ResponseWriter, name string) {
	graphError(w, http.StatusBadRequest, 100, 0, "OAuthException", "(#100) The parameter "+name+" is required.")
}

// invalidParam answers Graph's error for a parameter of a wrong value.
func invalidParam(w http.ResponseWriter, msg string) {
	graphError(w, http.StatusBadRequest, 100, 0, "OAuthException", "(#100) "+msg)
}

// uploadMedia answers Meta's media upload: multipart/form-data with
// messaging_product "whatsapp", type (the MIME type) and file. The file
// part is read as it streams, counted and hashed, never held.
func (s *Server) uploadMedia(w http.ResponseWriter, r *http.Request) {
	mr, err := r.MultipartReader()
	if err != nil {
		required(w, "file")
		return
	}
	u := MediaUpload{AccountID: r.PathValue("id"), Authorization: r.Header.Get("Authorization")}
	var hasFile bool
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			invalidParam(w, "Invalid parameter: the multipart body is malformed")
			return
		}
		switch part.FormName() {
		case "messaging_product", "type":
			b, err := io.ReadAll(io.LimitReader(part, 1<<10))
			if err != nil {
				invalidParam(w, "Invalid parameter: the multipart body is malformed")
				return
			}
			if part.FormName() == "type" {
				u.Type = string(b)
			} else {
				u.MessagingProduct = string(b)
			}
		case "file":
			c := &counter{h: sha256.New()}
			if _, err := io.Copy(c, part); err != nil {
				// The client gave up (or its body failed): nothing is kept.
				invalidParam(w, "Invalid parameter: the file was cut off")
				return
			}
			hasFile, u.Filename, u.PartType = true, part.FileName(), part.Header.Get("Content-Type")
			u.Size, u.SHA256 = c.n, hex.EncodeToString(c.h.Sum(nil))
		default:
			_, _ = io.Copy(io.Discard, part)
		}
	}
	switch {
	case u.MessagingProduct == "":
		required(w, "messaging_product")
		return
	case u.MessagingProduct != "whatsapp":
		invalidParam(w, "Param messaging_product must be one of {WHATSAPP} - got \""+u.MessagingProduct+"\".")
		return
	case !hasFile:
		required(w, "file")
		return
	case u.Type == "":
		required(w, "type")
		return
	}
	if _, _, err := mime.ParseMediaType(u.Type); err != nil {
		invalidParam(w, "Param type must be a MIME type - got \""+u.Type+"\".")
		return
	}
	s.mu.Lock()
	u.ID = s.nextID()
	s.uploads = append(s.uploads, u)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]string{"id": u.ID})
}

// sampleTypes are the file types the Resumable Upload API takes.
var sampleTypes = []string{"application/pdf", "image/jpeg", "image/jpg", "image/png", "video/mp4"}

// openUpload opens a Resumable Upload session:
// ?file_name=&file_length=&file_type=, answered {"id": "upload:...?sig=..."}.
func (s *Server) openUpload(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("file_length") == "" {
		required(w, "file_length")
		return
	}
	n, err := strconv.ParseInt(q.Get("file_length"), 10, 64)
	if err != nil || n < 0 {
		invalidParam(w, "Param file_length must be a non-negative integer.")
		return
	}
	typ := q.Get("file_type")
	if typ == "" {
		required(w, "file_type")
		return
	}
	if !slices.Contains(sampleTypes, typ) {
		invalidParam(w, "Param file_type must be one of {"+strings.Join(sampleTypes, ", ")+"} - got \""+typ+"\".")
		return
	}
	s.mu.Lock()
	s.seq++
	seq := s.seq
	id := "upload:" + base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "mock-attachment:%d?file_length=%d&file_type=%s", seq, n, typ))
	ss := &uploadSession{TemplateSample: TemplateSample{SessionID: id, AppID: r.PathValue("app"), FileName: q.Get("file_name"),
		FileType: typ, Length: n}, sig: fmt.Sprintf("ARmockSig%d", seq)}
	s.sessions = append(s.sessions, ss)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]string{"id": id + "?sig=" + ss.sig})
}

// upload receives the bytes of a Resumable Upload session: file_offset 0
// and exactly file_length bytes, answered {"h": handle}. Another POST to
// an id that is not a session is Graph's error for an unknown object.
func (s *Server) upload(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if !strings.HasPrefix(id, "upload:") {
		graphError(w, http.StatusBadRequest, 100, 33, "GraphMethodException",
			"Unsupported post request. Object with ID '"+id+"' does not exist, cannot be loaded due to missing permissions, or does not support this operation.")
		return
	}
	s.mu.Lock()
	var ss *uploadSession
	for _, c := range s.sessions {
		if c.SessionID == id {
			ss = c
		}
	}
	s.mu.Unlock()
	switch {
	case ss == nil || subtle.ConstantTimeCompare([]byte(r.URL.Query().Get("sig")), []byte(ss.sig)) != 1:
		invalidParam(w, "Invalid parameter: unknown upload session")
		return
	case r.Header.Get("file_offset") == "":
		required(w, "file_offset")
		return
	case r.Header.Get("file_offset") != "0":
		invalidParam(w, "Param file_offset must be 0: the mock does not resume uploads")
		return
	}
	c := &counter{h: sha256.New()}
	if _, err := io.Copy(c, io.LimitReader(r.Body, ss.Length+1)); err != nil {
		invalidParam(w, "Invalid parameter: the upload was cut off")
		return
	}
	if c.n != ss.Length {
		invalidParam(w, fmt.Sprintf("Invalid parameter: the upload has %d bytes, not its file_length of %d", c.n, ss.Length))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if ss.Handle == "" {
		ss.Size, ss.SHA256 = c.n, hex.EncodeToString(c.h.Sum(nil))
		ss.Authorization = r.Header.Get("Authorization")
		ss.Handle = "4::" + base64.StdEncoding.EncodeToString([]byte(ss.FileType)) + ":ARmockHandle" + ss.SHA256[:16] + ":e:" + strings.TrimPrefix(ss.sig, "ARmockSig")
	}
	writeJSON(w, http.StatusOK, map[string]string{"h": ss.Handle})
}

// checkHeaderHandles refuses, as Meta does, a template whose IMAGE, VIDEO
// or DOCUMENT header lacks a sample: example.header_handle must hold a
// handle the Server issued, of a file of the header's kind. s.mu is held.
func (s *Server) checkHeaderHandles(w http.ResponseWriter, components json.RawMessage) bool {
	var cs []struct {
		Type    string `json:"type"`
		Format  string `json:"format"`
		Example struct {
			HeaderHandle []string `json:"header_handle"`
		} `json:"example"`
	}
	_ = json.Unmarshal(components, &cs)
	for _, c := range cs {
		prefix := map[string]string{"IMAGE": "image/", "VIDEO": "video/", "DOCUMENT": "application/pdf"}[c.Format]
		if !strings.EqualFold(c.Type, "HEADER") || prefix == "" {
			continue
		}
		var sample TemplateSample
		ok := len(c.Example.HeaderHandle) > 0
		if ok {
			sample, ok = s.sampleOf(c.Example.HeaderHandle[0])
		}
		if !ok || !strings.HasPrefix(sample.FileType, prefix) {
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{
				"message": "Invalid parameter", "type": "OAuthException", "code": 100, "error_subcode": 2388273,
				"is_transient": false, "error_user_title": "Missing sample",
				"error_user_msg": "Templates with " + c.Format + " header type need an example/sample, but it was not provided.",
				"fbtrace_id":     "AmockTraceId"}})
			return false
		}
	}
	return true
}
