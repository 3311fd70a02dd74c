package messaging

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/ujumbe/messaging/store/driver"
)

// statusBatch is the service's one status write: every status change
// (recordStatus: the dispatcher's outcomes, the provider's reports,
// UpdateStatus) waits in it and is written with others in one store write,
// Store.MessageUpdateStatuses. With a provider that answers at once, the
// workers' outcomes arrive together, and a write of each (a commit each,
// or a small group commit) would cost more than the sends.
//
// A batch is written when no claimed message is on its way to a status
// change: every message the dispatcher holds is waiting for the provider
// (or its pacing), has its change waiting in the batch, or is done. The
// count of the others, busy, is kept by the dispatcher: a message counts
// from the start of its processing, leaves while it waits for the provider and for good
// when its change joins the batch or its processing ends without one. So a
// batch never waits for a slow provider, only for workers that are
// computing their outcome, and one write is in flight at a time: changes
// that arrive meanwhile make the next batch. A change of no claimed
// message (no hold) joins the batch as any other. So a status change must
// never be asked from inside a store write of the batch (a store wrapper
// calling back into the service): it would wait for that write.
//
// Each change is still a compare-and-set by its from-status and is
// committed with its event; once a write committed, the reports kept for
// the provider message ids its changes recorded are taken with one call
// (take), not one per change; a caller returns only once the write holding
// its change committed (or failed: then every change of the batch failed,
// and each caller handles its own: the dispatcher's Record retries it).
type statusBatch struct {
	store driver.Store
	// take, when set, takes the provider's reports kept for the provider
	// message ids that a write's changes recorded, once the write
	// committed: one take per write, not one per change (see
	// Service.applyReports).
	take func(ctx context.Context, ids []string) ([]*driver.PendingReport, error)

	mu       sync.Mutex
	pending  []*statusReq
	busy     int
	flushing bool
}

// statusReq is one change waiting in a statusBatch.
type statusReq struct {
	ctx  context.Context
	p    *driver.MessageStatusParams
	done chan statusRes // buffered: the flush never waits for the caller
	// taken (under the batch's mu) is set once the change is in a write:
	// its caller can no longer withdraw it.
	taken bool
}

// statusRes is the outcome of one change.
type statusRes struct {
	after   *Message
	changed bool
	// queued: the change queued webhook deliveries of its event.
	queued bool
	err    error
	// kept are the reports kept for the provider message id the change
	// recorded, taken after the write committed.
	kept keptReports
}

// keptReports are the provider's reports kept for a provider message id
// (see Service.ApplyProviderStatus), taken once a status change recorded
// that id; err is the take's failure.
type keptReports struct {
	reports []*driver.PendingReport
	err     error
}

// statusHold is one message's count in a statusBatch's busy: it counts
// while the message is on its way to a status change (see statusBatch).
// Only the message's worker uses it.
type statusHold struct {
	b    *statusBatch
	held bool
}

// holdOne counts one more message on its way to a status change and
// returns its hold.
func (b *statusBatch) holdOne() *statusHold {
	h := &statusHold{b: b}
	h.resume()
	return h
}

// resume counts the message again, after a wait (the provider, pacing)
// during which it did not count.
func (h *statusHold) resume() {
	if h.held {
		return
	}
	h.held = true
	h.b.mu.Lock()
	h.b.busy++
	h.b.mu.Unlock()
}

// release stops counting the message, if it counts.
func (h *statusHold) release() {
	if !h.held {
		return
	}
	h.held = false
	h.b.mu.Lock()
	h.b.busy--
	h.b.flushLocked()
	h.b.mu.Unlock()
}

