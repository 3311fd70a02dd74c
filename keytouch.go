package messaging

import (
	"context"
	"sync"
	"time"

	"github.com/ujumbe/messaging/internal/defaults"
	"github.com/ujumbe/messaging/store/driver"
)

// keyTouchTimeout bounds one write of a key's last use.
const keyTouchTimeout = 5 * time.Second

// keyToucher records the last use of API keys off the request's path.
// Authenticate hands it each successful use; it keeps one per key and
// KeyTouchEvery (the throttle, per Service: instances of a deployment each
// write at most once a minute per key) and queues it; a goroutine, started
// when the queue gets work and ending when it is empty, writes the queue
// to the store. The queue is bounded: a use arriving while it is full is
// dropped (LastUsedAt then lags until the key's next use after the
// throttle's minute), so a slow store never slows requests or grows
// memory. A failed write is logged and not retried.
type keyToucher struct {
	s *Service

	mu sync.Mutex
	// last is when each key's use was last queued (the throttle); entries
	// older than KeyTouchEvery are pruned when it grows.
	last    map[string]time.Time
	pruneAt int
	queue   []driver.APIKeyTouchParams
	limit   int
	running bool
	idle    *sync.Cond
}

func newKeyToucher(s *Service) *keyToucher {
	t := &keyToucher{s: s, last: map[string]time.Time{}, pruneAt: 1024, limit: defaults.DefaultKeyTouchQueue}
	t.idle = sync.NewCond(&t.mu)
	return t
}

// touch records that k authenticated a request at now, unless a use of k
// was recorded (in the store or queued here) less than KeyTouchEvery ago.
// It never waits for the store.
func (t *keyToucher) touch(k *APIKey, now time.Time) {
	if k.LastUsedAt != nil && now.Sub(*k.LastUsedAt) < defaults.KeyTouchEvery {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if at, ok := t.last[k.ID]; ok && now.Sub(at) < defaults.KeyTouchEvery {
		return
	}
	if len(t.queue) >= t.limit {
		return
	}
	t.last[k.ID] = now
	if len(t.last) >= t.pruneAt {
		for id, at := range t.last {
			if now.Sub(at) >= defaults.KeyTouchEvery {
				delete(t.last, id)
			}
		}
		t.pruneAt = max(1024, 2*len(t.last))
	}
	t.queue = append(t.queue, driver.APIKeyTouchParams{WorkspaceID: k.WorkspaceID, ID: k.ID, At: now})
	if !t.running {
		t.running = true
		go t.drain()
	}
}

// drain writes the queue to the store until it is empty.
func (t *keyToucher) drain() {
	for {
		t.mu.Lock()
		if len(t.queue) == 0 {
			t.running = false
			t.idle.Broadcast()
			t.mu.Unlock()
			return
		}
		p := t.queue[0]
		t.queue = t.queue[1:]
		t.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), keyTouchTimeout)
		if err := t.s.store.APIKeyTouch(ctx, &p); err != nil {
			t.s.log.WarnContext(ctx, "recording the last use of an API key failed", "workspace", p.WorkspaceID, "key", p.ID, "err", err)
		}
		cancel()
	}
}

// flush waits until every queued use is written, or ctx ends.
func (t *keyToucher) flush(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		t.mu.Lock()
		for t.running {
			t.idle.Wait()
		}
		t.mu.Unlock()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
