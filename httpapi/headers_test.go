package httpapi_test

import (
	"net/textproto"
	"testing"

	"github.com/ujumbe/messaging/httpapi"
)

// TestHeaderNamesCanonical: each header name httpapi uses to index
// http.Header directly is the canonical form of the documented name, so
// it reads and writes the entries Get and Set would.
func TestHeaderNamesCanonical(t *testing.T) {
	for doc, used := range httpapi.HeaderNames {
		if want := textproto.CanonicalMIMEHeaderKey(doc); used != want {
			t.Errorf("header %s is indexed as %q, want %q", doc, used, want)
		}
	}
}