// update makes the change p in the next batch and returns its outcome:
// the message after it (as it is when its status was not in p.From),
// whether it changed and, when it changed and recorded a provider message
// id, the reports kept for that id; not found is the error ErrNotFound.
// The message's hold, when not nil, stops counting once its change is
// waiting. A ctx done before the change went into a write withdraws it.
func (b *statusBatch) update(ctx context.Context, p *driver.MessageStatusParams, h *statusHold) statusRes {
	if err := ctx.Err(); err != nil {
		return statusRes{err: err}
	}
	r := &statusReq{ctx: ctx, p: p, done: make(chan statusRes, 1)}
	b.mu.Lock()
	b.pending = append(b.pending, r)
	if h != nil && h.held {
		h.held = false
		b.busy--
	}
	b.flushLocked()
	b.mu.Unlock()
	select {
	case res := <-r.done:
		return res
	case <-ctx.Done():
	}
	b.mu.Lock()
	if !r.taken {
		for i, q := range b.pending {
			if q == r {
				b.pending = append(b.pending[:i], b.pending[i+1:]...)
				break
			}
		}
		b.mu.Unlock()
		return statusRes{err: ctx.Err()}
	}
	b.mu.Unlock()
	return <-r.done // in a write: its outcome is the commit's
}

// flushLocked starts the write of the pending changes when none is in
// flight and no held message is on its way to one.
func (b *statusBatch) flushLocked() {
	if b.flushing || b.busy > 0 || len(b.pending) == 0 {
		return
	}
	batch := b.pending
	b.pending = nil
	b.flushing = true
	for _, r := range batch {
		r.taken = true
	}
	go b.flush(batch)
}

// flush writes batch and hands each change its outcome, then starts the
// next write if changes arrived meanwhile.
func (b *statusBatch) flush(batch []*statusReq) {
	ps := make([]*driver.MessageStatusParams, len(batch))
	for i, r := range batch {
		ps[i] = r.p
	}
	// The write runs to its end whatever the callers do now (see
	// update); it carries the first caller's values (tracing), and the
	// latest of their deadlines when every caller has one, so that a hung
	// store fails the write as it would have failed each caller's own.
	ctx := context.WithoutCancel(batch[0].ctx)
	if dl, ok := latestDeadline(batch); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, dl)
		defer cancel()
	}
	results, err := b.store.MessageUpdateStatuses(ctx, ps)
	if err == nil && len(results) != len(batch) {
		err = fmt.Errorf("messaging: the store returned %d results for %d status changes", len(results), len(batch))
	}
	var kept map[string]keptReports
	if err == nil {
		kept = b.takeKept(ctx, ps, results)
	}
	for i, r := range batch {
		if err != nil {
			r.done <- statusRes{err: err}
			continue
		}
		r.done <- statusRes{after: results[i].Message, changed: results[i].Changed, queued: results[i].Queued, err: results[i].Err,
			kept: kept[ps[i].ProviderMessageID]}
	}
	b.mu.Lock()
	b.flushing = false
	b.flushLocked()
	b.mu.Unlock()
}

// takeKept takes, in one call, the reports kept for the provider message
// ids that the committed changes ps recorded, and returns them by id.
// A failed take is every such id's error.
func (b *statusBatch) takeKept(ctx context.Context, ps []*driver.MessageStatusParams, results []driver.MessageStatusResult) map[string]keptReports {
	if b.take == nil {
		return nil
	}
	var ids []string
	for i, p := range ps {
		if results[i].Changed && p.ProviderMessageID != "" {
			ids = append(ids, p.ProviderMessageID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	out := make(map[string]keptReports, len(ids))
	reports, err := b.take(ctx, ids)
	if err != nil {
		for _, id := range ids {
			out[id] = keptReports{err: err}
		}
		return out
	}
	for _, r := range reports {
		k := out[r.ProviderMessageID]
		k.reports = append(k.reports, r)
		out[r.ProviderMessageID] = k
	}
	return out
}

// latestDeadline returns the latest deadline of the callers of batch, and
// false when one of them has none.
func latestDeadline(batch []*statusReq) (time.Time, bool) {
	var latest time.Time
	for _, r := range batch {
		d, ok := r.ctx.Deadline()
		if !ok {
			return time.Time{}, false
		}
		if d.After(latest) {
			latest = d
		}
	}
	return latest, true
}
