package clientaddr_test

import (
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/ujumbe/messaging/internal/clientaddr"
)

// TestOf: the peer, unless it is a trusted proxy; then the
// right-most X-Forwarded-For entry that is not a trusted proxy, never an
// entry to its left; IPv6 by /64.
func TestOf(t *testing.T) {
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
		{"the peer alone trusted: the entry it appended", "198.51.100.7:1234", []string{"6.6.6.6, 192.0.2.1"}, []netip.Prefix{netip.MustParsePrefix("198.51.100.7/32")}, "192.0.2.1"},
	}
	for _, c := range cases {
		r := httptest.NewRequest("POST", "/dashboard/sign-in", nil)
		r.RemoteAddr = c.remote
		for _, v := range c.xff {
			r.Header.Add("X-Forwarded-For", v)
		}
		if got := clientaddr.Of(r, c.trusted); got != c.want {
			t.Errorf("%s: Of = %q; want %q", c.name, got, c.want)
		}
	}
}

// TestPeer: the prefix of the connection's peer alone.
func TestPeer(t *testing.T) {
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "[::ffff:198.51.100.7]:443"
	if got := clientaddr.Peer(r); len(got) != 1 || got[0] != netip.MustParsePrefix("198.51.100.7/32") {
		t.Errorf("Peer = %v, want [198.51.100.7/32]", got)
	}
	r.RemoteAddr = "pipe"
	if got := clientaddr.Peer(r); got != nil {
		t.Errorf("Peer of %q = %v, want nil", r.RemoteAddr, got)
	}
}
