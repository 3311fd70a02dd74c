package metaprovider_test

import (
	"errors"
	"net/http"
	"testing"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/record"
)

// inbound is an inbound message from the customer to (its peer).
func inbound(channel, to, providerID string) *messaging.Message {
	m := msg(channel, to, record.TypeText)
	m.ID, m.Direction, m.ProviderMessageID = "msg_in", record.DirectionInbound, providerID
	return m
}

// TestMarkRead checks the read receipts: WhatsApp's read status, with
// the typing indicator when typing
// (https://developers.facebook.com/docs/whatsapp/cloud-api/typing-indicators,
// .../guides/mark-message-as-read), and the Send API's mark_seen then
// typing_on sender actions to the customer
// (https://developers.facebook.com/docs/messenger-platform/send-messages/sender-actions).
func TestMarkRead(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		m      *messaging.Message
		typing bool
		files  []string
	}{
		{"whatsapp", inbound("whatsapp", waTo, wamid), false, []string{"wa_read.json"}},
		{"whatsapp typing", inbound("whatsapp", waTo, wamid), true, []string{"wa_read_typing.json"}},
		{"messenger", inbound("messenger", psid, "m_in"), false, []string{"fb_mark_seen.json"}},
		{"messenger typing", inbound("messenger", psid, "m_in"), true, []string{"fb_mark_seen.json", "fb_typing_on.json"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cs := newCaptureServer(t)
			cs.answer = func(*http.Request) (int, string) { return 200, `{"success":true}` }
			s := sender(c.m)
			if err := cs.provider(t, nil).MarkRead(t.Context(), s, c.m, c.typing); err != nil {
				t.Fatal(err)
			}
			reqs := cs.requests()
			if len(reqs) != len(c.files) {
				t.Fatalf("%d requests, want %d", len(reqs), len(c.files))
			}
			for i, f := range c.files {
				if want := "/v21.0/" + s.AccountID + "/messages"; reqs[i].Path != want || reqs[i].Method != http.MethodPost {
					t.Errorf("request %d: %s %s, want POST %s", i, reqs[i].Method, reqs[i].Path, want)
				}
				if got := reqs[i].Header.Get("Authorization"); got != "Bearer "+token {
					t.Errorf("request %d: Authorization %q", i, got)
				}
				wantJSON(t, f, reqs[i].Body)
			}
		})
	}
}

// TestMarkReadErrors checks that Graph errors are mapped as Send's, that
// typing_on is not sent after a refused mark_seen, and the refusals made
// before any request.
func TestMarkReadErrors(t *testing.T) {
	t.Parallel()
	cs := newCaptureServer(t)
	cs.answer = func(*http.Request) (int, string) {
		return 400, graphError(190, "Error validating access token", "", 463)
	}
	p := cs.provider(t, nil)
	m := inbound("instagram", igsid, "m_in")
	err := p.MarkRead(t.Context(), sender(m), m, true)
	wantCredentials(t, "mark_seen", err, token)
	if n := len(cs.requests()); n != 1 {
		t.Errorf("%d requests, want 1 (no typing_on after a refused mark_seen)", n)
	}
	cs.answer = func(*http.Request) (int, string) { return 503, graphError(2, "Service temporarily unavailable", "", 0) }
	err = p.MarkRead(t.Context(), sender(inbound("whatsapp", waTo, wamid)), inbound("whatsapp", waTo, wamid), false)
	var se *messaging.SendError
	if !errors.As(err, &se) || !se.Retryable || se.Code != "2" {
		t.Errorf("503: err = %v, want a retryable SendError code 2", err)
	}
	before := len(cs.requests())
	noID := inbound("whatsapp", waTo, "")
	if err := p.MarkRead(t.Context(), sender(noID), noID, false); !errors.As(err, &se) || se.Retryable {
		t.Errorf("no provider id: err = %v, want a permanent SendError", err)
	}
	nosender := inbound("whatsapp", waTo, wamid)
	nosender.WorkspaceID = "ws_nosender"
	if err := p.MarkRead(t.Context(), sender(nosender), nosender, false); !errors.As(err, &se) || !se.Credentials {
		t.Errorf("no sender: err = %v, want a sender_not_configured SendError", err)
	}
	if n := len(cs.requests()); n != before {
		t.Errorf("%d requests after refusals, want none", n-before)
	}
}
