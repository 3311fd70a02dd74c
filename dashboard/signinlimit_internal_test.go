package dashboard

import (
	"fmt"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"
)

var limitT0 = time.Date(2026, 11, 24, 10, 30, 0, 0, time.UTC)

// TestClientAddr: the peer, unless it is a trusted proxy; then the
// right-most X-Forwarded-For entry that is not a trusted proxy, never an
// entry to its left; IPv6 by /64.
func TestClientAddr(t *testing.T) {
	proxies := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/8")}
	cases := []struct {
		name, remote string
		xff          []string
		trusted      []netip.Prefix
		want         string
	}{
		{"no proxies trusted: header ignored", "198.51.100.7:1234", []string{"192.0.2.1"}, nil, "198.51.100.7"},
		{"untrusted peer: header ignored", "198.51.100.7:1234", []string{"192.0.2.1"}, proxies, "198.51.100.7"},
		{"trusted peer: the entry it appended", "10.0.0.1:80", []string{"192.0.2.1"}, proxies, "192.0.2.1"},
		{"forged left entries ignored", "10.0.0.1:80", []string{"6.6.6.6, 192.0.2.1"}, proxies, "192.0.2.1"},
		{"a chain of trusted proxies", "10.0.0.1:80", []string{"6.6.6.6, 192.0.2.1, 10.9.9.9, 10.8.8.8"}, proxies, "192.0.2.1"},
		{"several header lines", "10.0.0.1:80", []string{"6.6.6.6", "192.0.2.1, 10.9.9.9"}, proxies, "192.0.2.1"},
		{"garbage stops at the last believed hop", "10.0.0.1:80", []string{"192.0.2.1, nonsense, 10.9.9.9"}, proxies, "10.9.9.9"},
		{"entry with a port", "10.0.0.1:80", []string{"192.0.2.1:5555"}, proxies, "192.0.2.1"},
		{"trusted peer, no header", "10.0.0.1:80", nil, proxies, "10.0.0.1"},
		{"IPv6 peer by /64", "[2001:db8:1:2:3:4:5:6]:443", nil, nil, "2001:db8:1:2::/64"},
		{"IPv4-mapped IPv6", "[::ffff:198.51.100.7]:443", nil, nil, "198.51.100.7"},
		{"IPv6 behind an IPv6 proxy", "[fd00::1]:80", []string{"2001:db8:1:2::99"}, proxies, "2001:db8:1:2::/64"},
	}
	for _, c := range cases {
		r := httptest.NewRequest("POST", "/dashboard/sign-in", nil)
		r.RemoteAddr = c.remote
		for _, v := range c.xff {
			r.Header.Add("X-Forwarded-For", v)
		}
		if got := clientAddr(r, c.trusted); got != c.want {
			t.Errorf("%s: clientAddr = %q; want %q", c.name, got, c.want)
		}
	}
}

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
