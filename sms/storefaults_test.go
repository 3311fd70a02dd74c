package sms_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/ujumbe/messaging/sms"
	"github.com/ujumbe/messaging/sms/fakegateway"
	"github.com/ujumbe/messaging/store/memstore"
)

// completeFaultStore fails the next n outcome writes (SMSComplete) as a
// store that lost its connection would.
type completeFaultStore struct {
	sms.Store
	mu    sync.Mutex
	fails int
	calls int
}

func (s *completeFaultStore) SMSComplete(ctx context.Context, cs []*sms.Completion) ([]error, error) {
	s.mu.Lock()
	s.calls++
	fail := s.fails > 0
	if fail {
		s.fails--
	}
	s.mu.Unlock()
	if fail {
		return nil, errors.New("storage fault: connection reset by peer")
	}
	return s.Store.SMSComplete(ctx, cs)
}

// TestFailedOutcomeWriteIsRetried: when recording the gateway's answer
// fails three times, the write is retried within the claim's lease (the
// waits move the injected clock) and the gateway gets the message once,
// also after the lease has ended.
func TestFailedOutcomeWriteIsRetried(t *testing.T) {
	t.Parallel()
	st := &completeFaultStore{Store: memstore.New(), fails: 3}
	var mu sync.Mutex
	handed := 0
	var waits []time.Duration
	var clk *clock
	e := setup(t, &setupOpts{
		store: st,
		gw: &fakegateway.Options{Delay: 10 * time.Second, Fail: func(*sms.GatewayMessage) error {
			mu.Lock()
			handed++
			mu.Unlock()
			return nil
		}},
		sms: &sms.Options{Sleep: func(ctx context.Context, d time.Duration) error {
			waits = append(waits, d)
			clk.Add(d)
			return ctx.Err()
		}},
	})
	clk = e.clk
	res := e.send(t, &sms.SendParams{})
	if n := e.runDue(t); n != 1 {
		t.Fatalf("RunDue handed %d; want 1", n)
	}
	if len(waits) != 3 || st.calls != 4 {
		t.Errorf("%d waits and %d writes; want 3 waits between 4 writes", len(waits), st.calls)
	}
	if elapsed := e.clk.Now().Sub(base); elapsed >= sms.DefaultLease {
		t.Errorf("retries took %v, beyond the lease", elapsed)
	}
	m, err := e.store.SMSMessageGet(e.ctx, partner, res.Number)
	if err != nil || m.Status != sms.StatusSent {
		t.Fatalf("message after three failed writes: %+v, %v; want sent", m, err)
	}
	e.clk.Add(10 * time.Minute)
	e.runDue(t)
	if handed != 1 {
		t.Errorf("gateway got the message %d times; want 1", handed)
	}
}
