package messaging_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/internal/metricname"
	"github.com/ujumbe/messaging/store/driver"
	"github.com/ujumbe/messaging/store/memstore"
	"github.com/ujumbe/messaging/store/sqlitestore"
)

// sendAt sends a text to to from f's workspace, scheduled for at.
func (f *dispatchFixture) sendAt(t *testing.T, to string, at time.Time) string {
	t.Helper()
	res, err := f.ws.Messages.Send(f.ctx, &messaging.SendParams{Channel: "whatsapp", To: to, Type: "text", Text: "later", SendAt: &at})
	if err != nil {
		t.Fatal(err)
	}
	return res.MessageID
}

// TestScheduledSendWaits: a message scheduled three days ahead is stored
// queued with its send_at, is not handed over by any dispatch before
// then, and is at send_at.
func TestScheduledSendWaits(t *testing.T) {
	f := setupDispatch(t, memstore.New(), messaging.DispatchOptions{Workers: 2})
	at := t0.Add(72 * time.Hour)
	// Given in another offset: stored as the same instant in UTC.
	id := f.sendAt(t, "+254712345678", at.In(time.FixedZone("EAT", 3*3600)))
	now := f.send(t, "+254712345679")
	m := f.get(t, id)
	if m.Status != messaging.StatusQueued || m.SendAt == nil || !m.SendAt.Equal(at) || m.SendAt.Location() != time.UTC || !m.DueAt.Equal(at) {
		t.Fatalf("scheduled message: status %s send_at %v due %v; want queued, %v, %v", m.Status, m.SendAt, m.DueAt, at, at)
	}
	if n := f.dispatch(t); n != 1 || f.prov.callsOf(now) != 1 {
		t.Fatalf("first dispatch handled %d; want only the unscheduled message", n)
	}
	f.clock.Advance(72*time.Hour - time.Second)
	if n := f.dispatch(t); n != 0 || f.prov.callsOf(id) != 0 {
		t.Fatalf("a dispatch a second before send_at handled %d (sent %d times)", n, f.prov.callsOf(id))
	}
	f.clock.Advance(time.Second)
	if n := f.dispatch(t); n != 1 {
		t.Fatalf("the dispatch at send_at handled %d; want 1", n)
	}
	if m := f.get(t, id); m.Status != messaging.StatusSent || f.prov.callsOf(id) != 1 {
		t.Errorf("at send_at: status %s, handed over %d times; want sent, once", m.Status, f.prov.callsOf(id))
	}
}

// TestScheduledSendSurvivesRestart: a scheduled message accepted by one
// Service is sent at its time by a new Service on the same SQLite file.
func TestScheduledSendSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "db.sqlite")
	st1, err := sqlitestore.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	f1 := setupDispatch(t, st1, messaging.DispatchOptions{})
	at := t0.Add(3 * 24 * time.Hour)
	id := f1.sendAt(t, "+254712345678", at)
	if n := f1.dispatch(t); n != 0 {
		t.Fatalf("dispatch before send_at handled %d", n)
	}
	if err := f1.svc.Close(ctx); err != nil {
		t.Fatal(err)
	}
	st1.Close()

	st2, err := sqlitestore.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	f2 := setupDispatch(t, st2, messaging.DispatchOptions{})
	if m := f2.get(t, id); m.SendAt == nil || !m.SendAt.Equal(at) {
		t.Fatalf("after restart send_at is %v; want %v", m.SendAt, at)
	}
	f2.clock.Advance(3*24*time.Hour - time.Millisecond)
	if n := f2.dispatch(t); n != 0 {
		t.Fatalf("new service: dispatch before send_at handled %d", n)
	}
	f2.clock.Advance(time.Millisecond)
	if n := f2.dispatch(t); n != 1 || f2.get(t, id).Status != messaging.StatusSent {
		t.Fatalf("new service at send_at: handled %d, status %s; want 1, sent", n, f2.get(t, id).Status)
	}
}

// TestScheduledSendAtBounds: send_at more than a minute past or more than
// 35 days ahead is a validation_error naming send_at, on both sends;
// within the tolerance it is due at once.
func TestScheduledSendAtBounds(t *testing.T) {
	f := setup(t)
	f.mustTemplate(t, f.acme, approved("hello", body("Hello")))
	now := f.clock.Now()
	for _, tc := range []struct {
		name string
		at   time.Time
		ok   bool
	}{
		{"past beyond tolerance", now.Add(-time.Minute - time.Millisecond), false},
		{"past within tolerance", now.Add(-time.Minute), true},
		{"now", now, true},
		{"35 days", now.Add(35 * 24 * time.Hour), true},
		{"beyond 35 days", now.Add(35*24*time.Hour + time.Millisecond), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			at := tc.at
			p := textMsg("+254712345678")
			p.SendAt = &at
			_, err := f.acme.Messages.Send(f.ctx, p)
			_, terr := f.acme.Messages.SendTemplate(f.ctx, &messaging.SendTemplateParams{To: "+254712345678", TemplateName: "hello", SendAt: &at})
			if tc.ok {
				if err != nil || terr != nil {
					t.Fatalf("send: %v; template send: %v", err, terr)
				}
				return
			}
			wantError(t, err, messaging.CodeValidation, "send_at")
			wantError(t, terr, messaging.CodeValidation, "send_at")
		})
	}
	// A send_at within the tolerance is due at once.
	d := setupDispatch(t, memstore.New(), messaging.DispatchOptions{})
	id := d.sendAt(t, "+254712345678", d.clock.Now().Add(-30*time.Second))
	if n := d.dispatch(t); n != 1 || d.get(t, id).Status != messaging.StatusSent {
		t.Errorf("a send_at 30 s past: dispatch handled %d; want it sent at once", n)
	}
}

