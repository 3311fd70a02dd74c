package httpapi

import (
	_ "embed"
	"net/http"
	"strconv"
)

//go:embed openapi.json
var openAPIDoc []byte

// OpenAPI returns the OpenAPI 3.1 document of the REST surface.
func OpenAPI() []byte { return append([]byte(nil), openAPIDoc...) }

func serveOpenAPI(w http.ResponseWriter) error {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(openAPIDoc)))
	w.WriteHeader(200)
	_, _ = w.Write(openAPIDoc)
	return nil
}
