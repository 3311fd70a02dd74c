package dashboard

import (
	"fmt"
	"testing"
	"time"
)

var limitT0 = time.Date(2026, 11, 24, 10, 30, 0, 0, time.UTC)

// TestSignInLimiterTakesTokensBeforeTheCheck: attempts in flight hold
// their tokens, so concurrent guesses cannot overrun an address's
// bucket; a refund (a correct secret) gives its token back.
func TestSignInLimiterTakesTokensBeforeTheCheck(t *testing.T) {
	l := newSignInLimiter(3, 100, limitT0)
	var held []*signInAttempt
	for range 3 {
		a, _ := l.begin("a", limitT0)
		if a == nil {
			t.Fatal("an attempt within the bucket was refused")
		}
		held = append(held, a)
	}
	if a, wait := l.begin("a", limitT0); a != nil || wait != 20*time.Second {
		t.Fatalf("4th attempt in flight: %v, wait %v; want refused, retry in 20 s", a, wait)
	}
	held[0].refund()
	if a, _ := l.begin("a", limitT0); a == nil {
		t.Fatal("after a refund the address was still refused")
	}
}

// TestSignInLimiterBounded: the limiter remembers at most maxAddrs
// addresses; those as good as forgotten go first, then the one idle
// longest.
func TestSignInLimiterBounded(t *testing.T) {
	l := newSignInLimiter(10, 1000, limitT0)
	l.maxAddrs = 3
	now := limitT0
	for i := range 50 {
		now = now.Add(time.Second)
		a, _ := l.begin(fmt.Sprintf("198.51.100.%d", i), now)
		if a == nil {
			t.Fatalf("address %d refused", i)
		}
		a.failed(now)
		if n := len(l.byAddr); n > 3 {
			t.Fatalf("after %d addresses the limiter holds %d; want at most 3", i+1, n)
		}
	}
	for _, k := range []string{"198.51.100.47", "198.51.100.48", "198.51.100.49"} {
		if l.byAddr[k] == nil {
			t.Errorf("the most recent address %s was forgotten", k)
		}
	}
}
