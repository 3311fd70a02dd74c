package dashboard

import (
	"sync"
	"time"
)

// Sign-in limit defaults (see SignIn).
const (
	// defaultAttempts is SignIn.Attempts' default: failed sign-ins per
	// client address a minute.
	defaultAttempts = 10
	// defaultGlobalAttempts is SignIn.GlobalAttempts' default: failed
	// sign-ins from all addresses together a minute.
	defaultGlobalAttempts = 200
	// maxSignInAddresses bounds the addresses whose failures are
	// remembered; past it the entry idle longest is forgotten.
	maxSignInAddresses = 10_000
	// failureMemory is how long an address's last failure marks it:
	// while the global cap is spent, an address that failed within it
	// is refused unchecked. A bucket emptied by failures is full again
	// after it too, so an entry older than this is as good as none.
	failureMemory = time.Minute
)

// bucket is a token bucket refilled at perMinute tokens a minute up to
// burst.
type bucket struct {
	tokens float64
	at     time.Time
}

// fill adds the tokens earned since the last fill.
func (b *bucket) fill(now time.Time, perMinute, burst float64) {
	if d := now.Sub(b.at); d > 0 {
		b.tokens = min(burst, b.tokens+d.Minutes()*perMinute)
		b.at = now
	}
}

// addrFailures is what the limiter keeps of one client address.
type addrFailures struct {
	bucket
	// last is the time of the address's last failed sign-in (zero:
	// none).
	last time.Time
	// seen is the time of the address's last attempt.
	seen time.Time
}

// signInLimiter limits failed sign-ins: per client address (a bucket of
// perAddr a minute), and across all addresses (a bucket of global a
// minute) for addresses that failed recently. An attempt takes its
// tokens before the secret is checked, so concurrent guesses cannot
// overrun a bucket, and a correct sign-in gives them back: it never
// counts against anything. An address with no recent failure is always
// checked, so guesses from other addresses never lock it out. It is safe
// for concurrent use.
type signInLimiter struct {
	perAddr, global float64
	maxAddrs        int

	mu     sync.Mutex
	all    bucket
	byAddr map[string]*addrFailures
}

func newSignInLimiter(perAddr, global int, now time.Time) *signInLimiter {
	return &signInLimiter{perAddr: float64(perAddr), global: float64(global), maxAddrs: maxSignInAddresses,
		all: bucket{tokens: float64(global), at: now}, byAddr: map[string]*addrFailures{}}
}

// signInAttempt is an attempt the limiter let through, holding the
// tokens it took until the outcome is known.
type signInAttempt struct {
	l      *signInLimiter
	addr   string
	global bool
}

// begin lets an attempt from addr through, taking a token of its
// address and, while there are some, one of the global bucket; or
// refuses it (nil) and says when to try again.
func (l *signInLimiter) begin(addr string, now time.Time) (*signInAttempt, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all.fill(now, l.global, l.global)
	e := l.byAddr[addr]
	if e != nil {
		e.fill(now, l.perAddr, l.perAddr)
		if e.tokens < 1 {
			return nil, time.Duration((1 - e.tokens) / l.perAddr * float64(time.Minute))
		}
	}
	recent := e != nil && !e.last.IsZero() && now.Sub(e.last) < failureMemory
	if l.all.tokens < 1 && recent {
		return nil, min(e.last.Add(failureMemory).Sub(now),
			time.Duration((1-l.all.tokens)/l.global*float64(time.Minute)))
	}
	if e == nil {
		e = &addrFailures{bucket: bucket{tokens: l.perAddr, at: now}}
		l.makeRoom(now)
		l.byAddr[addr] = e
	}
	e.tokens--
	e.seen = now
	a := &signInAttempt{l: l, addr: addr}
	if l.all.tokens >= 1 {
		l.all.tokens--
		a.global = true
	}
	return a, 0
}

// failed records that the attempt's secret was wrong: its tokens stay
// spent.
func (a *signInAttempt) failed(now time.Time) {
	a.l.mu.Lock()
	defer a.l.mu.Unlock()
	if e := a.l.byAddr[a.addr]; e != nil {
		e.last = now
	}
}

// refund gives the attempt's tokens back: the secret was right, or it
// was never checked (no secret sent, the check failed on our side).
func (a *signInAttempt) refund() {
	a.l.mu.Lock()
	defer a.l.mu.Unlock()
	if e := a.l.byAddr[a.addr]; e != nil {
		e.tokens = min(a.l.perAddr, e.tokens+1)
	}
	if a.global {
		a.l.all.tokens = min(a.l.global, a.l.all.tokens+1)
	}
}

// makeRoom keeps the map under maxAddrs before an entry is added: it
// forgets the entries that are as good as none (bucket full, no failure
// within failureMemory) and, if that is not enough, the entry idle
// longest (last attempt earliest). Called with mu held.
func (l *signInLimiter) makeRoom(now time.Time) {
	if len(l.byAddr) < l.maxAddrs {
		return
	}
	oldest, oldestAt := "", time.Time{}
	for k, e := range l.byAddr {
		e.fill(now, l.perAddr, l.perAddr)
		if e.tokens >= l.perAddr && now.Sub(e.last) >= failureMemory {
			delete(l.byAddr, k)
			continue
		}
		if oldest == "" || e.seen.Before(oldestAt) {
			oldest, oldestAt = k, e.seen
		}
	}
	if len(l.byAddr) >= l.maxAddrs {
		delete(l.byAddr, oldest)
	}
}
