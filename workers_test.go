package messaging_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ujumbe/messaging/store/driver"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/store/memstore"
	"github.com/ujumbe/messaging/webhooksig"
)

// Tests of the guarantees of the background workers (the dispatcher and
// the webhook sender) that a one-line change in the product code would
// otherwise break unnoticed.

// receiptProvider accepts every send with the same receipt (possibly nil or
// without a provider message id).
type receiptProvider struct {
	metaChannels
	rcpt *messaging.SendReceipt
}

func (p receiptProvider) Send(context.Context, *messaging.ChannelSender, *messaging.Message) (*messaging.SendReceipt, error) {
	return p.rcpt, nil
}

// TestDispatchReceiptWithoutIDIsRetried: a provider answer without a
// provider message id is not a send: the message stays queued for a retry
// with the reason invalid_response, and has no provider message id.
func TestDispatchReceiptWithoutIDIsRetried(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		rcpt *messaging.SendReceipt
	}{
		{"nil receipt", nil},
		{"empty provider message id", &messaging.SendReceipt{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			st := memstore.New()
			clock := newFakeClock(t0)
			svc, err := messaging.New(st, receiptProvider{rcpt: tc.rcpt}, &messaging.Options{Clock: clock.Now,
				Dispatch: messaging.DispatchOptions{PerSenderRate: -1, InitialBackoff: time.Second}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := svc.CreateWorkspace(ctx, &messaging.CreateWorkspaceParams{ID: "acme", Channels: svc.Channels()}); err != nil {
				t.Fatal(err)
			}
			res, err := svc.Workspace("acme").Messages.Send(ctx, textMsg("+254712345678"))
			if err != nil {
				t.Fatal(err)
			}
			if n, err := svc.DispatchDue(ctx); n != 1 || err != nil {
				t.Fatalf("DispatchDue = %d, %v; want 1, nil", n, err)
			}
			raw, err := st.MessageGet(ctx, "acme", res.MessageID)
			if err != nil {
				t.Fatal(err)
			}
			type state struct {
				Status, ProviderMessageID, LastError, LeaseOwner string
				Attempts                                         int
				Retried                                          bool
			}
			got := state{raw.Status, raw.ProviderMessageID, raw.LastError, raw.LeaseOwner, raw.Attempts, raw.DueAt.After(t0)}
			want := state{Status: messaging.StatusQueued, LastError: "[invalid_response] the provider returned no message id", Attempts: 1, Retried: true}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("message after a receipt without a provider message id (-want +got):\n%s", d)
			}
		})
	}
}

// TestServiceCloseTwice: a second Close neither panics nor fails.
func TestServiceCloseTwice(t *testing.T) {
	t.Parallel()
	f := setupDispatch(t, memstore.New(), messaging.DispatchOptions{})
	if err := f.svc.Start(f.ctx); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("Close #%d panicked: %v", i+1, r)
				}
			}()
			if err := f.svc.Close(f.ctx); err != nil {
				t.Fatalf("Close #%d = %v, want nil", i+1, err)
			}
		}()
	}
}

// TestDispatchPacingIsPerSender: every sender (a workspace's channel) has
// its own pacing budget. With 0.001 messages per second (burst 1), a
// second message of one sender would have to wait 1,000 s, so under a
// deadline of one minute the limiter refuses it at once (and the message
// stays leased); a message of another sender goes out at once. No real
// time is measured: the limiter decides from the deadline alone.
func TestDispatchPacingIsPerSender(t *testing.T) {
	t.Parallel()
	type msg struct{ ws, channel, to string }
	tests := []struct {
		name     string
		msgs     []msg
		wantSent int
	}{
		{"same sender twice", []msg{{"acme", "whatsapp", "+254712345601"}, {"acme", "whatsapp", "+254712345602"}}, 1},
		{"two workspaces", []msg{{"acme", "whatsapp", "+254712345601"}, {"other", "whatsapp", "+254712345602"}}, 2},
		{"two channels of a workspace", []msg{{"acme", "whatsapp", "+254712345601"}, {"acme", "messenger", "+254712345602"}}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := setupDispatch(t, memstore.New(), messaging.DispatchOptions{Workers: 4, PerSenderRate: 0.001})
			if _, err := f.svc.CreateWorkspace(f.ctx, &messaging.CreateWorkspaceParams{ID: "other", Channels: f.svc.Channels()}); err != nil {
				t.Fatal(err)
			}
			for _, m := range tc.msgs {
				if _, err := f.svc.Workspace(m.ws).Messages.Send(f.ctx, &messaging.SendParams{Channel: m.channel, To: m.to, Type: "text", Text: "hi"}); err != nil {
					t.Fatalf("Send(%+v): %v", m, err)
				}
			}
			ctx, cancel := context.WithTimeout(f.ctx, time.Minute)
			defer cancel()
			if n, err := f.svc.DispatchDue(ctx); n != len(tc.msgs) || err != nil {
				t.Fatalf("DispatchDue = %d, %v; want %d, nil", n, err, len(tc.msgs))
			}
			if got := int(f.prov.n.Load()); got != tc.wantSent {
				t.Errorf("the provider got %d messages, want %d", got, tc.wantSent)
			}
		})
	}
}

