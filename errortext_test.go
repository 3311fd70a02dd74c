package messaging_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/store/memstore"
)

// unparsableStore hands out webhook deliveries whose URL does not parse,
// with a long multi-byte host, so that the attempt's error is long.
type unparsableStore struct {
	recordingStore
	url string
}

func (s *unparsableStore) WebhookClaim(ctx context.Context, p *driver.WebhookClaimParams) ([]*messaging.WebhookDelivery, error) {
	ds, err := s.Store.WebhookClaim(ctx, p)
	for _, d := range ds {
		d.URL = s.url
	}
	return ds, err
}

// TestServiceTruncatesLastError: the service, not the store, cuts a
// delivery's error text to 500 bytes, at a rune boundary, before it
// records it; stores keep what they are given (storetest LongTextsKept).
func TestServiceTruncatesLastError(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := &unparsableStore{recordingStore: recordingStore{Store: memstore.New()}, url: "http://[" + strings.Repeat("é", 400)}
	_, perr := url.Parse(st.url)
	if perr == nil || len(perr.Error()) <= 500 {
		t.Fatalf("the test's URL must fail to parse with a long error: %v", perr)
	}
	svc, err := messaging.New(st, newScripted(), &messaging.Options{Clock: newFakeClock(t0).Now, SecretKey: make([]byte, 32),
		Dispatch: messaging.DispatchOptions{PerSenderRate: -1}, Webhooks: messaging.WebhookOptions{AllowLoopback: true}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateWorkspace(ctx, &messaging.CreateWorkspaceParams{ID: "acme", Channels: svc.Channels()}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.Workspace("acme").Webhooks.Create(ctx, &messaging.WebhookCreateParams{URL: "https://hooks.example/in"}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Workspace("acme").Messages.Send(ctx, &messaging.SendParams{Channel: "whatsapp", To: "+254712345678", Type: "text", Text: "hi"}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.DispatchDue(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := svc.DeliverWebhooksDue(ctx); err != nil || n != 1 {
		t.Fatalf("%d attempts, %v; want 1", n, err)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if len(st.records) != 1 {
		t.Fatalf("%d outcomes recorded; want 1", len(st.records))
	}
	got, full := st.records[0].LastError, perr.Error()
	// The error starts with 15 bytes of ASCII, then two-byte runes: the
	// rune that byte 500 cuts in two is dropped.
	if len(got) != 499 || !utf8.ValidString(got) || !strings.HasPrefix(full, got) {
		t.Errorf("recorded error: %d bytes (valid UTF-8 %v) %q; want the first 499 bytes of %q", len(got), utf8.ValidString(got), got, full)
	}
}
