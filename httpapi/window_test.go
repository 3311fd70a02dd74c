package httpapi_test

import (
	"context"
	"testing"
	"time"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/httpapi"
)

// TestOutsideWindowReject: a workspace whose operator set outside_window
// to reject refuses a free-form message to a recipient who never wrote,
// or wrote more than 24 hours ago, with 422
// outside_customer_service_window naming to, and accepts templates at any
// time; inside the window the text is accepted. GET /v1/messages/{id} of
// the inbound message gives the window's end. A workspace with the
// default policy accepts the text.
func TestOutsideWindowReject(t *testing.T) {
	t.Parallel()
	e := setup(t, func(o *httpapi.Options) { o.OperatorToken = opToken })
	ctx := context.Background()
	const phone = "+254712345678"
	text := `{"channel":"whatsapp","to":"` + phone + `","type":"text","text":"Your order shipped"}`
	ig := `{"channel":"instagram","to":"ig_user_7","type":"text","text":"Hello"}`
	tpl := `{"to":"` + phone + `","template_name":"order_update","language":"en","components":[{"type":"body","parameters":[{"type":"text","text":"Amina"},{"type":"text","text":"A-1"}]}]}`
	send := func(key, path, body string) *response {
		return e.do(t, request{method: "POST", path: path, key: key, body: body})
	}
	op := func(body string) *response {
		return e.do(t, request{method: "PATCH", path: "/admin/v1/workspaces/ws_a", headers: hdr("Authorization", "Bearer "+opToken), body: body})
	}

	if r := send(e.A.Full, "/v1/messages", text); r.status != 201 {
		t.Fatalf("default policy: %d %s", r.status, r.body)
	}
	if r := op(`{"outside_window":"reject"}`); r.status != 200 || r.object(t)["outside_window"] != "reject" {
		t.Fatalf("PATCH: %d %s", r.status, r.body)
	}
	refused := func(what, body string) {
		t.Helper()
		r := send(e.A.Full, "/v1/messages", body)
		expect(t, r, 422, "outside_customer_service_window", "to")
	}
	refused("never wrote", text)
	refused("instagram, never wrote", ig)
	if r := send(e.A.Full, "/v1/messages/templates", tpl); r.status != 201 {
		t.Errorf("template outside the window: %d %s", r.status, r.body)
	}
	if r := send(e.B.Full, "/v1/messages", `{"channel":"whatsapp","to":"+254722000111","type":"text","text":"Hi"}`); r.status != 201 {
		t.Errorf("the other workspace (default policy): %d %s", r.status, r.body)
	}

	in, err := e.svc.RecordInbound(ctx, &messaging.InboundMessage{WorkspaceID: "ws_a", Channel: "whatsapp", From: phone, ProviderMessageID: "wamid.w1", Text: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	r := e.do(t, request{method: "GET", path: "/v1/messages/" + in.ID, key: e.A.Full})
	if got, want := r.object(t)["window_expires_at"], iso(in.CreatedAt.Add(24*time.Hour)); got != want {
		t.Errorf("window_expires_at = %v, want %s", got, want)
	}
	e.clock.Advance(24*time.Hour - time.Second)
	if r := send(e.A.Full, "/v1/messages", text); r.status != 201 {
		t.Errorf("inside the window: %d %s", r.status, r.body)
	}
	e.clock.Advance(time.Second)
	refused("the window just closed", text)
	if r := send(e.A.Full, "/v1/messages/templates", tpl); r.status != 201 {
		t.Errorf("template after the window: %d %s", r.status, r.body)
	}

	if r := op(`{"outside_window":"provider"}`); r.status != 200 || r.object(t)["outside_window"] != "provider" {
		t.Fatalf("PATCH back: %d %s", r.status, r.body)
	}
	if r := send(e.A.Full, "/v1/messages", text); r.status != 201 {
		t.Errorf("provider policy outside the window: %d %s", r.status, r.body)
	}
}
