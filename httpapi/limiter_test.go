package httpapi_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/ujumbe/messaging/httpapi"
)

// recordingLimiter is an Options.Limiter that records what it is asked and
// answers with its fields.
type recordingLimiter struct {
	mu        sync.Mutex
	keys      []string
	allowed   bool
	remaining int
	wait      time.Duration
	err       error
}

func (l *recordingLimiter) Take(ctx context.Context, key string, perMinute int, now time.Time) (bool, int, time.Duration, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ctx == nil || now.IsZero() || perMinute <= 0 {
		panic("Take called without a context, a time or a limit")
	}
	l.keys = append(l.keys, key)
	return l.allowed, l.remaining, l.wait, l.err
}

// TestOptionsLimiter: the handler takes its tokens from Options.Limiter,
// keyed by workspace and route, answers its refusals with 429 and
// Retry-After, and lets a request through when the limiter fails.
func TestOptionsLimiter(t *testing.T) {
	for _, tc := range []struct {
		name       string
		lim        *recordingLimiter
		wantStatus int
		wantRetry  string
		wantRemain string
	}{
		{"allowed", &recordingLimiter{allowed: true, remaining: 7}, 200, "", "7"},
		{"refused", &recordingLimiter{wait: 2500 * time.Millisecond}, 429, "3", "0"},
		{"limiter down", &recordingLimiter{err: errors.New("database unreachable")}, 200, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := setup(t, func(o *httpapi.Options) { o.Limiter = tc.lim })
			rq := request{method: "GET", path: "/v1/templates", key: e.A.Full}
			var r *response
			if tc.lim.err != nil {
				r = e.doRaw(rq) // no rate limit headers when the limiter is down
			} else {
				r = e.do(t, rq)
			}
			if r.status != tc.wantStatus {
				t.Fatalf("status %d, want %d: %s", r.status, tc.wantStatus, r.body)
			}
			if got := r.header.Get("Retry-After"); got != tc.wantRetry {
				t.Errorf("Retry-After %q, want %q", got, tc.wantRetry)
			}
			if got := r.header.Get("X-RateLimit-Remaining"); got != tc.wantRemain {
				t.Errorf("X-RateLimit-Remaining %q, want %q", got, tc.wantRemain)
			}
			if tc.wantStatus == 429 {
				expect(t, r, 429, "rate_limit_exceeded", "")
			}
			tc.lim.mu.Lock()
			defer tc.lim.mu.Unlock()
			if len(tc.lim.keys) != 1 || tc.lim.keys[0] != "ws:ws_a:GET /v1/templates" {
				t.Errorf("limiter asked for %q, want [ws:ws_a:GET /v1/templates]", tc.lim.keys)
			}
		})
	}
}
