package httpapi_test

import (
	"context"
	"testing"

	"github.com/ujumbe/messaging/record"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/fakeprovider"
)

// TestInboundContentShown: GET /v1/messages/{id} and the lists show an
// inbound message's text and content (media, context mapped to our id,
// unsupported type), and GET /v1/messages/{id}/media streams its media
// with the declared type and file name; outbound messages keep the status
// form.
func TestInboundContentShown(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	doc, err := e.svc.RecordInbound(ctx, &messaging.InboundMessage{WorkspaceID: "ws_a", Channel: "whatsapp", From: "254712345678",
		ProviderMessageID: "wamid.doc", Type: "document", Content: &messaging.InboundContent{
			Media: &record.InboundMedia{ProviderMediaID: "m-77", MimeType: "application/pdf", Caption: "Invoice", Filename: "invoice.pdf"}}})
	if err != nil {
		t.Fatal(err)
	}
	odd, err := e.svc.RecordInbound(ctx, &messaging.InboundMessage{WorkspaceID: "ws_a", Channel: "whatsapp", From: "254712345678",
		ProviderMessageID: "wamid.odd", Type: "order"})
	if err != nil {
		t.Fatal(err)
	}

	r := e.do(t, request{method: "GET", path: "/v1/messages/" + doc.ID, key: e.A.Full})
	got := r.object(t)
	want := map[string]any{"media": map[string]any{"provider_media_id": "m-77", "mime_type": "application/pdf", "caption": "Invoice", "filename": "invoice.pdf"}}
	if d := cmp.Diff(want["media"], got["media"]); d != "" || got["type"] != "document" || got["direction"] != "inbound" {
		t.Errorf("GET inbound document: type %v direction %v, media (-want +got):\n%s", got["type"], got["direction"], d)
	}
	r = e.do(t, request{method: "GET", path: "/v1/messages/" + odd.ID, key: e.A.Full})
	if got := r.object(t); got["type"] != "unsupported" || got["unsupported_type"] != "order" {
		t.Errorf("GET unknown type = %v", got)
	}
	r = e.do(t, request{method: "GET", path: "/v1/messages/" + e.A.Message.MessageID, key: e.A.Full})
	for _, k := range []string{"text", "media", "context", "unsupported_type"} {
		if _, ok := r.object(t)[k]; ok {
			t.Errorf("outbound message shows %s: %s", k, r.body)
		}
	}
	r = e.do(t, request{method: "GET", path: "/v1/messages?direction=inbound", key: e.A.Full})
	var page struct {
		Data []map[string]any `json:"data"`
	}
	decodeInto(t, r.body, &page)
	if len(page.Data) != 2 || page.Data[0]["unsupported_type"] != "order" || page.Data[1]["media"] == nil {
		t.Errorf("inbound list = %v", page.Data)
	}

	r = e.do(t, request{method: "GET", path: "/v1/messages/" + doc.ID + "/media", key: e.A.Full})
	if r.status != 200 || string(r.body) != string(fakeprovider.MediaBytes("m-77")) ||
		r.header.Get("Content-Type") != "application/pdf" || r.header.Get("Content-Disposition") != `attachment; filename=invoice.pdf` ||
		r.header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("media = %d %q %v", r.status, r.body, r.header)
	}
	for name, rq := range map[string]request{
		"no media":        {method: "GET", path: "/v1/messages/" + odd.ID + "/media", key: e.A.Full},
		"other workspace": {method: "GET", path: "/v1/messages/" + doc.ID + "/media", key: e.B.Full},
		"unknown":         {method: "GET", path: "/v1/messages/msg_nope/media", key: e.A.Full},
	} {
		if r := e.do(t, rq); r.status != 404 || r.env == nil || r.env.Error.Code != "not_found" {
			t.Errorf("%s: %d %s; want 404 not_found", name, r.status, r.body)
		}
	}
}

// TestInboundSender: every inbound message resource, from GET
// /v1/messages/{id} and from the list, carries from (E.164 on WhatsApp,
// the scoped user id on Messenger); outbound ones carry none.
func TestInboundSender(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	wa, err := e.svc.RecordInbound(ctx, &messaging.InboundMessage{WorkspaceID: "ws_a", Channel: "whatsapp", From: "254712345678",
		ProviderMessageID: "wamid.from", Type: "text", Text: "Habari"})
	if err != nil {
		t.Fatal(err)
	}
	fb, err := e.svc.RecordInbound(ctx, &messaging.InboundMessage{WorkspaceID: "ws_a", Channel: "messenger", From: "psid_7731",
		ProviderMessageID: "mid.from", Type: "text", Text: "Hi"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{wa.ID: "+254712345678", fb.ID: "psid_7731"}
	for id, from := range want {
		r := e.do(t, request{method: "GET", path: "/v1/messages/" + id, key: e.A.Full})
		if got := r.object(t); got["from"] != from {
			t.Errorf("GET /v1/messages/%s from = %v; want %q: %s", id, got["from"], from, r.body)
		}
	}
	r := e.do(t, request{method: "GET", path: "/v1/messages?direction=inbound", key: e.A.Full})
	var page struct {
		Data []map[string]any `json:"data"`
	}
	decodeInto(t, r.body, &page)
	if len(page.Data) != 2 {
		t.Fatalf("inbound list = %s", r.body)
	}
	for _, m := range page.Data {
		if id, _ := m["message_id"].(string); m["from"] != want[id] {
			t.Errorf("listed %s from = %v; want %q", id, m["from"], want[id])
		}
	}
	r = e.do(t, request{method: "GET", path: "/v1/messages/" + e.A.Message.MessageID, key: e.A.Full})
	if _, ok := r.object(t)["from"]; ok {
		t.Errorf("outbound message shows from: %s", r.body)
	}
}
