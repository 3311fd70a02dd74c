package httpapi_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

// TestScheduledSendAndCancel drives scheduled sends and cancels over HTTP:
// a send with send_at answers 201 queued and its message shows send_at; a
// dispatch before then hands nothing over; the cancel answers the message
// canceled, a second cancel 409 naming status, another workspace 404; bad
// send_at values are 400 naming send_at; a message not cancelled is sent at
// its time.
func TestScheduledSendAndCancel(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	if _, err := e.svc.DispatchDue(ctx); err != nil { // the setup's messages
		t.Fatal(err)
	}
	at := t0.Add(2 * time.Hour)
	send := func(sendAt string) *response {
		return e.call(t, "POST", "/v1/messages", "A", `{"channel":"whatsapp","to":"+254712345678","type":"text","text":"later","send_at":"`+sendAt+`"}`)
	}
	var res struct {
		MessageID string `json:"message_id"`
		Status    string `json:"status"`
	}
	r := send(at.In(time.FixedZone("EAT", 3*3600)).Format(time.RFC3339))
	expect(t, r, 201, "", "")
	if err := json.Unmarshal(r.body, &res); err != nil || res.Status != "queued" {
		t.Fatalf("send answer %s: %v", r.body, err)
	}
	var msg struct {
		Status string `json:"status"`
		SendAt string `json:"send_at"`
	}
	r = e.call(t, "GET", "/v1/messages/"+res.MessageID, "A", nil)
	expect(t, r, 200, "", "")
	if err := json.Unmarshal(r.body, &msg); err != nil || msg.SendAt != "2026-03-01T11:00:00.000Z" || msg.Status != "queued" {
		t.Fatalf("scheduled message reads %s; want send_at 2026-03-01T11:00:00.000Z, queued", r.body)
	}
	if n, err := e.svc.DispatchDue(ctx); err != nil || n != 0 {
		t.Fatalf("dispatch before send_at handled %d (%v)", n, err)
	}

	expect(t, e.call(t, "POST", "/v1/messages/"+res.MessageID+"/cancel", "B", nil), 404, "not_found", "")
	r = e.call(t, "POST", "/v1/messages/"+res.MessageID+"/cancel", "A", nil)
	expect(t, r, 200, "", "")
	if err := json.Unmarshal(r.body, &msg); err != nil || msg.Status != "canceled" {
		t.Fatalf("cancel answered %s; want the message canceled", r.body)
	}
	expect(t, e.call(t, "POST", "/v1/messages/"+res.MessageID+"/cancel", "A", nil), 409, "conflict", "status")
	expect(t, e.call(t, "POST", "/v1/messages/"+res.MessageID+"/cancel?now=1", "A", nil), 400, "validation_error", "")
	r = e.call(t, "GET", "/v1/messages?status=canceled", "A", nil)
	expect(t, r, 200, "", "")
	var page struct {
		Data []struct {
			MessageID string `json:"message_id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(r.body, &page); err != nil || len(page.Data) != 1 || page.Data[0].MessageID != res.MessageID {
		t.Errorf("GET /v1/messages?status=canceled: %s", r.body)
	}

	for _, bad := range []string{
		"2026-03-01T11:00:00",                                      // no offset
		"01 Mar 26 11:00 +0000",                                    // not RFC 3339
		t0.Add(-2 * time.Minute).Format(time.RFC3339),              // in the past
		t0.Add(35*24*time.Hour + time.Second).Format(time.RFC3339), // beyond 35 days
	} {
		expect(t, send(bad), 400, "validation_error", "send_at")
	}
	expect(t, e.call(t, "POST", "/v1/messages/templates", "A", `{"to":"+254712345678","template_name":"welcome","language":"en_US","send_at":"yesterday"}`), 400, "validation_error", "send_at")

	// One not canceled goes out at its time.
	r = send(at.Format(time.RFC3339))
	expect(t, r, 201, "", "")
	if err := json.Unmarshal(r.body, &res); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(2 * time.Hour)
	if n, err := e.svc.DispatchDue(ctx); err != nil || n != 1 {
		t.Fatalf("dispatch at send_at handled %d (%v); want 1", n, err)
	}
	r = e.call(t, "GET", "/v1/messages/"+res.MessageID, "A", nil)
	if err := json.Unmarshal(r.body, &msg); err != nil || msg.Status == "queued" || msg.Status == "canceled" {
		t.Errorf("at send_at the message reads %s; want it handed over", r.body)
	}
	expect(t, e.call(t, "POST", "/v1/messages/"+res.MessageID+"/cancel", "A", nil), 409, "conflict", "status")
}
