package sqlitestore

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mattn/go-sqlite3"
	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/internal/testclock"
	"github.com/ujumbe/messaging/provider/metaprovider"
)

// countingProvider accepts every message and counts the hand-overs of each.
type countingProvider struct {
	mu    sync.Mutex
	calls map[string]int
	n     int
}

// Channels makes the provider serve Meta's channels.
func (*countingProvider) Channels() []messaging.ChannelSpec { return metaprovider.ChannelSpecs() }

func (p *countingProvider) Send(_ context.Context, _ *messaging.ChannelSender, m *messaging.Message) (*messaging.SendReceipt, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls[m.ID]++
	p.n++
	return &messaging.SendReceipt{ProviderMessageID: fmt.Sprintf("wamid.%d", p.n)}, nil
}

func (p *countingProvider) count(id string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls[id]
}

// TestDiskFullSendsEachMessageOnce is the full-disk scenario on the real
// store and the real workers: for 15 s of the injected clock every COMMIT
// of the writer fails after its statements ran (SQLite refuses it and
// rolls back, as when the disk fills while the transaction is written),
// while the dispatcher and the webhook sender run and clients keep
// sending. Afterwards each accepted message went to the provider exactly
// once, nothing refused during the fault went anywhere, and no webhook
// event was delivered more than twice.
func TestDiskFullSendsEachMessageOnce(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, fullDBPath(t))
	var full atomic.Bool
	conn, err := s.w.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := conn.Raw(func(dc any) error {
		dc.(*sqlite3.SQLiteConn).RegisterCommitHook(func() int {
			if full.Load() {
				return 1 // the COMMIT fails and SQLite rolls the transaction back
			}
			return 0
		})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	conn.Close()

	var hooksMu sync.Mutex
	deliveries := map[string]int{} // by event id
	hookSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		hooksMu.Lock()
		deliveries[r.Header.Get("webhook-id")]++
		hooksMu.Unlock()
	}))
	defer hookSrv.Close()

	t0 := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	clock := testclock.New(t0)
	faultEnd := t0.Add(15 * time.Second)
	var sleeps atomic.Int64
	sleep := func(ctx context.Context, d time.Duration) error {
		sleeps.Add(1)
		clock.Advance(d)
		if !clock.Now().Before(faultEnd) {
			full.Store(false)
		}
		return ctx.Err()
	}
	prov := &countingProvider{calls: map[string]int{}}
	svc, err := messaging.New(s, prov, &messaging.Options{Clock: clock.Now, Sleep: sleep, SecretKey: make([]byte, 32),
		Dispatch: messaging.DispatchOptions{PerSenderRate: -1, PollInterval: 20 * time.Millisecond},
		Webhooks: messaging.WebhookOptions{AllowLoopback: true, PollInterval: 20 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateWorkspace(ctx, &messaging.CreateWorkspaceParams{ID: "acme", Channels: svc.Channels()}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.Workspace("acme").Webhooks.Create(ctx, &messaging.WebhookCreateParams{URL: hookSrv.URL}); err != nil {
		t.Fatal(err)
	}
	ws := svc.Workspace("acme")
	send := func(i int) (string, error) {
		res, err := ws.Messages.Send(ctx, &messaging.SendParams{Channel: "whatsapp", To: fmt.Sprintf("+2547123456%02d", i), Type: "text", Text: "hi"})
		if err != nil {
			return "", err
		}
		return res.MessageID, nil
	}
	var accepted []string
	for i := range 4 {
		id, err := send(i)
		if err != nil {
			t.Fatal(err)
		}
		accepted = append(accepted, id)
	}

	full.Store(true)
	for i := 4; i < 8; i++ {
		if id, err := send(i); err == nil {
			t.Fatalf("send during the fault accepted %s; want an error", id)
		} else if c := messaging.ErrorCode(err); c != messaging.CodeInternal && c != messaging.CodeServiceUnavailable {
			t.Fatalf("send during the fault: %v; want internal_error or service_unavailable", err)
		}
	}
	if err := svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		sent := 0
		for _, id := range accepted {
			if m, err := ws.Messages.Get(ctx, id); err == nil && m.Status == messaging.StatusSent {
				sent++
			}
		}
		hooksMu.Lock()
		events := len(deliveries)
		hooksMu.Unlock()
		if sent == len(accepted) && events == len(accepted) && !full.Load() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the fault: %d of %d messages sent, %d events delivered, fault over: %v", sent, len(accepted), events, !full.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := svc.Close(cctx); err != nil {
		t.Fatal(err)
	}
	for _, id := range accepted {
		if n := prov.count(id); n != 1 {
			t.Errorf("%s handed to the provider %d times; want 1", id, n)
		}
	}
	prov.mu.Lock()
	if prov.n != len(accepted) {
		t.Errorf("provider got %d messages; want the %d accepted ones", prov.n, len(accepted))
	}
	prov.mu.Unlock()
	hooksMu.Lock()
	defer hooksMu.Unlock()
	for ev, n := range deliveries {
		if n > 2 {
			t.Errorf("event %s delivered %d times; want at most 2", ev, n)
		}
	}
	if sleeps.Load() > 60 {
		t.Errorf("the workers waited %d times during a 15 s fault; want a backoff", sleeps.Load())
	}
}

// fullDBPath returns a new database path in the test's directory.
func fullDBPath(t *testing.T) string { return t.TempDir() + "/full.db" }
