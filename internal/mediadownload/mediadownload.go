// Package mediadownload sets the headers of the media of an inbound
// message served as a download, the one form the REST surface
// (GET /v1/messages/{id}/media) and the dashboard share.
package mediadownload

import (
	"mime"
	"net/http"
	"strconv"

	"github.com/ujumbe/messaging"
)

// Header sets on hd the headers of m as a download: its content type, not
// sniffed, never cached, an attachment (with the sender's file name when it
// has one) and its length when the provider said it.
func Header(hd http.Header, m *messaging.Media) {
	hd.Set("Content-Type", m.ContentType)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Cache-Control", "private, no-store")
	hd.Set("Content-Disposition", "attachment")
	if m.Filename != "" {
		if cd := mime.FormatMediaType("attachment", map[string]string{"filename": m.Filename}); cd != "" {
			hd.Set("Content-Disposition", cd)
		}
	}
	if m.Size >= 0 {
		hd.Set("Content-Length", strconv.FormatInt(m.Size, 10))
	}
}
