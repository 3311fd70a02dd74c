package metaprovider_test

import (
	"fmt"
	"net/http/httptest"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/provider/metaprovider"
	"github.com/ujumbe/messaging/store/memstore"
)

// ExampleNewReceiver mounts a Receiver and answers Meta's verification
// handshake.
func ExampleNewReceiver() {
	svc, err := messaging.New(memstore.New(), fakeprovider.New(), nil)
	if err != nil {
		panic(err)
	}
	rc := metaprovider.NewReceiver(svc, &metaprovider.ReceiverOptions{
		VerifyToken: "verify-me-please",
		AppSecret:   "app-secret-0123456789abcdef",
		Accounts:    map[string]string{"106540352242922": "ws_meta"}, // WhatsApp phone-number id: workspace
	})
	// In a server: mux.Handle("/webhooks/meta", rc)
	w := httptest.NewRecorder()
	rc.ServeHTTP(w, httptest.NewRequest("GET", "/webhooks/meta?hub.mode=subscribe&hub.verify_token=verify-me-please&hub.challenge=1158201444", nil))
	fmt.Println(w.Code, w.Body)
	// Output: 200 1158201444
}
