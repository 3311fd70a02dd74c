package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/ujumbe/messaging/record"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/httpapi"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/store/memstore"
)

// Serving the API: mount the handler and call it with a workspace's API
// key. Errors are answered with the error envelope, whose code and field
// say what is wrong: a wrong key is 401 invalid_api_key, template fields
// on POST /v1/messages are 400 validation_error.
func ExampleNew() {
	ctx := context.Background()
	svc, err := messaging.New(memstore.New(), fakeprovider.New(), nil)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := svc.CreateWorkspace(ctx, &messaging.CreateWorkspaceParams{
		ID: "acme", Name: "Acme Ltd", Channels: svc.Channels(),
	}); err != nil {
		log.Fatal(err)
	}
	_, key, err := svc.Workspace("acme").APIKeys.Create(ctx, &messaging.KeyCreateParams{Scopes: []string{record.ScopeWriteMessages}})
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/v1/", httpapi.New(svc, nil))

	send := func(key, body string) {
		req := httptest.NewRequest(http.MethodPost, "/v1/messages", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-API-Key", key)
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		var out struct {
			Status string `json:"status"`
			Error  struct {
				Code  string `json:"code"`
				Field string `json:"field"`
			} `json:"error"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			log.Fatal(err)
		}
		fmt.Println(rec.Code, strings.Join(strings.Fields(out.Status+" "+out.Error.Code+" "+out.Error.Field), " "))
	}
	send(key, `{"channel":"whatsapp","to":"+254712345678","type":"text","text":"Hello"}`)
	send("mk_notakey_0000000000000000000000", `{"channel":"whatsapp","to":"+254712345678","type":"text","text":"Hello"}`)
	send(key, `{"channel":"whatsapp","to":"+254712345678","type":"text","text":"Hi","template_name":"welcome"}`)
	// Output:
	// 201 queued
	// 401 invalid_api_key
	// 400 validation_error template_name
}
