package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/ujumbe/messaging/client"
)

// BenchmarkSend compares a send through the client (idempotency key,
// retry bookkeeping, error decoding) with the same request written by
// hand with net/http, against the same server on memstore.
func BenchmarkSend(b *testing.B) {
	e := setup(b)
	ctx := context.Background()
	b.Run("client", func(b *testing.B) {
		c := e.client(b, e.A.Key, nil)
		for b.Loop() {
			if _, err := c.Messages.Send(ctx, &client.SendParams{Channel: "whatsapp", To: "+254712345678", Type: "text", Text: "bench"}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("net/http", func(b *testing.B) {
		hc := &http.Client{}
		n := 0
		for b.Loop() {
			n++
			body, _ := json.Marshal(&client.SendParams{Channel: "whatsapp", To: "+254712345678", Type: "text", Text: "bench", IdempotencyKey: fmt.Sprint("k-", n)})
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.srv.URL+"/v1/messages", bytes.NewReader(body))
			req.Header.Set("X-API-Key", e.A.Key)
			req.Header.Set("Content-Type", "application/json")
			resp, err := hc.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			var out client.SendResult
			err = json.NewDecoder(resp.Body).Decode(&out)
			resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusCreated {
				b.Fatal(resp.StatusCode, err)
			}
		}
	})
}
