package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ujumbe/messaging/record"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/httpapi"
)

// TestOptOutKeywords: STOP (any case, any spacing) refuses text, media and
// template sends to its sender on that channel with 422
// recipient_opted_out naming to, shows on the contact and is announced;
// other channels and other recipients are unaffected; START lets sends
// through again (201); an accepted idempotent send still replays.
func TestOptOutKeywords(t *testing.T) {
	t.Parallel()
	e := setup(t, func(o *httpapi.Options) { o.OperatorToken = opToken })
	ctx := context.Background()
	var events []*messaging.Event
	e.svc.Subscribe(func(_ context.Context, ev *messaging.Event) {
		if strings.HasPrefix(ev.Type, "contact.") {
			events = append(events, ev)
		}
	})
	const phone = "+254712345678" // A's contact
	n := 0
	inbound := func(text string) *messaging.Message {
		t.Helper()
		n++
		e.clock.Advance(time.Second)
		m, err := e.svc.RecordInbound(ctx, &messaging.InboundMessage{WorkspaceID: "ws_a", Channel: "whatsapp", From: phone[1:],
			ProviderMessageID: fmt.Sprintf("wamid.kw%d", n), Text: text})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	send := func(body string) *response {
		return e.do(t, request{method: "POST", path: "/v1/messages", key: e.A.Full, body: body})
	}
	text := `{"channel":"whatsapp","to":"` + phone + `","type":"text","text":"Your order shipped"}`
	media := `{"channel":"whatsapp","to":"` + phone + `","type":"image","media_url":"https://example.com/a.jpg"}`
	tpl := `{"to":"` + phone + `","template_name":"order_update","language":"en","components":[{"type":"body","parameters":[{"type":"text","text":"Amina"},{"type":"text","text":"A-1"}]}]}`
	idem := `{"channel":"whatsapp","to":"` + phone + `","type":"text","text":"Once","idempotency_key":"before-stop"}`
	if r := send(idem); r.status != 201 {
		t.Fatalf("send before STOP: %d %s", r.status, r.body)
	}

	inbound("Thanks!") // not a keyword
	inbound("stop please")
	if r := send(text); r.status != 201 {
		t.Fatalf("a message containing stop opted out: %d %s", r.status, r.body)
	}
	stop := inbound("  s T o P \n")
	for name, r := range map[string]*response{
		"text":     send(text),
		"media":    send(media),
		"template": e.do(t, request{method: "POST", path: "/v1/messages/templates", key: e.A.Full, body: tpl}),
	} {
		if r.status != 422 || r.env == nil || r.env.Error.Code != "recipient_opted_out" || r.env.Error.Field != "to" || r.env.Error.Docs != "/v1/errors/recipient_opted_out" {
			t.Errorf("%s after STOP: %d %s; want 422 recipient_opted_out naming to", name, r.status, r.body)
		}
	}
	if r := send(idem); r.status != 201 || r.header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay of a message accepted before STOP: %d %s; want the original 201", r.status, r.body)
	}
	if r := send(`{"channel":"messenger","to":"` + phone + `","type":"text","text":"hi"}`); r.status != 201 {
		t.Errorf("other channel: %d %s", r.status, r.body)
	}
	if r := send(`{"channel":"whatsapp","to":"+254700000009","type":"text","text":"hi"}`); r.status != 201 {
		t.Errorf("other recipient: %d %s", r.status, r.body)
	}
	var contact struct {
		OptedOut map[string]string `json:"opted_out"`
	}
	r := e.do(t, request{method: "GET", path: "/v1/contacts/" + e.A.Contact.ID, key: e.A.Full})
	if err := json.Unmarshal(r.body, &contact); err != nil || contact.OptedOut["whatsapp"] != record.FormatTime(stop.CreatedAt) || len(contact.OptedOut) != 1 {
		t.Errorf("contact after STOP: %s; want opted_out.whatsapp = %s", r.body, record.FormatTime(stop.CreatedAt))
	}
	if r := e.do(t, request{method: "PATCH", path: "/v1/contacts/" + e.A.Contact.ID, key: e.A.Full, body: `{"opted_out":false}`}); r.status != 400 || r.env.Error.Field != "opted_out" {
		t.Errorf("PATCH opted_out false: %d %s", r.status, r.body)
	}
	inbound("STOP") // again: no second event

	inbound("Start")
	if r := send(text); r.status != 201 {
		t.Errorf("text after START: %d %s; want 201", r.status, r.body)
	}
	r = e.do(t, request{method: "GET", path: "/v1/contacts/" + e.A.Contact.ID, key: e.A.Full})
	contact.OptedOut = nil
	if err := json.Unmarshal(r.body, &contact); err != nil || contact.OptedOut == nil || len(contact.OptedOut) != 0 {
		t.Errorf("contact after START: %s; want no opt-out", r.body)
	}
	var got []string
	for _, ev := range events {
		d := ev.Data.(messaging.ContactEventData)
		got = append(got, fmt.Sprintf("%s %s %s %s %s", ev.Type, d.To, d.ContactID, d.Source, d.Channel))
	}
	want := []string{
		"contact.opted_out " + phone + " " + e.A.Contact.ID + " keyword whatsapp",
		"contact.opted_in " + phone + " " + e.A.Contact.ID + " keyword whatsapp",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestOptOutWithoutContactAndOperatorClear: a recipient no contact has is
// suppressed too; a workspace key cannot clear it; the operator can,
// audited.
func TestOptOutWithoutContactAndOperatorClear(t *testing.T) {
	t.Parallel()
	e := setup(t, func(o *httpapi.Options) { o.OperatorToken = opToken })
	ctx := context.Background()
	const to = "+254799000001"
	if _, err := e.svc.RecordInbound(ctx, &messaging.InboundMessage{WorkspaceID: "ws_a", Channel: "whatsapp", From: to, ProviderMessageID: "wamid.x", Text: "SITISHA"}); err != nil {
		t.Fatal(err)
	}
	body := `{"channel":"whatsapp","to":"` + to + `","type":"text","text":"hi"}`
	if r := e.do(t, request{method: "POST", path: "/v1/messages", key: e.A.Full, body: body}); r.status != 422 {
		t.Fatalf("send after SITISHA: %d %s", r.status, r.body)
	}
	// Workspace B is not affected.
	if r := e.do(t, request{method: "POST", path: "/v1/messages", key: e.B.Full, body: body}); r.status != 201 {
		t.Errorf("B's send: %d %s", r.status, r.body)
	}
	clear := request{method: "POST", path: "/admin/v1/workspaces/ws_a/opt-ins", body: `{"channel":"whatsapp","to":"` + to + `"}`}
	if r := e.do(t, request{method: clear.method, path: clear.path, body: clear.body, key: e.A.Full}); r.status != 401 {
		t.Errorf("clearing with an API key: %d %s", r.status, r.body)
	}
	clear.headers = hdr("Authorization", "Bearer "+opToken)
	r := e.do(t, clear)
	if r.status != 200 || !strings.Contains(string(r.body), `"changed":true`) {
		t.Fatalf("operator clear: %d %s", r.status, r.body)
	}
	if r := e.do(t, clear); r.status != 200 || !strings.Contains(string(r.body), `"changed":false`) {
		t.Errorf("second clear: %d %s", r.status, r.body)
	}
	if r := e.do(t, request{method: "POST", path: "/v1/messages", key: e.A.Full, body: body}); r.status != 201 {
		t.Errorf("send after the operator's clear: %d %s", r.status, r.body)
	}
	evs, _, err := e.svc.AuditEvents(ctx, "ws_a", "", 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) == 0 || evs[0].Action != "contact.opted_in" || evs[0].Target != "whatsapp:"+to || evs[0].Actor != httpapi.ActorOperator {
		t.Errorf("audit %+v; want contact.opted_in by the operator", evs[0])
	}
	if len(evs) > 1 && evs[1].Action == "contact.opted_in" {
		t.Errorf("the clear that changed nothing was audited")
	}
}