// TestScheduledIdempotentReplay: send_at is part of the request an
// idempotency key stands for; the same request replays, even after its
// send_at passed, and the same instant in another offset is the same
// request.
func TestScheduledIdempotentReplay(t *testing.T) {
	f := setup(t)
	at := f.clock.Now().Add(time.Hour)
	p := textMsg("+254712345678")
	p.IdempotencyKey, p.SendAt = "k1", &at
	first := f.mustSend(t, f.acme, p)
	again := *p
	offset := at.In(time.FixedZone("", -5*3600))
	again.SendAt = &offset
	if res := f.mustSend(t, f.acme, &again); !res.Replayed || res.MessageID != first.MessageID {
		t.Fatalf("same request, send_at in another offset: %+v; want a replay of %s", res, first.MessageID)
	}
	later := at.Add(time.Second)
	moved := *p
	moved.SendAt = &later
	_, err := f.acme.Messages.Send(f.ctx, &moved)
	wantError(t, err, messaging.CodeConflict, "idempotency_key")
	unscheduled := *p
	unscheduled.SendAt = nil
	_, err = f.acme.Messages.Send(f.ctx, &unscheduled)
	wantError(t, err, messaging.CodeConflict, "idempotency_key")
	// Two hours on, the send_at is past the tolerance, but the repeat of
	// the accepted request still answers as the first did.
	f.clock.Advance(2 * time.Hour)
	if res := f.mustSend(t, f.acme, p); !res.Replayed || res.MessageID != first.MessageID {
		t.Fatalf("repeat after send_at: %+v; want a replay", res)
	}
	// A new key with that send_at is refused.
	fresh := *p
	fresh.IdempotencyKey = "k2"
	_, err = f.acme.Messages.Send(f.ctx, &fresh)
	wantError(t, err, messaging.CodeValidation, "send_at")
}

// TestCancel: a scheduled message canceled before its time becomes
// canceled, announces it, and is never handed over; a second cancel, a
// cancel of a sent or leased message are conflicts naming status; an
// unknown id or one of another workspace is not_found.
func TestCancel(t *testing.T) {
	st := memstore.New()
	f := setupDispatch(t, st, messaging.DispatchOptions{})
	var mu sync.Mutex
	var events []*messaging.Event
	defer f.svc.Subscribe(func(_ context.Context, e *messaging.Event) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	})()
	id := f.sendAt(t, "+254712345678", t0.Add(time.Hour))
	m, err := f.ws.Messages.Cancel(f.ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if m.Status != messaging.StatusCanceled || f.get(t, id).Status != messaging.StatusCanceled {
		t.Fatalf("canceled message: returned status %s, stored %s", m.Status, f.get(t, id).Status)
	}
	mu.Lock()
	if len(events) != 1 || events[0].Type != messaging.EventMessageStatusUpdated {
		t.Fatalf("events after cancel: %+v; want one status update", events)
	}
	data, ok := events[0].Data.(messaging.StatusEventData)
	if !ok || data.Status != "canceled" || data.PreviousStatus != "queued" || data.MessageID != id {
		t.Errorf("cancel event data %+v", events[0].Data)
	}
	mu.Unlock()
	f.clock.Advance(2 * time.Hour)
	if n := f.dispatch(t); n != 0 || f.prov.callsOf(id) != 0 {
		t.Fatalf("a canceled message was dispatched (%d handled, %d sends)", n, f.prov.callsOf(id))
	}
	_, err = f.ws.Messages.Cancel(f.ctx, id)
	wantError(t, err, messaging.CodeConflict, "status")

	sent := f.send(t, "+254712345679")
	f.dispatch(t)
	_, err = f.ws.Messages.Cancel(f.ctx, sent)
	wantError(t, err, messaging.CodeConflict, "status")

	// A message a worker holds (leased) is being handed over.
	leased := f.send(t, "+254712345670")
	if got, err := st.MessageClaim(f.ctx, &driver.MessageClaimParams{Owner: "other", Now: f.clock.Now(), Lease: time.Minute, Limit: 10}); err != nil || len(got) != 1 {
		t.Fatalf("claim: %d, %v", len(got), err)
	}
	_, err = f.ws.Messages.Cancel(f.ctx, leased)
	wantError(t, err, messaging.CodeConflict, "status")
	if m := f.get(t, leased); m.Status != messaging.StatusQueued {
		t.Errorf("refused cancel left status %s", m.Status)
	}

	_, err = f.ws.Messages.Cancel(f.ctx, "msg_missing")
	wantError(t, err, messaging.CodeNotFound, "")
	if _, err := f.svc.CreateWorkspace(f.ctx, &messaging.CreateWorkspaceParams{ID: "other", Channels: f.svc.Channels()}); err != nil {
		t.Fatal(err)
	}
	other := f.svc.Workspace("other")
	mine := f.sendAt(t, "+254712345678", f.clock.Now().Add(time.Hour))
	_, err = other.Messages.Cancel(f.ctx, mine)
	wantError(t, err, messaging.CodeNotFound, "")
	if m := f.get(t, mine); m.Status != messaging.StatusQueued {
		t.Errorf("another workspace's cancel changed the status to %s", m.Status)
	}
}

