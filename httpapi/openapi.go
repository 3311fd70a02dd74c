package httpapi

import (
	_ "embed"
	"net/http"
	"strconv"

	"github.com/ujumbe/messaging"
)

//go:embed openapi.json
var openAPIDoc []byte

// OpenAPI returns the OpenAPI 3.1 document of the REST surface.
func OpenAPI() []byte { return append([]byte(nil), openAPIDoc...) }

// serveOpenAPI answers GET /v1/openapi.json with the OpenAPI document.
func (h *Handler) serveOpenAPI(w http.ResponseWriter, _ *http.Request, _ *messaging.Principal) error {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(openAPIDoc)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(openAPIDoc)
	return nil
}