// claimSignalStore signals on claimed after each MessageClaim returned.
type claimSignalStore struct {
	driver.Store
	claimed chan struct{}
}

func (s *claimSignalStore) MessageClaim(ctx context.Context, p *driver.MessageClaimParams) ([]*messaging.Message, error) {
	ms, err := s.Store.MessageClaim(ctx, p)
	select {
	case s.claimed <- struct{}{}:
	default:
	}
	return ms, err
}

// TestDispatchWokenBySend: a started dispatcher whose poll is an hour away
// hands a newly sent message over at once: the send wakes it.
func TestDispatchWokenBySend(t *testing.T) {
	t.Parallel()
	st := &claimSignalStore{Store: memstore.New(), claimed: make(chan struct{}, 1)}
	f := setupDispatch(t, st, messaging.DispatchOptions{PollInterval: time.Hour})
	f.prov.started = make(chan string, 1)
	if err := f.svc.Start(f.ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.svc.Close(context.Background()) })
	// The dispatcher's first claim (of nothing) is over: from now on only
	// the poll an hour away or a wake-up makes it claim again.
	select {
	case <-st.claimed:
	case <-time.After(10 * time.Second):
		t.Fatal("the started dispatcher did not claim within 10 s")
	}
	id := f.send(t, "+254712345678")
	select {
	case got := <-f.prov.started:
		if got != id {
			t.Fatalf("the provider got %s, want %s", got, id)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a sent message did not reach the provider within 10 s: the send did not wake the dispatcher")
	}
}

// TestWebhookDeliveredByStart: with Start running (no DeliverWebhooksDue),
// a status change reaches the webhook endpoint, signed.
func TestWebhookDeliveredByStart(t *testing.T) {
	t.Parallel()
	f := setupHooks(t, true)
	if err := f.svc.Start(f.ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.svc.Close(context.Background()) })
	id := f.send(t, "+254712345678")
	deadline := time.Now().Add(10 * time.Second)
	for f.rcv.count() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if f.rcv.count() == 0 {
		t.Fatal("no webhook reached the endpoint within 10 s of the send")
	}
	f.rcv.mu.Lock()
	h, b := f.rcv.got[0], f.rcv.bodies[0]
	f.rcv.mu.Unlock()
	if err := webhooksig.Verify(f.secret, h, b, f.clock.Now(), 0); err != nil {
		t.Errorf("the delivery does not verify: %v", err)
	}
	var ev struct {
		Type string
		Data struct {
			MessageID      string `json:"message_id"`
			Status         string
			PreviousStatus string `json:"previous_status"`
		}
	}
	if err := json.Unmarshal(b, &ev); err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprintf("%s %s %s>%s", ev.Type, ev.Data.MessageID, ev.Data.PreviousStatus, ev.Data.Status)
	if want := "message.status_updated " + id + " queued>sent"; got != want {
		t.Errorf("delivered event %q, want %q", got, want)
	}
}