// TestCancelRacesDispatch: cancels and a running dispatch over the same
// due messages: each message is canceled or handed over, never both.
func TestCancelRacesDispatch(t *testing.T) {
	f := setupDispatch(t, memstore.New(), messaging.DispatchOptions{Workers: 4, BatchSize: 2})
	const n = 40
	ids := make([]string, n)
	for i := range n {
		ids[i] = f.send(t, fmt.Sprintf("+2547123456%02d", i))
	}
	canceled := make([]bool, n)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		if _, err := f.svc.DispatchDue(f.ctx); err != nil {
			t.Error(err)
		}
	}()
	go func() {
		defer wg.Done()
		for i, id := range ids {
			_, err := f.ws.Messages.Cancel(f.ctx, id)
			switch {
			case err == nil:
				canceled[i] = true
			case messaging.ErrorCode(err) != messaging.CodeConflict:
				t.Error(err)
			}
		}
	}()
	wg.Wait()
	f.dispatch(t) // whatever the race left due
	for i, id := range ids {
		calls, status := f.prov.callsOf(id), f.get(t, id).Status
		switch {
		case canceled[i] && (calls != 0 || status != messaging.StatusCanceled):
			t.Errorf("%s canceled, but handed over %d times, status %s", id, calls, status)
		case !canceled[i] && (calls != 1 || status != messaging.StatusSent):
			t.Errorf("%s not canceled, handed over %d times, status %s", id, calls, status)
		}
	}
}

// TestScheduledMetrics: a scheduled message counts in the queue depth but
// not as due before its time; its accept-to-sent time runs from send_at;
// a cancel counts one transition to canceled.
func TestScheduledMetrics(t *testing.T) {
	f := setupTelemetry(t)
	id := f.sendAt(t, "+254712345678", t0.Add(time.Hour))
	gone := f.sendAt(t, "+254712345679", t0.Add(time.Hour))
	if _, err := f.ws.Messages.Cancel(f.ctx, gone); err != nil {
		t.Fatal(err)
	}
	s := f.metrics.Collect(t)
	depth, _ := s.Gauge(metricname.MetricQueueDepth)
	due, _ := s.Gauge(metricname.MetricQueueDue)
	if depth != 1 || due != 0 {
		t.Errorf("before send_at: depth %v due %v; want 1 and 0", depth, due)
	}
	if got := s.Sum(metricname.MetricStatusTransitions, whatsapp, status("canceled")); got != 1 {
		t.Errorf("transitions to canceled = %v, want 1", got)
	}
	f.clock.Advance(time.Hour + 20*time.Second)
	if n := f.dispatch(t); n != 1 || f.get(t, id).Status != messaging.StatusSent {
		t.Fatalf("dispatch at send_at handled %d", n)
	}
	s = f.metrics.Collect(t)
	if n, sum := s.Histogram(metricname.MetricAcceptToSent, whatsapp); n != 1 || sum != 20 {
		t.Errorf("accept to sent of a scheduled message: %d recordings summing %vs, want 1 of 20s (from send_at)", n, sum)
	}
}

// TestScheduledRetriesFromSendAt: a message scheduled three days ahead
// whose first hand-over fails with a retryable error is retried, MaxAge
// (24 h) counting from its send_at, not from its acceptance.
func TestScheduledRetriesFromSendAt(t *testing.T) {
	f := setupDispatch(t, memstore.New(), messaging.DispatchOptions{InitialBackoff: time.Second})
	f.prov.script["+254712345678"] = []error{&messaging.SendError{Code: "131000", Text: "Something went wrong", Retryable: true}, nil}
	id := f.sendAt(t, "+254712345678", t0.Add(72*time.Hour))
	f.clock.Advance(72 * time.Hour)
	f.dispatch(t)
	if m := f.get(t, id); m.Status != messaging.StatusQueued || m.LastError == "" {
		t.Fatalf("after a retryable error: status %s last error %q; want queued for a retry", m.Status, m.LastError)
	}
	f.clock.Advance(2 * time.Second)
	f.dispatch(t)
	if m := f.get(t, id); m.Status != messaging.StatusSent || f.prov.callsOf(id) != 2 {
		t.Errorf("the retry: status %s after %d hand-overs; want sent after 2", m.Status, f.prov.callsOf(id))
	}
}
