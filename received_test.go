package messaging_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ujumbe/messaging/record"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/provider/fakeprovider"
)

// standardVerify checks a delivery as the Standard Webhooks specification
// describes it, written from the specification and independent of
// messaging.VerifyWebhook: the secret is the base64 after "whsec_"; the
// signed content is "<webhook-id>.<webhook-timestamp>.<body>"; the
// signature header holds space-separated "v1,<base64 HMAC-SHA256>"
// entries, one of which must match; the timestamp is within tolerance.
func standardVerify(secret string, h http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return err
	}
	id, ts := h.Get("webhook-id"), h.Get("webhook-timestamp")
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return err
	}
	if d := now.Sub(time.Unix(sec, 0)); d > tolerance || d < -tolerance {
		return errors.New("timestamp outside tolerance")
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	want := mac.Sum(nil)
	for _, sig := range strings.Fields(h.Get("webhook-signature")) {
		v, b64, ok := strings.Cut(sig, ",")
		if !ok || v != "v1" {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(b64)
		if err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return errors.New("no matching v1 signature")
}

// TestStandardVerifyVector: the independent verifier accepts the
// specification's test vector, so it can judge the service's signatures.
func TestStandardVerifyVector(t *testing.T) {
	t.Parallel()
	h := http.Header{}
	h.Set("webhook-id", vectorID)
	h.Set("webhook-timestamp", strconv.Itoa(vectorTS))
	h.Set("webhook-signature", vectorSig)
	if err := standardVerify(vectorSecret, h, []byte(vectorBody), time.Unix(vectorTS, 0), 5*time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := standardVerify(vectorSecret, h, []byte(vectorBody+" "), time.Unix(vectorTS, 0), 5*time.Minute); err == nil {
		t.Fatal("an altered body verified")
	}
}

// TestMessageReceivedWebhook: a message simulated with the fake
// provider's Receive reaches a webhook receiver as one message.received
// event, signed as Standard Webhooks prescribes (checked by an independent
// verifier), with the inbound message in data; the same report again is
// recorded and announced once.
func TestMessageReceivedWebhook(t *testing.T) {
	t.Parallel()
	f := setupHooks(t, true)
	fake := fakeprovider.New()
	fake.SetSink(f.svc)
	var bus []*messaging.Event
	f.svc.Subscribe(func(_ context.Context, e *messaging.Event) { bus = append(bus, e) })
	in := &messaging.InboundMessage{WorkspaceID: "acme", From: "254712345678", ProviderMessageID: "wamid.in.1", Text: "Habari, is my order ready?"}
	m, err := fake.Receive(f.ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	again, err := fake.Receive(f.ctx, in)
	if err != nil || again.ID != m.ID {
		t.Fatalf("repeated report: %v, %v; want the stored message %s", again, err, m.ID)
	}
	total := 0
	for range 3 {
		total += f.deliver(t)
	}
	if total != 1 || f.rcv.count() != 1 {
		t.Fatalf("delivered %d (received %d), want 1", total, f.rcv.count())
	}
	h, body := f.rcv.got[0], f.rcv.bodies[0]
	if err := standardVerify(f.secret, h, body, f.clock.Now(), 5*time.Minute); err != nil {
		t.Errorf("delivery does not verify independently: %v\n%s", err, body)
	}
	var ev struct {
		ID, Type  string
		CreatedAt string `json:"created_at"`
		Data      map[string]any
	}
	if err := json.Unmarshal(body, &ev); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"message_id": m.ID, "conversation_id": m.ConversationID, "channel": "whatsapp", "from": "+254712345678",
		"type": "text", "text": in.Text, "created_at": record.FormatTime(m.CreatedAt)}
	if ev.Type != "message.received" || ev.ID != h.Get("webhook-id") || ev.CreatedAt == "" || !mapsEqual(want, ev.Data) {
		t.Errorf("payload %s; want type message.received with data %v", body, want)
	}
	if len(bus) != 1 || bus[0].Type != messaging.EventMessageReceived || bus[0].Data.(messaging.MessageEventData).MessageID != m.ID {
		t.Errorf("in-process events %v; want one message.received", bus)
	}
}

func mapsEqual(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestMessageReceivedCarriesContent: the message.received event of a rich
// inbound message carries its content members in data, in the same JSON
// shape as GET /v1/messages/{id}, the quoted message mapped to our id.
func TestMessageReceivedCarriesContent(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := context.Background()
	var events []*messaging.Event
	f.svc.Subscribe(func(_ context.Context, e *messaging.Event) {
		if e.Type == messaging.EventMessageReceived {
			events = append(events, e)
		}
	})
	out := f.mustSend(t, f.svc.Workspace("acme"), textMsg("+254712345678"))
	if _, err := f.svc.DispatchDue(ctx); err != nil {
		t.Fatal(err)
	}
	sent, err := f.svc.Workspace("acme").Messages.Get(ctx, out.MessageID)
	if err != nil || sent.ProviderMessageID == "" {
		t.Fatalf("sent = %+v, %v", sent, err)
	}
	if _, err := f.svc.RecordInbound(ctx, &messaging.InboundMessage{WorkspaceID: "acme", Channel: "whatsapp", From: "254712345678",
		ProviderMessageID: "wamid.loc", Type: "location", Content: &messaging.InboundContent{
			Location: &record.Location{Latitude: -1.5, Longitude: 36.5, Name: "Depot"},
			Context:  &messaging.ReplyContext{ProviderMessageID: sent.ProviderMessageID}}}); err != nil {
		t.Fatal(err)
	}
	if len(events) != 1 {
		t.Fatalf("%d message.received events, want 1", len(events))
	}
	b, err := json.Marshal(events[0])
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Data map[string]any `json:"data"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"location": map[string]any{"latitude": -1.5, "longitude": 36.5, "name": "Depot"},
		"context": map[string]any{"message_id": out.MessageID, "provider_message_id": sent.ProviderMessageID}}
	for k, v := range want {
		if d := cmp.Diff(v, got.Data[k]); d != "" {
			t.Errorf("data.%s (-want +got):\n%s", k, d)
		}
	}
	if got.Data["type"] != "location" {
		t.Errorf("data.type = %v", got.Data["type"])
	}
}

// TestMessageFrom: an inbound message's From is its sender, the value the
// message.received event carries as from (E.164 on WhatsApp, the scoped id
// on Instagram); an outbound message has none.
func TestMessageFrom(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := context.Background()
	var fromEvent []string
	f.svc.Subscribe(func(_ context.Context, e *messaging.Event) {
		if d, ok := e.Data.(messaging.MessageEventData); ok {
			fromEvent = append(fromEvent, d.From)
		}
	})
	wa, err := f.svc.RecordInbound(ctx, &messaging.InboundMessage{WorkspaceID: "acme", Channel: "whatsapp", From: "254712345678",
		ProviderMessageID: "wamid.from", Type: "text", Text: "Habari"})
	if err != nil {
		t.Fatal(err)
	}
	ig, err := f.svc.RecordInbound(ctx, &messaging.InboundMessage{WorkspaceID: "acme", Channel: "instagram", From: "ig_user_9",
		ProviderMessageID: "ig.from", Type: "text", Text: "Hi"})
	if err != nil {
		t.Fatal(err)
	}
	out := f.mustSend(t, f.acme, textMsg("+254712345678"))
	sent, err := f.acme.Messages.Get(ctx, out.MessageID)
	if err != nil {
		t.Fatal(err)
	}
	if wa.From() != "+254712345678" || ig.From() != "ig_user_9" || sent.From() != "" {
		t.Errorf("From: whatsapp %q, instagram %q, outbound %q; want +254712345678, ig_user_9 and none", wa.From(), ig.From(), sent.From())
	}
	if d := cmp.Diff([]string{"+254712345678", "ig_user_9"}, fromEvent); d != "" {
		t.Errorf("message.received from (-want +got):\n%s", d)
	}
}
