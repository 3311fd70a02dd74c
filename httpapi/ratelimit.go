package httpapi

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/internal/clientaddr"
	"golang.org/x/time/rate"
)

// Limiter decides whether a request may go on under a rate limit. key names
// a token bucket ("ws:<workspace>:<route>", "sms:<partnerID>:<route>" for
// the SMS API, or "ip:<address>" for requests without valid credentials);
// the bucket holds at most perMinute tokens and
// refills at perMinute tokens a minute.
//
// The default (Options.Limiter nil) keeps the buckets in the process, so
// with N server instances behind a load balancer a client gets up to N
// times each limit. store/pgstore's RateLimiter keeps them in PostgreSQL,
// shared by every instance on the database.
type Limiter interface {
	// Take takes one token from the bucket of key at time now. It returns
	// whether the request is allowed, the whole tokens left and, when it
	// is refused, how long until a token is available. An error means
	// the limiter could not decide.
	Take(ctx context.Context, key string, perMinute int, now time.Time) (allowed bool, remaining int, retryAfter time.Duration, err error)
}

// limiterSet is the default Limiter: one in-process token bucket per key (workspace and route, or client
// address for unauthenticated requests). Idle buckets are dropped, so the
// set does not grow with the number of distinct clients over time.
type limiterSet struct {
	mu      sync.Mutex
	buckets map[string]*bucket
	sweeps  int
}

type bucket struct {
	lim      *rate.Limiter
	lastSeen time.Time
}

// idleTTL is how long an unused bucket is kept. A bucket idle this long is
// full again, so dropping it changes nothing.
const idleTTL = 2 * time.Minute

// take consumes one token from the bucket of key, which allows perMinute
// requests a minute with a burst of perMinute. It returns whether the
// request is allowed, the tokens remaining and, when refused, the wait until
// a token is available.
func (s *limiterSet) take(key string, perMinute int, now time.Time) (ok bool, remaining int, wait time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.buckets == nil {
		s.buckets = map[string]*bucket{}
	}
	s.sweeps++
	if s.sweeps >= 10000 {
		s.sweeps = 0
		for k, b := range s.buckets {
			if now.Sub(b.lastSeen) > idleTTL {
				delete(s.buckets, k)
			}
		}
	}
	b := s.buckets[key]
	if b == nil {
		b = &bucket{lim: rate.NewLimiter(rate.Limit(float64(perMinute)/60), perMinute)}
		s.buckets[key] = b
	}
	b.lastSeen = now
	r := b.lim.ReserveN(now, 1)
	if d := r.DelayFrom(now); !r.OK() || d > 0 {
		r.CancelAt(now)
		if !r.OK() {
			d = time.Minute
		}
		return false, int(math.Max(0, math.Floor(b.lim.TokensAt(now)))), d
	}
	return true, int(math.Max(0, math.Floor(b.lim.TokensAt(now)))), 0
}

// Take implements Limiter with the in-process buckets; it never fails.
func (s *limiterSet) Take(_ context.Context, key string, perMinute int, now time.Time) (bool, int, time.Duration, error) {
	ok, remaining, wait := s.take(key, perMinute, now)
	return ok, remaining, wait, nil
}

// clientAddr returns the address unauthenticated requests are limited by
// (see Options.TrustedProxies and TrustProxy).
func (h *Handler) clientAddr(r *http.Request) string {
	trusted := h.proxies
	if h.trustProxy {
		trusted = append(clientaddr.Peer(r), trusted...)
	}
	return clientaddr.Of(r, trusted)
}

// limit applies the rate limit of key and sets the X-RateLimit headers.
func (h *Handler) limit(ctx context.Context, w http.ResponseWriter, key string, perMinute int) error {
	if h.noLimits || perMinute <= 0 {
		return nil
	}
	ok, remaining, wait, err := h.limiter.Take(ctx, key, perMinute, h.now())
	if err != nil {
		h.log.ErrorContext(ctx, "rate limiter failed; request let through", "key", key, "err", err)
		return nil
	}
	hd := w.Header()
	hd[hdrRateLimitLimit] = []string{strconv.Itoa(perMinute)}
	hd[hdrRateLimitRemaining] = []string{strconv.Itoa(remaining)}
	if !ok {
		secs := int((wait + time.Second - 1) / time.Second)
		w.Header().Set("Retry-After", strconv.Itoa(max(1, secs)))
		return &apiError{code: messaging.CodeRateLimitExceeded, status: http.StatusTooManyRequests,
			message: fmt.Sprintf("rate limit of %d requests per minute exceeded; retry after %d s", perMinute, max(1, secs))}
	}
	return nil
}
