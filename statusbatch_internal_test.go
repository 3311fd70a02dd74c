package messaging

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ujumbe/messaging/store/driver"
)

// batchCountingStore answers MessageUpdateStatuses, counting its calls
// and the changes of each; it implements nothing else.
type batchCountingStore struct {
	driver.Store
	writes atomic.Int32
	sizes  chan int
}

func (s *batchCountingStore) MessageUpdateStatuses(_ context.Context, ps []*driver.MessageStatusParams) ([]driver.MessageStatusResult, error) {
	s.writes.Add(1)
	s.sizes <- len(ps)
	out := make([]driver.MessageStatusResult, len(ps))
	for i, p := range ps {
		out[i] = driver.MessageStatusResult{Message: &Message{ID: p.ID, Status: p.To}, Changed: true}
	}
	return out, nil
}

// TestStatusBatchWaitsForHeldMessages: a change waits while another
// message is held on its way to its own; both go in one write when the
// other joins; and a held message that leaves without a change (release)
// lets the waiting change be written, so a batch never waits for a
// message that will bring none.
func TestStatusBatchWaitsForHeldMessages(t *testing.T) {
	st := &batchCountingStore{sizes: make(chan int, 10)}
	b := &statusBatch{store: st}
	ctx := context.Background()
	update := func(id string, h *statusHold) <-chan error {
		done := make(chan error, 1)
		go func() {
			done <- b.update(ctx, &driver.MessageStatusParams{ID: id, To: StatusSent}, h).err
		}()
		return done
	}
	wait := func(what string, done <-chan error) {
		t.Helper()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the change was never written", what)
		}
	}
	waiting := func(n int) {
		t.Helper()
		for range 1000 {
			b.mu.Lock()
			k := len(b.pending)
			b.mu.Unlock()
			if k == n {
				return
			}
			time.Sleep(time.Millisecond)
		}
		t.Fatalf("%d changes never waited in the batch", n)
	}

	// Two held messages: the first change waits for the second.
	h1, h2 := b.holdOne(), b.holdOne()
	d1 := update("msg_1", h1)
	waiting(1)
	if n := st.writes.Load(); n != 0 {
		t.Fatalf("%d writes while a message was still held, want 0", n)
	}
	d2 := update("msg_2", h2)
	wait("msg_1", d1)
	wait("msg_2", d2)
	if size := <-st.sizes; size != 2 || st.writes.Load() != 1 {
		t.Errorf("first write held %d changes in %d writes, want 2 in 1", size, st.writes.Load())
	}

	// The other held message leaves without a change: the waiting one is
	// written at once.
	h3, h4 := b.holdOne(), b.holdOne()
	d3 := update("msg_3", h3)
	waiting(1)
	h4.release()
	wait("msg_3", d3)
	if size := <-st.sizes; size != 1 {
		t.Errorf("second write held %d changes, want 1", size)
	}
	// A hold released twice counts once.
	h4.release()
	b.mu.Lock()
	busy := b.busy
	b.mu.Unlock()
	if busy != 0 {
		t.Errorf("busy = %d after every message left, want 0", busy)
	}
}