// TestServiceCloseDeadline: a Close whose context ends while a send is in
// flight returns the context's error without waiting for the send; the
// send still finishes and is recorded, and a later Close waits for it.
func TestServiceCloseDeadline(t *testing.T) {
	t.Parallel()
	f := setupDispatch(t, memstore.New(), messaging.DispatchOptions{PollInterval: time.Hour})
	f.prov.started = make(chan string, 1)
	f.prov.block = make(chan struct{})
	id := f.send(t, "+254712345601")
	if err := f.svc.Start(f.ctx); err != nil {
		t.Fatal(err)
	}
	<-f.prov.started
	ctx, cancel := context.WithCancel(f.ctx)
	cancel()
	if err := f.svc.Close(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Close with an ended context while a send is in flight = %v, want context.Canceled", err)
	}
	if got := f.prov.n.Load(); got != 0 {
		t.Fatalf("the send completed before Close returned (%d sends): Close waited", got)
	}
	close(f.prov.block)
	if err := f.svc.Close(f.ctx); err != nil {
		t.Fatalf("second Close = %v, want nil once the send finished", err)
	}
	if m := f.get(t, id); m.Status != messaging.StatusSent {
		t.Errorf("message is %s after the send in flight finished, want sent", m.Status)
	}
}

// webhookClaimCountingStore counts the webhook sender's claims and
// signals each.
type webhookClaimCountingStore struct {
	driver.Store
	claims  atomic.Int64
	claimed chan struct{}
}

func (s *webhookClaimCountingStore) WebhookClaim(ctx context.Context, p *driver.WebhookClaimParams) ([]*messaging.WebhookDelivery, error) {
	s.claims.Add(1)
	ds, err := s.Store.WebhookClaim(ctx, p)
	select {
	case s.claimed <- struct{}{}:
	default:
	}
	return ds, err
}

// TestWebhookSenderWokenOnlyForDeliveries: with its poll an hour away,
// the webhook sender is woken by a status change that queued a delivery
// (it reaches the endpoint at once), and not by one that queued none (a
// workspace with no endpoint): each wake is a claim, a store write.
func TestWebhookSenderWokenOnlyForDeliveries(t *testing.T) {
	t.Parallel()
	st := &webhookClaimCountingStore{Store: memstore.New(), claimed: make(chan struct{}, 1)}
	prov := newScripted()
	rcv := &receiver{}
	srv := httptest.NewServer(rcv)
	t.Cleanup(srv.Close)
	ctx := context.Background()
	svc, err := messaging.New(st, prov, &messaging.Options{SecretKey: make([]byte, 32),
		Dispatch: messaging.DispatchOptions{PerSenderRate: -1},
		Webhooks: messaging.WebhookOptions{AllowLoopback: true, PollInterval: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	for _, ws := range []string{"acme", "quiet"} {
		if _, err := svc.CreateWorkspace(ctx, &messaging.CreateWorkspaceParams{ID: ws, Channels: svc.Channels()}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := createAnyWebhook(st, "acme", srv.URL+"/hook"); err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close(context.Background()) })
	select {
	case <-st.claimed: // the first claim, at start
	case <-time.After(10 * time.Second):
		t.Fatal("the started webhook sender did not claim within 10 s")
	}
	send := func(ws string) string {
		t.Helper()
		res, err := svc.Workspace(ws).Messages.Send(ctx, &messaging.SendParams{Channel: "whatsapp", To: "+254712345678", Type: "text", Text: "hi"})
		if err != nil {
			t.Fatal(err)
		}
		return res.MessageID
	}
	waitFor := func(what string, done func() bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); !done(); time.Sleep(2 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 10 s", what)
			}
		}
	}
	send("acme")
	waitFor("the delivery of acme's sent message (the change must wake the sender)", func() bool { return rcv.count() == 1 })
	claims := st.claims.Load()
	ids := []string{send("quiet"), send("quiet"), send("quiet")}
	waitFor("quiet's messages sent", func() bool {
		for _, id := range ids {
			if m, err := st.MessageGet(ctx, "quiet", id); err != nil || m.Status != messaging.StatusSent {
				return false
			}
		}
		return true
	})
	if got := st.claims.Load() - claims; got != 0 {
		t.Errorf("three status changes that queued no delivery made the webhook sender claim %d times, want 0", got)
	}
}
