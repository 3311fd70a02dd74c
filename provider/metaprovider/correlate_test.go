package metaprovider_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/metaprovider"
	"github.com/ujumbe/messaging/provider/metaprovider/metatest"
)

// recordStatuses returns the status reports e's receiver hands to the
// service from now on.
func (e *hookEnv) recordStatuses() *[]messaging.ProviderStatus {
	var got []messaging.ProviderStatus
	metaprovider.RecordStatuses(e.rc, func(p messaging.ProviderStatus) { got = append(got, p) })
	return &got
}

// waCorrelated is a WhatsApp status carrying biz_opaque_callback_data.
func waCorrelated(id, status, data string) string {
	return fmt.Sprintf(`{"id":%q,"status":%q,"timestamp":"1750263773","recipient_id":"254712345678","biz_opaque_callback_data":%q}`, id, status, data)
}

// TestReceiverCorrelatesWhatsAppStatuses: a status report carrying
// biz_opaque_callback_data reaches the service with our message id and the
// workspace of the receiving phone number (from Accounts or from the
// connection); one without it, or from a number no workspace has, does
// not.
func TestReceiverCorrelatesWhatsAppStatuses(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		setup func(t *testing.T) *hookEnv
	}{
		{"accounts", func(t *testing.T) *hookEnv { return hookSetup(t, nil) }},
		{"connection", func(t *testing.T) *hookEnv { return connectedSetup(t, nil) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := c.setup(t)
			got := e.recordStatuses()
			a := e.postOK(t, waStatuses(
				waCorrelated("wamid.C1", "sent", "msg_0001"),
				waStatus("wamid.C2", "delivered"),
				waCorrelated("wamid.C3", "read", strings.Repeat("x", 513)),                 // longer than any send carries
				`{"id":"wamid.C5","status":"read","biz_opaque_callback_data":"msg\u0000"}`, // text no store keeps
			))
			unknown := strings.Replace(waStatuses(waCorrelated("wamid.C4", "delivered", "msg_0004")), hookPNID, "400000000000004", 1)
			a2 := e.postOK(t, unknown)
			if diff := cmp.Diff([]hookAnswer{{Statuses: 4}, {Statuses: 1}}, []hookAnswer{a, a2}); diff != "" {
				t.Errorf("answers (-want +got):\n%s", diff)
			}
			want := []messaging.ProviderStatus{
				{ProviderMessageID: "wamid.C1", Status: "sent", WorkspaceID: hookWS, MessageID: "msg_0001"},
				{ProviderMessageID: "wamid.C2", Status: "delivered"},
				{ProviderMessageID: "wamid.C3", Status: "read"},
				{ProviderMessageID: "wamid.C5", Status: "read"},
				{ProviderMessageID: "wamid.C4", Status: "delivered"},
			}
			if diff := cmp.Diff(want, *got); diff != "" {
				t.Errorf("reports (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReceiverEchoWithMetadataIsSent: a Messenger or Instagram echo
// carrying metadata is the status sent of its mid, correlated with our
// message in the account's workspace, and nothing is recorded from it; an
// echo without metadata, or from an unknown page, stays ignored.
func TestReceiverEchoWithMetadataIsSent(t *testing.T) {
	t.Parallel()
	e := hookSetup(t, nil)
	got := e.recordStatuses()
	a := e.postOK(t, `{"object":"page","entry":[{"id":"PAGE_1","time":1750263773000,"messaging":[
		{"sender":{"id":"PAGE_1"},"recipient":{"id":"6543210987654321"},"timestamp":1750263773000,"message":{"mid":"m_ECHO1","is_echo":true,"app_id":1517776481860111,"metadata":"msg_0001","text":"hello"}},
		{"sender":{"id":"PAGE_1"},"recipient":{"id":"6543210987654321"},"timestamp":1750263773000,"message":{"mid":"m_ECHO2","is_echo":true,"text":"from the inbox"}},
		{"sender":{"id":"PAGE_9"},"recipient":{"id":"6543210987654321"},"timestamp":1750263773000,"message":{"mid":"m_ECHO3","is_echo":true,"metadata":"msg_0003"}}
	]}]}`)
	b := e.postOK(t, `{"object":"instagram","entry":[{"id":"17841405822304914","time":1750263773000,"messaging":[
		{"sender":{"id":"17841405822304914"},"recipient":{"id":"17841400000000001"},"timestamp":1750263773000,"message":{"mid":"aWdf_ECHO","is_echo":true,"metadata":"msg_0002","text":"hi"}}
	]}]}`)
	if diff := cmp.Diff([]hookAnswer{{Statuses: 1, Ignored: 2}, {Statuses: 1}}, []hookAnswer{a, b}); diff != "" {
		t.Errorf("answers (-want +got):\n%s", diff)
	}
	want := []messaging.ProviderStatus{
		{ProviderMessageID: "m_ECHO1", Status: "sent", WorkspaceID: hookWS, MessageID: "msg_0001"},
		{ProviderMessageID: "aWdf_ECHO", Status: "sent", WorkspaceID: hookWS, MessageID: "msg_0002"},
	}
	if diff := cmp.Diff(want, *got); diff != "" {
		t.Errorf("reports (-want +got):\n%s", diff)
	}
	if n := e.store.created.Load(); n != 0 {
		t.Errorf("%d messages recorded from echoes, want none", n)
	}
}

// TestCorrelationRoundTrip: a send Meta accepts and never answers is an
// unknown outcome, and the status webhook Meta then posts reaches the
// service correlated with the message sent.
func TestCorrelationRoundTrip(t *testing.T) {
	t.Parallel()
	graph := metatest.New()
	defer graph.Close()
	graph.SetSendDelay(metatest.NoAnswer)
	p, err := metaprovider.New(&metaprovider.Options{BaseURL: graph.URL(), HTTPClient: graph.Client()})
	if err != nil {
		t.Fatal(err)
	}
	e := hookSetup(t, nil)
	got := e.recordStatuses()
	for _, m := range []*messaging.Message{
		{ID: "msg_wa", WorkspaceID: hookWS, Channel: "whatsapp", To: hookCustomer, Type: "text", Text: "hi"},
		{ID: "msg_fb", WorkspaceID: hookWS, Channel: "messenger", To: "6543210987654321", Type: "text", Text: "hi"},
	} {
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		_, err := p.Send(ctx, sender(m), m)
		cancel()
		unknownError(t, err)
	}
	sends := graph.Sends()
	if len(sends) != 2 {
		t.Fatalf("sends = %+v, want 2", sends)
	}
	status, err := graph.StatusWebhook(sends[0].ProviderMessageID, "delivered")
	if err != nil {
		t.Fatal(err)
	}
	echo, err := graph.EchoWebhook(sends[1].ProviderMessageID)
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range [][]byte{status, echo} {
		if a := e.postOK(t, string(body)); a.Statuses != 1 {
			t.Errorf("answer = %+v to %s, want 1 status", a, body)
		}
	}
	want := []messaging.ProviderStatus{
		{ProviderMessageID: sends[0].ProviderMessageID, Status: "delivered", WorkspaceID: hookWS, MessageID: "msg_wa"},
		{ProviderMessageID: sends[1].ProviderMessageID, Status: "sent", WorkspaceID: hookWS, MessageID: "msg_fb"},
	}
	if diff := cmp.Diff(want, *got); diff != "" {
		t.Errorf("reports (-want +got):\n%s", diff)
	}
}