// TestStatusBatchChangeWithoutHold: a change of no claimed message (a
// provider report, UpdateStatus: no hold) joins the one batch as any
// other: written at once when no message is held, else with the held
// message's change.
func TestStatusBatchChangeWithoutHold(t *testing.T) {
	st := &batchCountingStore{sizes: make(chan int, 10)}
	b := &statusBatch{store: st}
	ctx := context.Background()
	update := func(id string, h *statusHold) <-chan error {
		done := make(chan error, 1)
		go func() {
			res := b.update(ctx, &driver.MessageStatusParams{ID: id, To: StatusSent}, h)
			err := res.err
			if err == nil && !res.changed {
				err = errors.New("not changed")
			}
			done <- err
		}()
		return done
	}
	wait := func(what string, done <-chan error) {
		t.Helper()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the change was never written", what)
		}
	}
	wait("alone", update("msg_1", nil))
	if size := <-st.sizes; size != 1 {
		t.Errorf("a change alone was written with %d, want 1", size)
	}

	h := b.holdOne()
	d2 := update("msg_2", nil)
	for range 1000 {
		b.mu.Lock()
		k := len(b.pending)
		b.mu.Unlock()
		if k == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if n := st.writes.Load(); n != 1 {
		t.Fatalf("%d writes while a message was held, want the first only", n)
	}
	d3 := update("msg_3", h)
	wait("msg_2", d2)
	wait("msg_3", d3)
	if size := <-st.sizes; size != 2 || st.writes.Load() != 2 {
		t.Errorf("the second write held %d changes in %d writes, want 2 in 2", size, st.writes.Load())
	}
}

// hungStore's MessageUpdateStatuses returns only when its context ends.
type hungStore struct{ driver.Store }

func (hungStore) MessageUpdateStatuses(ctx context.Context, _ []*driver.MessageStatusParams) ([]driver.MessageStatusResult, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestStatusBatchWriteKeepsTheCallersDeadline: a change taken into a write
// waits for that write whatever its caller does, so the write must end by
// the callers' deadline (the dispatcher gives each status write one): a
// hung store then fails the change, as it failed a write of its own,
// instead of holding the worker, and Close, for ever.
func TestStatusBatchWriteKeepsTheCallersDeadline(t *testing.T) {
	b := &statusBatch{store: hungStore{}}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- b.update(ctx, &driver.MessageStatusParams{ID: "msg_1", To: StatusSent}, &statusHold{}).err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("update on a hung store: %v, want the deadline exceeded", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("update on a hung store never returned: the write outlived its callers' deadline")
	}
}

// TestStatusBatchTakesKeptReportsOnce: the reports kept for the provider
// message ids that a write recorded are taken with one call once the
// write committed, only for changes that changed a status and recorded an
// id, and each change gets the reports of its own id.
func TestStatusBatchTakesKeptReportsOnce(t *testing.T) {
	st := &batchCountingStore{sizes: make(chan int, 10)}
	var takes [][]string
	b := &statusBatch{store: st, take: func(_ context.Context, ids []string) ([]*driver.PendingReport, error) {
		takes = append(takes, ids) // one flush at a time
		var out []*driver.PendingReport
		for _, id := range ids {
			out = append(out, &driver.PendingReport{ProviderMessageID: id, Status: StatusDelivered})
		}
		return out, nil
	}}
	ctx := context.Background()
	holds := []*statusHold{b.holdOne(), b.holdOne(), b.holdOne()}
	pids := []string{"wamid.1", "wamid.2", ""}
	results := make([]chan statusRes, 3)
	for i := range holds {
		results[i] = make(chan statusRes, 1)
		go func() {
			results[i] <- b.update(ctx, &driver.MessageStatusParams{ID: "msg_" + pids[i], To: StatusSent, ProviderMessageID: pids[i]}, holds[i])
		}()
	}
	for i, want := range pids {
		select {
		case res := <-results[i]:
			if res.err != nil || res.kept.err != nil {
				t.Fatalf("change %d: %v, %v", i, res.err, res.kept.err)
			}
			if want == "" {
				if len(res.kept.reports) != 0 {
					t.Errorf("a change recording no id got %d reports", len(res.kept.reports))
				}
				continue
			}
			if len(res.kept.reports) != 1 || res.kept.reports[0].ProviderMessageID != want {
				t.Errorf("change recording %s got reports %+v, want its own one", want, res.kept.reports)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the batch was never written")
		}
	}
	if size := <-st.sizes; size != 3 {
		t.Errorf("one write of %d changes, want 3", size)
	}
	if len(takes) != 1 || len(takes[0]) != 2 {
		t.Errorf("takes %v, want one take of the two recorded ids", takes)
	}
}
